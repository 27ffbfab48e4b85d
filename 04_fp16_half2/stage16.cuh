/* 04_fp16_half2, GPU, versions 8-15 (tiles16.cu): 16-bit rows staged in shared memory
 * a tile at a time (cp.async, by index or by running pointer), widened into 03's fp32
 * tiles, and the scan of a span over them with y narrowed and stored. */
#ifndef FP16_STAGE16_CUH
#define FP16_STAGE16_CUH

#include <stdint.h>
#include <string.h>

#include "rows16.cuh"
#include "scan_tiles.cuh"

constexpr int kTile = 32;               // steps per tile (03's version 7: 16)
constexpr int kMinR = 4;                // states per thread at least before L is cut (as 03's version 7)
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
 * cp.async (tuning.md, "Cheaper copies"). Here `off`, this thread's first element of the
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

/* One tile's copies: u, delta, B always; C and z only in a pass that writes y.
 * Both addressings copy the same tensors: copy(stage, src, nrows, nvalid)
 * takes rows [0, nrows) of the (..., L) tensor at src, rows >= nvalid as 0. */
template <int R, bool WRITE_Y, Addressing AD, typename F>
static __device__ void copy_stage(const Stage<F> &st, const ScanTensors &t, const RowBlock &w, int64_t t0, bool vec8) {
    const int64_t L = t.s.seqlen;
    const int N = (int)t.s.dstate, npad = R * w.S;
    auto copy_tensors = [&](auto copy) {
        copy(st.dt, (const F *)t.delta + w.row0 * L, w.rows, w.nvalid);
        copy(st.u, (const F *)t.u + w.row0 * L, w.rows, w.nvalid);
        copy(st.B, (const F *)t.B + w.bg * N * L, npad, N);
        if (WRITE_Y) {
            copy(st.C, (const F *)t.C + w.bg * N * L, npad, N);
            if (t.z) copy(st.z, (const F *)t.z + w.row0 * L, w.rows, w.nvalid);
        }
    };
    if (AD == kRunning && vec8) {
        constexpr int Q = kTile / 8;
        const int64_t tt = t0 + 8 * (threadIdx.x % Q), off = (threadIdx.x / Q) * L + tt;
        const bool in_seq = tt < L;
        copy_tensors([&](F *stage, const F *src, int nrows, int nvalid) {
            copy_rows16_running(stage, src, L, nrows, nvalid, off, in_seq);
        });
        return;
    }
    copy_tensors([&](F *stage, const F *src, int nrows, int nvalid) {
        copy_rows16(stage, src, L, nrows, nvalid, t0, vec8);
    });
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

/* Rows [0, nrows) of a staged tensor widened into an fp32 tile (03's layout).
 * PACKED: only this thread's steps k in [klo, khi) are kept, the others are 0. */
template <int R, bool STATE_ROWS, bool PACKED, typename F>
static __device__ void widen_rows(float *tile, const F *stage, int nrows, int klo, int khi) {
    constexpr int Q = kTile / 4;
    const int q = threadIdx.x % Q;
    for (int row = threadIdx.x / Q; row < nrows; row += kThreads / Q) {
        const float4 v = widen4(stage + row * kStagePitch + 4 * q);
        *reinterpret_cast<float4 *>(tile + TileGeometry<R, kTile>::template row_offset<STATE_ROWS>(row) + 4 * q) =
            PACKED ? keep4(v, klo, khi) : v;
    }
}

/* The staged tile widened into 03's fp32 tiles, delta turned into Δ on the
 * way: Δ = 0 past the sequence's end and on rows past the block's end, so
 * that their states stay as they are (their results are never stored).
 * PACKED: the span is the window [lo, hi) of a packed row, and every step of
 * the tile outside it reads as Δ = 0 and u, B, C, z = 0. */
template <int R, bool WRITE_Y, bool PACKED, typename F>
static __device__ void widen_stage(const TileSet &ts, const Stage<F> &st, const ScanTensors &t, const RowBlock &w,
                                   int64_t t0, int64_t lo, int64_t hi) {
    constexpr int Q = kTile / 4;
    const int q = threadIdx.x % Q;
    int klo = 0, khi = 4;  // of this thread's 4 steps, the ones inside the window
    if (PACKED) window4(t0 + 4 * q, lo, hi, &klo, &khi);
    const int64_t left = t.s.seqlen - (t0 + 4 * q);
    const int steps = PACKED ? khi : left < 0 ? 0 : left < 4 ? (int)left : 4;  // of this thread's 4, inside the sequence
    const float *bias = t.delta_bias ? t.delta_bias + w.c0 : NULL;  // (rows,) fp32
    const bool softplus = t.s.softplus;
    for (int row = threadIdx.x / Q; row < w.rows; row += kThreads / Q) {
        const float4 v = widen4(st.dt + row * kStagePitch + 4 * q);
        const bool ok = row < w.nvalid;
        const float b = ok && bias ? bias[row] : 0.f;
        // delta_vals[r][i] = float(delta_vals_load[r][i]) + delta_bias[r];  then softplus (dt_poly)
        *reinterpret_cast<float4 *>(ts.dt + row * TileGeometry<R, kTile>::TP + 4 * q) =
            make_float4(dt_or_zero(dt_poly(v.x, b, softplus), ok && klo <= 0 && 0 < steps),
                        dt_or_zero(dt_poly(v.y, b, softplus), ok && klo <= 1 && 1 < steps),
                        dt_or_zero(dt_poly(v.z, b, softplus), ok && klo <= 2 && 2 < steps),
                        dt_or_zero(dt_poly(v.w, b, softplus), ok && klo <= 3 && 3 < steps));
    }
    const int npad = R * w.S;
    widen_rows<R, false, PACKED>(ts.u, st.u, w.rows, klo, khi);
    widen_rows<R, true, PACKED>(ts.B, st.B, npad, klo, khi);
    if (WRITE_Y) {
        widen_rows<R, true, PACKED>(ts.C, st.C, npad, klo, khi);
        if (t.z) widen_rows<R, false, PACKED>(ts.z, st.z, w.rows, klo, khi);
    }
}

/* y for one tile (tile_y4: the lanes' partial sums added, D·u, the z gate),
 * narrowed to F; 8-byte stores (4 steps) where the rows are aligned.
 * PACKED: only the steps inside the window [lo, hi). */
template <int R, bool PACKED, typename F>
static __device__ void store_y16(const ScanTensors &t, const RowBlock &w, const TileSet &ts, const float *ypart,
                                 int64_t t0, bool vec8, int64_t lo, int64_t hi) {
    constexpr int Q = kTile / 4;
    const int64_t L = t.s.seqlen;
    const int q = threadIdx.x % Q;
    const int64_t tt = t0 + 4 * q;
    int klo = 0, khi = 4;  // of this thread's 4 steps, the ones to store
    if (PACKED) window4(tt, lo, hi, &klo, &khi);
    if (PACKED ? klo >= khi : tt >= L) return;
    const int steps = PACKED ? khi : L - tt < 4 ? (int)(L - tt) : 4;  // of this thread's 4, inside the sequence
    if (PACKED) vec8 = vec8 && klo == 0 && khi == 4;
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
                if (k >= klo && k < steps) y_row[k] = Pair<F>::narrow1(y[k]);
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

/* Where a span's tiles start: at t_begin, or PACKED at the row's tile that
 * holds it (the window [t_begin, t_end) may start anywhere). */
template <bool PACKED>
static __device__ __forceinline__ int64_t first_tile(int64_t t_begin) {
    return PACKED ? t_begin - t_begin % kTile : t_begin;
}

/* Steps [t_begin, t_end) of the block's rows, one tile at a time. Tile i+1's
 * copies are issued once tile i has been widened (the staging area is free
 * again) and, as cp.async, land while tile i is scanned and stored. Three barriers per
 * tile: landed, widened, scanned; the store of tile i ends before the
 * barrier that lets tile i+1 be widened over its tiles. PACKED: [t_begin, t_end)
 * is a piece of a packed row, scanned on the row's own tiles (first_tile). */
template <int R, bool WRITE_Y, Addressing AD, typename F, bool PACKED = false>
static __device__ void scan_span16(const ScanTensors &t, const RowBlock &w, float *smem, float (&h)[R],
                                   const float (&A2)[R], int64_t t_begin, int64_t t_end, bool vec8, float &dt_sum,
                                   bool first_copied) {
    using G = TileGeometry<R, kTile>;
    const TileSet ts = carve_tiles<R, kTile>(smem, w.rows, w.S);
    float *ypart = smem + G::set_floats(w.rows, w.S);  // (kThreads, TP) fp32
    const Stage<F> st = block_stage<R, F>(smem, w);
    const int64_t tile0 = first_tile<PACKED>(t_begin), ntiles = ceil_div(t_end - tile0, kTile);
    if (!first_copied) copy_first_tile<R, WRITE_Y, AD, F>(t, w, smem, tile0, t_end, vec8);
    for (int64_t i = 0; i < ntiles; i++) {
        const int64_t t0 = tile0 + i * kTile;
        cp_async_wait<0>();  // this thread's copies of tile i have landed
        __syncthreads();     // and every thread's; tile i-1 is stored
        widen_stage<R, WRITE_Y, PACKED>(ts, st, t, w, t0, t_begin, t_end);
        __syncthreads();
        if (i + 1 < ntiles) copy_stage<R, WRITE_Y, AD>(st, t, w, t0 + kTile, vec8);
        cp_async_commit();
        scan_tile<R, kTile, WRITE_Y>(ts, w, ypart, h, A2, dt_sum);
        __syncthreads();
        if (WRITE_Y) store_y16<R, PACKED, F>(t, w, ts, ypart, t0, vec8, t_begin, t_end);
    }
}

#endif
