/* 05_ssd_mamba2, GPU, versions 18-19 (and 20-21, 06's 9-10): a chunk of 64 on
 * the consumer warpgroup (sm_90a). Its products are issued together and
 * waited for twice; P is formed from C·Bᵀ in registers; y = acc + D·x,
 * times silu(z), goes to Ys for the storer (ws_consume, at the end). */
#ifndef SSD_WGMMA_WS_CHUNK_CUH
#define SSD_WGMMA_WS_CHUNK_CUH

#include "ssd_wgmma_ws_ring.cuh"

/* Element e of n-tile mt of this thread is state (pi, ni) =
 * (p0 + (e / 4)·8 + (e & 1), n0 + (e & 2)·4), p0 = 2·(lane % 4),
 * n0 = mt·64 + 16·wq + lane / 4 (frag_pn): its offset in a (p, N) row
 * block is e's own multiple of N plus this thread's. The loops below run
 * once a walk, so they are written to be short: 32-bit offsets, and the
 * bounds of p and N tested per element only where the tile reaches past
 * them (as straight-line code with 64-bit indices and a test of h0 per
 * element they came to 1,500 instructions a thread, each fetched once into
 * the instruction cache, and cost a one-chunk walk as much as ten chunks). */
static __device__ __forceinline__ int ws_frag_offset(int e, int N) { return ((e / 4) * 8 + (e & 1)) * N + (e & 2) * 4; }
/* By rows (WHOLE, below): a thread's row r of NE / 2 holds its elements
 * ws_row_elem(r) at column n0 and ws_row_elem(r) + 2 at n0 + 8, the row
 * ws_row_offset(r, N) floats after the thread's first. */
static __device__ __forceinline__ int ws_row_elem(int r) { return (r / 2) * 4 + r % 2; }
static __device__ __forceinline__ int ws_row_offset(int r, int N) { return ((r / 2) * 8 + r % 2) * N; }
/* wq of thread tid: its warp in its warpgroup, where a thread holds NE
 * values an n-tile (NE 32: the one computing warpgroup, threads 0-127; NE
 * 16: version 21's two, threads 0-255). */
template <int NE, typename I>
static __device__ __forceinline__ I ws_frag_warp(I tid) { return NE == 32 ? tid / 32 : (tid / 32) % 4; }

/* A state held in fragments, its slabs n-tiles, to row `row` of base, rows
 * of (p, N) fp32 (final_state's, or chunk_states'). The loop over n-tiles
 * takes slabs at run time and picks the tile by a select, so that it stays
 * rolled: one copy of the 32 stores to fetch, not two.
 * WHOLE (versions 22-23, which store a state every few chunks): a thread
 * whose elements all lie inside p and N stores them by rows, elements e and
 * e + 2 of a row 8 floats apart, with no test an element; written as one
 * loop with the test in it, the compiler turns each store into a predicated
 * one with its own 64-bit address and bound tests, some 15 instructions a
 * store. */
template <int NE, bool WHOLE = false>
static __device__ __forceinline__ void ws_state_store(const float (&st)[2][NE], const WgmmaArgs &a, float *base,
                                                      int64_t row, int slabs, int p_first = 0) {
    const int P = (int)a.P, N = (int)a.N, lane = thread_index() % 32, p0 = p_first + 2 * (lane % 4);
    for (int mt = 0; mt < slabs; mt++) {
        const int n0 = mt * 64 + 16 * ws_frag_warp<NE>(thread_index()) + lane / 4;
        float *dst = base + row * a.P * a.N + p0 * N + n0;
        const bool inside = p0 + (NE / 4 - 1) * 8 + 1 < P && n0 + 8 < N;
        if (WHOLE && inside) {
#pragma unroll
            for (int r = 0; r < NE / 2; r++) {
                const int e = ws_row_elem(r);
                float *at = dst + ws_row_offset(r, N);
                at[0] = mt == 0 ? st[0][e] : st[1][e];
                at[8] = mt == 0 ? st[0][e + 2] : st[1][e + 2];
            }
            continue;
        }
#pragma unroll
        for (int e = 0; e < NE; e++)
            if (inside || (p0 + (e / 4) * 8 + (e & 1) < P && n0 + (e & 2) * 4 < N))
                dst[ws_frag_offset(e, N)] = mt == 0 ? st[0][e] : st[1][e];
    }
}

/* What Ys holds when the consumers turn a chunk's accumulators into y:
 * nothing, z (y is gated by it), or the y the other direction left (06's
 * forward walk adds it; z, when given, is then read from device memory,
 * Ys being taken). */
enum { YS_EMPTY, YS_Z, YS_PARTIAL, YS_PARTIAL_Z };

/* y = acc + D·x (+ the partial y in Ys), times silu(z), as 16-bit pairs into
 * Ys in place (x's swizzled layout; rows past L leave by no copy). This step
 * sits between the chunk's two barriers, so it is short straight-line code:
 * x and Ys come by ldmatrix and y leaves by stmatrix, whose 8x8 matrices
 * hold pairs in the accumulator's layout (matrix m of group i: columns
 * 8·(2i + m / 2) .., rows row0 + 8·(m % 2)), four instructions for the
 * warp's 16 rows instead of 16 loads or stores a thread; D of each column
 * comes from Dcol, filled once a walk. With YS_PARTIAL_Z, z of the chunk's
 * row r, column p is at z[r·zstride + p], for r < len and p < P.
 * out = acc + x * D; out = out * F.silu(z) */
template <typename T, int YS>
static __device__ __forceinline__ void ws_y_to_smem(const float (&yacc)[32], uint32_t xs, uint32_t ys,
                                                    const float *Dcol, int row0, const T *z = nullptr,
                                                    int64_t zstride = 0, int len = 0, int P = 0) {
    using T2 = typename Pair<T>::type;
    const int lane = thread_index() % 32, t4 = lane % 4, q = lane / 8;
    const int row_q = row0 - lane / 4 + (q % 2) * 8 + lane % 8;  // the row whose address this lane gives
    uint32_t x4[4][4], ys4[4][4], y4[4][4];                    // group i, matrix m: one pair each
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const uint32_t at = sw128_offset(row_q, (2 * i + q / 2) * 8);
        ldsm_x4(x4[i], xs + at);
        if (YS != YS_EMPTY) ldsm_x4(ys4[i], ys + at);
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int m = 0; m < 4; m++) {
            const int nt = 2 * i + m / 2, e = nt * 4 + (m % 2) * 2;  // e: the pair's place in yacc
            const float2 d = *reinterpret_cast<const float2 *>(Dcol + nt * 8 + t4 * 2);
            const T2 x2 = *reinterpret_cast<const T2 *>(&x4[i][m]);
            float v0 = fmaf(d.x, Pair<T>::lo(x2), yacc[e]);
            float v1 = fmaf(d.y, Pair<T>::hi(x2), yacc[e + 1]);
            if (YS == YS_Z) {
                const T2 z2 = *reinterpret_cast<const T2 *>(&ys4[i][m]);
                v0 *= silu_fast(Pair<T>::lo(z2));
                v1 *= silu_fast(Pair<T>::hi(z2));
            }
            if (YS == YS_PARTIAL || YS == YS_PARTIAL_Z) {
                // y = y_fw + y_bw + x_og * D (y_bw with D·x in it, from the backward walk)
                const T2 yb2 = *reinterpret_cast<const T2 *>(&ys4[i][m]);
                v0 += Pair<T>::lo(yb2);
                v1 += Pair<T>::hi(yb2);
            }
            if (YS == YS_PARTIAL_Z) {
                const int r = row0 + (m % 2) * 8;
                if (r < len && nt * 8 < P) {  // P is a multiple of 8
                    const T2 z2 = *reinterpret_cast<const T2 *>(z + r * zstride + nt * 8 + t4 * 2);
                    v0 *= silu_fast(Pair<T>::lo(z2));
                    v1 *= silu_fast(Pair<T>::hi(z2));
                }
            }
            y4[i][m] = pack16<T>(v0, v1);
        }
#pragma unroll
    for (int i = 0; i < 4; i++) stsm_x4(ys + sw128_offset(row_q, (2 * i + q / 2) * 8), y4[i]);
}

/* ---- A chunk's products, each issued and committed without waiting
 * (state_product and causal_terms of ops/ssd/ssd_wgmma.cuh wait for each
 * before the next), so that a chunk waits twice: once for C·S_in and C·Bᵀ,
 * once for the rest. Each wgmma's descriptors come from a tile's low word
 * (sw128_desc_lo, once a stage) by one add, as in version 20. ---- */

/* The state product, its SLABS n-tiles, into st: its A operand (w ∘ B)ᵀ built
 * as state_product builds it (Bᵀ by ldmatrix.trans from B's tiles at bs,
 * times w_j), every fragment first, then every product (xd: x's low word). */
template <typename T, int SLABS>
static __device__ __forceinline__ void ws_state_issue(float (&st)[2][32], uint32_t bs, uint32_t xd, const T *wts) {
    const int wq = thread_index() / 32, lane = thread_index() % 32;
    const int t4 = lane % 4, q = lane / 8, r8 = lane % 8;  // ldmatrix: lane gives row r8 of matrix q
    uint32_t af[SLABS][4][4];  // (w ∘ B)ᵀ fragments: n-tile, k-step of 16 steps
#pragma unroll
    for (int mt = 0; mt < SLABS; mt++)
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            ldsm_x4_trans(af[mt][kk], bs + mt * WS_TILE + sw128_offset(kk * 16 + (q >> 1) * 8 + r8, 16 * wq + (q & 1) * 8));
            const uint32_t w_lo = *reinterpret_cast<const uint32_t *>(wts + kk * 16 + t4 * 2);
            const uint32_t w_hi = *reinterpret_cast<const uint32_t *>(wts + kk * 16 + 8 + t4 * 2);
#pragma unroll
            for (int r = 0; r < 4; r++) af[mt][kk][r] = mul16<T>(af[mt][kk][r], r < 2 ? w_lo : w_hi);
        }
    wgmma_fence();
#pragma unroll
    for (int mt = 0; mt < SLABS; mt++)
#pragma unroll
        for (int kk = 0; kk < 4; kk++) wgmma_64x64_rs<T, 1>(st[mt], af[mt][kk], sw128_desc_of(xd + kk * 2048 / 16), 1);
    wgmma_commit();
}

/* d = A·Bᵀ over N, both K-major (C·Bᵀ, and C·S_in with S_in's rows p as
 * B), issued and committed: a and b the low words of their first slabs'
 * descriptors. */
template <typename T, int SLABS>
static __device__ __forceinline__ void ws_nt_issue(float (&d)[32], uint32_t a, uint32_t b) {
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < SLABS * 4; kk++) {
        const uint32_t at = ((kk / 4) * WS_TILE + (kk % 4) * 32) / 16;
        wgmma_64x64_ss<T>(d, sw128_desc_of(a + at), sw128_desc_of(b + at), kk > 0);
    }
    wgmma_commit();
}

/* acc += P·x, P = CB ∘ exp(cum_i − cum_j)·dt_j below the diagonal (the
 * chunk is one 64 x 64 tile), from s = C·Bᵀ of rows row0, row0 + 8. Up to
 * row0, exp(cum_b − cum_j) = exp(cum_b − cum_a)·exp(cum_a − cum_j), both
 * factors at most 1: one exp serves both rows. Warp wq's rows end at
 * 16·wq + 15, so its column groups past 2·wq + 1 are zero and skipped
 * (a branch the whole warp takes).
 * With SHIFT, row i's decay ends at rows_i and its mask at j <= i − 1
 * (Hydra's shift: row i holds C_{i−1}). BACK, the backward direction: the
 * mask above the diagonal, j >= i + SHIFT, and from row0 + 8 + SHIFT on,
 * row0's term is row0 + 8's times exp(rows_a − rows_b); the warp's column
 * groups before 2·wq are zero.
 * ws_causal_pair forms one group of 8 columns (version 21 calls it for a
 * warpgroup's half of P), ws_causal_frags P's fragments (SPLIT, version 20: as bf16 hi
 * in pf and lo in pl, D of the head, diag, on the diagonal; without SPLIT,
 * as T pairs in pf, pl and diag unused), ws_causal_issue issues the product.
 * cb *= tl.exp(dA_cs_m[:, None] - dA_cs_k[None, :]) * dt_k, zero above the diagonal
 * acc += tl.dot(cb, x)
 * ws_causal_pair: P of this thread's rows row0 (pa) and row0 + 8 (pb) at
 * columns j, j + 1 (j = 8·cg + 2·(lane % 4)), from C·Bᵀ's values there (s4:
 * the column group's four accumulators); cum_a, cum_b: where the rows'
 * decays end, r one row's decay from the other. */
template <bool BACK, int SHIFT>
static __device__ __forceinline__ void ws_causal_pair(const float *s4, const WsDecays &d, int row0, int j, float cum_a,
                                                      float cum_b, float r, float (&pa)[2], float (&pb)[2]) {
    const float2 cum_j = *reinterpret_cast<const float2 *>(d.cum2 + j);
    const float2 dt_j = *reinterpret_cast<const float2 *>(d.dts + j);
#pragma unroll
    for (int u = 0; u < 2; u++) {
        const float cj = u ? cum_j.y : cum_j.x, dj = u ? dt_j.y : dt_j.x;
        if (BACK) {
            /* From row0 + 8 + SHIFT on, row0's term is row0 + 8's times r. */
            const bool above = j + u >= row0 + 8 + SHIFT;
            const float e = exp2_approx((above ? cum_b : cum_a) - cj) * dj;
            pb[u] = above ? s4[2 + u] * e : 0.f;
            pa[u] = j + u >= row0 + SHIFT ? s4[u] * (above ? r : 1.f) * e : 0.f;
        } else {
            /* Up to row0 − SHIFT, row0 + 8's term is row0's times r. */
            const bool below = j + u <= row0 - SHIFT;
            const float e = exp2_approx((below ? cum_a : cum_b) - cj) * dj;
            pa[u] = below ? s4[u] * e : 0.f;
            pb[u] = j + u <= row0 + 8 - SHIFT ? s4[2 + u] * (below ? r : 1.f) * e : 0.f;
        }
    }
}
/* D of the head on P's diagonal (versions 20-21): (P + D·I)·x = P·x + D·x,
 * for the columns j, j + 1 of rows row0 (pa) and row0 + 8 (pb). */
static __device__ __forceinline__ void ws_diag_add(float (&pa)[2], float (&pb)[2], int j, int row0, float diag) {
#pragma unroll
    for (int u = 0; u < 2; u++) {
        if (j + u == row0) pa[u] += diag;
        if (j + u == row0 + 8) pb[u] += diag;
    }
}
template <typename T, bool BACK, int SHIFT, bool SPLIT>
static __device__ __forceinline__ void ws_causal_frags(const float (&s)[32], const WsDecays &d, int row0,
                                                       uint32_t (&pf)[4][4], uint32_t (&pl)[4][4], float diag = 0.f) {
    const int t4 = thread_index() % 4, wq = thread_index() / 32;
    const float *rows = SHIFT ? d.rows : d.cum2;                  // where each row's decay ends
    const float cum_a = rows[row0], cum_b = rows[row0 + 8];       // this thread's rows
    const float r = exp2_approx(BACK ? cum_a - cum_b : cum_b - cum_a);  // <= 1: one row's decay from the other
#pragma unroll
    for (int cg = 0; cg < 8; cg++) {  // columns j, j + 1 of each group of 8: their decays read once, as pairs
        if (BACK ? cg < 2 * wq : cg > 2 * wq + 1) {  // on the masked side of both of this warp's rows: zero
            pf[cg / 2][(cg % 2) * 2] = pf[cg / 2][(cg % 2) * 2 + 1] = 0u;
            if (SPLIT) pl[cg / 2][(cg % 2) * 2] = pl[cg / 2][(cg % 2) * 2 + 1] = 0u;
            continue;
        }
        const int j = cg * 8 + t4 * 2;
        float pa[2], pb[2];
        ws_causal_pair<BACK, SHIFT>(s + cg * 4, d, row0, j, cum_a, cum_b, r, pa, pb);
        if constexpr (SPLIT) {
            ws_diag_add(pa, pb, j, row0, diag);
            split_pair(pa[0], pa[1], &pf[cg / 2][(cg % 2) * 2], &pl[cg / 2][(cg % 2) * 2]);
            split_pair(pb[0], pb[1], &pf[cg / 2][(cg % 2) * 2 + 1], &pl[cg / 2][(cg % 2) * 2 + 1]);
        } else {
            pf[cg / 2][(cg % 2) * 2] = pack16<T>(pa[0], pa[1]);
            pf[cg / 2][(cg % 2) * 2 + 1] = pack16<T>(pb[0], pb[1]);
        }
    }
}
template <typename T, bool BACK, int SHIFT>
static __device__ __forceinline__ void ws_causal_issue(float (&yacc)[32], const float (&s)[32], uint32_t xd,
                                                       const WsDecays &d, int row0) {
    uint32_t pf[4][4];  // P as 16-bit A fragments, k-steps of 16 columns
    ws_causal_frags<T, BACK, SHIFT, false>(s, d, row0, pf, pf);
    wgmma_fence();
#pragma unroll
    for (int kj = 0; kj < 4; kj++) wgmma_64x64_rs<T, 1>(yacc, pf[kj], sw128_desc_of(xd + kj * 2048 / 16), 1);
    wgmma_commit();
}

/* The state's first term for a chunk whose Σ Δ·A is cum_last (log2 units):
 * st = exp(cum_last)·st, the product then adding the chunk's own.
 * states = scale * states + new_states (_state_passing_fwd_kernel) */
template <int NE>
static __device__ __forceinline__ void ws_decay_state(float (&st)[2][NE], float cum_last) {
    const float chunk_decay = exp2_approx(cum_last);
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int e = 0; e < NE; e++) st[mt][e] *= chunk_decay;
}

/* PACKED: rows len .. 63 of a sequence's last chunk zeroed in its x and B
 * tiles (the copies brought the next sequence's rows there, or zeros past
 * the row). Their dt is 0, so they add nothing, but 0·NaN would bring a NaN
 * of the next sequence into this one's state and outputs; the official
 * kernel's masked scale has the same hole (b *= scale, a NaN in b stays).
 * Whole 128-byte rows: the swizzle only moves pieces within a row.
 * scale = tl.where(seq_idx_k == seq_idx_last, tl.exp((dA_cs_last - dA_cs_k)) * dt_k, 0.0) */
template <int SLABS>
static __device__ __forceinline__ void ws_zero_tail(unsigned char *x_tile, int len) {
    const int per_tile = (64 - len) * 8;  // 16-byte pieces of a tile past len
    for (int i = thread_index(); i < (1 + SLABS) * per_tile; i += 128)
        *reinterpret_cast<uint4 *>(x_tile + (i / per_tile) * WS_TILE + len * 128 + (i % per_tile) * 16) =
            make_uint4(0u, 0u, 0u, 0u);
    fence_async_smem();  // the zeros, before wgmma reads the tiles
    consumers_sync();
}

/* The consumers' pass over the walk's chunks (OUTPUTS: pass 1, else pass 0),
 * st the state entering the first (pass 0: zero), left holding the state
 * after the last; k: chunks consumed so far. Pass 1 expects the entering
 * state in Ss, ordered before its products by a barrier. Returns
 * Σ cum_last, the segment's decay in log2 units. PACKED (versions 22-23):
 * the chunks of the walk's sequence, the state after every chunk of the
 * problem's size and after the sequence's last chunk to chunk_states. */
template <typename T, int SLABS, bool OUTPUTS, bool BACK, int SHIFT, bool ADD, bool PACKED = false>
static __device__ __forceinline__ float ws_consume(const WgmmaArgs &a, const WsWalk &w, float (&st)[2][32],
                                                   uint32_t &k) {
    const int tid = thread_index(), lane = tid % 32, row0 = (tid / 32) * 16 + lane / 4;
    const uint32_t ss = smem_addr(w.Ss), sd = sw128_desc_lo(ss);
    const int per = PACKED && a.chunk_states ? (int)(a.problem_chunk / 64) : 1;  // PACKED: chunks a chunk_states entry
    float seg_log2 = 0.f;
    for (int v = w.c_first; v < w.c_end; v++, k++) {
        const int64_t t0 = PACKED ? w.t_begin + (int64_t)v * 64 : (int64_t)ws_chunk<BACK>(a, v) * 64;
        const int len = (int)min((int64_t)64, (PACKED ? (int64_t)w.t_end : a.L) - t0), s = (int)(k % WS_STAGES);
        const uint32_t xs = smem_addr(w.stages + s * ws_stage_bytes<SLABS>()), bs = xs + WS_TILE;
        /* The low words of x's, B's and C's descriptors (C's slabs after B's). */
        const uint32_t xd = sw128_desc_lo(xs), bd = xd + WS_TILE / 16, cd = bd + SLABS * WS_TILE / 16;
        const WsDecays d = ws_decays_of(w, s);
        mbar_wait(&w.full[s], (k / WS_STAGES) & 1);
        if (PACKED && len < 64) ws_zero_tail<SLABS>(w.stages + s * ws_stage_bytes<SLABS>(), len);
        const float cum_last = d.cum2[BACK ? 0 : len - 1];  // the chunk's Σ Δ·A (BACK: cum2 sums from j on)
        seg_log2 += cum_last;

        /* S_out = exp(cum_last)·S_in + Σ_j (w_j B_j)ᵀ x_j, in the registers; with
         * the outputs, C·S_in and C·Bᵀ are issued first and all three run together.
         * states = tl.dot(x, b) with x scaled by dt * exp(dA_cs_last - dA_cs) (_chunk_state_fwd_kernel) */
        ws_decay_state(st, cum_last);
        float yacc[32] = {}, cbt[32] = {};  // y rows of the chunk; C·Bᵀ (64 x 64)
        if (OUTPUTS) {
            /* acc = tl.dot(C, prev_states) (_chunk_scan_fwd_kernel) */
            ws_nt_issue<T, SLABS>(yacc, cd, sd);
            /* cb = tl.dot(C, B) */
            ws_nt_issue<T, SLABS>(cbt, cd, bd);
        }
        ws_state_issue<T, SLABS>(st, bs, xd, static_cast<const T *>(d.wts));
        if (!OUTPUTS) {
            wgmma_wait<0>();
            wgmma_touch(st[0]);
            wgmma_touch(st[1]);
            mbar_arrive(&w.empty[s]);  // this thread has read x, B and the decays
            continue;
        }
        wgmma_wait<1>();  // C·S_in and C·Bᵀ are in; the state product may still run
        wgmma_touch(yacc);
        wgmma_touch(cbt);
        {
            // acc = acc * scale_m[:, None] with scale_m = tl.exp(dA_cs_m)
            const float *rows = SHIFT ? d.rows : d.cum2;
            const float ea = exp2_approx(rows[row0]), eb = exp2_approx(rows[row0 + 8]);
#pragma unroll
            for (int e = 0; e < 32; e++) yacc[e] *= (e & 2) ? eb : ea;
        }
        ws_causal_issue<T, BACK, SHIFT>(yacc, cbt, xd, d, row0);
        wgmma_wait<0>();
        wgmma_touch(st[0]);
        wgmma_touch(st[1]);
        wgmma_touch(yacc);
        /* Each warp's tensor cores read all of the entering state: once every warp
         * is past its wait, the next chunk's entering state goes to Ss, and once
         * the storer has handed Ys over (with z in it), y to Ys; the storer copies
         * it out. The barrier orders the state's stores before any warp's next
         * products. */
        consumers_sync();
#pragma unroll
        for (int mt = 0; mt < SLABS; mt++) frag_to_smem<T>(ss, st[mt], mt);
        mbar_wait(w.ys_free, (uint32_t)(v - w.c_first) & 1);
        const uint32_t ys = smem_addr(w.Ys);
        if (ADD && a.z)
            ws_y_to_smem<T, YS_PARTIAL_Z>(yacc, xs, ys, w.Dcol, row0,
                                          static_cast<const T *>(a.z) + ((w.b * a.L + t0) * a.H + w.h) * a.P,
                                          a.H * a.P, len, (int)a.P);
        else if (ADD) ws_y_to_smem<T, YS_PARTIAL>(yacc, xs, ys, w.Dcol, row0);
        else if (a.z) ws_y_to_smem<T, YS_Z>(yacc, xs, ys, w.Dcol, row0);
        else ws_y_to_smem<T, YS_EMPTY>(yacc, xs, ys, w.Dcol, row0);
        fence_async_smem();  // the state's and y's stores, before wgmma and the copy read them
        consumers_sync();
        mbar_arrive(&w.empty[s]);                  // this thread has read x, B, C and the decays
        if (lane == 0) mbar_arrive(w.ys_written);  // the barrier ordered every lane's y before it
        /* The state after each chunk of the problem's size (64 divides it) and after the sequence's
         * last: chunk_states, which the official kernels do not return for a packed row. */
        if (PACKED && a.chunk_states && ((v + 1) % per == 0 || t0 + len == w.t_end))
            ws_state_store<32, true>(st, a, a.chunk_states, (int64_t)(w.first_cs + v / per) * a.H + w.h, SLABS);
    }
    return seg_log2;
}

#endif  // SSD_WGMMA_WS_CHUNK_CUH
