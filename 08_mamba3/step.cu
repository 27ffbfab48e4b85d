/* 08_mamba3, versions 7-9: the decode step (one token from the four states,
 * step.cuh) as a stream: the p x N state of every (sequence, head) read once
 * and written once, a warp two rows of H at a time (four values a lane where
 * N is a multiple of 128, else one).
 *
 * Version 3 at L = 1 is already the step, but its block walks the state row
 * by row behind four barriers, a warp per row, and reads H a float a lane;
 * here a block of eight warps takes a head's rows, two a warp at a time. A
 * block's global reads wait on nothing: each lane issues its first loads of
 * H before the block reads q, k and the angles (all at once) and rotates
 * them, and its next loads while it computes the current ones. One block a
 * head where the heads fill the SMs (the rotation is then paid once a head);
 * below that a head's rows are split over up to p/16 blocks. What it should
 * buy: from batch 64 up, the state's bytes at the copy rate. Versions 8 and
 * 9 keep H in fp16 or bf16 (16-bit I/O too): half the bytes.
 *
 * A server's pool (Mamba3Pool) is stepped in place; where a small state is
 * in place, one block takes all p rows of a head, since every block of a
 * head reads the old θ and k̃ that the head's writer replaces. */
#include "kernels.h"

#include <limits.h>
#include <stdint.h>

#include "cuda_check.h"
#include "launch.cuh"
#include "step.cuh"

#define STEP_WARPS 8
#define ROWS_PER_WARP 2
#define ROWS_PER_BLOCK (STEP_WARPS * ROWS_PER_WARP)

/* Rows p0 and p0 + 1 of H (p, N) at columns c..c+3 as fp32, streamed (read
 * once); zeros past p or without a state. */
template <typename ST>
static __device__ __forceinline__ void load_rows(float4 (&hv)[ROWS_PER_WARP], const ST *h_in, int64_t p0, int64_t c,
                                                 int64_t P, int64_t N) {
    using V = Vec4<ST>;
#pragma unroll
    for (int k = 0; k < ROWS_PER_WARP; k++)
        hv[k] = h_in && p0 + k < P ? V::widen(__ldcs(reinterpret_cast<const typename V::raw *>(h_in + (p0 + k) * N + c)))
                                   : make_float4(0.f, 0.f, 0.f, 0.f);
}

/* VEC: N a multiple of 128 (four values a lane cover a row in N / 128 loads). */
template <typename IO, typename ST, bool VEC>
__global__ void __launch_bounds__(STEP_WARPS * 32, 4)
    mamba3_step_stream_kernel(Mamba3Tensors t, const int32_t *slot_of) {
    extern __shared__ float sm[];  // step_prologue_bytes
    const int64_t P = t.s.headdim, N = t.s.dstate;
    const StepHead a = step_head(t, slot_of, blockIdx.x);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t first = (int64_t)blockIdx.y * ROWS_PER_BLOCK + warp * ROWS_PER_WARP, stride = (int64_t)gridDim.y * ROWS_PER_BLOCK;
    if (a.o < 0) {  // a pool's padding entry: y zeros, no state
        if (lane < ROWS_PER_WARP) step_padding_y<IO>(t, a, first + lane, stride);
        return;
    }
    const ST *h_in = t.ssm_state ? (const ST *)t.ssm_state + a.o * P * N : nullptr;  // (p, N)
    ST *h_out = (ST *)t.final_ssm_state + a.o * P * N;                                  // (p, N)
    float4 hv[ROWS_PER_WARP];  // the next loads of H, in flight while the block rotates q and k
    if (VEC) load_rows(hv, h_in, first, lane * 4, P, N);
    step_prologue<IO>(t, a, blockIdx.y == 0, sm);
    const float *qt = sm, *kt = qt + N, *kp = kt + N, *vp = kp + N;
    const IO *v_in = (const IO *)t.v + (a.bl * t.s.heads + a.h) * P;  // (p,) this step's v
    const StepWeights w = step_weights(t, a);
    for (int64_t p0 = first; p0 < P; p0 += stride) {
        float acc[ROWS_PER_WARP] = {}, vt[ROWS_PER_WARP], vb[ROWS_PER_WARP];
#pragma unroll
        for (int k = 0; k < ROWS_PER_WARP; k++) {
            vt[k] = p0 + k < P ? to_float(v_in[p0 + k]) : 0.f;
            vb[k] = p0 + k < P ? vp[p0 + k] : 0.f;
        }
        if (VEC) {
            for (int64_t c = lane * 4; c < N; c += 128) {
                float4 x4[ROWS_PER_WARP];
#pragma unroll
                for (int k = 0; k < ROWS_PER_WARP; k++) x4[k] = hv[k];
                // the next columns, or the next pass's first: in flight while these are computed
                const bool last = c + 128 >= N;
                if (!last || p0 + stride < P) load_rows(hv, h_in, last ? p0 + stride : p0, last ? lane * 4 : c + 128, P, N);
#pragma unroll
                for (int k = 0; k < ROWS_PER_WARP; k++) {
                    if (p0 + k >= P) continue;
                    acc[k] += step4(x4[k], qt, kt, kp, c, w, vb[k], vt[k]);
                    __stcs(reinterpret_cast<typename Vec4<ST>::raw *>(h_out + (p0 + k) * N + c), Vec4<ST>::narrow(x4[k]));
                }
            }
        } else {
            for (int64_t c = lane; c < N; c += 32)
#pragma unroll
                for (int k = 0; k < ROWS_PER_WARP; k++) {
                    if (p0 + k >= P) continue;
                    const float hv1 = h_in ? to_float(h_in[(p0 + k) * N + c]) : 0.f;
                    // ssm_state = ssm_state * alpha + (1 - trap) * dt * alpha * v_prev k_prev^T + trap * dt * v k^T
                    const float x = w.alpha * hv1 + w.before * vb[k] * kp[c] + w.now * vt[k] * kt[c];
                    // out = ssm_state @ q
                    acc[k] += x * qt[c];
                    h_out[(p0 + k) * N + c] = from_float<ST>(x);
                }
        }
#pragma unroll
        for (int k = 0; k < ROWS_PER_WARP; k++) step_write_y<IO>(t, a, p0 + k, acc[k], vt[k]);
    }
}

extern "C" const char *mamba3_step_stream_unsupported(const Mamba3Shape *s) {
    if (s->seqlen != 1) return "one token a sequence (the decode step): L must be 1";
    const int64_t n = s->nseq ? s->nseq : s->batch;
    if (n * s->heads > INT_MAX) return "more than 2^31 - 1 (sequence, head) blocks";
    if ((s->headdim + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK > 65535) return "more than 65,535 blocks of 16 rows a head";
    if (step_prologue_bytes(s) > 48 * 1024) return "q̃, k̃, the last key and value over 48 KiB of shared memory";
    return NULL;
}

/* A grid of (sequence, head) x blocks_per_head. */
template <typename IO, typename ST>
static void launch_step(const Mamba3Tensors *t, const int32_t *slot_of) {
    const Mamba3Shape *s = &t->s;
    const int64_t n = s->nseq ? s->nseq : s->batch;
    const dim3 grid((unsigned)(n * s->heads), blocks_per_head(t, n * s->heads, ROWS_PER_BLOCK));
    if (s->dstate % 128 == 0)
        mamba3_step_stream_kernel<IO, ST, true><<<grid, STEP_WARPS * 32, step_prologue_bytes(s)>>>(*t, slot_of);
    else mamba3_step_stream_kernel<IO, ST, false><<<grid, STEP_WARPS * 32, step_prologue_bytes(s)>>>(*t, slot_of);
    cuda_check_launch();
}

template <typename IO, typename ST>
static void launch_pool(const Mamba3Pool *pool) {
    const Mamba3Tensors t = pool_in_place<ST>(pool);
    launch_step<IO, ST>(&t, pool->state_batch_indices);
}

extern "C" void mamba3_step_stream(const Mamba3Tensors *t, void *workspace) {
    (void)workspace;
    launch_step<float, float>(t, nullptr);
}
extern "C" void mamba3_step_stream_pool(const Mamba3Pool *pool, void *workspace) {
    (void)workspace;
    launch_pool<float, float>(pool);
}
extern "C" void mamba3_step_state16(const Mamba3Tensors *t, void *workspace) {
    (void)workspace;
    launch_step<__half, __half>(t, nullptr);
}
extern "C" void mamba3_step_state16_pool(const Mamba3Pool *pool, void *workspace) {
    (void)workspace;
    launch_pool<__half, __half>(pool);
}
extern "C" void mamba3_step_state_bf16(const Mamba3Tensors *t, void *workspace) {
    (void)workspace;
    launch_step<__nv_bfloat16, __nv_bfloat16>(t, nullptr);
}
extern "C" void mamba3_step_state_bf16_pool(const Mamba3Pool *pool, void *workspace) {
    (void)workspace;
    launch_pool<__nv_bfloat16, __nv_bfloat16>(pool);
}
