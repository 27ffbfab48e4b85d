/* 05_ssd_mamba2, GPU, versions 20-21: version 18's walk on split fp32
 * operands (sm_90a), the device code; their launchers are in wgmma_split.cu.
 *  20 ssd_wgmma_ws_split_fp32      one computing warpgroup
 *  21 ssd_wgmma_ws_split_2wg_fp32  two computing warpgroups
 */
#ifndef WGMMA_WS_SPLIT_CUH
#define WGMMA_WS_SPLIT_CUH

#include "wgmma_split_tiles.cuh"

/* ---- Version 20: version 18's walk on version 17's split operands ----
 *
 * What changed from versions 16-17: the state stays in the registers of a
 * walking warpgroup and the split work moves to warps of their own. What it
 * should buy: fp32 I/O at fp32 accuracy nearer version 18's time.
 * The walk, the roles and the ring of stages are version 18's
 * (ops/ssd/ssd_wgmma_ws.cuh); the operands are version 17's: B and C come
 * split by split_bc_kernel, their hi and lo slabs by bulk copies, and every
 * product is three bf16 products. What changes against version 18:
 *   - three warps of the producer warpgroup (version 18's storer warp and
 *     its two idle ones), the splitters, read each chunk's x from device memory in fp32, the first
 *     of them forms the chunk's decays, and they write x and w ∘ x (x_j
 *     times the state product's weight w_j) as swizzled hi and lo tiles into
 *     the stage, while the consumers compute the chunk before. With w on x
 *     instead of on B, the state product S_localᵀ = Σ_j B_jᵀ (w_j x_j) takes
 *     both operands from shared memory (Bᵀ as an MN-major A), so the
 *     consumers form no fragment for it: version 17's consumers rebuilt and
 *     split (w ∘ B)ᵀ in registers, a large share of their instructions;
 *   - a stage holds x, w ∘ x, B and C twice (hi and lo), 96 KiB at N 128, and
 *     the entering state takes 32 KiB: 227 KiB with the decays, one block an
 *     SM, so the segments are cut for one walk an SM and no register budget
 *     is split (no setmaxnreg);
 *   - a chunk issues the state product, C·Bᵀ and C·S_in together and waits
 *     for the first two while C·S_in runs, forming P then, and writes the
 *     next entering state to shared memory while P·x runs;
 *   - y leaves from the accumulators by 8-byte stores (fp32 pairs), and z
 *     comes the same way, loaded before the chunk's products: no Ys tile
 *     and no storer warp.
 * Per (b, h, chunk of 64), N 128, p 64: 84 products of 64 x 64 x 16, three
 * times version 18's 28; each wgmma's descriptors come from one base a
 * stage by one add (sw128_desc_lo, sw128_desc_of), and D of the head joins
 * P's diagonal, so that y is the accumulators alone without D per channel.
 * What bounds it: one block an SM leaves one computing warpgroup, whose
 * chain (the products, P, the next entering state split into hi and lo, y)
 * waits on itself; tuning.md has each step, and a pipelined build that was
 * slower. */

/* ---- Version 21: version 20 with two computing warpgroups ----
 *
 * What changed: the block's one computing warpgroup becomes two (WGS 2),
 * each taking 32 of p's 64 columns, and 32 of P's, which they share through
 * shared memory. What it should buy: two chains of a chunk an SM where
 * shared memory allows one block, each half as long for the state, C·S_in,
 * P·x and y, with the tensor pipe doing version 20's work.
 * Registers allow it: version 20 holds 208 a thread at 256 threads; at 384
 * (two computing warpgroups and the producer warpgroup) each has 168, and
 * a warpgroup's half of the state is 16 accumulators an n-tile. Each
 * warpgroup forms C·Bᵀ and P for its 32 columns j and writes P as bf16 hi
 * and lo over the stage's w ∘ x tiles, once both state products have read
 * them; both then take all of P from there (wss_consume). The 32-column
 * products read x's and w ∘ x's MN-major tiles 64 bytes into their
 * 128-byte swizzled rows, S_in's K-major tile 32 rows down.
 * Forming all of P in each warpgroup instead would double C·Bᵀ's products
 * on the one tensor pipe, which both warpgroups reach together, as they
 * wait on the same stage (tuning.md). What still bounds it: each
 * warpgroup's chain, now two of them an SM. */

#define WSS_SPLITTERS 96       // the producer warpgroup's last three warps split x, the first of them forms the decays
#define WSS_SPLIT_BARRIER 4    // the splitters' named barrier (1: the consumers; 2, 3: version 21's warpgroups)
#define WSS_DECAYS (64 * 12)  // a stage's decays: cum2, dts, wts (64,) fp32

/* WGS computing warpgroups (version 20: 1, version 21: 2), each the chunk's
 * 64 rows and 64 / WGS of p's columns, then the producer warpgroup. */
template <int WGS>
static __host__ __device__ constexpr int wss_threads() { return 128 * WGS + 128; }

/* A computing warpgroup's own barrier: with one, the consumers' (named
 * barrier 1); with two, named barrier 2 + its index, its 128 threads. */
template <int WGS>
static __device__ __forceinline__ void wss_wg_sync() {
    if (WGS == 1) consumers_sync();
    else named_barrier_sync<128>(2 + (int)threadIdx.x / 128);
}

/* One bf16 product of 64 x 16 by 16 x 2·NE columns into d, both operands
 * in shared memory: NE 32, 64 columns; NE 16, 32 (a warpgroup's half of p). */
template <int TRANS_B, int TRANS_A, int NE>
static __device__ __forceinline__ void wss_mma(float (&d)[NE], uint64_t a, uint64_t b, int accumulate) {
    if constexpr (NE == 32) wgmma_64x64_ss<bf16, TRANS_B, TRANS_A>(d, a, b, accumulate);
    else wgmma_64x32_ss<bf16, TRANS_B, TRANS_A>(d, a, b, accumulate);
}

/* A stage: x hi, x lo, (w ∘ x) hi, (w ∘ x) lo (64, 64), then B hi, B lo,
 * C hi, C lo (64, 64·SLABS) each, bf16, swizzled. */
template <int SLABS>
static __host__ __device__ constexpr int wss_stage_bytes() { return (4 + 4 * SLABS) * WS_TILE; }
/* The stages, the entering state (hi, lo), the stages' decays (at
 * ws_decays_of's stride), and 1024 bytes to align the swizzled tiles:
 * 232,064 bytes at N 128, with the kernel's 304 static bytes just under
 * the 232,448 a block may have. */
template <int SLABS>
static __host__ __device__ constexpr size_t wss_smem_bytes() {
    return 1024 + (size_t)WS_STAGES * wss_stage_bytes<SLABS>() + 2 * SLABS * WS_TILE + (WS_STAGES - 1) * WS_DECAYS +
           WSS_DECAYS;
}

/* The copying thread: for each chunk, once its stage is free, B's (and with
 * the outputs C's) hi and lo slabs into it, on `full`. */
template <int SLABS>
static __device__ void wss_produce(const SplitMaps &maps, const WsWalk &w) {
    uint32_t k = 0;  // chunks issued: stage k % WS_STAGES, its use k / WS_STAGES
    for (int pass = w.last_seg ? 1 : 0; pass < 2; pass++)
        for (int c = w.c_first; c < w.c_end; c++, k++) {
            const int s = (int)(k % WS_STAGES), t0 = c * 64;
            if (k >= WS_STAGES) mbar_wait(&w.empty[s], ((k / WS_STAGES) & 1) ^ 1);
            unsigned char *st = w.stages + s * wss_stage_bytes<SLABS>();
            mbar_arrive_expect_tx(&w.full[s], (pass == 1 ? 4 : 2) * SLABS * WS_TILE);
#pragma unroll
            for (int part = 0; part < 2; part++)
#pragma unroll
                for (int sl = 0; sl < SLABS; sl++) {
                    tma_load_4d(st + (4 + part * SLABS + sl) * WS_TILE, &maps.B[part], &w.full[s], 64 * sl, w.g, t0, w.b);
                    if (pass == 1)
                        tma_load_4d(st + (4 + (2 + part) * SLABS + sl) * WS_TILE, &maps.C[part], &w.full[s], 64 * sl,
                                    w.g, t0, w.b);
                }
        }
}

/* The splitters: for each chunk, each thread loads its float4s of x (rows
 * past L and columns past p as zeros) and the first splitter warp its dt
 * before the stage is free; then that warp forms the decays into the stage,
 * the splitters meet (named barrier WSS_SPLIT_BARRIER), and each writes its
 * x and w ∘ x as hi and lo pairs into the stage's tiles and arrives on `full`. */
template <int SLABS, int THREADS>
static __device__ void wss_split_x(const WgmmaArgs &a, const WsWalk &w) {
    constexpr int F4 = 64 * 16, PER = (F4 + WSS_SPLITTERS - 1) / WSS_SPLITTERS;  // float4s of x: a chunk's, a thread's
    const int u = threadIdx.x - (THREADS - WSS_SPLITTERS);
    const bool decayer = u < 32;
    uint32_t k = 0;
    for (int pass = w.last_seg ? 1 : 0; pass < 2; pass++)
        for (int c = w.c_first; c < w.c_end; c++, k++) {
            const int s = (int)(k % WS_STAGES);
            const int64_t t0 = (int64_t)c * 64, len = min((int64_t)64, a.L - t0);
            const float *x = static_cast<const float *>(a.x) + ((w.b * a.L + t0) * a.H + w.h) * a.P;  // x[b, t0, h, 0]
            float4 v[PER];
#pragma unroll
            for (int m = 0; m < PER; m++) {
                const int i = u + WSS_SPLITTERS * m, r = i / 16, col = (i % 16) * 4;  // p is a multiple of 4
                v[m] = i < F4 && r < len && col < a.P ? *reinterpret_cast<const float4 *>(x + r * a.H * a.P + col)
                                                      : make_float4(0.f, 0.f, 0.f, 0.f);
            }
            const float2 dt_raw = decayer ? ws_dt_load<float, false>(a, w, c, pass == 0) : make_float2(0.f, 0.f);
            if (k >= WS_STAGES) mbar_wait(&w.empty[s], ((k / WS_STAGES) & 1) ^ 1);
            const WsDecays d = ws_decays_of(w, s);
            if (decayer) ws_form_decays<false, 0, float>(a, w, c, d, dt_raw);
            named_barrier_sync<WSS_SPLITTERS>(WSS_SPLIT_BARRIER);  // the chunk's weights are in
            unsigned char *xs = w.stages + s * wss_stage_bytes<SLABS>();
#pragma unroll
            for (int m = 0; m < PER; m++) {
                const int i = u + WSS_SPLITTERS * m, r = i / 16;
                if (i >= F4) continue;
                const float wr = static_cast<const float *>(d.wts)[r];
                const uint32_t at = sw128_offset(r, (i % 16) * 4);
                store_split4(xs, at, WS_TILE, v[m]);
                // scale = tl.exp(tl.minimum((dA_cs_last - dA_cs_k), 0.0)) * dt_k; b *= scale[:, None]
                // (_chunk_state_fwd_kernel; here w = scale goes on x: Σ_j b_jᵀ (w_j x_j))
                store_split4(xs + 2 * WS_TILE, at, WS_TILE,
                             make_float4(wr * v[m].x, wr * v[m].y, wr * v[m].z, wr * v[m].w));
            }
            fence_async_smem();  // the tiles' generic writes, before the tensor cores read them
            mbar_arrive(&w.full[s]);
        }
}

/* d (+)= A·Bᵀ over N, both K-major and split, issued and committed: a and b
 * the low words of the hi slabs' descriptors (sw128_desc_lo), the lo slabs
 * sl bytes on; B's rows 2·NE (64, or a warpgroup's 32). */
template <int SLABS, int NE>
static __device__ __forceinline__ void wss_nt_issue(float (&d)[NE], uint32_t a, uint32_t b, uint32_t sl) {
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < SLABS * 4; kk++) {
        const uint32_t at = ((kk / 4) * WS_TILE + (kk % 4) * 32) / 16;
        wss_mma<0, 0>(d, sw128_desc_of(a + at), sw128_desc_of(b + at), kk > 0);
        wss_mma<0, 0>(d, sw128_desc_of(a + at), sw128_desc_of(b + at + sl / 16), 1);
        wss_mma<0, 0>(d, sw128_desc_of(a + at + sl / 16), sw128_desc_of(b + at), 1);
    }
    wgmma_commit();
}

/* Version 21: this warpgroup's 32 columns of P, from j_first (s: its C·Bᵀ
 * columns there, 16 values a thread), D of the head on the diagonal, as
 * bf16 hi and lo pairs into the swizzled tiles at ph and ph + WS_TILE;
 * column groups on the masked side of both of a warp's rows as zeros.
 * cb *= tl.exp(dA_cs_m[:, None] - dA_cs_k[None, :]) * dt_k, zero above the diagonal */
static __device__ __forceinline__ void wss_causal_half(const float (&s)[16], const WsDecays &d, int row0, int j_first,
                                                       unsigned char *ph, float diag) {
    const int t4 = thread_index() % 4, wq = (thread_index() / 32) % 4;
    const float cum_a = d.cum2[row0], cum_b = d.cum2[row0 + 8];
    const float r = exp2_approx(cum_b - cum_a);  // <= 1: row0 + 8's decay from row0's
#pragma unroll
    for (int c4 = 0; c4 < 4; c4++) {
        const int cg = j_first / 8 + c4, j = cg * 8 + t4 * 2;
        float pa[2] = {0.f, 0.f}, pb[2] = {0.f, 0.f};
        if (cg <= 2 * wq + 1) {
            ws_causal_pair<false, 0>(s + c4 * 4, d, row0, j, cum_a, cum_b, r, pa, pb);
            ws_diag_add(pa, pb, j, row0, diag);
        }
        uint32_t hi, lo;
        split_pair(pa[0], pa[1], &hi, &lo);
        *reinterpret_cast<uint32_t *>(ph + sw128_offset(row0, j)) = hi;
        *reinterpret_cast<uint32_t *>(ph + WS_TILE + sw128_offset(row0, j)) = lo;
        split_pair(pb[0], pb[1], &hi, &lo);
        *reinterpret_cast<uint32_t *>(ph + sw128_offset(row0 + 8, j)) = hi;
        *reinterpret_cast<uint32_t *>(ph + WS_TILE + sw128_offset(row0 + 8, j)) = lo;
    }
}

/* The consumers' pass over the walk's chunks, as version 18's ws_consume
 * (OUTPUTS: pass 1, else pass 0); returns the segment's decay in log2 units.
 * With WGS 2 (version 21) each warpgroup takes NP = 32 of p's columns: its
 * n-tiles of the state, its rows of S_in, its half of x and w ∘ x and of y;
 * and 32 of P's columns, C·Bᵀ there, formed into the tiles where w ∘ x was
 * (once both warpgroups' state products have read them), from which both
 * take all of P. */
template <int SLABS, int WGS, bool OUTPUTS>
static __device__ __forceinline__ float wss_consume(const WgmmaArgs &a, const WsWalk &w, float (&st)[2][32 / WGS],
                                                    uint32_t &k) {
    constexpr int NE = 32 / WGS, NP = 64 / WGS;  // accumulators a thread an n-tile; the warpgroup's columns of p
    constexpr uint32_t SL = SLABS * WS_TILE;     // from a hi slab of B, C or S_in to its lo slab
    const int tid = thread_index(), lane = tid % 32, row0 = ((tid / 32) % 4) * 16 + lane / 4;
    const int p_first = WGS > 1 ? NP * (tid / 128) : 0;  // the warpgroup's first column of p
    /* S_in's rows p_first .. (128 bytes a row); x's and w ∘ x's columns p_first .. (2 bytes a column) */
    const uint32_t ss = smem_addr(w.Ss), sd = sw128_desc_lo(ss) + p_first * 128 / 16, pcol = p_first * 2 / 16;
    /* D of the head joins P's diagonal; D per channel is added to y. */
    const float D_head = a.D && !a.D_per_channel ? a.D[w.h] : 0.f;
    /* C·Bᵀ (64 x 64; WGS 2: 64 x 32, P's columns j from p_first, the same offset as p's);
     * y rows of the chunk (each chunk's first product overwrites) */
    float cbt[NE] = {}, yacc[NE] = {};
    float seg_log2 = 0.f;
    for (int c = w.c_first; c < w.c_end; c++, k++) {
        const int64_t t0 = (int64_t)c * 64;
        const int len = (int)min((int64_t)64, a.L - t0), s = (int)(k % WS_STAGES);
        unsigned char *stage = w.stages + s * wss_stage_bytes<SLABS>();
        /* The low words of the tiles' descriptors (sw128_desc_lo): x hi, then
         * x lo, w ∘ x hi and lo, B hi and lo, C hi and lo at their offsets. */
        const uint32_t xd = sw128_desc_lo(smem_addr(stage)), wxd = xd + 2 * WS_TILE / 16, bd = xd + 4 * WS_TILE / 16,
                       cd = bd + 2 * SL / 16;
        const WsDecays d = ws_decays_of(w, s);
        /* z of this thread's pairs of y, rows row0 + 8hr, columns p_first + 8nt + 2(lane % 4),
         * loaded now so that the loads' latency runs under the chunk's products. */
        float2 zr[2][NP / 8];
        if (OUTPUTS && a.z) {
            const float *zt = static_cast<const float *>(a.z) + ((w.b * a.L + t0 + row0) * a.H + w.h) * a.P + p_first +
                              2 * (lane % 4);
#pragma unroll
            for (int hr = 0; hr < 2; hr++)
#pragma unroll
                for (int nt = 0; nt < NP / 8; nt++)
                    zr[hr][nt] = row0 + 8 * hr < len && p_first + 8 * nt + 2 * (lane % 4) < a.P
                                     ? *reinterpret_cast<const float2 *>(zt + 8 * hr * a.H * a.P + 8 * nt)
                                     : make_float2(0.f, 0.f);
        }
        mbar_wait(&w.full[s], (k / WS_STAGES) & 1);
        const float cum_last = d.cum2[len - 1];
        seg_log2 += cum_last;

        /* S_out = exp(cum_last)·S_in + Σ_j B_jᵀ (w_j x_j), n-tile mt from B's
         * slab mt read as an MN-major A; with the outputs, C·Bᵀ and C·S_in are
         * issued after it and all three run together.
         * acc += tl.dot(x, b) (_chunk_state_fwd_kernel, b scaled by w there, x here) */
        ws_decay_state(st, cum_last);
        wgmma_fence();
#pragma unroll
        for (int mt = 0; mt < SLABS; mt++)
#pragma unroll
            for (int kk = 0; kk < 4; kk++) {
                const uint32_t b_hi = bd + (mt * WS_TILE + kk * 2048) / 16, wx_hi = wxd + pcol + kk * 2048 / 16;
                wss_mma<1, 1>(st[mt], sw128_desc_of(b_hi), sw128_desc_of(wx_hi), 1);
                wss_mma<1, 1>(st[mt], sw128_desc_of(b_hi), sw128_desc_of(wx_hi + WS_TILE / 16), 1);
                wss_mma<1, 1>(st[mt], sw128_desc_of(b_hi + SL / 16), sw128_desc_of(wx_hi), 1);
            }
        wgmma_commit();
        if (!OUTPUTS) {
            wgmma_wait<0>();
            wgmma_touch(st[0]);
            wgmma_touch(st[1]);
            mbar_arrive(&w.empty[s]);  // this thread's reads of the stage are done
            continue;
        }
        /* cb = tl.dot(C, B) (WGS 2: B's rows p_first .., this warpgroup's columns of P) */
        wss_nt_issue<SLABS>(cbt, cd, bd + p_first * 128 / 16, SL);
        /* acc = tl.dot(C, prev_states) (_chunk_scan_fwd_kernel) */
        wss_nt_issue<SLABS>(yacc, cd, sd, SL);
        wgmma_wait<1>();  // the state product and C·Bᵀ are in; C·S_in may still run
        wgmma_touch(st[0]);
        wgmma_touch(st[1]);
        wgmma_touch(cbt);
        uint32_t ph[4][4], pl[4][4];  // WGS 1: P as bf16 A fragments, hi and lo
        if constexpr (WGS > 1) {
            /* Both warpgroups' state products have read w ∘ x: its tiles take P,
             * each warpgroup writing its 32 columns. */
            consumers_sync<WGS>();
            wss_causal_half(cbt, d, row0, p_first, stage + 2 * WS_TILE, D_head);
            fence_async_smem();  // P's generic stores, before the tensor cores read them
            consumers_sync<WGS>();
        } else {
            ws_causal_frags<bf16, false, 0, true>(cbt, d, row0, ph, pl, D_head);
        }
        wgmma_wait<0>();
        wgmma_touch(yacc);
        {
            // acc = acc * scale_m[:, None] with scale_m = tl.exp(dA_cs_m)
            const float ea = exp2_approx(d.cum2[row0]), eb = exp2_approx(d.cum2[row0 + 8]);
#pragma unroll
            for (int e = 0; e < NE; e++) yacc[e] *= (e & 2) ? eb : ea;
        }
        /* acc += tl.dot(cb, x) */
        wgmma_fence();
#pragma unroll
        for (int kj = 0; kj < 4; kj++) {
            const uint64_t x_hi = sw128_desc_of(xd + pcol + kj * 2048 / 16),
                           x_lo = sw128_desc_of(xd + pcol + (WS_TILE + kj * 2048) / 16);
            if constexpr (WGS > 1) {
                const uint32_t p_hi = wxd + kj * 32 / 16;  // P's tiles (K-major) where w ∘ x was
                wss_mma<1, 0>(yacc, sw128_desc_of(p_hi), x_hi, 1);
                wss_mma<1, 0>(yacc, sw128_desc_of(p_hi), x_lo, 1);
                wss_mma<1, 0>(yacc, sw128_desc_of(p_hi + WS_TILE / 16), x_hi, 1);
            } else {
                wgmma_64x64_rs<bf16, 1>(yacc, ph[kj], x_hi, 1);
                wgmma_64x64_rs<bf16, 1>(yacc, ph[kj], x_lo, 1);
                wgmma_64x64_rs<bf16, 1>(yacc, pl[kj], x_hi, 1);
            }
        }
        wgmma_commit();
        /* Every warp's C·S_in is done (with WGS 2 each warpgroup reads only its
         * own rows of S_in): the next chunk's entering state to Ss, while P·x runs. */
        wss_wg_sync<WGS>();
#pragma unroll
        for (int mt = 0; mt < SLABS; mt++)
            state_to_smem_split(ss + mt * WS_TILE, ss + SL + mt * WS_TILE, st[mt], p_first);
        wgmma_wait<0>();
        wgmma_touch(yacc);
        /* y = acc (+ D x per channel, x as hi + lo), then y *= silu(z), fp32 pairs. */
        float *y = static_cast<float *>(a.y) + ((w.b * a.L + t0 + row0) * a.H + w.h) * a.P + p_first + 2 * (lane % 4);
#pragma unroll
        for (int hr = 0; hr < 2; hr++)
#pragma unroll
            for (int nt = 0; nt < NP / 8; nt++) {
                const int i = row0 + 8 * hr, pi = p_first + 8 * nt + 2 * (lane % 4);
                if (i >= len || pi >= a.P) continue;
                float2 v = make_float2(yacc[nt * 4 + hr * 2], yacc[nt * 4 + hr * 2 + 1]);
                if (a.D_per_channel) {
                    const uint32_t at = sw128_offset(i, pi);
                    const float2 xv = load_split2(stage, at);
                    // out = acc + x * D
                    v.x = fmaf(w.Dcol[pi], xv.x, v.x);
                    v.y = fmaf(w.Dcol[pi + 1], xv.y, v.y);
                }
                if (a.z) {
                    // out = out * F.silu(z)
                    const float2 zv = zr[hr][nt];
                    v.x *= silu_div(zv.x);
                    v.y *= silu_div(zv.y);
                }
                *reinterpret_cast<float2 *>(y + 8 * hr * a.H * a.P + 8 * nt) = v;
            }
        fence_async_smem();  // the state's stores, before the next chunk's products read them
        wss_wg_sync<WGS>();
        mbar_arrive(&w.empty[s]);  // this thread's reads of the stage are done
    }
    return seg_log2;
}

/* SLABS: N rounded up to 64, over 64. One block walks one segment of one
 * (b, h): threads 0 .. 128·WGS − 1 compute (WGS warpgroups, each 64 / WGS
 * of p's columns), the producer warpgroup's first thread copies B and C, its
 * last three warps split x and form the decays. */
template <int SLABS, int WGS>
__global__ void __launch_bounds__(wss_threads<WGS>(), 1)
    ssd_wgmma_ws_split_kernel(WgmmaArgs a, const __grid_constant__ SplitMaps maps) {
    constexpr int NE = 32 / WGS;  // the state's accumulators a thread an n-tile
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    __shared__ int item;
    __shared__ alignas(8) uint64_t full[WS_STAGES], empty[WS_STAGES];
    __shared__ alignas(8) float Dcol[64];  // (64,) fp32: D of each column of y (read with D per channel only)
    const int tid = threadIdx.x;
    if (tid == 0) {
        item = a.segments > 1 ? atomicAdd(a.ticket, 1) : (int)blockIdx.x;  // one segment: no order to keep
        for (int s = 0; s < WS_STAGES; s++) {
            mbar_init(&full[s], 1 + WSS_SPLITTERS);  // the copying thread with the copies' bytes, the splitters
            mbar_init(&empty[s], 128 * WGS);         // each consumer thread, after its last read of the stage
        }
    }
    __syncthreads();  // the block's last barrier of all its threads
    WsWalk w = ws_walk_of(a, item);
    w.stages = smem;
    w.Ss = w.stages + WS_STAGES * wss_stage_bytes<SLABS>();  // (64, 64·SLABS) bf16 hi, then lo: the entering state, rows p
    w.decays = w.Ss + 2 * SLABS * WS_TILE;                    // WS_STAGES x [cum2, dts, wts (64,) fp32], WS_DECAYS apart
    w.Ys = nullptr;  // no storer: Ys, ys_free and ys_written are version 18's
    w.Dcol = Dcol;
    w.full = full;
    w.empty = empty;
    w.ys_free = w.ys_written = nullptr;

    if (tid >= 128 * WGS) {
        if (tid == 128 * WGS) wss_produce<SLABS>(maps, w);
        else if (tid >= wss_threads<WGS>() - WSS_SPLITTERS) wss_split_x<SLABS, wss_threads<WGS>()>(a, w);
        return;
    }
    static_assert(WGS == 1 || WGS == 2, "barriers 2 + wg sit below WSS_SPLIT_BARRIER; p's 64 columns split in two");
    const int p_first = WGS > 1 ? (64 / WGS) * (tid / 128) : 0;  // this warpgroup's first column of p
    float st[2][NE] = {};  // the state, n-tiles 0 and 1 in fragment order (1 stays zero at SLABS 1)
    uint32_t k = 0;
    /* ---- Pass 0 (segments but the last): the segment's own state, published. */
    if (!w.last_seg)
        ws_publish<SLABS, WGS>(st, a, w, item, exp2_approx(wss_consume<SLABS, WGS, false>(a, w, st, k)));
    /* ---- Pass 1 from S_{seg−1} (h0 for the first segment), with the outputs. */
    if (tid < 64) Dcol[tid] = D_of_column(a, w.h, a.D && !a.D_per_channel ? a.D[w.h] : 0.f, tid);
    if (w.seg > 0) ws_sum_published<SLABS, WGS>(st, a, w);
    const uint32_t ss = smem_addr(w.Ss);
#pragma unroll
    for (int mt = 0; mt < SLABS; mt++) {
        if (w.seg == 0) ws_h0_tile(st[mt], a, w, mt, p_first);
        state_to_smem_split(ss + mt * WS_TILE, ss + SLABS * WS_TILE + mt * WS_TILE, st[mt], p_first);
    }
    fence_async_smem();  // the state's stmatrix stores, before wgmma reads them
    consumers_sync<WGS>();
    wss_consume<SLABS, WGS, true>(a, w, st, k);
    if (w.last_seg && a.final_state) ws_final_state(st, a, w, SLABS, p_first);
}

#endif  // WGMMA_WS_SPLIT_CUH
