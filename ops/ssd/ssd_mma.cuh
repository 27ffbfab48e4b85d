/* The tensor-core steps the fused SSD kernels of 05 (causal) and 06
 * (bidirectional) share, and 08's Mamba-3 chunk, on shared-memory 16-bit
 * tiles (F: __half by default, or __nv_bfloat16) and mma_sm80.cuh's
 * fragments: a chunk's own state xᵀ·diag(w)·B, one 16×16 tile of C·Bᵀ, a
 * 16×16 tile of the decay-weighted matrix times x, and the output epilogue.
 * FULL: N and p padded are exactly SSD_MMA_NMAX and SSD_MMA_PMAX, so every
 * tile bound is a compile-time constant. */
#ifndef SSD_MMA_CUH
#define SSD_MMA_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include "mamba2_io.cuh"
#include "mma_sm80.cuh"
#include "mufu.cuh"

/* Limits of the register tiles: N <= 128 (8 k-steps of 16), p <= 64. */
#define SSD_MMA_NMAX 128
#define SSD_MMA_PMAX 64

/* N or p rounded up to the 16 of an mma tile (the launchers' Np, Pp). */
static inline int round16(int64_t v) { return (int)((v + 15) / 16 * 16); }

/* The n16-blocks of N each warp of WARPS holds of a (p x N) chunk state:
 * warp w owns p-tile w % 4 and the n16-blocks w / 4 + (WARPS / 4)·k. */
template <int WARPS>
struct ChunkStateBlocks {
    static constexpr int n = SSD_MMA_NMAX / 16 / (WARPS / 4);
};

/* st += xᵀ·diag(wts)·B over the chunk, a (Pp x Q)·(Q x Np) product: st[2k],
 * st[2k+1] are the two n8-tiles of this warp's n16-block k. xs_b, bs_a: this
 * lane's ldmatrix row addresses in x (row pitch PS) and B (row pitch NS);
 * wts (Q,) fp16 the weight of each step.
 * states = tl.dot(x, b) with x scaled by dt * exp(dA_cs_last - dA_cs) (_chunk_state_fwd_kernel) */
template <bool FULL, int WARPS, typename F = __half>
static __device__ __forceinline__ void accumulate_chunk_state(float (&st)[2 * ChunkStateBlocks<WARPS>::n][4],
                                                              uint32_t xs_b, uint32_t bs_a, const F *wts,
                                                              int Q, int NS, int PS, int Np, int Pp) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, mp = warp % 4;
    if (mp * 16 >= Pp) return;
    for (int j0 = 0; j0 < Q; j0 += 16) {
        uint32_t xa[4];  // xᵀ tile (p 16 x j 16), transposed on load: A operand
        ldsm_x4_trans(xa, xs_b + (j0 * PS + mp * 16) * 2);
        /* scale column j of xᵀ by wts_j: this thread's k are 2(lane%4)+{0,1} and +8 */
        using F2 = typename Pair<F>::type;
        const F2 w_lo = *reinterpret_cast<const F2 *>(wts + j0 + (lane % 4) * 2);
        const F2 w_hi = *reinterpret_cast<const F2 *>(wts + j0 + 8 + (lane % 4) * 2);
        F2 *xh = reinterpret_cast<F2 *>(xa);
        xh[0] = __hmul2(xh[0], w_lo);
        xh[1] = __hmul2(xh[1], w_lo);
        xh[2] = __hmul2(xh[2], w_hi);
        xh[3] = __hmul2(xh[3], w_hi);
#pragma unroll
        for (int k = 0; k < ChunkStateBlocks<WARPS>::n; k++) {
            const int n0 = (warp / 4 + (WARPS / 4) * k) * 16;
            if (!FULL && n0 >= Np) continue;
            uint32_t bb[4];  // B rows j (mma k) x n (mma n), transposed on load: two n8-tiles
            ldsm_x4_trans(bb, bs_a + (j0 * NS + n0) * 2);
            mma_16816_of<F>(st[2 * k], xa, bb[0], bb[1]);
            mma_16816_of<F>(st[2 * k + 1], xa, bb[2], bb[3]);
        }
    }
}

/* s = one 16×16 tile of C·Bᵀ: the 16 C rows in cf (A operands, all of N)
 * against B rows j0..j0+15 (bs_b: this lane's ldmatrix row address in B,
 * row pitch NS). s[0..3]: columns j0..7, s[4..7]: j0+8..15, each as an mma
 * accumulator (rows lane/4 and +8, columns 2(lane%4) and +1).
 * cb = tl.dot(C, B) */
template <bool FULL, typename F = __half>
static __device__ __forceinline__ void cb_tile(float (&s)[8], const uint32_t (&cf)[SSD_MMA_NMAX / 16][4],
                                               uint32_t bs_b, int j0, int NS, int Np) {
    float s0[2][4] = {}, s1[2][4] = {};  // columns j0..7, j0+8..15; even and odd k-steps
#pragma unroll
    for (int kk = 0; kk < SSD_MMA_NMAX / 16; kk++) {
        if (!FULL && kk * 16 >= Np) continue;
        uint32_t bb[4];  // B rows j (mma n) x n (mma k)
        ldsm_x4(bb, bs_b + (j0 * NS + kk * 16) * 2);
        mma_16816_of<F>(s0[kk & 1], cf[kk], bb[0], bb[1]);
        mma_16816_of<F>(s1[kk & 1], cf[kk], bb[2], bb[3]);
    }
#pragma unroll
    for (int e = 0; e < 4; e++) {
        s[e] = s0[0][e] + s0[1][e];
        s[e + 4] = s1[0][e] + s1[1][e];
    }
}

/* acc (16 x Pp) += p (16×16, rounded to F) · x rows j0..j0+15 (xs_a: this
 * lane's ldmatrix row address in x, row pitch PS); p laid out as cb_tile's s.
 * acc += tl.dot(cb, x) */
template <bool FULL, typename F = __half>
static __device__ __forceinline__ void px_tile(float (&acc)[SSD_MMA_PMAX / 8][4], const float (&p)[8],
                                               uint32_t xs_a, int j0, int PS, int Pp) {
    const uint32_t pa[4] = {pack_pair<F>(p[0], p[1]), pack_pair<F>(p[2], p[3]), pack_pair<F>(p[4], p[5]),
                            pack_pair<F>(p[6], p[7])};
#pragma unroll
    for (int np = 0; np < SSD_MMA_PMAX / 16; np++) {
        if (!FULL && np * 16 >= Pp) continue;
        uint32_t xb[4];  // x rows j (mma k) x p (mma n), transposed on load
        ldsm_x4_trans(xb, xs_a + (j0 * PS + np * 16) * 2);
        mma_16816_of<F>(acc[2 * np], pa, xb[0], xb[1]);
        mma_16816_of<F>(acc[2 * np + 1], pa, xb[2], xb[3]);
    }
}

/* y = acc + D·x, then y *= silu(z), stored as F, for this thread's rows
 * row0 and row0 + 8 of a 16-row tile (those below len) and its two columns of
 * each n8-tile. Row i of the chunk is y[at + i·stride .. + p); x_i is read
 * from shared memory (Xs, row pitch PS) as given; D is (h,) or (h, p). z is
 * read at y's offsets, or, given Zs, from shared memory (row pitch PS). */
template <bool FULL, typename F = __half>
static __device__ __forceinline__ void store_y_tile(const float (&acc)[SSD_MMA_PMAX / 8][4], int row0, int len,
                                                    F *y, const F *z, int64_t at, int64_t stride,
                                                    const F *Xs, int PS, const float *D, bool D_per_channel,
                                                    int64_t h, int64_t P, const F *Zs = nullptr) {
    const int lane = threadIdx.x % 32;
    const bool pairs = P % 2 == 0;  // y rows then start at even offsets: 4-byte half2 stores
    const float D_head = D && !D_per_channel ? D[h] : 0.f;
#pragma unroll
    for (int half_row = 0; half_row < 2; half_row++) {
        const int i = row0 + half_row * 8;
        if (i >= len) continue;
        const int64_t row = at + i * stride;  // offset of y[b, t0+i, h, 0]
        const F *zrow = Zs ? Zs + i * PS : z ? z + row : nullptr;
        F *yrow = y + row;
#pragma unroll
        for (int nt = 0; nt < SSD_MMA_PMAX / 8; nt++) {
            const int pi = nt * 8 + (lane % 4) * 2;
            if (!FULL && pi >= P) continue;
            float v[2] = {acc[nt][2 * half_row], acc[nt][2 * half_row + 1]};
            const int ncol = pairs ? 2 : min(2, (int)P - pi);
#pragma unroll
            for (int e = 0; e < 2; e++) {
                if (e >= ncol) continue;
                // out = acc + x * D
                if (D) v[e] += (D_per_channel ? D[h * P + pi + e] : D_head) * to_float(Xs[i * PS + pi + e]);
                if (zrow) {
                    // out = out * F.silu(z)
                    const float zv = to_float(zrow[pi + e]);
                    v[e] *= silu_div(zv);
                }
            }
            if (pairs) {
                store_pair(yrow + pi, v[0], v[1]);
            } else {
                store_out(yrow + pi, v[0]);
                if (ncol > 1) store_out(yrow + pi + 1, v[1]);
            }
        }
    }
}

#endif
