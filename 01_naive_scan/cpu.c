/* 01_naive_scan, CPU versions. Both compute in fp32, as the official code does. */
#include "cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* delta after bias and softplus, for batch bi, channel c, time t. */
static float delta_at(const ScanTensors *t, int64_t bi, int64_t c, int64_t l) {
    const ScanShape *s = &t->s;
    const float *delta = t->delta;  // (b, d, L) fp32
    float dt = delta[(bi * s->dim + c) * s->seqlen + l];
    // delta = delta + delta_bias[..., None].float()
    if (t->delta_bias) dt += t->delta_bias[c];
    // delta = F.softplus(delta)   (threshold 20: above it softplus(x) = x)
    if (s->softplus) dt = dt <= 20.0f ? log1pf(expf(dt)) : dt;
    return dt;
}

/* y = y + u * D;  out = y * F.silu(z) */
static float finish_output(const ScanTensors *t, int64_t bi, int64_t c, int64_t l, float y) {
    const ScanShape *s = &t->s;
    int64_t i = (bi * s->dim + c) * s->seqlen + l;
    const float *u = t->u, *z = t->z;  // (b, d, L) fp32
    // out = y if D is None else y + u * rearrange(D, "d -> d 1")
    if (t->D) y += u[i] * t->D[c];
    // out = out * F.silu(z)
    if (z) y *= z[i] / (1.0f + expf(-z[i]));
    return y;
}

size_t scan_materialized_cpu_workspace(const ScanShape *s) {
    return 2 * (size_t)(s->batch * s->dim * s->seqlen * s->dstate) * sizeof(float);
}

void scan_materialized_cpu(const ScanTensors *t, void *workspace) {
    const ScanShape *s = &t->s;
    int64_t b = s->batch, d = s->dim, L = s->seqlen, N = s->dstate, G = s->groups;
    const float *u = t->u;             // (b, d, L) fp32
    const float *B = t->B, *C = t->C;  // (b, G, N, L) fp32
    float *y = t->y;                   // (b, d, L) fp32
    float *deltaA = workspace;                 // (b, d, L, N) fp32
    float *deltaB_u = deltaA + b * d * L * N;  // (b, d, L, N) fp32

    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t c = 0; c < d; c++) {
            int64_t g = scan_group_of(s, c);
            for (int64_t l = 0; l < L; l++) {
                float dt = delta_at(t, bi, c, l);
                float uu = u[(bi * d + c) * L + l];
                for (int64_t n = 0; n < N; n++) {
                    int64_t i = ((bi * d + c) * L + l) * N + n;
                    // deltaA = torch.exp(torch.einsum('bdl,dn->bdln', delta, A))
                    deltaA[i] = expf(dt * t->A[c * N + n]);
                    // deltaB_u = torch.einsum('bdl,bdnl,bdl->bdln', delta, B, u)
                    deltaB_u[i] = dt * B[((bi * G + g) * N + n) * L + l] * uu;
                }
            }
        }

    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t c = 0; c < d; c++) {
            int64_t g = scan_group_of(s, c);
            float *x = t->last_state + (bi * d + c) * N;  // (N,) of (b, d, N) fp32
            for (int64_t n = 0; n < N; n++) x[n] = t->h0 ? t->h0[(bi * d + c) * N + n] : 0.0f;
            for (int64_t l = 0; l < L; l++) {
                float yl = 0.0f;
                for (int64_t n = 0; n < N; n++) {
                    int64_t i = ((bi * d + c) * L + l) * N + n;
                    // x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
                    x[n] = deltaA[i] * x[n] + deltaB_u[i];
                    // y = torch.einsum('bdn,bdn->bd', x, C[:, :, :, i])
                    yl += x[n] * C[((bi * G + g) * N + n) * L + l];
                }
                y[(bi * d + c) * L + l] = finish_output(t, bi, c, l, yl);
            }
        }
}

void scan_streaming_cpu(const ScanTensors *t, void *workspace) {
    (void)workspace;
    const ScanShape *s = &t->s;
    int64_t d = s->dim, L = s->seqlen, N = s->dstate, G = s->groups;
    const float *u = t->u;             // (b, d, L) fp32
    const float *B = t->B, *C = t->C;  // (b, G, N, L) fp32
    float *y = t->y;                   // (b, d, L) fp32
    for (int64_t bi = 0; bi < s->batch; bi++)
        for (int64_t c = 0; c < d; c++) {
            int64_t g = scan_group_of(s, c);
            float *h = t->last_state + (bi * d + c) * N;  // (N,) of (b, d, N) fp32: the state
            for (int64_t n = 0; n < N; n++) h[n] = t->h0 ? t->h0[(bi * d + c) * N + n] : 0.0f;
            for (int64_t l = 0; l < L; l++) {
                float dt = delta_at(t, bi, c, l);
                float du = dt * u[(bi * d + c) * L + l];
                float yl = 0.0f;
                for (int64_t n = 0; n < N; n++) {
                    int64_t bc = ((bi * G + g) * N + n) * L + l;
                    // h_t = exp(delta_t * A) * h_{t-1} + delta_t * B_t * u_t
                    h[n] = expf(dt * t->A[c * N + n]) * h[n] + du * B[bc];
                    // y_t = sum_n C_t[n] * h_t[n]
                    yl += C[bc] * h[n];
                }
                y[(bi * d + c) * L + l] = finish_output(t, bi, c, l, yl);
            }
        }
}
