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
 * The previous stage, ssd_via_scan_fused_tuned: the same problem as a Mamba-1
 * scan of b x (h·p) channels (docs/design.md §2), the official ssd_selective_scan's
 * rearranges done by small kernels, then 03's scan_fused_tuned. */
#include "kernels.h"

#include <cuda_fp16.h>
#include <limits.h>
#include <stdint.h>

#include "../03_fused_cuda/kernels.h"
#include "cuda_check.h"
#include "mamba2_io.cuh"
#include "mma_sm80.cuh"
#include "ssd_mma.cuh"
#include "mufu.cuh"
#include "transpose.h"

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
 * the load after the store (the order of the formula) each step waited for
 * its load alone, and the kernel took 2.9 ms at S3 instead of 0.56.
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
 * its conversions, which leaves room for two blocks and was 30% slower at S3. */
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

/* ========================================================================
 * Fused on tensor cores (ssd_fused_mma): one block per (b, h, chunk), every
 * matrix product on mma.sync (fp16 operands, fp32 accumulate), the chunk
 * state handed from chunk to chunk through L2.
 *
 * What it removes: the four passes of the (b, chunks, h, p, N) fp32 chunk
 * states through DRAM (ssd_steps' 1.07 GB at S3) and three launches. Each
 * block (ticket order: chunk-major, so chunk c - 1 of the same (b, h) always
 * started earlier) does, with x, B, C of its chunk in shared memory (fp16):
 *   1 S_local = x^T diag(w) B on tensor cores, w_j = dt_j exp(cum_last - cum_j)
 *   2 waits for chunk c - 1's end state S_in (a flag per (b, h)), writes its
 *     own S_out = exp(cum_last) S_in + S_local to a two-slot ring in L2 and
 *     raises the flag: only this step is serial along L
 *   3 y = exp(cum_i) C S_in^T + (causal decay o C B^T) x + D x, then silu(z),
 *     16 rows per warp, C B^T recomputed per head (no stored (Q x Q) matrix)
 * Bytes: x, dt, B, C, z read once (B, C shared by the heads of a group come
 * from L2), y written once, states 2·4·b·h·p·N in the ring (L2-resident).
 * FLOPs per (b, chunk, head): 2QpN (state) + 2QpN (C S_in) + about
 * (Q²/2)(2N + 2p) for the causal tiles of C B^T and its product with x.
 * fp16 operands: x, B, C as given; the decay-weighted C B^T and S_in rounded
 * to fp16 before their products (relative 2^-11 each), sums in fp32.
 * ====================================================================== */

/* ---- the fused kernel ---- */

/* Limits of the register tiles (common/cuda/ssd_mma.cuh): N <= 128, p <= 64. */
#define FUSED_NMAX SSD_MMA_NMAX
#define FUSED_PMAX SSD_MMA_PMAX
#define FUSED_WARPS 16

struct FusedArgs {
    const void *x, *dt, *B, *C, *z;  // (b,L,h,p), (b,L,h), (b,L,g,N) x2, (b,L,h,p): fp16
    const float *A, *D, *dt_bias;    // (h,), (h,) | (h,p), (h,) fp32
    const float *h0;                 // (b, h, p, N) fp32, NULL without
    void *y;                         // (b, L, h, p) fp16
    float *final_state;              // (b, h, p, N) fp32
    float *ring;                     // (b, h, 2, p, N) fp32: chunk c's end state in slot c % 2
    int *published;                  // (b, h): how many chunks have their end state in the ring
    int *ticket;                     // next work item: items go out in chunk-major order
    int64_t batch, L, H, P, G, N;
    int Q, nchunks, Np, Pp;          // Np, Pp: N and p rounded up to 16
    bool softplus, D_per_channel;
};

/* FULL: N and p padded are exactly 128 and 64 (the S3 head), so every tile
 * bound below is a compile-time constant. */
template <bool FULL>
__global__ void __launch_bounds__(FUSED_WARPS * 32, 1) ssd_fused_mma_kernel(FusedArgs a) {
    extern __shared__ __align__(16) unsigned char smem[];
    const int Q = a.Q, Np = FULL ? FUSED_NMAX : a.Np, Pp = FULL ? FUSED_PMAX : a.Pp;
    const int NS = Np + 8, PS = Pp + 8;  // row pitches: +16 bytes keeps ldmatrix conflict-free
    __half *Cs = reinterpret_cast<__half *>(smem);  // (Q, Np) fp16: C of the chunk
    __half *Bs = Cs + Q * NS;                       // (Q, Np) fp16: B of the chunk
    __half *Xs = Bs + Q * NS;                       // (Q, Pp) fp16: x of the chunk
    __half *Ss = Xs + Q * PS;                       // (Pp, Np) fp16: state entering the chunk
    float *cum2 = reinterpret_cast<float *>(Ss + Pp * NS);  // (Q,) log2e * cumsum(dt*A)
    float *dts = cum2 + Q;                                  // (Q,) dt after bias and softplus
    float *vdt = dts + Q;                                   // (Q,) dt_j * exp(cum_e - cum_j), e = j's tile end
    __half *wts = reinterpret_cast<__half *>(vdt + Q);      // (Q,) dt_j * exp(cum_last - cum_j)
    float *partial = reinterpret_cast<float *>(wts + Q);    // (8, Pp/2, 32) fp32: helpers' sums, lane-major
    __shared__ int item;

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    /* ldmatrix row addresses: lane l points at row l % 8 of matrix l / 8. Pattern
     * A orders the four matrices (r0,c0) (r8,c0) (r0,c8) (r8,c8), pattern B
     * (r0,c0) (r0,c8) (r8,c0) (r8,c8); byte addresses of this lane's row in
     * each tile, plus the tile's origin below. */
    const int q = lane / 8, r = lane % 8;
    const int rowA = (q & 1) * 8 + r, colA = (q >> 1) * 8, rowB = (q >> 1) * 8 + r, colB = (q & 1) * 8;
    const uint32_t cs_a = smem_addr(Cs) + (rowA * NS + colA) * 2, bs_a = smem_addr(Bs) + (rowA * NS + colA) * 2;
    const uint32_t bs_b = smem_addr(Bs) + (rowB * NS + colB) * 2, ss_b = smem_addr(Ss) + (rowB * NS + colB) * 2;
    const uint32_t xs_a = smem_addr(Xs) + (rowA * PS + colA) * 2, xs_b = smem_addr(Xs) + (rowB * PS + colB) * 2;
    if (tid == 0) item = atomicAdd(a.ticket, 1);
    __syncthreads();
    const int64_t BH = a.batch * a.H;
    const int c = (int)(item / BH);
    const int64_t bh = item % BH, b = bh / a.H, h = bh % a.H, g = h / (a.H / a.G);
    const int64_t t0 = (int64_t)c * Q;
    const int len = (int)min((int64_t)Q, a.L - t0);  // the last chunk may be shorter

    /* Loads: x, B first (the chunk state needs them), then C. */
    const bool vec16 = a.P % 8 == 0 && a.N % 8 == 0;
    const __half *x = static_cast<const __half *>(a.x) + ((b * a.L + t0) * a.H + h) * a.P;
    const __half *Bg = static_cast<const __half *>(a.B) + ((b * a.L + t0) * a.G + g) * a.N;
    const __half *Cg = static_cast<const __half *>(a.C) + ((b * a.L + t0) * a.G + g) * a.N;
    load_tile<FULL ? FUSED_PMAX / 8 : 0>(Xs, PS, x, a.H * a.P, 0, len, Q, (int)a.P, Pp, vec16);
    load_tile<FULL ? FUSED_NMAX / 8 : 0>(Bs, NS, Bg, a.G * a.N, 0, len, Q, (int)a.N, Np, vec16);
    load_tile<FULL ? FUSED_NMAX / 8 : 0>(Cs, NS, Cg, a.G * a.N, 0, len, Q, (int)a.N, Np, vec16);
    asm volatile("cp.async.commit_group;");

    /* dt and the within-chunk cumsum of dt*A (log2 units), while the copies fly. */
    float dA = 0.f;
    if (tid < Q) {
        float d = 0.f;
        if (tid < len)
            d = delta_of(to_float(static_cast<const __half *>(a.dt)[(b * a.L + t0 + tid) * a.H + h]),
                         a.dt_bias ? a.dt_bias[h] : 0.f, a.softplus);
        dts[tid] = d;
        // dA_cs = tl.cumsum(dA, axis=0) with dA = dt * A
        dA = d * a.A[h] * LOG2E_F;
    }
    dA = block_inclusive_sum(dA);
    if (tid < Q) cum2[tid] = dA;
    __syncthreads();
    const float cum_last = cum2[len - 1];
    if (tid < Q) {
        wts[tid] = __float2half_rn(dts[tid] * exp2_approx(cum_last - cum2[tid]));
        vdt[tid] = dts[tid] * exp2_approx(cum2[tid | 15] - cum2[tid]);
    }
    asm volatile("cp.async.wait_all;");
    __syncthreads();

    /* ---- 1. The chunk's own state: S_local (p x N) = sum_j x_j^T * wts_j * B_j,
     * a (Pp x Q) x (Q x Np) product. Warp w owns p-tile w % 4 and the 16-wide
     * n-blocks w / 4, w / 4 + 4 (two n8-tiles each).
     * states = tl.dot(x, b) with x scaled by dt * exp(dA_cs_last - dA_cs) (_chunk_state_fwd_kernel) */
    const int mp = warp % 4;
    constexpr int NBLK = FUSED_NMAX / 16 / (FUSED_WARPS / 4);  // n16-blocks per warp
    float st[2 * NBLK][4] = {};  // this warp's n8-tiles of S_local: block k is tiles 2k, 2k+1
    const bool has_ptile = mp * 16 < Pp;
    accumulate_chunk_state<FULL, FUSED_WARPS>(st, xs_b, bs_a, wts, Q, NS, PS, Np, Pp);

    /* ---- 2. State passing: wait for chunk c-1, S_out = exp(cum_last) S_in + S_local.
     * states = scale * states + new_states (_state_passing_fwd_kernel) */
    if (tid == 0 && c > 0)
        while (load_acquire(a.published + bh) < c) __nanosleep(32);
    __syncthreads();
    const float chunk_decay = exp2_approx(cum_last);
    const float *prev = c == 0 ? (a.h0 ? a.h0 + bh * a.P * a.N : nullptr)
                               : a.ring + (bh * 2 + ((c - 1) & 1)) * a.P * a.N;
    const bool last_chunk = c == a.nchunks - 1;
    float *next = last_chunk ? a.final_state + bh * a.P * a.N : a.ring + (bh * 2 + (c & 1)) * a.P * a.N;
#pragma unroll
    for (int k = 0; k < 2 * NBLK; k++) {
        const int n0 = (warp / 4 + (FUSED_WARPS / 4) * (k / 2)) * 16 + (k % 2) * 8;
        if (!has_ptile || (!FULL && n0 >= Np)) continue;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int pi = mp * 16 + lane / 4 + (e >= 2 ? 8 : 0), ni = n0 + (lane % 4) * 2 + (e & 1);
            const bool real = pi < a.P && ni < a.N;
            const float s_in = (real && prev) ? __ldcg(prev + pi * a.N + ni) : 0.f;
            Ss[pi * NS + ni] = __float2half_rn(s_in);
            if (real) next[pi * a.N + ni] = chunk_decay * s_in + st[k][e];
        }
    }
    __syncthreads();  // the block's ring writes happen before thread 0's release below
    if (tid == 0 && !last_chunk) store_release(a.published + bh, c + 1);

    /* ---- 3. Outputs. Warp w owns the 16 rows of tile w. Row tile m needs m + 1
     * column tiles (causal), so the long tiles hand their first column tiles to
     * a helper warp, which adds them up (no decay from S_in) and passes the
     * partial sum through shared memory: every warp does about half the work
     * of the longest tile. With 16 tiles the pairs are (w, 15 - w); with 8 or
     * fewer, warp w + 8 helps tile w. A helper does its part first, so the
     * owner rarely waits, and never holds two accumulators at once. */
    const int ntiles = Q / 16;
    const bool paired = ntiles == FUSED_WARPS;
    int own = -1, own_from = 0, help = -1, help_to = 0, slot = 0;
    if (paired) {
        own = warp;
        if (warp >= FUSED_WARPS / 2) { own_from = warp - FUSED_WARPS / 2; slot = FUSED_WARPS - 1 - warp; }
        else { help = FUSED_WARPS - 1 - warp; help_to = FUSED_WARPS / 2 - 1 - warp; slot = warp; }
    } else if (warp < ntiles) {
        own = warp; own_from = (warp + 1) / 2; slot = warp;
    } else if (warp - FUSED_WARPS / 2 < ntiles && warp >= FUSED_WARPS / 2) {
        help = warp - FUSED_WARPS / 2; help_to = (help + 1) / 2; slot = help;
    }
    if (help_to == 0) help = -1;  // nothing to hand over: tile 0, and the middle pair
    const int ra_off = lane / 4;  // this thread's rows in a tile: ra_off and ra_off + 8

    /* acc += sum over column tiles [jb, je) of tile mt of P_ij x_j, with
     * P_ij = (C_i . B_j) exp(cum_i - cum_j) dt_j, zero above the diagonal.
     * cb = tl.dot(C, B) * tl.exp(dA_cs_m[:, None] - dA_cs_k[None, :]) * dt_k;
     * cb = tl.where(offs_m[:, None] >= k + offs_k[None, :], cb, 0.0); acc += tl.dot(cb, x)
     * Below the diagonal tile the decay factors through the tile's last step e:
     * exp(cum_i - cum_j) = exp(cum_i - cum_e) * exp(cum_e - cum_j), both <= 1,
     * the second (times dt_j) precomputed per column in vdt: 2 exps a tile, not 8. */
    auto diagonal = [&](float (&acc)[FUSED_PMAX / 8][4], const uint32_t (&cf)[FUSED_NMAX / 16][4], int mt,
                        int jb, int je) {
        const int ra = mt * 16 + ra_off, rb = ra + 8;
        const float ca = cum2[ra], cb = cum2[rb];
        for (int jt = jb; jt < je; jt++) {
            const int j0 = jt * 16;
            float p[8];  // C·Bᵀ, then P: columns j0..7 then j0+8..15; entries: row a (0,1), row b (2,3)
            cb_tile<FULL>(p, cf, bs_b, j0, NS, Np);
            const int jc = j0 + (lane % 4) * 2;  // this thread's columns jc, jc+1, jc+8, jc+9
            if (jt < mt) {
                const float ce = cum2[j0 + 15];
                const float ua = exp2_approx(ca - ce), ub = exp2_approx(cb - ce);
                const float2 v0 = *reinterpret_cast<const float2 *>(vdt + jc);
                const float2 v1 = *reinterpret_cast<const float2 *>(vdt + jc + 8);
                p[0] *= ua * v0.x; p[1] *= ua * v0.y; p[2] *= ub * v0.x; p[3] *= ub * v0.y;
                p[4] *= ua * v1.x; p[5] *= ua * v1.y; p[6] *= ub * v1.x; p[7] *= ub * v1.y;
            } else {
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    const int j = jc + (e >= 4 ? 8 : 0) + (e & 1), i = (e & 2) ? rb : ra;
                    p[e] = j <= i ? p[e] * exp2_approx(((e & 2) ? cb : ca) - cum2[j]) * dts[j] : 0.f;
                }
            }
            px_tile<FULL>(acc, p, xs_a, j0, PS, Pp);
        }
    };
    auto load_c = [&](uint32_t (&cf)[FUSED_NMAX / 16][4], int mt) {
#pragma unroll
        for (int kk = 0; kk < FUSED_NMAX / 16; kk++)
            if (FULL || kk * 16 < Np) ldsm_x4(cf[kk], cs_a + (mt * 16 * NS + kk * 16) * 2);
    };
    uint32_t cf[FUSED_NMAX / 16][4];  // C rows of one tile as A operands, all of N
    float yacc[FUSED_PMAX / 8][4];    // (16 x Pp) fp32 accumulator of one tile
    const bool helped = own >= 0 && own_from > 0;

    if (help >= 0 && help * 16 < len) {
        float part[FUSED_PMAX / 8][4] = {};
        load_c(cf, help);
        diagonal(part, cf, help, 0, help_to);
#pragma unroll
        for (int nt = 0; nt < FUSED_PMAX / 8; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) partial[(slot * (FUSED_PMAX / 2) + nt * 4 + e) * 32 + lane] = part[nt][e];
        asm volatile("bar.arrive %0, 64;" ::"r"(1 + slot) : "memory");
    }
    if (own >= 0 && own * 16 < len) {
        load_c(cf, own);
#pragma unroll
        for (int nt = 0; nt < FUSED_PMAX / 8; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) yacc[nt][e] = 0.f;
        /* Off-diagonal: exp(cum_i) * C_i S_in^T.
         * acc = tl.dot(C, prev_states) * scale_m[:, None] (_chunk_scan_fwd_kernel) */
#pragma unroll
        for (int kk = 0; kk < FUSED_NMAX / 16; kk++) {
            if (!FULL && kk * 16 >= Np) continue;
#pragma unroll
            for (int np = 0; np < FUSED_PMAX / 16; np++) {
                if (!FULL && np * 16 >= Pp) continue;
                uint32_t sb[4];  // S_in rows p (mma n) x n (mma k)
                ldsm_x4(sb, ss_b + (np * 16 * NS + kk * 16) * 2);
                mma_16816(yacc[2 * np], cf[kk], sb[0], sb[1]);
                mma_16816(yacc[2 * np + 1], cf[kk], sb[2], sb[3]);
            }
        }
        const float ea = exp2_approx(cum2[own * 16 + ra_off]), eb = exp2_approx(cum2[own * 16 + ra_off + 8]);
#pragma unroll
        for (int nt = 0; nt < FUSED_PMAX / 8; nt++) {
            yacc[nt][0] *= ea; yacc[nt][1] *= ea;
            yacc[nt][2] *= eb; yacc[nt][3] *= eb;
        }
        diagonal(yacc, cf, own, own_from, own + 1);
    }
    if (own < 0 || own * 16 >= len) return;
    if (helped) {
        asm volatile("bar.sync %0, 64;" ::"r"(1 + slot) : "memory");
#pragma unroll
        for (int nt = 0; nt < FUSED_PMAX / 8; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) yacc[nt][e] += partial[(slot * (FUSED_PMAX / 2) + nt * 4 + e) * 32 + lane];
    }

    /* y = acc + D x, then y *= silu(z): columns pi, pi + 1 of rows ra, ra + 8. */
    store_y_tile<FULL>(yacc, own * 16 + ra_off, len, static_cast<__half *>(a.y), static_cast<const __half *>(a.z),
                       ((b * a.L + t0) * a.H + h) * a.P, a.H * a.P, Xs, PS, a.D, a.D_per_channel, h, a.P);
}

static int round16(int64_t v) { return (int)((v + 15) / 16 * 16); }

static size_t fused_smem_bytes(const SsdShape *s) {
    const int Q = (int)s->chunk, Np = round16(s->dstate), Pp = round16(s->headdim);
    return (size_t)(2 * Q * (Np + 8) + Q * (Pp + 8) + Pp * (Np + 8)) * 2 + (size_t)Q * 12 + (size_t)Q * 2 +
           (size_t)(FUSED_WARPS / 2) * (FUSED_PMAX / 2) * 32 * sizeof(float);
}

extern "C" const char *ssd_fused_mma_unsupported(const SsdShape *s) {
    if (s->dstate > FUSED_NMAX) return "register tiles hold N <= 128";
    if (s->headdim > FUSED_PMAX) return "register tiles hold p <= 64";
    int dev = 0, optin = 227 * 1024;  // sm_90's opt-in limit, when no device answers
    if (cudaGetDevice(&dev) == cudaSuccess)
        cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    else
        (void)cudaGetLastError();
    if (fused_smem_bytes(s) > (size_t)optin) return "chunk x (2N + p) does not fit in shared memory";
    if (ssd_n_chunks(s) * s->batch * s->heads > INT_MAX) return "more than 2^31 (chunk, b, h) work items";
    return NULL;
}

extern "C" size_t ssd_fused_mma_workspace(const SsdShape *s) {
    const size_t counters = (size_t)(s->batch * s->heads + 1) * sizeof(int);
    return (counters + 255) / 256 * 256 + (size_t)s->batch * s->heads * 2 * s->headdim * s->dstate * sizeof(float);
}

static void launch_fused(const SsdTensors *t, void *workspace) {
    const SsdShape *s = &t->s;
    FusedArgs a;
    a.x = t->x; a.dt = t->dt; a.B = t->B; a.C = t->C; a.z = t->z;
    a.A = t->A; a.D = t->D; a.dt_bias = t->dt_bias; a.h0 = t->initial_states;
    a.y = t->y; a.final_state = t->final_state;
    const size_t counters = (size_t)(s->batch * s->heads + 1) * sizeof(int);
    a.published = static_cast<int *>(workspace);
    a.ticket = a.published + s->batch * s->heads;
    a.ring = reinterpret_cast<float *>(static_cast<char *>(workspace) + (counters + 255) / 256 * 256);
    a.batch = s->batch; a.L = s->seqlen; a.H = s->heads; a.P = s->headdim; a.G = s->groups; a.N = s->dstate;
    a.Q = (int)s->chunk; a.nchunks = (int)ssd_n_chunks(s);
    a.Np = round16(s->dstate); a.Pp = round16(s->headdim);
    a.softplus = s->softplus; a.D_per_channel = s->D_per_channel;
    const size_t smem = fused_smem_bytes(s);
    void (*kernel)(FusedArgs) = a.Np == FUSED_NMAX && a.Pp == FUSED_PMAX ? ssd_fused_mma_kernel<true>
                                                                       : ssd_fused_mma_kernel<false>;
    cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    cuda_check(cudaMemsetAsync(workspace, 0, counters));
    const int64_t items = (int64_t)a.nchunks * s->batch * s->heads;
    kernel<<<(unsigned)items, FUSED_WARPS * 32, smem>>>(a);
    cuda_check_launch();
}

extern "C" void ssd_fused_mma(const SsdTensors *t, void *workspace) { launch_fused(t, workspace); }

/* ========================================================================
 * The previous stage: 03's scan through the Mamba-2 -> Mamba-1 mapping
 *
 * ssd_selective_scan (mamba_ssm/ops/triton/ssd_combined.py) runs SSD as a
 * Mamba-1 scan of d = h·p channels: channel hi·p + pi is head hi's row pi,
 * with the head's dt, A, dt_bias repeated over its p rows and N states. Its
 * rearranges are views in PyTorch; 03's kernel needs the Mamba-1 layouts in
 * memory (time last), so here they are copies into the workspace. Group g of
 * B/C: channel c uses c / (d/G) = hi / (h/g), the head's own group.
 * ====================================================================== */

/* delta[(b·d + c)·L + l] = dt[(b·L + l)·h + c / p]: dt per head, repeated over
 * the head's p channels and moved to time-last. One thread per delta element
 * (grid-stride); writes coalesced, reads of dt (b·L·h floats) from L1/L2. */
__global__ void expand_dt_kernel(float *delta,      // (b, h·p, L) fp32
                                 const float *dt,   // (b, L, h)   fp32
                                 int64_t batch, int64_t seqlen, int64_t heads, int64_t headdim) {
    const int64_t dim = heads * headdim, total = batch * dim * seqlen;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        const int64_t l = e % seqlen, c = (e / seqlen) % dim, bi = e / (seqlen * dim);
        delta[e] = dt[(bi * seqlen + l) * heads + c / headdim];
    }
}

/* dst[k] = src[k / repeat] for k < n: a per-head value repeated over the
 * head's channels (and states, for A). */
__global__ void repeat_kernel(float *dst, const float *src, int64_t n, int64_t repeat) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) dst[k] = src[k / repeat];
}

/* Blocks of 256 threads for n elements, grid-stride past 65536 blocks. */
static unsigned elementwise_blocks(int64_t n) {
    const int64_t blocks = ceil_div(n, 256);
    return (unsigned)(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

/* The Mamba-1 problem of an SSD problem: d = h·p channels, G = g groups. */
static ScanShape mamba1_shape(const SsdShape *s) {
    ScanShape m;
    m.batch = s->batch;
    m.dim = s->heads * s->headdim;
    m.dstate = s->dstate;
    m.seqlen = s->seqlen;
    m.groups = s->groups;
    m.has_z = s->has_z;
    m.has_D = s->has_D;
    m.has_bias = s->has_bias;
    m.softplus = s->softplus;
    m.has_h0 = s->has_h0;
    return m;
}

/* Byte offsets of the rearranged tensors in the workspace, each 256-byte
 * aligned (03 reads its rows with 16-byte loads); a tensor that is not needed
 * takes no room. */
struct MappedLayout {
    size_t u, delta, z, y;  // (b, d, L) fp32: x, dt repeated, z, y before the transpose back
    size_t A;               // (d, N)    fp32
    size_t B, C;            // (b, G, N, L) fp32
    size_t D;               // (d,)      fp32, when D is per head (per channel: used as it is)
    size_t bias;            // (d,)      fp32
    size_t scan;            // 03's own workspace
    size_t total;
};

static MappedLayout mapped_layout(const SsdShape *s) {
    const ScanShape m = mamba1_shape(s);
    MappedLayout lay;
    size_t at = 0;
    auto take = [&at](int64_t floats) {
        const size_t start = at;
        at += (sizeof(float) * (size_t)floats + 255) / 256 * 256;
        return start;
    };
    lay.u = take(scan_n_seq(&m));
    lay.delta = take(scan_n_seq(&m));
    lay.z = take(s->has_z ? scan_n_seq(&m) : 0);
    lay.y = take(scan_n_seq(&m));
    lay.A = take(scan_n_A(&m));
    lay.B = take(scan_n_bc(&m));
    lay.C = take(scan_n_bc(&m));
    lay.D = take(s->has_D && !s->D_per_channel ? m.dim : 0);
    lay.bias = take(s->has_bias ? m.dim : 0);
    lay.scan = at;
    lay.total = at + scan_fused_tuned_workspace(&m);
    return lay;
}

extern "C" size_t ssd_via_scan_fused_tuned_workspace(const SsdShape *s) { return mapped_layout(s).total; }

extern "C" const char *ssd_via_scan_fused_tuned_unsupported(const SsdShape *s) {
    const ScanShape m = mamba1_shape(s);
    return scan_fused_tiled_unsupported(&m);
}

extern "C" void ssd_via_scan_fused_tuned(const SsdTensors *t, void *workspace) {
    const SsdShape *s = &t->s;
    const ScanShape shape = mamba1_shape(s);
    const MappedLayout lay = mapped_layout(s);
    char *ws = (char *)workspace;
    const int64_t b = s->batch, L = s->seqlen, H = s->heads, P = s->headdim, d = shape.dim;
    const int64_t GN = s->groups * s->dstate;

    ScanTensors m;
    m.s = shape;
    float *u = (float *)(ws + lay.u);  // (b, d, L)
    // x = rearrange(x, "b l h p -> b (h p) l")
    transpose_batched(u, (const float *)t->x, b, L, d);
    m.u = u;
    float *delta = (float *)(ws + lay.delta);  // (b, d, L)
    // dt = repeat(dt, "b l h -> b l h p", p=headdim); dt = rearrange(dt, "b l h p -> b (h p) l")
    expand_dt_kernel<<<elementwise_blocks(b * d * L), 256>>>(delta, (const float *)t->dt, b, L, H, P);
    cuda_check_launch();
    m.delta = delta;
    float *A = (float *)(ws + lay.A);  // (d, N)
    // A = repeat(A, "h -> (h p) n", p=headdim, n=dstate)
    repeat_kernel<<<elementwise_blocks(d * s->dstate), 256>>>(A, t->A, d * s->dstate, P * s->dstate);
    cuda_check_launch();
    m.A = A;
    float *B = (float *)(ws + lay.B), *C = (float *)(ws + lay.C);  // (b, G, N, L)
    // B = rearrange(B, "b l g n -> b g n l")
    transpose_batched(B, (const float *)t->B, b, L, GN);
    // C = rearrange(C, "b l g n -> b g n l")
    transpose_batched(C, (const float *)t->C, b, L, GN);
    m.B = B;
    m.C = C;
    m.D = NULL;
    if (t->D && s->D_per_channel) {
        // D = rearrange(D, "h p -> (h p)")   (the same memory)
        m.D = t->D;
    } else if (t->D) {
        float *D = (float *)(ws + lay.D);  // (d,)
        // D = repeat(D, "h -> (h p)", p=headdim)
        repeat_kernel<<<elementwise_blocks(d), 256>>>(D, t->D, d, P);
        cuda_check_launch();
        m.D = D;
    }
    m.z = NULL;
    if (t->z) {
        float *z = (float *)(ws + lay.z);  // (b, d, L)
        // z = rearrange(z, "b l h p -> b (h p) l")
        transpose_batched(z, (const float *)t->z, b, L, d);
        m.z = z;
    }
    m.delta_bias = NULL;
    if (t->dt_bias) {
        float *bias = (float *)(ws + lay.bias);  // (d,)
        // dt_bias = repeat(dt_bias, "h -> h p", p=headdim); dt_bias = rearrange(dt_bias, "h p -> (h p)")
        repeat_kernel<<<elementwise_blocks(d), 256>>>(bias, t->dt_bias, d, P);
        cuda_check_launch();
        m.delta_bias = bias;
    }
    m.h0 = t->initial_states;  // (b, h, p, N) is (b, d, N)
    float *y = (float *)(ws + lay.y);  // (b, d, L)
    m.y = y;
    m.last_state = t->final_state;  // (b, d, N) is (b, h, p, N)

    // out = selective_scan_fn(x, dt, A, B, C, D=D, z=z, delta_bias=dt_bias, delta_softplus=dt_softplus)
    scan_fused_tuned(&m, ws + lay.scan);
    // return rearrange(out, "b (h p) l -> b l h p", p=headdim)
    transpose_batched((float *)t->y, y, b, d, L);
}
