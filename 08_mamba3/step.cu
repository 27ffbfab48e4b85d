/* 08_mamba3, version 7: the decode step (one token from the four states)
 * as a stream: the p x N state of every (sequence, head) read once and
 * written once, a warp two rows of H (a float4 a lane where N is a multiple
 * of 128, else a float), fp32 I/O.
 *
 * Version 3 at L = 1 is already the step, but its block walks the state row
 * by row behind four barriers, a warp per row, and reads H a float a lane;
 * here a block of eight warps takes 16 rows of one head, and every lane has
 * both of its rows' float4 loads in flight before it computes. What it should buy:
 * from batch 64 up, the state's bytes at the copy rate. Per (sequence, head):
 *   θ' = (θ + π·tanh(angles)·dt) mod 2π,   q̃ = R(θ')(q + q_bias),  k̃ = R(θ')(k + k_bias)
 *   H'[p] = α H[p] + (1 - λ) dt α v_prev[p] k̃_prev + λ dt v[p] k̃,   y[p] = H'[p]·q̃ + D v[p]
 * then y ·= silu(z); k̃, v and θ' are the new k, v and angle states. */
#include "kernels.h"

#include <limits.h>
#include <stdint.h>

#include "cuda_check.h"
#include "launch.cuh"

#define STEP_WARPS 8
#define ROWS_PER_WARP 2
#define ROWS_PER_BLOCK (STEP_WARPS * ROWS_PER_WARP)

/* VEC: N a multiple of 128 (a float4 a lane covers a row in N / 128 loads). */
template <bool VEC>
__global__ void __launch_bounds__(STEP_WARPS * 32) mamba3_step_stream_kernel(Mamba3Tensors t) {
    extern __shared__ float sm[];
    const Mamba3Shape s = t.s;
    const int64_t L = s.seqlen, H = s.heads, G = s.heads_qk, P = s.headdim, N = s.dstate, S = s.angles;
    const int64_t n = blockIdx.x / H, h = blockIdx.x % H, g = h / (H / G), o = n * H + h;
    float *qt = sm, *kt = qt + N, *kp = kt + N, *cs = kp + N, *sn = cs + S;  // (N,) x3, (S,) x2 fp32
    int64_t r, t0, t1;  // the sequence's row and its one step t0
    mamba3_sequence(&t, n, &r, &t0, &t1);
    const int64_t bl = r * L + t0, hl = (r * H + h) * L + t0;
    const float dt = t.dt[hl];
    const bool writer = blockIdx.y == 0;  // the block that writes the head's small states
    for (int64_t i = threadIdx.x; i < S; i += blockDim.x) {
        const float th0 = t.angle_state ? t.angle_state[o * S + i] : 0.f;
        const float th = mamba3_angle_step(th0, t.angles[(bl * H + h) * S + i], dt);
        sincosf(th, &sn[i], &cs[i]);
        if (writer) t.final_angle_state[o * S + i] = th;
    }
    __syncthreads();
    // (N,) fp32 each: the step's q and k of the head's qk head g
    const float *q_in = (const float *)t.q + (bl * G + g) * N, *k_in = (const float *)t.k + (bl * G + g) * N;
    for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
        // q = q + q_bias; q = apply_rotary_emb(q, Angle_State)  (k alike)
        const int64_t pair = i / 2, j = i ^ 1;
        float qv = q_in[i] + t.q_bias[h * N + i], kv = k_in[i] + t.k_bias[h * N + i];
        if (pair < S) {  // x' = x c - y s (even), x s + y c (odd), with its partner
            const float qo = q_in[j] + t.q_bias[h * N + j], ko = k_in[j] + t.k_bias[h * N + j];
            const float c = cs[pair], e = i % 2 == 0 ? -sn[pair] : sn[pair];
            qv = qv * c + qo * e, kv = kv * c + ko * e;
        }
        qt[i] = qv, kt[i] = kv;
        kp[i] = t.k_state ? t.k_state[o * N + i] : 0.f;
        if (writer) t.final_k_state[o * N + i] = kv;
    }
    const float *v_in = (const float *)t.v + (bl * H + h) * P;  // (p,) fp32: this step's v
    if (writer)
        for (int64_t i = threadIdx.x; i < P; i += blockDim.x) t.final_v_state[o * P + i] = v_in[i];
    __syncthreads();

    // Trap = torch.sigmoid(Trap);  alpha = torch.exp(ADT)
    const float lambda = 1.f / (1.f + __expf(-t.trap[hl])), alpha = __expf(t.adt[hl]);
    const float before = (1.f - lambda) * dt * alpha, now = lambda * dt;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t p0 = (int64_t)blockIdx.y * ROWS_PER_BLOCK + warp * ROWS_PER_WARP;
    const float *h_in = t.ssm_state ? t.ssm_state + o * P * N : nullptr;  // (p, N) fp32
    float *h_out = t.final_ssm_state + o * P * N;                          // (p, N) fp32
    float acc[ROWS_PER_WARP], vt[ROWS_PER_WARP], vb[ROWS_PER_WARP];
#pragma unroll
    for (int k = 0; k < ROWS_PER_WARP; k++) {
        const int64_t p = p0 + k;
        acc[k] = 0.f;
        vt[k] = p < P ? v_in[p] : 0.f;
        vb[k] = p < P && t.v_state ? t.v_state[o * P + p] : 0.f;
    }
    if (VEC) {
        for (int64_t c = lane * 4; c < N; c += 128) {
            float4 hv[ROWS_PER_WARP];  // both rows' loads in flight before either is used
#pragma unroll
            for (int k = 0; k < ROWS_PER_WARP; k++)
                hv[k] = h_in && p0 + k < P ? __ldcs(reinterpret_cast<const float4 *>(h_in + (p0 + k) * N + c))
                                           : make_float4(0.f, 0.f, 0.f, 0.f);
            const float4 q4 = *reinterpret_cast<const float4 *>(qt + c), k4 = *reinterpret_cast<const float4 *>(kt + c),
                         b4 = *reinterpret_cast<const float4 *>(kp + c);
#pragma unroll
            for (int k = 0; k < ROWS_PER_WARP; k++) {
                if (p0 + k >= P) continue;
                // ssm_state = ssm_state * alpha + (1 - trap) * dt * alpha * v_prev k_prev^T + trap * dt * v k^T
                float4 x = hv[k];
                x.x = alpha * x.x + before * vb[k] * b4.x + now * vt[k] * k4.x;
                x.y = alpha * x.y + before * vb[k] * b4.y + now * vt[k] * k4.y;
                x.z = alpha * x.z + before * vb[k] * b4.z + now * vt[k] * k4.z;
                x.w = alpha * x.w + before * vb[k] * b4.w + now * vt[k] * k4.w;
                // out = ssm_state @ q
                acc[k] += x.x * q4.x + x.y * q4.y + x.z * q4.z + x.w * q4.w;
                __stcs(reinterpret_cast<float4 *>(h_out + (p0 + k) * N + c), x);
            }
        }
    } else {
        for (int64_t c = lane; c < N; c += 32)
#pragma unroll
            for (int k = 0; k < ROWS_PER_WARP; k++) {
                if (p0 + k >= P) continue;
                const float hv = h_in ? h_in[(p0 + k) * N + c] : 0.f;
                const float x = alpha * hv + before * vb[k] * kp[c] + now * vt[k] * kt[c];
                acc[k] += x * qt[c];
                h_out[(p0 + k) * N + c] = x;
            }
    }
#pragma unroll
    for (int k = 0; k < ROWS_PER_WARP; k++) {
#pragma unroll
        for (int off = 16; off > 0; off /= 2) acc[k] += __shfl_xor_sync(0xffffffffu, acc[k], off);
        const int64_t p = p0 + k;
        if (lane != 0 || p >= P) continue;
        float y = acc[k];
        // out = out + D * v
        if (t.D) y += t.D[h] * vt[k];
        // out = out * z * torch.sigmoid(z)
        if (t.z) {
            const float z = ((const float *)t.z)[(bl * H + h) * P + p];
            y *= z / (1.f + __expf(-z));
        }
        ((float *)t.y)[(bl * H + h) * P + p] = y;
    }
}

extern "C" const char *mamba3_step_stream_unsupported(const Mamba3Shape *s) {
    if (s->seqlen != 1) return "one token a sequence (the decode step): L must be 1";
    const int64_t n = s->nseq ? s->nseq : s->batch;
    if (n * s->heads > INT_MAX) return "more than 2^31 - 1 (sequence, head) blocks";
    if ((s->headdim + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK > 65535) return "more than 65,535 blocks of 16 rows a head";
    if ((size_t)(3 * s->dstate + 2 * s->angles) * sizeof(float) > 48 * 1024)
        return "q̃, k̃ and the last key over 48 KiB of shared memory";
    return NULL;
}

extern "C" void mamba3_step_stream(const Mamba3Tensors *t, void *workspace) {
    (void)workspace;
    const Mamba3Shape *s = &t->s;
    const int64_t n = s->nseq ? s->nseq : s->batch;
    const dim3 grid((unsigned)(n * s->heads), (unsigned)((s->headdim + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK));
    const size_t smem = (size_t)(3 * s->dstate + 2 * s->angles) * sizeof(float);
    if (s->dstate % 128 == 0) mamba3_step_stream_kernel<true><<<grid, STEP_WARPS * 32, smem>>>(*t);
    else mamba3_step_stream_kernel<false><<<grid, STEP_WARPS * 32, smem>>>(*t);
    cuda_check_launch();
}
