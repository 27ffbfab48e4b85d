/* 05_ssd_mamba2, GPU, versions 14-15: the fused SSD as a walk along the
 * sequence (sm_90a); its launchers are in wgmma.cu, the pieces of a chunk it
 * shares with versions 8-13 in ops/ssd/ssd_wgmma.cuh.
 *  14 ssd_wgmma_walk       a block walks the chunks of one (b, h) in order:
 *                          no chunk waits for another block, the next
 *                          chunk's copies fly while this one computes
 *  15 ssd_wgmma_walk_bf16  version 14 in bf16
 *
 * Version 12 gives each (b, h, chunk) its own block, so every chunk waits
 * for the block of the chunk before it to publish its end state through L2,
 * and its tiles only start coming once the block starts: together the
 * largest share of version 12's stall samples (versions.md). Here one block
 * takes a run of
 * consecutive chunks of one (b, h), a segment, and walks it:
 *   - the state entering chunk c + 1 is the state this block just computed.
 *     It goes through L2 all the same, each thread reading back exactly the
 *     values it wrote (no flag, no other block), because 32 more registers
 *     a thread would not fit beside the products at two blocks an SM; its
 *     load is issued before the chunk's state product and lands during it;
 *   - the copies of chunk c + 1 are issued inside chunk c: B and C once
 *     every product has read them, x once D·x has read it (y is staged in
 *     the state's tile, free by then), dt a chunk ahead into a register.
 * At S3 b 8 there are 256 (b, h), about two blocks an SM: one segment each.
 * With fewer (b, h) than the GPU holds blocks (b 1 L 8192: 32), the
 * sequence is cut into segments, and a segment needs the state its
 * predecessor ends with before it can produce outputs. It gets it the way
 * the official code's three kernels do, on a scale of segments instead of
 * chunks:
 *   pass 0  (every segment but the last) walk the segment's chunks for the
 *           state they add, from zero: state products only, x and B only;
 *           wait for segment s − 1 to publish its end state S_{s−1}, then
 *           publish S_s = exp(Σ dA over the segment)·S_{s−1} + that local
 *           state. The chain of waits is one short step a segment.
 *   pass 1  walk again from S_{s−1} (h0 for the first segment), now with
 *           the outputs.
 * The state products run twice in segments that make pass 0 (a quarter of
 * a chunk's FLOPs at S3); a launch with one segment a (b, h) makes none.
 * PACKED (run_packed): a packed row's sequences are walked a (sequence, h)
 * a block, longest sequences first, one segment each, from the sequence's
 * own h0 row; the state after
 * every chunk of the problem's size goes to chunk_states. A sequence's last
 * chunk is the one whose copies reach past it: the rows past it are zeroed
 * in shared memory and y's are not written (y_out_tma's CLIP).
 *
 * FLOPs, bytes and exps a chunk as version 12; the state between chunks
 * 2·4·p·N bytes a chunk through L2 instead of version 12's ring, plus pass 0.
 *
 * What it should buy: no hand-off wait, where the chain of hand-offs sets
 * the time (batch 1). The loop needs more registers than version 12's
 * straight-line block: at the 128-register cap of two blocks an SM, ptxas
 * spills 20 bytes a thread, and its speed follows the spill (tuning.md,
 * "The walk's registers"). At b 8 the 256 walks are one wave: nothing
 * hides a walk's own latency, so there it should not beat version 12
 * (versions.md). */
#ifndef SSD_WGMMA_WALK_CUH
#define SSD_WGMMA_WALK_CUH

#include "ssd_wgmma.cuh"

/* The state S_{s−1} entering segment s in fragment order, n-tile mt of
 * this thread: row `row` of h0 ((b, h) or, packed, (nseq, h) rows of p x N)
 * for the first segment (zero without), else segment s − 1's published end
 * state. */
static __device__ __forceinline__ void entering_state(float (&v)[32], const WgmmaArgs &a, int64_t row, int seg,
                                                      const float *prev_end, int mt) {
    if (seg > 0) {
        frag_load(v, prev_end, mt, false);
        return;
    }
#pragma unroll
    for (int e = 0; e < 32; e++) {
        int pi, ni;
        frag_pn(mt, e, &pi, &ni);
        v[e] = a.h0 && pi < a.P && ni < a.N ? a.h0[(row * a.P + pi) * a.N + ni] : 0.f;
    }
}

/* n-tile mt of a state in fragment order to dst (p, N) fp32. Not inlined:
 * a packed walk calls it once every few chunks, and inlined its 32 scattered
 * stores cost the chunk-64 kernel's loop registers it does not have. */
static __device__ __noinline__ void frag_store_pn(float *dst, const float (&v)[32], int mt, int P, int N) {
#pragma unroll
    for (int e = 0; e < 32; e++) {
        int pi, ni;
        frag_pn(mt, e, &pi, &ni);
        if (pi < P && ni < N) dst[pi * N + ni] = v[e];
    }
}

/* A block's place in the walk, and its shared-memory tiles. */
struct WalkPlace {
    int seg, c_first, c_end;            // segment seg: chunks c_first .. c_end − 1
    int b, h, g, bh;                    // its batch entry, head, group; bh = b·H + h
    int64_t t_begin, t_end;             // the steps of the walked row: chunk c starts at t_begin + c·Q
    int64_t state_row;                  // its row of h0 and final_state: bh, or k·H + h for packed sequence k
    int64_t first_cs;                   // packed: chunk_states' index of the sequence's first chunk
    bool last_seg;
    float *run;                         // fp32, fragment order: the walk's state between chunks
    float *seg_end;                     // fp32, fragment order: S_seg, published for segment seg + 1
    const float *prev_end;              // fp32, fragment order: S_{seg−1} (seg > 0)
    unsigned char *Cs, *Bs, *Xs, *Ss;   // swizzled 16-bit tiles: C, B, x of the chunk; its entering state, then y
    float *cum2, *dts, *vdt;            // (Q,) fp32: decays of the chunk (chunk_decays)
};

/* One pass over the segment's chunks (OUTPUTS: pass 1, else pass 0);
 * parity: of the copies' barrier phase, flipping every chunk. Pass 0
 * returns Σ cum_last over its chunks, the segment's decay in log2 units,
 * with the segment's own state (from zero) in w.run. */
template <typename T, int NWG, int SLABS, bool OUTPUTS, bool PACKED>
static __device__ __forceinline__ float walk_pass(const WgmmaArgs &a, const TmaMaps &maps, const WalkPlace &w,
                                                  T *wts, uint64_t *landed, uint32_t &parity) {
    constexpr int Q = 64 * NWG, kTiles = state_tiles(NWG);
    /* Bytes a chunk's copies bring: x and B, and C for the outputs. */
    constexpr uint32_t bytes = (OUTPUTS ? 1 + 2 * SLABS : 1 + SLABS) * Q * 128;
    const int tid = thread_index(), wg = tid / 128;
    const T *dt_bh = static_cast<const T *>(a.dt) + (int64_t)w.b * a.L * a.H + w.h;  // dt[b, t, h] at t·H
    if (tid == 0) {
        const int t0 = (int)(w.t_begin + (int64_t)w.c_first * Q);
        mbar_arrive_expect_tx(landed, bytes);
        tma_load_4d(w.Xs, &maps.x, landed, 0, w.h, t0, w.b);
#pragma unroll
        for (int sl = 0; sl < SLABS; sl++) {
            tma_load_4d(w.Bs + sl * Q * 128, &maps.B, landed, 64 * sl, w.g, t0, w.b);
            if (OUTPUTS) tma_load_4d(w.Cs + sl * Q * 128, &maps.C, landed, 64 * sl, w.g, t0, w.b);
        }
    }
    const int64_t tf = w.t_begin + (int64_t)w.c_first * Q + tid;
    /* dt of the chunk to come, as loaded: converted where it is used, so that
     * the load's latency passes during the chunk before. */
    T dt_next = tid < Q && tf < w.t_end ? dt_bh[tf * a.H] : from_float<T>(0.f);
    float seg_log2 = 0.f;
    for (int c = w.c_first; c < w.c_end; c++) {
        const int64_t t0 = w.t_begin + (int64_t)c * Q, t1 = t0 + Q;
        const int len = (int)min((int64_t)Q, w.t_end - t0);
        const bool last_chunk = c + 1 == w.c_end;
        const uint32_t xs = smem_addr(w.Xs), bs = smem_addr(w.Bs), cs = smem_addr(w.Cs), ss = smem_addr(w.Ss);
        const float dt_raw = to_float(dt_next);
        if (!last_chunk) dt_next = tid < Q && t1 + tid < w.t_end ? dt_bh[(t1 + tid) * a.H] : from_float<T>(0.f);
        /* The state entering the chunk, while the decays are formed and the copies land. */
        float s_in[kTiles][32];
#pragma unroll
        for (int k = 0; k < kTiles; k++) {
            const int mt = wg + k * NWG;
            if (mt >= SLABS) continue;
            if (c > w.c_first) frag_load(s_in[k], w.run, mt, false);
            else if (OUTPUTS) entering_state(s_in[k], a, w.state_row, w.seg, w.prev_end, mt);
            else frag_load(s_in[k], w.run, mt, true);  // pass 0 starts from zero
        }
        const float cum_last = chunk_decays<T, Q>(dt_raw, len, a.dt_bias ? a.dt_bias[w.h] : 0.f, a.A[w.h], a.softplus,
                                                  w.dts, w.cum2, w.vdt, wts);
        seg_log2 += cum_last;
        mbar_wait(landed, parity);
        parity ^= 1;
        if (PACKED && len < Q) {
            /* A sequence's last chunk: the copies brought the next sequence's
             * first steps below it. Their dt is already 0 here; zeros in x, B, C
             * keep a non-finite value there out of this sequence's sums. */
            constexpr int tiles = 1 + 2 * SLABS;  // x, then B's and C's slabs
            for (int i = tid; i < tiles * (Q - len) * 8; i += blockDim.x) {
                const int tile = i / ((Q - len) * 8), r = len + (i / 8) % (Q - len);
                unsigned char *base = tile == 0 ? w.Xs : tile <= SLABS ? w.Bs + (tile - 1) * Q * 128
                                                                      : w.Cs + (tile - 1 - SLABS) * Q * 128;
                *reinterpret_cast<uint4 *>(base + r * 128 + (i % 8) * 16) = make_uint4(0, 0, 0, 0);
            }
            fence_async_smem();
        }
        __syncthreads();

        /* ---- 1. S_localᵀ = Σ_j (w_j B_j)ᵀ x_j, then S_out = exp(cum_last)·S_in + S_local.
         * states = tl.dot(x, b) with x scaled by dt * exp(dA_cs_last - dA_cs) (_chunk_state_fwd_kernel)
         * states = scale * states + new_states (_state_passing_fwd_kernel) */
        float st[kTiles][32] = {};
        state_product<T, NWG, SLABS>(st, bs, xs, wts);
        const float chunk_decay = exp2_approx(cum_last);
#pragma unroll
        for (int k = 0; k < kTiles; k++) {
            const int mt = wg + k * NWG;
            if (mt >= SLABS) continue;
            if (OUTPUTS) frag_to_smem<T>(ss, s_in[k], mt);
#pragma unroll
            for (int e = 0; e < 32; e++) st[k][e] += chunk_decay * s_in[k][e];
            if (PACKED && (last_chunk || (t1 - w.t_begin) % a.problem_chunk == 0)) {
                /* The state after a chunk of the problem's size (the kernel's chunk divides it). */
                frag_store_pn(a.chunk_states + ((w.first_cs + (t0 - w.t_begin) / a.problem_chunk) * a.H + w.h) * a.P * a.N,
                              st[k], mt, (int)a.P, (int)a.N);
            }
            if (OUTPUTS && last_chunk && w.last_seg) {
#pragma unroll
                for (int e = 0; e < 32; e++) {
                    int pi, ni;
                    frag_pn(mt, e, &pi, &ni);
                    if (pi < a.P && ni < a.N) a.final_state[(w.state_row * a.P + pi) * a.N + ni] = st[k][e];
                }
            } else if (!(OUTPUTS && last_chunk)) {
                frag_store(w.run, st[k], mt);
            }
        }
        if (OUTPUTS) fence_async_smem();  // the state's stmatrix stores, before wgmma reads them
        __syncthreads();                  // x and B read by every warpgroup's state product
        if (!OUTPUTS) {
            /* Pass 0 needs nothing more of the chunk: the next one's x and B come. */
            if (tid == 0 && !last_chunk) {
                mbar_arrive_expect_tx(landed, bytes);
                tma_load_4d(w.Xs, &maps.x, landed, 0, w.h, (int)t1, w.b);
#pragma unroll
                for (int sl = 0; sl < SLABS; sl++)
                    tma_load_4d(w.Bs + sl * Q * 128, &maps.B, landed, 64 * sl, w.g, (int)t1, w.b);
            }
            continue;
        }

        /* ---- 3. Outputs of rows 64·wg..: the state term, then the causal tiles. */
        float yacc[32] = {};
        state_term_issue<T, NWG, SLABS>(yacc, cs, ss);
        wgmma_wait<0>();
        wgmma_touch(yacc);
        causal_terms<T, NWG, SLABS, 32>(yacc, cs, bs, xs, w.cum2, w.dts, w.vdt);
        __syncthreads();  // every product has read B, C and the state: the next chunk's B and C come
        if (tid == 0 && !last_chunk) {
            mbar_arrive_expect_tx(landed, bytes);
#pragma unroll
            for (int sl = 0; sl < SLABS; sl++) {
                tma_load_4d(w.Bs + sl * Q * 128, &maps.B, landed, 64 * sl, w.g, (int)t1, w.b);
                tma_load_4d(w.Cs + sl * Q * 128, &maps.C, landed, 64 * sl, w.g, (int)t1, w.b);
            }
        }
        /* ---- 4. y = acc + D x, then y *= silu(z), staged in the state's place and
         * out by one copy a warpgroup (read before the next chunk's state goes there:
         * the barriers of chunk_decays and of the copies' wait come first). */
        y_out_tma<T, false, PACKED>(yacc, w.Xs, w.Ss, a, &maps.y, w.b, w.h, t0, len);
        __syncthreads();  // both warpgroups have read x: the next chunk's x comes
        if (tid == 0 && !last_chunk) tma_load_4d(w.Xs, &maps.x, landed, 0, w.h, (int)t1, w.b);
    }
    return seg_log2;
}

/* NWG warpgroups, chunk Q = 64·NWG; SLABS: N rounded up to 64, over 64.
 * Shared memory as version 12: C, B, x, the entering state (y on its way
 * out) as 16-bit swizzled tiles, and the chunk's dt and decays. */
template <typename T, int NWG, int SLABS, bool PACKED>
__global__ void __launch_bounds__(NWG * 128, NWG == 2 ? 2 : 3)
    ssd_wgmma_walk_kernel(WgmmaArgs a, const __grid_constant__ TmaMaps maps) {
    constexpr int Q = 64 * NWG, kTiles = state_tiles(NWG);
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    constexpr int kRegion = (Q * 128 > SLABS * 64 * 128 ? Q : SLABS * 64) * 128;
    __shared__ int item;
    __shared__ alignas(8) uint64_t landed;  // this chunk's copies are in: one phase a chunk

    const int tid = threadIdx.x, wg = tid / 128;
    if (tid == 0) {
        item = atomicAdd(a.ticket, 1);
        mbar_init(&landed, 1);
    }
    __syncthreads();
    /* Work item (segment, b, h), segment-major: a segment's predecessor
     * always went out first, so waiting for it cannot deadlock. Packed:
     * (sequence k, h), one segment a sequence. */
    const int BH = (int)(a.batch * a.H);  // the launcher's check: items < 2^31
    WalkPlace w;
    if (PACKED) {
        /* Longest sequences first (packed_walk_plan), so that the longest walks
         * do not start last. */
        const int k = a.walk_plan[item / (int)a.H];
        w.seg = 0;
        w.h = item % (int)a.H;
        w.b = 0;
        w.bh = w.h;
        w.t_begin = a.cu_seqlens[k];
        w.t_end = a.cu_seqlens[k + 1];
        w.state_row = (int64_t)k * a.H + w.h;
        w.c_first = 0;
        w.c_end = (int)ceil_div(w.t_end - w.t_begin, (int64_t)Q);
        w.last_seg = true;
        w.first_cs = a.seq_first_chunk[k];
    } else {
        w.seg = item / BH;
        w.bh = item % BH;
        w.b = w.bh / (int)a.H;
        w.h = w.bh % (int)a.H;
        w.t_begin = 0;
        w.t_end = a.L;
        w.state_row = w.bh;
        w.first_cs = 0;
        w.c_first = w.seg * a.seg_chunks;
        w.c_end = min(a.nchunks, w.c_first + a.seg_chunks);
        w.last_seg = w.seg == a.segments - 1;
    }
    w.g = w.h / (int)(a.H / a.G);
    w.run = a.ring + (int64_t)item * (PACKED ? 1 : 2) * a.ring_slot;  // packed: no seg_end
    w.seg_end = w.run + a.ring_slot;
    w.prev_end = w.seg > 0 ? a.ring + ((int64_t)item - BH) * 2 * a.ring_slot + a.ring_slot : nullptr;
    w.Cs = smem;                           // (Q, 64·SLABS) 16-bit
    w.Bs = w.Cs + SLABS * Q * 128;         // (Q, 64·SLABS) 16-bit
    w.Xs = w.Bs + SLABS * Q * 128;         // (Q, 64) 16-bit
    w.Ss = w.Xs + kRegion;                 // (64, 64·SLABS) 16-bit, rows p; then y (Q, 64)
    w.cum2 = reinterpret_cast<float *>(w.Ss + kRegion);
    w.dts = w.cum2 + Q;
    w.vdt = w.dts + Q;
    T *wts = reinterpret_cast<T *>(w.vdt + Q);  // (Q,) 16-bit: dt_j·exp(cum_last − cum_j)
    uint32_t parity = 0;

    if (!PACKED && !w.last_seg) {
        /* ---- Pass 0, then 2 a segment at a time:
         * S_seg = exp(Σ dA)·S_{seg−1} + the segment's own state. */
        const float seg_log2 = walk_pass<T, NWG, SLABS, false, false>(a, maps, w, wts, &landed, parity);
        if (tid == 0 && w.seg > 0)
            while (load_acquire(a.published + w.bh) < w.seg) __nanosleep(64);
        __syncthreads();
        const float seg_decay = exp2_approx(seg_log2);
#pragma unroll
        for (int k = 0; k < kTiles; k++) {
            const int mt = wg + k * NWG;
            if (mt >= SLABS) continue;
            float own[32], before[32];
            frag_load(own, w.run, mt, false);
            entering_state(before, a, w.state_row, w.seg, w.prev_end, mt);
#pragma unroll
            for (int e = 0; e < 32; e++) own[e] += seg_decay * before[e];
            frag_store(w.seg_end, own, mt);
        }
        __syncthreads();  // the block's writes of S_seg happen before thread 0's release
        if (tid == 0) store_release(a.published + w.bh, w.seg + 1);
    } else if (!PACKED && w.seg > 0) {
        /* The last segment makes no pass 0: it waits here for S_{seg−1}. */
        if (tid == 0)
            while (load_acquire(a.published + w.bh) < w.seg) __nanosleep(64);
        __syncthreads();
    }
    walk_pass<T, NWG, SLABS, true, PACKED>(a, maps, w, wts, &landed, parity);
}

/* A packed row's plan, one block of 1024 threads before the walk:
 * order[r] is the sequence of rank r by length, longest first (ties in
 * sequence order), and first_chunk[k] the index in chunk_states of sequence
 * k's first chunk, Σ over the sequences before it of ceil(length / chunk).
 * The ranks cost nseq² comparisons over 1024 threads: a thousand each for a
 * thousand sequences. */
__global__ void __launch_bounds__(1024) packed_walk_plan(const int32_t *cu, int nseq, int64_t chunk, int *order,
                                                         int64_t *first_chunk) {
    __shared__ int64_t part[1024];  // chunks of each thread's run of sequences, then their prefix
    for (int k = threadIdx.x; k < nseq; k += blockDim.x) {
        const int32_t len = cu[k + 1] - cu[k];
        int rank = 0;
        for (int j = 0; j < nseq; j++) {
            const int32_t lj = cu[j + 1] - cu[j];
            rank += lj > len || (lj == len && j < k);
        }
        order[rank] = k;
    }
    /* Thread t sums sequences [t·per, (t + 1)·per); thread 0 scans the sums. */
    const int per = (nseq + (int)blockDim.x - 1) / (int)blockDim.x, k0 = (int)threadIdx.x * per;
    int64_t mine = 0;
    for (int k = k0; k < min(nseq, k0 + per); k++) mine += ceil_div((int64_t)(cu[k + 1] - cu[k]), chunk);
    part[threadIdx.x] = mine;
    __syncthreads();
    if (threadIdx.x == 0) {
        int64_t run = 0;
        for (int t = 0; t < (int)blockDim.x; t++) {
            const int64_t v = part[t];
            part[t] = run;
            run += v;
        }
    }
    __syncthreads();
    int64_t at = part[threadIdx.x];
    for (int k = k0; k < min(nseq, k0 + per); k++) {
        first_chunk[k] = at;
        at += ceil_div((int64_t)(cu[k + 1] - cu[k]), chunk);
    }
}

#endif
