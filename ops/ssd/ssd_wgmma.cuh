/* The fused SSD on Hopper's warpgroup matrix product (sm_90a): what its
 * kernels share. 05_ssd_mamba2's versions 8-13 (wgmma_kernel.cuh), 14-15
 * (wgmma_walk.cuh) and 18-19 (ssd_wgmma_ws.cuh) and 06_bidirectional's versions
 * 7-8 (wgmma.cu) and 9-10 (wgmma_ws.cu, on ssd_wgmma_ws.cuh): their
 * arguments and tensor maps, 16-bit pairs, the pieces of a chunk (decays,
 * state product, state fragments, causal terms, y out), and the host's
 * counters and segments of the walks. */
#ifndef SSD_WGMMA_CUH
#define SSD_WGMMA_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include "launch.cuh"
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
    float *final_state;                // (b, h, p, N) fp32 (06's walks: NULL)
    float *ring;                       // (b, h, 2, p, N) fp32: chunk c's end state in slot c % 2
                                       // (versions 14-15: (segments, b, h, 2, slot), below; 18-21: (segments, b, h, slot))
    int *published;                    // (b, h): how many chunks (14-15: segments) have their end state out
                                       // (18-21: (segments, b, h), 1 once the segment's state is out)
    int *ticket;                       // next work item: items go out in chunk-major order
    int64_t batch, L, H, P, G, N;
    int64_t ring_slot;                 // floats a ring slot holds
    int nchunks, heads_per_block;      // heads_per_block divides H / G
    int segments, seg_chunks;          // versions 14-15: a (b, h) walked in segments of seg_chunks chunks
    const int32_t *cu_seqlens;         // (nseq + 1,) int32, a packed row's sequences (versions 14-15), or NULL
    float *chunk_states;               // (Σ ceil(length / chunk), h, p, N) fp32: the state after each chunk
    int64_t nseq, problem_chunk;       // packed: the sequences, and the chunk of chunk_states
    const int *walk_plan;              // packed, the walks' order: (nseq,) the sequences, longest first (versions
                                       // 14-15); (groups, WS_GROUP_INTS) segments of them (22-23, ssd_wgmma_ws.cuh)
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

/* The pair (a, b) as bf16 hi and lo pairs: hi = bf16(v) and lo =
 * bf16(v − hi), both rounded to nearest (v − hi is exact in fp32), so
 * |v − hi − lo| <= 2^-17·|v|: 17 of fp32's 24 bits; six instructions a pair
 * (cvt.rn.bf16x2 packs its first operand in the high half). */
static __device__ __forceinline__ void split_pair(float a, float b, uint32_t *hi, uint32_t *lo) {
    uint32_t h;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(h) : "f"(b), "f"(a));
    const float la = a - __uint_as_float(h << 16), lb = b - __uint_as_float(h & 0xffff0000u);
    *hi = h;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(*lo) : "f"(lb), "f"(la));
}
/* A bf16 pair as two floats. */
static __device__ __forceinline__ float2 unpack_bf16(uint32_t v) {
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(&v));
}

/* threadIdx.x, read where it is used: what a helper derives from it (lane,
 * fragment rows, shared-memory offsets) is then computed afresh in each
 * chunk of version 14's loop instead of being kept in registers across it. */
static __device__ __forceinline__ int thread_index() {
    int t;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(t));
    return t;
}

/* ---- The pieces of a chunk, shared by the kernel of versions 8-13
 * (wgmma_kernel.cuh) and the walking kernels of versions 14-15
 * (wgmma_walk.cuh) and 18-19 (ssd_wgmma_ws.cuh). ---- */

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
 * registers; x is read MN-major (its rows are the k of the product).
 * add: st holds a state already, and the product is added to it. */
template <typename T, int NWG, int SLABS>
static __device__ __forceinline__ void state_product(float (&st)[state_tiles(NWG)][32], uint32_t bs, uint32_t xs,
                                                     const T *wts, bool add = false) {
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
                wgmma_64x64_rs<T, 1>(st[k], af[k2], sw128_desc(xs + kk * 2048), add || kk > 0);
            }
            wgmma_commit();
            wgmma_wait<0>();
            wgmma_touch(st[k]);
        }
    }
}

/* Phase 2's start, chunk c of (b, h) bh: thread 0 waits until chunk c − 1
 * has published its end state, then the block; and where the state enters
 * and leaves: chunk c − 1's ring slot (chunk 0: slot 1, where the launcher
 * puts h0, or nothing without it), chunk c's slot, and for the last chunk
 * final_state. */
struct RingStep {
    const float *h0;           // (p, N) fp32 of bh, or NULL
    const float *in;           // chunk c − 1's slot
    float *out;                // chunk c's slot
    float *final_state;        // (p, N) fp32 of bh
    bool last;                 // chunk c is the last: its state goes to final_state
};
static __device__ __forceinline__ RingStep ring_wait(const WgmmaArgs &a, int64_t bh, int c) {
    if (thread_index() == 0 && c > 0)
        while (load_acquire(a.published + bh) < c) __nanosleep(32);
    __syncthreads();
    RingStep r;
    r.h0 = a.h0 ? a.h0 + bh * a.P * a.N : nullptr;
    r.in = a.ring + (bh * 2 + ((c + 1) & 1)) * a.ring_slot;
    r.out = a.ring + (bh * 2 + (c & 1)) * a.ring_slot;
    r.final_state = a.final_state + bh * a.P * a.N;
    r.last = c == a.nchunks - 1;
    return r;
}

/* A state in the accumulators' order: n-tile mt's 32 values of this thread
 * sit at float4 number (mt·8 + e/4)·128 + thread in warpgroup of a slot, so
 * that a warp's 16-byte accesses are contiguous. zero: read nothing, all 0.
 * NE 16 (version 21, a warpgroup's 32 columns of p): values 0-15 of the 32. */
template <int NE>
static __device__ __forceinline__ void frag_load(float (&v)[NE], const float *slot, int mt, bool zero) {
    const int64_t at = (int64_t)(mt * 8 * 128 + thread_index() % 128) * 4;
#pragma unroll
    for (int e = 0; e < NE; e += 4) {
        const float4 f = zero ? make_float4(0.f, 0.f, 0.f, 0.f) : __ldcg(reinterpret_cast<const float4 *>(slot + at + e * 128));
        v[e] = f.x; v[e + 1] = f.y; v[e + 2] = f.z; v[e + 3] = f.w;
    }
}
template <int NE>
static __device__ __forceinline__ void frag_store(float *slot, const float (&v)[NE], int mt) {
    const int64_t at = (int64_t)(mt * 8 * 128 + thread_index() % 128) * 4;
#pragma unroll
    for (int e = 0; e < NE; e += 4)
        __stcg(reinterpret_cast<float4 *>(slot + at + e * 128), make_float4(v[e], v[e + 1], v[e + 2], v[e + 3]));
}
/* Element e of n-tile mt of this thread is state (pi, ni). */
static __device__ __forceinline__ void frag_pn(int mt, int e, int *pi, int *ni) {
    const int lane = thread_index() % 32, wq = (thread_index() / 32) % 4;
    *ni = mt * 64 + wq * 16 + lane / 4 + (e & 2) * 4;
    *pi = (e / 4) * 8 + (lane % 4) * 2 + (e & 1);
}
/* n-tile mt of the chunk's end state, S_out = decay·S_in + S_local (st
 * holds S_local and is left holding S_out), into chunk c's ring slot, or
 * for the last chunk into final_state (p, N) rows. */
static __device__ __forceinline__ void frag_pass(float (&st)[32], const float (&s_in)[32], float decay,
                                                 const RingStep &r, int mt, int64_t P, int64_t N) {
#pragma unroll
    for (int e = 0; e < 32; e++) st[e] += decay * s_in[e];
    if (r.last) {
#pragma unroll
        for (int e = 0; e < 32; e++) {
            int pi, ni;
            frag_pn(mt, e, &pi, &ni);
            if (pi < P && ni < N) r.final_state[pi * N + ni] = st[e];
        }
    } else {
        frag_store(r.out, st, mt);
    }
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

/* f(i, pi, acc0, acc1) for each pair of y accumulators this thread holds
 * (64-row tile layout): rows row0 and row0 + 8 below len, columns pi and
 * pi + 1 for pi < P. */
template <typename F>
static __device__ __forceinline__ void for_each_y_pair(const float (&yacc)[32], int row0, int len, int64_t P, F f) {
    const int t4 = thread_index() % 4;
#pragma unroll
    for (int half_row = 0; half_row < 2; half_row++) {
        const int i = row0 + half_row * 8;
        if (i >= len) continue;
#pragma unroll
        for (int nt = 0; nt < 8; nt++) {
            const int pi = nt * 8 + t4 * 2;
            if (pi >= P) continue;
            f(i, pi, yacc[nt * 4 + half_row * 2], yacc[nt * 4 + half_row * 2 + 1]);
        }
    }
}

/* D of column pi of head h (0 past p, or without D). */
static __device__ __forceinline__ float D_of_column(const WgmmaArgs &a, int64_t h, float D_head, int pi) {
    return !a.D ? 0.f : !a.D_per_channel ? D_head : pi < a.P ? a.D[h * a.P + pi] : 0.f;
}

/* Phase 4: y = acc + D·x (x read from Xs), times silu(z), as 16-bit rows
 * into Ys (swizzled as x), then one bulk tensor copy a warpgroup to y,
 * waited for until it has read Ys. D_IN_REGS: D of the thread's 16 columns
 * read once; CLIP: a packed row's last chunk of a sequence (below). */
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
                v[e] *= silu_div(zv);
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
    named_barrier_sync<128>(1 + wg);  // this warpgroup's rows are written
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

/* ---- Host side: what the launchers of 05 (wgmma.cu) and 06 (wgmma.cu) share. ---- */

/* The kernels' chunk: 128, or 64 where the problem's chunk is 64 or less
 * (the outputs do not depend on the chunk, only the rounding of sums). */
static inline int wgmma_chunk(const SsdShape *s) { return s->chunk >= 128 ? 128 : 64; }
/* N in slabs of 64 columns. */
static inline int wgmma_slabs(const SsdShape *s) { return (int)ceil_div(s->dstate, 64); }

/* Why the wgmma kernels cannot run s, or NULL: the tiles' limits, sm_90a
 * code (SSD_SM90A, defined where the including file is built for it) and a
 * device of compute capability 9.0; with tma, also the bulk copies' 16-byte
 * row steps and 32-bit coordinates. */
static inline const char *wgmma_unsupported(const SsdShape *s, bool tma) {
#ifndef SSD_SM90A
    (void)s;
    (void)tma;
    return "built without sm_90a code (wgmma): build with CUDA_ARCH=sm_90";
#else
    if (s->dstate > WG_NMAX) return "shared-memory tiles hold N <= 128";
    if (s->headdim > WG_PMAX) return "shared-memory tiles hold p <= 64";
    int dev = 0, major = 9, minor = 0;
    if (cudaGetDevice(&dev) == cudaSuccess) {
        cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
        cuda_check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    } else {
        (void)cudaGetLastError();
    }
    if (major != 9 || minor != 0) return "wgmma code is built for sm_90a: the device is not compute capability 9.0";
    if (!tma) return NULL;
    if (s->headdim % 8 != 0 || s->dstate % 8 != 0)
        return "bulk tensor copies step between rows in multiples of 16 bytes: p and N multiples of 8";
    if (s->seqlen > INT_MAX || s->batch > INT_MAX) return "bulk tensor copy coordinates are 32-bit: L, b < 2^31";
    return NULL;
#endif
}

/* `flags` int flags and the ticket, rounded up so that what follows them
 * starts on 256 bytes. */
static inline size_t counter_bytes(int64_t flags) { return ((size_t)(flags + 1) * sizeof(int) + 255) / 256 * 256; }

/* The places the GPU has for walking blocks (a place: one block at a time), per_sm an SM. */
static inline int64_t walk_places(int per_sm) { return per_sm * (int64_t)sm_count(); }

/* The segments of each (b, h)'s walk in chunks of Q (05's versions 14-15
 * and 18-21, 06's 9-10). As many as fill the places the GPU has for blocks
 * (per_sm an SM) when there are fewer (b, h) than places, at most one a
 * chunk; then no segment is left empty. */
static inline void walk_segments(const SsdShape *s, int Q, int per_sm, int *segments, int *seg_chunks) {
    const int64_t nchunks = ceil_div(s->seqlen, Q);
    const int64_t places = walk_places(per_sm), bh = s->batch * s->heads;
    const int64_t want = places / bh < 1 ? 1 : places / bh > nchunks ? nchunks : places / bh;
    *seg_chunks = (int)ceil_div(nchunks, want);
    *segments = (int)ceil_div(nchunks, *seg_chunks);
}

/* Tensor maps of a 16-bit (b, L, h, p) tensor (x, y, z) and a (b, L, g, N)
 * one (B, C), strides in bytes; a box is `rows` steps by 64 columns of one
 * head or group. */
static inline CUtensorMap wgmma_map_bhp(const void *base, const SsdShape *s, bool bf16, int rows) {
    const uint64_t e = 2;  // bytes an element
    const uint64_t dims[4] = {(uint64_t)s->headdim, (uint64_t)s->heads, (uint64_t)s->seqlen, (uint64_t)s->batch};
    const uint64_t strides[3] = {e * s->headdim, e * s->headdim * s->heads, e * s->headdim * s->heads * s->seqlen};
    const uint32_t box[4] = {64, 1, (uint32_t)rows, 1};
    return tma_map_16bit_4d(base, bf16, dims, strides, box);
}
static inline CUtensorMap wgmma_map_bgn(const void *base, const SsdShape *s, bool bf16, int rows) {
    const uint64_t e = 2;
    const uint64_t dims[4] = {(uint64_t)s->dstate, (uint64_t)s->groups, (uint64_t)s->seqlen, (uint64_t)s->batch};
    const uint64_t strides[3] = {e * s->dstate, e * s->dstate * s->groups, e * s->dstate * s->groups * s->seqlen};
    const uint32_t box[4] = {64, 1, (uint32_t)rows, 1};
    return tma_map_16bit_4d(base, bf16, dims, strides, box);
}

#endif
