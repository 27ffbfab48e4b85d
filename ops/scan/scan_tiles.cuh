/* The tile machinery of the fused Mamba-1 scans that keep their tiles in
 * shared memory: 03's versions 5-7 (fp32 rows) and 04's versions 8-9 (16-bit
 * rows widened into the same fp32 tiles). What depends on the storage format
 * (the copies in, the stores of y) stays in the chapters; what is here works
 * on fp32 tiles and registers, plus the pieces both formats call: Δ's
 * softplus (dt_poly) and the cp.async wrappers.
 *
 * A block is kThreads threads on `rows` consecutive channels of one
 * (batch, group), S lanes per channel (S = kThreads / rows), each lane
 * holding R states:
 *
 *     thread = r·S + s   row r = channel c0 + r,  states n = s·R .. s·R + R-1
 *
 * and the block walks time in tiles of T steps: the tiles are loaded, each
 * thread scans its row's R states through the tile (scan_tile), writing its
 * partial y_t to shared memory, and the partials of a row's lanes are added
 * when y is stored. L may be cut into chunks (plan_chunks): a pass over all
 * chunks but the last stores each chunk's end state from 0 (store_chunk_end),
 * and a second pass folds those into each chunk's true start (carry_in). */
#ifndef SCAN_TILES_CUH
#define SCAN_TILES_CUH

#include <stdint.h>

#include <type_traits>

#include "cuda_check.h"
#include "launch.cuh"
#include "mufu.cuh"
#include "row_block.cuh"
#include "scan.h"

constexpr int kMaxStates = 256;          // the largest N: 16 lanes x 16 states (8 x 32 in a tuned plan)
/* Threads a pass needs to fill an H200: 4 warps on each of its 528 schedulers.
 * Fewer leave the schedulers short of warps to cover the loads and each
 * state's dependent chain; more cost more lanes and more overhead
 * (03's tuning.md, "Version 7's first plan, profiled"). */
constexpr int64_t kFillThreads = 65536;

/* Shared-memory geometry for R states per thread and T-step tiles. Rows are
 * padded to TP = T + 4 floats so that the float4 accesses of 8 consecutive
 * threads (one shared-memory wavefront) fall on distinct banks; B and C are
 * stored lane-major, state n = s·R + j at s·SB + j·TP, with SB padded the
 * same way, so that lanes s = 0..7 read distinct banks too. */
template <int R, int T>
struct TileGeometry {
    static constexpr int TP = T + 4;
    static constexpr int SB = R * TP + 4;
    /* Floats of one set of tiles (dt, u, z, B, C) for `rows` rows, S lanes. */
    static __host__ __device__ int set_floats(int rows, int S) { return 3 * rows * TP + 2 * S * SB; }
    /* Floats of the partial sums of y: one padded row per thread. */
    static __host__ __device__ int ypart_floats() { return kThreads * TP; }
    /* Where row `row` of a tile starts: channel rows, or state rows of B/C. */
    template <bool STATE_ROWS>
    static __device__ __forceinline__ int row_offset(int row) {
        return STATE_ROWS ? (row / R) * SB + (row % R) * TP : row * TP;
    }
};

/* One set of tiles in shared memory. */
struct TileSet {
    float *dt;  // (rows, TP) fp32  delta, turned into Δ (0 past the end of the sequence)
    float *u;   // (rows, TP) fp32
    float *z;   // (rows, TP) fp32
    float *B;   // (S, SB) fp32     state n = s·R + j at s·SB + j·TP
    float *C;   // (S, SB) fp32
};

template <int R, int T>
static __device__ TileSet carve_tiles(float *p, int rows, int S) {
    using G = TileGeometry<R, T>;
    TileSet ts;
    ts.dt = p;
    ts.u = ts.dt + rows * G::TP;
    ts.z = ts.u + rows * G::TP;
    ts.B = ts.z + rows * G::TP;
    ts.C = ts.B + S * G::SB;
    return ts;
}

/* A2[j] = A[c, n]·log2 e for this thread's states (0 for padding: exp2(0) = 1
 * and B = 0 there, so a padded state stays 0). */
template <int R>
static __device__ void load_A2(const ScanTensors &t, const RowBlock &w, float (&A2)[R]) {
    const int64_t N = t.s.dstate;
#pragma unroll
    for (int j = 0; j < R; j++) {
        const int64_t n = (int64_t)w.s * R + j;
        // A_val[r] *= kLog2e;
        A2[j] = w.r < w.nvalid && n < N ? t.A[(w.c0 + w.r) * N + n] * LOG2E_F : 0.f;
    }
}

/* h[j] = state[n] of this thread's row, or 0. state is (b, d, N) or NULL. */
template <int R>
static __device__ void load_state(const float *state, int64_t N, const RowBlock &w, float (&h)[R]) {
#pragma unroll
    for (int j = 0; j < R; j++) {
        const int64_t n = (int64_t)w.s * R + j;
        h[j] = state && w.r < w.nvalid && n < N ? state[(w.row0 + w.r) * N + n] : 0.f;
    }
}

template <int R>
static __device__ void store_state(float *state, int64_t N, const RowBlock &w, const float (&h)[R]) {
#pragma unroll
    for (int j = 0; j < R; j++) {
        const int64_t n = (int64_t)w.s * R + j;
        if (w.r < w.nvalid && n < N) state[(w.row0 + w.r) * N + n] = h[j];
    }
}

/* Δ for one element of a tile, or 0 past the sequence's end or outside the
 * block's rows, so that exp2(0·A2) = 1 and Δ·u = 0 leave the state as it is.
 * Δ is computed either way and then selected: no branch. */
static __device__ __forceinline__ float dt_or_zero(float dt, bool inside) { return inside ? dt : 0.f; }

/* Δ without libm (03's version 7 on, 04's version 8): softplus(x) = max(x, 0) + log1p(e^-|x|),
 * e^-|x| in (0, 1] on the MUFU and log1p_unit (mufu.cuh) for the log1p.
 * Equal to the official form: above 20, log1p(e^-x) < 2.1e-9 vanishes
 * against x. About 13 instructions (SASS) instead of about 27 with log1pf. */
static __device__ __forceinline__ float dt_poly(float delta, float bias, bool softplus) {
    const float x = delta + bias;
    return softplus ? fmaxf(x, 0.f) + log1p_unit(exp2_approx(-fabsf(x) * LOG2E_F)) : x;
}

/* The scan of one tile by one thread: its row, its R states, T steps.
 * Per 4 steps: 2 LDS.128 (Δ, u), 4 FMUL (Δ·u), then per state 2 LDS.128
 * (B, C) and per element FMUL, MUFU.EX2, FMUL, FFMA, FFMA; 1 STS.128 of the
 * partial y. WRITE_Y = false (a chunk's end state only) drops C and y and
 * sums Δ over the tile instead. */
template <int R, int T, bool WRITE_Y>
static __device__ __forceinline__ void scan_tile(const TileSet &ts, const RowBlock &w, float *ypart, float (&h)[R],
                                                 const float (&A2)[R], float &dt_sum) {
    using G = TileGeometry<R, T>;
    const float *dt_row = ts.dt + w.r * G::TP;
    const float *u_row = ts.u + w.r * G::TP;
    const float *B_lane = ts.B + w.s * G::SB;
    const float *C_lane = ts.C + w.s * G::SB;
    float *y_row = ypart + threadIdx.x * G::TP;
#pragma unroll(R >= 8 ? 1 : 2)
    for (int tq = 0; tq < T; tq += 4) {
        const float4 d4 = *reinterpret_cast<const float4 *>(dt_row + tq);
        const float4 u4 = *reinterpret_cast<const float4 *>(u_row + tq);
        const float dt[4] = {d4.x, d4.y, d4.z, d4.w};
        // delta_u_vals[r][i] = delta_vals[r][i] * u_val;
        const float du[4] = {d4.x * u4.x, d4.y * u4.y, d4.z * u4.z, d4.w * u4.w};
        float y[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int j = 0; j < R; j++) {
            const float4 b4 = *reinterpret_cast<const float4 *>(B_lane + j * G::TP + tq);
            const float Bt[4] = {b4.x, b4.y, b4.z, b4.w};
            float Ct[4];
            if (WRITE_Y) {
                const float4 c4 = *reinterpret_cast<const float4 *>(C_lane + j * G::TP + tq);
                Ct[0] = c4.x; Ct[1] = c4.y; Ct[2] = c4.z; Ct[3] = c4.w;
            }
#pragma unroll
            for (int k = 0; k < 4; k++) {
                // thread_data[i] = make_float2(exp2f(delta_vals[r][i] * A_val[r]), B_vals[i] * delta_u_vals[r][i]);
                // x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
                h[j] = fmaf(exp2_approx(dt[k] * A2[j]), h[j], Bt[k] * du[k]);
                // out_vals[r][i] += thread_data[i].y * C_val;
                if (WRITE_Y) y[k] = fmaf(Ct[k], h[j], y[k]);
            }
        }
        if (WRITE_Y) *reinterpret_cast<float4 *>(y_row + tq) = make_float4(y[0], y[1], y[2], y[3]);
        else dt_sum += (dt[0] + dt[1]) + (dt[2] + dt[3]);
    }
}

/* y for steps 4q .. 4q + 3 of tile row `row`, once the tile is scanned: the
 * S lanes' partial sums added, D·u, the z gate. */
template <int R, int T>
static __device__ __forceinline__ void tile_y4(const ScanTensors &t, const RowBlock &w, const TileSet &ts,
                                               const float *ypart, int row, int q, float (&y)[4]) {
    using G = TileGeometry<R, T>;
    float4 acc = *reinterpret_cast<const float4 *>(ypart + row * w.S * G::TP + 4 * q);
#pragma unroll 4
    for (int s = 1; s < w.S; s++) {
        const float4 p = *reinterpret_cast<const float4 *>(ypart + (row * w.S + s) * G::TP + 4 * q);
        acc.x += p.x; acc.y += p.y; acc.z += p.z; acc.w += p.w;
    }
    y[0] = acc.x; y[1] = acc.y; y[2] = acc.z; y[3] = acc.w;
    const float4 u4 = *reinterpret_cast<const float4 *>(ts.u + row * G::TP + 4 * q);
    const float uu[4] = {u4.x, u4.y, u4.z, u4.w};
    const float D = t.D ? t.D[w.c0 + row] : 0.f;
#pragma unroll
    for (int k = 0; k < 4; k++) y[k] = fmaf(D, uu[k], y[k]);  // out = y + u * D
    if (t.z) {
        const float4 z4 = *reinterpret_cast<const float4 *>(ts.z + row * G::TP + 4 * q);
        // out = out * F.silu(z)
        y[0] *= silu_fast(z4.x); y[1] *= silu_fast(z4.y); y[2] *= silu_fast(z4.z); y[3] *= silu_fast(z4.w);
    }
}

/* 16 bytes (4 bytes) global -> shared, asynchronous; in = false writes zeros
 * and reads nothing (src-size 0), src must still be a valid address. */
static __device__ __forceinline__ void cp_async16(void *dst, const void *src, bool in) {
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(in ? 16 : 0) : "memory");
}
static __device__ __forceinline__ void cp_async4(void *dst, const void *src, bool in) {
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(in ? 4 : 0) : "memory");
}
static __device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
/* Wait until at most PENDING of this thread's committed groups are in flight. */
template <int PENDING>
static __device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

/* Pass 1 of a chunked plan: chunk k's end state (from 0 unless k = 0) and
 * its ΣΔ into the workspace, slot k of the row. */
template <int R>
static __device__ void store_chunk_end(const RowBlock &w, int64_t N, int slots, int k, const float (&h)[R],
                                       float dt_sum,
                                       float *chunk_h,     // (b·d, slots, N) fp32
                                       float *chunk_dt) {  // (b·d, slots)    fp32
    const int64_t row = w.row0 + w.r;
#pragma unroll
    for (int j = 0; j < R; j++) {
        const int64_t n = (int64_t)w.s * R + j;
        if (w.r < w.nvalid && n < N) chunk_h[(row * slots + k) * N + n] = h[j];
    }
    if (w.s == 0 && w.r < w.nvalid) chunk_dt[row * slots + k] = dt_sum;
}

/* Pass 2: the carry into chunk k > first, the true state after chunk
 * `first` (chunk 0 of a sequence; on a packed row, the chunk where the
 * sequence began) brought through chunks first+1..k-1: h = exp2(A2·ΣΔ_c)·h + local(c). */
template <int R>
static __device__ void carry_in(const RowBlock &w, int64_t N, int slots, int k, const float (&A2)[R], float (&h)[R],
                                const float *chunk_h,    // (b·d, slots, N) fp32
                                const float *chunk_dt,   // (b·d, slots)    fp32
                                int first = 0) {
    const int64_t row = w.row0 + w.r;
    const bool row_ok = w.r < w.nvalid;
#pragma unroll
    for (int j = 0; j < R; j++) {
        const int64_t n = (int64_t)w.s * R + j;
        h[j] = row_ok && n < N ? chunk_h[(row * slots + first) * N + n] : 0.f;
    }
    for (int c = first + 1; c < k; c++) {
        const float dt_c = row_ok ? chunk_dt[row * slots + c] : 0.f;
#pragma unroll
        for (int j = 0; j < R; j++) {
            const int64_t n = (int64_t)w.s * R + j;
            const float local = row_ok && n < N ? chunk_h[(row * slots + c) * N + n] : 0.f;
            h[j] = fmaf(exp2_approx(A2[j] * dt_c), h[j], local);
        }
    }
}

/* ========================================================================
 * Packed rows (ScanPacked): the chunks of a plan laid over the sequences
 *
 * Sequence q holds steps [cu[q], cu[q+1]) of the one row, chunk k steps
 * [k·len, min(L, (k+1)·len)). A piece is the part of one sequence inside one
 * chunk. A block scans a piece as a span whose tiles stay where the row's
 * tiles are (multiples of the tile from step 0), so the copies are those of
 * a plain row; the steps of a tile outside the piece get Δ = 0 and u, B, C,
 * z = 0 (a NaN of the next request must not reach this one through 0·NaN),
 * and their y is not stored. A tile on a sequence boundary is scanned once
 * for each piece it holds.
 *   one pass (no chunks)  each block walks every sequence: h0 row, span, last_state row
 *   pass 1, chunk k       a piece that starts its sequence starts from its h0
 *                         row and writes its y (and its final state if it ends
 *                         in k); the first piece, if its sequence began before
 *                         k and runs past k's end, is scanned from 0 for its
 *                         local end state and ΣΔ; the chunk's end state goes
 *                         to slot k when a sequence runs on past it
 *   pass 2, chunk k >= 1  the first piece, when its sequence began in an
 *                         earlier chunk j0: the carry from j0's slot (that
 *                         sequence's true state there) through the local
 *                         states of j0+1..k-1, then its y and final state
 * Span is the chapter's scan of a window of steps on its own tiles:
 *   span.template states<R>(h, A2, lo, hi, dt_sum)  the end state only, ΣΔ added
 *   span.template outputs<R>(h, A2, lo, hi)         y written for steps [lo, hi)
 * ====================================================================== */

/* v with its steps k outside [klo, klo + n) set to 0 (a select: NaN goes too). */
static __device__ __forceinline__ float4 keep4(float4 v, int klo, int khi) {
    return make_float4(0 >= klo && 0 < khi ? v.x : 0.f, 1 >= klo && 1 < khi ? v.y : 0.f,
                       2 >= klo && 2 < khi ? v.z : 0.f, 3 >= klo && 3 < khi ? v.w : 0.f);
}

/* Of the 4 steps from tt, the ones inside [lo, hi): k in [*klo, *khi). */
static __device__ __forceinline__ void window4(int64_t tt, int64_t lo, int64_t hi, int *klo, int *khi) {
    const int64_t a = lo - tt, b = hi - tt;
    *klo = a < 0 ? 0 : a > 4 ? 4 : (int)a;
    *khi = b < 0 ? 0 : b > 4 ? 4 : (int)b;
}

/* The sequence holding step t of a packed row: the last q with cu[q] <= t. */
static __device__ int seq_of_step(const int32_t *cu, int64_t nseq, int64_t t) {
    int64_t lo = 0, hi = nseq - 1;
    while (lo < hi) {
        const int64_t mid = (lo + hi + 1) / 2;
        if (cu[mid] <= t) lo = mid;
        else hi = mid - 1;
    }
    return (int)lo;
}

/* A state row of sequence q in a packed (nseq, d, N) tensor, or NULL. */
static __device__ __forceinline__ const float *seq_state(const float *state, const ScanShape &s, int64_t q) {
    return state ? state + q * s.dim * s.dstate : NULL;
}
static __device__ __forceinline__ float *seq_state(float *state, const ScanShape &s, int64_t q) {
    return state + q * s.dim * s.dstate;
}

/* One pass: every sequence in turn, from its h0 row to its last_state row. */
template <int R, class Span>
static __device__ void packed_whole_row(const ScanPacked &pk, const RowBlock &w, const float (&A2)[R], Span span) {
    const ScanShape &s = pk.t.s;
    float h[R];
    for (int64_t q = 0; q < pk.nseq; q++) {
        load_state<R>(seq_state(pk.t.h0, s, q), s.dstate, w, h);
        span.template outputs<R>(h, A2, pk.cu_seqlens[q], pk.cu_seqlens[q + 1]);
        store_state<R>(seq_state(pk.t.last_state, s, q), s.dstate, w, h);
    }
}

/* Pass 1, chunk k (every chunk). */
template <int R, class Span>
static __device__ void packed_chunk_states(const ScanPacked &pk, const RowBlock &w, const float (&A2)[R], Span span,
                                           int64_t chunk_len, int chunks, int k,
                                           float *chunk_h,     // (d, chunks - 1, N) fp32, written
                                           float *chunk_dt) {  // (d, chunks - 1)    fp32, written
    const ScanShape &s = pk.t.s;
    const int32_t *cu = pk.cu_seqlens;
    const int64_t c_begin = k * chunk_len, c_end = min(s.seqlen, c_begin + chunk_len);
    int64_t q = seq_of_step(cu, pk.nseq, c_begin);
    float h[R];
    if (cu[q] < c_begin) {  // the first piece continues a sequence begun before this chunk
        if (cu[q + 1] > c_end) {  // and runs past it: the chunk's local end state for pass 2
#pragma unroll
            for (int j = 0; j < R; j++) h[j] = 0.f;
            float dt_sum = 0.f;
            span.template states<R>(h, A2, c_begin, c_end, dt_sum);
            store_chunk_end<R>(w, s.dstate, chunks - 1, k, h, dt_sum, chunk_h, chunk_dt);
            return;
        }
        q++;  // it ends in this chunk: pass 2 scans it
    }
    for (; q < pk.nseq && cu[q] < c_end; q++) {
        load_state<R>(seq_state(pk.t.h0, s, q), s.dstate, w, h);
        span.template outputs<R>(h, A2, cu[q], min((int64_t)cu[q + 1], c_end));
        if (cu[q + 1] <= c_end) store_state<R>(seq_state(pk.t.last_state, s, q), s.dstate, w, h);
        else store_chunk_end<R>(w, s.dstate, chunks - 1, k, h, 0.f, chunk_h, chunk_dt);  // a true state: no ΣΔ needed
    }
}

/* Pass 2, chunk k >= 1. */
template <int R, class Span>
static __device__ void packed_chunk_outputs(const ScanPacked &pk, const RowBlock &w, const float (&A2)[R], Span span,
                                            int64_t chunk_len, int chunks, int k,
                                            const float *chunk_h,     // (d, chunks - 1, N) fp32
                                            const float *chunk_dt) {  // (d, chunks - 1)    fp32
    const ScanShape &s = pk.t.s;
    const int32_t *cu = pk.cu_seqlens;
    const int64_t c_begin = k * chunk_len, c_end = min(s.seqlen, c_begin + chunk_len);
    const int64_t q = seq_of_step(cu, pk.nseq, c_begin);
    if (cu[q] == c_begin) return;  // the chunk starts with a sequence: pass 1 did all of it
    float h[R];
    carry_in<R>(w, s.dstate, chunks - 1, k, A2, h, chunk_h, chunk_dt, (int)(cu[q] / chunk_len));
    span.template outputs<R>(h, A2, c_begin, min((int64_t)cu[q + 1], c_end));
    if (cu[q + 1] <= c_end) store_state<R>(seq_state(pk.t.last_state, s, q), s.dstate, w, h);
}

/* ========================================================================
 * Host side: plans
 * ====================================================================== */

typedef struct {
    int R;              // states per thread (a template argument: 1, 2, 4, 8, 16, 32)
    int S;              // lanes per row: R·S = N rounded up to a power of two
    int chunks;         // pieces of L; 1 = a single pass
    int64_t chunk_len;  // steps per chunk, a multiple of the tile
} TilePlan;

/* launch(std::integral_constant<int, R>()) for a plan's R of 1, 2, 4, 8, 16
 * or 32: the kernels take R as a template argument, the plans choose it at
 * run time. Returns what launch returns. */
template <typename Launch>
static auto dispatch_R(int R, Launch launch) {
    switch (R) {
    case 1: return launch(std::integral_constant<int, 1>());
    case 2: return launch(std::integral_constant<int, 2>());
    case 4: return launch(std::integral_constant<int, 4>());
    case 8: return launch(std::integral_constant<int, 8>());
    case 16: return launch(std::integral_constant<int, 16>());
    default: return launch(std::integral_constant<int, 32>());
    }
}

/* Chunks so that a pass runs (b·d·S threads) x (chunks - 1) >= kFillThreads,
 * each chunk at least min_tiles tiles; 1 when the rows fill the GPU already
 * (and when fewer than 3 chunks would come out: 2 run one after the other). */
static void plan_chunks(TilePlan *p, const ScanShape *s, int tile, int64_t min_tiles) {
    const int64_t threads = s->batch * s->dim * p->S, tiles = ceil_div(s->seqlen, tile);
    int64_t chunks = threads < kFillThreads ? ceil_div(kFillThreads, threads) + 1 : 1;
    if (chunks > tiles / min_tiles) chunks = tiles / min_tiles;
    if (chunks > 65535) chunks = 65535;
    p->chunks = 1;
    p->chunk_len = tiles * tile;
    if (chunks >= 3) {
        p->chunk_len = ceil_div(tiles, chunks) * tile;
        p->chunks = (int)ceil_div(s->seqlen, p->chunk_len);
        if (p->chunks < 3) {
            p->chunks = 1;
            p->chunk_len = tiles * tile;
        }
    }
}

/* The tuned plan (03's version 7, 04's version 8): up to 32 states per
 * thread, then fewer states per thread (more lanes per row) until the rows
 * fill the GPU, which costs no exps; chunks of L only when min_r states per
 * thread are still short, each chunk at least 64 steps. */
static TilePlan plan_tuned(const ScanShape *s, int tile, int min_r) {
    const int np = pow2_at_least(s->dstate);
    const int64_t rows = s->batch * s->dim;
    TilePlan p = {np < 32 ? np : 32, 0, 1, s->seqlen};
    while (p.R > min_r && np / p.R < 32 && rows * (np / p.R) < kFillThreads) p.R /= 2;
    p.S = np / p.R;
    plan_chunks(&p, s, tile, tile >= 64 ? 1 : 64 / tile);
    return p;
}

/* The workspace of a chunked plan: every chunk's end state but the last's, and its ΣΔ. */
static size_t chunk_workspace(const ScanShape *s, const TilePlan &p) {
    if (p.chunks <= 1) return 0;
    return sizeof(float) * (size_t)(s->batch * s->dim) * (size_t)(p.chunks - 1) * (size_t)(s->dstate + 1);
}

struct ChunkStates {
    float *h;   // (b·d, chunks - 1, N) fp32
    float *dt;  // (b·d, chunks - 1)    fp32
};

static inline ChunkStates chunk_states(const ScanShape *s, const TilePlan &p, void *workspace) {
    ChunkStates c;
    c.h = (float *)workspace;
    c.dt = c.h + s->batch * s->dim * (p.chunks - 1) * s->dstate;
    return c;
}

/* Blocks: x = channel blocks of a group, y = b·G, z = chunks of a pass. */
static dim3 tile_grid(const ScanShape *s, int S, int z) {
    const int rows = kThreads / S;
    return dim3((unsigned)ceil_div(s->dim / s->groups, rows), (unsigned)(s->batch * s->groups), (unsigned)z);
}

#endif
