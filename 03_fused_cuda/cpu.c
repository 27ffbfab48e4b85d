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

/* One (batch, channel) row's inputs, or one sequence of a packed row. */
typedef struct {
    const float *u, *delta, *z;  // (L,) each; z NULL without z
    const float *B, *C;          // (N, ld) of the row's group, from the row's first step
    const float *A;              // (N,)
    float D, bias;               // D[c], delta_bias[c] (0 when absent)
    float *y;                    // (L,), written
    int64_t N, L;
    int64_t ld;                  // steps between B's (C's) rows: L, or a packed row's total
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
            h[n] = expf(dt * r->A[n]) * h[n] + r->B[n * r->ld + l] * du;
            // y = torch.einsum('bdn,bdn->bd', x, C[:, :, :, i])
            y += r->C[n * r->ld + l] * h[n];
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

/* One row from the state h (N,), which ends as its final state: the three
 * passes above over K chunks of Q steps. carry (K - 1, N) and dt_sum
 * (K - 1,) are the workspace. */
static void scan_row_chunked(const Row *r, float *h, float *carry, float *dt_sum) {
    const int64_t N = r->N, L = r->L, Q = SCAN_CPU_CHUNK, K = (L + Q - 1) / Q;
    // pass 1: chunk 0 from h0 (y final); chunks 1..K-2 from 0 into carry[k]
    scan_steps(r, 0, Q < L ? Q : L, h, true);
    for (int64_t k = 1; k + 1 < K; k++) {
        memset(carry + k * N, 0, sizeof(float) * (size_t)N);
        dt_sum[k] = scan_steps(r, k * Q, (k + 1) * Q, carry + k * N, false);
    }
    // pass 2: start states; start(k) replaces carry[k-1] once that is used:
    //   start(1) = h after chunk 0, start(k) = exp(A·ΣΔ(k-1))·start(k-1) + local(k-1)
    if (K > 1) memcpy(carry, h, sizeof(float) * (size_t)N);
    for (int64_t k = 2; k < K; k++)
        for (int64_t n = 0; n < N; n++)
            carry[(k - 1) * N + n] = expf(r->A[n] * dt_sum[k - 1]) * carry[(k - 2) * N + n] + carry[(k - 1) * N + n];
    // pass 3: chunks 1..K-1 again, each from its own start (independent of the others)
    for (int64_t k = 1; k < K; k++) {
        memcpy(h, carry + (k - 1) * N, sizeof(float) * (size_t)N);
        scan_steps(r, k * Q, (k + 1) * Q < L ? (k + 1) * Q : L, h, true);
    }
}

/* The row of channel c of batch bi, from step `start` for L steps. */
static Row row_of(const ScanTensors *t, int64_t bi, int64_t c, int64_t start, int64_t L) {
    const ScanShape *s = &t->s;
    const int64_t N = s->dstate, ld = s->seqlen;
    const int64_t row = bi * s->dim + c;
    const int64_t bg = bi * s->groups + scan_group_of(s, c);
    const Row r = {
        .u = (const float *)t->u + row * ld + start,
        .delta = (const float *)t->delta + row * ld + start,
        .z = t->z ? (const float *)t->z + row * ld + start : NULL,
        .B = (const float *)t->B + bg * N * ld + start,
        .C = (const float *)t->C + bg * N * ld + start,
        .A = t->A + c * N,
        .D = t->D ? t->D[c] : 0.0f,
        .bias = t->delta_bias ? t->delta_bias[c] : 0.0f,
        .y = (float *)t->y + row * ld + start,
        .N = N, .L = L, .ld = ld, .softplus = s->softplus,
    };
    return r;
}

/* h (N,) from h0 (NULL: zeros). */
static void start_state(float *h, const float *h0, int64_t N) {
    if (h0) memcpy(h, h0, sizeof(float) * (size_t)N);
    else memset(h, 0, sizeof(float) * (size_t)N);
}

void scan_chunked_cpu(const ScanTensors *t, void *workspace) {
    const ScanShape *s = &t->s;
    const int64_t N = s->dstate, K = chunks_of(s);
    float *carry = workspace;                            // (K - 1, N) fp32, see scan_row_chunked
    float *dt_sum = carry ? carry + (K - 1) * N : NULL;  // (K - 1,)   fp32: ΣΔ of chunk k at k
    for (int64_t bi = 0; bi < s->batch; bi++) {
        for (int64_t c = 0; c < s->dim; c++) {
            const int64_t row = bi * s->dim + c;
            const Row r = row_of(t, bi, c, 0, s->seqlen);
            float *h = t->last_state + row * N;  // (N,): the running state, last_state at the end
            start_state(h, t->h0 ? t->h0 + row * N : NULL, N);
            scan_row_chunked(&r, h, carry, dt_sum);
        }
    }
}

/* Packed: every sequence of every channel is a row of its own, from its own
 * initial state; the chunks restart at each sequence, so none straddles two
 * (the workspace of the whole row covers the longest sequence's chunks). */
void scan_chunked_cpu_packed(const ScanPacked *pk, void *workspace) {
    const ScanTensors *t = &pk->t;
    const ScanShape *s = &t->s;
    const int64_t N = s->dstate, d = s->dim, K = chunks_of(s);
    float *carry = workspace;                            // (K - 1, N) fp32
    float *dt_sum = carry ? carry + (K - 1) * N : NULL;  // (K - 1,)   fp32
    for (int64_t c = 0; c < d; c++)
        for (int64_t k = 0; k < pk->nseq; k++) {
            const int64_t start = pk->cu_seqlens[k], len = pk->cu_seqlens[k + 1] - start;
            const Row r = row_of(t, 0, c, start, len);
            float *h = t->last_state + (k * d + c) * N;  // (N,): sequence k's state, its final state at the end
            start_state(h, t->h0 ? t->h0 + (k * d + c) * N : NULL, N);
            scan_row_chunked(&r, h, carry, dt_sum);
        }
}
