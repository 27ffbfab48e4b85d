/* 05_ssd_mamba2, GPU, versions 8-13: the fused SSD on Hopper's warpgroup
 * matrix product (sm_90a), the kernel; its launchers are in wgmma.cu.
 *   8 ssd_fused_wgmma      version 7's plan on wgmma, chunks of 128 (below)
 *   9 ssd_wgmma_frag_ring  the state handed over in the accumulators' order
 *  10 ssd_wgmma_heads      several heads of a group a block
 *  11 ssd_wgmma_frag_ring_bf16  version 9 in bf16
 *  12 ssd_wgmma_tma        version 9 with x, B, C in and y out by bulk tensor
 *                          copies (TMA): a thread's load and store loops
 *                          become five copies issued by one thread and one
 *                          store a warpgroup; y = acc + D·x staged in x's place
 *  13 ssd_wgmma_tma_bf16   version 12 in bf16
 *
 * Measured bounds (Nsight Compute, H200, S3 b 8 L 8192, clocks as found):
 *   8 (85ce43f, 1.33 ms): issue slots 47% busy, the integer ALU the busiest
 *     pipe; at b 1 the 64 chained handoffs of each (b, h) state, each 32
 *     scattered 4-byte loads and stores a thread, set the time (0.585 ms).
 *   9 (3773188, 0.942 ms): tensor pipe 16%, issue slots 53%, 7.35 cycles
 *     between a warp's instructions, DRAM 15%, L2 44%, 16 warps an SM:
 *     latency-bound, the phases of a block run one after another and two
 *     blocks an SM cover too little of it; 29,000 warp instructions a
 *     (b, h, chunk), mostly the scalar work around the products.
 *  10 (3773188, 1.05 ms): issue slots 35%, 10.7 cycles between instructions:
 *     the head loop spills 108 bytes a thread under the 128-register cap of
 *     two blocks an SM.
 *  12 (311f27b, H100 at 1.8 GHz, 0.616 ms; version 9 there 0.915): 14,000
 *     warp instructions a (b, h, chunk) against version 9's 28,900; tensor
 *     pipe 24%, issue slots 39%, 10 cycles between a warp's instructions,
 *     DRAM 37%, L2 70%: still latency-bound, the phases of a block in series
 *     (stall samples: start and dt 11%, waiting for the copies 18%, the
 *     hand-off 21%, products and outputs the rest).
 *
 * Version 8. Version 7 (kernels.cu) gives each warp 16 rows and feeds mma.sync from
 * registers: every 16x8x16 product needs its B fragment fetched by ldmatrix,
 * so shared-memory traffic, not the tensor cores, sets its pace (61% of the
 * shared-memory peak, tensor pipe 20% at S3 b 8 L 8192), and it computes
 * C·Bᵀ over a chunk of 256 (most of its FLOPs). This version changes two
 * things:
 *   - every product is a wgmma of 64 rows by 64 columns by 16, issued by a
 *     warpgroup (128 threads) with its B operand read by the tensor cores
 *     straight from shared memory (128-byte-swizzled tiles, wgmma_sm90.cuh),
 *     once for all 64 rows;
 *   - chunks of 128 steps (64 when the problem's chunk is 64 or less): the
 *     causal C·Bᵀ and P·x products grow as Q² per chunk, the state products
 *     stay Q·p·N, so a chunk of 128 does 30% fewer FLOPs per step than one of
 *     256 at S3. The outputs do not depend on the chunk (only the rounding of
 *     sums does), so the kernel picks its own, whatever the problem's is.
 *
 * One block per (b, h, chunk), Q/64 warpgroups, warpgroup w owning rows
 * 64w..64w+63 of the chunk; x, B, C of the chunk in shared memory as fp16:
 *   1 S_localᵀ (N x p) = (B ∘ w)ᵀ·x, w_j = dt_j·exp(cum_last − cum_j):
 *     warpgroup w takes the 64-row n-tiles w, w + Q/64, ...; its A operand
 *     is Bᵀ from ldmatrix.trans, scaled by w_j in registers; x is read
 *     MN-major (its rows are the k of the product)
 *   2 the state handshake of version 7: wait for chunk c − 1's flag, read
 *     S_in from the ring (fp32, L2), write S_out = exp(cum_last)·S_in +
 *     S_local, raise the flag; S_in goes to shared memory as fp16
 *   3 y rows of warpgroup w: acc = C·S_inᵀ (both operands K-major in shared
 *     memory), scaled per row by exp(cum_i); then for each 64-column tile
 *     t <= w: CB = C·Bᵀ (64 x 64), P = CB ∘ exp(cum_i − cum_j)·dt_j (causal
 *     on the diagonal tile), converted in registers to fp16 A fragments (the
 *     accumulator layout is the A layout), acc += P·x
 *   4 y = acc + D·x, times silu(z), stored as fp16
 *
 * FLOPs per (b, h, chunk of Q), counting each 64 x 64 tile computed:
 * 2QpN (state) + 2QpN (C·S_in) + T(T+1)/2·2·64²·(N + p) for the T = Q/64
 * row tiles' causal column tiles: 8.9 MFLOP at Q 128, N 128, p 64 (against
 * version 7's 22 at Q 256), 1.5·10^11 at S3 b 8 L 8192. Exps: Q·64 a
 * diagonal tile, 2 per row and off-diagonal tile, 2Q per chunk.
 * Bytes: as version 7 (x, dt, B, C, z read once, y written once, the ring
 * 2·4·b·h·p·N in L2). */
#ifndef SSD_WGMMA_KERNEL_CUH
#define SSD_WGMMA_KERNEL_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

#include "mamba2_io.cuh"
#include "mma_sm80.cuh"
#include "mufu.cuh"
#include "pair16.cuh"
#include "ssd.h"
#include "tma_sm90.cuh"
#include "wgmma_sm90.cuh"

/* Limits of the tiles: N <= 128 (two 64-column slabs), p <= 64 (one). */
#define WG_NMAX 128
#define WG_PMAX 64

struct WgmmaArgs {
    const void *x, *dt, *B, *C, *z;    // (b,L,h,p), (b,L,h), (b,L,g,N) x2, (b,L,h,p): fp16 | bf16
    const float *A, *D, *dt_bias;      // (h,), (h,) | (h,p), (h,) fp32
    const float *h0;                   // (b, h, p, N) fp32, NULL without
    void *y;                           // (b, L, h, p) fp16 | bf16
    float *final_state;                // (b, h, p, N) fp32
    float *ring;                       // (b, h, 2, p, N) fp32: chunk c's end state in slot c % 2
                                       // (versions 14-15: (segments, b, h, 2, slot), below)
    int *published;                    // (b, h): how many chunks (14-15: segments) have their end state out
    int *ticket;                       // next work item: items go out in chunk-major order
    int64_t batch, L, H, P, G, N;
    int64_t ring_slot;                 // floats a ring slot holds
    int nchunks, heads_per_block;      // heads_per_block divides H / G
    int segments, seg_chunks;          // versions 14-15: a (b, h) walked in segments of seg_chunks chunks
    const int32_t *cu_seqlens;         // (nseq + 1,) int32, a packed row's sequences (versions 14-15), or NULL
    float *chunk_states;               // (Σ ceil(length / chunk), h, p, N) fp32: the state after each chunk
    int64_t nseq, problem_chunk;       // packed: the sequences, and the chunk of chunk_states
    const int *seq_order;              // (nseq,) packed: the sequences, longest first
    const int64_t *seq_first_chunk;    // (nseq,) packed: chunk_states' index of each sequence's first chunk
    bool softplus, D_per_channel;
};

/* Versions 12-13: the tensor maps of the bulk tensor copies, every one with
 * boxes 64 elements wide (128 bytes, one swizzled row). */
struct TmaMaps {
    CUtensorMap x;     // (b, L, h, p) 16-bit, box: Q steps of one head
    CUtensorMap B, C;  // (b, L, g, N) 16-bit, box: Q steps x 64 of N
    CUtensorMap y;     // (b, L, h, p) 16-bit, box: 64 steps of one head
};

/* A pair of 16-bit values (T: __half, __nv_bfloat16) packed from fp32 into
 * one 32-bit register (round to nearest), and a pair scaled by a pair. */
template <typename T>
static __device__ __forceinline__ uint32_t pack16(float lo, float hi) {
    typename Pair<T>::type h = Pair<T>::narrow(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
}
template <typename T>
static __device__ __forceinline__ uint32_t mul16(uint32_t v, uint32_t w) {
    using T2 = typename Pair<T>::type;
    T2 h = __hmul2(*reinterpret_cast<T2 *>(&v), *reinterpret_cast<T2 *>(&w));
    return *reinterpret_cast<uint32_t *>(&h);
}

/* Rows [0, Q) of a chunk's (len x cols) fp16 rows into 128-byte-swizzled
 * slabs of 64 columns (slab s at dst + s·Q·128 bytes); rows past len and
 * columns past cols are zero. Rows whose length is a multiple of 8 go by
 * 16-byte cp.async. */
template <int Q, int SLABS, typename T>
static __device__ void load_swizzled(unsigned char *dst, const T *src, int64_t stride, int len, int cols,
                                     bool vec16) {
    constexpr int groups = SLABS * 8;  // 8-column groups a row
    for (int i = threadIdx.x; i < Q * groups; i += blockDim.x) {
        const int r = i / groups, g = i % groups, col = g * 8;
        unsigned char *d = dst + (g / 8) * Q * 128 + sw128_offset(r, col % 64);
        if (vec16) {
            if (r < len && col < cols) cp_async16(d, src + r * stride + col);
            else *reinterpret_cast<uint4 *>(d) = make_uint4(0, 0, 0, 0);
        } else {
            T v[8];
#pragma unroll
            for (int e = 0; e < 8; e++) v[e] = r < len && col + e < cols ? src[r * stride + col + e] : from_float<T>(0.f);
            *reinterpret_cast<uint4 *>(d) = *reinterpret_cast<const uint4 *>(v);
        }
    }
}

/* threadIdx.x, read where it is used: what a helper derives from it (lane,
 * fragment rows, shared-memory offsets) is then computed afresh in each
 * chunk of version 14's loop instead of being kept in registers across it. */
static __device__ __forceinline__ int thread_index() {
    int t;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(t));
    return t;
}

/* ---- The pieces of a chunk, shared by the kernel below (versions 8-13)
 * and the walking kernel of versions 14-15 (wgmma_walk.cuh). ---- */

/* n-tiles of 64 of the state a warpgroup owns: NWG warpgroups share N <= 128. */
static __host__ __device__ constexpr int state_tiles(int nwg) { return (WG_NMAX / 64 + nwg - 1) / nwg; }

/* The chunk's decays from its raw dt (thread j < Q holds step j's; steps
 * past len count as Δ = 0): dts_j = Δ_j, cum2_j = log2e·Σ_{i<=j} Δ_i·A,
 * wts_j = Δ_j·exp(cum_last − cum_j) (the state product's weights) and
 * vdt_j = Δ_j·exp(cum_e − cum_j), e the last step of j's 64-step tile.
 * Returns cum_last; wts and vdt are read after the caller's next barrier. */
template <typename T, int Q>
static __device__ __forceinline__ float chunk_decays(float dt_raw, int len, float bias, float A, bool softplus,
                                                     float *dts, float *cum2, float *vdt, T *wts) {
    const int tid = thread_index();
    float dA = 0.f;
    if (tid < Q) {
        const float d = tid < len ? delta_of(dt_raw, bias, softplus) : 0.f;
        dts[tid] = d;
        // dA_cs = tl.cumsum(dA, axis=0) with dA = dt * A
        dA = d * A * LOG2E_F;
    }
    dA = block_inclusive_sum(dA);
    if (tid < Q) cum2[tid] = dA;
    __syncthreads();
    const float cum_last = cum2[len - 1];
    if (tid < Q) {
        wts[tid] = from_float<T>(dts[tid] * exp2_approx(cum_last - cum2[tid]));
        vdt[tid] = dts[tid] * exp2_approx(cum2[tid | 63] - cum2[tid]);
    }
    return cum_last;
}

/* Phase 1, S_localᵀ (n x p) = Σ_j (w_j B_j)ᵀ x_j: n-tile mt = wg + k·NWG of
 * 64 rows into st[k], warp wq holding n rows 64·mt + 16·wq.., k over the
 * chunk's steps. Its A operand is Bᵀ from ldmatrix.trans, scaled by w_j in
 * registers; x is read MN-major (its rows are the k of the product). */
template <typename T, int NWG, int SLABS>
static __device__ __forceinline__ void state_product(float (&st)[state_tiles(NWG)][32], uint32_t bs, uint32_t xs,
                                                     const T *wts) {
    constexpr int Q = 64 * NWG, KQ = Q / 16;
    const int wg = thread_index() / 128, wq = (thread_index() / 32) % 4, lane = thread_index() % 32;
    const int t4 = lane % 4, q = lane / 8, r8 = lane % 8;  // ldmatrix: lane gives row r8 of matrix q
#pragma unroll
    for (int k = 0; k < state_tiles(NWG); k++) {
        const int mt = wg + k * NWG;
        if (mt >= SLABS) continue;
        /* Two halves of the chunk's k-steps, so that only half the A
         * fragments are held while their products run. */
#pragma unroll
        for (int half = 0; half < 2; half++) {
            uint32_t af[KQ / 2][4];  // (w ∘ B)ᵀ fragments: rows n, columns j
#pragma unroll
            for (int k2 = 0; k2 < KQ / 2; k2++) {
                const int kk = half * KQ / 2 + k2;
                const int j = kk * 16 + (q >> 1) * 8 + r8, col = 16 * wq + (q & 1) * 8;
                ldsm_x4_trans(af[k2], bs + mt * Q * 128 + sw128_offset(j, col));
                const uint32_t w_lo = *reinterpret_cast<const uint32_t *>(wts + kk * 16 + t4 * 2);
                const uint32_t w_hi = *reinterpret_cast<const uint32_t *>(wts + kk * 16 + 8 + t4 * 2);
                af[k2][0] = mul16<T>(af[k2][0], w_lo);
                af[k2][1] = mul16<T>(af[k2][1], w_lo);
                af[k2][2] = mul16<T>(af[k2][2], w_hi);
                af[k2][3] = mul16<T>(af[k2][3], w_hi);
            }
            wgmma_fence();
#pragma unroll
            for (int k2 = 0; k2 < KQ / 2; k2++) {
                const int kk = half * KQ / 2 + k2;
                wgmma_64x64_rs<T, 1>(st[k], af[k2], sw128_desc(xs + kk * 2048), kk > 0);
            }
            wgmma_commit();
            wgmma_wait<0>();
            wgmma_touch(st[k]);
        }
    }
}

/* A state in the accumulators' order: n-tile mt's 32 values of this thread
 * sit at float4 number (mt·8 + e/4)·128 + thread in warpgroup of a slot, so
 * that a warp's 16-byte accesses are contiguous. zero: read nothing, all 0. */
static __device__ __forceinline__ void frag_load(float (&v)[32], const float *slot, int mt, bool zero) {
    const int64_t at = (int64_t)(mt * 8 * 128 + thread_index() % 128) * 4;
#pragma unroll
    for (int e = 0; e < 32; e += 4) {
        const float4 f = zero ? make_float4(0.f, 0.f, 0.f, 0.f) : __ldcg(reinterpret_cast<const float4 *>(slot + at + e * 128));
        v[e] = f.x; v[e + 1] = f.y; v[e + 2] = f.z; v[e + 3] = f.w;
    }
}
static __device__ __forceinline__ void frag_store(float *slot, const float (&v)[32], int mt) {
    const int64_t at = (int64_t)(mt * 8 * 128 + thread_index() % 128) * 4;
#pragma unroll
    for (int e = 0; e < 32; e += 4)
        __stcg(reinterpret_cast<float4 *>(slot + at + e * 128), make_float4(v[e], v[e + 1], v[e + 2], v[e + 3]));
}
/* Element e of n-tile mt of this thread is state (pi, ni). */
static __device__ __forceinline__ void frag_pn(int mt, int e, int *pi, int *ni) {
    const int lane = thread_index() % 32, wq = (thread_index() / 32) % 4;
    *ni = mt * 64 + wq * 16 + lane / 4 + (e & 2) * 4;
    *pi = (e / 4) * 8 + (lane % 4) * 2 + (e & 1);
}
/* The state entering the chunk to shared memory as fp16 (p, n) rows: matrix
 * m of a pair of p-blocks is n rows 8·(m & 1).. of p-block i + m / 2, stored
 * transposed by stmatrix. */
template <typename T>
static __device__ __forceinline__ void frag_to_smem(uint32_t ss, const float (&s)[32], int mt) {
    const int lane = thread_index() % 32, wq = (thread_index() / 32) % 4, q = lane / 8, r8 = lane % 8;
#pragma unroll
    for (int i = 0; i < 8; i += 2) {
        const uint32_t r[4] = {pack16<T>(s[4 * i], s[4 * i + 1]), pack16<T>(s[4 * i + 2], s[4 * i + 3]),
                               pack16<T>(s[4 * i + 4], s[4 * i + 5]), pack16<T>(s[4 * i + 6], s[4 * i + 7])};
        stsm_x4_trans(ss + mt * 64 * 128 + sw128_offset(8 * (i + (q >> 1)) + r8, 16 * wq + 8 * (q & 1)), r);
    }
}

/* Phase 3's first product, issued and committed, not waited for:
 * acc = C·S_inᵀ over this warpgroup's 64 rows (both operands K-major).
 * acc = tl.dot(C, prev_states) (_chunk_scan_fwd_kernel) */
template <typename T, int NWG, int SLABS>
static __device__ __forceinline__ void state_term_issue(float (&yacc)[32], uint32_t cs, uint32_t ss) {
    constexpr int Q = 64 * NWG;
    const int wg = thread_index() / 128;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < WG_NMAX / 16; kk++) {
        if (kk >= SLABS * 4) break;
        const uint32_t at = (kk / 4) * Q * 128 + wg * 64 * 128 + (kk % 4) * 32;
        wgmma_64x64_ss<T>(yacc, sw128_desc(cs + at), sw128_desc(ss + (kk / 4) * 64 * 128 + (kk % 4) * 32), kk > 0);
    }
    wgmma_commit();
}

/* The rest of phase 3, once the state term is in: acc *= exp(cum_i), then
 * for each 64-column tile t <= wg, CB = C·Bᵀ, P = CB ∘ exp(cum_i − cum_j)·dt_j
 * (causal on the diagonal tile), converted in registers to A fragments (the
 * accumulator layout is the A layout), acc += P·x. NCOL: the columns of one
 * C·Bᵀ product, 64 (versions 8-13) or 32 (versions 14-15: two a tile, 16
 * accumulators fewer live at the kernel's peak). */
template <typename T, int NWG, int SLABS, int NCOL = 64>
static __device__ __forceinline__ void causal_terms(float (&yacc)[32], uint32_t cs, uint32_t bs, uint32_t xs,
                                                    const float *cum2, const float *dts, const float *vdt) {
    static_assert(NCOL == 64 || NCOL == 32, "C·Bᵀ in pieces of 64 or 32 columns");
    constexpr int Q = 64 * NWG;
    const int wg = thread_index() / 128, wq = (thread_index() / 32) % 4, lane = thread_index() % 32, t4 = lane % 4;
    const int row0 = wg * 64 + wq * 16 + lane / 4;  // this thread's rows: row0 and row0 + 8
    {
        // acc = acc * scale_m[:, None] with scale_m = tl.exp(dA_cs_m)
        const float ea = exp2_approx(cum2[row0]), eb = exp2_approx(cum2[row0 + 8]);
#pragma unroll
        for (int e = 0; e < 32; e++) yacc[e] *= (e & 2) ? eb : ea;
    }
    const float ca = cum2[row0], cb = cum2[row0 + 8];
#pragma unroll
    for (int ct = 0; ct < NWG; ct++) {
        if (ct > wg) break;
#pragma unroll
        for (int piece = 0; piece < 64 / NCOL; piece++) {
            const int c0 = ct * 64 + piece * NCOL;  // the piece's first column
            float s[NCOL / 2] = {};                 // C·Bᵀ, rows of this warpgroup, columns c0..
            /* cb = tl.dot(C, B) */
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < WG_NMAX / 16; kk++) {
                if (kk >= SLABS * 4) break;
                const uint32_t at = (kk / 4) * Q * 128 + wg * 64 * 128 + (kk % 4) * 32;
                const uint32_t bt = (kk / 4) * Q * 128 + c0 * 128 + (kk % 4) * 32;
                if constexpr (NCOL == 64) wgmma_64x64_ss<T>(s, sw128_desc(cs + at), sw128_desc(bs + bt), kk > 0);
                else wgmma_64x32_ss<T>(s, sw128_desc(cs + at), sw128_desc(bs + bt), kk > 0);
            }
            wgmma_commit();
            wgmma_wait<0>();
            wgmma_touch(s);
            /* cb *= tl.exp(dA_cs_m[:, None] - dA_cs_k[None, :]) * dt_k, zero above the diagonal.
             * Off the diagonal the decay factors through the tile's last step e:
             * exp(cum_i - cum_j) = exp(cum_i - cum_e)·exp(cum_e - cum_j), both <= 1. */
            uint32_t pf[NCOL / 16][4];  // P as 16-bit A fragments, k-steps of 16 columns
            if (ct < wg) {
                const float ce = cum2[ct * 64 + 63];
                const float ua = exp2_approx(ca - ce), ub = exp2_approx(cb - ce);
#pragma unroll
                for (int e = 0; e < NCOL / 2; e += 2) {
                    const int j = c0 + (e / 4) * 8 + t4 * 2;
                    const float2 v = *reinterpret_cast<const float2 *>(vdt + j);
                    const float u = (e & 2) ? ub : ua;
                    pf[e / 8][(e % 8) / 2] = pack16<T>(s[e] * u * v.x, s[e + 1] * u * v.y);
                }
            } else {
#pragma unroll
                for (int e = 0; e < NCOL / 2; e += 2) {
                    const int j = c0 + (e / 4) * 8 + t4 * 2, i = row0 + (e & 2) * 4;
                    const float ci = (e & 2) ? cb : ca;
                    const float p0 = j <= i ? s[e] * exp2_approx(ci - cum2[j]) * dts[j] : 0.f;
                    const float p1 = j + 1 <= i ? s[e + 1] * exp2_approx(ci - cum2[j + 1]) * dts[j + 1] : 0.f;
                    pf[e / 8][(e % 8) / 2] = pack16<T>(p0, p1);
                }
            }
            /* acc += tl.dot(cb, x) */
            wgmma_fence();
#pragma unroll
            for (int kj = 0; kj < NCOL / 16; kj++)
                wgmma_64x64_rs<T, 1>(yacc, pf[kj], sw128_desc(xs + (c0 / 16 + kj) * 2048), 1);
            wgmma_commit();
            wgmma_wait<0>();
            wgmma_touch(yacc);
        }
    }
}

/* D of column pi of head h (0 past p, or without D). */
static __device__ __forceinline__ float D_of_column(const WgmmaArgs &a, int64_t h, float D_head, int pi) {
    return !a.D ? 0.f : !a.D_per_channel ? D_head : pi < a.P ? a.D[h * a.P + pi] : 0.f;
}

template <typename T, bool D_IN_REGS, bool CLIP = false>
static __device__ __forceinline__ void y_out_tma(const float (&yacc)[32], const unsigned char *Xs, unsigned char *Ys,
                                                 const WgmmaArgs &a, const CUtensorMap *ymap, int64_t b, int64_t h,
                                                 int64_t t0, int len) {
    using T2 = typename Pair<T>::type;
    const int wg = thread_index() / 128, wq = (thread_index() / 32) % 4, lane = thread_index() % 32, t4 = lane % 4;
    const int row0 = wg * 64 + wq * 16 + lane / 4;
    const float D_head = a.D && !a.D_per_channel ? a.D[h] : 0.f;
    const T *zt = static_cast<const T *>(a.z);
    /* y of pair (row i, columns pi, pi + 1) from its accumulators, x pair and D. */
    auto y_pair = [&](int i, int pi, float acc0, float acc1, float d0, float d1) {
        const T2 x2 = *reinterpret_cast<const T2 *>(Xs + sw128_offset(i, pi));
        // out = acc + x * D
        float v[2] = {fmaf(d0, Pair<T>::lo(x2), acc0), fmaf(d1, Pair<T>::hi(x2), acc1)};
        if (zt && i < len) {
            const T *zrow = zt + ((b * a.L + t0 + i) * a.H + h) * a.P;  // z[b, t0+i, h, :]
#pragma unroll
            for (int e = 0; e < 2; e++) {
                if (pi + e >= a.P) continue;
                // out = out * F.silu(z)
                const float zv = to_float(zrow[pi + e]);
                v[e] *= zv / (1.f + __expf(-zv));
            }
        }
        *reinterpret_cast<T2 *>(Ys + sw128_offset(i, pi)) = Pair<T>::narrow(v[0], v[1]);
    };
    if constexpr (D_IN_REGS) {
        float d_col[16];  // D of this thread's columns (k / 2)·8 + 2·t4 + k % 2
#pragma unroll
        for (int k = 0; k < 16; k++) d_col[k] = D_of_column(a, h, D_head, (k / 2) * 8 + t4 * 2 + k % 2);
#pragma unroll
        for (int half_row = 0; half_row < 2; half_row++)
#pragma unroll
            for (int nt = 0; nt < 8; nt++)
                y_pair(row0 + half_row * 8, nt * 8 + t4 * 2, yacc[nt * 4 + half_row * 2], yacc[nt * 4 + half_row * 2 + 1],
                       d_col[2 * nt], d_col[2 * nt + 1]);
    } else {
#pragma unroll
        for (int nt = 0; nt < 8; nt++) {
            const int pi = nt * 8 + t4 * 2;
            const float d0 = D_of_column(a, h, D_head, pi), d1 = D_of_column(a, h, D_head, pi + 1);
#pragma unroll
            for (int half_row = 0; half_row < 2; half_row++)
                y_pair(row0 + half_row * 8, pi, yacc[nt * 4 + half_row * 2], yacc[nt * 4 + half_row * 2 + 1], d0, d1);
        }
    }
    fence_async_smem();
    asm volatile("bar.sync %0, 128;" ::"r"(1 + wg) : "memory");  // this warpgroup's rows are written
    if (!CLIP || wg * 64 + 64 <= len) {
        if (thread_index() % 128 == 0 && wg * 64 < len)
            tma_store_4d_wait(ymap, Ys + wg * 64 * 128, 0, (int)h, (int)(t0 + wg * 64), (int)b);
    } else {
        /* CLIP (a packed row's last chunk of a sequence): the copy would write
         * the next sequence's rows; rows below len go by 16-byte stores. */
        T *y = static_cast<T *>(a.y);
        for (int idx = thread_index() % 128; idx < (len - wg * 64) * 8; idx += 128) {
            const int r = wg * 64 + idx / 8, col = (idx % 8) * 8;
            if (col >= a.P) continue;
            *reinterpret_cast<uint4 *>(y + ((b * a.L + t0 + r) * a.H + h) * a.P + col) =
                *reinterpret_cast<const uint4 *>(Ys + sw128_offset(r, col));
        }
    }
}

/* NWG warpgroups, chunk Q = 64·NWG; SLABS: N rounded up to 64, over 64.
 * FRAG_RING (versions 9, 10): the ring holds each thread's accumulators in
 * their own order, so the handoff is 16-byte loads and stores (h0 too, put
 * there by ring_from_h0), and S_in reaches shared memory by stmatrix;
 * version 8 indexes every element as (p, N).
 * HEAD_LOOP (version 10): the block runs heads_per_block heads of one group
 * in turn; without it the loop runs once and compiles away.
 * TMA (versions 12, 13): x, B, C come in by bulk tensor copies and y leaves
 * by one, staged in x's place (y_out_tma); without it the maps go unused. */
template <typename T, int NWG, int SLABS, bool FRAG_RING, bool HEAD_LOOP, bool TMA>
__global__ void __launch_bounds__(NWG * 128, NWG == 2 ? 2 : 3)
    ssd_fused_wgmma_kernel(WgmmaArgs a, const __grid_constant__ TmaMaps maps) {
    static_assert(!(TMA && HEAD_LOOP), "the bulk copies bring one head's x a block");
    constexpr int Q = 64 * NWG;
    extern __shared__ unsigned char smem_raw[];
    /* Swizzled tiles need 1024-byte alignment: the launcher asks for 1 KiB more. */
    unsigned char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    constexpr int slabs = SLABS;
    unsigned char *Cs = smem;                   // (Q, 64·slabs) fp16, swizzled slabs: C of the chunk
    unsigned char *Bs = Cs + slabs * Q * 128;   // (Q, 64·slabs) fp16: B of the chunk
    /* Two 16 KB regions take turns holding x of the chunk, (Q, 64) fp16, and
     * the state entering it, (64, 64·slabs) fp16 with rows p (slabs <= 2,
     * Q = 128; at Q = 64 with two slabs the state's region is the larger). */
    constexpr int kRegion = (Q * 128 > slabs * 64 * 128 ? Q : slabs * 64) * 128;
    unsigned char *regions = Bs + slabs * Q * 128;                 // 2 x kRegion bytes
    float *cum2 = reinterpret_cast<float *>(regions + 2 * kRegion);  // (Q,) log2e · cumsum(dt·A)
    float *dts = cum2 + Q;                                           // (Q,) dt after bias and softplus
    float *vdt = dts + Q;                                            // (Q,) dt_j·exp(cum_e − cum_j), e: j's tile end
    T *wts = reinterpret_cast<T *>(vdt + Q);                         // (Q,) dt_j·exp(cum_last − cum_j)
    __shared__ int item;
    __shared__ alignas(8) uint64_t tiles_landed;  // TMA: x, B, C of the chunk are in

    const int tid = threadIdx.x, wg = tid / 128, wq = (tid / 32) % 4, lane = tid % 32;
    const int g8 = lane / 4, t4 = lane % 4;  // accumulator row and column pair of this lane
    if (tid == 0) {
        item = atomicAdd(a.ticket, 1);
        if (TMA) mbar_init(&tiles_landed, 1);
    }
    __syncthreads();
    /* Work item: (chunk, b, group of heads_per_block heads), chunk-major; the
     * items number under 2^31 (the launcher's check), so 32-bit division. */
    const unsigned HG = (unsigned)(a.H / a.heads_per_block), BHG = (unsigned)a.batch * HG, it = (unsigned)item;
    const int c = (int)(it / BHG);
    const int64_t b = (it % BHG) / HG, h_first = (int64_t)(it % HG) * a.heads_per_block,
                  g = h_first / (a.H / a.G);
    const int64_t t0 = (int64_t)c * Q;
    const int len = (int)min((int64_t)Q, a.L - t0);  // the last chunk may be shorter
    const int64_t x_row = a.H * a.P;                // x's stride between steps
    const T *x0 = static_cast<const T *>(a.x) + ((b * a.L + t0) * a.H + h_first) * a.P;
    const T *dt0 = static_cast<const T *>(a.dt) + (b * a.L + t0) * a.H + h_first;

    if (TMA) {
        /* Five copies from one thread: x (Q x 64), B and C (Q x 64 a slab);
         * steps past L arrive as zeros. */
        if (tid == 0) {
            mbar_arrive_expect_tx(&tiles_landed, (1 + 2 * slabs) * Q * 128);
            tma_load_4d(regions, &maps.x, &tiles_landed, 0, (int)h_first, (int)t0, (int)b);
#pragma unroll
            for (int sl = 0; sl < slabs; sl++) {
                tma_load_4d(Bs + sl * Q * 128, &maps.B, &tiles_landed, 64 * sl, (int)g, (int)t0, (int)b);
                tma_load_4d(Cs + sl * Q * 128, &maps.C, &tiles_landed, 64 * sl, (int)g, (int)t0, (int)b);
            }
        }
    } else {
        load_swizzled<Q, 1>(regions, x0, x_row, len, (int)a.P, a.P % 8 == 0);
        load_swizzled<Q, SLABS>(Bs, static_cast<const T *>(a.B) + ((b * a.L + t0) * a.G + g) * a.N, a.G * a.N,
                                len, (int)a.N, a.N % 8 == 0);
        load_swizzled<Q, SLABS>(Cs, static_cast<const T *>(a.C) + ((b * a.L + t0) * a.G + g) * a.N, a.G * a.N,
                                len, (int)a.N, a.N % 8 == 0);
        asm volatile("cp.async.commit_group;");
    }
    float dt_next = tid < len ? to_float(dt0[(int64_t)tid * a.H]) : 0.f;  // dt of the head to come

    const int heads = HEAD_LOOP ? a.heads_per_block : 1;
    for (int hh = 0; hh < heads; hh++) {
        const int64_t h = h_first + hh, bh = b * a.H + h;
        unsigned char *Xs = regions + (hh & 1) * kRegion, *Ss = regions + ((hh + 1) & 1) * kRegion;

        /* dt and the within-chunk cumsum of dt·A (log2 units), while the copies fly. */
        const float cum_last = chunk_decays<T, Q>(dt_next, len, a.dt_bias ? a.dt_bias[h] : 0.f, a.A[h], a.softplus,
                                                  dts, cum2, vdt, wts);
        if (hh + 1 < heads && tid < len) dt_next = to_float(dt0[(int64_t)tid * a.H + hh + 1]);
        if (TMA) {
            mbar_wait(&tiles_landed, 0);
        } else {
            asm volatile("cp.async.wait_all;");
            fence_async_smem();
        }
        __syncthreads();

        /* ---- 1. S_localᵀ (n x p) = Σ_j (w_j B_j)ᵀ x_j.
         * states = tl.dot(x, b) with x scaled by dt * exp(dA_cs_last - dA_cs) (_chunk_state_fwd_kernel) */
        constexpr int kTiles = state_tiles(NWG);
        float st[kTiles][32] = {};
        const uint32_t xs = smem_addr(Xs), bs = smem_addr(Bs), cs = smem_addr(Cs), ss = smem_addr(Ss);
        state_product<T, NWG, SLABS>(st, bs, xs, wts);

        /* ---- 2. State passing: wait for chunk c - 1, S_out = exp(cum_last) S_in + S_local.
         * states = scale * states + new_states (_state_passing_fwd_kernel) */
        if (tid == 0 && c > 0)
            while (load_acquire(a.published + bh) < c) __nanosleep(32);
        __syncthreads();
        const float chunk_decay = exp2_approx(cum_last);
        const float *h0 = a.h0 ? a.h0 + bh * a.P * a.N : nullptr;
        const float *ring_in = a.ring + (bh * 2 + ((c + 1) & 1)) * a.ring_slot;  // chunk c - 1's slot
        const bool last_chunk = c == a.nchunks - 1;
        float *ring_out = a.ring + (bh * 2 + (c & 1)) * a.ring_slot;
        float *final_state = a.final_state + bh * a.P * a.N;
#pragma unroll
        for (int k = 0; k < kTiles; k++) {
            const int mt = wg + k * NWG;
            if (mt >= slabs) continue;
            if (FRAG_RING) {
                /* Chunk 0 reads slot 1 too: the launcher put h0 there in this order
                 * (ring_from_h0), or nothing is read without h0. */
                float s_in[32];
                frag_load(s_in, ring_in, mt, c == 0 && !h0);
                frag_to_smem<T>(ss, s_in, mt);
                /* Before the ring stores: the proxy fence then has no global
                 * store of this thread to wait for. */
                fence_async_smem();
#pragma unroll
                for (int e = 0; e < 32; e++) st[k][e] += chunk_decay * s_in[e];
                if (last_chunk) {
#pragma unroll
                    for (int e = 0; e < 32; e++) {
                        int pi, ni;
                        frag_pn(mt, e, &pi, &ni);
                        if (pi < a.P && ni < a.N) final_state[pi * a.N + ni] = st[k][e];
                    }
                } else {
                    frag_store(ring_out, st[k], mt);
                }
                continue;
            }
            const float *prev = c == 0 ? h0 : a.ring + (bh * 2 + ((c - 1) & 1)) * a.ring_slot;
            float *next = last_chunk ? final_state : ring_out;
#pragma unroll
            for (int e = 0; e < 32; e++) {
                const int ni = mt * 64 + wq * 16 + g8 + (e & 2) * 4, pi = (e / 4) * 8 + t4 * 2 + (e & 1);
                const bool real = pi < a.P && ni < a.N;
                const float s_in = real && prev ? __ldcg(prev + pi * a.N + ni) : 0.f;
                *reinterpret_cast<T *>(Ss + mt * 64 * 128 + sw128_offset(pi, ni % 64)) = from_float<T>(s_in);
                if (real) next[pi * a.N + ni] = chunk_decay * s_in + st[k][e];
            }
        }
        if (!FRAG_RING) fence_async_smem();
        __syncthreads();  // the block's ring writes happen before thread 0's release below

        /* ---- 3. Outputs of rows 64·wg..: the state term, then the causal tiles. */
        float yacc[32] = {};
        state_term_issue<T, NWG, SLABS>(yacc, cs, ss);
        /* Chunk c's end state is in the ring: thread 0 publishes it while its
         * warpgroup's product runs (the release waits for the block's writes,
         * ordered before it by the barrier above). */
        if (tid == 0 && !last_chunk) store_release(a.published + bh, c + 1);
        __syncwarp();
        wgmma_wait<0>();
        wgmma_touch(yacc);
        if (hh + 1 < heads) {
            /* The state's region is read: x of the next head goes there. */
            __syncthreads();
            load_swizzled<Q, 1>(Ss, x0 + (hh + 1) * a.P, x_row, len, (int)a.P, a.P % 8 == 0);
            asm volatile("cp.async.commit_group;");
        }
        causal_terms<T, NWG, SLABS>(yacc, cs, bs, xs, cum2, dts, vdt);

        /* ---- 4. y = acc + D x, then y *= silu(z): columns pi, pi + 1 of rows row0, row0 + 8. */
        if constexpr (TMA) {
            __syncthreads();  // every warpgroup's P·x has read x: y goes in its place
            y_out_tma<T, true>(yacc, Xs, Xs, a, &maps.y, b, h, t0, len);
        } else {
            const int row0 = wg * 64 + wq * 16 + g8;  // this thread's rows: row0 and row0 + 8
            const float D_head = a.D && !a.D_per_channel ? a.D[h] : 0.f;
            const T *zt = static_cast<const T *>(a.z);
            T *y = static_cast<T *>(a.y);
            const bool pairs = a.P % 2 == 0;  // y rows then start at even offsets: 4-byte pair stores
#pragma unroll
            for (int half_row = 0; half_row < 2; half_row++) {
                const int i = row0 + half_row * 8;
                if (i >= len) continue;
                const int64_t row = ((b * a.L + t0 + i) * a.H + h) * a.P;  // offset of y[b, t0+i, h, 0]
#pragma unroll
                for (int nt = 0; nt < 8; nt++) {
                    const int pi = nt * 8 + t4 * 2;
                    if (pi >= a.P) continue;
                    const int ncol = pairs ? 2 : min(2, (int)a.P - pi);
                    const typename Pair<T>::type xv = *reinterpret_cast<const typename Pair<T>::type *>(Xs + sw128_offset(i, pi));
                    float v[2] = {yacc[nt * 4 + half_row * 2], yacc[nt * 4 + half_row * 2 + 1]};
                    const float xf[2] = {Pair<T>::lo(xv), Pair<T>::hi(xv)};
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        if (e >= ncol) continue;
                        // out = acc + x * D
                        if (a.D) v[e] += (a.D_per_channel ? a.D[h * a.P + pi + e] : D_head) * xf[e];
                        if (zt) {
                            // out = out * F.silu(z)
                            const float zv = to_float(zt[row + pi + e]);
                            v[e] *= zv / (1.f + __expf(-zv));
                        }
                    }
                    if (pairs) {
                        *reinterpret_cast<typename Pair<T>::type *>(y + row + pi) = Pair<T>::narrow(v[0], v[1]);
                    } else {
                        y[row + pi] = from_float<T>(v[0]);
                        if (ncol > 1) y[row + pi + 1] = from_float<T>(v[1]);
                    }
                }
            }
        }
        __syncthreads();  // x's region becomes the next head's state region; dt, cum rewritten
    }
}

/* h0 (b, h, p, N) into slot 1 of each (b, h) of the ring, where chunk 0 of
 * versions 9 and 10 reads its entering state, in their fragment order: float
 * i of a slot is element e = 4·((i / 4) % 1024 / 128) + i % 4 of thread
 * t = (i / 4) % 128 of the warpgroup holding n-tile i / 4096; zero past p, N. */
__global__ void ring_from_h0(float *ring, const float *h0, int64_t BH, int64_t P, int64_t N, int64_t slot) {
    const int64_t total = BH * slot;
    for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < total; k += (int64_t)gridDim.x * blockDim.x) {
        const int64_t bh = k / slot;
        const int i = (int)(k % slot), mt = i / 4096, t = (i / 4) % 128, e = 4 * ((i % 4096) / 512) + i % 4;
        const int lane = t % 32, ni = mt * 64 + (t / 32) * 16 + lane / 4 + (e & 2) * 4,
                  pi = (e / 4) * 8 + (lane % 4) * 2 + (e & 1);
        ring[(bh * 2 + 1) * slot + i] = pi < P && ni < N ? h0[(bh * P + pi) * N + ni] : 0.f;
    }
}

#endif
