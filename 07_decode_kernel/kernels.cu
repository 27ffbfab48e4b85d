/* 07_decode_kernel, GPU: the decode step (selective_state_update,
 * mamba_ssm/ops/triton/selective_state_update.py), T tokens per launch.
 *
 * Per token, per state row (M1: channel (b, c), N states; M2: (b, h, p), N
 * states, one Δ and dA per head):
 *
 *     Δ     = softplus(dt + dt_bias)                      per row (M1) or head (M2)
 *     h[n]  = h[n]·exp(Δ·A[n]) + (Δ·B[n])·x              per state element
 *     y     = Σ_n h[n]·C[n] + D·x,  y *= z·σ(z)           per row
 *
 * What a token moves. The state is read and written once: 2·4·b·d·N bytes
 * (M1) or 2·4·b·h·p·N bytes (M2) in fp32 (half that in fp16 or bf16,
 * versions 8 and 9). Everything else is small: x, z, y one value per row, dt
 * per row (M1) or head (M2), B and C N values per batch entry (M1) or group
 * (M2), A (d, N) or (h,). At the benchmark shapes:
 *   M2 b 64, h 32, p 64, N 128, no z: state 2 x 67.1 MB = 134 MB; x, y
 *      0.5 MB each; B, C 32 KB each: 135.3 MB.
 *   M1 b 64, d 2048, N 16: state 2 x 8.4 MB = 16.8 MB; x, dt, z, y 0.5 MB
 *      each; A 0.13 MB: 19.0 MB. It fits in L2: time it with L2 flushed.
 * Work: per element one multiply (Δ·B), one FMA plus a multiply for the
 * state, one FMA for y: 4 FMA-pipe operations per 8 bytes of state, where
 * the GPU does about 7 per byte (28·10^12 FMA/s over 4·10^12 B/s). Exps:
 * M1 b·T·d·N (one per element: A differs per channel and state), M2 b·T·h
 * (one per head), plus a softplus per row (M1) or head (M2) and a silu per
 * row when z is given. So a decode step is bandwidth-bound by more than 10x
 * at both shapes: its floor is the state's bytes over the copy bandwidth.
 * Tokens: with T tokens in one launch the state stays on chip from the first
 * token to the last and goes through DRAM once, where T launches of one
 * token move it T times.
 *
 * The versions (1 is the CPU form, cpu.c), each a step from the previous one:
 *   3 decode_thread_per_row  one thread per row, the direct port
 *   4 decode_coalesced       rows split over lanes, 16-byte accesses, y by
 *                            shuffles, several rows per thread in flight
 *   5 decode_coalesced_fp16  the same kernel on fp16 x, dt, z, B, C, y
 *   6 decode_lean            fewer instructions per byte (Δ, dA on the MUFU,
 *                            16 floats of a row per lane), the state streamed
 *   7 decode_lean_fp16       the same kernel on fp16 x, dt, z, B, C, y
 *   8 decode_lean_state16    7 with the state stored in fp16 too
 *   9 decode_lean_state_bf16 8 in bf16: x, dt, z, B, C, y and the state
 * The previous stage, version 2, decode_via_scan: T tokens are a scan of L = T steps
 * from h0 = state; 03's scan_fused_tuned (M1) and 05's ssd_steps_fp32 (M2)
 * compute it, and every version is checked against their y and final state.
 * This file holds versions 3-5; what 4-9 share is in lanes.cuh, versions
 * 6-9 in lean.cu, version 2 in via_scan.cu. */
#include "kernels.h"

#include <cuda_fp16.h>
#include <limits.h>
#include <stdint.h>

#include "cuda_check.h"
#include "lanes.cuh"
#include "mamba2_io.cuh"
#include "mufu.cuh"

/* Blocks of `threads` for n items, at most 65536 (the kernels grid-stride). */
static unsigned grid_for(int64_t n, int threads) {
    const int64_t blocks = ceil_div(n, threads);
    return (unsigned)(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

/* ========================================================================
 * Version 3: one thread per state row
 *
 * The reference's loops as they are: thread r owns row r, walks the T tokens
 * and, per token, its N states. Registers hold 16 states (kRowChunk); a
 * longer row is done 16 states at a time, all T tokens each time, y holding
 * the partial sums of the chunks before (it is fp32 here), finished by the
 * last chunk. The state is still read once and written once.
 * Bytes: the floor in useful bytes, but thread r reads row r at r·N floats:
 * a warp's load touches 32 rows, 32 sectors of 32 B for 128 useful bytes,
 * and a sector's other 7 floats are used only if it is still in L1 when the
 * same thread comes back for them (M1 N 16: 2 KB per warp, it is; M2 N 128:
 * 16 KB per warp, far more than L1 over an SM's warps, it is not). y goes
 * through memory ceil(N/16) times per token. Exps: b·T·d·N (M1),
 * b·T·h·p·ceil(N/16) (M2: every row and chunk recomputes its head's exp).
 * ====================================================================== */

constexpr int kRowChunk = 16;     // states of a row in registers at once
constexpr int kRowThreads = 128;  // threads per block

__global__ void __launch_bounds__(kRowThreads) decode_thread_per_row_kernel(DecodeTensors t) {
    const DecodeShape s = t.s;
    const bool m2 = s.form == DECODE_M2;
    const int64_t N = s.dstate, T = s.tokens;
    const int64_t width = m2 ? s.headdim : s.dim;            // rows per (b) (M1) or (b, h) (M2)
    const int64_t groups = m2 ? s.batch * s.heads : s.batch;  // (b) or (b, h)
    const int64_t x_tok = m2 ? s.heads * s.headdim : s.dim;   // x, z, y elements per token
    const float *x = static_cast<const float *>(t.x);    // M1 (b, T, d)  M2 (b, T, h, p)  fp32
    const float *dt = static_cast<const float *>(t.dt);  // M1 (b, T, d)  M2 (b, T, h)     fp32
    const float *B = static_cast<const float *>(t.B);    // M1 (b, T, N)  M2 (b, T, g, N)  fp32
    const float *C = static_cast<const float *>(t.C);    // like B
    const float *z = static_cast<const float *>(t.z);    // like x, NULL without z
    float *y = static_cast<float *>(t.y);                // like x, written
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; row < groups * width; row += stride) {
        const int64_t group = row / width, i = row % width;
        const int64_t bi = m2 ? group / s.heads : group;
        const int64_t hi = m2 ? group % s.heads : 0;
        const int64_t param = m2 ? hi : i;            // index of A's row (M1), A, D, dt_bias
        const int64_t col = m2 ? hi * s.headdim + i : i;  // column of x, z, y at one token
        // B = repeat(B, "b g n -> b (g h) n", h=nheads // ngroups)
        const int64_t bc_group = m2 ? hi / (s.heads / s.groups) : 0;
        const int64_t bc_tok = m2 ? s.groups * N : N;  // B, C elements per token
        for (int64_t n0 = 0; n0 < N; n0 += kRowChunk) {
            float h[kRowChunk];
#pragma unroll
            for (int k = 0; k < kRowChunk; k++) h[k] = n0 + k < N ? t.state[row * N + n0 + k] : 0.f;
            for (int64_t tok = 0; tok < T; tok++) {
                const int64_t tok_at = bi * T + tok;
                const int64_t at = tok_at * x_tok + col;
                const float xv = x[at];
                const float delta = delta_of(dt[m2 ? tok_at * s.heads + hi : at],
                                             t.dt_bias ? t.dt_bias[param] : 0.f, s.softplus);
                const float *B_tok = B + tok_at * bc_tok + bc_group * N;  // (N,)
                const float *C_tok = C + tok_at * bc_tok + bc_group * N;  // (N,)
                // dA = torch.exp(rearrange(dt, "b h d -> b h d 1") * A)       (M2: one per head)
                const float dA_head = m2 ? expf(delta * t.A[hi]) : 0.f;
                float out = n0 == 0 ? 0.f : y[at];
#pragma unroll
                for (int k = 0; k < kRowChunk; k++) {
                    const int64_t n = n0 + k;
                    if (n >= N) continue;
                    // dA = torch.exp(rearrange(dt, "b d -> b d 1") * A)
                    const float dA = m2 ? dA_head : expf(delta * t.A[i * N + n]);
                    // dB = rearrange(dt, "b d -> b d 1") * rearrange(B, "b n -> b 1 n")
                    const float dB = delta * B_tok[n];
                    // state.copy_(state * dA + dB * rearrange(x, "b d -> b d 1"))
                    h[k] = h[k] * dA + dB * xv;
                    // out = torch.einsum("bdn,bn->bd", state.to(C.dtype), C)
                    out += h[k] * C_tok[n];
                }
                if (n0 + kRowChunk >= N) {
                    // if D is not None: out += (x * D).to(out.dtype)
                    if (t.D) out += xv * t.D[param];
                    // return (out if z is None else out * F.silu(z)).to(x.dtype)
                    if (z) out *= silu(z[at]);
                }
                y[at] = out;
            }
#pragma unroll
            for (int k = 0; k < kRowChunk; k++)
                if (n0 + k < N) t.state_out[row * N + n0 + k] = h[k];
        }
    }
}

extern "C" void decode_thread_per_row(const DecodeTensors *t, void *workspace) {
    (void)workspace;
    decode_thread_per_row_kernel<<<grid_for(decode_rows(&t->s), kRowThreads), kRowThreads>>>(*t);
    cuda_check_launch();
}

/* ========================================================================
 * Versions 4 and 5: coalesced
 *
 * What changed from version 3: a row's N states are split over S lanes
 * (S a power of two, 1..32), each lane taking W consecutive floats (W = 4:
 * one 16-byte access; W = 1 when N % 4 != 0 or a pointer is not aligned),
 * K such vectors per lane, lane s at element (k·S + s)·W: consecutive lanes
 * on consecutive 16 bytes. The 32/S row slots of a warp hold consecutive
 * rows, so one warp access covers 512 contiguous bytes. Each thread holds
 * R = 4 rows (slots apart), whose loads are independent and in flight
 * together. y is the sum over the row's S lanes, by xor shuffles.
 *   M1, N 16: W 4, S 4, K 1: 8 rows per warp access, 32 per warp.
 *   M2, N 128: W 4, S 32, K 1: a row per warp access, 4 per warp.
 * A block works inside one group of rows that share B/C: a batch entry (M1,
 * its d channels) or a (batch, head) (M2, its p rows, which also share dt,
 * dA, D, dt_bias). So a thread loads B/C and (M2) the head's scalars once
 * per token and uses them for its 4 rows; the other warps of the block find
 * them in L1. Blocks: x = (group, tile of rows inside the group), flattened,
 * grid-stride beyond 2^31 - 1; up to 256 threads, fewer when the groups are
 * narrow or too few blocks would reach the SMs.
 * Rows longer than S·K·W (N > 512 with W 4, N > 128 with W 1) are done in
 * spans of S·K·W: then, for T > 1, each token's state goes through
 * state_out (the thread rereads what it wrote) instead of staying in
 * registers.
 * Bytes: the floor (state once each way, the small tensors once), plus B/C
 * rereads from L1. Exps: M1 b·T·d·N ex2 (A pre-scaled by log2 e); M2 the
 * head's softplus and exp by every thread of the head (warp-uniform, no
 * memory traffic): p·S/R times per (b, t, h) instead of once, 512 at the
 * M2 shape, next to the 8192 elements of the head's (p, N) state.
 * ====================================================================== */


/* The lane's K vectors of each of its R rows (row j at row_at[j]), from
 * element e0: the state, or A (M1). 0 outside the row or for invalid rows. */
template <int W, int K>
static __device__ __forceinline__ void load_rows(const float *src, const int64_t (&row_at)[kRowsPerThread],
                                                 const bool (&valid)[kRowsPerThread], int64_t e0, int S, int64_t N,
                                                 float (&v)[kRowsPerThread][K][W]) {
#pragma unroll
    for (int j = 0; j < kRowsPerThread; j++)
#pragma unroll
        for (int k = 0; k < K; k++) {
            const int64_t e = e0 + (int64_t)k * S * W;
            if (valid[j] && e < N) load_vec(src + row_at[j] + e, v[j][k]);
            else
#pragma unroll
                for (int w = 0; w < W; w++) v[j][k][w] = 0.f;
        }
}

template <int W, int K>
static __device__ __forceinline__ void store_rows(float *dst, const int64_t (&row_at)[kRowsPerThread],
                                                  const bool (&valid)[kRowsPerThread], int64_t e0, int S, int64_t N,
                                                  const float (&v)[kRowsPerThread][K][W]) {
#pragma unroll
    for (int j = 0; j < kRowsPerThread; j++)
#pragma unroll
        for (int k = 0; k < K; k++) {
            const int64_t e = e0 + (int64_t)k * S * W;
            if (valid[j] && e < N) store_vec(dst + row_at[j] + e, v[j][k]);
        }
}

/* One token on the lane's states of its R rows: h updated, acc[j] += the
 * lane's share of Σ_n h·C. Elements outside a row are 0 in h, B, C (and
 * A2), so they stay 0 and add nothing. M1: dA per element from A2 = A·log2 e;
 * M2: the head's dA. */
template <int W, int K, bool M2>
static __device__ __forceinline__ void step_rows(float (&h)[kRowsPerThread][K][W],
                                                 const float (&A2)[kRowsPerThread][K][W], const float (&Bv)[K][W],
                                                 const float (&Cv)[K][W], const float (&delta)[kRowsPerThread],
                                                 const float (&xv)[kRowsPerThread], float dA_head,
                                                 float (&acc)[kRowsPerThread]) {
#pragma unroll
    for (int j = 0; j < kRowsPerThread; j++)
#pragma unroll
        for (int k = 0; k < K; k++)
#pragma unroll
            for (int w = 0; w < W; w++) {
                float dA = dA_head;
                // dA = torch.exp(rearrange(dt, "b d -> b d 1") * A)
                if constexpr (!M2) dA = exp2_approx(delta[j] * A2[j][k][w]);
                // dB = rearrange(dt, "b d -> b d 1") * rearrange(B, "b n -> b 1 n")
                const float dB = delta[j] * Bv[k][w];
                // state.copy_(state * dA + dB * rearrange(x, "b d -> b d 1"))
                h[j][k][w] = fmaf(dB, xv[j], h[j][k][w] * dA);
                // out = torch.einsum("bdn,bn->bd", state.to(C.dtype), C)
                acc[j] = fmaf(h[j][k][w], Cv[k][w], acc[j]);
            }
}

/* Launch bounds: M2 with K = 1 (N <= 128 at W 4) is held to 3 blocks of 256
 * per SM, about 80 registers without spills: 48 KB of state loads in flight
 * per SM (M1's A2 would spill there). */
template <typename In, int W, int K, bool M2>
__global__ void __launch_bounds__(kMaxThreads, M2 && K == 1 ? 3 : 1) decode_coalesced_kernel(DecodeTensors t, CoalescedPlan plan) {
    constexpr int R = kRowsPerThread;
    const DecodeShape s = t.s;
    const int64_t N = s.dstate, T = s.tokens;
    const int64_t width = M2 ? s.headdim : s.dim;           // rows per group
    const int64_t x_tok = M2 ? s.heads * s.headdim : s.dim;  // x, z, y elements per token
    const int64_t bc_tok = M2 ? s.groups * N : N;            // B, C elements per token
    const In *x = static_cast<const In *>(t.x);    // M1 (b, T, d)  M2 (b, T, h, p)
    const In *dt = static_cast<const In *>(t.dt);  // M1 (b, T, d)  M2 (b, T, h)
    const In *B = static_cast<const In *>(t.B);    // M1 (b, T, N)  M2 (b, T, g, N)
    const In *C = static_cast<const In *>(t.C);    // like B
    const In *z = static_cast<const In *>(t.z);    // like x, NULL without z
    In *y = static_cast<In *>(t.y);                // like x, written
    const int S = plan.lanes, slots = 32 / S;
    const int lane = threadIdx.x % 32, sub = lane % S, slot = lane / S;
    const int64_t span_len = (int64_t)S * K * W;

    for (int64_t blk = blockIdx.x; blk < plan.blocks; blk += gridDim.x) {
        const int64_t group = blk / plan.tiles, tile = blk % plan.tiles;
        const int64_t bi = M2 ? group / s.heads : group;
        const int64_t hi = M2 ? group % s.heads : 0;
        // B = repeat(B, "b g n -> b (g h) n", h=nheads // ngroups)
        const int64_t bc_group = M2 ? hi / (s.heads / s.groups) : 0;
        const int64_t col0 = M2 ? hi * s.headdim : 0;  // x column of the group's row 0
        const int64_t first = tile * plan.rows_per_block + (int64_t)(threadIdx.x / 32) * slots * R + slot;

        int64_t idx[R];                 // row j's index in its group: channel c (M1), pi (M2)
        bool valid[R];                  // idx[j] < width
        int64_t state_at[R], A_at[R];   // row j's offsets in the state and (M1) in A
        float D_row[R], bias_row[R];    // D and dt_bias of row j (M2: its head's)
#pragma unroll
        for (int j = 0; j < R; j++) {
            idx[j] = first + (int64_t)j * slots;
            valid[j] = idx[j] < width;
            state_at[j] = (group * width + idx[j]) * N;
            A_at[j] = idx[j] * N;
            const int64_t param = M2 ? hi : idx[j];
            const bool readable = M2 || valid[j];  // M1: idx[j] is a channel only when valid
            D_row[j] = readable && t.D ? t.D[param] : 0.f;
            bias_row[j] = readable && t.dt_bias ? t.dt_bias[param] : 0.f;
        }
        const float A_head = M2 ? t.A[hi] : 0.f;

        float h[R][K][W];   // the lane's states of its rows, current span
        float A2[R][K][W];  // M1: A·log2 e for the same elements
        float xv[R], delta[R], acc[R];
        float dA_head = 1.f;
        float Bv[K][W], Cv[K][W];

        /* One token's per-row inputs (tok_at = b·T + token): x, Δ and (M2) the head's dA. */
        auto token_inputs = [&](int64_t tok_at) {
            if constexpr (M2) {
                const float d = delta_of(to_float(dt[tok_at * s.heads + hi]), bias_row[0], s.softplus);
                // dA = torch.exp(rearrange(dt, "b h d -> b h d 1") * A)
                dA_head = expf(d * A_head);
#pragma unroll
                for (int j = 0; j < R; j++) delta[j] = d;
            } else {
#pragma unroll
                for (int j = 0; j < R; j++)
                    delta[j] = valid[j] ? delta_of(to_float(dt[tok_at * x_tok + idx[j]]), bias_row[j], s.softplus)
                                        : 0.f;
            }
#pragma unroll
            for (int j = 0; j < R; j++) {
                xv[j] = valid[j] ? to_float(x[tok_at * x_tok + col0 + idx[j]]) : 0.f;
                acc[j] = 0.f;
            }
        };
        /* Token tok's y: the S lanes' shares summed, D and z applied by lane 0. */
        auto token_output = [&](int64_t tok_at) {
#pragma unroll
            for (int j = 0; j < R; j++) {
                for (int off = S / 2; off > 0; off /= 2) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off);
                if (sub != 0 || !valid[j]) continue;
                const int64_t at = tok_at * x_tok + col0 + idx[j];
                float out = acc[j];
                // if D is not None: out += (x * D).to(out.dtype)
                out += xv[j] * D_row[j];
                // return (out if z is None else out * F.silu(z)).to(x.dtype)
                if (z) out *= silu(to_float(z[at]));
                y[at] = from_float<In>(out);
            }
        };
        /* A of the span from e0, times log2 e (M1 only). */
        auto load_A2 = [&](int64_t e0) {
            if constexpr (!M2) {
                load_rows<W, K>(t.A, A_at, valid, e0, S, N, A2);
#pragma unroll
                for (int j = 0; j < R; j++)
#pragma unroll
                    for (int k = 0; k < K; k++)
#pragma unroll
                        for (int w = 0; w < W; w++) A2[j][k][w] *= LOG2E_F;
            }
        };

        if (plan.spans == 1) {
            /* The whole row in registers: state read once, T tokens, written once. */
            const int64_t e0 = (int64_t)sub * W;
            load_rows<W, K>(t.state, state_at, valid, e0, S, N, h);
            load_A2(e0);
            for (int64_t tok = 0; tok < T; tok++) {
                const int64_t tok_at = bi * T + tok;
                token_inputs(tok_at);
                load_lane<In, W, K>(B + tok_at * bc_tok + bc_group * N, e0, S, N, Bv);
                load_lane<In, W, K>(C + tok_at * bc_tok + bc_group * N, e0, S, N, Cv);
                step_rows<W, K, M2>(h, A2, Bv, Cv, delta, xv, dA_head, acc);
                token_output(tok_at);
            }
            store_rows<W, K>(t.state_out, state_at, valid, e0, S, N, h);
        } else {
            /* Long rows: per token, span after span through state_out. */
            for (int64_t tok = 0; tok < T; tok++) {
                const int64_t tok_at = bi * T + tok;
                token_inputs(tok_at);
                for (int64_t sp = 0; sp < plan.spans; sp++) {
                    const int64_t e0 = sp * span_len + (int64_t)sub * W;
                    load_rows<W, K>(tok == 0 ? t.state : t.state_out, state_at, valid, e0, S, N, h);
                    load_A2(e0);
                    load_lane<In, W, K>(B + tok_at * bc_tok + bc_group * N, e0, S, N, Bv);
                    load_lane<In, W, K>(C + tok_at * bc_tok + bc_group * N, e0, S, N, Cv);
                    step_rows<W, K, M2>(h, A2, Bv, Cv, delta, xv, dA_head, acc);
                    store_rows<W, K>(t.state_out, state_at, valid, e0, S, N, h);
                }
                token_output(tok_at);
            }
        }
    }
}

/* ---- Host side of versions 4 and 5 ---- */


/* W: access_width. S: the fewest lanes (<= 32) that give each at most one
 * vector of the row; K: up to 4 vectors per lane beyond 32 lanes; the rest
 * by plan_blocks. */
static CoalescedLaunch plan_coalesced(const DecodeTensors *t, size_t in_bytes) {
    const DecodeShape *s = &t->s;
    CoalescedLaunch c;
    c.W = access_width(t, in_bytes);
    const int64_t vectors = ceil_div(s->dstate, c.W);  // per row
    int S = 1;
    while (S < vectors && S < 32) S *= 2;
    c.K = vectors <= 32 ? 1 : vectors <= 64 ? 2 : 4;
    plan_blocks(s, S, kMaxThreads, kRowsPerThread, &c);
    return c;
}

/* The kernels as launchable types, so one dispatch serves every version. */
struct CoalescedKernel {
    template <typename In, int W, int K, bool M2>
    static void launch(const DecodeTensors *t, const CoalescedLaunch &c) {
        decode_coalesced_kernel<In, W, K, M2><<<c.grid, c.threads>>>(*t, c.plan);
    }
};

extern "C" void decode_coalesced(const DecodeTensors *t, void *workspace) {
    (void)workspace;
    launch_planned<CoalescedKernel, float>(t, plan_coalesced(t, sizeof(float)));
}

extern "C" void decode_coalesced_fp16(const DecodeTensors *t, void *workspace) {
    (void)workspace;
    launch_planned<CoalescedKernel, __half>(t, plan_coalesced(t, sizeof(__half)));
}
