/* 04_fp16_half2, GPU: the fused scan of 03 with fp16 u, delta, z, B, C, y
 * (version 7: bf16, the same code with the 16-bit format a template argument).
 *
 * A, D, delta_bias, h0, last_state and the state stay fp32, and so does all
 * arithmetic: fp16 is a storage format here. Halving the bytes does not halve
 * the time. At S1 (d 2048, N 32, L 512, b 16) the fp32 scan is already
 * exp-bound (its exp floor nearly twice its bytes floor, README.md); fp16 halves
 * the bytes floor and leaves the exp floor where it is. Half2 exponentials
 * do not lower it: on sm_90 an ex2.approx.f16x2 issues as two MUFU.EX2, 16
 * results per clock per SM either way. The way under it is to compute some
 * exponentials without the MUFU, on the FMA pipe (exp2_poly.h).
 *
 * One design serves versions 2-7. A block is 128 threads on `rows`
 * consecutive channels of one (batch, group), S lanes per channel:
 *
 *     thread = r·S + s    row r = channel c0 + r,  states n = s·R .. s·R + R-1
 *
 *   each thread streams its own row's u, delta (and z on lane 0) from global
 *       memory, 8 steps (16 bytes) at a time, the next 8 fetched while these
 *       8 are scanned; Δ and Δ·u of the 8 steps go to a small scratch of the
 *       row in shared memory, the row's lanes taking turns;
 *   B and C are shared by the block's rows: tiles of T steps go through
 *       shared memory as fp32 (widened once per block, not once per row),
 *       step-major, two buffers: the next tile is loaded into the other
 *       buffer after this tile's scan, one barrier per tile;
 *   y_t: each lane sums C·h over its R states, the S lanes of a row add theirs
 *       with shuffles, lane 0 adds D·u, gates with silu(z) and stores fp16.
 *
 * Per element: FMUL (Δ·A2), MUFU.EX2, FMUL (B·Δu), FFMA (h), FFMA (y), and
 * half an LDS.128 (B and C, 4 states per load). Per (row, step): widening u
 * and delta, Δ, Δ·u, and on lane 0 y's D·u, silu, narrowing and store.
 * Bytes: 2·b·d·L·(3 + z) + 4·b·G·N·L (fp16), each read once from DRAM (B and C
 * once per block from L2), plus the states. Exps: b·d·L·N, and per (b, d, t)
 * one softplus (1 or 2 MUFU) and one silu (2 MUFU).
 *
 * The GPU versions (1 is the CPU form of 5, in cpu.c):
 *   2 scan_fp16_tiled      any N <= 256: lanes before chunks of L (03's plan)
 *                          with R <= 16 states per lane; 2-byte loads
 *   3 scan_fp16_half2      16-byte loads and stores, widened as 4 half2
 *   4 scan_fp16_row_state  N = 16 or 32 a template constant, R = N, S = 1
 *                          (lanes of 8 or 16 only when rows are few): no
 *                          shuffles, per-step costs spread over all N states
 *   5 scan_fp16_poly3      as 4, one state in eight (EXP2_POLY_STATE) on the
 *                          degree-3 polynomial (and softplus's log on the
 *                          MUFU): MUFU and issue balanced
 *   6 scan_fp16_poly5      as 5 with degree 5: fp32-grade exps, 2 more FFMA
 *   7 scan_bf16_poly3      as 5 with bf16 in and out (the format F a template
 *                          argument of every piece that converts): the same
 *                          bytes and instructions, 8 mantissa bits, not 11
 * The block's geometry and its 16-bit loads and stores are in lanes16.cuh.
 * Versions 8-15 (03's tuned kernel with fp16 and bf16 rows) are in
 * tiles16.cu: they are built from 03's tile machinery, not from these pieces. */
#include "kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>

#include "cuda_check.h"
#include "launch.cuh"
#include "exp2_poly.h"
#include "mufu.cuh"
#include "rows16.cuh"
#include "lanes16.cuh"

/* ========================================================================
 * Scalar pieces
 * ====================================================================== */

/* Δ from v = delta + bias. LOG_ON_MUFU = false: log1pf, about 25 FMA-pipe
 * instructions and no MUFU, right while the MUFU is the bottleneck (2-4).
 * true: log2(1 + e)·ln 2, one MUFU.LG2, right once the FMA pipe carries
 * exponentials too (5, 6); it loses digits only where e^v < 1e-4, an
 * absolute error below 1e-7 in Δ. */
template <bool LOG_ON_MUFU>
static __device__ __forceinline__ float dt_of(float v, bool softplus) {
    if (!softplus) return v;
    const float e = exp2_approx(v * LOG2E_F);
    const float sp = LOG_ON_MUFU ? lg2_approx(1.f + e) * LN2_F : log1pf(e);
    // delta_vals[r][i] = delta_vals[r][i] <= 20.f ? log1pf(expf(delta_vals[r][i])) : delta_vals[r][i];
    return v <= 20.f ? sp : v;
}

/* ========================================================================
 * The scan
 * ====================================================================== */

/* One step of this thread's R states: B_t, C_t point at its lane's states
 * of the step. Returns the lane's Σ_n C_t[n]·h_t[n] (4 partial sums, so the
 * dependent chain is R/4 FFMAs long, not R). DEG = 0: every exp on the MUFU;
 * DEG = 3 or 5: states with EXP2_POLY_STATE(n) on exp2_poly. A lane's first
 * state s·R is a multiple of 8, so n and j agree there. */
template <int R, int DEG, bool WRITE_Y>
static __device__ __forceinline__ float scan_step(const float *B_t, const float *C_t, float dt, float du,
                                                  float (&h)[R], const float (&A2)[R]) {
    static_assert(DEG == 0 || R % 8 == 0, "the polynomial split needs lanes of 8, 16 or 32 states");
    float y[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int j0 = 0; j0 < R; j0 += 4) {
        float Bt[4] = {0.f, 0.f, 0.f, 0.f}, Ct[4] = {0.f, 0.f, 0.f, 0.f};
        if constexpr (R % 4 == 0) {
            const float4 b4 = *reinterpret_cast<const float4 *>(B_t + j0);
            Bt[0] = b4.x; Bt[1] = b4.y; Bt[2] = b4.z; Bt[3] = b4.w;
            if constexpr (WRITE_Y) {
                const float4 c4 = *reinterpret_cast<const float4 *>(C_t + j0);
                Ct[0] = c4.x; Ct[1] = c4.y; Ct[2] = c4.z; Ct[3] = c4.w;
            }
        } else {
#pragma unroll
            for (int jj = 0; jj < 4 && j0 + jj < R; jj++) {
                Bt[jj] = B_t[j0 + jj];
                if constexpr (WRITE_Y) Ct[jj] = C_t[j0 + jj];
            }
        }
#pragma unroll
        for (int jj = 0; jj < 4 && j0 + jj < R; jj++) {
            const int j = j0 + jj;
            // thread_data[i] = make_float2(exp2f(delta_vals[r][i] * A_val[r]), B_vals[i] * delta_u_vals[r][i]);
            const float x = dt * A2[j];
            const float dA = DEG && EXP2_POLY_STATE(j) ? exp2_poly(x, DEG) : exp2_approx(x);
            // x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
            h[j] = fmaf(dA, h[j], Bt[jj] * du);
            // out_vals[r][i] += thread_data[i].y * C_val;
            if constexpr (WRITE_Y) y[jj] = fmaf(Ct[jj], h[j], y[jj]);
        }
    }
    return (y[0] + y[1]) + (y[2] + y[3]);
}

/* Word k (the halves of steps 2k and 2k + 1) of a fetched 8-step piece. */
static __device__ __forceinline__ unsigned word_of(uint4 q, int k) {
    const unsigned lo = k & 1 ? q.y : q.x, hi = k & 1 ? q.w : q.z;
    return k & 2 ? hi : lo;
}

/* Δ and Δ·u of steps 2k and 2k + 1 (of the `steps` inside the sequence)
 * into a row's scratch, from one half2 of delta and one of u. */
template <bool LOG_ON_MUFU, typename F>
static __device__ __forceinline__ void dt_pair(float *row_stage, int k, unsigned delta2, unsigned u2, int steps,
                                               float bias, bool softplus) {
    const float2 dl = pair_bits_to_float2<F>(delta2), uu = pair_bits_to_float2<F>(u2);
    // delta_vals[r][i] = float(delta_vals_load[r][i]) + delta_bias[r];  then softplus (dt_of);
    // 0 past the end and for a missing row, so exp2(0·A2) = 1 and Δ·u = 0 leave the state alone
    const float dt0 = 2 * k < steps ? dt_of<LOG_ON_MUFU>(dl.x + bias, softplus) : 0.f;
    const float dt1 = 2 * k + 1 < steps ? dt_of<LOG_ON_MUFU>(dl.y + bias, softplus) : 0.f;
    // delta_u_vals[r][i] = delta_vals[r][i] * u_val;
    *reinterpret_cast<float4 *>(row_stage + 4 * k) = make_float4(dt0, dt0 * uu.x, dt1, dt1 * uu.y);
}

/* Steps [tt, tt + 8) of this thread's row and states. B_lane, C_lane: its
 * lane's states at the group's first step in the current tile (steps `step`
 * floats apart); row_stage: the row's scratch (its lane 0's).
 *   1. Δ and Δ·u of the 8 steps into the row's scratch, the S lanes of the
 *      row taking turns: lane s forms steps 2k, 2k+1 for k = s, s + S, ...
 *      (the per-step work is not repeated on every lane);
 *   2. the 8 steps, in a loop that is not unrolled: unrolled, the compiler
 *      hoists the exps of all 8 steps (they do not depend on h) and runs out
 *      of registers;
 *   3. lane 0: D·u, the z gate, 8 halves of y stored.
 * WRITE_Y = false (a chunk's end state only) skips C and y and sums Δ. */
template <int R, bool VEC, int DEG, bool WRITE_Y, typename F>
static __device__ __forceinline__ void scan_group(const RowBlock &w, const RowPtrs<F> &in, const Steps8 &raw,
                                                  const float *B_lane, const float *C_lane, int step,
                                                  float *row_stage, int64_t tt, int64_t L, bool softplus, bool vec,
                                                  float (&h)[R], const float (&A2)[R], float &dt_sum) {
    const int steps = w.valid ? (int)min((int64_t)kGroup, L - tt) : 0;  // of the 8, inside the sequence
    if (w.S == 1) {
#pragma unroll
        for (int k = 0; k < kGroup / 2; k++)
            dt_pair<DEG != 0, F>(row_stage, k, word_of(raw.delta, k), word_of(raw.u, k), steps, in.bias, softplus);
    } else {
        for (int k = w.s; k < kGroup / 2; k += w.S)
            dt_pair<DEG != 0, F>(row_stage, k, word_of(raw.delta, k), word_of(raw.u, k), steps, in.bias, softplus);
    }
    __syncwarp();
#pragma unroll 1
    for (int e = 0; e < kGroup; e++) {
        const float2 d = *reinterpret_cast<const float2 *>(row_stage + 2 * e);
        float y = scan_step<R, DEG, WRITE_Y>(B_lane + e * step, C_lane + e * step, d.x, d.y, h, A2);
        if constexpr (WRITE_Y) {
            // y = torch.einsum('bdn,bdn->bd', x, C[:, :, :, i]): the lanes of a row add their sums
            for (int off = w.S / 2; off > 0; off /= 2) y += __shfl_xor_sync(0xffffffffu, y, off);
            if (w.s == 0) row_stage[2 * kGroup + e] = y;
        } else {
            dt_sum += d.x;
        }
    }
    if constexpr (WRITE_Y) {
        if (w.s == 0 && w.valid) {
            float y[kGroup], uu[kGroup], zz[kGroup];
            widen8<F>(raw.u, uu);
            if (in.z) widen8<F>(raw.z, zz);
#pragma unroll
            for (int e = 0; e < kGroup; e++) {
                // out = y if D is None else y + u * rearrange(D, "d -> d 1")
                y[e] = fmaf(in.D, uu[e], row_stage[2 * kGroup + e]);
                // out = out * F.silu(z)
                if (in.z) y[e] *= silu_fast(zz[e]);
            }
            store8<VEC>(in.y, tt, L, vec, y);
        }
    }
    __syncwarp();  // every lane has read the scratch before the next group writes it
}

/* Steps [t_begin, t_end) for every thread of the block, one B/C tile at a
 * time. One barrier per tile: a thread loads tile i+1 into the other buffer
 * after its scan of tile i, and every thread's reads of that buffer (tile
 * i-1) ended at the barrier before. */
template <int R, bool VEC, int DEG, bool WRITE_Y, typename F>
static __device__ void scan_span(const ScanTensors &t, const RowBlock &w, const RowPtrs<F> &in, float *smem, int T,
                                 float (&h)[R], const float (&A2)[R], int64_t t_begin, int64_t t_end, bool vec,
                                 float &dt_sum) {
    const int64_t L = t.s.seqlen;
    const int N = (int)t.s.dstate, step = step_floats(R, w.S);
    const int64_t ntiles = ceil_div(t_end - t_begin, T);
    const int buf_floats = 2 * T * step;  // buffer b at smem + b·buf_floats: B (T, step), then C (T, step)
    float *row_stage = smem + 2 * buf_floats + (threadIdx.x - w.s) * kStage;  // lane 0's scratch serves the row
    load_bc_tile<R, VEC, WRITE_Y>(smem, in, N, w.S, T, t_begin, L, vec);
    Steps8 next = fetch_steps<VEC, WRITE_Y>(w, in, t_begin, L, vec);
    __syncthreads();
#pragma unroll 1
    for (int64_t i = 0; i < ntiles; i++) {
        const int64_t t0 = t_begin + i * T;
        const float *B_lane = smem + (i & 1) * buf_floats + w.s * lane_floats(R), *C_lane = B_lane + T * step;
#pragma unroll 1
        for (int tg = 0; tg < T && t0 + tg < t_end; tg += kGroup) {
            const Steps8 now = next;
            if (t0 + tg + kGroup < t_end) next = fetch_steps<VEC, WRITE_Y>(w, in, t0 + tg + kGroup, L, vec);
            scan_group<R, VEC, DEG, WRITE_Y>(w, in, now, B_lane + tg * step, C_lane + tg * step, step, row_stage,
                                             t0 + tg, L, t.s.softplus, vec, h, A2, dt_sum);
        }
        if (i + 1 < ntiles)
            load_bc_tile<R, VEC, WRITE_Y>(smem + ((i + 1) & 1) * buf_floats, in, N, w.S, T, t0 + T, L, vec);
        __syncthreads();
    }
}

/* ========================================================================
 * Chunks over L
 *
 * With K chunks of L, chunk k's end state is linear in its start state:
 *     h_end(k) = decay(k) ⊙ h_start(k) + local(k),   decay(k)[n] = exp2(A2[n]·ΣΔ over chunk k)
 * where local(k) is the chunk scanned from 0. So:
 *   pass 1 (chunk states)  chunks 0..K-2 at once; chunk 0 from h0 writes its y,
 *                          the others store local(k) and ΣΔ
 *   pass 2 (chunk outputs) chunks 1..K-1 at once; each folds the carries of
 *                          the chunks before it, then scans its chunk again
 *                          from its true start, writing y
 * Exps: (2K - 2)/K · b·d·L·N, up to 2x: only when b·d leaves the GPU idle.
 * With K = 1 pass 1 is the whole scan.
 * ====================================================================== */

/* Pass 1. Block z = chunk k. Bytes: u, delta, B of the chunk (z, C, y too for
 * chunk 0), plus the chunk end states (b·d, K-1, N + 1) fp32. Exps: b·d·N per
 * step of chunks 0..K-2, and b·d·L per softplus, 2·b·d·L per silu of chunk 0. */
template <int R, bool VEC, int DEG, typename F>
__global__ void __launch_bounds__(kThreads, 1)
scan_chunk_states_kernel(ScanTensors t, Plan p, bool vec,
                         float *chunk_h,     // (b·d, K - 1, N) fp32, written when K > 1
                         float *chunk_dt) {  // (b·d, K - 1)    fp32, written when K > 1
    extern __shared__ float4 smem4[];
    float *smem = reinterpret_cast<float *>(smem4);
    const RowBlock w = row_block(t.s, p.S);
    const RowPtrs<F> in = row_ptrs<F>(t, w);
    const int64_t N = t.s.dstate, L = t.s.seqlen;
    const int k = blockIdx.z;
    const int64_t t_begin = k * p.chunk_len, t_end = min(L, t_begin + p.chunk_len);
    float h[R], A2[R];
    load_A2<R>(t, w, A2);
    load_state<R>(k == 0 ? t.h0 : NULL, N, w, h);
    float dt_sum = 0.f;
    if (k == 0) scan_span<R, VEC, DEG, true>(t, w, in, smem, p.T, h, A2, t_begin, t_end, vec, dt_sum);
    else scan_span<R, VEC, DEG, false>(t, w, in, smem, p.T, h, A2, t_begin, t_end, vec, dt_sum);
    if (p.chunks == 1) {
        store_state<R>(t.last_state, N, w, h);
        return;
    }
    const int slots = p.chunks - 1;
#pragma unroll
    for (int j = 0; j < R; j++) {
        const int64_t n = (int64_t)w.s * R + j;
        if (w.valid && n < N) chunk_h[(w.row * slots + k) * N + n] = h[j];
    }
    if (w.s == 0 && w.valid) chunk_dt[w.row * slots + k] = dt_sum;
}

/* Pass 2. Block z = chunk k - 1 for k = 1..K-1. Bytes: as pass 1's chunk 0
 * over chunks 1..K-1, plus the chunk states read. Exps: b·d·N per step of
 * chunks 1..K-1, plus b·d·N·(k - 1) for chunk k's carry. */
template <int R, bool VEC, int DEG, typename F>
__global__ void __launch_bounds__(kThreads, 1)
scan_chunk_outputs_kernel(ScanTensors t, Plan p, bool vec,
                          const float *chunk_h,     // (b·d, K - 1, N) fp32
                          const float *chunk_dt) {  // (b·d, K - 1)    fp32
    extern __shared__ float4 smem4[];
    float *smem = reinterpret_cast<float *>(smem4);
    const RowBlock w = row_block(t.s, p.S);
    const RowPtrs<F> in = row_ptrs<F>(t, w);
    const int64_t N = t.s.dstate, L = t.s.seqlen;
    const int k = blockIdx.z + 1;
    const int64_t t_begin = k * p.chunk_len, t_end = min(L, t_begin + p.chunk_len);
    const int slots = p.chunks - 1;
    float h[R], A2[R];
    load_A2<R>(t, w, A2);
    // The carry into chunk k: the state after chunk 0, then through chunks 1..k-1.
#pragma unroll
    for (int j = 0; j < R; j++) {
        const int64_t n = (int64_t)w.s * R + j;
        h[j] = w.valid && n < N ? chunk_h[(w.row * slots) * N + n] : 0.f;
    }
    for (int c = 1; c < k; c++) {
        const float dt_c = w.valid ? chunk_dt[w.row * slots + c] : 0.f;
#pragma unroll
        for (int j = 0; j < R; j++) {
            const int64_t n = (int64_t)w.s * R + j;
            const float local = w.valid && n < N ? chunk_h[(w.row * slots + c) * N + n] : 0.f;
            h[j] = fmaf(exp2_approx(A2[j] * dt_c), h[j], local);
        }
    }
    float dt_sum = 0.f;
    scan_span<R, VEC, DEG, true>(t, w, in, smem, p.T, h, A2, t_begin, t_end, vec, dt_sum);
    if (k == p.chunks - 1) store_state<R>(t.last_state, N, w, h);
}

/* ========================================================================
 * Host side
 * ====================================================================== */

/* The B/C tile holds kTileHalves halves (T = 64 up to N_pad = 32); then L is
 * cut into chunks when the threads (b·d·S) fall short of kFillThreads:
 * (chunks - 1) of them run at once, each at least 2 tiles; fewer than 3
 * chunks are no gain (2 would run one after the other). */
static void plan_tiles_and_chunks(Plan *p, const ScanShape *s) {
    const int npad = p->R * p->S;
    p->T = kTileHalves / npad < kMaxTile ? kTileHalves / npad : kMaxTile;
    const int64_t threads = s->batch * s->dim * p->S, tiles = ceil_div(s->seqlen, p->T);
    int64_t chunks = threads < kFillThreads ? ceil_div(kFillThreads, threads) + 1 : 1;
    if (chunks > tiles / 2) chunks = tiles / 2;
    if (chunks > 65536) chunks = 65536;  // grid z = chunks - 1
    p->chunks = 1;
    p->chunk_len = tiles * p->T;
    if (chunks >= 3) {
        p->chunk_len = ceil_div(tiles, chunks) * p->T;
        p->chunks = (int)ceil_div(s->seqlen, p->chunk_len);
        if (p->chunks < 3) {
            p->chunks = 1;
            p->chunk_len = tiles * p->T;
        }
    }
}

/* Versions 2, 3 (03's plan, with at most 16 states per lane): N_pad = N
 * rounded up to a power of two spread over S lanes; more lanes (fewer states
 * each) while the rows alone cannot fill the GPU, which costs no exps; chunks
 * only when R = 2 is still short. */
static Plan plan_lanes(const ScanShape *s) {
    const int npad = pow2_at_least(s->dstate);
    const int64_t rows = s->batch * s->dim;
    Plan p = {npad < 16 ? npad : 16, 0, 0, 1, 0};
    while (p.R > 2 && npad / p.R < 32 && rows * (npad / p.R) < kFillThreads) p.R /= 2;
    p.S = npad / p.R;
    plan_tiles_and_chunks(&p, s);
    return p;
}

/* Versions 4-7: R = N (16 or 32), S = 1, one thread per row; when the rows
 * cannot fill the GPU, 2 or 4 lanes of 8 or 16 states (the polynomial split
 * stays the same), then chunks. */
static Plan plan_row_state(const ScanShape *s) {
    const int64_t rows = s->batch * s->dim;
    Plan p = {(int)s->dstate, 1, 0, 1, 0};
    while (p.R > 8 && rows * p.S < kFillThreads) {
        p.R /= 2;
        p.S *= 2;
    }
    plan_tiles_and_chunks(&p, s);
    return p;
}

static size_t chunk_workspace(const ScanShape *s, const Plan &p) {
    if (p.chunks <= 1) return 0;
    return sizeof(float) * (size_t)(s->batch * s->dim) * (size_t)(p.chunks - 1) * (size_t)(s->dstate + 1);
}

template <int R, bool VEC, int DEG, typename F>
static void launch(const ScanTensors *t, const Plan &p, void *workspace) {
    static size_t allowed_states = 0, allowed_outputs = 0;
    const ScanShape *s = &t->s;
    const size_t smem = sizeof(float) * (size_t)smem_floats(R, p.S, p.T);
    const int slots = p.chunks > 1 ? p.chunks - 1 : 1;
    const dim3 grid((unsigned)ceil_div(s->dim / s->groups, kThreads / p.S), (unsigned)(s->batch * s->groups),
                    (unsigned)slots);
    const bool vec = rows16_aligned(t);  // kGroup = 8 steps a 16-byte access
    float *chunk_h = p.chunks > 1 ? (float *)workspace : NULL;                    // (b·d, K - 1, N) fp32
    float *chunk_dt = chunk_h ? chunk_h + s->batch * s->dim * slots * s->dstate : NULL;  // (b·d, K - 1) fp32
    allow_smem(scan_chunk_states_kernel<R, VEC, DEG, F>, smem, &allowed_states);
    scan_chunk_states_kernel<R, VEC, DEG, F><<<grid, kThreads, smem>>>(*t, p, vec, chunk_h, chunk_dt);
    cuda_check_launch();
    if (p.chunks == 1) return;
    allow_smem(scan_chunk_outputs_kernel<R, VEC, DEG, F>, smem, &allowed_outputs);
    scan_chunk_outputs_kernel<R, VEC, DEG, F><<<grid, kThreads, smem>>>(*t, p, vec, chunk_h, chunk_dt);
    cuda_check_launch();
}

template <bool VEC>
static void launch_lanes(const ScanTensors *t, void *workspace) {
    const Plan p = plan_lanes(&t->s);
    switch (p.R) {
    case 1: launch<1, VEC, 0, __half>(t, p, workspace); break;
    case 2: launch<2, VEC, 0, __half>(t, p, workspace); break;
    case 4: launch<4, VEC, 0, __half>(t, p, workspace); break;
    case 8: launch<8, VEC, 0, __half>(t, p, workspace); break;
    default: launch<16, VEC, 0, __half>(t, p, workspace); break;
    }
}

template <int DEG, typename F>
static void launch_row_state(const ScanTensors *t, void *workspace) {
    const Plan p = plan_row_state(&t->s);
    switch (p.R) {
    case 8: launch<8, true, DEG, F>(t, p, workspace); break;
    case 16: launch<16, true, DEG, F>(t, p, workspace); break;
    default: launch<32, true, DEG, F>(t, p, workspace); break;
    }
}

extern "C" const char *scan_fp16_tiled_unsupported(const ScanShape *s) {
    if (s->dstate > kMaxStates) return "N > 256: at most 16 lanes x 16 states per row";
    if (s->batch * s->groups > 65535) return "batch x groups > 65535 (grid y)";
    return NULL;
}

extern "C" size_t scan_fp16_tiled_workspace(const ScanShape *s) { return chunk_workspace(s, plan_lanes(s)); }

extern "C" void scan_fp16_tiled(const ScanTensors *t, void *workspace) { launch_lanes<false>(t, workspace); }

extern "C" void scan_fp16_half2(const ScanTensors *t, void *workspace) { launch_lanes<true>(t, workspace); }

extern "C" const char *scan_fp16_row_state_unsupported(const ScanShape *s) {
    if (s->dstate != 16 && s->dstate != 32) return "specialized for N = 16 and N = 32 (versions 2 and 3 run any N <= 256)";
    if (s->batch * s->groups > 65535) return "batch x groups > 65535 (grid y)";
    return NULL;
}

extern "C" size_t scan_fp16_row_state_workspace(const ScanShape *s) {
    return chunk_workspace(s, plan_row_state(s));
}

extern "C" void scan_fp16_row_state(const ScanTensors *t, void *workspace) {
    launch_row_state<0, __half>(t, workspace);
}

extern "C" void scan_fp16_poly3(const ScanTensors *t, void *workspace) {
    launch_row_state<3, __half>(t, workspace);
}

extern "C" void scan_fp16_poly5(const ScanTensors *t, void *workspace) {
    launch_row_state<5, __half>(t, workspace);
}

extern "C" void scan_bf16_poly3(const ScanTensors *t, void *workspace) {
    launch_row_state<3, __nv_bfloat16>(t, workspace);
}
