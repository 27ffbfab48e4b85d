/* 05_ssd_mamba2, GPU, versions 18-19: the walk of version 14 split by role
 * (sm_90a), and its launch (ws_launch, at the end; 05's wgmma.cu calls it).
 * Versions 20-21 (05's wgmma_split.cu) run the walk's pieces (the decays,
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
 * Measured (H100, S3 b 8 L 8192; tuning.md has each step): 0.307 ms at
 * commit d05b861bac5c against version 12's 0.611 in the same call, 0.308
 * at 40d5635b1ef6 (tensor pipe 42%); batch 1, L 8192 0.0794 (segments
 * summed, dt brought into L2 ahead; 0.0850 without the prefetch, 0.0922
 * with the chain). Nsight Compute at e671b20932ba (0.349 ms, before the
 * copying warp read dt ahead of its wait): 3,900 warp instructions a
 * (b, h, chunk of 64) (version 12: 7,300 a 64 steps), issue slots 45%
 * busy, 6.5 cycles between a warp's instructions, DRAM 43%, L2 48%, tensor
 * pipe 41%, 8 computing warps an SM: bound by the latency of each chunk's
 * chain in one warpgroup (products, P, the next entering state, y). */
#ifndef SSD_WGMMA_WS_CUH
#define SSD_WGMMA_WS_CUH

#include <limits.h>

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
    bool last_seg;
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
template <bool BACK, int SHIFT, typename WT>
static __device__ __forceinline__ void ws_form_decays(const WgmmaArgs &a, const WsWalk &w, int c, const WsDecays &d,
                                                      float2 dt_raw) {
    static_assert(SHIFT == 0 || !std::is_same<WT, float>::value, "fp32 weights cover rows");
    const int lane = threadIdx.x % 32, t0 = c * 64;
    const int64_t len = min((int64_t)64, a.L - t0), j = 2 * lane;
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
template <typename T, int SLABS, bool BACK, int SHIFT>
static __device__ __forceinline__ void ws_stage(const WgmmaArgs &a, const TmaMaps &maps, const WsWalk &w, int c, int s,
                                                bool with_C, float2 dt_raw) {
    const int lane = threadIdx.x % 32, t0 = c * 64;
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
    ws_form_decays<BACK, SHIFT, T>(a, w, c, ws_decays_of(w, s), dt_raw);
    mbar_arrive(full);  // releases this lane's writes of the decays
}

/* dt of steps 2·lane and 2·lane + 1 of chunk c (0 past L), read before the
 * producer waits for a free stage, so that the loads' latency runs during
 * the wait; and, when ahead (pass 0), the dt of the chunk WS_DT_AHEAD
 * further along the walk (c + WS_DT_AHEAD; BACK: c − WS_DT_AHEAD) brought
 * into L2: pass 0's chunks never wait for a stage, so they are a chain of
 * these loads, each chunk waiting for its dt from DRAM. Pass 1 waits for
 * its stages, which hides the loads; prefetching there too costs the long
 * walks (batch 1, L 262144: 1.965 ms against 1.922, tuning.md). Both
 * steps' lines: a step's row of dt is H 16-bit values, one 128-byte line
 * for both steps only while H·2 < 128. */
#define WS_DT_AHEAD 4
template <typename T, bool BACK>
static __device__ __forceinline__ float2 ws_dt_load(const WgmmaArgs &a, const WsWalk &w, int c, bool ahead) {
    const int lane = threadIdx.x % 32;
    const int64_t t0 = (int64_t)c * 64, len = min((int64_t)64, a.L - t0), j = 2 * lane;
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
template <typename T, int SLABS, bool BACK, int SHIFT>
static __device__ void ws_produce(const WgmmaArgs &a, const TmaMaps &maps, const WsWalk &w) {
    uint32_t k = 0;  // chunks issued: stage k % WS_STAGES, its use k / WS_STAGES
    for (int pass = w.last_seg ? 1 : 0; pass < 2; pass++)
        for (int v = w.c_first; v < w.c_end; v++, k++) {
            const int s = (int)(k % WS_STAGES), c = ws_chunk<BACK>(a, v);
            const float2 dt_raw = ws_dt_load<T, BACK>(a, w, c, pass == 0);
            if (k >= WS_STAGES) mbar_wait(&w.empty[s], ((k / WS_STAGES) & 1) ^ 1);
            ws_stage<T, SLABS, BACK, SHIFT>(a, maps, w, c, s, pass == 1, dt_raw);
        }
}

/* The storer (lane 0 of the producer warpgroup's second warp), over the
 * chunks of pass 1: once the consumers have written a chunk's y into Ys, it
 * copies Ys out to y, waits until the copy has read it, brings the next
 * chunk's z into Ys (with z; ADD: what the other direction left in y, from
 * maps.ys_in, which is then y's map) and tells the consumers that Ys is theirs. */
template <bool BACK, bool ADD>
static __device__ void ws_store(const WgmmaArgs &a, const WsMaps &maps, const WsWalk &w) {
    uint32_t u = 0;  // pass 1's chunks whose Ys has been handed to the consumers
    for (int v = w.c_first; v <= w.c_end; v++, u++) {
        if (v > w.c_first) {
            mbar_wait(w.ys_written, (u - 1) & 1);
            tma_store_4d(&maps.t.y, w.Ys, 0, w.h, ws_chunk<BACK>(a, v - 1) * 64, w.b);
            tma_store_wait<true>();
        }
        if (v == w.c_end) break;
        if (ADD || a.z) {
            mbar_arrive_expect_tx(w.ys_free, WS_TILE);
            tma_load_4d(w.Ys, &maps.ys_in, w.ys_free, 0, w.h, ws_chunk<BACK>(a, v) * 64, w.b);
        } else {
            mbar_arrive(w.ys_free);
        }
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

/* The consumers' pass over the walk's chunks (OUTPUTS: pass 1, else pass 0),
 * st the state entering the first (pass 0: zero), left holding the state
 * after the last; k: chunks consumed so far. Pass 1 expects the entering
 * state in Ss, ordered before its products by a barrier. Returns
 * Σ cum_last, the segment's decay in log2 units. */
template <typename T, int SLABS, bool OUTPUTS, bool BACK, int SHIFT, bool ADD>
static __device__ __forceinline__ float ws_consume(const WgmmaArgs &a, const WsWalk &w, float (&st)[2][32],
                                                   uint32_t &k) {
    const int tid = thread_index(), lane = tid % 32, row0 = (tid / 32) * 16 + lane / 4;
    const uint32_t ss = smem_addr(w.Ss), sd = sw128_desc_lo(ss);
    float seg_log2 = 0.f;
    for (int v = w.c_first; v < w.c_end; v++, k++) {
        const int64_t t0 = (int64_t)ws_chunk<BACK>(a, v) * 64;
        const int len = (int)min((int64_t)64, a.L - t0), s = (int)(k % WS_STAGES);
        const uint32_t xs = smem_addr(w.stages + s * ws_stage_bytes<SLABS>()), bs = xs + WS_TILE;
        /* The low words of x's, B's and C's descriptors (C's slabs after B's). */
        const uint32_t xd = sw128_desc_lo(xs), bd = xd + WS_TILE / 16, cd = bd + SLABS * WS_TILE / 16;
        const WsDecays d = ws_decays_of(w, s);
        mbar_wait(&w.full[s], (k / WS_STAGES) & 1);
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
    }
    return seg_log2;
}

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
/* wq of thread tid: its warp in its warpgroup, where a thread holds NE
 * values an n-tile (NE 32: the one computing warpgroup, threads 0-127; NE
 * 16: version 21's two, threads 0-255). */
template <int NE, typename I>
static __device__ __forceinline__ I ws_frag_warp(I tid) { return NE == 32 ? tid / 32 : (tid / 32) % 4; }

/* n-tile mt of h0 of the walk's (b, h) (zero without); NE 16: the 32
 * columns of p from p_first of one of version 21's two warpgroups (NE 32:
 * the one warpgroup of threads 0-127). */
template <int NE>
static __device__ __forceinline__ void ws_h0_tile(float (&v)[NE], const WgmmaArgs &a, const WsWalk &w, int mt,
                                                  int p_first = 0) {
#pragma unroll
    for (int e = 0; e < NE; e++) v[e] = 0.f;
    if (!a.h0) return;
    const int P = (int)a.P, N = (int)a.N, lane = thread_index() % 32, p0 = p_first + 2 * (lane % 4),
              n0 = mt * 64 + 16 * ws_frag_warp<NE>(thread_index()) + lane / 4;
    const float *src = a.h0 + (int64_t)w.bh * a.P * a.N + p0 * N + n0;  // (p, N) fp32 of this (b, h)
    const bool inside = p0 + (NE / 4 - 1) * 8 + 1 < P && n0 + 8 < N;   // every element of the tile
#pragma unroll
    for (int e = 0; e < NE; e++)
        if (inside || (p0 + (e / 4) * 8 + (e & 1) < P && n0 + (e & 2) * 4 < N)) v[e] = src[ws_frag_offset(e, N)];
}

/* Segment j's slot of the ring: its state S_j^pub in fragment order (slabs
 * n-tiles), then at ws_slot_decay its decay exp(Σ dA) over the segment,
 * padded to 128 bytes (the launcher's ring_slot is ws_slot_floats). */
static __host__ __device__ constexpr int ws_slot_decay(int slabs) { return slabs * 64 * 64; }
static __host__ __device__ constexpr int64_t ws_slot_floats(int slabs) { return ws_slot_decay(slabs) + 32; }
static __device__ __forceinline__ float *ws_slot(const WgmmaArgs &a, const WsWalk &w, int j) {
    return a.ring + ((int64_t)j * a.batch * a.H + w.bh) * a.ring_slot;
}

/* The state entering segment seg > 0, summed from what the segments before
 * it published (each its own state from zero, the first's with h0 in it),
 * the latest first: S_{seg−1} = Σ_{j<seg} (Π_{j<i<seg} decay_i)·S_j^pub.
 * No segment waits for another's sum, so the hand-offs are not a chain:
 * every segment waits once, for the pass 0 of those before it.
 * states = scale * states + new_states (_state_passing_fwd_kernel), unrolled */
template <int SLABS, int WGS = 1, int NE>
static __device__ __forceinline__ void ws_sum_published(float (&st)[2][NE], const WgmmaArgs &a, const WsWalk &w) {
    for (int j = thread_index(); j < w.seg; j += 128 * WGS)  // this thread's share of the flags
        while (load_acquire(a.published + (int64_t)j * a.batch * a.H + w.bh) == 0) __nanosleep(64);
    consumers_sync<WGS>();  // every flag seen: the slots' stores happened before the loads below
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int e = 0; e < NE; e++) st[mt][e] = 0.f;
    /* With WGS 2, warpgroup wg's values are values 16·wg .. of the slot's 32. */
    const int part = WGS > 1 ? (thread_index() / 128) * NE * 128 : 0;
    float f = 1.f;  // Π decay_i over the segments between j and seg
    for (int j = w.seg - 1; j >= 0; j--) {
        const float *slot = ws_slot(a, w, j);
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

/* Pass 0's end: the segment's own state st (the first segment's with h0
 * carried through it, seg_decay being the segment's decay) and seg_decay into
 * its slot, then its flag raised, without waiting for any other segment. */
template <int SLABS, int WGS = 1, int NE>
static __device__ __forceinline__ void ws_publish(float (&st)[2][NE], const WgmmaArgs &a, const WsWalk &w, int item,
                                                  float seg_decay) {
    float *slot = ws_slot(a, w, w.seg);
    const int wg = WGS > 1 ? thread_index() / 128 : 0;  // WGS 2: values 16·wg .. of the slot's 32, p from 32·wg
#pragma unroll
    for (int mt = 0; mt < SLABS; mt++) {
        if (w.seg == 0) {
            float h0[NE];
            ws_h0_tile(h0, a, w, mt, 2 * NE * wg);
#pragma unroll
            for (int e = 0; e < NE; e++) st[mt][e] = fmaf(seg_decay, h0[e], st[mt][e]);
        }
        frag_store(slot + wg * NE * 128, st[mt], mt);
    }
    if (threadIdx.x == 0) __stcg(slot + ws_slot_decay(SLABS), seg_decay);
    consumers_sync<WGS>();  // the warpgroups' writes of the slot happen before thread 0's release
    if (threadIdx.x == 0) store_release(a.published + item, 1);
}

/* The walk's last state, its slabs (SLABS) n-tiles, to final_state. The loop
 * over n-tiles takes slabs at run time and picks the tile by a select, so
 * that it stays rolled: one copy of the 32 stores to fetch, not two. */
template <int NE>
static __device__ __forceinline__ void ws_final_state(const float (&st)[2][NE], const WgmmaArgs &a, const WsWalk &w,
                                                      int slabs, int p_first = 0) {
    const int P = (int)a.P, N = (int)a.N, lane = thread_index() % 32, p0 = p_first + 2 * (lane % 4);
    for (int mt = 0; mt < slabs; mt++) {
        const int n0 = mt * 64 + 16 * ws_frag_warp<NE>(thread_index()) + lane / 4;
        float *dst = a.final_state + (int64_t)w.bh * a.P * a.N + p0 * N + n0;  // (p, N) fp32 of this (b, h)
        const bool inside = p0 + (NE / 4 - 1) * 8 + 1 < P && n0 + 8 < N;
#pragma unroll
        for (int e = 0; e < NE; e++)
            if (inside || (p0 + (e / 4) * 8 + (e & 1) < P && n0 + (e & 2) * 4 < N))
                dst[ws_frag_offset(e, N)] = mt == 0 ? st[0][e] : st[1][e];
    }
}

/* SLABS: N rounded up to 64, over 64. One block walks one segment of one
 * (b, h): threads 0-127 compute, warp 4 copies and forms the decays, warp 5
 * stores y and brings z (ADD: the other direction's y). BACK, SHIFT, ADD:
 * 06's walks (ws_launch). */
template <typename T, int SLABS, bool BACK = false, int SHIFT = 0, bool ADD = false>
__global__ void __launch_bounds__(WS_THREADS, 2) ssd_wgmma_ws_kernel(WgmmaArgs a, const __grid_constant__ WsMaps maps) {
    static_assert(SHIFT == 0 || SHIFT == 1, "Hydra's shift is one step");
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    __shared__ int item;
    __shared__ alignas(8) uint64_t full[WS_STAGES], empty[WS_STAGES], ys_free, ys_written;
    __shared__ alignas(8) float Dcol[64];  // (64,) fp32: D of each column of y
    const int tid = threadIdx.x;
    if (tid == 0) {
        item = a.segments > 1 ? atomicAdd(a.ticket, 1) : (int)blockIdx.x;  // one segment: no order to keep
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
    WsWalk w = ws_walk_of(a, item);
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
        if (tid < 160) ws_produce<T, SLABS, BACK, SHIFT>(a, maps.t, w);
        else if (tid == 160) ws_store<BACK, ADD>(a, maps, w);
        return;
    }
    warpgroup_regs_inc<WS_REGS_CONSUMER>();
    float st[2][32] = {};  // the state, n-tiles 0 and 1 in fragment order (1 stays zero at SLABS 1)
    uint32_t k = 0;
    if (!w.last_seg) {
        /* ---- Pass 0: the segment's own state from zero (the first segment's
         * with h0 carried through it: S_0^pub = S_0), published with the
         * segment's decay without waiting for any other segment. */
        ws_publish<SLABS>(st, a, w, item, exp2_approx(ws_consume<T, SLABS, false, BACK, SHIFT, ADD>(a, w, st, k)));
    }
    /* ---- Pass 1 from S_{seg−1} (h0 for the first segment), with the outputs;
     * D of each column of y, read once (the barrier below orders it). */
    if (tid < 64) Dcol[tid] = D_of_column(a, w.h, a.D && !a.D_per_channel ? a.D[w.h] : 0.f, tid);
    if (w.seg > 0) ws_sum_published<SLABS>(st, a, w);
#pragma unroll
    for (int mt = 0; mt < SLABS; mt++) {
        if (w.seg == 0) ws_h0_tile(st[mt], a, w, mt);
        frag_to_smem<T>(smem_addr(w.Ss), st[mt], mt);
    }
    fence_async_smem();  // the state's stmatrix stores, before wgmma reads them
    consumers_sync();
    ws_consume<T, SLABS, true, BACK, SHIFT, ADD>(a, w, st, k);
    if (w.last_seg && a.final_state) ws_final_state(st, a, w, SLABS);
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
