/* 03_fused_cuda, GPU: versions 5-7, scan_fused_tiled, scan_fused_chunked and
 * scan_fused_tuned: time tiles through shared memory, L cut into chunks when
 * b·d cannot fill the GPU, tiles copied one ahead (kernels.cu's header has
 * the per-element budget). */
#include "kernels.h"

#include <limits.h>
#include <stdint.h>

#include "cuda_check.h"
#include "scalars.cuh"
#include "scan_tiles.cuh"

/* ========================================================================
 * Versions 5-7: time tiles through shared memory
 *
 * A block is 128 threads on `rows` consecutive channels of one (batch, group),
 * S lanes per channel (S = 128 / rows), each lane holding R states:
 *
 *     thread = r·S + s   row r = channel c0 + r,  states n = s·R .. s·R + R-1
 *
 * and the block walks time in tiles of T steps:
 *   load     u, delta, z  (rows x T) and B, C (N x T) into shared memory with
 *            coalesced float4 loads (B and C once for all the block's rows);
 *            Δ = softplus(delta + bias) once per (row, t), not once per lane
 *   scan     each thread walks its row through the tile, reading Δ_t, u_t
 *            (float4: 4 steps) and B_t, C_t of its states (float4 per state),
 *            and writes its partial y_t (sum over its R states) to shared memory
 *   output   y_t = Σ_lanes partial + D·u_t, times silu(z_t): float4 stores
 *
 * The pieces that do not depend on fp32 rows (tile geometry, the block's
 * place, the per-tile scan, cp.async, the chunk carries and the plans) are in
 * ops/scan/scan_tiles.cuh: 04's version 8 runs them on 16-bit rows.
 * ====================================================================== */

constexpr int kTileSync = 32;   // time steps per tile, versions 5 and 6
constexpr int kTileAsync = 16;  // time steps per tile, version 7 (two tiles in flight)
/* Version 7 cuts L only once 4 states a thread are still short. With 2 (its
 * first plan: 16 lanes of 2 states a row at batch 1) the per-(row, step) work
 * and the 16-lane sums of y cost more than the extra exps of more chunks
 * (04's version 8 found the same). 8 is faster still at the longest rows and
 * slower at short ones (tuning.md, sweep 1). */
constexpr int kTunedMinR = 4;

/* Four steps [tt, tt+4) of one row; steps >= L read as 0. vec4: the row is
 * 16-byte aligned (L % 4 == 0), so the four steps are all in or all out. */
static __device__ __forceinline__ float4 load4(const float *row, int64_t tt, int64_t L, bool vec4) {
    if (vec4) return tt < L ? *reinterpret_cast<const float4 *>(row + tt) : make_float4(0.f, 0.f, 0.f, 0.f);
    return make_float4(tt < L ? row[tt] : 0.f, tt + 1 < L ? row[tt + 1] : 0.f, tt + 2 < L ? row[tt + 2] : 0.f,
                       tt + 3 < L ? row[tt + 3] : 0.f);
}

/* Every tile loop below walks rows the same way: a tile row is Q = T/4
 * float4s, thread i always takes float4 q = i % Q of rows i/Q, i/Q + 128/Q,
 * ... so Q consecutive threads read 4T consecutive bytes of one row. */

/* Cooperative load of steps [t0, t0+T) of rows [0, nrows) of a (..., L)
 * tensor (row stride L) into a tile; rows >= nvalid read as 0. */
template <int R, int T, bool STATE_ROWS>
static __device__ void load_rows(float *tile, const float *src, int64_t L, int nrows, int nvalid, int64_t t0,
                                 bool vec4) {
    constexpr int Q = T / 4;
    const int q = threadIdx.x % Q;
    for (int row = threadIdx.x / Q; row < nrows; row += kThreads / Q) {
        const float4 v = row < nvalid ? load4(src + row * L, t0 + 4 * q, L, vec4) : make_float4(0.f, 0.f, 0.f, 0.f);
        *reinterpret_cast<float4 *>(tile + TileGeometry<R, T>::template row_offset<STATE_ROWS>(row) + 4 * q) = v;
    }
}

/* As load_rows for delta, turning it into Δ on the way (versions 5 and 6). */
template <int T>
static __device__ void load_dt(float *tile, const float *delta, const float *bias, bool softplus, int64_t L,
                               int nrows, int nvalid, int64_t t0, bool vec4) {
    constexpr int Q = T / 4, TP = T + 4;
    const int q = threadIdx.x % Q;
    const int64_t tt = t0 + 4 * q;
    for (int row = threadIdx.x / Q; row < nrows; row += kThreads / Q) {
        const bool ok = row < nvalid;
        const float4 v = ok ? load4(delta + row * L, tt, L, vec4) : make_float4(0.f, 0.f, 0.f, 0.f);
        const float b = ok && bias ? bias[row] : 0.f;
        *reinterpret_cast<float4 *>(tile + row * TP + 4 * q) = make_float4(
            dt_or_zero(dt_fast(v.x, b, softplus), ok && tt < L), dt_or_zero(dt_fast(v.y, b, softplus), ok && tt + 1 < L),
            dt_or_zero(dt_fast(v.z, b, softplus), ok && tt + 2 < L), dt_or_zero(dt_fast(v.w, b, softplus), ok && tt + 3 < L));
    }
}

/* y for one tile (tile_y4: the lanes' partial sums added, D·u, the z gate);
 * float4 stores where the rows are aligned. PACKED: only the steps inside
 * the window [lo, hi) of a packed row. */
template <int R, int T, bool PACKED = false>
static __device__ void store_y(const ScanTensors &t, const RowBlock &w, const TileSet &ts, const float *ypart,
                               int64_t t0, bool vec4, int64_t lo = 0, int64_t hi = 0) {
    constexpr int Q = T / 4;
    const int64_t L = t.s.seqlen;
    const int q = threadIdx.x % Q;
    const int64_t tt = t0 + 4 * q;
    int klo = 0, khi = 4;  // of this thread's 4 steps, the ones to store
    if (PACKED) window4(tt, lo, hi, &klo, &khi);
    if (PACKED ? klo >= khi : tt >= L) return;
    const int steps = PACKED ? khi : L - tt < 4 ? (int)(L - tt) : 4;  // of this thread's 4, inside the sequence
    if (PACKED) vec4 = vec4 && klo == 0 && khi == 4;
    float *y_row = (float *)t.y + (w.row0 + threadIdx.x / Q) * L + tt;  // (4,) of this thread's current row
    for (int row = threadIdx.x / Q; row < w.nvalid; row += kThreads / Q, y_row += (kThreads / Q) * L) {
        float y[4];
        tile_y4<R, T>(t, w, ts, ypart, row, q, y);
        if (vec4) {
            __stcs(reinterpret_cast<float4 *>(y_row), make_float4(y[0], y[1], y[2], y[3]));  // streaming: never read again
        } else {
#pragma unroll
            for (int k = 0; k < 4; k++)
                if (k >= klo && k < steps) y_row[k] = y[k];
        }
    }
}

/* Pointers of one block's rows. */
struct RowInputs {
    const float *u, *delta, *z;  // (rows, L) from the block's first row; z NULL without z
    const float *B, *C;          // (N, L) of the block's (batch, group)
    const float *bias;           // (rows,) or NULL
};

static __device__ RowInputs row_inputs(const ScanTensors &t, const RowBlock &w) {
    const int64_t L = t.s.seqlen;
    RowInputs in;
    in.u = (const float *)t.u + w.row0 * L;
    in.delta = (const float *)t.delta + w.row0 * L;
    in.z = t.z ? (const float *)t.z + w.row0 * L : NULL;
    in.B = (const float *)t.B + w.bg * t.s.dstate * L;
    in.C = (const float *)t.C + w.bg * t.s.dstate * L;
    in.bias = t.delta_bias ? t.delta_bias + w.c0 : NULL;
    return in;
}

/* Steps [t_begin, t_end) of the block's rows, one tile at a time, loads then
 * scan then output, three barriers per tile (versions 5 and 6). Loads are
 * not overlapped within a block; other resident blocks hide them. */
template <int R, int T, bool WRITE_Y>
static __device__ void scan_span_sync(const ScanTensors &t, const RowBlock &w, float *smem, float (&h)[R],
                                      const float (&A2)[R], int64_t t_begin, int64_t t_end, float &dt_sum) {
    using G = TileGeometry<R, T>;
    const TileSet ts = carve_tiles<R, T>(smem, w.rows, w.S);
    float *ypart = smem + G::set_floats(w.rows, w.S);
    const RowInputs in = row_inputs(t, w);
    const int64_t L = t.s.seqlen;
    const int N = (int)t.s.dstate, npad = R * w.S;
    const bool vec4 = L % 4 == 0;
    for (int64_t t0 = t_begin; t0 < t_end; t0 += T) {
        load_dt<T>(ts.dt, in.delta, in.bias, t.s.softplus, L, w.rows, w.nvalid, t0, vec4);
        load_rows<R, T, false>(ts.u, in.u, L, w.rows, w.nvalid, t0, vec4);
        load_rows<R, T, true>(ts.B, in.B, L, npad, N, t0, vec4);
        if (WRITE_Y) {
            load_rows<R, T, true>(ts.C, in.C, L, npad, N, t0, vec4);
            if (in.z) load_rows<R, T, false>(ts.z, in.z, L, w.rows, w.nvalid, t0, vec4);
        }
        __syncthreads();
        scan_tile<R, T, WRITE_Y>(ts, w, ypart, h, A2, dt_sum);
        __syncthreads();
        if (WRITE_Y) {
            store_y<R, T>(t, w, ts, ypart, t0, vec4);
            __syncthreads();
        }
    }
}

/* ========================================================================
 * Version 7's tiles: copies one tile ahead
 *
 * Version 7, the tuned kernel, is version 6's two kernels with three changes:
 *   - the plan (plan_tuned): up to 32 states per thread, then fewer states per
 *     thread over more lanes until the rows fill the GPU, which costs no exps;
 *     chunks of L only when even 4 states per thread leave it short;
 *   - tiles of 16 steps copied global -> shared with cp.async one tile ahead
 *     (two sets of tiles), so each block's loads overlap its own scan;
 *   - Δ by a polynomial softplus (dt_poly) instead of log1pf.
 * ====================================================================== */

/* As load_rows, as cp.async copies that land while the thread goes on. A
 * whole tile inside the sequence with aligned rows (every tile but the last
 * when L % 4 == 0) takes one 16-byte copy per float4 and no bounds tests. */
template <int R, int T, bool STATE_ROWS>
static __device__ void copy_rows_async(float *tile, const float *src, int64_t L, int nrows, int nvalid, int64_t t0,
                                       bool vec4) {
    constexpr int Q = T / 4;
    const int q = threadIdx.x % Q;
    const int64_t tt = t0 + 4 * q;
    const bool whole = vec4 && t0 + T <= L;
    const float *p = src + (threadIdx.x / Q) * L;  // this thread's current row
    for (int row = threadIdx.x / Q; row < nrows; row += kThreads / Q, p += (kThreads / Q) * L) {
        const bool ok = row < nvalid;
        float *dst = tile + TileGeometry<R, T>::template row_offset<STATE_ROWS>(row) + 4 * q;
        const float *r = ok ? p : src;  // row 0 stands in for a row that does not exist: nothing is read
        if (whole) {
            cp_async16(dst, r + tt, ok);
        } else if (vec4) {
            cp_async16(dst, r + (tt < L ? tt : 0), ok && tt < L);
        } else {
#pragma unroll
            for (int k = 0; k < 4; k++) cp_async4(dst + k, r + (tt + k < L ? tt + k : 0), ok && tt + k < L);
        }
    }
}

/* delta -> Δ in place, once the raw tile has landed. Rows past the block's
 * end keep the zeros the copies wrote (their threads' results are never
 * stored); steps past the sequence's end get Δ = 0. PACKED: steps outside
 * the window [lo, hi) of a packed row get Δ = 0 too. */
template <int T, bool PACKED = false>
static __device__ void dt_in_place(float *tile, const float *bias, bool softplus, int64_t L, int nvalid, int64_t t0,
                                   int64_t lo = 0, int64_t hi = 0) {
    constexpr int Q = T / 4, TP = T + 4;
    const int q = threadIdx.x % Q;
    const int64_t left = L - (t0 + 4 * q);
    int klo = 0, khi = 4;  // of this thread's 4 steps, the ones inside the window
    if (PACKED) window4(t0 + 4 * q, lo, hi, &klo, &khi);
    const int steps = PACKED ? khi : left < 0 ? 0 : left < 4 ? (int)left : 4;  // of this thread's 4, inside the sequence
    for (int row = threadIdx.x / Q; row < nvalid; row += kThreads / Q) {
        float4 *p = reinterpret_cast<float4 *>(tile + row * TP + 4 * q);
        const float4 v = *p;
        const float b = bias ? bias[row] : 0.f;
        *p = make_float4(dt_or_zero(dt_poly(v.x, b, softplus), klo <= 0 && 0 < steps),
                         dt_or_zero(dt_poly(v.y, b, softplus), klo <= 1 && 1 < steps),
                         dt_or_zero(dt_poly(v.z, b, softplus), klo <= 2 && 2 < steps),
                         dt_or_zero(dt_poly(v.w, b, softplus), klo <= 3 && 3 < steps));
    }
}

/* A packed row's tile on a sequence boundary: u, z, B and C of the steps
 * outside the window [lo, hi) set to 0 in place (Δ = 0 there already), so
 * that a NaN of the next request cannot reach this one through 0·NaN. */
template <int R, int T, bool WRITE_Y>
static __device__ void zero_outside(const TileSet &ts, const RowBlock &w, bool has_z, int64_t t0, int64_t lo,
                                    int64_t hi) {
    using G = TileGeometry<R, T>;
    constexpr int Q = T / 4;
    const int q = threadIdx.x % Q;
    int klo, khi;
    window4(t0 + 4 * q, lo, hi, &klo, &khi);
    for (int row = threadIdx.x / Q; row < w.rows; row += kThreads / Q) {
        float4 *u = reinterpret_cast<float4 *>(ts.u + row * G::TP + 4 * q);
        *u = keep4(*u, klo, khi);
        if (WRITE_Y && has_z) {
            float4 *z = reinterpret_cast<float4 *>(ts.z + row * G::TP + 4 * q);
            *z = keep4(*z, klo, khi);
        }
    }
    for (int row = threadIdx.x / Q; row < R * w.S; row += kThreads / Q) {
        float4 *b = reinterpret_cast<float4 *>(ts.B + G::template row_offset<true>(row) + 4 * q);
        *b = keep4(*b, klo, khi);
        if (WRITE_Y) {
            float4 *c = reinterpret_cast<float4 *>(ts.C + G::template row_offset<true>(row) + 4 * q);
            *c = keep4(*c, klo, khi);
        }
    }
}

template <int R, int T, bool WRITE_Y>
static __device__ void copy_tiles_async(const TileSet &ts, const ScanTensors &t, const RowBlock &w, int64_t t0) {
    const RowInputs in = row_inputs(t, w);
    const int64_t L = t.s.seqlen;
    const int N = (int)t.s.dstate, npad = R * w.S;
    const bool vec4 = L % 4 == 0;
    copy_rows_async<R, T, false>(ts.dt, in.delta, L, w.rows, w.nvalid, t0, vec4);
    copy_rows_async<R, T, false>(ts.u, in.u, L, w.rows, w.nvalid, t0, vec4);
    copy_rows_async<R, T, true>(ts.B, in.B, L, npad, N, t0, vec4);
    if (WRITE_Y) {
        copy_rows_async<R, T, true>(ts.C, in.C, L, npad, N, t0, vec4);
        if (in.z) copy_rows_async<R, T, false>(ts.z, in.z, L, w.rows, w.nvalid, t0, vec4);
    }
}

/* As scan_span_sync with two sets of tiles: tile i+1's copies are issued
 * before tile i is scanned, so DRAM works while the MUFU does (S2 at N = 16
 * needs both at once: its bytes floor equals its exp floor). Four barriers
 * per tile: landed, Δ formed, scanned, output. PACKED: [t_begin, t_end) is
 * a piece of a packed row, scanned on the row's own tiles (multiples of T
 * from step 0), the steps outside it masked. */
template <int R, int T, bool WRITE_Y, bool PACKED = false>
static __device__ void scan_span_async(const ScanTensors &t, const RowBlock &w, float *smem, float (&h)[R],
                                       const float (&A2)[R], int64_t t_begin, int64_t t_end, float &dt_sum) {
    using G = TileGeometry<R, T>;
    const int set = G::set_floats(w.rows, w.S);  // set i % 2 starts at smem + (i % 2)·set
    float *ypart = smem + 2 * set;
    const int64_t L = t.s.seqlen;
    const bool vec4 = L % 4 == 0;
    const float *bias = t.delta_bias ? t.delta_bias + w.c0 : NULL;  // (rows,)
    const int64_t tile0 = PACKED ? t_begin - t_begin % T : t_begin, ntiles = ceil_div(t_end - tile0, T);
    if (ntiles > 0) copy_tiles_async<R, T, WRITE_Y>(carve_tiles<R, T>(smem, w.rows, w.S), t, w, tile0);
    cp_async_commit();
    for (int64_t i = 0; i < ntiles; i++) {
        const int64_t t0 = tile0 + i * T;
        const TileSet ts = carve_tiles<R, T>(smem + (i & 1) * set, w.rows, w.S);
        if (i + 1 < ntiles)
            copy_tiles_async<R, T, WRITE_Y>(carve_tiles<R, T>(smem + ((i + 1) & 1) * set, w.rows, w.S), t, w, t0 + T);
        cp_async_commit();
        cp_async_wait<1>();  // this thread's copies of tile i have landed
        __syncthreads();     // and every thread's
        dt_in_place<T, PACKED>(ts.dt, bias, t.s.softplus, L, w.nvalid, t0, t_begin, t_end);
        if (PACKED && (t0 < t_begin || t0 + T > t_end)) zero_outside<R, T, WRITE_Y>(ts, w, t.z != NULL, t0, t_begin, t_end);
        __syncthreads();
        scan_tile<R, T, WRITE_Y>(ts, w, ypart, h, A2, dt_sum);
        __syncthreads();
        if (WRITE_Y) {
            store_y<R, T, PACKED>(t, w, ts, ypart, t0, vec4, t_begin, t_end);
            __syncthreads();
        }
    }
}

template <int R, int T, bool WRITE_Y, bool ASYNC>
static __device__ __forceinline__ void scan_span(const ScanTensors &t, const RowBlock &w, float *smem, float (&h)[R],
                                                 const float (&A2)[R], int64_t t_begin, int64_t t_end,
                                                 float &dt_sum) {
    if constexpr (ASYNC) scan_span_async<R, T, WRITE_Y>(t, w, smem, h, A2, t_begin, t_end, dt_sum);
    else scan_span_sync<R, T, WRITE_Y>(t, w, smem, h, A2, t_begin, t_end, dt_sum);
}

/* ========================================================================
 * The kernels of versions 5-7
 * ====================================================================== */

/* Version 5. The whole sequence in one pass, from h0 to last_state. Versions
 * 6 and 7 run this kernel too when L needs no chunks (one chunk).
 * Bytes: DRAM 4·b·d·L·(3 + z) + 8·b·G·N·L + state; shared memory per element
 * 0.5 LDS.128 (B, C). Exps: b·d·L·N ex2, b·d·L (softplus) + 2·b·d·L (silu). */
template <int R, int T, bool ASYNC>
__global__ void scan_tiles_kernel(ScanTensors t, int S) {
    extern __shared__ float4 smem4[];
    const RowBlock w = row_block(t.s, S);
    float h[R], A2[R];
    load_A2<R>(t, w, A2);
    load_state<R>(t.h0, t.s.dstate, w, h);
    float dt_sum = 0.f;
    scan_span<R, T, true, ASYNC>(t, w, reinterpret_cast<float *>(smem4), h, A2, 0, t.s.seqlen, dt_sum);
    store_state<R>(t.last_state, t.s.dstate, w, h);
}

/* ========================================================================
 * Versions 6 and 7: chunks over L
 *
 * Version 6. Version 5 with L cut into K chunks when the b·d·S threads
 * cannot fill the GPU (batch 1: S1 has 2048 rows for 132 SMs): a pass then
 * runs (K - 1)·b·d·S threads, at the price of up to 2x the exps.
 *
 * With K chunks of L, chunk k's end state is linear in its start state:
 *     h_end(k) = decay(k) ⊙ h_start(k) + local(k),   decay(k)[n] = exp2(A2[n]·ΣΔ over chunk k)
 * where local(k) is the chunk scanned from 0. So:
 *   pass 1 (chunk states)  chunks 0..K-2 at once; chunk 0 from h0 writes its y
 *                          (its start is known), the others store local(k), ΣΔ
 *   pass 2 (chunk outputs) chunks 1..K-1 at once; each folds the carries of
 *                          the chunks before it (K·N exps per row, negligible),
 *                          then scans its chunk again from its true start, writing y
 * Exps: (2K - 2)/K · b·d·L·N, up to 2x: worth it only when b·d alone leaves
 * the GPU idle (batch 1, long L), never at batch 16.
 * ====================================================================== */

/* Pass 1. Block z = chunk k = 0..K-2.
 * Bytes: as version 5 for chunk 0; u, delta, B for the others, plus their
 * end states, (b·d, K-1, N + 1) fp32. Exps: b·d·N per step of chunks 0..K-2. */
template <int R, int T, bool ASYNC>
__global__ void scan_chunk_states_kernel(ScanTensors t, int S, int64_t chunk_len, int chunks,
                                         float *chunk_h,     // (b·d, chunks - 1, N) fp32, written
                                         float *chunk_dt) {  // (b·d, chunks - 1)    fp32, written
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
    if (k == 0) scan_span<R, T, true, ASYNC>(t, w, smem, h, A2, t_begin, t_end, dt_sum);
    else scan_span<R, T, false, ASYNC>(t, w, smem, h, A2, t_begin, t_end, dt_sum);
    store_chunk_end<R>(w, N, chunks - 1, k, h, dt_sum, chunk_h, chunk_dt);
}

/* Pass 2. Block z = chunk k - 1 for k = 1..K-1.
 * Bytes: as version 5 over chunks 1..K-1, plus the chunk states read.
 * Exps: b·d·N per step of chunks 1..K-1, plus b·d·N·k per chunk for the carries. */
template <int R, int T, bool ASYNC>
__global__ void scan_chunk_outputs_kernel(ScanTensors t, int S, int64_t chunk_len, int chunks,
                                          const float *chunk_h,     // (b·d, chunks - 1, N) fp32
                                          const float *chunk_dt) {  // (b·d, chunks - 1)    fp32
    extern __shared__ float4 smem4[];
    float *smem = reinterpret_cast<float *>(smem4);
    const RowBlock w = row_block(t.s, S);
    const int64_t N = t.s.dstate, L = t.s.seqlen;
    const int k = blockIdx.z + 1;
    const int64_t t_begin = k * chunk_len, t_end = min(L, t_begin + chunk_len);
    float h[R], A2[R];
    load_A2<R>(t, w, A2);
    carry_in<R>(w, N, chunks - 1, k, A2, h, chunk_h, chunk_dt);
    float dt_sum = 0.f;
    scan_span<R, T, true, ASYNC>(t, w, smem, h, A2, t_begin, t_end, dt_sum);
    if (k == chunks - 1) store_state<R>(t.last_state, N, w, h);
}

/* ========================================================================
 * Version 7 on a packed row (ScanPacked)
 *
 * The passes of ops/scan/scan_tiles.cuh's packed section over version 7's
 * spans: a piece of a sequence is scan_span_async on the window [lo, hi)
 * of the row's tiles.
 * ====================================================================== */

template <int T>
struct SpanAsync {
    const ScanTensors &t;
    const RowBlock &w;
    float *smem;
    template <int R>
    __device__ void states(float (&h)[R], const float (&A2)[R], int64_t lo, int64_t hi, float &dt_sum) const {
        scan_span_async<R, T, false, true>(t, w, smem, h, A2, lo, hi, dt_sum);
    }
    template <int R>
    __device__ void outputs(float (&h)[R], const float (&A2)[R], int64_t lo, int64_t hi) const {
        float dt_sum = 0.f;
        scan_span_async<R, T, true, true>(t, w, smem, h, A2, lo, hi, dt_sum);
    }
};

template <int R, int T>
__global__ void scan_packed_kernel(ScanPacked pk, int S) {
    extern __shared__ float4 smem4[];
    const RowBlock w = row_block(pk.t.s, S);
    float A2[R];
    load_A2<R>(pk.t, w, A2);
    packed_whole_row<R>(pk, w, A2, SpanAsync<T>{pk.t, w, reinterpret_cast<float *>(smem4)});
}

template <int R, int T>
__global__ void scan_packed_states_kernel(ScanPacked pk, int S, int64_t chunk_len, int chunks,
                                          float *chunk_h,     // (d, chunks - 1, N) fp32, written
                                          float *chunk_dt) {  // (d, chunks - 1)    fp32, written
    extern __shared__ float4 smem4[];
    const RowBlock w = row_block(pk.t.s, S);
    float A2[R];
    load_A2<R>(pk.t, w, A2);
    packed_chunk_states<R>(pk, w, A2, SpanAsync<T>{pk.t, w, reinterpret_cast<float *>(smem4)}, chunk_len, chunks,
                           blockIdx.z, chunk_h, chunk_dt);
}

template <int R, int T>
__global__ void scan_packed_outputs_kernel(ScanPacked pk, int S, int64_t chunk_len, int chunks,
                                           const float *chunk_h,     // (d, chunks - 1, N) fp32
                                           const float *chunk_dt) {  // (d, chunks - 1)    fp32
    extern __shared__ float4 smem4[];
    const RowBlock w = row_block(pk.t.s, S);
    float A2[R];
    load_A2<R>(pk.t, w, A2);
    packed_chunk_outputs<R>(pk, w, A2, SpanAsync<T>{pk.t, w, reinterpret_cast<float *>(smem4)}, chunk_len, chunks,
                            blockIdx.z + 1, chunk_h, chunk_dt);
}

/* ========================================================================
 * Host side of versions 5-7
 * ====================================================================== */

/* Versions 5 and 6: up to 16 states per thread; N > 16 spread over lanes. */
static TilePlan plan_lanes(const ScanShape *s) {
    const int np = pow2_at_least(s->dstate);
    TilePlan p = {np < 16 ? np : 16, 0, 1, s->seqlen};
    p.S = np / p.R;
    return p;
}

static TilePlan plan_chunked(const ScanShape *s) {
    TilePlan p = plan_lanes(s);
    plan_chunks(&p, s, kTileSync, 1);
    return p;
}

template <int R, int T, bool ASYNC>
static size_t smem_bytes(int S) {
    using G = TileGeometry<R, T>;
    return sizeof(float) * (size_t)((ASYNC ? 2 : 1) * G::set_floats(kThreads / S, S) + G::ypart_floats());
}

/* One pass (version 5, and 6 and 7 without chunks), or the two chunk passes. */
template <int R, int T, bool ASYNC>
static void launch_tiles(const ScanTensors *t, const TilePlan &p, void *workspace) {
    static size_t allowed_single = 0, allowed_states = 0, allowed_outputs = 0;
    const ScanShape *s = &t->s;
    const size_t smem = smem_bytes<R, T, ASYNC>(p.S);
    if (p.chunks == 1) {
        allow_smem(scan_tiles_kernel<R, T, ASYNC>, smem, &allowed_single);
        scan_tiles_kernel<R, T, ASYNC><<<tile_grid(s, p.S, 1), kThreads, smem>>>(*t, p.S);
        cuda_check_launch();
        return;
    }
    const int slots = p.chunks - 1;
    const ChunkStates cs = chunk_states(s, p, workspace);
    allow_smem(scan_chunk_states_kernel<R, T, ASYNC>, smem, &allowed_states);
    scan_chunk_states_kernel<R, T, ASYNC><<<tile_grid(s, p.S, slots), kThreads, smem>>>(*t, p.S, p.chunk_len,
                                                                                         p.chunks, cs.h, cs.dt);
    cuda_check_launch();
    allow_smem(scan_chunk_outputs_kernel<R, T, ASYNC>, smem, &allowed_outputs);
    scan_chunk_outputs_kernel<R, T, ASYNC><<<tile_grid(s, p.S, slots), kThreads, smem>>>(*t, p.S, p.chunk_len,
                                                                                          p.chunks, cs.h, cs.dt);
    cuda_check_launch();
}

/* Version 7 on a packed row: one pass, or pass 1 over every chunk and pass 2 over chunks 1..K-1. */
template <int R, int T>
static void launch_packed(const ScanPacked *pk, const TilePlan &p, void *workspace) {
    static size_t allowed_single = 0, allowed_states = 0, allowed_outputs = 0;
    const ScanShape *s = &pk->t.s;
    const size_t smem = smem_bytes<R, T, true>(p.S);
    if (p.chunks == 1) {
        allow_smem(scan_packed_kernel<R, T>, smem, &allowed_single);
        scan_packed_kernel<R, T><<<tile_grid(s, p.S, 1), kThreads, smem>>>(*pk, p.S);
        cuda_check_launch();
        return;
    }
    const ChunkStates cs = chunk_states(s, p, workspace);
    allow_smem(scan_packed_states_kernel<R, T>, smem, &allowed_states);
    scan_packed_states_kernel<R, T><<<tile_grid(s, p.S, p.chunks), kThreads, smem>>>(*pk, p.S, p.chunk_len, p.chunks,
                                                                                     cs.h, cs.dt);
    cuda_check_launch();
    allow_smem(scan_packed_outputs_kernel<R, T>, smem, &allowed_outputs);
    scan_packed_outputs_kernel<R, T><<<tile_grid(s, p.S, p.chunks - 1), kThreads, smem>>>(*pk, p.S, p.chunk_len,
                                                                                          p.chunks, cs.h, cs.dt);
    cuda_check_launch();
}

template <int T, bool ASYNC>
static void launch_tiles_any(const ScanTensors *t, const TilePlan &p, void *workspace) {
    dispatch_R(p.R, [&](auto R) {  // R = 32: version 7's plan only
        if constexpr (ASYNC || R.value < 32) launch_tiles<R.value, T, ASYNC>(t, p, workspace);
    });
}

extern "C" const char *scan_fused_tiled_unsupported(const ScanShape *s) {
    if (s->dstate > kMaxStates) return "N > 256: at most 16 lanes x 16 states per row";
    if (s->batch * s->groups > 65535) return "batch x groups > 65535 (grid y)";
    return NULL;
}

extern "C" void scan_fused_tiled(const ScanTensors *t, void *workspace) {
    launch_tiles_any<kTileSync, false>(t, plan_lanes(&t->s), workspace);
}

extern "C" size_t scan_fused_chunked_workspace(const ScanShape *s) { return chunk_workspace(s, plan_chunked(s)); }

extern "C" void scan_fused_chunked(const ScanTensors *t, void *workspace) {
    launch_tiles_any<kTileSync, false>(t, plan_chunked(&t->s), workspace);
}

extern "C" size_t scan_fused_tuned_workspace(const ScanShape *s) {
    return chunk_workspace(s, plan_tuned(s, kTileAsync, kTunedMinR));
}

extern "C" void scan_fused_tuned(const ScanTensors *t, void *workspace) {
    launch_tiles_any<kTileAsync, true>(t, plan_tuned(&t->s, kTileAsync, kTunedMinR), workspace);
}

extern "C" void scan_fused_tuned_packed(const ScanPacked *pk, void *workspace) {
    const TilePlan p = plan_tuned(&pk->t.s, kTileAsync, kTunedMinR);
    dispatch_R(p.R, [&](auto R) { launch_packed<R.value, kTileAsync>(pk, p, workspace); });
}
