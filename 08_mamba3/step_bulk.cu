/* 08_mamba3, versions 10-12: the decode step (step.cuh) with a block's rows
 * of H staged in shared memory by one bulk copy (cp.async.bulk, sm_90) and
 * written back by one bulk store: fp32 (10), fp16 (11) and bf16 (12) H and
 * I/O, as versions 7-9.
 *
 * What changed from versions 7-9: there a lane's loads of H go through its
 * registers, one vector a row ahead at most, so the bytes an SM has in
 * flight are capped by its registers and the warps resident; here one
 * thread asks the TMA unit for all of the block's rows (a whole head of
 * 64 x 128 fp32 is 32 KiB) before the block's prologue, and the rows land
 * while the block rotates q and k. The warps then step the rows in shared
 * memory, two a warp at a time, four values a lane, and one thread stores
 * them back in bulk; a block is four warps. What it should buy: the state's
 * bytes in flight bounded by shared memory (six fp32 heads an SM; in 16 bits
 * registers and shared memory both allow ten), not by each lane's registers:
 * the copy rate from batch 64 up. Its specialization: N a multiple of 8
 * (rows of whole 16-byte vectors) and a block's rows within the shared
 * memory an SM gives one block; other shapes SKIP, saying why. */
#include "kernels.h"

#include <limits.h>
#include <stdint.h>

#include "cuda_check.h"
#include "launch.cuh"
#include "step.cuh"
#include "tma_sm90.cuh"

#define BULK_WARPS 4
#define BULK_UNIT 16  // a head is split into blocks of whole units of rows

/* The block's rows [p_lo, p_hi) of its head: blockIdx.y's share of p. */
static __device__ __forceinline__ void bulk_rows(int64_t P, int64_t *p_lo, int64_t *p_hi) {
    const int64_t per = (P + gridDim.y - 1) / gridDim.y;
    *p_lo = (int64_t)blockIdx.y * per;
    *p_hi = *p_lo + per < P ? *p_lo + per : P;
}

template <typename IO, typename ST>
__global__ void __launch_bounds__(BULK_WARPS * 32) mamba3_step_bulk_kernel(Mamba3Tensors t, const int32_t *slot_of) {
    using V = Vec4<ST>;
    extern __shared__ __align__(128) unsigned char smem[];  // the block's rows of H (rows, N) ST, then the prologue's
    __shared__ uint64_t landed;                             // the bulk copy of the rows has landed
    const int64_t P = t.s.headdim, N = t.s.dstate;
    const StepHead a = step_head(t, slot_of, blockIdx.x);
    int64_t p_lo, p_hi;
    bulk_rows(P, &p_lo, &p_hi);
    if (a.o < 0) {  // a pool's padding entry: y zeros, no state
        step_padding_y<IO>(t, a, p_lo + threadIdx.x, blockDim.x);
        return;
    }
    const int64_t per = (P + gridDim.y - 1) / gridDim.y;  // rows of a block (the last may have fewer)
    ST *hs = reinterpret_cast<ST *>(smem);                 // (per, N): rows p_lo .. p_hi of H
    float *sm = reinterpret_cast<float *>(smem + align256((size_t)(per * N) * sizeof(ST)));
    const ST *h_in = t.ssm_state ? (const ST *)t.ssm_state + (a.o * P + p_lo) * N : nullptr;  // (p_hi - p_lo, N)
    ST *h_out = (ST *)t.final_ssm_state + (a.o * P + p_lo) * N;                                 // (p_hi - p_lo, N)
    const uint32_t bytes = (uint32_t)((p_hi - p_lo) * N * (int64_t)sizeof(ST));
    if (threadIdx.x == 0) {
        mbar_init(&landed, 1);
        if (h_in) {
            mbar_arrive_expect_tx(&landed, bytes);
            bulk_load(hs, h_in, bytes, &landed);
        }
    }
    if (!h_in)  // no initial state: zeros (published by the prologue's barriers)
        for (int64_t e = threadIdx.x; e < (p_hi - p_lo) * N; e += blockDim.x) hs[e] = from_float<ST>(0.f);
    step_prologue<IO>(t, a, blockIdx.y == 0, sm);  // its barriers also publish the barrier's initialisation
    const float *qt = sm, *kt = qt + N, *kp = kt + N, *vp = kp + N;
    const IO *v_in = (const IO *)t.v + (a.bl * t.s.heads + a.h) * P;  // (p,) this step's v
    const StepWeights w = step_weights(t, a);
    if (h_in) mbar_wait(&landed, 0);

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int64_t p0 = p_lo + 2 * warp; p0 < p_hi; p0 += 2 * BULK_WARPS) {  // rows p0 and p0 + 1
        const bool two = p0 + 1 < p_hi;
        const float vt0 = to_float(v_in[p0]), vt1 = two ? to_float(v_in[p0 + 1]) : 0.f;
        float acc0 = 0.f, acc1 = 0.f;
        for (int64_t c = lane * 4; c < N; c += 128) {
            auto *r0 = reinterpret_cast<typename V::raw *>(hs + (p0 - p_lo) * N + c);
            auto *r1 = reinterpret_cast<typename V::raw *>(hs + (p0 + 1 - p_lo) * N + c);
            float4 x0 = V::widen(*r0), x1 = two ? V::widen(*r1) : make_float4(0.f, 0.f, 0.f, 0.f);
            acc0 += step4(x0, qt, kt, kp, c, w, vp[p0], vt0);
            *r0 = V::narrow(x0);
            if (two) {
                acc1 += step4(x1, qt, kt, kp, c, w, vp[p0 + 1], vt1);
                *r1 = V::narrow(x1);
            }
        }
        step_write_y<IO>(t, a, p0, acc0, vt0);
        step_write_y<IO>(t, a, two ? p0 + 1 : P, acc1, vt1);
    }
    fence_async_smem();  // the rows written by the threads, then read by the bulk store
    __syncthreads();
    if (threadIdx.x == 0) {
        bulk_store(h_out, hs, bytes);
        tma_store_wait<true>();  // the store has read the rows before the block's shared memory goes
    }
}

/* Shared memory of a block of `per` rows. */
static size_t bulk_smem(const Mamba3Shape *s, int64_t per, size_t value_bytes) {
    return align256((size_t)(per * s->dstate) * value_bytes) + step_prologue_bytes(s);
}

static const char *bulk_unsupported(const Mamba3Shape *s, size_t value_bytes) {
    if (s->seqlen != 1) return "one token a sequence (the decode step): L must be 1";
    if (s->dstate % 8 != 0) return "N must be a multiple of 8 (bulk copies move rows of whole 16-byte vectors)";
    const int64_t n = s->nseq ? s->nseq : s->batch;
    if (n * s->heads > INT_MAX) return "more than 2^31 - 1 (sequence, head) blocks";
    if (bulk_smem(s, s->headdim, value_bytes) > smem_optin_bytes())
        return "a head's state past the shared memory one block may have";
    return NULL;
}

extern "C" const char *mamba3_step_bulk_unsupported(const Mamba3Shape *s) { return bulk_unsupported(s, 4); }
extern "C" const char *mamba3_step_bulk_state16_unsupported(const Mamba3Shape *s) { return bulk_unsupported(s, 2); }

/* A grid of (sequence, head) x blocks of a head, its rows split evenly (a
 * block's bytes, within one block's shared memory, are far below the 2^20 - 1
 * an mbarrier's transaction count can hold). */
template <typename IO, typename ST>
static void launch_bulk(const Mamba3Tensors *t, const int32_t *slot_of) {
    const Mamba3Shape *s = &t->s;
    const int64_t n = s->nseq ? s->nseq : s->batch;
    /* per rows a block, and as many blocks as that takes: none left without rows
     * (the kernel's even share, ceil(p / blocks), is then at most per). */
    const int64_t split = blocks_per_head(t, n * s->heads, BULK_UNIT), per = (s->headdim + split - 1) / split;
    const unsigned blocks = (unsigned)((s->headdim + per - 1) / per);
    const size_t smem = bulk_smem(s, per, sizeof(ST));
    static size_t allowed = 0;  // the opt-in already asked for this kernel
    allow_smem(mamba3_step_bulk_kernel<IO, ST>, smem, &allowed);
    mamba3_step_bulk_kernel<IO, ST><<<dim3((unsigned)(n * s->heads), blocks), BULK_WARPS * 32, smem>>>(*t, slot_of);
    cuda_check_launch();
}

template <typename IO, typename ST>
static void launch_bulk_pool(const Mamba3Pool *pool) {
    const Mamba3Tensors t = pool_in_place<ST>(pool);
    launch_bulk<IO, ST>(&t, pool->state_batch_indices);
}

extern "C" void mamba3_step_bulk(const Mamba3Tensors *t, void *workspace) {
    (void)workspace;
    launch_bulk<float, float>(t, nullptr);
}
extern "C" void mamba3_step_bulk_pool(const Mamba3Pool *pool, void *workspace) {
    (void)workspace;
    launch_bulk_pool<float, float>(pool);
}
extern "C" void mamba3_step_bulk_state16(const Mamba3Tensors *t, void *workspace) {
    (void)workspace;
    launch_bulk<__half, __half>(t, nullptr);
}
extern "C" void mamba3_step_bulk_state16_pool(const Mamba3Pool *pool, void *workspace) {
    (void)workspace;
    launch_bulk_pool<__half, __half>(pool);
}
extern "C" void mamba3_step_bulk_state_bf16(const Mamba3Tensors *t, void *workspace) {
    (void)workspace;
    launch_bulk<__nv_bfloat16, __nv_bfloat16>(t, nullptr);
}
extern "C" void mamba3_step_bulk_state_bf16_pool(const Mamba3Pool *pool, void *workspace) {
    (void)workspace;
    launch_bulk_pool<__nv_bfloat16, __nv_bfloat16>(pool);
}
