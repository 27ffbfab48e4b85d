/* 05_ssd_mamba2, GPU, versions 8-15 and 18-19: the launchers of the fused
 * SSD on Hopper's warpgroup matrix product (sm_90a). The kernels, and what
 * each version changes and why, are in wgmma_kernel.cuh (8-13),
 * wgmma_walk.cuh (14-15) and ops/ssd/ssd_wgmma_ws.cuh (18-19, shared with
 * 06, with its pieces in ssd_wgmma_ws_ring.cuh and ssd_wgmma_ws_chunk.cuh),
 * the pieces of a chunk they use in ops/ssd/ssd_wgmma.cuh. */
#include "kernels.h"

#include <limits.h>
#include <string.h>

#include "cuda_check.h"
#include "launch.cuh"
#include "wgmma_kernel.cuh"
#include "wgmma_walk.cuh"
#include "ssd_wgmma_ws.cuh"

/* ---- launch ---- */

static size_t wgmma_smem_bytes(const SsdShape *s) {
    const size_t Q = (size_t)wgmma_chunk(s), slabs = (size_t)wgmma_slabs(s);
    const size_t region = (Q > 64 * slabs ? Q : 64 * slabs) * 128;  // x or the state, by turns
    return 1024 + 2 * slabs * Q * 128 + 2 * region + Q * (3 * sizeof(float) + 2);
}

static int64_t wgmma_items(const SsdShape *s, int heads_per_block) {
    return ceil_div(s->seqlen, wgmma_chunk(s)) * s->batch * (s->heads / heads_per_block);
}

/* Version 10's heads a block: the most (a power of two dividing the heads of
 * a group) that still leaves 4 blocks for every place the GPU holds (2 an SM),
 * so that the last wave is short. */
static int wgmma_heads_per_block(const SsdShape *s) {
    int hb = 1;
    while ((s->heads / s->groups) % (2 * hb) == 0 && wgmma_items(s, 2 * hb) >= 4 * 2 * (int64_t)sm_count()) hb *= 2;
    return hb;
}

extern "C" const char *ssd_fused_wgmma_unsupported(const SsdShape *s) {
    const char *why = wgmma_unsupported(s, false);
    if (why) return why;
    if (wgmma_items(s, 1) > INT_MAX) return "more than 2^31 (chunk, b, h) work items";
    return NULL;
}

/* Versions 8-17: one flag per (b, h) and the ticket (counter_bytes,
 * ops/ssd/ssd_wgmma.cuh), then the ring: (b, h, 2) slots of
 * 64 x 64·slabs fp32, enough for either order of a state. */
static size_t wgmma_counter_bytes(const SsdShape *s) { return counter_bytes(s->batch * s->heads); }
static int64_t wgmma_ring_slot(const SsdShape *s) { return 64 * 64 * (int64_t)wgmma_slabs(s); }

extern "C" size_t ssd_fused_wgmma_workspace(const SsdShape *s) {
    return wgmma_counter_bytes(s) + (size_t)(s->batch * s->heads * 2 * wgmma_ring_slot(s)) * sizeof(float);
}

/* Versions 12-13: the maps of x, B, C (boxes of a chunk) and y (of 64 steps). */
template <typename T>
static TmaMaps wgmma_maps(const SsdTensors *t, int Q) {
    const bool bf16 = std::is_same<T, __nv_bfloat16>::value;
    TmaMaps m;
    m.x = wgmma_map_bhp(t->x, &t->s, bf16, Q);
    m.B = wgmma_map_bgn(t->B, &t->s, bf16, Q);
    m.C = wgmma_map_bgn(t->C, &t->s, bf16, Q);
    m.y = wgmma_map_bhp(t->y, &t->s, bf16, 64);
    return m;
}

/* The kernels' arguments; flags: the flags before the ticket and the ring
 * (counter_bytes); ring_slot: floats a state of the ring takes; Q: the
 * kernel's chunk (wgmma_chunk, or 64 for versions 16-19). */
static WgmmaArgs wgmma_args(const SsdTensors *t, void *workspace, int64_t flags, int64_t ring_slot,
                            int heads_per_block, int Q) {
    const SsdShape *s = &t->s;
    WgmmaArgs a;
    a.x = t->x; a.dt = t->dt; a.B = t->B; a.C = t->C; a.z = t->z;
    a.A = t->A; a.D = t->D; a.dt_bias = t->dt_bias; a.h0 = t->initial_states;
    a.y = t->y; a.final_state = t->final_state;
    a.published = static_cast<int *>(workspace);
    a.ticket = a.published + flags;
    a.ring = reinterpret_cast<float *>(static_cast<char *>(workspace) + counter_bytes(flags));
    a.ring_slot = ring_slot;
    a.batch = s->batch; a.L = s->seqlen; a.H = s->heads; a.P = s->headdim; a.G = s->groups; a.N = s->dstate;
    a.nchunks = (int)ceil_div(s->seqlen, Q);
    a.heads_per_block = heads_per_block;
    a.segments = 1; a.seg_chunks = a.nchunks;
    a.cu_seqlens = nullptr; a.chunk_states = nullptr; a.nseq = 0; a.problem_chunk = s->chunk;
    a.walk_plan = nullptr; a.seq_first_chunk = nullptr;
    a.softplus = s->softplus; a.D_per_channel = s->D_per_channel;
    return a;
}

/* Before a launch: the flags and the ticket zeroed, and with frag_ring, h0
 * put in the ring in the accumulators' order (ring_from_h0). */
static void ring_start(const WgmmaArgs *a, const SsdShape *s, void *workspace, bool frag_ring) {
    cuda_check(cudaMemsetAsync(workspace, 0, wgmma_counter_bytes(s)));
    if (frag_ring && a->h0) {
        ring_from_h0<<<1024, 256>>>(a->ring, a->h0, s->batch * s->heads, s->headdim, s->dstate, a->ring_slot);
        cuda_check_launch();
    }
}

template <typename T, bool FRAG_RING, bool HEAD_LOOP, bool TMA = false>
static void launch_wgmma(const SsdTensors *t, void *workspace, int heads_per_block) {
    const SsdShape *s = &t->s;
    const WgmmaArgs a = wgmma_args(t, workspace, s->batch * s->heads,
                                   FRAG_RING ? wgmma_ring_slot(s) : s->headdim * s->dstate, heads_per_block,
                                   wgmma_chunk(s));
    const int Q = wgmma_chunk(s);
    const size_t smem = wgmma_smem_bytes(s);
    const bool two = wgmma_slabs(s) == 2;
    void (*kernel)(WgmmaArgs, TmaMaps) =
        Q == 128 ? (two ? ssd_fused_wgmma_kernel<T, 2, 2, FRAG_RING, HEAD_LOOP, TMA>
                        : ssd_fused_wgmma_kernel<T, 2, 1, FRAG_RING, HEAD_LOOP, TMA>)
                 : (two ? ssd_fused_wgmma_kernel<T, 1, 2, FRAG_RING, HEAD_LOOP, TMA>
                        : ssd_fused_wgmma_kernel<T, 1, 1, FRAG_RING, HEAD_LOOP, TMA>);
    TmaMaps maps;
    if (TMA) maps = wgmma_maps<T>(t, Q);
    else memset(&maps, 0, sizeof maps);
    static size_t allowed[2][2];  // the shared memory each of the four kernels is opted in to
    allow_smem(kernel, smem, &allowed[Q == 128][two]);
    ring_start(&a, s, workspace, FRAG_RING);
    kernel<<<(unsigned)wgmma_items(s, heads_per_block), Q * 2, smem>>>(a, maps);
    cuda_check_launch();
}

extern "C" void ssd_fused_wgmma(const SsdTensors *t, void *workspace) {
    launch_wgmma<__half, false, false>(t, workspace, 1);
}
extern "C" void ssd_wgmma_frag_ring(const SsdTensors *t, void *workspace) {
    launch_wgmma<__half, true, false>(t, workspace, 1);
}
extern "C" void ssd_wgmma_heads(const SsdTensors *t, void *workspace) {
    launch_wgmma<__half, true, true>(t, workspace, wgmma_heads_per_block(&t->s));
}
extern "C" void ssd_wgmma_frag_ring_bf16(const SsdTensors *t, void *workspace) {
    launch_wgmma<__nv_bfloat16, true, false>(t, workspace, 1);
}
extern "C" const char *ssd_wgmma_tma_unsupported(const SsdShape *s) {
    const char *why = wgmma_unsupported(s, true);
    if (why) return why;
    if (wgmma_items(s, 1) > INT_MAX) return "more than 2^31 (chunk, b, h) work items";
    return NULL;
}
extern "C" void ssd_wgmma_tma(const SsdTensors *t, void *workspace) {
    launch_wgmma<__half, true, false, true>(t, workspace, 1);
}
extern "C" void ssd_wgmma_tma_bf16(const SsdTensors *t, void *workspace) {
    launch_wgmma<__nv_bfloat16, true, false, true>(t, workspace, 1);
}

/* Version 16 (wgmma_split.cu): version 12's arguments and ring at chunks of
 * 64, the ring started. */
WgmmaArgs wgmma_split_args(const SsdTensors *t, void *workspace) {
    WgmmaArgs a = wgmma_args(t, workspace, t->s.batch * t->s.heads, wgmma_ring_slot(&t->s), 1, 64);
    ring_start(&a, &t->s, workspace, true);
    return a;
}

/* Versions 14-15: the segments of each (b, h)'s walk (walk_segments,
 * ops/ssd/ssd_wgmma.cuh); version 14's blocks an SM: two at chunks of 128, three at 64. */
static void walk14_segments(const SsdShape *s, int *segments, int *seg_chunks) {
    walk_segments(s, wgmma_chunk(s), wgmma_chunk(s) == 128 ? 2 : 3, segments, seg_chunks);
}

/* A packed row (s->nseq > 0) is walked a sequence at a time: chunk_states
 * at every chunk of the problem's size need the kernel's chunk to divide it. */
extern "C" const char *ssd_wgmma_walk_unsupported(const SsdShape *s) {
    const char *why = ssd_wgmma_tma_unsupported(s);
    if (why) return why;
    if (s->nseq && s->chunk % wgmma_chunk(s) != 0)
        return "packed: chunk_states every chunk steps need the kernel's chunk (64, or 128 from chunk 128) to divide it";
    if (s->nseq * s->heads > INT_MAX) return "more than 2^31 (sequence, h) work items";
    return NULL;
}

/* Work items: (segment, b, h), or (sequence, h) for a packed row. */
static int64_t walk_items(const SsdShape *s) {
    if (s->nseq) return s->nseq * s->heads;
    int segments = 1, seg_chunks = 1;
    walk14_segments(s, &segments, &seg_chunks);
    return segments * s->batch * s->heads;
}

/* The counters, then two states a work item: the walk's, and the one its
 * segment ends with (a packed row's walks are one segment: the first alone),
 * then a packed row's plan: first chunks (nseq int64), order (nseq int). */
static size_t walk_states_bytes(const SsdShape *s) {
    return (size_t)(walk_items(s) * (s->nseq ? 1 : 2) * wgmma_ring_slot(s)) * sizeof(float);
}
extern "C" size_t ssd_wgmma_walk_workspace(const SsdShape *s) {
    return wgmma_counter_bytes(s) + walk_states_bytes(s) + (size_t)s->nseq * (sizeof(int64_t) + sizeof(int));
}

/* pk: a packed row's sequences and chunk_states, or NULL. */
template <typename T, bool PACKED>
static void launch_walk(const SsdTensors *t, const SsdPacked *pk, void *workspace) {
    const SsdShape *s = &t->s;
    WgmmaArgs a = wgmma_args(t, workspace, s->batch * s->heads, wgmma_ring_slot(s), 1, wgmma_chunk(s));
    if (PACKED) {
        a.cu_seqlens = pk->cu_seqlens;
        a.chunk_states = pk->chunk_states;
        a.nseq = pk->nseq;
        a.problem_chunk = s->chunk;
        int64_t *first_chunk = reinterpret_cast<int64_t *>(reinterpret_cast<char *>(a.ring) + walk_states_bytes(s));
        int *order = reinterpret_cast<int *>(first_chunk + pk->nseq);
        packed_walk_plan<<<1, 1024>>>(pk->cu_seqlens, (int)pk->nseq, s->chunk, order, first_chunk);
        cuda_check_launch();
        a.walk_plan = order;
        a.seq_first_chunk = first_chunk;
    } else {
        walk14_segments(s, &a.segments, &a.seg_chunks);
    }
    const int Q = wgmma_chunk(s);
    const size_t smem = wgmma_smem_bytes(s);
    const bool two = wgmma_slabs(s) == 2;
    void (*kernel)(WgmmaArgs, TmaMaps) =
        Q == 128 ? (two ? ssd_wgmma_walk_kernel<T, 2, 2, PACKED> : ssd_wgmma_walk_kernel<T, 2, 1, PACKED>)
                 : (two ? ssd_wgmma_walk_kernel<T, 1, 2, PACKED> : ssd_wgmma_walk_kernel<T, 1, 1, PACKED>);
    const TmaMaps maps = wgmma_maps<T>(t, Q);
    static size_t allowed[2][2];  // the shared memory each of the four kernels is opted in to
    allow_smem(kernel, smem, &allowed[Q == 128][two]);
    ring_start(&a, s, workspace, false);
    kernel<<<(unsigned)(PACKED ? pk->nseq * s->heads : walk_items(s)), Q * 2, smem>>>(a, maps);
    cuda_check_launch();
}

extern "C" void ssd_wgmma_walk(const SsdTensors *t, void *workspace) {
    launch_walk<__half, false>(t, nullptr, workspace);
}
extern "C" void ssd_wgmma_walk_bf16(const SsdTensors *t, void *workspace) {
    launch_walk<__nv_bfloat16, false>(t, nullptr, workspace);
}
extern "C" void ssd_wgmma_walk_packed(const SsdPacked *pk, void *workspace) {
    launch_walk<__half, true>(&pk->t, pk, workspace);
}
extern "C" void ssd_wgmma_walk_bf16_packed(const SsdPacked *pk, void *workspace) {
    launch_walk<__nv_bfloat16, true>(&pk->t, pk, workspace);
}

/* Versions 18-19: walks in chunks of 64, two blocks an SM (ws_launch in
 * ops/ssd/ssd_wgmma_ws.cuh). */
extern "C" const char *ssd_wgmma_ws_unsupported(const SsdShape *s) { return ws_unsupported(s); }
extern "C" size_t ssd_wgmma_ws_workspace(const SsdShape *s) { return ws_workspace_bytes(s); }
/* Versions 18-21's arguments: no flags or ring here, ws_place puts the
 * counters and slots in workspace. */
WgmmaArgs wgmma_ws_args(const SsdTensors *t, void *workspace) { return wgmma_args(t, workspace, 0, 0, 1, 64); }
/* Versions 18-19's and 22-23's maps: x, B, C in and y out by boxes of 64
 * steps, and z's, which the storer brings in (none without z). */
WsMaps wgmma_ws_maps(const SsdTensors *t, bool bf16) {
    WsMaps maps;
    memset(&maps, 0, sizeof maps);
    maps.t = bf16 ? wgmma_maps<__nv_bfloat16>(t, 64) : wgmma_maps<__half>(t, 64);
    if (t->z) maps.ys_in = wgmma_map_bhp(t->z, &t->s, bf16, 64);
    return maps;
}
template <typename T>
static void launch_ws(const SsdTensors *t, void *workspace) {
    const WsMaps maps = wgmma_ws_maps(t, std::is_same<T, __nv_bfloat16>::value);
    ws_launch<T, false, 0, false>(wgmma_ws_args(t, workspace), maps, &t->s, workspace);
}
extern "C" void ssd_wgmma_ws(const SsdTensors *t, void *workspace) { launch_ws<__half>(t, workspace); }
extern "C" void ssd_wgmma_ws_bf16(const SsdTensors *t, void *workspace) { launch_ws<__nv_bfloat16>(t, workspace); }
