/* 05_ssd_mamba2, GPU, versions 18-19 (and 20-21, 06's 9-10): the walk's ring
 * of stages and the roles that fill and empty it (sm_90a). The ring: WS_STAGES
 * stages of a chunk's tiles and decays, each with a `full` and an `empty`
 * barrier. The producer warp (ws_produce) copies a chunk's x, B and C into
 * a free stage and forms its decays; the storer (ws_store) copies y out of
 * Ys and brings the next chunk's z in. ssd_wgmma_ws.cuh says why the work
 * is split by role. */
#ifndef SSD_WGMMA_WS_RING_CUH
#define SSD_WGMMA_WS_RING_CUH

#include <type_traits>

#include "cuda_check.h"
#include "launch.cuh"
#include "ssd_wgmma.cuh"

#define WS_STAGES 2     // the tiles' ring: chunk c + 1's copies land while chunk c computes
#define WS_THREADS 256  // a consumer warpgroup (threads 0-127), a producer warpgroup (two of its warps work)
#define WS_REGS_PRODUCER 40
#define WS_REGS_CONSUMER 216  // two blocks an SM: 2·128·(216 + 40) = the SM's 65536

/* The consumers' barrier: named barrier 1, their 128 threads (version 21:
 * WGS = 2 computing warpgroups, 256). */
template <int WGS = 1>
static __device__ __forceinline__ void consumers_sync() { named_barrier_sync<128 * WGS>(1); }

/* Bytes of a (64, 64) 16-bit tile, of a stage's tiles (x, B's and C's
 * slabs), and of a stage's decays (cum2, dts fp32, wts 16-bit, rows fp32;
 * versions 20-21: wts fp32 over wts and rows). */
#define WS_TILE (64 * 128)
#define WS_DECAYS (64 * 14)
template <int SLABS>
static __host__ __device__ constexpr int ws_stage_bytes() { return (1 + 2 * SLABS) * WS_TILE; }
/* A block's dynamic shared memory, in the kernel's order: the stages'
 * tiles, the entering state Ss, Ys, the stages' decays, and 1024 bytes to
 * align the start for the 128-byte swizzle. */
template <int SLABS>
static __host__ __device__ constexpr size_t ws_smem_bytes() {
    return 1024 + (size_t)WS_STAGES * ws_stage_bytes<SLABS>() + (SLABS + 1) * WS_TILE + WS_STAGES * WS_DECAYS;
}

/* A walk's place and its shared memory. */
struct WsWalk {
    int seg, c_first, c_end;  // segment seg: chunks c_first .. c_end − 1 of 64
    int b, h, g;              // its batch entry, head, and the head's group of B and C
    int bh;                   // b·H + h: its row of h0 and final_state; its item is seg·b·H + bh
                              // (PACKED, versions 22-23: sequence·H + h, its item from the plan)
    bool last_seg;
    int t_begin, t_end;       // PACKED: the sequence's steps t_begin .. t_end − 1 of the row (b 0)
    int slot0, first_cs;      // PACKED: its first segment's slot group, chunk_states' index of its first chunk
    unsigned char *stages;    // WS_STAGES x [x (64, 64), B (64, 64·SLABS), C (64, 64·SLABS)] 16-bit, swizzled
    unsigned char *decays;    // WS_STAGES x [cum2, dts (64,) fp32, wts (64,) 16-bit, rows (64,) fp32] (ws_stage;
                              // versions 20-21: wts (64,) fp32 in wts and rows)
    unsigned char *Ss, *Ys;   // (64, 64·SLABS) 16-bit rows p: the state entering the chunk (versions 20-21: bf16 hi, then lo);
                              // (64, 64) 16-bit: z (ADD: the other direction's y), then y
    float *Dcol;              // (64,) fp32: D of each column p of y (0 past P, or without D)
    uint64_t *full, *empty;   // (WS_STAGES,) a stage's copies and decays are in; its consumers are done
    uint64_t *ys_free;        // Ys may be written: the chunk before's y has been read out, this one's z (ADD: y) is in
    uint64_t *ys_written;     // this chunk's y is in Ys (a consumer warp's arrival each)
};

/* The walk's tensor maps: version 12's, and the map of what the storer
 * brings into Ys (boxes of 64 steps of one head): z's, or with ADD y's. */
struct WsMaps {
    TmaMaps t;
    CUtensorMap ys_in;
};

/* Stage s's decays: cum2_j = log2e·Σ_{i<=j} Δ_i·A (BACK: Σ_{i>=j}, the
 * sums the backward direction decays by), dts_j = Δ_j, wts_j the state
 * product's weights, Δ_j·exp(cum_last − cum_j) (BACK: Δ_j·exp(cum2_0 − cum2_j)),
 * and with SHIFT each row's decay end, rows_i = cum2_{i−1} (BACK: cum2_{i+1}),
 * 0 past the chunk. */
struct WsDecays {
    float *cum2, *dts;  // (64,) fp32 each
    void *wts;          // (64,) 16-bit (versions 20-21: fp32)
    float *rows;        // (64,) fp32, written with SHIFT only
};
static __device__ __forceinline__ WsDecays ws_decays_of(const WsWalk &w, int s) {
    float *f = reinterpret_cast<float *>(w.decays + s * WS_DECAYS);
    return {f, f + 64, f + 128, f + 160};
}

/* The chunk a walk takes k-th: BACK walks from the last chunk to the first. */
template <bool BACK>
static __device__ __forceinline__ int ws_chunk(const WgmmaArgs &a, int k) {
    return BACK ? a.nchunks - 1 - k : k;
}

/* The decays of chunk c into d, by the 32 lanes of a warp: steps 2·lane and
 * 2·lane + 1 from their raw dt, as chunk_decays does for a block. WT: the
 * weights' type, 16-bit (versions 18-19, 06's 9-10) or fp32 (versions 20-21,
 * whose 64 fp32 weights take wts and rows: they have no SHIFT). */
template <bool BACK, int SHIFT, typename WT, bool PACKED = false>
static __device__ __forceinline__ void ws_form_decays(const WgmmaArgs &a, const WsWalk &w, int c, const WsDecays &d,
                                                      float2 dt_raw) {
    static_assert(SHIFT == 0 || !std::is_same<WT, float>::value, "fp32 weights cover rows");
    const int lane = threadIdx.x % 32, t0 = PACKED ? w.t_begin + c * 64 : c * 64;
    const int64_t len = min((int64_t)64, (PACKED ? (int64_t)w.t_end : a.L) - t0), j = 2 * lane;
    const float bias = a.dt_bias ? a.dt_bias[w.h] : 0.f, A2 = a.A[w.h] * LOG2E_F;
    const float d0 = j < len ? delta_of(dt_raw.x, bias, a.softplus) : 0.f;
    const float d1 = j + 1 < len ? delta_of(dt_raw.y, bias, a.softplus) : 0.f;
    // dA_cs = tl.cumsum(dA, axis=0) with dA = dt * A
    const float a0 = d0 * A2, a01 = a0 + d1 * A2;
    float incl = a01;  // Σ over steps 0 .. j + 1
#pragma unroll
    for (int off = 1; off < 32; off *= 2) {
        const float u = __shfl_up_sync(0xffffffffu, incl, off);
        if (lane >= off) incl += u;
    }
    float c0 = incl - a01 + a0, c1 = incl;
    const float c_last = __shfl_sync(0xffffffffu, (len - 1) % 2 ? c1 : c0, (int)(len - 1) / 2);
    float w0, w1;  // the weights' exponents
    if (BACK) {
        /* The official recipe flips x, dt, B and C and runs the causal scan
         * (x = torch.cat((x, torch.flip(x, (1,))), dim=0)); here the sums run
         * backward instead. Σ_{i>=j} = the chunk's sum less the steps before j;
         * the weight of step j is its decay to the chunk's first step, the
         * steps before it. */
        w0 = c0 - a0;
        w1 = c1 - (a01 - a0);
        c0 = c_last - w0;
        c1 = c_last - w1;
    } else {
        w0 = c_last - c0;
        w1 = c_last - c1;
    }
    *reinterpret_cast<float2 *>(d.cum2 + j) = make_float2(c0, c1);
    *reinterpret_cast<float2 *>(d.dts + j) = make_float2(d0, d1);
    if constexpr (std::is_same<WT, float>::value)
        *reinterpret_cast<float2 *>(static_cast<float *>(d.wts) + j) = make_float2(d0 * exp2_approx(w0), d1 * exp2_approx(w1));
    else
        *reinterpret_cast<uint32_t *>(static_cast<WT *>(d.wts) + j) = pack16<WT>(d0 * exp2_approx(w0), d1 * exp2_approx(w1));
    if (SHIFT) {
        const float before = __shfl_up_sync(0xffffffffu, c1, 1), after = __shfl_down_sync(0xffffffffu, c0, 1);
        *reinterpret_cast<float2 *>(d.rows + j) = BACK ? make_float2(c1, lane < 31 ? after : 0.f)
                                                       : make_float2(lane > 0 ? before : 0.f, c0);
    }
}

/* The producer warp, chunk c of 64 into stage s: lane 0 issues the copies
 * (C only with the outputs; with SHIFT its rows one step before the chunk's,
 * BACK: one after, the copy filling rows outside 0 .. L − 1 with zeros), then
 * every lane forms the decays of steps 2·lane and 2·lane + 1, as chunk_decays
 * does for a block, and arrives on `full` (32 arrivals and the copies' bytes
 * complete the phase). */
template <typename T, int SLABS, bool BACK, int SHIFT, bool PACKED>
static __device__ __forceinline__ void ws_stage(const WgmmaArgs &a, const TmaMaps &maps, const WsWalk &w, int c, int s,
                                                bool with_C, float2 dt_raw) {
    const int lane = threadIdx.x % 32, t0 = PACKED ? w.t_begin + c * 64 : c * 64;
    uint64_t *full = &w.full[s];
    if (lane == 0) {
        unsigned char *st = w.stages + s * ws_stage_bytes<SLABS>();
        // y = torch.roll(y, shifts=1, dims=1); y[:, 0, :] = 0.0 (Hydra, each direction):
        const int tc = BACK ? t0 + SHIFT : t0 - SHIFT;  // C's first row
        mbar_expect_tx(full, (with_C ? 1 + 2 * SLABS : 1 + SLABS) * WS_TILE);
        tma_load_4d(st, &maps.x, full, 0, w.h, t0, w.b);
#pragma unroll
        for (int sl = 0; sl < SLABS; sl++) {
            tma_load_4d(st + (1 + sl) * WS_TILE, &maps.B, full, 64 * sl, w.g, t0, w.b);
            if (with_C) tma_load_4d(st + (1 + SLABS + sl) * WS_TILE, &maps.C, full, 64 * sl, w.g, tc, w.b);
        }
    }
    ws_form_decays<BACK, SHIFT, T, PACKED>(a, w, c, ws_decays_of(w, s), dt_raw);
    mbar_arrive(full);  // releases this lane's writes of the decays
}

/* dt of steps 2·lane and 2·lane + 1 of chunk c (0 past L), read before the
 * producer waits for a free stage, so that the loads' latency runs during
 * the wait; and, when ahead (pass 0), the dt of the chunk WS_DT_AHEAD
 * further along the walk (c + WS_DT_AHEAD; BACK: c − WS_DT_AHEAD) brought
 * into L2: pass 0's chunks never wait for a stage, so they are a chain of
 * these loads, each chunk waiting for its dt from DRAM. Pass 1 waits for
 * its stages, which hides the loads; prefetching there too costs the long
 * walks (tuning.md). Both
 * steps' lines: a step's row of dt is H 16-bit values, one 128-byte line
 * for both steps only while H·2 < 128. */
#define WS_DT_AHEAD 4
template <typename T, bool BACK, bool PACKED = false>
static __device__ __forceinline__ float2 ws_dt_load(const WgmmaArgs &a, const WsWalk &w, int c, bool ahead) {
    const int lane = threadIdx.x % 32;
    const int64_t t0 = PACKED ? w.t_begin + (int64_t)c * 64 : (int64_t)c * 64, j = 2 * lane;
    const int64_t len = min((int64_t)64, (PACKED ? (int64_t)w.t_end : a.L) - t0);
    const T *dt = static_cast<const T *>(a.dt) + ((int64_t)w.b * a.L + t0) * a.H + w.h;  // dt[b, t0 + j, h] at j·H
    const int64_t ahead_t0 = BACK ? t0 - WS_DT_AHEAD * 64 : t0 + WS_DT_AHEAD * 64;  // WS_DT_AHEAD chunks on in the walk
    if (ahead && (!BACK || ahead_t0 >= 0) && ahead_t0 + j + 1 < a.L) {
        prefetch_l2(dt + (ahead_t0 - t0 + j) * a.H);
        prefetch_l2(dt + (ahead_t0 - t0 + j + 1) * a.H);
    }
    return make_float2(j < len ? to_float(dt[j * a.H]) : 0.f, j + 1 < len ? to_float(dt[(j + 1) * a.H]) : 0.f);
}

/* The producer warp: every chunk of the walk in the consumers' order, pass
 * 0's (x and B; segments but the last) then pass 1's (x, B and C), each
 * into the next stage once its consumers have given it back. */
template <typename T, int SLABS, bool BACK, int SHIFT, bool PACKED = false>
static __device__ void ws_produce(const WgmmaArgs &a, const TmaMaps &maps, const WsWalk &w) {
    uint32_t k = 0;  // chunks issued: stage k % WS_STAGES, its use k / WS_STAGES
    for (int pass = w.last_seg ? 1 : 0; pass < 2; pass++)
        for (int v = w.c_first; v < w.c_end; v++, k++) {
            const int s = (int)(k % WS_STAGES), c = ws_chunk<BACK>(a, v);
            const float2 dt_raw = ws_dt_load<T, BACK, PACKED>(a, w, c, pass == 0);
            if (k >= WS_STAGES) mbar_wait(&w.empty[s], ((k / WS_STAGES) & 1) ^ 1);
            ws_stage<T, SLABS, BACK, SHIFT, PACKED>(a, maps, w, c, s, pass == 1, dt_raw);
        }
}

/* PACKED: a sequence's last chunk when shorter than 64 steps, its rows
 * 0 .. len − 1 of y from Ys to device memory by the storer warp's 32 lanes,
 * 16 bytes at a time (a bulk copy of the whole tile would write the next
 * sequence's first rows). Ys rows are 128 bytes, their 16-byte pieces
 * swizzled (sw128_offset).
 * tl.store(out_ptrs, acc, mask=(offs_out_m[:, None] < chunk_size_limit) & (offs_out_n[None, :] < hdim)) */
template <typename T>
static __device__ __forceinline__ void ws_y_clip(const WgmmaArgs &a, const WsWalk &w, int64_t t0, int len) {
    const int pieces = (int)a.P / 8;  // 16-byte pieces of a row (P a multiple of 8)
    T *y = static_cast<T *>(a.y) + (t0 * a.H + w.h) * a.P;  // y[0, t0 + r, h, 8·q] at r·H·P + 8·q
    for (int i = threadIdx.x % 32; i < len * pieces; i += 32) {
        const int r = i / pieces, q = i % pieces;
        *reinterpret_cast<uint4 *>(y + r * a.H * a.P + 8 * q) =
            *reinterpret_cast<const uint4 *>(w.Ys + sw128_offset(r, 8 * q));
    }
}

/* The storer (lane 0 of the producer warpgroup's second warp; PACKED, the
 * whole warp, for ws_y_clip), over the chunks of pass 1: once the consumers
 * have written a chunk's y into Ys, it copies Ys out to y, waits until the
 * copy has read it, brings the next chunk's z into Ys (with z; ADD: what the
 * other direction left in y, from maps.ys_in, which is then y's map) and
 * tells the consumers that Ys is theirs. */
template <typename T, bool BACK, bool ADD, bool PACKED = false>
static __device__ void ws_store(const WgmmaArgs &a, const WsMaps &maps, const WsWalk &w) {
    const bool lead = !PACKED || threadIdx.x % 32 == 0;  // the lane that copies by bulk copies
    uint32_t u = 0;  // pass 1's chunks whose Ys has been handed to the consumers
    for (int v = w.c_first; v <= w.c_end; v++, u++) {
        if (PACKED) __syncwarp();  // no lane a phase of ys_written behind another
        if (v > w.c_first) {
            mbar_wait(w.ys_written, (u - 1) & 1);
            const int t0 = PACKED ? w.t_begin + (v - 1) * 64 : ws_chunk<BACK>(a, v - 1) * 64;
            if (PACKED && w.t_end - t0 < 64) {
                ws_y_clip<T>(a, w, t0, w.t_end - t0);  // the sequence's last chunk: nothing after it
            } else if (lead) {
                tma_store_4d(&maps.t.y, w.Ys, 0, w.h, t0, w.b);
                tma_store_wait<true>();
            }
        }
        if (v == w.c_end) break;
        if (!lead) continue;
        if (ADD || a.z) {
            mbar_arrive_expect_tx(w.ys_free, WS_TILE);
            tma_load_4d(w.Ys, &maps.ys_in, w.ys_free, 0, w.h, PACKED ? w.t_begin + v * 64 : ws_chunk<BACK>(a, v) * 64, w.b);
        } else {
            mbar_arrive(w.ys_free);
        }
    }
}

#endif  // SSD_WGMMA_WS_RING_CUH
