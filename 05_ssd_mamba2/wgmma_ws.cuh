/* 05_ssd_mamba2, GPU, versions 18-19: the walk of version 14 with a
 * producer warp (sm_90a); the launchers are in wgmma.cu.
 *  18 ssd_wgmma_ws       one warpgroup walks a (b, h) in chunks of 64, the
 *                        state in its registers; a producer warp brings
 *                        the chunks' tiles into a ring of two stages
 *  19 ssd_wgmma_ws_bf16  version 18 in bf16
 *
 * Version 14's block is its own copy engine's client: thread 0 issues chunk
 * c + 1's copies once every warp has read chunk c's tiles (one stage, so
 * the copies start late in the chunk and the next chunk may wait for them),
 * and its state goes through L2 between chunks because two warpgroups of 8
 * warps at two blocks an SM leave 128 registers a thread. Here the work is
 * split by role (warp specialization):
 *   - a producer warp, one lane of it, walks the same chunks ahead of the
 *     consumers: for each chunk it waits until a stage is free (its `empty`
 *     barrier), then issues the chunk's x, B and C copies into it, which
 *     complete on its `full` barrier. With two stages, chunk c + 1's tiles
 *     come while chunk c computes;
 *   - one consumer warpgroup (128 threads) computes: chunks of 64, so that
 *     one warpgroup holds a chunk's 64 rows, and the whole state, two
 *     n-tiles of 32 accumulators a thread, stays in its registers from one
 *     chunk to the next (a block of 160 threads at two blocks an SM may
 *     use 200 registers a thread). It waits on `full`, and once every
 *     thread of a warp has read the stage, that warp's lane 0 arrives on
 *     `empty` (four arrivals free a stage);
 *   - the consumers meet at named barrier 1 (128 threads), never at
 *     __syncthreads: the producer runs its own loop.
 * Shared memory at N 128: two stages of x (8 KiB), B and C (16 KiB each),
 * the entering state (16 KiB), y on its way out (8 KiB): 106 KiB, two
 * blocks an SM, 10 warps. y leaves by a bulk copy that is waited for only
 * when the next chunk's y is about to be written.
 *
 * Segments as version 14: at b·h under two walks an SM, a (b, h) is cut
 * into segments whose pass 0 computes the state they add (x and B only)
 * and hands it on, then pass 1 walks again with outputs. The producer
 * issues the same sequence of chunks (pass 0's without C).
 *
 * FLOPs a (b, h, chunk of 64), N 128, p 64: 2QpN for the state, 2QpN for
 * C·S_in, 2·64²·(N + p) for the diagonal tile: 3.7 MFLOP, 20% fewer a step
 * than chunks of 128 (no off-diagonal tiles); exps and bytes as version 12,
 * without the ring. */
#ifndef SSD_WGMMA_WS_CUH
#define SSD_WGMMA_WS_CUH

#include "ssd_wgmma.cuh"
#include "wgmma_walk.cuh"

#define WS_STAGES 2     // the tiles' ring: chunk c + 1's copies land while chunk c computes
#define WS_THREADS 160  // a consumer warpgroup (threads 0-127) and a producer warp

/* The consumers' barrier: named barrier 1, their 128 threads. */
static __device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, 128;" ::: "memory"); }

/* A walk's place and its shared memory. */
struct WsWalk {
    int seg, c_first, c_end;  // segment seg: chunks c_first .. c_end − 1 of 64
    int b, h, g;
    int64_t state_row;        // bh: its row of h0 and final_state
    bool last_seg;
    float *seg_end;           // fp32, fragment order: S_seg, published for segment seg + 1
    const float *prev_end;    // fp32, fragment order: S_{seg−1} (seg > 0)
    unsigned char *stages;    // WS_STAGES x [x (64, 64), B (64, 64·SLABS), C (64, 64·SLABS)] 16-bit, swizzled
    unsigned char *Ss, *Ys;   // (64, 64·SLABS) 16-bit rows p: the entering state; (64, 64) 16-bit: y
    float *cum2, *dts, *vdt;  // (64,) fp32: decays of the chunk (chunk_decays)
    uint64_t *full, *empty;   // (WS_STAGES,) a stage's copies have landed; its consumers are done
};

/* Bytes of a (64, 64) 16-bit tile, and a stage's: x, B's and C's slabs. */
#define WS_TILE (64 * 128)
template <int SLABS>
static __host__ __device__ constexpr int ws_stage_bytes() { return (1 + 2 * SLABS) * WS_TILE; }

/* The producer (one lane): every chunk of the walk in the consumers' order,
 * pass 0's (x and B; segments but the last) then pass 1's (x, B and C). */
template <int SLABS>
static __device__ void ws_produce(const TmaMaps &maps, const WsWalk &w) {
    uint32_t k = 0;  // chunks issued: stage k % WS_STAGES, its use k / WS_STAGES
    for (int pass = w.last_seg ? 1 : 0; pass < 2; pass++) {
        const uint32_t bytes = (pass ? 1 + 2 * SLABS : 1 + SLABS) * WS_TILE;
        for (int c = w.c_first; c < w.c_end; c++, k++) {
            const int s = (int)(k % WS_STAGES), t0 = c * 64;
            if (k >= WS_STAGES) mbar_wait(&w.empty[s], ((k / WS_STAGES) & 1) ^ 1);
            unsigned char *st = w.stages + s * ws_stage_bytes<SLABS>();
            mbar_arrive_expect_tx(&w.full[s], bytes);
            tma_load_4d(st, &maps.x, &w.full[s], 0, w.h, t0, w.b);
#pragma unroll
            for (int sl = 0; sl < SLABS; sl++) {
                tma_load_4d(st + (1 + sl) * WS_TILE, &maps.B, &w.full[s], 64 * sl, w.g, t0, w.b);
                if (pass) tma_load_4d(st + (1 + SLABS + sl) * WS_TILE, &maps.C, &w.full[s], 64 * sl, w.g, t0, w.b);
            }
        }
    }
}

/* The consumers' pass over the walk's chunks (OUTPUTS: pass 1, else pass 0),
 * st the state entering the first (pass 0: zero), left holding the state
 * after the last; k: chunks consumed so far. Returns Σ cum_last, the
 * segment's decay in log2 units. */
template <typename T, int SLABS, bool OUTPUTS>
static __device__ __forceinline__ float ws_consume(const WgmmaArgs &a, const TmaMaps &maps, const WsWalk &w,
                                                   float (&st)[2][32], T *wts, uint32_t &k) {
    const int tid = thread_index(), lane = tid % 32;
    const T *dt_bh = static_cast<const T *>(a.dt) + (int64_t)w.b * a.L * a.H + w.h;  // dt[b, t, h] at t·H
    const float bias = a.dt_bias ? a.dt_bias[w.h] : 0.f, A = a.A[w.h];
    const uint32_t ss = smem_addr(w.Ss);
    /* dt of the chunk to come, as loaded: converted where it is used. */
    int64_t tn = (int64_t)w.c_first * 64 + tid;
    T dt_next = tid < 64 && tn < a.L ? dt_bh[tn * a.H] : from_float<T>(0.f);
    float seg_log2 = 0.f;
    for (int c = w.c_first; c < w.c_end; c++, k++) {
        const int64_t t0 = (int64_t)c * 64;
        const int len = (int)min((int64_t)64, a.L - t0), s = (int)(k % WS_STAGES);
        const float dt_raw = to_float(dt_next);
        tn = t0 + 64 + tid;
        if (c + 1 < w.c_end) dt_next = tid < 64 && tn < a.L ? dt_bh[tn * a.H] : from_float<T>(0.f);
        /* The chunk before's y has been read out of Ys (ordered before this
         * chunk's writes by the barriers below). */
        if (OUTPUTS && tid == 0) tma_store_wait<true>();
        const float cum_last = chunk_decays<T, 64, true>(dt_raw, len, bias, A, a.softplus, w.dts, w.cum2, w.vdt, wts);
        seg_log2 += cum_last;
        if (OUTPUTS) {
#pragma unroll
            for (int mt = 0; mt < SLABS; mt++) frag_to_smem<T>(ss, st[mt], mt);
            fence_async_smem();  // the state's stmatrix stores, before wgmma reads them
        }
        consumers_sync();  // wts, vdt and the entering state written
        unsigned char *stage = w.stages + s * ws_stage_bytes<SLABS>();
        const uint32_t xs = smem_addr(stage), bs = xs + WS_TILE, cs = bs + SLABS * WS_TILE;
        mbar_wait(&w.full[s], (k / WS_STAGES) & 1);

        /* ---- 1. S_out = exp(cum_last)·S_in + Σ_j (w_j B_j)ᵀ x_j, in the registers.
         * states = scale * states + new_states (_state_passing_fwd_kernel)
         * states = tl.dot(x, b) with x scaled by dt * exp(dA_cs_last - dA_cs) (_chunk_state_fwd_kernel) */
        const float chunk_decay = exp2_approx(cum_last);
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int e = 0; e < 32; e++) st[mt][e] *= chunk_decay;
        state_product<T, 1, SLABS>(st, bs, xs, wts, true);
        if (!OUTPUTS) {
            __syncwarp();
            if (lane == 0) mbar_arrive(&w.empty[s]);  // this warp has read x and B
            continue;
        }

        /* ---- 2. y = C·S_inᵀ·exp(cum_i) + the causal tile (P·x), then D·x and silu(z). */
        float yacc[32] = {};
        state_term_issue<T, 1, SLABS>(yacc, cs, ss);
        wgmma_wait<0>();
        wgmma_touch(yacc);
        causal_terms<T, 1, SLABS>(yacc, cs, bs, xs, w.cum2, w.dts, w.vdt);
        y_out_tma<T, false, false, false>(yacc, stage, w.Ys, a, &maps.y, w.b, w.h, t0, len);
        __syncwarp();
        if (lane == 0) mbar_arrive(&w.empty[s]);  // this warp has read x, B and C
    }
    return seg_log2;
}

/* SLABS: N rounded up to 64, over 64. One block walks one segment of one
 * (b, h): threads 0-127 compute, warp 4 copies. */
template <typename T, int SLABS>
__global__ void __launch_bounds__(WS_THREADS, 2) ssd_wgmma_ws_kernel(WgmmaArgs a, const __grid_constant__ TmaMaps maps) {
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    __shared__ int item;
    __shared__ alignas(8) uint64_t full[WS_STAGES], empty[WS_STAGES];
    const int tid = threadIdx.x;
    if (tid == 0) {
        item = atomicAdd(a.ticket, 1);
        for (int s = 0; s < WS_STAGES; s++) {
            mbar_init(&full[s], 1);   // the producer's arrival, and the bytes of the copies
            mbar_init(&empty[s], 4);  // lane 0 of each consumer warp
        }
    }
    __syncthreads();  // the block's last barrier of all its threads
    /* Work item (segment, b, h), segment-major, as version 14. */
    const int BH = (int)(a.batch * a.H);  // the launcher's check: items < 2^31
    WsWalk w;
    w.seg = item / BH;
    const int bh = item % BH;
    w.b = bh / (int)a.H;
    w.h = bh % (int)a.H;
    w.g = w.h / (int)(a.H / a.G);
    w.state_row = bh;
    w.c_first = w.seg * a.seg_chunks;
    w.c_end = min(a.nchunks, w.c_first + a.seg_chunks);
    w.last_seg = w.seg == a.segments - 1;
    w.seg_end = a.ring + (int64_t)item * a.ring_slot;
    w.prev_end = w.seg > 0 ? a.ring + ((int64_t)item - BH) * a.ring_slot : nullptr;
    w.stages = smem;
    w.Ss = w.stages + WS_STAGES * ws_stage_bytes<SLABS>();
    w.Ys = w.Ss + SLABS * WS_TILE;
    w.cum2 = reinterpret_cast<float *>(w.Ys + WS_TILE);
    w.dts = w.cum2 + 64;
    w.vdt = w.dts + 64;
    T *wts = reinterpret_cast<T *>(w.vdt + 64);  // (64,) 16-bit: dt_j·exp(cum_last − cum_j)
    w.full = full;
    w.empty = empty;

    if (tid >= 128) {
        if (tid == 128) ws_produce<SLABS>(maps, w);
        return;
    }
    float st[2][32];  // the state, n-tiles 0 and 1 in fragment order
    uint32_t k = 0;
    if (!w.last_seg) {
        /* ---- Pass 0: the segment's own state from zero, then
         * S_seg = exp(Σ dA)·S_{seg−1} + it, published for segment seg + 1. */
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int e = 0; e < 32; e++) st[mt][e] = 0.f;
        const float seg_decay = exp2_approx(ws_consume<T, SLABS, false>(a, maps, w, st, wts, k));
        if (tid == 0 && w.seg > 0)
            while (load_acquire(a.published + bh) < w.seg) __nanosleep(64);
        consumers_sync();
#pragma unroll
        for (int mt = 0; mt < SLABS; mt++) {
            float before[32];
            entering_state(before, a, w.state_row, w.seg, w.prev_end, mt);
#pragma unroll
            for (int e = 0; e < 32; e++) before[e] = st[mt][e] + seg_decay * before[e];
            frag_store(w.seg_end, before, mt);
        }
        consumers_sync();  // the warpgroup's writes of S_seg happen before thread 0's release
        if (tid == 0) store_release(a.published + bh, w.seg + 1);
    } else if (w.seg > 0) {
        /* The last segment makes no pass 0: it waits here for S_{seg−1}. */
        if (tid == 0)
            while (load_acquire(a.published + bh) < w.seg) __nanosleep(64);
        consumers_sync();
    }
    /* ---- Pass 1 from S_{seg−1} (h0 for the first segment), with the outputs. */
#pragma unroll
    for (int mt = 0; mt < 2; mt++) {
        if (mt < SLABS) entering_state(st[mt], a, w.state_row, w.seg, w.prev_end, mt);
        else
#pragma unroll
            for (int e = 0; e < 32; e++) st[mt][e] = 0.f;
    }
    ws_consume<T, SLABS, true>(a, maps, w, st, wts, k);
    if (w.last_seg) {
        float *fs = a.final_state + w.state_row * a.P * a.N;  // (p, N) fp32
#pragma unroll
        for (int mt = 0; mt < SLABS; mt++)
#pragma unroll
            for (int e = 0; e < 32; e++) {
                int pi, ni;
                frag_pn(mt, e, &pi, &ni);
                if (pi < a.P && ni < a.N) fs[pi * a.N + ni] = st[mt][e];
            }
    }
    if (tid == 0) tma_store_wait<true>();  // the last y has been read out of shared memory
}

#endif
