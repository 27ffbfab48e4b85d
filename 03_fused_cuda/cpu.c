/* 03_fused_cuda, CPU: the chunked scan of versions 5 and 6, row by row.
 *
 * Over a chunk of steps, the state map h -> h_end is affine and diagonal:
 *
 *     h_end[n] = decay[n]·h_start[n] + local[n]
 *     decay[n] = Π_t exp(Δ_t·A[n]) = exp(A[n]·ΣΔ_t)     (one exp per state per chunk)
 *     local[n] = the chunk scanned from h_start = 0
 *
 * so the chunks can be scanned independently (in parallel on the GPU) and
 * joined afterwards. For K chunks of one row:
 *
 *   pass 1  chunk 0 from h0, writing y: its start state is known;
 *           chunks 1..K-2 from 0: local end state and ΣΔ (the last chunk's
 *           end state is never needed as a carry)
 *   pass 2  the carries: h_start(k) = decay(k-1)·h_start(k-1) + local(k-1)
 *   pass 3  chunks 1..K-1 again from h_start(k), writing y
 *
 * Every element of chunks 1..K-2 is scanned twice: (2K - 2)/K exps in all.
 * fp32 arithmetic throughout, as on the GPU. */
#include "cpu.h"

#include <math.h>
#include <string.h>

/* One (batch, channel) row's inputs. */
typedef struct {
    const float *u, *delta, *z;  // (L,) each; z NULL without z
    const float *B, *C;          // (N, L) of the row's group
    const float *A;              // (N,)
    float D, bias;               // D[c], delta_bias[c] (0 when absent)
    float *y;                    // (L,), written
    int64_t N, L;
    bool softplus;
} Row;

static float delta_of(const Row *r, int64_t l) {
    // delta_vals[r][i] = float(delta_vals_load[r][i]) + delta_bias[r];
    const float x = r->delta[l] + r->bias;
    // delta_vals[r][i] = delta_vals[r][i] <= 20.f ? log1pf(expf(delta_vals[r][i])) : delta_vals[r][i];
    return r->softplus ? (x <= 20.0f ? log1pf(expf(x)) : x) : x;
}

/* Steps [t0, t1) of a row from the state h (N,), updated in place; y is
 * written when write_y. Returns ΣΔ over the steps. */
static float scan_steps(const Row *r, int64_t t0, int64_t t1, float *h, bool write_y) {
    float dt_sum = 0.0f;
    for (int64_t l = t0; l < t1; l++) {
        const float dt = delta_of(r, l);
        // delta_u_vals[r][i] = delta_vals[r][i] * u_val;
        const float du = dt * r->u[l];
        float y = 0.0f;
        for (int64_t n = 0; n < r->N; n++) {
            // deltaA = torch.exp(torch.einsum('bdl,dn->bdln', delta, A))
            // x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
            h[n] = expf(dt * r->A[n]) * h[n] + r->B[n * r->L + l] * du;
            // y = torch.einsum('bdn,bdn->bd', x, C[:, :, :, i])
            y += r->C[n * r->L + l] * h[n];
        }
        if (write_y) {
            // out = y if D is None else y + u * rearrange(D, "d -> d 1")
            float out = y + r->D * r->u[l];
            // out = out * F.silu(z)
            if (r->z) out *= r->z[l] / (1.0f + expf(-r->z[l]));
            r->y[l] = out;
        }
        dt_sum += dt;
    }
    return dt_sum;
}

static int64_t chunks_of(const ScanShape *s) { return (s->seqlen + SCAN_CPU_CHUNK - 1) / SCAN_CPU_CHUNK; }

size_t scan_chunked_cpu_workspace(const ScanShape *s) {
    const int64_t K = chunks_of(s);
    return K > 1 ? sizeof(float) * (size_t)(K - 1) * (size_t)(s->dstate + 1) : 0;
}

void scan_chunked_cpu(const ScanTensors *t, void *workspace) {
    const ScanShape *s = &t->s;
    const int64_t N = s->dstate, L = s->seqlen, Q = SCAN_CPU_CHUNK, K = chunks_of(s);
    float *carry = workspace;                            // (K - 1, N) fp32, see below
    float *dt_sum = carry ? carry + (K - 1) * N : NULL;  // (K - 1,)   fp32: ΣΔ of chunk k at k
    for (int64_t bi = 0; bi < s->batch; bi++) {
        for (int64_t c = 0; c < s->dim; c++) {
            const int64_t row = bi * s->dim + c;
            const int64_t bg = bi * s->groups + scan_group_of(s, c);
            const Row r = {
                .u = (const float *)t->u + row * L,
                .delta = (const float *)t->delta + row * L,
                .z = t->z ? (const float *)t->z + row * L : NULL,
                .B = (const float *)t->B + bg * N * L,
                .C = (const float *)t->C + bg * N * L,
                .A = t->A + c * N,
                .D = t->D ? t->D[c] : 0.0f,
                .bias = t->delta_bias ? t->delta_bias[c] : 0.0f,
                .y = (float *)t->y + row * L,
                .N = N, .L = L, .softplus = s->softplus,
            };
            float *h = t->last_state + row * N;  // (N,): the running state, last_state at the end
            if (t->h0) memcpy(h, t->h0 + row * N, sizeof(float) * (size_t)N);
            else memset(h, 0, sizeof(float) * (size_t)N);

            // pass 1: chunk 0 from h0 (y final); chunks 1..K-2 from 0 into carry[k]
            scan_steps(&r, 0, Q < L ? Q : L, h, true);
            for (int64_t k = 1; k + 1 < K; k++) {
                memset(carry + k * N, 0, sizeof(float) * (size_t)N);
                dt_sum[k] = scan_steps(&r, k * Q, (k + 1) * Q, carry + k * N, false);
            }
            // pass 2: start states; start(k) replaces carry[k-1] once that is used:
            //   start(1) = h after chunk 0, start(k) = exp(A·ΣΔ(k-1))·start(k-1) + local(k-1)
            if (K > 1) memcpy(carry, h, sizeof(float) * (size_t)N);
            for (int64_t k = 2; k < K; k++)
                for (int64_t n = 0; n < N; n++)
                    carry[(k - 1) * N + n] =
                        expf(r.A[n] * dt_sum[k - 1]) * carry[(k - 2) * N + n] + carry[(k - 1) * N + n];
            // pass 3: chunks 1..K-1 again, each from its own start (independent of the others)
            for (int64_t k = 1; k < K; k++) {
                memcpy(h, carry + (k - 1) * N, sizeof(float) * (size_t)N);
                scan_steps(&r, k * Q, (k + 1) * Q < L ? (k + 1) * Q : L, h, true);
            }
        }
    }
}
