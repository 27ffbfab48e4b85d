/* 01_naive_scan, GPU: the eager baseline. It runs selective_scan_ref the way
 * PyTorch eager does: every intermediate is a full tensor in device memory
 * ((b,d,L,N) for deltaA and deltaB_u) and the time loop runs on the host,
 * one kernel launch per step. Memory grows with b*d*L*N; time is launches
 * plus traffic. It is the 1x of every speedup plot. */
#include "kernels.h"

#include "cuda_check.h"

/* delta after bias and softplus: (b, d, L).
 * Bytes: read delta, write it back; no state. */
__global__ void eager_delta(const float *__restrict__ delta, const float *__restrict__ delta_bias,
                            float *__restrict__ delta_out, int64_t n, int64_t dim, int64_t seqlen,
                            bool softplus) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float dt = delta[i];
    // delta = delta + delta_bias[..., None].float()
    if (delta_bias) dt += delta_bias[(i / seqlen) % dim];
    // delta = F.softplus(delta)
    if (softplus) dt = dt <= 20.0f ? log1pf(expf(dt)) : dt;
    delta_out[i] = dt;
}

/* deltaA and deltaB_u, both (b, d, L, N) fp32, one thread per element.
 * Bytes: 8 per element written (plus the (b,d,L) and (b,G,N,L) reads); exps: b*d*L*N. */
__global__ void eager_discretize(const float *__restrict__ delta, const float *__restrict__ u,
                                 const float *__restrict__ A, const float *__restrict__ B,
                                 float *__restrict__ deltaA, float *__restrict__ deltaB_u,
                                 ScanShape s) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t total = s.batch * s.dim * s.seqlen * s.dstate;
    if (i >= total) return;
    int64_t n = i % s.dstate, l = (i / s.dstate) % s.seqlen;
    int64_t c = (i / (s.dstate * s.seqlen)) % s.dim, bi = i / (s.dstate * s.seqlen * s.dim);
    int64_t g = c / (s.dim / s.groups);
    int64_t row = (bi * s.dim + c) * s.seqlen + l;
    // deltaA = torch.exp(torch.einsum('bdl,dn->bdln', delta, A))
    deltaA[i] = expf(delta[row] * A[c * s.dstate + n]);
    // deltaB_u = torch.einsum('bdl,bdnl,bdl->bdln', delta, B, u)
    deltaB_u[i] = delta[row] * B[((bi * s.groups + g) * s.dstate + n) * s.seqlen + l] * u[row];
}

/* x = h0 or 0: the state lives in last_state for the whole loop. */
__global__ void eager_init_state(const float *__restrict__ h0, float *__restrict__ x, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = h0 ? h0[i] : 0.0f;
}

/* One time step l for every (b, d): the body of the reference's Python loop.
 * Bytes: reads 8*N per (b,d) of deltaA/deltaB_u, N of C, reads and writes x. */
__global__ void eager_step(const float *__restrict__ deltaA, const float *__restrict__ deltaB_u,
                           const float *__restrict__ C, float *__restrict__ x, float *__restrict__ y,
                           ScanShape s, int64_t l) {
    int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;  // b * d + c
    if (row >= s.batch * s.dim) return;
    int64_t c = row % s.dim, bi = row / s.dim, g = c / (s.dim / s.groups);
    const float *dA = deltaA + (row * s.seqlen + l) * s.dstate;
    const float *dBu = deltaB_u + (row * s.seqlen + l) * s.dstate;
    float acc = 0.0f;
    for (int64_t n = 0; n < s.dstate; n++) {
        // x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
        float xn = dA[n] * x[row * s.dstate + n] + dBu[n];
        x[row * s.dstate + n] = xn;
        // y = torch.einsum('bdn,bdn->bd', x, C[:, :, :, i])
        acc += xn * C[((bi * s.groups + g) * s.dstate + n) * s.seqlen + l];
    }
    y[row * s.seqlen + l] = acc;
}

/* out = y + u * D, then out * F.silu(z): (b, d, L). */
__global__ void eager_output(const float *__restrict__ u, const float *__restrict__ z,
                             const float *__restrict__ D, float *__restrict__ y, int64_t n,
                             int64_t dim, int64_t seqlen) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float out = y[i];
    // out = y if D is None else y + u * rearrange(D, "d -> d 1")
    if (D) out += u[i] * D[(i / seqlen) % dim];
    // out = out if z is None else out * F.silu(z)
    if (z) out *= z[i] / (1.0f + expf(-z[i]));
    y[i] = out;
}

static unsigned blocks_for(int64_t n, int threads) { return (unsigned)((n + threads - 1) / threads); }

extern "C" size_t scan_eager_workspace(const ScanShape *s) {
    size_t seq = (size_t)(s->batch * s->dim * s->seqlen);
    return (seq + 2 * seq * (size_t)s->dstate) * sizeof(float);
}

extern "C" void scan_eager_gpu(const ScanTensors *t, void *workspace) {
    const ScanShape s = t->s;
    int64_t seq = s.batch * s.dim * s.seqlen, elems = seq * s.dstate, rows = s.batch * s.dim;
    float *delta = (float *)workspace;  // (b, d, L) fp32
    float *deltaA = delta + seq;         // (b, d, L, N) fp32
    float *deltaB_u = deltaA + elems;    // (b, d, L, N) fp32
    const int threads = 256;
    eager_delta<<<blocks_for(seq, threads), threads>>>((const float *)t->delta, t->delta_bias, delta,
                                                       seq, s.dim, s.seqlen, s.softplus);
    cuda_check_launch();
    eager_discretize<<<blocks_for(elems, threads), threads>>>(delta, (const float *)t->u, t->A,
                                                              (const float *)t->B, deltaA, deltaB_u, s);
    cuda_check_launch();
    eager_init_state<<<blocks_for(rows * s.dstate, threads), threads>>>(t->h0, t->last_state,
                                                                        rows * s.dstate);
    cuda_check_launch();
    // for i in range(u.shape[2]):  one launch per time step
    for (int64_t l = 0; l < s.seqlen; l++) {
        eager_step<<<blocks_for(rows, threads), threads>>>(deltaA, deltaB_u, (const float *)t->C,
                                                           t->last_state, (float *)t->y, s, l);
        cuda_check_launch();
    }
    eager_output<<<blocks_for(seq, threads), threads>>>((const float *)t->u, (const float *)t->z, t->D,
                                                        (float *)t->y, seq, s.dim, s.seqlen);
    cuda_check_launch();
}
