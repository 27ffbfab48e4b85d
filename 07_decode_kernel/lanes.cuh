/* 07_decode_kernel, GPU: what versions 4-12 share. A row's N states split
 * over S lanes (kernels.cu, versions 4 and 5: the plan), the vector loads
 * and stores of one lane, and the host side that plans a launch and
 * dispatches the template arguments it chose. */
#ifndef DECODE_LANES_CUH
#define DECODE_LANES_CUH

#include <cuda_fp16.h>
#include <limits.h>
#include <stdint.h>

#include "cuda_check.h"
#include "decode.h"
#include "launch.cuh"
#include "mamba2_io.cuh"
#include "mufu.cuh"
#include "pair16.cuh"

/* Δ = softplus(dt + dt_bias) without libm (versions 6-12): 03's dt_poly,
 * max(v, 0) + log1p(e^-|v|), e^-|v| on one MUFU.EX2 and the log1p by
 * log1p_unit (mufu.cuh). Equal to the official threshold form: above 20,
 * log1p(e^-v) < 2.1e-9 vanishes against v. */
static __device__ __forceinline__ float delta_poly(float dt, float bias, bool softplus) {
    // dt = dt + dt_bias
    const float v = dt + bias;
    // dt = F.softplus(dt) if dt_softplus else dt
    return softplus ? fmaxf(v, 0.f) + log1p_unit(exp2_approx(-fabsf(v) * LOG2E_F)) : v;
}

/* z·σ(z). __fdividef: 2 ulp, no IEEE-division slow path (whose call makes
 * the kernel spill); for z < -87, 1 + e^-z = inf and z / inf = 0, as it should. */
static __device__ __forceinline__ float silu(float z) { return __fdividef(z, 1.f + expf(-z)); }

constexpr int kRowsPerThread = 4;  // R: independent rows in flight per thread
constexpr int kMaxThreads = 256;   // threads per block at most

struct CoalescedPlan {
    int lanes;               // S: lanes per row, a power of two 1..32
    int64_t spans;           // pieces of a row; 1: the state stays in registers across tokens
    int64_t rows_per_block;  // warps · (32/S) · R
    int64_t tiles;           // blocks per group of rows
    int64_t blocks;          // groups · tiles
};

/* W consecutive values at p (aligned to W elements), as floats. */
static __device__ __forceinline__ void load_vec(const float *p, float (&v)[1]) { v[0] = *p; }
static __device__ __forceinline__ void load_vec(const float *p, float (&v)[4]) {
    const float4 q = *reinterpret_cast<const float4 *>(p);
    v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
}
/* 4 16-bit values (F: __half or __nv_bfloat16; the bits of two pairs,
 * pair16.cuh: __half22float2, __bfloat1622float2) to 4 floats. */
template <typename F>
static __device__ __forceinline__ void widen4(uint2 q, float (&v)[4]) {
    using F2 = typename Pair<F>::type;
    const float2 lo = Pair<F>::widen(*reinterpret_cast<const F2 *>(&q.x));
    const float2 hi = Pair<F>::widen(*reinterpret_cast<const F2 *>(&q.y));
    v[0] = lo.x; v[1] = lo.y; v[2] = hi.x; v[3] = hi.y;
}
template <typename F>  // __half, __nv_bfloat16
static __device__ __forceinline__ void load_vec(const F *p, float (&v)[1]) { v[0] = to_float(*p); }
template <typename F>
static __device__ __forceinline__ void load_vec(const F *p, float (&v)[4]) {
    widen4<F>(*reinterpret_cast<const uint2 *>(p), v);  // 4 values, one 8-byte access
}
static __device__ __forceinline__ void store_vec(float *p, const float (&v)[1]) { *p = v[0]; }
static __device__ __forceinline__ void store_vec(float *p, const float (&v)[4]) {
    *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
}

/* W consecutive state floats at p (versions 6-12), read and written with streaming hints
 * (ld.global.cs, st.global.cs: touched once, evicted first). */
static __device__ __forceinline__ void load_stream(const float *p, float (&v)[1]) { v[0] = __ldcs(p); }
static __device__ __forceinline__ void load_stream(const float *p, float (&v)[4]) {
    const float4 q = __ldcs(reinterpret_cast<const float4 *>(p));
    v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
}
static __device__ __forceinline__ void store_stream(float *p, const float (&v)[1]) { __stcs(p, v[0]); }
static __device__ __forceinline__ void store_stream(float *p, const float (&v)[4]) {
    __stcs(reinterpret_cast<float4 *>(p), make_float4(v[0], v[1], v[2], v[3]));
}
/* The same for a state stored in 16 bits, F: __half (version 8) or
 * __nv_bfloat16 (9), widened and rounded to nearest by the pair trait
 * (pair16.cuh): 4 values, one 8-byte access. */
template <typename F>
static __device__ __forceinline__ void load_stream(const F *p, float (&v)[1]) {
    v[0] = to_float(Pair<F>::from_bits(__ldcs(reinterpret_cast<const unsigned short *>(p))));
}
template <typename F>
static __device__ __forceinline__ void load_stream(const F *p, float (&v)[4]) {
    widen4<F>(__ldcs(reinterpret_cast<const uint2 *>(p)), v);
}
template <typename F>
static __device__ __forceinline__ void store_stream(F *p, const float (&v)[1]) {
    __stcs(reinterpret_cast<unsigned short *>(p), Pair<F>::bits(Pair<F>::narrow1(v[0])));
}
template <typename F>
static __device__ __forceinline__ void store_stream(F *p, const float (&v)[4]) {
    const typename Pair<F>::type lo = Pair<F>::narrow(v[0], v[1]), hi = Pair<F>::narrow(v[2], v[3]);
    __stcs(reinterpret_cast<uint2 *>(p),
           make_uint2(*reinterpret_cast<const unsigned *>(&lo), *reinterpret_cast<const unsigned *>(&hi)));
}

/* 8 16-bit values (16 bytes, versions 10-12) to 8 floats, and the state's
 * 8 values back with the streaming hint. */
template <typename F>
static __device__ __forceinline__ void load_vec(const F *p, float (&v)[8]) {
    const uint4 q = *reinterpret_cast<const uint4 *>(p);
    const unsigned w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const float2 f = Pair<F>::widen(*reinterpret_cast<const typename Pair<F>::type *>(&w[i]));
        v[2 * i] = f.x;
        v[2 * i + 1] = f.y;
    }
}
template <typename F>
static __device__ __forceinline__ void store_stream(F *p, const float (&v)[8]) {
    unsigned w[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const typename Pair<F>::type pair = Pair<F>::narrow(v[2 * i], v[2 * i + 1]);
        w[i] = *reinterpret_cast<const unsigned *>(&pair);
    }
    __stcs(reinterpret_cast<uint4 *>(p), make_uint4(w[0], w[1], w[2], w[3]));
}

/* The lane's K vectors of one N-vector (B or C at one token), from element e0. */
template <typename In, int W, int K>
static __device__ __forceinline__ void load_lane(const In *src, int64_t e0, int S, int64_t N, float (&v)[K][W]) {
#pragma unroll
    for (int k = 0; k < K; k++) {
        const int64_t e = e0 + (int64_t)k * S * W;
        if (e < N) load_vec(src + e, v[k]);
        else
#pragma unroll
            for (int w = 0; w < W; w++) v[k][w] = 0.f;
    }
}

/* ---- Host side: planning and dispatch ---- */

static inline bool aligned(const void *p, size_t bytes) { return (uintptr_t)p % bytes == 0; }

/* What a server adds to a launch of versions 6-12 (DecodeServing, decode.h):
 * the slot each batch entry reads and writes (NULL: entry b's own rows; a
 * negative slot: padding) and where the state after every token goes (NULL:
 * not asked). */
struct DecodePool {
    const int32_t *slot_of;  // (b,) int32
    void *inter;             // M1 (b, T, d, N)  M2 (b, T, h, p, N), the state's dtype
};

/* The tensors a server's step launches on. A server steps its pool in
 * place (state_out == state). Handed a separate state_out, the pool is
 * copied there first (slots no entry names keep their state) and the step
 * runs on the copy. Without a pool (intermediate states alone) every row is
 * read and written, so nothing is copied. pool_bytes: the pool's bytes
 * (decode_pool_values times a value's bytes; 8-bit codes: codes8_bytes). */
static inline DecodeTensors pool_in_place(const DecodeServing *sv, size_t pool_bytes) {
    DecodeTensors t = sv->t;
    if (sv->slots && t.state_out != t.state) {
        cuda_check(cudaMemcpyAsync(t.state_out, t.state, pool_bytes, cudaMemcpyDeviceToDevice, 0));
        t.state = t.state_out;
    }
    return t;
}

struct CoalescedLaunch {
    CoalescedPlan plan;
    DecodePool pool{};  // versions 6-9 as a server runs them; none otherwise
    int W, K;     // template arguments: floats per access (1, 4), accesses per lane and row (1, 2, 4)
    int threads;  // per block, 32..256
    unsigned grid;
};

/* Floats per vector access: 4 when every one can be 16 bytes (8 bytes for
 * 16-bit B/C), else 1. */
static inline int access_width(const DecodeTensors *t, size_t in_bytes) {
    return t->s.dstate % 4 == 0 && aligned(t->state, 16) && aligned(t->state_out, 16) &&
                   aligned(t->B, 4 * in_bytes) && aligned(t->C, 4 * in_bytes) &&
                   (t->s.form == DECODE_M2 || aligned(t->A, 16))
               ? 4
               : 1;
}

/* The rest of a plan, once S lanes per row and K are chosen: lanes and
 * spans per row, then threads per block (at most max_threads), halved while
 * half a block still covers a whole group (a head's p rows, or a batch
 * entry's d), or while the blocks would be fewer than 2 per SM; a thread
 * takes rows_per_thread rows. */
static inline void plan_blocks(const DecodeShape *s, int S, int max_threads, int64_t rows_per_thread, CoalescedLaunch *c) {
    const bool m2 = s->form == DECODE_M2;
    const int64_t vectors = ceil_div(s->dstate, c->W);  // per row
    c->plan.lanes = S;
    c->plan.spans = ceil_div(vectors, (int64_t)S * c->K);
    const int64_t width = m2 ? s->headdim : s->dim;
    const int64_t groups = m2 ? s->batch * s->heads : s->batch;
    const int64_t rows_per_warp = (32 / S) * rows_per_thread;
    int threads = max_threads;
    while (threads > 32 && (threads / 64) * rows_per_warp >= width) threads /= 2;
    while (threads > 32 && groups * ceil_div(width, (threads / 32) * rows_per_warp) < 2 * (int64_t)sm_count())
        threads /= 2;
    c->threads = threads;
    c->plan.rows_per_block = (threads / 32) * rows_per_warp;
    c->plan.tiles = ceil_div(width, c->plan.rows_per_block);
    c->plan.blocks = groups * c->plan.tiles;
    c->grid = (unsigned)(c->plan.blocks < INT_MAX ? c->plan.blocks : INT_MAX);
}


/* Kernel::launch with the template arguments the plan chose (K, then W and the form). */
template <typename Kernel, typename In, int W, bool M2>
static void launch_k(const DecodeTensors *t, const CoalescedLaunch &c) {
    switch (c.K) {
    case 1: Kernel::template launch<In, W, 1, M2>(t, c); break;
    case 2: Kernel::template launch<In, W, 2, M2>(t, c); break;
    default: Kernel::template launch<In, W, 4, M2>(t, c); break;
    }
    cuda_check_launch();
}

template <typename Kernel, typename In>
static void launch_planned(const DecodeTensors *t, const CoalescedLaunch &c) {
    const bool m2 = t->s.form == DECODE_M2;
    if (c.W == 4) {
        if (m2) launch_k<Kernel, In, 4, true>(t, c);
        else launch_k<Kernel, In, 4, false>(t, c);
    } else {
        if (m2) launch_k<Kernel, In, 1, true>(t, c);
        else launch_k<Kernel, In, 1, false>(t, c);
    }
}

#endif
