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
 * changes what touches memory, and two constants:
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
 *          the largest stall at batch 1 (ncu: 32-37% of the cycles between a
 *          warp's instructions); kMinR = 4 states a thread at least before L
 *          is cut, not 2: at R = 2 the per-(row, step) work and the 16-lane
 *          sums of y cost more than the extra exps of more chunks. Measured on
 *          an H200 (plots/data/04_fp16_half2_tuning.csv) against 16-step tiles
 *          and R >= 2: S1 b1 0.039 against 0.057 ms, S2 b8 L8192 1.28 against
 *          1.43 ms.
 *
 * The polynomial exps of versions 5-7 do not pay here: this kernel is not
 * MUFU-bound (03's version 7 at S1 b16: MUFU 58% of peak, issue 62%), so
 * moving exps to the FMA pipe only adds instructions (measured with 16-step
 * tiles: S1 b16 0.361 ms with one state in eight on the polynomial, 0.328
 * without).
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
 * tile, and wait in the kernel for the chunk states only. Measured bound
 * (Nsight Compute, H200, S2 b1 L512): latency; passes of 17 and 21 µs at
 * 1.47 GHz, 0.85 waves, 3 warps per scheduler, issue slots 51-53% busy.
 *
 * Version 11: pass 2 launched at pass 1's start gets SMs while pass 1 runs,
 * but its blocks could only wait there. Version 11 gives them work: chunk 0's
 * y moves from pass 1 to pass 2, whose chunk-0 blocks start from h0, need
 * nothing of pass 1 and run beside it; pass 1 writes end states only. It
 * costs chunk 0 scanned twice and one chunk of blocks more in pass 2: it
 * should pay where chunks are short and pass 2 still fits one wave. Measured
 * bound (same shape): latency; pass 1, end states only, 14 µs (64 registers),
 * pass 2 21 µs over 0.97 waves, issue slots 55-58% busy.
 *
 * Version 14: the copies of a tile, 1.4 of version 10's 12.3 instructions
 * an element at S2 b8 (about 40 a cp.async), by a pointer stepped from row to
 * row (about 10), in kernels bounded to the blocks an SM held before: 11.7
 * an element. Measured bound (same tools, S2 b8): issue slots 64% busy, MUFU
 * 52%, 4 blocks of 4 warps an SM, stalls on dependent fixed-latency
 * instructions and shared loads first.
 *
 * Version 15: version 14 with twice the lanes a row where that spreads the
 * blocks over the SMs in fewer, fuller rounds (plan_rounds; S1 b16: 1024
 * blocks, 4 an SM, where 512 blocks at 3 an SM left a lone second round).
 * Measured bound at S1 b16: issue slots 65% busy, MUFU 62%, FMA pipe 42%,
 * 4 blocks of 4 warps an SM. */
#include "kernels.h"

#include <stdint.h>
#include <string.h>

#include "cuda_check.h"
#include "rows16.cuh"
#include "scan_tiles.cuh"

constexpr int kTile = 32;               // steps per tile (03's version 7: 16)
constexpr int kMinR = 4;                // states per thread at least before L is cut (03's version 7: 2)
constexpr int kStagePitch = kTile + 8;  // halves per staged row: 80 bytes apart, 16-byte aligned (not tuned)

/* The staging area: one tile of each input as copied, F = __half or
 * __nv_bfloat16. */
template <typename F>
struct Stage {
    F *dt;  // (rows, kStagePitch) 16-bit  delta
    F *u;   // (rows, kStagePitch) 16-bit
    F *z;   // (rows, kStagePitch) 16-bit
    F *B;   // (npad, kStagePitch) 16-bit  state n at n·kStagePitch
    F *C;   // (npad, kStagePitch) 16-bit
};

template <typename F>
static __device__ Stage<F> carve_stage(F *p, int rows, int npad) {
    Stage<F> st;
    st.dt = p;
    st.u = st.dt + rows * kStagePitch;
    st.z = st.u + rows * kStagePitch;
    st.B = st.z + rows * kStagePitch;
    st.C = st.B + npad * kStagePitch;
    return st;
}

/* Bytes of shared memory: 03's fp32 tile set and partial sums, then the staging area. */
template <int R>
static size_t smem_bytes(int S) {
    using G = TileGeometry<R, kTile>;
    const int rows = kThreads / S, npad = R * S;
    return sizeof(float) * (size_t)(G::set_floats(rows, S) + G::ypart_floats()) +
           sizeof(uint16_t) * (size_t)((3 * rows + 2 * npad) * kStagePitch);
}

/* Steps [t0, t0 + kTile) of rows [0, nrows) of a (..., L) 16-bit tensor into
 * the staging area; rows >= nvalid and steps >= L as 0. Q = 2 threads per
 * row, 8 steps each. vec8 (L % 8 == 0, rows 16-byte aligned): one cp.async
 * of 16 bytes; otherwise 8 loads of 2 bytes and one 16-byte store. */
template <typename F>
static __device__ void copy_rows16(F *stage, const F *src, int64_t L, int nrows, int nvalid, int64_t t0, bool vec8) {
    constexpr int Q = kTile / 8;
    const int q = threadIdx.x % Q;
    const int64_t tt = t0 + 8 * q;
    for (int row = threadIdx.x / Q; row < nrows; row += kThreads / Q) {
        const bool ok = row < nvalid;
        F *dst = stage + row * kStagePitch + 8 * q;
        const F *r = ok ? src + row * L : src;  // row 0 stands in for a row that does not exist: nothing is read
        if (vec8) {
            cp_async16(dst, r + (tt < L ? tt : 0), ok && tt < L);
        } else {
            const unsigned short *bits = reinterpret_cast<const unsigned short *>(r);
            unsigned b[8];
#pragma unroll
            for (int e = 0; e < 8; e++) b[e] = ok && tt + e < L ? bits[tt + e] : 0u;
            *reinterpret_cast<uint4 *>(dst) =
                make_uint4(b[0] | b[1] << 16, b[2] | b[3] << 16, b[4] | b[5] << 16, b[6] | b[7] << 16);
        }
    }
}

/* How a tile's copies find their rows. */
enum Addressing {
    kByIndex,  // versions 8-13: copy_rows16, each row's address from its index
    kRunning,  // versions 14, 15: copy_rows16_running where vec8 (else copy_rows16), a pointer stepped row to row
};

/* Version 14: copy_rows16's vec8 path with the addresses kept running.
 * copy_rows16 finds every row's source from its index (a 64-bit multiply),
 * clamps the step and tests vec8 for each 16 bytes: about 40 instructions a
 * cp.async (SASS under Nsight Compute, version 10 at S2 b8: 1.4 of its 12.3
 * instructions an element). Here `off`, this thread's first element of the
 * tile (row·L + t0 + 8q, the same in every tensor), is found once a tile and
 * each further row is a pointer step: about 10 a cp.async. */
template <typename F>
static __device__ void copy_rows16_running(F *stage, const F *src, int64_t L, int nrows, int nvalid, int64_t off,
                                           bool in_seq) {
    constexpr int Q = kTile / 8, kStep = kThreads / Q;  // threads a row, rows a pass
    int row = threadIdx.x / Q;
    const F *p = src + off;  // this thread's 16 bytes of its current row
    F *dst = stage + row * kStagePitch + 8 * (threadIdx.x % Q);
#pragma unroll 1
    for (; row < nrows; row += kStep, p += kStep * L, dst += kStep * kStagePitch) {
        const bool ok = in_seq && row < nvalid;
        cp_async16(dst, ok ? p : src, ok);  // src stands in where nothing is read: valid, 16-byte aligned
    }
}

/* One tile's copies: u, delta, B always; C and z only in a pass that writes y. */
template <int R, bool WRITE_Y, Addressing AD, typename F>
static __device__ void copy_stage(const Stage<F> &st, const ScanTensors &t, const RowBlock &w, int64_t t0, bool vec8) {
    const int64_t L = t.s.seqlen;
    const int N = (int)t.s.dstate, npad = R * w.S;
    if (AD == kRunning && vec8) {
        constexpr int Q = kTile / 8;
        const int64_t tt = t0 + 8 * (threadIdx.x % Q), off = (threadIdx.x / Q) * L + tt;
        const bool in_seq = tt < L;
        copy_rows16_running(st.dt, (const F *)t.delta + w.row0 * L, L, w.rows, w.nvalid, off, in_seq);
        copy_rows16_running(st.u, (const F *)t.u + w.row0 * L, L, w.rows, w.nvalid, off, in_seq);
        copy_rows16_running(st.B, (const F *)t.B + w.bg * N * L, L, npad, N, off, in_seq);
        if (WRITE_Y) {
            copy_rows16_running(st.C, (const F *)t.C + w.bg * N * L, L, npad, N, off, in_seq);
            if (t.z) copy_rows16_running(st.z, (const F *)t.z + w.row0 * L, L, w.rows, w.nvalid, off, in_seq);
        }
        return;
    }
    copy_rows16(st.dt, (const F *)t.delta + w.row0 * L, L, w.rows, w.nvalid, t0, vec8);
    copy_rows16(st.u, (const F *)t.u + w.row0 * L, L, w.rows, w.nvalid, t0, vec8);
    copy_rows16(st.B, (const F *)t.B + w.bg * N * L, L, npad, N, t0, vec8);
    if (WRITE_Y) {
        copy_rows16(st.C, (const F *)t.C + w.bg * N * L, L, npad, N, t0, vec8);
        if (t.z) copy_rows16(st.z, (const F *)t.z + w.row0 * L, L, w.rows, w.nvalid, t0, vec8);
    }
}

/* Four staged values (steps 4q .. 4q + 3 of a row) widened to fp32. */
template <typename F>
static __device__ __forceinline__ float4 widen4(const F *p) {
    const uint2 bits = *reinterpret_cast<const uint2 *>(p);
    typename Pair<F>::type lo, hi;
    memcpy(&lo, &bits.x, sizeof lo);
    memcpy(&hi, &bits.y, sizeof hi);
    const float2 a = Pair<F>::widen(lo), b = Pair<F>::widen(hi);
    return make_float4(a.x, a.y, b.x, b.y);
}

/* Rows [0, nrows) of a staged tensor widened into an fp32 tile (03's layout). */
template <int R, bool STATE_ROWS, typename F>
static __device__ void widen_rows(float *tile, const F *stage, int nrows) {
    constexpr int Q = kTile / 4;
    const int q = threadIdx.x % Q;
    for (int row = threadIdx.x / Q; row < nrows; row += kThreads / Q)
        *reinterpret_cast<float4 *>(tile + TileGeometry<R, kTile>::template row_offset<STATE_ROWS>(row) + 4 * q) =
            widen4(stage + row * kStagePitch + 4 * q);
}

/* The staged tile widened into 03's fp32 tiles, delta turned into Δ on the
 * way: Δ = 0 past the sequence's end and on rows past the block's end, so
 * that their states stay as they are (their results are never stored). */
template <int R, bool WRITE_Y, typename F>
static __device__ void widen_stage(const TileSet &ts, const Stage<F> &st, const ScanTensors &t, const RowBlock &w,
                                   int64_t t0) {
    constexpr int Q = kTile / 4;
    const int q = threadIdx.x % Q;
    const int64_t left = t.s.seqlen - (t0 + 4 * q);
    const int steps = left < 0 ? 0 : left < 4 ? (int)left : 4;  // of this thread's 4, inside the sequence
    const float *bias = t.delta_bias ? t.delta_bias + w.c0 : NULL;  // (rows,) fp32
    const bool softplus = t.s.softplus;
    for (int row = threadIdx.x / Q; row < w.rows; row += kThreads / Q) {
        const float4 v = widen4(st.dt + row * kStagePitch + 4 * q);
        const bool ok = row < w.nvalid;
        const float b = ok && bias ? bias[row] : 0.f;
        // delta_vals[r][i] = float(delta_vals_load[r][i]) + delta_bias[r];  then softplus (dt_poly)
        *reinterpret_cast<float4 *>(ts.dt + row * TileGeometry<R, kTile>::TP + 4 * q) =
            make_float4(dt_or_zero(dt_poly(v.x, b, softplus), ok && 0 < steps),
                        dt_or_zero(dt_poly(v.y, b, softplus), ok && 1 < steps),
                        dt_or_zero(dt_poly(v.z, b, softplus), ok && 2 < steps),
                        dt_or_zero(dt_poly(v.w, b, softplus), ok && 3 < steps));
    }
    const int npad = R * w.S;
    widen_rows<R, false>(ts.u, st.u, w.rows);
    widen_rows<R, true>(ts.B, st.B, npad);
    if (WRITE_Y) {
        widen_rows<R, true>(ts.C, st.C, npad);
        if (t.z) widen_rows<R, false>(ts.z, st.z, w.rows);
    }
}

/* y for one tile (tile_y4: the lanes' partial sums added, D·u, the z gate),
 * narrowed to F; 8-byte stores (4 steps) where the rows are aligned. */
template <int R, typename F>
static __device__ void store_y16(const ScanTensors &t, const RowBlock &w, const TileSet &ts, const float *ypart,
                                 int64_t t0, bool vec8) {
    constexpr int Q = kTile / 4;
    const int64_t L = t.s.seqlen;
    const int q = threadIdx.x % Q;
    const int64_t tt = t0 + 4 * q;
    if (tt >= L) return;
    const int steps = L - tt < 4 ? (int)(L - tt) : 4;  // of this thread's 4, inside the sequence
    for (int row = threadIdx.x / Q; row < w.nvalid; row += kThreads / Q) {
        float y[4];
        tile_y4<R, kTile>(t, w, ts, ypart, row, q, y);
        F *y_row = (F *)t.y + (w.row0 + row) * L + tt;  // (4,) of this thread's row
        if (vec8) {
            const typename Pair<F>::type lo = Pair<F>::narrow(y[0], y[1]), hi = Pair<F>::narrow(y[2], y[3]);
            uint2 bits;
            memcpy(&bits.x, &lo, sizeof lo);
            memcpy(&bits.y, &hi, sizeof hi);
            *reinterpret_cast<uint2 *>(y_row) = bits;
        } else {
#pragma unroll
            for (int k = 0; k < 4; k++)
                if (k < steps) y_row[k] = Pair<F>::narrow1(y[k]);
        }
    }
}

/* The block's staging area: in shared memory after the fp32 tiles and the
 * partial sums of y. */
template <int R, typename F>
static __device__ Stage<F> block_stage(float *smem, const RowBlock &w) {
    using G = TileGeometry<R, kTile>;
    return carve_stage(reinterpret_cast<F *>(smem + G::set_floats(w.rows, w.S) + G::ypart_floats()), w.rows, R * w.S);
}

/* The copies of a span's first tile, issued and committed. */
template <int R, bool WRITE_Y, Addressing AD, typename F>
static __device__ void copy_first_tile(const ScanTensors &t, const RowBlock &w, float *smem, int64_t t_begin,
                                       int64_t t_end, bool vec8) {
    const int64_t ntiles = ceil_div(t_end - t_begin, kTile);
    if (ntiles > 0) copy_stage<R, WRITE_Y, AD>(block_stage<R, F>(smem, w), t, w, t_begin, vec8);
    cp_async_commit();
}

/* Steps [t_begin, t_end) of the block's rows, one tile at a time. Tile i+1's
 * copies are issued once tile i has been widened (the staging area is free
 * again) and, as cp.async, land while tile i is scanned and stored. Three barriers per
 * tile: landed, widened, scanned; the store of tile i ends before the
 * barrier that lets tile i+1 be widened over its tiles. */
template <int R, bool WRITE_Y, Addressing AD, typename F>
static __device__ void scan_span16(const ScanTensors &t, const RowBlock &w, float *smem, float (&h)[R],
                                   const float (&A2)[R], int64_t t_begin, int64_t t_end, bool vec8, float &dt_sum,
                                   bool first_copied) {
    using G = TileGeometry<R, kTile>;
    const TileSet ts = carve_tiles<R, kTile>(smem, w.rows, w.S);
    float *ypart = smem + G::set_floats(w.rows, w.S);  // (kThreads, TP) fp32
    const Stage<F> st = block_stage<R, F>(smem, w);
    const int64_t ntiles = ceil_div(t_end - t_begin, kTile);
    if (!first_copied) copy_first_tile<R, WRITE_Y, AD, F>(t, w, smem, t_begin, t_end, vec8);
    for (int64_t i = 0; i < ntiles; i++) {
        const int64_t t0 = t_begin + i * kTile;
        cp_async_wait<0>();  // this thread's copies of tile i have landed
        __syncthreads();     // and every thread's; tile i-1 is stored
        widen_stage<R, WRITE_Y>(ts, st, t, w, t0);
        __syncthreads();
        if (i + 1 < ntiles) copy_stage<R, WRITE_Y, AD>(st, t, w, t0 + kTile, vec8);
        cp_async_commit();
        scan_tile<R, kTile, WRITE_Y>(ts, w, ypart, h, A2, dt_sum);
        __syncthreads();
        if (WRITE_Y) store_y16<R, F>(t, w, ts, ypart, t0, vec8);
    }
}

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
 * kAfterScans lets pass 2 launch once the block's scans are done. Measured on
 * an H200 (plots/data/04_fp16_half2_tuning.csv, sweeps 5 and 6): letting it
 * at the start of pass 1, or at the start of the last tile, was faster at S2
 * b1 L512 (0.028 against 0.029 ms) but slower at S1 b1 and b2 (0.043 against
 * 0.038, 0.064 against 0.058) than here. */
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

template <typename F, Overlap OV, Addressing AD>
static void launch_plan(const ScanTensors *t, const TilePlan &p, void *workspace) {
    switch (p.R) {
    case 1: launch<1, F, OV, AD>(t, p, workspace); break;
    case 2: launch<2, F, OV, AD>(t, p, workspace); break;
    case 4: launch<4, F, OV, AD>(t, p, workspace); break;
    case 8: launch<8, F, OV, AD>(t, p, workspace); break;
    case 16: launch<16, F, OV, AD>(t, p, workspace); break;
    default: launch<32, F, OV, AD>(t, p, workspace); break;
    }
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
    switch (R) {
    case 1: return resident_blocks<1>(S);
    case 2: return resident_blocks<2>(S);
    case 4: return resident_blocks<4>(S);
    case 8: return resident_blocks<8>(S);
    case 16: return resident_blocks<16>(S);
    default: return resident_blocks<32>(S);
    }
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
