/* 05_ssd_mamba2, GPU: the SSD forward (mamba_chunk_scan_combined).
 *
 * The scan of 03 walks time one step after another, N FMA-pipe operations and
 * one exp per (b, d, t, n). SSD cuts L into chunks of Q steps and turns most
 * of that work into matrix products, which tensor cores can do (later
 * versions). With cum_i the inclusive cumsum of Δ·A inside a chunk (cum_last
 * its last value) and S_in the state entering the chunk, for step i of chunk c:
 *
 *     H_i = exp(cum_i)·S_in + Σ_{j<=i} exp(cum_i - cum_j)·Δ_j·x_j ⊗ B_j
 *     y_i = H_i·C_i + D·x_i
 *         = exp(cum_i)·(S_in·C_i)                           state term
 *         + Σ_{j<=i} (C_i·B_j)·exp(cum_i - cum_j)·Δ_j·x_j   intra-chunk term
 *         + D·x_i,   then y_i *= silu(z_i)
 *
 * and S_in of chunk c + 1 is exp(cum_last)·S_in + Σ_j exp(cum_last - cum_j)·Δ_j·x_j ⊗ B_j.
 *
 * The official Triton code computes this in steps, one kernel each, and so
 * does ssd_steps here (CUDA cores, fp32 arithmetic, fp32 or fp16 I/O):
 *   1 chunk_cumsum   Δ = softplus(dt + dt_bias) and cum = cumsum(Δ·A) per chunk
 *   2 chunk_state    each chunk's own final state, from zero: (p x N) per (b, c, h)
 *   3 state_passing  walk the chunks of each (b, h) in order, turning the local
 *                    states into the states entering each chunk, and the final state
 *   4 chunk_scan     y: state term, intra-chunk term, D, z
 * (The official code computes C·Bᵀ per (b, chunk, group) in a fifth kernel,
 * _bmm_chunk_fwd, and stores it; here chunk_scan recomputes it per head and
 * per 64-wide slice of p: FLOPs instead of bytes.)
 *
 * Budget per (b, chunk, head), Q steps, p x N state, in FMAs (a FLOP is 2),
 * with f = (T + 1)/(2T) the share of the Q x Q causal matrix that 64 x 64
 * tiles cover (T = Q/64 tiles a side, the diagonal ones whole; 5/8 at Q 256):
 *   chunk_state   Q·p·N          Bᵀ·X, B scaled by the decay weights
 *   chunk_scan    Q·p·N          C·S_in
 *                 f·Q²·N         C·Bᵀ, once per 64-wide slice of p
 *                 f·Q²·p         the decay-weighted C·Bᵀ times X
 * At S3 (b 8, L 8192, Q 256, h 32, p 64, N 128, g 1) that is 4.2 + 4.2 +
 * 10.5 + 5.2 = 24 MFLOP per (b, chunk, head), 2.0·10^11 FLOPs in all.
 * Exps: f·Q² per (b, chunk, head) and 64-wide slice of p (the decay matrix),
 * 2Q more (state term, chunk-state weights), and p·N per (b, h, chunk) in
 * state passing (one per thread and chunk).
 * Bytes: the inputs and y once from DRAM (tiles reread from L2), and the chunk
 * states, (b, chunks, h, p, N) fp32: written by chunk_state, read and written
 * by state_passing, read by chunk_scan, 4 passes of 4·b·chunks·h·p·N bytes.
 * At S3 that is 268 MB a pass, about 1.07 GB, twice what the inputs and
 * outputs move (0.57 GB in fp16): the bytes a fused kernel, keeping the
 * states on chip, removes.
 *
 * This file holds versions 5 and 6 (ssd_steps_fp32, ssd_steps_fp16: the
 * official four steps on CUDA cores). The previous stage, version 4
 * (ssd_via_scan_fused_tuned: the same problem as a Mamba-1 scan of b x (h·p)
 * channels, docs/design.md §2), is in via_scan.cu; version 7, fused on
 * mma.sync, in fused_mma.cu; versions 8-13, on wgmma, in wgmma_kernel.cuh (launched from wgmma.cu). */
#include "kernels.h"

#include <cuda_fp16.h>
#include <limits.h>
#include <stdint.h>

#include "cuda_check.h"
#include "mamba2_io.cuh"
#include "mufu.cuh"
#include "mma_sm80.cuh"

/* ========================================================================
 * Scalar pieces
 * ====================================================================== */

/* How many of the `cap` indices from `at` on are below n (at most cap). */
static __device__ __forceinline__ int count_left(int64_t n, int64_t at, int cap) {
    return n - at < cap ? (int)(n - at) : cap;
}

/* ========================================================================
 * The official four steps on CUDA cores (ssd_steps)
 * ====================================================================== */

constexpr int kMaxChunk = 256;  // the largest chunk size Q (docs/design.md §2: a power of 2, 16..256)

/* ---- Step 1: chunk_cumsum ---- */

/* One block per (b, h, chunk), thread i = step i of the chunk (blockDim =
 * max(Q, 32)). Steps past the end of the sequence get Δ = 0, so cum stays at
 * its last value there and cum[Q - 1] is the chunk's total, tail chunk too.
 * Bytes: dt read once (strided by h: each block reads one head), 8·b·h·chunks·Q
 * written. Exps: one softplus per (b, t, h). */
template <typename T>
__global__ void __launch_bounds__(kMaxChunk) ssd_chunk_cumsum_kernel(SsdTensors t, int64_t nchunks,
                                                                     float *dt_out,       // (b, h, chunks, Q) fp32, written
                                                                     float *dA_cumsum) {  // (b, h, chunks, Q) fp32, written
    const SsdShape s = t.s;
    const int64_t Q = s.chunk;
    const int64_t row = blockIdx.x;  // (b·h + hi)·chunks + c
    const int64_t c = row % nchunks, bh = row / nchunks;
    const int64_t hi = bh % s.heads, bi = bh / s.heads;
    const int i = threadIdx.x;
    const int64_t l = c * Q + i;
    const T *dt_in = (const T *)t.dt;  // (b, L, h)
    float dt = 0.f;
    if (i < Q && l < s.seqlen)
        dt = delta_of(to_float(dt_in[(bi * s.seqlen + l) * s.heads + hi]), t.dt_bias ? t.dt_bias[hi] : 0.f,
                      s.softplus);
    // dA = dt * A[:, None]
    // dA_cs = tl.cumsum(dA, axis=1)
    const float cum = block_inclusive_sum(dt * t.A[hi]);
    if (i < Q) {
        dt_out[row * Q + i] = dt;
        dA_cumsum[row * Q + i] = cum;
    }
}

/* ---- Shared-memory tiles for steps 2 and 4 ----
 *
 * Both are small matrix products, done the classic way on CUDA cores: a
 * 64 x 64 output tile per block of 256 threads, each thread owning 4 x 4
 * outputs at rows ty + 16·a and columns tx + 16·b (tx = thread % 16,
 * ty = thread / 16), the reduction walked 16 at a time through two shared
 * tiles, tile[k][m] for k < 16, m < 64. Rows are padded to 66 floats: a
 * warp storing a transposed tile writes 16 values of k for 2 values of m,
 * at banks (2k + m) mod 32, all different (with 65 they would pair up). */

constexpr int kThreads = 256;     // threads per block, steps 2 and 4
constexpr int kTile = 64;         // output tile: 64 x 64
constexpr int kStep = 16;         // reduction indices per shared tile
constexpr int kLd = kTile + 2;    // padded row of a shared tile (floats): see below

/* acc[a][b] += Σ_k A[k][ty + 16a]·B[k][tx + 16b] over k < 16. Reads of A are
 * broadcasts (two addresses per warp), reads of B 16 consecutive floats. */
static __device__ __forceinline__ void accumulate_tile(float (&acc)[4][4], const float (*A)[kLd],
                                                       const float (*B)[kLd]) {
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
    for (int k = 0; k < kStep; k++) {
        float a[4], b[4];
#pragma unroll
        for (int r = 0; r < 4; r++) {
            a[r] = A[k][ty + 16 * r];
            b[r] = B[k][tx + 16 * r];
        }
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int q = 0; q < 4; q++) acc[r][q] = fmaf(a[r], b[q], acc[r][q]);
    }
}

/* tile[k][m] = src[k·ld + m]·(k_scale ? k_scale[k] : 1) for k < k_valid and
 * m < m_valid, else 0: a source laid out with m contiguous (x by time step
 * and headdim, B by time step and state). Consecutive threads read
 * consecutive m. */
template <typename T>
static __device__ void load_tile_k_rows(float (*tile)[kLd], const T *src, int64_t ld, int k_valid, int m_valid,
                                        const float *k_scale) {
    for (int e = threadIdx.x; e < kStep * kTile; e += kThreads) {
        const int k = e / kTile, m = e % kTile;
        float v = 0.f;
        if (k < k_valid && m < m_valid) v = to_float(src[k * ld + m]) * (k_scale ? k_scale[k] : 1.f);
        tile[k][m] = v;
    }
}

/* tile[k][m] = src[m·ld + k] for k < k_valid and m < m_valid, else 0: a
 * source with k contiguous (C and B by state index, the states by n), stored
 * transposed. Consecutive threads read consecutive k. */
template <typename T>
static __device__ void load_tile_k_cols(float (*tile)[kLd], const T *src, int64_t ld, int k_valid, int m_valid) {
    for (int e = threadIdx.x; e < kStep * kTile; e += kThreads) {
        const int k = e % kStep, m = e / kStep;
        tile[k][m] = k < k_valid && m < m_valid ? to_float(src[m * ld + k]) : 0.f;
    }
}

/* Where a block of steps 2 and 4 sits: blockIdx.x = (b·chunks + c)·h + hi. */
struct ChunkBlock {
    int64_t bi, c, hi, g;  // batch, chunk, head, its group of B/C
    int64_t l0;            // first time step of the chunk
    int len;               // steps in the chunk: Q, or fewer in the last one
    int64_t cum_row;       // (b·h + hi)·chunks + c: the chunk's row of dA_cumsum and Δ
};

static __device__ ChunkBlock chunk_block(const SsdShape &s, int64_t nchunks) {
    ChunkBlock w;
    const int64_t bc = blockIdx.x / s.heads;
    w.hi = blockIdx.x % s.heads;
    w.c = bc % nchunks;
    w.bi = bc / nchunks;
    w.g = w.hi / (s.heads / s.groups);
    w.l0 = w.c * s.chunk;
    w.len = (int)min(s.chunk, s.seqlen - w.l0);
    w.cum_row = (w.bi * s.heads + w.hi) * nchunks + w.c;
    return w;
}

/* ---- Step 2: chunk_state ---- */

/* The chunk's own final state, starting from zero:
 *     states[p][n] = Σ_j x_j[p]·(exp(cum_last - cum_j)·Δ_j·B_j[n])
 * a (p x Q)·(Q x N) product. Block = (b, c, h) and one 64 x 64 tile of
 * (p, n) (blockIdx.y); the Q weights exp(cum_last - cum_j)·Δ_j are made once
 * per block. Bytes: x once per n tile and B once per (head, p tile), from L2
 * after the first; the states written once, 4·b·chunks·h·p·N. Exps: Q per block. */
template <typename T>
__global__ void __launch_bounds__(kThreads) ssd_chunk_state_kernel(SsdTensors t, int64_t nchunks,
                                                                   const float *dt_out,     // (b, h, chunks, Q) fp32
                                                                   const float *dA_cumsum,  // (b, h, chunks, Q) fp32
                                                                   float *states) {  // (b, chunks, h, p, N) fp32, written
    __shared__ float x_tile[kStep][kLd];  // (j, p) of 16 steps
    __shared__ float B_tile[kStep][kLd];  // (j, n) of 16 steps, scaled by weight[j]
    __shared__ float weight[kMaxChunk];   // (Q,) exp(cum_last - cum_j)·Δ_j
    const SsdShape s = t.s;
    const int64_t H = s.heads, P = s.headdim, G = s.groups, N = s.dstate, Q = s.chunk;
    const ChunkBlock w = chunk_block(s, nchunks);
    const int64_t p_tiles = ceil_div(P, kTile);
    const int64_t p0 = (blockIdx.y % p_tiles) * kTile, n0 = (blockIdx.y / p_tiles) * kTile;
    const float *cum = dA_cumsum + w.cum_row * Q;  // (Q,)
    const float *dt = dt_out + w.cum_row * Q;      // (Q,)
    for (int j = threadIdx.x; j < w.len; j += kThreads)
        // scale = tl.exp(tl.minimum((dA_cs_last - dA_cs_k), 0.0)) * dt_k
        // (the recurrence has no minimum: equal when Δ·A <= 0, as with softplus and A < 0)
        weight[j] = expf(cum[Q - 1] - cum[j]) * dt[j];
    __syncthreads();

    const int64_t ldx = H * P, ldB = G * N;                                      // one time step
    const T *x = (const T *)t.x + ((w.bi * s.seqlen + w.l0) * H + w.hi) * P + p0;  // (len, p) of this tile
    const T *B = (const T *)t.B + ((w.bi * s.seqlen + w.l0) * G + w.g) * N + n0;   // (len, N) of this tile
    float acc[4][4] = {};
    for (int j0 = 0; j0 < w.len; j0 += kStep) {
        load_tile_k_rows(x_tile, x + j0 * ldx, ldx, w.len - j0, count_left(P, p0, kTile), NULL);
        // b *= scale[:, None]
        load_tile_k_rows(B_tile, B + j0 * ldB, ldB, w.len - j0, count_left(N, n0, kTile), weight + j0);
        __syncthreads();
        // acc += tl.dot(x, b)
        accumulate_tile(acc, x_tile, B_tile);
        __syncthreads();
    }

    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    float *out = states + ((w.bi * nchunks + w.c) * H + w.hi) * P * N;  // (p, N) of this (b, c, h)
#pragma unroll
    for (int a = 0; a < 4; a++)
#pragma unroll
        for (int b = 0; b < 4; b++) {
            const int64_t p = p0 + ty + 16 * a, n = n0 + tx + 16 * b;
            if (p < P && n < N) out[p * N + n] = acc[a][b];
        }
}

/* ---- Step 3: state_passing ---- */

/* Thread = one (b, h, p, n) element of the state, walking the chunks in order:
 *     S = h0 (or 0);  for each chunk c: states[c] <- S,  S = exp(cum_last_c)·S + local_c
 *     final_state = S
 * The states are overwritten in place with the state entering each chunk.
 * Chunk c + 1's local state is loaded before chunk c's slot is written: with
 * the load after the store (the order of the formula) each step waits for
 * its load alone, a chain of DRAM latencies (tuning.md).
 * Bytes: the states read and written once, 8·b·chunks·h·p·N, plus h0 and
 * final_state. Exps: one per element and chunk (the same value for the
 * p·N threads of a (b, h): cheap next to the rest). */
__global__ void __launch_bounds__(kThreads) ssd_state_passing_kernel(SsdTensors t, int64_t nchunks,
                                                                     const float *dA_cumsum,  // (b, h, chunks, Q) fp32
                                                                     float *states) {  // (b, chunks, h, p, N) fp32, in: local, out: entering
    const SsdShape s = t.s;
    const int64_t H = s.heads, PN = s.headdim * s.dstate, Q = s.chunk;
    const int64_t tiles = ceil_div(PN, kThreads);
    const int64_t bh = blockIdx.x / tiles;  // b·h + hi
    const int64_t m = (blockIdx.x % tiles) * kThreads + threadIdx.x;
    if (m >= PN) return;
    const int64_t bi = bh / H, hi = bh % H;
    const float *cum_last = dA_cumsum + bh * nchunks * Q + Q - 1;  // chunk c's total at cum_last[c·Q]
    float *slot = states + (bi * nchunks * H + hi) * PN + m;        // this element in chunk 0; chunk c at c·H·PN
    // states = tl.load(initstates_ptrs, ...)   (or tl.zeros without initial states)
    float state = t.initial_states ? t.initial_states[bh * PN + m] : 0.f;
    // new_states = tl.load(states_ptrs, ...)
    float local = slot[0];
    for (int64_t c = 0; c < nchunks; c++, slot += H * PN) {
        const float next_local = c + 1 < nchunks ? slot[H * PN] : 0.f;
        // tl.store(out_ptrs, states, ...)   (out: the state entering chunk c)
        slot[0] = state;
        // scale = tl.exp(dA_cs)
        // states = scale * states + new_states
        state = fmaf(expf(cum_last[c * Q]), state, local);
        local = next_local;
    }
    // tl.store(final_states_ptrs, states, ...)
    t.final_state[bh * PN + m] = state;
}

/* ---- Step 4: chunk_scan ---- */

/* Blocks of chunk_scan per SM that the compiler must make room for. Three
 * (24 warps) means at most 85 registers a thread: the fp32 kernel takes 80
 * when left alone (0: no minimum; told 3, it spills), the fp16 one 98 for
 * its conversions, which leaves room for two blocks and was slower at S3
 * (tuning.md). */
template <typename T>
constexpr int kScanBlocksPerSM = sizeof(T) == 2 ? 3 : 0;

/* y for one 64 x 64 tile of (step i, headdim p) of one (b, c, h):
 *   state term   acc = exp(cum_i)·Σ_n C_i[n]·S_in[p][n]            K = N, 16 at a time
 *   intra-chunk  for each 64-step block of j up to the tile's last row:
 *                  CB[i][j] = Σ_n C_i[n]·B_j[n]                     K = N, 16 at a time
 *                  M[j][i]  = CB·exp(cum_i - cum_j)·Δ_j, 0 where j > i   (into shared memory)
 *                  acc     += Σ_j M[j][i]·x_j[p]                     K = 64 steps, 16 at a time
 *   output       y = acc + D·x_i, times silu(z_i)
 * Block = (b, c, h) (blockIdx.x) and the tile (blockIdx.y: i tile, p tile).
 * Blocks whose rows all lie past the end of the sequence return at once.
 * Bytes: C, B and x tiles from L2 (C rereads per 64-step block of j), the
 * entering states once per 64 rows of i, y written once. Exps: one per (i, j)
 * of the causal tiles, and one per row (exp(cum_i)). */
template <typename T>
__global__ void __launch_bounds__(kThreads, kScanBlocksPerSM<T>) ssd_chunk_scan_kernel(SsdTensors t, int64_t nchunks,
                                                                  const float *dt_out,     // (b, h, chunks, Q) fp32
                                                                  const float *dA_cumsum,  // (b, h, chunks, Q) fp32
                                                                  const float *states) {   // (b, chunks, h, p, N) fp32, entering
    __shared__ float C_tile[kStep][kLd];    // (n, i) of 16 states
    __shared__ float K_tile[kStep][kLd];    // (n, p) of S_in, then (n, j) of B
    __shared__ float x_tile[kStep][kLd];    // (j, p) of 16 steps
    __shared__ float decay[kTile][kLd];     // (j, i): M, the decay-weighted C·Bᵀ of one 64-step block of j
    __shared__ float cum[kMaxChunk];        // (Q,) cum of the chunk
    __shared__ float delta[kMaxChunk];      // (Q,) Δ of the chunk (0 past its end)
    const SsdShape s = t.s;
    const int64_t H = s.heads, P = s.headdim, G = s.groups, N = s.dstate, Q = s.chunk, L = s.seqlen;
    const ChunkBlock w = chunk_block(s, nchunks);
    const int64_t i_tiles = ceil_div(Q, kTile);
    const int i0 = (int)(blockIdx.y % i_tiles) * kTile;
    const int64_t p0 = (blockIdx.y / i_tiles) * kTile;
    if (i0 >= w.len) return;  // the whole block: past the end of the sequence
    for (int i = threadIdx.x; i < Q; i += kThreads) {
        cum[i] = dA_cumsum[w.cum_row * Q + i];
        delta[i] = dt_out[w.cum_row * Q + i];
    }

    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int p_valid = count_left(P, p0, kTile);
    const int64_t ldx = H * P, ldBC = G * N;  // one time step
    const T *C = (const T *)t.C + ((w.bi * L + w.l0 + i0) * G + w.g) * N;  // (rows, N) from row i0
    const float *S_in = states + (((w.bi * nchunks + w.c) * H + w.hi) * P + p0) * N;  // (p, N) from p0

    // State term. acc = tl.dot(C, prev_states) * scale_m[:, None]
    float acc[4][4] = {};
    for (int64_t n0 = 0; n0 < N; n0 += kStep) {
        load_tile_k_cols(C_tile, C + n0, ldBC, count_left(N, n0, kStep), w.len - i0);
        load_tile_k_cols(K_tile, S_in + n0, N, count_left(N, n0, kStep), p_valid);
        __syncthreads();  // (also publishes cum and delta, the first time)
        accumulate_tile(acc, C_tile, K_tile);
        __syncthreads();
    }
#pragma unroll
    for (int a = 0; a < 4; a++) {
        const int i = i0 + ty + 16 * a;
        // scale_m = tl.exp(dA_cs_m)
        const float scale = i < w.len ? expf(cum[i]) : 0.f;
#pragma unroll
        for (int b = 0; b < 4; b++) acc[a][b] *= scale;
    }

    // Intra-chunk term, causal: steps j <= i, so j up to the tile's last row.
    const int j_end = min(i0 + kTile, w.len);
    for (int j0 = 0; j0 < j_end; j0 += kTile) {
        // CB = _bmm_chunk_fwd(C, B, chunk_size, ...)   (here per head and p tile, not stored)
        const T *B = (const T *)t.B + ((w.bi * L + w.l0 + j0) * G + w.g) * N;  // (rows, N) from row j0
        float cb[4][4] = {};
        for (int64_t n0 = 0; n0 < N; n0 += kStep) {
            load_tile_k_cols(C_tile, C + n0, ldBC, count_left(N, n0, kStep), w.len - i0);
            load_tile_k_cols(K_tile, B + n0, ldBC, count_left(N, n0, kStep), w.len - j0);
            __syncthreads();
            accumulate_tile(cb, C_tile, K_tile);
            __syncthreads();
        }
#pragma unroll
        for (int a = 0; a < 4; a++)
#pragma unroll
            for (int b = 0; b < 4; b++) {
                const int i = i0 + ty + 16 * a, j = j0 + tx + 16 * b;
                // cb *= tl.exp((dA_cs_m[:, None] - dA_cs_k[None, :]))
                // cb *= dt_k
                // mask = offs_m[:, None] >= k + offs_k[None, :];  cb = tl.where(mask, cb, 0.0)
                decay[tx + 16 * b][ty + 16 * a] = j <= i && j < w.len ? cb[a][b] * expf(cum[i] - cum[j]) * delta[j] : 0.f;
            }
        __syncthreads();
        // acc += tl.dot(cb, x)
        const int j_steps = min(kTile, j_end - j0);
        for (int jj = 0; jj < j_steps; jj += kStep) {
            const T *x = (const T *)t.x + ((w.bi * L + w.l0 + j0 + jj) * H + w.hi) * P + p0;  // (rows, p) from row j0 + jj
            load_tile_k_rows(x_tile, x, ldx, w.len - j0 - jj, p_valid, NULL);
            __syncthreads();
            accumulate_tile(acc, decay + jj, x_tile);
            __syncthreads();
        }
    }

    // D and z, then y.
    const T *x = (const T *)t.x;
    const T *z = (const T *)t.z;
    T *y = (T *)t.y;
#pragma unroll
    for (int a = 0; a < 4; a++)
#pragma unroll
        for (int b = 0; b < 4; b++) {
            const int i = i0 + ty + 16 * a;
            const int64_t p = p0 + tx + 16 * b;
            if (i >= w.len || p >= P) continue;
            const int64_t at = ((w.bi * L + w.l0 + i) * H + w.hi) * P + p;  // (b, l, h, p)
            float out = acc[a][b];
            // acc += x_residual * D     (D per head, or per (head, headdim) when D_HAS_HDIM)
            if (t.D) out = fmaf(s.D_per_channel ? t.D[w.hi * P + p] : t.D[w.hi], to_float(x[at]), out);
            if (z) {
                // acc *= z * tl.sigmoid(z)
                const float zv = to_float(z[at]);
                out *= zv / (1.f + expf(-zv));
            }
            y[at] = from_float<T>(out);
        }
}

/* ---- Host side of ssd_steps ---- */

/* Workspace: dA_cumsum and Δ, (b, h, chunks, Q) fp32 each, then the chunk
 * states (b, chunks, h, p, N) fp32: 4·b·chunks·h·(2Q + p·N) bytes. At S3
 * that is 17 MB + 268 MB. */
extern "C" size_t ssd_steps_workspace(const SsdShape *s) {
    const int64_t nchunks = ssd_n_chunks(s);
    const int64_t rows = s->batch * s->heads * nchunks;
    return sizeof(float) * (size_t)(rows * (2 * s->chunk + s->headdim * s->dstate));
}

template <typename T>
static void launch_steps(const SsdTensors *t, void *workspace) {
    const SsdShape *s = &t->s;
    const int64_t nchunks = ssd_n_chunks(s), rows = s->batch * s->heads * nchunks;
    float *dA_cumsum = (float *)workspace;       // (b, h, chunks, Q) fp32
    float *dt_out = dA_cumsum + rows * s->chunk;  // (b, h, chunks, Q) fp32
    float *states = dt_out + rows * s->chunk;     // (b, chunks, h, p, N) fp32
    const unsigned chunk_blocks = (unsigned)rows;  // (b, chunks, h) for steps 2 and 4, (b, h, chunks) for 1

    ssd_chunk_cumsum_kernel<T><<<chunk_blocks, (unsigned)(s->chunk < 32 ? 32 : s->chunk)>>>(*t, nchunks, dt_out,
                                                                                            dA_cumsum);
    cuda_check_launch();
    const unsigned p_tiles = (unsigned)ceil_div(s->headdim, kTile);
    const dim3 state_grid(chunk_blocks, p_tiles * (unsigned)ceil_div(s->dstate, kTile));
    ssd_chunk_state_kernel<T><<<state_grid, kThreads>>>(*t, nchunks, dt_out, dA_cumsum, states);
    cuda_check_launch();
    const unsigned pass_blocks = (unsigned)(s->batch * s->heads * ceil_div(s->headdim * s->dstate, kThreads));
    ssd_state_passing_kernel<<<pass_blocks, kThreads>>>(*t, nchunks, dA_cumsum, states);
    cuda_check_launch();
    const dim3 scan_grid(chunk_blocks, (unsigned)ceil_div(s->chunk, kTile) * p_tiles);
    ssd_chunk_scan_kernel<T><<<scan_grid, kThreads>>>(*t, nchunks, dt_out, dA_cumsum, states);
    cuda_check_launch();
}

extern "C" void ssd_steps_fp32(const SsdTensors *t, void *workspace) { launch_steps<float>(t, workspace); }

extern "C" void ssd_steps_fp16(const SsdTensors *t, void *workspace) { launch_steps<__half>(t, workspace); }
