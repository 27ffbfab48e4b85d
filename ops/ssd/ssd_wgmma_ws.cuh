/* 05_ssd_mamba2, GPU, versions 18-19: the walk of version 14 split by role
 * (sm_90a), and its launch (ws_launch, at the end; 05's wgmma.cu calls it).
 * Versions 22-23 (05's wgmma_ws_varlen.cu) run it with PACKED over a row of
 * sequences, each walk a segment of one from the plan (ws_walk_of_packed).
 * This file holds the segments, the kernel and its launch; the ring of
 * stages with the producer and storer roles is in ssd_wgmma_ws_ring.cuh, a
 * chunk on the consumer warpgroup in ssd_wgmma_ws_chunk.cuh.
 * Versions 20-21 (05's wgmma_ws_split.cuh) run the walk's pieces (the decays,
 * P's fragments, the segments' states, ws_place) on split fp32 operands.
 * 06_bidirectional's versions 9-10 run the same walk once in each direction
 * (06's wgmma_ws.cu): the template's BACK, SHIFT and ADD say how a walk
 * differs from 18's.
 * BACK takes the chunks from the last to the first, its decays summed from
 * each step to the chunk's end and its mask above the diagonal; SHIFT
 * (Hydra) gives row i the C and the decay end of step i − 1 (BACK: i + 1);
 * ADD adds to y what the other direction's walk left there.
 *  18 ssd_wgmma_ws       one warpgroup walks a (b, h) in chunks of 64, the
 *                        state in its registers; a producer warp brings the
 *                        chunks' tiles and decays into a ring of two stages,
 *                        a storer warp takes y out and brings z in
 *  19 ssd_wgmma_ws_bf16  version 18 in bf16
 *
 * Version 14's block is its own copy engine's client: thread 0 issues chunk
 * c + 1's copies once every warp has read chunk c's tiles (one stage, so
 * the copies start late in the chunk and the next chunk may wait for them),
 * and its state goes through L2 between chunks because two warpgroups (8
 * warps) a block at two blocks an SM leave 128 registers a thread. Here
 * the work is split by role (warp specialization), a block being two
 * warpgroups:
 *   - the producer warpgroup gives its registers back (setmaxnreg, 40 a
 *     thread) and two of its warps leave; the first walks the same chunks
 *     ahead of the consumers: for each chunk it reads the chunk's dt (the
 *     loads' latency runs during the next wait), waits until a stage is free
 *     (its `empty` barrier), lane 0 issues the chunk's x, B and C copies into
 *     it, and all 32 lanes form the chunk's decays (dt, its cumulative sum,
 *     the state product's weights) into the stage and arrive on its `full`
 *     barrier, which completes with the copies' bytes. With two stages,
 *     chunk c + 1's tiles and decays come while chunk c computes;
 *   - the second, the storer (ws_store), copies each chunk's y out of its
 *     tile Ys once the consumers have written it (`ys_written`), waits
 *     until the copy has read Ys, brings the next chunk's z into it, and
 *     hands it back (`ys_free`): the consumers issue no copy;
 *   - the consumer warpgroup takes the registers (216 a thread) and
 *     computes chunks of 64, so that it holds a chunk's 64 rows alone and
 *     the whole state, two n-tiles of 32 accumulators a thread, stays in its
 *     registers from one chunk to the next. A chunk's products are issued
 *     together and waited for twice (ws_consume); each thread arrives on
 *     `empty` once it is done with the stage (128 arrivals free it: each
 *     reader's own release, which compute-sanitizer's racecheck follows);
 *   - the consumers meet at named barrier 1 (128 threads), never at
 *     __syncthreads: the producer runs its own loop.
 * Shared memory at N 128: two stages of x (8 KiB), B and C (16 KiB each)
 * and decays, the entering state (16 KiB), z and then y (8 KiB): 107 KiB,
 * two blocks an SM.
 *
 * Segments: at b·h under two walks an SM, a (b, h) is cut into segments
 * (as version 14) whose pass 0 computes the state they add (x and B only),
 * then pass 1 walks again with outputs. Version 14 hands the states on
 * in a chain (segment s waits for s − 1's end state, adds its own, and
 * publishes its end state for s + 1: at batch 1 a chain of seven
 * hand-offs); here each segment publishes its own state and decay at once,
 * and segment s sums the entering state from all of them
 * (ws_sum_published): one wait, and at most s loads of a state from L2.
 * The producer issues the same sequence of chunks (pass 0's without C).
 *
 * FLOPs a (b, h, chunk of 64), N 128, p 64: 2QpN for the state, 2QpN for
 * C·S_in, 2·64²·(N + p) for the diagonal tile: 3.7 MFLOP, 18% fewer a step
 * than chunks of 128 (no off-diagonal tiles); bytes as version 12, without
 * the ring; P's exps about 1,400 a chunk (one serves both of a thread's
 * rows up to the first one, and the warps skip the columns past theirs),
 * where an exp an element below the diagonal is 2,080.
 *
 * What bounds it: the latency of each chunk's chain in one warpgroup
 * (products, P, the next entering state, y), with 8 computing warps an SM
 * to overlap them (versions.md and tuning.md have the measurements). */
#ifndef SSD_WGMMA_WS_CUH
#define SSD_WGMMA_WS_CUH

#include <limits.h>

#include "cuda_check.h"
#include "launch.cuh"
#include "ssd_wgmma.cuh"
#include "ssd_wgmma_ws_ring.cuh"
#include "ssd_wgmma_ws_chunk.cuh"

/* n-tile mt of h0 of the walk's (b, h) (zero without); NE 16: the 32
 * columns of p from p_first of one of version 21's two warpgroups (NE 32:
 * the one warpgroup of threads 0-127). WHOLE (versions 22-23, an h0 a
 * request): as ws_state_store's, a thread inside p and N loads by rows with
 * no test an element (with the test, each load is a branch of its own). */
template <int NE, bool WHOLE = false>
static __device__ __forceinline__ void ws_h0_tile(float (&v)[NE], const WgmmaArgs &a, const WsWalk &w, int mt,
                                                  int p_first = 0) {
#pragma unroll
    for (int e = 0; e < NE; e++) v[e] = 0.f;
    if (!a.h0) return;
    const int P = (int)a.P, N = (int)a.N, lane = thread_index() % 32, p0 = p_first + 2 * (lane % 4),
              n0 = mt * 64 + 16 * ws_frag_warp<NE>(thread_index()) + lane / 4;
    const float *src = a.h0 + (int64_t)w.bh * a.P * a.N + p0 * N + n0;  // (p, N) fp32 of this (b, h)
    const bool inside = p0 + (NE / 4 - 1) * 8 + 1 < P && n0 + 8 < N;   // every element of the tile
    if (WHOLE && inside) {
#pragma unroll
        for (int r = 0; r < NE / 2; r++) {
            const int e = ws_row_elem(r);
            const float *at = src + ws_row_offset(r, N);
            v[e] = at[0];
            v[e + 2] = at[8];
        }
        return;
    }
#pragma unroll
    for (int e = 0; e < NE; e++)
        if (inside || (p0 + (e / 4) * 8 + (e & 1) < P && n0 + (e & 2) * 4 < N)) v[e] = src[ws_frag_offset(e, N)];
}

/* Segment j's slot of the ring: its state S_j^pub in fragment order (slabs
 * n-tiles), then at ws_slot_decay its decay exp(Σ dA) over the segment,
 * padded to 128 bytes (the launcher's ring_slot is ws_slot_floats). */
static __host__ __device__ constexpr int ws_slot_decay(int slabs) { return slabs * 64 * 64; }
static __host__ __device__ constexpr int64_t ws_slot_floats(int slabs) { return ws_slot_decay(slabs) + 32; }
/* Segment j's item of the flags and slots: the work item (segment j, b, h);
 * PACKED, item h of the sequence's slot group slot0 + j (ws_varlen_plan). */
template <bool PACKED>
static __device__ __forceinline__ int64_t ws_slot_item(const WgmmaArgs &a, const WsWalk &w, int j) {
    return PACKED ? (int64_t)(w.slot0 + j) * a.H + w.h : (int64_t)j * a.batch * a.H + w.bh;
}
template <bool PACKED = false>
static __device__ __forceinline__ float *ws_slot(const WgmmaArgs &a, const WsWalk &w, int j) {
    return a.ring + ws_slot_item<PACKED>(a, w, j) * a.ring_slot;
}

/* The state entering segment seg > 0, summed from what the segments before
 * it published (each its own state from zero, the first's with h0 in it),
 * the latest first: S_{seg−1} = Σ_{j<seg} (Π_{j<i<seg} decay_i)·S_j^pub.
 * No segment waits for another's sum, so the hand-offs are not a chain:
 * every segment waits once, for the pass 0 of those before it.
 * states = scale * states + new_states (_state_passing_fwd_kernel), unrolled */
template <int SLABS, int WGS = 1, int NE, bool PACKED = false>
static __device__ __forceinline__ void ws_sum_published(float (&st)[2][NE], const WgmmaArgs &a, const WsWalk &w) {
    for (int j = thread_index(); j < w.seg; j += 128 * WGS)  // this thread's share of the flags
        while (load_acquire(a.published + ws_slot_item<PACKED>(a, w, j)) == 0) __nanosleep(64);
    consumers_sync<WGS>();  // every flag seen: the slots' stores happened before the loads below
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int e = 0; e < NE; e++) st[mt][e] = 0.f;
    /* With WGS 2, warpgroup wg's values are values 16·wg .. of the slot's 32. */
    const int part = WGS > 1 ? (thread_index() / 128) * NE * 128 : 0;
    float f = 1.f;  // Π decay_i over the segments between j and seg
    for (int j = w.seg - 1; j >= 0; j--) {
        const float *slot = ws_slot<PACKED>(a, w, j);
#pragma unroll
        for (int mt = 0; mt < SLABS; mt++) {
            float v[NE];
            frag_load(v, slot + part, mt, false);
#pragma unroll
            for (int e = 0; e < NE; e++) st[mt][e] = fmaf(f, v[e], st[mt][e]);
        }
        f *= __ldcg(slot + ws_slot_decay(SLABS));
    }
}

/* The walk of work item `item` (segment, b, h), segment-major: its place in
 * the problem (its shared memory is the kernel's to set). */
static __device__ __forceinline__ WsWalk ws_walk_of(const WgmmaArgs &a, int item) {
    const int BH = (int)(a.batch * a.H);  // the launcher's check: items < 2^31
    WsWalk w;
    w.seg = item / BH;
    const int bh = item % BH;
    w.b = bh / (int)a.H;
    w.h = bh % (int)a.H;
    w.g = w.h / (int)(a.H / a.G);
    w.bh = bh;
    w.c_first = w.seg * a.seg_chunks;
    w.c_end = min(a.nchunks, w.c_first + a.seg_chunks);
    w.last_seg = w.seg == a.segments - 1;
    return w;
}

/* Versions 22-23: work item `item` is head item % H of the plan's group
 * item / H, a segment of one sequence of the row (ws_varlen_plan, 05's
 * wgmma_ws_varlen.cu, writes the groups, each WS_GROUP_INTS int32: the
 * segment, its chunks c_first .. c_end − 1 of the sequence, the sequence's
 * slot group, its first chunk_states index, its steps t_begin .. t_end − 1,
 * and the sequence, −1 for a group past the plan's last). */
#define WS_GROUP_INTS 8
static __device__ __forceinline__ WsWalk ws_walk_of_packed(const WgmmaArgs &a, int item) {
    const int4 *g = reinterpret_cast<const int4 *>(a.walk_plan + (int64_t)(item / (int)a.H) * WS_GROUP_INTS);
    const int4 g0 = g[0], g1 = g[1];
    WsWalk w;
    w.seg = g0.x;
    w.c_first = g0.y;
    w.c_end = g0.z;
    w.slot0 = g0.w;
    w.first_cs = g1.x;
    w.t_begin = g1.y;
    w.t_end = g1.z;
    w.b = 0;
    w.h = item % (int)a.H;
    w.g = w.h / (int)(a.H / a.G);
    w.bh = g1.w * (int)a.H + w.h;  // the sequence's row of h0 and final_state (−H past the plan's groups)
    w.last_seg = w.t_begin + (int64_t)w.c_end * 64 >= w.t_end;
    return w;
}

/* Pass 0's end: the segment's own state st (the first segment's with h0
 * carried through it, seg_decay being the segment's decay) and seg_decay into
 * its slot, then its flag raised, without waiting for any other segment. */
template <int SLABS, int WGS = 1, int NE, bool PACKED = false>
static __device__ __forceinline__ void ws_publish(float (&st)[2][NE], const WgmmaArgs &a, const WsWalk &w, int item,
                                                  float seg_decay) {
    float *slot = ws_slot<PACKED>(a, w, w.seg);
    const int wg = WGS > 1 ? thread_index() / 128 : 0;  // WGS 2: values 16·wg .. of the slot's 32, p from 32·wg
#pragma unroll
    for (int mt = 0; mt < SLABS; mt++) {
        if (w.seg == 0) {
            float h0[NE];
            ws_h0_tile<NE, PACKED>(h0, a, w, mt, 2 * NE * wg);
#pragma unroll
            for (int e = 0; e < NE; e++) st[mt][e] = fmaf(seg_decay, h0[e], st[mt][e]);
        }
        frag_store(slot + wg * NE * 128, st[mt], mt);
    }
    if (threadIdx.x == 0) __stcg(slot + ws_slot_decay(SLABS), seg_decay);
    consumers_sync<WGS>();  // the warpgroups' writes of the slot happen before thread 0's release
    if (threadIdx.x == 0) store_release(a.published + (PACKED ? ws_slot_item<PACKED>(a, w, w.seg) : item), 1);
}

/* The walk's last state to final_state (ws_state_store). */
template <int NE, bool WHOLE = false>
static __device__ __forceinline__ void ws_final_state(const float (&st)[2][NE], const WgmmaArgs &a, const WsWalk &w,
                                                      int slabs, int p_first = 0) {
    ws_state_store<NE, WHOLE>(st, a, a.final_state, w.bh, slabs, p_first);
}

/* SLABS: N rounded up to 64, over 64. One block walks one segment of one
 * (b, h): threads 0-127 compute, warp 4 copies and forms the decays, warp 5
 * stores y and brings z (ADD: the other direction's y). BACK, SHIFT, ADD:
 * 06's walks (ws_launch). PACKED: versions 22-23's walks of a row's
 * sequences, all their items by ticket, in the plan's order. */
template <typename T, int SLABS, bool BACK = false, int SHIFT = 0, bool ADD = false, bool PACKED = false>
__global__ void __launch_bounds__(WS_THREADS, 2) ssd_wgmma_ws_kernel(WgmmaArgs a, const __grid_constant__ WsMaps maps) {
    static_assert(SHIFT == 0 || SHIFT == 1, "Hydra's shift is one step");
    static_assert(!PACKED || (!BACK && !SHIFT && !ADD), "packed rows: 05's forward walk");
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    __shared__ int item;
    __shared__ alignas(8) uint64_t full[WS_STAGES], empty[WS_STAGES], ys_free, ys_written;
    __shared__ alignas(8) float Dcol[64];  // (64,) fp32: D of each column of y
    const int tid = threadIdx.x;
    if (tid == 0) {
        item = PACKED || a.segments > 1 ? atomicAdd(a.ticket, 1) : (int)blockIdx.x;  // one segment: no order to keep
        for (int s = 0; s < WS_STAGES; s++) {
            mbar_init(&full[s], 32);  // the producer's lanes, and the bytes of the copies
            mbar_init(&empty[s], 128);  // each consumer thread, after its last read of the stage
        }
        mbar_init(&ys_free, 1);     // the storer, and z's bytes
        mbar_init(&ys_written, 4);  // lane 0 of each consumer warp
    }
    __syncthreads();  // the block's last barrier of all its threads
    /* Work item (segment, b, h), segment-major, as version 14: with segments,
     * taken by ticket, so that a segment's block starts only after those of
     * the segments before it (it waits for their states). */
    WsWalk w = PACKED ? ws_walk_of_packed(a, item) : ws_walk_of(a, item);
    if (PACKED && w.seg < 0) return;  // the grid is the plan's bound on its items
    w.stages = smem;
    w.Ss = w.stages + WS_STAGES * ws_stage_bytes<SLABS>();
    w.Ys = w.Ss + SLABS * WS_TILE;
    w.decays = w.Ys + WS_TILE;
    w.full = full;
    w.empty = empty;
    w.ys_free = &ys_free;
    w.ys_written = &ys_written;
    w.Dcol = Dcol;

    if (tid >= 128) {
        warpgroup_regs_dec<WS_REGS_PRODUCER>();
        if (tid < 160) ws_produce<T, SLABS, BACK, SHIFT, PACKED>(a, maps.t, w);
        else if (PACKED ? tid < 192 : tid == 160) ws_store<T, BACK, ADD, PACKED>(a, maps, w);
        return;
    }
    warpgroup_regs_inc<WS_REGS_CONSUMER>();
    float st[2][32] = {};  // the state, n-tiles 0 and 1 in fragment order (1 stays zero at SLABS 1)
    uint32_t k = 0;
    if (!w.last_seg) {
        /* ---- Pass 0: the segment's own state from zero (the first segment's
         * with h0 carried through it: S_0^pub = S_0), published with the
         * segment's decay without waiting for any other segment. */
        ws_publish<SLABS, 1, 32, PACKED>(st, a, w, item,
                                         exp2_approx(ws_consume<T, SLABS, false, BACK, SHIFT, ADD, PACKED>(a, w, st, k)));
    }
    /* ---- Pass 1 from S_{seg−1} (h0 for the first segment), with the outputs;
     * D of each column of y, read once (the barrier below orders it). */
    if (tid < 64) Dcol[tid] = D_of_column(a, w.h, a.D && !a.D_per_channel ? a.D[w.h] : 0.f, tid);
    if (w.seg > 0) ws_sum_published<SLABS, 1, 32, PACKED>(st, a, w);
#pragma unroll
    for (int mt = 0; mt < SLABS; mt++) {
        if (w.seg == 0) ws_h0_tile<32, PACKED>(st[mt], a, w, mt);
        frag_to_smem<T>(smem_addr(w.Ss), st[mt], mt);
    }
    fence_async_smem();  // the state's stmatrix stores, before wgmma reads them
    consumers_sync();
    ws_consume<T, SLABS, true, BACK, SHIFT, ADD, PACKED>(a, w, st, k);
    if (w.last_seg && a.final_state) ws_final_state<32, PACKED>(st, a, w, SLABS);
}


/* ---- Host: the launch of the walks ---- */

/* Why the walks of versions 18-19 and 06's 9-10 cannot run s, or NULL.
 * Segments number at most the chunks: the bound needs no device
 * (ws_items asks for the SMs). */
static inline const char *ws_unsupported(const SsdShape *s) {
    const char *why = wgmma_unsupported(s, true);
    if (why) return why;
    if (ceil_div(s->seqlen, 64) * s->batch * s->heads > INT_MAX) return "more than 2^31 (segment, b, h) work items";
    return NULL;
}

/* Walks in chunks of 64, per_sm blocks an SM (versions 18-19 and 06's 9-10:
 * two; versions 20-21: one): work items (segment, b, h). */
static inline int64_t ws_items(const SsdShape *s, int per_sm = 2) {
    int segments = 1, seg_chunks = 1;
    walk_segments(s, 64, per_sm, &segments, &seg_chunks);
    return segments * s->batch * s->heads;
}
/* A flag per work item and the ticket, then each work item's slot
 * (ws_slot_floats: the state its segment publishes and the segment's decay). */
static inline size_t ws_workspace_bytes(const SsdShape *s, int per_sm = 2) {
    const int64_t items = ws_items(s, per_sm);
    return counter_bytes(items) + (size_t)(items * ws_slot_floats(wgmma_slabs(s))) * sizeof(float);
}

/* The walks' segments, flags, ticket and slots set in a and placed in
 * workspace (ws_workspace_bytes), the flags and the ticket zeroed where there
 * are segments (one segment uses neither); returns the work items. */
static inline int64_t ws_place(WgmmaArgs *a, const SsdShape *s, void *workspace, int per_sm) {
    int segments = 1, seg_chunks = 1;
    walk_segments(s, 64, per_sm, &segments, &seg_chunks);
    const int64_t items = segments * s->batch * s->heads;
    a->nchunks = (int)ceil_div(s->seqlen, 64);
    a->segments = segments;
    a->seg_chunks = seg_chunks;
    a->published = static_cast<int *>(workspace);
    a->ticket = a->published + items;
    a->ring = reinterpret_cast<float *>(static_cast<char *>(workspace) + counter_bytes(items));
    a->ring_slot = ws_slot_floats(wgmma_slabs(s));
    if (segments > 1) cuda_check(cudaMemsetAsync(workspace, 0, counter_bytes(items)));
    return items;
}

/* One launch of the walks over every (b, h), a holding the inputs, y and
 * final_state (may be NULL). maps.ys_in: z's map, or with ADD y's. */
template <typename T, bool BACK, int SHIFT, bool ADD>
static void ws_launch(WgmmaArgs a, const WsMaps &maps, const SsdShape *s, void *workspace) {
    const int slabs = wgmma_slabs(s);
    const size_t smem = slabs == 2 ? ws_smem_bytes<2>() : ws_smem_bytes<1>();
    void (*kernel)(WgmmaArgs, WsMaps) = slabs == 2 ? ssd_wgmma_ws_kernel<T, 2, BACK, SHIFT, ADD>
                                                   : ssd_wgmma_ws_kernel<T, 1, BACK, SHIFT, ADD>;
    static size_t allowed[2];  // the shared memory each kernel is opted in to
    allow_smem(kernel, smem, &allowed[slabs - 1]);
    const int64_t items = ws_place(&a, s, workspace, 2);
    kernel<<<(unsigned)items, WS_THREADS, smem>>>(a, maps);
    cuda_check_launch();
}

#endif
