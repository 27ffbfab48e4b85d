/* 04_fp16_half2, CPU: the arithmetic of version 5 in C, one (b, d) row at a
 * time: fp16 inputs widened to fp32, fp32 state, the same split of the
 * exponentials between the exact exp2 and the degree-3 polynomial, y rounded
 * to fp16. */
#include "cpu.h"

#include <math.h>
#include <stdint.h>

#include "exp2_poly.h"
#include "half.h"

#define LOG2E_F 1.4426950408889634f
#define LN2_F 0.6931471805599453f

size_t scan_fp16_poly3_cpu_workspace(const ScanShape *s) { return 2 * (size_t)s->dstate * sizeof(float); }

/* Δ as version 5 forms it: log1p(e) as log2(1 + e)·ln 2. */
static float dt_of(float delta, float bias, bool softplus) {
    // delta = delta + delta_bias[..., None].float()
    const float v = delta + bias;
    // delta = F.softplus(delta)   (threshold 20: above it softplus(x) = x)
    if (!softplus || v > 20.0f) return v;
    return log2f(1.0f + exp2f(v * LOG2E_F)) * LN2_F;
}

void scan_fp16_poly3_cpu(const ScanTensors *t, void *workspace) {
    const ScanShape *s = &t->s;
    const int64_t d = s->dim, L = s->seqlen, N = s->dstate, G = s->groups;
    const uint16_t *u = t->u, *delta = t->delta, *z = t->z;  // (b, d, L) fp16
    const uint16_t *B = t->B, *C = t->C;                      // (b, G, N, L) fp16
    uint16_t *y = t->y;                                       // (b, d, L) fp16
    float *h = workspace;                                     // (N,) fp32, this row's state
    float *A2 = h + N;                                        // (N,) fp32, A[c, :]·log2 e

    for (int64_t bi = 0; bi < s->batch; bi++)
        for (int64_t c = 0; c < d; c++) {
            const int64_t row = bi * d + c;
            const uint16_t *B_g = B + (bi * G + scan_group_of(s, c)) * N * L;  // (N, L) fp16
            const uint16_t *C_g = C + (bi * G + scan_group_of(s, c)) * N * L;  // (N, L) fp16
            const float bias = t->delta_bias ? t->delta_bias[c] : 0.0f;
            const float D = t->D ? t->D[c] : 0.0f;
            for (int64_t n = 0; n < N; n++) {
                // A_val[r] *= kLog2e;   (exp(Δ·A) = exp2(Δ·A2))
                A2[n] = t->A[c * N + n] * LOG2E_F;
                h[n] = t->h0 ? t->h0[row * N + n] : 0.0f;
            }
            for (int64_t l = 0; l < L; l++) {
                const int64_t i = row * L + l;
                const float u_t = half_to_float(u[i]);
                const float dt = dt_of(half_to_float(delta[i]), bias, s->softplus);
                // delta_u_vals[r][i] = delta_vals[r][i] * u_val;
                const float du = dt * u_t;
                float acc = 0.0f;
                for (int64_t n = 0; n < N; n++) {
                    const float x = dt * A2[n];
                    // deltaA = torch.exp(torch.einsum('bdl,dn->bdln', delta, A))
                    const float dA = EXP2_POLY_STATE(n) ? exp2_poly(x, 3) : exp2f(x);
                    // x = deltaA[:, :, i] * x + deltaB_u[:, :, i]   (deltaB_u = delta·B·u)
                    h[n] = fmaf(dA, h[n], half_to_float(B_g[n * L + l]) * du);
                    // y = torch.einsum('bdn,bdn->bd', x, C[:, :, :, i])
                    acc = fmaf(half_to_float(C_g[n * L + l]), h[n], acc);
                }
                // out = y if D is None else y + u * rearrange(D, "d -> d 1")
                float out = fmaf(D, u_t, acc);
                if (z) {
                    // out = out * F.silu(z)
                    const float z_t = half_to_float(z[i]);
                    out *= z_t / (1.0f + exp2f(-z_t * LOG2E_F));
                }
                y[i] = half_from_float(out);
            }
            for (int64_t n = 0; n < N; n++) t->last_state[row * N + n] = h[n];
        }
}
