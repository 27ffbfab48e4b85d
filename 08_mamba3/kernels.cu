/* 08_mamba3, version 3: the step form on the GPU (kernels.h).
 *
 * Version 1 walks the (sequence, head) pairs one after another; here each
 * pair is a block, and all of them run at once. A block walks its steps in
 * order, its state H (p x N fp32) in shared memory: per step it advances the
 * S angles (a thread each), builds q̃ and k̃ (a thread per dimension, then a
 * thread per rotated pair), and a warp per row of H adds the two rank-1
 * terms to the row and sums the row against q̃ (lanes over N, a shuffle
 * reduction) into y's element. Per step and row: a multiply and three FMAs
 * per state value, N/32 of them a lane; per step, 4 barriers.
 * What it should buy over version 1: b·h rows of work at once. What it does
 * not: the chain of L steps stays, each step a few dependent loads, a shuffle
 * reduction and its barriers, so the time is the chain's latency whatever the
 * batch; the chunked form (version 2) is what turns the steps into
 * tensor-core products. */
#include "kernels.h"

#include "cuda_check.h"
#include "launch.cuh"

#define THREADS 128

/* The floats of shared memory a block takes: H, q̃, k̃, the last k̃, the last v, θ. */
static size_t smem_floats(const Mamba3Shape *s) {
    return (size_t)(s->headdim * s->dstate + 3 * s->dstate + s->headdim + s->angles);
}

__global__ void __launch_bounds__(THREADS) step_kernel(Mamba3Tensors t) {
    extern __shared__ float smem[];
    const Mamba3Shape s = t.s;
    const int64_t L = s.seqlen, H = s.heads, G = s.heads_qk, P = s.headdim, N = s.dstate, S = s.angles;
    const int64_t n = blockIdx.x, h = blockIdx.y, g = h / (H / G), o = n * H + h;
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    int64_t r, t0, t1;  // the sequence: row r, steps [t0, t1)
    mamba3_sequence(&t, n, &r, &t0, &t1);
    // shared: hs (p, N) the state, q and k (N,) this step's rotated q and k, kp (N,) the last
    // rotated key, vp (p,) the last v, th (S,) the angles; all fp32
    float *hs = smem, *q = hs + P * N, *k = q + N, *kp = k + N, *vp = kp + N, *th = vp + P;
    const float *q_in = (const float *)t.q, *k_in = (const float *)t.k;  // (b, L, g, N) fp32
    const float *v_in = (const float *)t.v, *z_in = (const float *)t.z;  // (b, L, h, p) fp32
    float *y_out = (float *)t.y;                                          // (b, L, h, p) fp32
    for (int64_t i = tid; i < P * N; i += THREADS) hs[i] = t.ssm_state ? t.ssm_state[o * P * N + i] : 0.0f;
    for (int64_t i = tid; i < N; i += THREADS) kp[i] = t.k_state ? t.k_state[o * N + i] : 0.0f;
    for (int64_t i = tid; i < P; i += THREADS) vp[i] = t.v_state ? t.v_state[o * P + i] : 0.0f;
    for (int64_t i = tid; i < S; i += THREADS) th[i] = t.angle_state ? t.angle_state[o * S + i] : 0.0f;
    for (int64_t l = t0; l < t1; l++) {
        const int64_t bl = r * L + l, hl = (r * H + h) * L + l;
        const float dt = t.dt[hl], alpha = __expf(t.adt[hl]), lambda = 1.0f / (1.0f + __expf(-t.trap[hl]));
        for (int64_t i = tid; i < S; i += THREADS) th[i] = mamba3_angle_step(th[i], t.angles[(bl * H + h) * S + i], dt);
        __syncthreads();  // θ_t is in; the last step's q̃ and k̃ are read
        for (int64_t i = tid; i < N; i += THREADS) {
            q[i] = q_in[(bl * G + g) * N + i] + t.q_bias[h * N + i];
            k[i] = k_in[(bl * G + g) * N + i] + t.k_bias[h * N + i];
        }
        __syncthreads();
        for (int64_t i = tid; i < S; i += THREADS) {  // pair (2i, 2i+1) rotated by θ_i
            float sn, cs;
            sincosf(th[i], &sn, &cs);
            const float qa = q[2 * i], qb = q[2 * i + 1], ka = k[2 * i], kb = k[2 * i + 1];
            q[2 * i] = qa * cs - qb * sn;
            q[2 * i + 1] = qa * sn + qb * cs;
            k[2 * i] = ka * cs - kb * sn;
            k[2 * i + 1] = ka * sn + kb * cs;
        }
        __syncthreads();
        // H = alpha H + (1 - lambda) dt alpha v_prev k_prev^T + lambda dt v k^T;  y = H q + D v
        const float before = (1.0f - lambda) * dt * alpha, now = lambda * dt;
        for (int64_t p = warp; p < P; p += THREADS / 32) {
            const float v = v_in[(bl * H + h) * P + p], bv = before * vp[p], nv = now * v;
            float *row = hs + p * N, acc = 0.0f;
            for (int64_t i = lane; i < N; i += 32) {
                const float x = alpha * row[i] + bv * kp[i] + nv * k[i];
                row[i] = x;
                acc += x * q[i];
            }
            for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
            if (lane == 0) {
                if (t.D) acc += t.D[h] * v;
                if (z_in) {
                    const float z = z_in[(bl * H + h) * P + p];
                    acc *= z / (1.0f + __expf(-z));
                }
                y_out[(bl * H + h) * P + p] = acc;
            }
        }
        __syncthreads();  // the last k̃ and v are read: this step's take their place
        for (int64_t i = tid; i < N; i += THREADS) kp[i] = k[i];
        for (int64_t i = tid; i < P; i += THREADS) vp[i] = v_in[(bl * H + h) * P + i];
    }
    __syncthreads();
    for (int64_t i = tid; i < P * N; i += THREADS) t.final_ssm_state[o * P * N + i] = hs[i];
    for (int64_t i = tid; i < N; i += THREADS) t.final_k_state[o * N + i] = kp[i];
    for (int64_t i = tid; i < P; i += THREADS) t.final_v_state[o * P + i] = vp[i];
    for (int64_t i = tid; i < S; i += THREADS) t.final_angle_state[o * S + i] = th[i];
}

const char *mamba3_step_gpu_unsupported(const Mamba3Shape *s) {
    const size_t most = smem_optin_bytes() < 200 * 1024 ? smem_optin_bytes() : 200 * 1024;  // the device's, at most 200 KiB
    if (smem_floats(s) * sizeof(float) > most)
        return "a block's state (p x N, with q, k, the last key and v) over 200 KiB of shared memory "
               "(or the device's opt-in, if less)";
    if (s->heads > 65535) return "more than 65,535 heads (one a block on the grid's y dimension)";
    return NULL;
}

void mamba3_step_gpu(const Mamba3Tensors *t, void *workspace) {
    (void)workspace;
    static size_t allowed = 0;
    const size_t smem = smem_floats(&t->s) * sizeof(float);
    allow_smem(step_kernel, smem, &allowed);
    const dim3 grid((unsigned)(t->s.nseq ? t->s.nseq : t->s.batch), (unsigned)t->s.heads);
    step_kernel<<<grid, THREADS, smem>>>(*t);
    cuda_check_launch();
}
