/* 04_fp16_half2, GPU, versions 8-15: 03's tuned kernel (its version 7)
 * with 16-bit rows, fp16 (8, 10, 11, 14, 15) or bf16 (9, 12, 13). It should
 * buy what 03's plan bought over one thread per row at batch 1-8 and at long
 * L, on half the bytes. Versions 10-15 launch the second pass of a chunked
 * plan as a programmatic dependent of the first (see let_dependent_grid_launch).
 *
 * Versions 4-7 keep a row in one thread (2 or 4 lanes when rows are few) and
 * cut L only below 32768 threads: right at S1 batch 16, where the rows fill
 * the GPU and the exps bound it, but at batch 1-8 they leave it short of
 * work, and 03's version 7 beats them there in fp32. Version 8 takes 03's
 * version 7 whole (ops/scan/scan_tiles.cuh: the plan that spreads a row's states
 * over lanes before it cuts L, the per-tile scan, the chunk carries) and
 * changes what touches memory (stage16.cuh), and two constants:
 *
 *   copy   u, delta, z (rows x kTile) and B, C (N x kTile) as 16-bit rows into
 *          a staging area, with cp.async (16 bytes, 8 steps, a copy) when
 *          L % 8 == 0 and the rows are 16-byte aligned: half of 03's bytes and
 *          copies; otherwise with 2-byte loads, which do not overlap the scan;
 *   widen  once the copies have landed, the block widens the staging area
 *          into 03's fp32 tiles (Δ = softplus(delta + bias) on the way), once
 *          per block, not once per lane; then the next tile's copies are
 *          issued into the free staging area and land during the scan;
 *   scan   03's scan_tile, every exp on the MUFU;
 *   store  the lanes' partial sums added, D·u, the z gate, y narrowed to
 *          16 bits, 8 bytes (4 steps) a store;
 *   kTile = 32 steps a tile, not 16: with 16 the three barriers per tile were
 *          the largest stall at batch 1; kMinR = 4 states a thread at least
 *          before L is cut, not 2: at R = 2 the per-(row, step) work and the
 *          16-lane sums of y cost more than the extra exps of more chunks
 *          (tuning.md, sweeps 1-3). (03's version 7 has since taken kMinR = 4
 *          too.)
 *
 * The polynomial exps of versions 5-7 do not pay here: this kernel is not
 * MUFU-bound, so moving exps to the FMA pipe only adds instructions
 * (tuning.md, "Version 8's constants").
 *
 * Per element the scan is 03's: FMUL, MUFU.EX2, FMUL, FFMA, FFMA, half an
 * LDS.128. Per (row, step): the widening of u, delta, z (a convert each) and
 * Δ. Three barriers per 32-step tile (03's version 7: four per 16 steps):
 * landed, widened, scanned.
 * Bytes: 2·b·d·L·(3 + z) + 4·b·G·N·L, plus the states (and the chunk states
 * when L is cut). Exps: as 03's version 7.
 *
 * Version 10: when L is cut (batch 1-2 at S1, batch 1 at S2), the two passes
 * are short kernels of about one wave each (S2 b1 L512: 448 blocks of 2 tiles
 * each), and the second cannot start before the last block of the first has
 * ended and the launch has gone through. Launched as a programmatic dependent
 * (sm_90), its blocks start as the first pass's blocks end, copy their first
 * tile, and wait in the kernel for the chunk states only. What bounds the
 * passes: latency, each under one wave with few warps a scheduler
 * (tuning.md, "Where pass 2 may launch").
 *
 * Version 11: pass 2 launched at pass 1's start gets SMs while pass 1 runs,
 * but its blocks could only wait there. Version 11 gives them work: chunk 0's
 * y moves from pass 1 to pass 2, whose chunk-0 blocks start from h0, need
 * nothing of pass 1 and run beside it; pass 1 writes end states only. It
 * costs chunk 0 scanned twice and one chunk of blocks more in pass 2: it
 * should pay where chunks are short and pass 2 still fits one wave. What
 * bounds it: latency, as version 10, with pass 1 shorter (end states only)
 * and overlapped by pass 2's chunk-0 blocks (tuning.md, "Chunk 0 in pass 2").
 *
 * Version 14: the copies of a tile, each a row's address from its index (a
 * 64-bit multiply), the step clamped and vec8 tested for each 16 bytes, become
 * a pointer stepped from row to row, in kernels bounded to the blocks an SM
 * held before: fewer instructions an element. What bounds it: issue and the
 * MUFU together, with 4 blocks of 4 warps an SM, stalls on dependent
 * fixed-latency instructions and shared loads first (tuning.md, "Cheaper
 * copies").
 *
 * Version 15: version 14 with twice the lanes a row where that spreads the
 * blocks over the SMs in fewer, fuller rounds (plan_rounds; S1 b16: 1024
 * blocks, 4 an SM, where 512 blocks at 3 an SM left a lone second round).
 * What bounds it at S1 b16: latency, the issue slots two thirds busy and the
 * stalls led by dependent fixed-latency instructions, 4 blocks of 4 warps an
 * SM (tuning.md, "Fewer, fuller rounds"). */
#include "kernels.h"

#include <stdint.h>
#include <string.h>

#include "cuda_check.h"
#include "rows16.cuh"
#include "scan_tiles.cuh"
#include "stage16.cuh"

/* One pass over the whole sequence, from h0 to last_state (no chunks). */
template <int R, typename F, Addressing AD>
static __device__ __forceinline__ void whole_pass(const ScanTensors &t, int S, bool vec8) {
    extern __shared__ float4 smem4[];
    const RowBlock w = row_block(t.s, S);
    float h[R], A2[R];
    load_A2<R>(t, w, A2);
    load_state<R>(t.h0, t.s.dstate, w, h);
    float dt_sum = 0.f;
    scan_span16<R, true, AD, F>(t, w, reinterpret_cast<float *>(smem4), h, A2, 0, t.s.seqlen, vec8, dt_sum, false);
    store_state<R>(t.last_state, t.s.dstate, w, h);
}

/* Programmatic dependent launch (sm_90, versions 10-15): once every
 * block of pass 1 has let it, pass 2 is launched, and its blocks take SMs as
 * pass 1's blocks leave them (or, let at once, the SMs pass 1 leaves free);
 * pass 2 waits, before it reads the chunk states, until pass 1 has ended and
 * its writes are visible. Without the launch attribute both are no-ops. */
static __device__ __forceinline__ void let_dependent_grid_launch() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
static __device__ __forceinline__ void wait_for_prerequisite_grid() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

/* How the two passes of a chunked plan meet. */
enum Overlap {
    kSerial,       // versions 8, 9: pass 2 starts when pass 1 has ended
    kAfterScans,   // versions 10, 12, 14, 15: pass 2 launched once pass 1's scans are done
    kChunk0Early,  // versions 11, 13: pass 2 also writes chunk 0's y and is launched at once;
                   //             its chunk-0 blocks need nothing of pass 1 and run beside it
};

/* Chunks over L, as 03's version 6-7 (see 03's tiled.cu). Pass 1, block
 * z = chunk k = 0..K-2: chunk 0 from h0 writes its y (unless kChunk0Early);
 * every chunk's end state and ΣΔ go to the workspace.
 * kAfterScans lets pass 2 launch once the block's scans are done: letting it
 * at the start of pass 1, or at the start of the last tile, is a little
 * faster where chunks are short (S2 b1 L512) but slower at S1 b1 and b2
 * (tuning.md, sweeps 5 and 6). */
template <int R, typename F, Overlap OV, Addressing AD>
static __device__ __forceinline__ void chunk_states_pass(const ScanTensors &t, int S, int64_t chunk_len, int chunks,
                                                         bool vec8,
                                                         float *chunk_h,     // (b·d, chunks - 1, N) fp32, written
                                                         float *chunk_dt) {  // (b·d, chunks - 1)    fp32, written
    if (OV == kChunk0Early) let_dependent_grid_launch();
    extern __shared__ float4 smem4[];
    float *smem = reinterpret_cast<float *>(smem4);
    const RowBlock w = row_block(t.s, S);
    const int64_t N = t.s.dstate, L = t.s.seqlen;
    const int k = blockIdx.z;
    const int64_t t_begin = k * chunk_len, t_end = min(L, t_begin + chunk_len);
    float h[R], A2[R];
    load_A2<R>(t, w, A2);
    load_state<R>(k == 0 ? t.h0 : NULL, N, w, h);
    float dt_sum = 0.f;
    if (k == 0 && OV != kChunk0Early)
        scan_span16<R, true, AD, F>(t, w, smem, h, A2, t_begin, t_end, vec8, dt_sum, false);
    else scan_span16<R, false, AD, F>(t, w, smem, h, A2, t_begin, t_end, vec8, dt_sum, false);
    if (OV == kAfterScans) let_dependent_grid_launch();
    store_chunk_end<R>(w, N, chunks - 1, k, h, dt_sum, chunk_h, chunk_dt);
}

/* Pass 2, block z = chunk k - 1 for k = 1..K-1 (kChunk0Early: z = k for
 * k = 0..K-1): the carry in (h0 for chunk 0), then the chunk scanned again
 * from its true start, writing y. Overlapped, the first tile's copies, which
 * need nothing of pass 1, are issued before the wait for it. */
template <int R, typename F, Overlap OV, Addressing AD>
static __device__ __forceinline__ void chunk_outputs_pass(const ScanTensors &t, int S, int64_t chunk_len, int chunks,
                                                          bool vec8,
                                                          const float *chunk_h,     // (b·d, chunks - 1, N) fp32
                                                          const float *chunk_dt) {  // (b·d, chunks - 1)    fp32
    extern __shared__ float4 smem4[];
    float *smem = reinterpret_cast<float *>(smem4);
    const RowBlock w = row_block(t.s, S);
    const int64_t N = t.s.dstate, L = t.s.seqlen;
    const int k = blockIdx.z + (OV == kChunk0Early ? 0 : 1);
    const int64_t t_begin = k * chunk_len, t_end = min(L, t_begin + chunk_len);
    float h[R], A2[R];
    load_A2<R>(t, w, A2);
    if (OV != kSerial) {
        copy_first_tile<R, true, AD, F>(t, w, smem, t_begin, t_end, vec8);
        if (OV != kChunk0Early || k > 0) wait_for_prerequisite_grid();
    }
    if (OV == kChunk0Early && k == 0) load_state<R>(t.h0, N, w, h);
    else carry_in<R>(w, N, chunks - 1, k, A2, h, chunk_h, chunk_dt);
    float dt_sum = 0.f;
    scan_span16<R, true, AD, F>(t, w, smem, h, A2, t_begin, t_end, vec8, dt_sum, OV != kSerial);
    if (k == chunks - 1) store_state<R>(t.last_state, N, w, h);
}

/* The kernels of versions 8-13: the passes as they are. */
template <int R, typename F>
__global__ void scan_tiles16_kernel(ScanTensors t, int S, bool vec8) {
    whole_pass<R, F, kByIndex>(t, S, vec8);
}
template <int R, typename F, Overlap OV>
__global__ void scan_chunk_states16_kernel(ScanTensors t, int S, int64_t chunk_len, int chunks, bool vec8,
                                           float *chunk_h, float *chunk_dt) {
    chunk_states_pass<R, F, OV, kByIndex>(t, S, chunk_len, chunks, vec8, chunk_h, chunk_dt);
}
template <int R, typename F, Overlap OV>
__global__ void scan_chunk_outputs16_kernel(ScanTensors t, int S, int64_t chunk_len, int chunks, bool vec8,
                                            const float *chunk_h, const float *chunk_dt) {
    chunk_outputs_pass<R, F, OV, kByIndex>(t, S, chunk_len, chunks, vec8, chunk_h, chunk_dt);
}

/* Version 14's kernels (and 15's), told how many blocks an SM must hold so
 * that the compiler keeps its registers within them: 4 up to 8 states a
 * thread, 3 at 16, 2 at 32, what versions 8-13 reach where registers are what
 * limits them (where shared memory allows fewer, as with one lane a row, it
 * only caps the registers). Left free, the running pointers took registers
 * enough to lose a block (S2 b8, R = 4: 129 registers, 3 blocks an SM, where
 * version 10 has 96 and 4). The bound costs a few spilled bytes (ptxas: 4 at
 * R = 4 and 8, the kernels of S2 b8 and of version 15 at S1 b16; 4 and 96 in
 * the chunk-state kernels of R = 8 and 16). */
constexpr int running_min_blocks(int R) { return R <= 8 ? 4 : R == 16 ? 3 : 2; }

template <int R, typename F>
__global__ void __launch_bounds__(kThreads, running_min_blocks(R))
    scan_tiles16_running_kernel(ScanTensors t, int S, bool vec8) {
    whole_pass<R, F, kRunning>(t, S, vec8);
}
template <int R, typename F, Overlap OV>
__global__ void __launch_bounds__(kThreads, running_min_blocks(R))
    scan_chunk_states16_running_kernel(ScanTensors t, int S, int64_t chunk_len, int chunks, bool vec8, float *chunk_h,
                                       float *chunk_dt) {
    chunk_states_pass<R, F, OV, kRunning>(t, S, chunk_len, chunks, vec8, chunk_h, chunk_dt);
}
template <int R, typename F, Overlap OV>
__global__ void __launch_bounds__(kThreads, running_min_blocks(R))
    scan_chunk_outputs16_running_kernel(ScanTensors t, int S, int64_t chunk_len, int chunks, bool vec8,
                                        const float *chunk_h, const float *chunk_dt) {
    chunk_outputs_pass<R, F, OV, kRunning>(t, S, chunk_len, chunks, vec8, chunk_h, chunk_dt);
}

/* A version's three kernels: one pass, or pass 1 and pass 2 of a chunked plan. */
template <int R, typename F, Overlap OV, Addressing AD>
struct PassKernels {
    static constexpr auto whole = scan_tiles16_kernel<R, F>;
    static constexpr auto states = scan_chunk_states16_kernel<R, F, OV>;
    static constexpr auto outputs = scan_chunk_outputs16_kernel<R, F, OV>;
};
template <int R, typename F, Overlap OV>
struct PassKernels<R, F, OV, kRunning> {
    static constexpr auto whole = scan_tiles16_running_kernel<R, F>;
    static constexpr auto states = scan_chunk_states16_running_kernel<R, F, OV>;
    static constexpr auto outputs = scan_chunk_outputs16_running_kernel<R, F, OV>;
};

/* ========================================================================
 * Packed rows (ScanPacked): versions 8, 9, 14 and 15
 *
 * The passes of ops/scan/scan_tiles.cuh's packed section over this chapter's
 * spans: a piece of a sequence is scan_span16 on the window [lo, hi) of the
 * row's tiles. Both passes are plain launches (the overlap of versions
 * 10-13 is not built for packed rows).
 * ====================================================================== */

/* A piece of a packed row, on this chapter's tiles. */
template <typename F, Addressing AD>
struct Span16 {
    const ScanTensors &t;
    const RowBlock &w;
    float *smem;
    bool vec8;
    template <int R>
    __device__ void states(float (&h)[R], const float (&A2)[R], int64_t lo, int64_t hi, float &dt_sum) const {
        scan_span16<R, false, AD, F, true>(t, w, smem, h, A2, lo, hi, vec8, dt_sum, false);
    }
    template <int R>
    __device__ void outputs(float (&h)[R], const float (&A2)[R], int64_t lo, int64_t hi) const {
        float dt_sum = 0.f;
        scan_span16<R, true, AD, F, true>(t, w, smem, h, A2, lo, hi, vec8, dt_sum, false);
    }
};

template <int R, typename F, Addressing AD>
__global__ void __launch_bounds__(kThreads, running_min_blocks(R))
    scan_packed16_kernel(ScanPacked pk, int S, bool vec8) {
    extern __shared__ float4 smem4[];
    const RowBlock w = row_block(pk.t.s, S);
    float A2[R];
    load_A2<R>(pk.t, w, A2);
    packed_whole_row<R>(pk, w, A2, Span16<F, AD>{pk.t, w, reinterpret_cast<float *>(smem4), vec8});
}
template <int R, typename F, Addressing AD>
__global__ void __launch_bounds__(kThreads, running_min_blocks(R))
    scan_packed_states16_kernel(ScanPacked pk, int S, int64_t chunk_len, int chunks, bool vec8, float *chunk_h,
                                float *chunk_dt) {
    extern __shared__ float4 smem4[];
    const RowBlock w = row_block(pk.t.s, S);
    float A2[R];
    load_A2<R>(pk.t, w, A2);
    packed_chunk_states<R>(pk, w, A2, Span16<F, AD>{pk.t, w, reinterpret_cast<float *>(smem4), vec8}, chunk_len,
                           chunks, blockIdx.z, chunk_h, chunk_dt);
}
template <int R, typename F, Addressing AD>
__global__ void __launch_bounds__(kThreads, running_min_blocks(R))
    scan_packed_outputs16_kernel(ScanPacked pk, int S, int64_t chunk_len, int chunks, bool vec8,
                                 const float *chunk_h, const float *chunk_dt) {
    extern __shared__ float4 smem4[];
    const RowBlock w = row_block(pk.t.s, S);
    float A2[R];
    load_A2<R>(pk.t, w, A2);
    packed_chunk_outputs<R>(pk, w, A2, Span16<F, AD>{pk.t, w, reinterpret_cast<float *>(smem4), vec8}, chunk_len,
                            chunks, blockIdx.z + 1, chunk_h, chunk_dt);
}

/* ========================================================================
 * Host side
 * ====================================================================== */

/* Pass 2 may only start early if its griddepcontrol.wait is in the code the
 * GPU runs: the code was built for sm_90 or later (not, say, for sm_80 and
 * run on an H200, where the launch attribute would still be honoured). */
template <typename Kernel>
static bool compiled_for_overlap(Kernel kernel) {
    cudaFuncAttributes a;
    cuda_check(cudaFuncGetAttributes(&a, kernel));
    return a.binaryVersion >= 90;
}

template <int R, typename F, Overlap OV, Addressing AD>
static void launch(const ScanTensors *t, const TilePlan &p, void *workspace) {
    static size_t allowed_single = 0, allowed_states = 0, allowed_outputs = 0;
    using K = PassKernels<R, F, OV, AD>;
    const ScanShape *s = &t->s;
    const size_t smem = smem_bytes<R>(p.S);
    const bool vec8 = rows16_aligned(t);
    if (p.chunks == 1) {
        allow_smem(K::whole, smem, &allowed_single);
        K::whole<<<tile_grid(s, p.S, 1), kThreads, smem>>>(*t, p.S, vec8);
        cuda_check_launch();
        return;
    }
    const int slots = p.chunks - 1;
    const ChunkStates cs = chunk_states(s, p, workspace);
    allow_smem(K::states, smem, &allowed_states);
    K::states<<<tile_grid(s, p.S, slots), kThreads, smem>>>(*t, p.S, p.chunk_len, p.chunks, vec8, cs.h, cs.dt);
    cuda_check_launch();
    allow_smem(K::outputs, smem, &allowed_outputs);
    const dim3 outputs_grid = tile_grid(s, p.S, OV == kChunk0Early ? p.chunks : slots);
    static const bool overlap = OV != kSerial && compiled_for_overlap(K::outputs);
    if (!overlap) {
        K::outputs<<<outputs_grid, kThreads, smem>>>(*t, p.S, p.chunk_len, p.chunks, vec8, cs.h, cs.dt);
        cuda_check_launch();
        return;
    }
    cudaLaunchAttribute early;  // pass 2 may start before pass 1 ends: it waits in the kernel
    early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    early.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = outputs_grid;
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = smem;
    config.stream = 0;
    config.attrs = &early;
    config.numAttrs = 1;
    cuda_check(cudaLaunchKernelEx(&config, K::outputs, *t, p.S, p.chunk_len, p.chunks,
                                  vec8, (const float *)cs.h, (const float *)cs.dt));
}

/* A packed row: one pass, or pass 1 over every chunk and pass 2 over chunks 1..K-1. */
template <int R, typename F, Addressing AD>
static void launch_packed(const ScanPacked *pk, const TilePlan &p, void *workspace) {
    static size_t allowed_single = 0, allowed_states = 0, allowed_outputs = 0;
    const ScanShape *s = &pk->t.s;
    const size_t smem = smem_bytes<R>(p.S);
    const bool vec8 = rows16_aligned(&pk->t);
    if (p.chunks == 1) {
        allow_smem(scan_packed16_kernel<R, F, AD>, smem, &allowed_single);
        scan_packed16_kernel<R, F, AD><<<tile_grid(s, p.S, 1), kThreads, smem>>>(*pk, p.S, vec8);
        cuda_check_launch();
        return;
    }
    const ChunkStates cs = chunk_states(s, p, workspace);
    allow_smem(scan_packed_states16_kernel<R, F, AD>, smem, &allowed_states);
    scan_packed_states16_kernel<R, F, AD><<<tile_grid(s, p.S, p.chunks), kThreads, smem>>>(
        *pk, p.S, p.chunk_len, p.chunks, vec8, cs.h, cs.dt);
    cuda_check_launch();
    allow_smem(scan_packed_outputs16_kernel<R, F, AD>, smem, &allowed_outputs);
    scan_packed_outputs16_kernel<R, F, AD><<<tile_grid(s, p.S, p.chunks - 1), kThreads, smem>>>(
        *pk, p.S, p.chunk_len, p.chunks, vec8, cs.h, cs.dt);
    cuda_check_launch();
}

template <typename F, Addressing AD>
static void launch_packed_plan(const ScanPacked *pk, const TilePlan &p, void *workspace) {
    dispatch_R(p.R, [&](auto R) { launch_packed<R.value, F, AD>(pk, p, workspace); });
}

template <typename F, Overlap OV, Addressing AD>
static void launch_plan(const ScanTensors *t, const TilePlan &p, void *workspace) {
    dispatch_R(p.R, [&](auto R) { launch<R.value, F, OV, AD>(t, p, workspace); });
}

template <typename F, Overlap OV, Addressing AD = kByIndex>
static void launch_tuned(const ScanTensors *t, void *workspace) {
    launch_plan<F, OV, AD>(t, plan_tuned(&t->s, kTile, kMinR), workspace);
}

/* Blocks of version 14's single pass that one SM holds at R states a thread
 * and S lanes a row (shared memory and registers), asked once per (R, S) of
 * the first device used. The kernel may use the opt-in maximum of shared
 * memory first (launch raises the limit only to what it needs, so the two
 * never leave it below a launch's need). */
template <int R>
static int resident_blocks(int S) {
    static int blocks_by_S[33] = {0};  // S <= 32 lanes a row
    if (!blocks_by_S[S]) {
        int dev, optin;
        cuda_check(cudaGetDevice(&dev));
        cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        cuda_check(cudaFuncSetAttribute(scan_tiles16_running_kernel<R, __half>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
        cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &blocks_by_S[S], scan_tiles16_running_kernel<R, __half>, kThreads, smem_bytes<R>(S)));
        if (!blocks_by_S[S]) blocks_by_S[S] = -1;  // does not fit an SM: asked once all the same
    }
    return blocks_by_S[S];
}

static int resident_blocks(int R, int S) {
    return dispatch_R(R, [S](auto r) { return resident_blocks<r.value>(S); });
}

/* Version 15's cost of a single-pass plan: the busiest SM's blocks run in
 * rounds of what it holds, and a round takes about as long as its blocks
 * times their R states a thread, full or not (a lone last round is latency-
 * bound). S1 b16 at R = 16: 512 blocks, 4 on the busiest of 132 SMs, 3 at a
 * time: 2 rounds x 3 x 16 = 96; at R = 8: 1024 blocks, 8 on it, 4 at a time:
 * 2 x 4 x 8 = 64. */
static int64_t rounds_cost(const ScanShape *s, const TilePlan &p) {
    const dim3 g = tile_grid(s, p.S, 1);
    const int64_t per_sm = ceil_div((int64_t)g.x * g.y, sm_count()), held = resident_blocks(p.R, p.S);
    if (held < 1) return INT64_MAX;  // the plan's blocks do not fit an SM
    const int64_t rounds = ceil_div(per_sm, held);
    return rounds * (per_sm < held ? per_sm : held) * p.R;
}

/* Version 15's plan: the tuned plan, and where it does not cut L, half the
 * states a thread (twice the lanes) when that lowers rounds_cost. More
 * lanes never cut L, so the workspace is version 8's. */
static TilePlan plan_rounds(const ScanShape *s) {
    const TilePlan p = plan_tuned(s, kTile, kMinR);
    if (p.chunks > 1 || p.R / 2 < kMinR || p.S * 2 > 32) return p;  // at most 32 lanes a row, as in plan_tuned
    TilePlan wider = p;
    wider.R /= 2;
    wider.S *= 2;
    return rounds_cost(s, wider) < rounds_cost(s, p) ? wider : p;
}

extern "C" const char *scan_fp16_tuned_unsupported(const ScanShape *s) {
    if (s->dstate > kMaxStates) return "N > 256: the B and C tiles of more states do not fit in shared memory";
    if (s->batch * s->groups > 65535) return "batch x groups > 65535 (grid y)";
    return NULL;
}

extern "C" size_t scan_fp16_tuned_workspace(const ScanShape *s) {
    return chunk_workspace(s, plan_tuned(s, kTile, kMinR));
}

extern "C" void scan_fp16_tuned(const ScanTensors *t, void *workspace) { launch_tuned<__half, kSerial>(t, workspace); }

extern "C" void scan_bf16_tuned(const ScanTensors *t, void *workspace) {
    launch_tuned<__nv_bfloat16, kSerial>(t, workspace);
}

extern "C" void scan_fp16_pdl(const ScanTensors *t, void *workspace) { launch_tuned<__half, kAfterScans>(t, workspace); }

extern "C" void scan_fp16_pdl_chunk0(const ScanTensors *t, void *workspace) {
    launch_tuned<__half, kChunk0Early>(t, workspace);
}

extern "C" void scan_bf16_pdl(const ScanTensors *t, void *workspace) {
    launch_tuned<__nv_bfloat16, kAfterScans>(t, workspace);
}

extern "C" void scan_bf16_pdl_chunk0(const ScanTensors *t, void *workspace) {
    launch_tuned<__nv_bfloat16, kChunk0Early>(t, workspace);
}

extern "C" void scan_fp16_running(const ScanTensors *t, void *workspace) {
    launch_tuned<__half, kAfterScans, kRunning>(t, workspace);
}

extern "C" void scan_fp16_rounds(const ScanTensors *t, void *workspace) {
    launch_plan<__half, kAfterScans, kRunning>(t, plan_rounds(&t->s), workspace);
}

extern "C" void scan_fp16_tuned_packed(const ScanPacked *pk, void *workspace) {
    launch_packed_plan<__half, kByIndex>(pk, plan_tuned(&pk->t.s, kTile, kMinR), workspace);
}

extern "C" void scan_bf16_tuned_packed(const ScanPacked *pk, void *workspace) {
    launch_packed_plan<__nv_bfloat16, kByIndex>(pk, plan_tuned(&pk->t.s, kTile, kMinR), workspace);
}

extern "C" void scan_fp16_running_packed(const ScanPacked *pk, void *workspace) {
    launch_packed_plan<__half, kRunning>(pk, plan_tuned(&pk->t.s, kTile, kMinR), workspace);
}

extern "C" void scan_fp16_rounds_packed(const ScanPacked *pk, void *workspace) {
    launch_packed_plan<__half, kRunning>(pk, plan_rounds(&pk->t.s), workspace);
}
