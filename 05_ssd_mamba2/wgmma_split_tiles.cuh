/* 05_ssd_mamba2, GPU: fp32 operands as bf16 hi and lo tiles in shared
 * memory, the pieces versions 16-17 (wgmma_split.cu) and 20-21
 * (wgmma_ws_split.cuh) share (sm_90a). An fp32 value a is held as
 * a_hi = bf16(a) and a_lo = bf16(a − a_hi) (split_pair); a product of two
 * split operands is three bf16 products, hi·hi + hi·lo + lo·hi. A split
 * tile is its hi tile, then its lo tile, each swizzled as wgmma reads it. */
#ifndef WGMMA_SPLIT_TILES_CUH
#define WGMMA_SPLIT_TILES_CUH

#include "ssd_wgmma_ws.cuh"

using bf16 = __nv_bfloat16;

/* Four floats as bf16 hi and lo pairs (split_pair): hi at tile + at, lo
 * at tile + lo + at. */
static __device__ __forceinline__ void store_split4(unsigned char *tile, uint32_t at, uint32_t lo, float4 v) {
    uint2 hi_pairs, lo_pairs;
    split_pair(v.x, v.y, &hi_pairs.x, &lo_pairs.x);
    split_pair(v.z, v.w, &hi_pairs.y, &lo_pairs.y);
    *reinterpret_cast<uint2 *>(tile + at) = hi_pairs;
    *reinterpret_cast<uint2 *>(tile + lo + at) = lo_pairs;
}

/* The fp32 pair at byte offset `at` of a split tile, read back as its hi
 * pair (at tile + at) plus its lo pair (WS_TILE further). */
static __device__ __forceinline__ float2 load_split2(const unsigned char *tile, uint32_t at) {
    const float2 hi = unpack_bf16(*reinterpret_cast<const uint32_t *>(tile + at));
    const float2 lo = unpack_bf16(*reinterpret_cast<const uint32_t *>(tile + WS_TILE + at));
    return make_float2(hi.x + lo.x, hi.y + lo.y);
}

/* A (64, COLS) fp32 tile, as a bulk copy lands it (rows of COLS floats), is
 * rewritten in the same bytes as COLS/64 swizzled bf16 hi slabs of 64
 * columns, then as many lo slabs: each thread reads its float4s, the block
 * waits, each thread writes their halves. */
template <int COLS>
static __device__ __forceinline__ void split_tile(unsigned char *tile) {
    constexpr int C4 = COLS / 4, V = 64 * C4 / 128;  // float4s a row, and a thread's
    float4 v[V];
#pragma unroll
    for (int k = 0; k < V; k++) v[k] = reinterpret_cast<const float4 *>(tile)[threadIdx.x + 128 * k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < V; k++) {
        const int i = threadIdx.x + 128 * k, r = i / C4, col = (i % C4) * 4;
        store_split4(tile, (col / 64) * WS_TILE + sw128_offset(r, col % 64), (COLS / 64) * WS_TILE, v[k]);
    }
}

/* Phase 1, S_localᵀ (n x p) = Σ_j (w_j B_j)ᵀ x_j, n-tile mt into st[mt], as
 * version 12's state_product, with the A fragments rebuilt in fp32 from B's
 * hi and lo, scaled by w_j in fp32 and split again. */
template <int SLABS>
static __device__ __forceinline__ void state_product_split(float (&st)[SLABS][32], uint32_t bs, uint32_t xs,
                                                           const float *wts) {
    const int wq = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int t4 = lane % 4, q = lane / 8, r8 = lane % 8;  // ldmatrix: lane gives row r8 of matrix q
#pragma unroll
    for (int mt = 0; mt < SLABS; mt++) {
#pragma unroll
        for (int half = 0; half < 2; half++) {
            uint32_t ah[2][4], al[2][4];  // (w ∘ B)ᵀ fragments, hi and lo: rows n, columns j
#pragma unroll
            for (int k2 = 0; k2 < 2; k2++) {
                const int kk = half * 2 + k2;
                const uint32_t at = mt * WS_TILE + sw128_offset(kk * 16 + (q >> 1) * 8 + r8, 16 * wq + (q & 1) * 8);
                uint32_t bh[4], bl[4];
                ldsm_x4_trans(bh, bs + at);
                ldsm_x4_trans(bl, bs + SLABS * WS_TILE + at);
                /* Registers 0, 1 hold columns j = 16kk + 2t4 (+1); 2, 3 the same + 8. */
                const float2 w_lo = *reinterpret_cast<const float2 *>(wts + kk * 16 + t4 * 2);
                const float2 w_hi = *reinterpret_cast<const float2 *>(wts + kk * 16 + 8 + t4 * 2);
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    const float2 h = unpack_bf16(bh[r]), l = unpack_bf16(bl[r]), w = r < 2 ? w_lo : w_hi;
                    split_pair((h.x + l.x) * w.x, (h.y + l.y) * w.y, &ah[k2][r], &al[k2][r]);
                }
            }
            wgmma_fence();
#pragma unroll
            for (int k2 = 0; k2 < 2; k2++) {
                const int kk = half * 2 + k2;
                const uint64_t x_hi = sw128_desc(xs + kk * 2048), x_lo = sw128_desc(xs + WS_TILE + kk * 2048);
                wgmma_64x64_rs<bf16, 1>(st[mt], ah[k2], x_hi, kk > 0);
                wgmma_64x64_rs<bf16, 1>(st[mt], ah[k2], x_lo, 1);
                wgmma_64x64_rs<bf16, 1>(st[mt], al[k2], x_hi, 1);
            }
            wgmma_commit();
            wgmma_wait<0>();
            wgmma_touch(st[mt]);
        }
    }
}

/* One n-tile of the entering state (NE accumulator-order values: 32 for a
 * block's one warpgroup, or 16 for the 32 rows of p from p_first of one of
 * version 21's two) to shared memory as its bf16 hi tile
 * at ss and lo tile at ss_lo, (p, n) rows by stmatrix, as frag_to_smem does. */
template <int NE>
static __device__ __forceinline__ void state_to_smem_split(uint32_t ss, uint32_t ss_lo, const float (&s)[NE],
                                                           int p_first = 0) {
    const int lane = threadIdx.x % 32, wq = ws_frag_warp<NE>(threadIdx.x), q = lane / 8, r8 = lane % 8;
#pragma unroll
    for (int i = 0; i < NE / 4; i += 2) {
        uint32_t hi[4], lo[4];
#pragma unroll
        for (int m = 0; m < 4; m++) split_pair(s[4 * i + 2 * m], s[4 * i + 2 * m + 1], &hi[m], &lo[m]);
        const uint32_t at = sw128_offset(p_first + 8 * (i + (q >> 1)) + r8, 16 * wq + 8 * (q & 1));
        stsm_x4_trans(ss + at, hi);
        stsm_x4_trans(ss_lo + at, lo);
    }
}

/* The three products of a K-major pair of split tiles: d (+)= A·Bᵀ over 16 of
 * k, A's hi tile at a (lo a_lo bytes on), B's at b (lo b_lo bytes on). */
static __device__ __forceinline__ void wgmma_split_ss(float (&d)[32], uint32_t a, uint32_t a_lo, uint32_t b,
                                                      uint32_t b_lo, int accumulate) {
    wgmma_64x64_ss<bf16>(d, sw128_desc(a), sw128_desc(b), accumulate);
    wgmma_64x64_ss<bf16>(d, sw128_desc(a), sw128_desc(b + b_lo), 1);
    wgmma_64x64_ss<bf16>(d, sw128_desc(a + a_lo), sw128_desc(b), 1);
}

/* The tensor maps of versions 16, 17 and 20 (version 20 uses B and C). */
struct SplitMaps {
    CUtensorMap x;           // (b, L, h, p) fp32, boxes of 64 steps x 64, dense rows
    CUtensorMap B[2], C[2];  // 16: [0] (b, L, g, N) fp32, boxes of 64 steps x 64·SLABS, dense rows;
                             // 17: hi [0] and lo [1] (b, L, g, 64·SLABS) bf16, boxes 64 x 64 swizzled
};

#endif  // WGMMA_SPLIT_TILES_CUH
