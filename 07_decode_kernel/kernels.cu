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
 * (M1) or 2·4·b·h·p·N bytes (M2) in fp32 (half that in fp16, version 8). Everything else is small: x, z, y
 * one value per row, dt per row (M1) or head (M2), B and C N values per
 * batch entry (M1) or group (M2), A (d, N) or (h,). At the benchmark shapes:
 *   M2 b 64, h 32, p 64, N 128, no z: state 2 x 67.1 MB = 134 MB; x, y
 *      0.5 MB each; B, C 32 KB each: 135.3 MB, 0.034 ms at 3.97 TB/s.
 *   M1 b 64, d 2048, N 16: state 2 x 8.4 MB = 16.8 MB; x, dt, z, y 0.5 MB
 *      each; A 0.13 MB: 19.0 MB, 0.0048 ms. It fits in L2: time it with L2
 *      flushed.
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
 * The previous stage, version 2, decode_via_scan: T tokens are a scan of L = T steps
 * from h0 = state; 03's scan_fused_tuned (M1) and 05's ssd_steps_fp32 (M2)
 * compute it, and every version is checked against their y and final state. */
#include "kernels.h"

#include <cuda_fp16.h>
#include <limits.h>
#include <stdint.h>

#include "../03_fused_cuda/kernels.h"
#include "../05_ssd_mamba2/kernels.h"
#include "cuda_check.h"
#include "mamba2_io.cuh"
#include "mufu.cuh"
#include "transpose.h"

/* ========================================================================
 * Scalar pieces
 * ====================================================================== */

/* z·σ(z). __fdividef: 2 ulp, no IEEE-division slow path (whose call makes
 * the kernel spill); for z < -87, 1 + e^-z = inf and z / inf = 0, as it should. */
static __device__ __forceinline__ float silu(float z) { return __fdividef(z, 1.f + expf(-z)); }

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

constexpr int kRowsPerThread = 4;  // R: independent rows in flight per thread
constexpr int kMaxThreads = 256;   // threads per block at most

struct CoalescedPlan {
    int lanes;               // S: lanes per row, a power of two 1..32
    int64_t spans;           // pieces of a row; 1: the state stays in registers across tokens
    int64_t rows_per_block;  // warps · (32/S) · R
    int64_t tiles;           // blocks per group of rows
    int64_t blocks;          // groups · tiles
};

/* W consecutive values at p (aligned to W elements), as floats. */
static __device__ __forceinline__ void load_vec(const float *p, float (&v)[1]) { v[0] = *p; }
static __device__ __forceinline__ void load_vec(const float *p, float (&v)[4]) {
    const float4 q = *reinterpret_cast<const float4 *>(p);
    v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
}
/* 4 halves (the bits of two half2) to 4 floats. */
static __device__ __forceinline__ void widen4(uint2 q, float (&v)[4]) {
    const float2 lo = __half22float2(*reinterpret_cast<const __half2 *>(&q.x));
    const float2 hi = __half22float2(*reinterpret_cast<const __half2 *>(&q.y));
    v[0] = lo.x; v[1] = lo.y; v[2] = hi.x; v[3] = hi.y;
}
static __device__ __forceinline__ void load_vec(const __half *p, float (&v)[1]) { v[0] = __half2float(*p); }
static __device__ __forceinline__ void load_vec(const __half *p, float (&v)[4]) {
    widen4(*reinterpret_cast<const uint2 *>(p), v);  // 4 halves, one 8-byte access
}
static __device__ __forceinline__ void store_vec(float *p, const float (&v)[1]) { *p = v[0]; }
static __device__ __forceinline__ void store_vec(float *p, const float (&v)[4]) {
    *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
}

/* The lane's K vectors of one N-vector (B or C at one token), from element e0. */
template <typename In, int W, int K>
static __device__ __forceinline__ void load_lane(const In *src, int64_t e0, int S, int64_t N, float (&v)[K][W]) {
#pragma unroll
    for (int k = 0; k < K; k++) {
        const int64_t e = e0 + (int64_t)k * S * W;
        if (e < N) load_vec(src + e, v[k]);
        else
#pragma unroll
            for (int w = 0; w < W; w++) v[k][w] = 0.f;
    }
}

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

static int sm_count(void) {
    static int count = 0;
    if (count == 0) {
        int dev = 0;
        cuda_check(cudaGetDevice(&dev));
        cuda_check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev));
    }
    return count;
}

static bool aligned(const void *p, size_t bytes) { return (uintptr_t)p % bytes == 0; }

struct CoalescedLaunch {
    CoalescedPlan plan;
    int W, K;     // template arguments: floats per access (1, 4), accesses per lane and row (1, 2, 4)
    int threads;  // per block, 32..256
    unsigned grid;
};

/* Floats per vector access: 4 when every one can be 16 bytes (8 bytes for fp16
 * B/C), else 1. */
static int access_width(const DecodeTensors *t, size_t in_bytes) {
    return t->s.dstate % 4 == 0 && aligned(t->state, 16) && aligned(t->state_out, 16) &&
                   aligned(t->B, 4 * in_bytes) && aligned(t->C, 4 * in_bytes) &&
                   (t->s.form == DECODE_M2 || aligned(t->A, 16))
               ? 4
               : 1;
}

/* The rest of a plan, once S lanes per row and K are chosen: lanes and
 * spans per row, then threads per block (at most max_threads), halved while
 * half a block still covers a whole group (a head's p rows, or a batch
 * entry's d), or while the blocks would be fewer than 2 per SM; a thread
 * takes rows_per_thread rows. */
static void plan_blocks(const DecodeShape *s, int S, int max_threads, int64_t rows_per_thread, CoalescedLaunch *c) {
    const bool m2 = s->form == DECODE_M2;
    const int64_t vectors = ceil_div(s->dstate, c->W);  // per row
    c->plan.lanes = S;
    c->plan.spans = ceil_div(vectors, (int64_t)S * c->K);
    const int64_t width = m2 ? s->headdim : s->dim;
    const int64_t groups = m2 ? s->batch * s->heads : s->batch;
    const int64_t rows_per_warp = (32 / S) * rows_per_thread;
    int threads = max_threads;
    while (threads > 32 && (threads / 64) * rows_per_warp >= width) threads /= 2;
    while (threads > 32 && groups * ceil_div(width, (threads / 32) * rows_per_warp) < 2 * (int64_t)sm_count())
        threads /= 2;
    c->threads = threads;
    c->plan.rows_per_block = (threads / 32) * rows_per_warp;
    c->plan.tiles = ceil_div(width, c->plan.rows_per_block);
    c->plan.blocks = groups * c->plan.tiles;
    c->grid = (unsigned)(c->plan.blocks < INT_MAX ? c->plan.blocks : INT_MAX);
}

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

/* Kernel::launch with the template arguments the plan chose (K, then W and the form). */
template <typename Kernel, typename In, int W, bool M2>
static void launch_k(const DecodeTensors *t, const CoalescedLaunch &c) {
    switch (c.K) {
    case 1: Kernel::template launch<In, W, 1, M2>(t, c); break;
    case 2: Kernel::template launch<In, W, 2, M2>(t, c); break;
    default: Kernel::template launch<In, W, 4, M2>(t, c); break;
    }
    cuda_check_launch();
}

template <typename Kernel, typename In>
static void launch_planned(const DecodeTensors *t, const CoalescedLaunch &c) {
    const bool m2 = t->s.form == DECODE_M2;
    if (c.W == 4) {
        if (m2) launch_k<Kernel, In, 4, true>(t, c);
        else launch_k<Kernel, In, 4, false>(t, c);
    } else {
        if (m2) launch_k<Kernel, In, 1, true>(t, c);
        else launch_k<Kernel, In, 1, false>(t, c);
    }
}

extern "C" void decode_coalesced(const DecodeTensors *t, void *workspace) {
    (void)workspace;
    launch_planned<CoalescedKernel, float>(t, plan_coalesced(t, sizeof(float)));
}

extern "C" void decode_coalesced_fp16(const DecodeTensors *t, void *workspace) {
    (void)workspace;
    launch_planned<CoalescedKernel, __half>(t, plan_coalesced(t, sizeof(__half)));
}

/* ========================================================================
 * Versions 6 and 7: lean (decode_lean fp32 I/O, decode_lean_fp16 fp16 I/O)
 *
 * What changed from version 4, whose profile at M2 b 64 showed the issue
 * slots 68% busy for 41% of the DRAM peak (every thread redid the head's
 * libm softplus and expf per token; 32 lanes per row, 5 shuffle rounds per
 * row), and at M1 b 64 124 registers, 2 blocks per SM, latency-bound:
 *  - Fewer instructions per byte. Δ by one MUFU ex2 and a polynomial log1p
 *    (03's version 7), dA by ex2 on Δ·log2 e (M2: once per thread and
 *    token; M1: per element, Δ·log2 e once per row), Δ·x once per row: an
 *    element costs a multiply and two FMAs (M1: plus a multiply and an ex2).
 *    Offsets are formed once per block, a thread's row j is row 0's plus j
 *    steps. M2 b 64: 12.7 M warp instructions where version 4 issued ~41 M.
 *  - Longer pieces per lane: K = 4 vectors (16 floats) of a row above 16
 *    vectors per row, so M2 N 128 takes 8 lanes per row, not 32 (3 shuffle
 *    rounds, not 5), and R = 2 rows per thread: 8 state loads of 16 bytes
 *    in flight per thread, issued with B, C, x, dt before any arithmetic.
 *    z is loaded with x, not after the shuffles.
 *  - M1 N 16 (K = 1): R = 2 rows per thread held to 64 registers, 4 blocks
 *    of 256 per SM instead of 2: twice the warps waiting on DRAM.
 *  - The state streamed: read with ld.global.cs and written with
 *    st.global.cs (evict first), touched once; B, C, A, x stay cached.
 * What bounds it (Nsight Compute, H200, M2 b 64): 128 registers, 2 blocks
 * per SM, warps active 23%, long-scoreboard stalls 49% of active cycles,
 * DRAM at 45% of peak: at most 64 KB of state loads in flight per SM, too
 * few to cover the DRAM latency; the registers that hold them are the cap.
 * Bytes: as version 4. Exps: M1 b·T·d·(N + 1) ex2, M2 2 per thread and token.
 * ====================================================================== */

constexpr int kLeanThreads = 256;  // threads per block at most

/* R: rows per thread: 4 at K = 2, else 2; at most 32 state floats per lane
 * (M2 N 128: 2 rows x 16 floats, 8 loads of 16 bytes in flight; M1 N 16:
 * 2 rows x 4 floats, plus 2 of A). */
static __host__ __device__ constexpr int lean_rows(int K) { return K == 2 ? 4 : 2; }
/* Blocks of 256 threads per SM that the registers are held to: 4 (64
 * registers) at K = 1, 2 (128) beyond (M2 N 128 at 80 registers spills). */
static __host__ __device__ constexpr int lean_min_blocks(int K) { return K == 1 ? 4 : 2; }

/* Δ = softplus(dt + dt_bias) without libm: 03's dt_poly, max(v, 0) +
 * log1p(e^-|v|), e^-|v| on one MUFU.EX2 and the log1p by log1p_unit
 * (mufu.cuh). Equal to the official threshold form: above 20,
 * log1p(e^-v) < 2.1e-9 vanishes against v. */
static __device__ __forceinline__ float delta_poly(float dt, float bias, bool softplus) {
    // dt = dt + dt_bias
    const float v = dt + bias;
    // dt = F.softplus(dt) if dt_softplus else dt
    return softplus ? fmaxf(v, 0.f) + log1p_unit(exp2_approx(-fabsf(v) * LOG2E_F)) : v;
}

/* W consecutive state floats at p, read and written with streaming hints
 * (ld.global.cs, st.global.cs: touched once, evicted first). */
static __device__ __forceinline__ void load_stream(const float *p, float (&v)[1]) { v[0] = __ldcs(p); }
static __device__ __forceinline__ void load_stream(const float *p, float (&v)[4]) {
    const float4 q = __ldcs(reinterpret_cast<const float4 *>(p));
    v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
}
static __device__ __forceinline__ void store_stream(float *p, const float (&v)[1]) { __stcs(p, v[0]); }
static __device__ __forceinline__ void store_stream(float *p, const float (&v)[4]) {
    __stcs(reinterpret_cast<float4 *>(p), make_float4(v[0], v[1], v[2], v[3]));
}
/* The same for a state stored in fp16 (version 8): 4 halves, one 8-byte access. */
static __device__ __forceinline__ void load_stream(const __half *p, float (&v)[1]) {
    v[0] = __half2float(__ushort_as_half(__ldcs(reinterpret_cast<const unsigned short *>(p))));
}
static __device__ __forceinline__ void load_stream(const __half *p, float (&v)[4]) {
    widen4(__ldcs(reinterpret_cast<const uint2 *>(p)), v);
}
static __device__ __forceinline__ void store_stream(__half *p, const float (&v)[1]) {
    __stcs(reinterpret_cast<unsigned short *>(p), __half_as_ushort(__float2half_rn(v[0])));
}
static __device__ __forceinline__ void store_stream(__half *p, const float (&v)[4]) {
    const __half2 lo = __floats2half2_rn(v[0], v[1]), hi = __floats2half2_rn(v[2], v[3]);
    __stcs(reinterpret_cast<uint2 *>(p),
           make_uint2(*reinterpret_cast<const unsigned *>(&lo), *reinterpret_cast<const unsigned *>(&hi)));
}

/* The lane's K vectors of each of its R rows, row j at row0 + j·step, from
 * element e0: the state (Stream: with the streaming hint) or A (M1). 0
 * outside the row or for invalid rows. */
template <bool Stream, int W, int K, int R, typename P>
static __device__ __forceinline__ void load_lean_rows(const P *row0, int64_t step, const bool (&valid)[R],
                                                      int64_t e0, int S, int64_t N, float (&v)[R][K][W]) {
#pragma unroll
    for (int j = 0; j < R; j++)
#pragma unroll
        for (int k = 0; k < K; k++) {
            const int64_t e = e0 + (int64_t)k * S * W;
            if (valid[j] && e < N) {
                if constexpr (Stream) load_stream(row0 + j * step + e, v[j][k]);
                else load_vec(row0 + j * step + e, v[j][k]);
            } else {
#pragma unroll
                for (int w = 0; w < W; w++) v[j][k][w] = 0.f;
            }
        }
}

template <int W, int K, int R, typename P>
static __device__ __forceinline__ void store_lean_rows(P *row0, int64_t step, const bool (&valid)[R], int64_t e0,
                                                       int S, int64_t N, const float (&v)[R][K][W]) {
#pragma unroll
    for (int j = 0; j < R; j++)
#pragma unroll
        for (int k = 0; k < K; k++) {
            const int64_t e = e0 + (int64_t)k * S * W;
            if (valid[j] && e < N) store_stream(row0 + j * step + e, v[j][k]);
        }
}

/* The block's rows and tiles as in version 4 (CoalescedPlan), with R =
 * lean_rows(K) rows per thread, row j of a thread j·(32/S) rows after its
 * row 0. St: how the state is stored, float (6, 7) or __half (8). */
template <typename In, int W, int K, bool M2, typename St = float>
__global__ void __launch_bounds__(kLeanThreads, lean_min_blocks(K)) decode_lean_kernel(DecodeTensors t, CoalescedPlan plan) {
    constexpr int R = lean_rows(K);
    constexpr int kDeltas = M2 ? 1 : R;  // Δ held per head (M2) or per row (M1)
    const DecodeShape s = t.s;
    const int64_t N = s.dstate, T = s.tokens;
    const int64_t width = M2 ? s.headdim : s.dim;           // rows per group
    const int64_t x_tok = M2 ? s.heads * s.headdim : s.dim;  // x, z, y elements per token
    const int64_t dt_tok = M2 ? s.heads : s.dim;             // dt elements per token
    const int64_t bc_tok = M2 ? s.groups * N : N;            // B, C elements per token
    const In *x = static_cast<const In *>(t.x);    // M1 (b, T, d)  M2 (b, T, h, p)
    const In *dt = static_cast<const In *>(t.dt);  // M1 (b, T, d)  M2 (b, T, h)
    const In *B = static_cast<const In *>(t.B);    // M1 (b, T, N)  M2 (b, T, g, N)
    const In *C = static_cast<const In *>(t.C);    // like B
    const In *z = static_cast<const In *>(t.z);    // like x, NULL without z
    In *y = static_cast<In *>(t.y);                // like x, written
    const St *state = reinterpret_cast<const St *>(t.state);  // M1 (b, d, N)  M2 (b, h, p, N)  fp32 | fp16 (8)
    St *state_out = reinterpret_cast<St *>(t.state_out);      // like state, written
    const int S = plan.lanes, slots = 32 / S;
    const int lane = threadIdx.x % 32, sub = lane % S, slot = lane / S;
    const int64_t span_len = (int64_t)S * K * W;
    const int64_t step = (int64_t)slots * N;  // from a thread's row j to row j + 1, in the state and (M1) in A

    for (int64_t blk = blockIdx.x; blk < plan.blocks; blk += gridDim.x) {
        const int64_t group = blk / plan.tiles, tile = blk % plan.tiles;
        const int64_t bi = M2 ? group / s.heads : group;
        const int64_t hi = M2 ? group % s.heads : 0;
        // B = repeat(B, "b g n -> b (g h) n", h=nheads // ngroups)
        const int64_t bc_group = M2 ? hi / (s.heads / s.groups) : 0;
        const int64_t first = tile * plan.rows_per_block + (int64_t)(threadIdx.x / 32) * slots * R + slot;
        /* Offsets of the thread's row 0 (index `first` in its group) at token
         * 0. Its row j is j·slots further in x, z, y and (M1) dt, D, dt_bias,
         * j·step further in the state and (M1) A; M2's are the head's. */
        const int64_t xrow = bi * T * x_tok + (M2 ? hi * s.headdim : 0) + first;  // x, z, y
        const int64_t prow = M2 ? hi : first;                                      // D, dt_bias, A
        const int64_t dtrow = M2 ? bi * T * s.heads + hi : xrow;                  // dt
        const int64_t bcrow = bi * T * bc_tok + bc_group * N;                      // B, C
        const int64_t srow = (group * width + first) * N;                          // state, state_out

        bool valid[R];  // row j exists: first + j·slots < width
#pragma unroll
        for (int j = 0; j < R; j++) valid[j] = first + (int64_t)j * slots < width;

        float h[R][K][W];   // the lane's states of its rows, current span
        float Av[R][K][W];  // M1: A of the same elements
        float Bv[K][W], Cv[K][W];
        float xD[R], zv[R], dx[R], acc[R];  // per row: x·D, z, Δ·x, the lane's share of y
        float d2[kDeltas];                  // Δ·log2 e of the head (M2) or of row j (M1)
        float dA_head = 1.f;                // M2: the head's dA

        /* Token tok's inputs: Δ per head or row, then per row x·D, z, Δ·x; the head's dA (M2). */
        auto token_inputs = [&](int64_t tok) {
            float delta[kDeltas];
#pragma unroll
            for (int j = 0; j < kDeltas; j++) {
                const bool ok = M2 || valid[j];
                const int64_t p = prow + j * slots;
                const float bias = ok && t.dt_bias ? t.dt_bias[p] : 0.f;
                delta[j] = ok ? delta_poly(to_float(dt[dtrow + tok * dt_tok + j * slots]), bias, s.softplus) : 0.f;
                d2[j] = delta[j] * LOG2E_F;
            }
#pragma unroll
            for (int j = 0; j < R; j++) {
                const int64_t at = xrow + tok * x_tok + j * slots;
                const float xv = valid[j] ? to_float(x[at]) : 0.f;
                // if D is not None: out += (x * D).to(out.dtype)
                xD[j] = valid[j] && t.D ? xv * t.D[prow + (M2 ? 0 : j * slots)] : 0.f;
                zv[j] = valid[j] && z ? to_float(z[at]) : 0.f;
                dx[j] = delta[M2 ? 0 : j] * xv;
                acc[j] = 0.f;
            }
            // dA = torch.exp(rearrange(dt, "b h d -> b h d 1") * A)
            if constexpr (M2) dA_head = exp2_approx(d2[0] * t.A[prow]);
        };
        /* One token on the lane's elements of the span: h updated, acc[j] +=
         * the lane's share of Σ_n h·C. Outside a row h, B, C are 0 and stay. */
        auto step_rows = [&]() {
#pragma unroll
            for (int j = 0; j < R; j++)
#pragma unroll
                for (int k = 0; k < K; k++)
#pragma unroll
                    for (int w = 0; w < W; w++) {
                        float dA = dA_head;
                        // dA = torch.exp(rearrange(dt, "b d -> b d 1") * A)
                        if constexpr (!M2) dA = exp2_approx(d2[j] * Av[j][k][w]);
                        // state.copy_(state * dA + dB * rearrange(x, "b d -> b d 1")), dB = dt·B: as B·(dt·x)
                        h[j][k][w] = fmaf(Bv[k][w], dx[j], h[j][k][w] * dA);
                        // out = torch.einsum("bdn,bn->bd", state.to(C.dtype), C)
                        acc[j] = fmaf(h[j][k][w], Cv[k][w], acc[j]);
                    }
        };
        /* Token tok's y: the S lanes' shares summed, x·D and z applied by lane 0. */
        auto token_output = [&](int64_t tok) {
#pragma unroll
            for (int j = 0; j < R; j++) {
                for (int off = S / 2; off > 0; off /= 2) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off);
                if (sub != 0 || !valid[j]) continue;
                float out = acc[j] + xD[j];
                // return (out if z is None else out * F.silu(z)).to(x.dtype)
                if (z) out *= silu(zv[j]);
                y[xrow + tok * x_tok + j * slots] = from_float<In>(out);
            }
        };

        if (plan.spans == 1) {
            /* The whole row in registers: state read once, T tokens, written once. */
            const int64_t e0 = (int64_t)sub * W;
            load_lean_rows<true>(state + srow, step, valid, e0, S, N, h);
            if constexpr (!M2) load_lean_rows<false>(t.A + prow * N, step, valid, e0, S, N, Av);
            for (int64_t tok = 0; tok < T; tok++) {
                token_inputs(tok);
                load_lane<In, W, K>(B + bcrow + tok * bc_tok, e0, S, N, Bv);
                load_lane<In, W, K>(C + bcrow + tok * bc_tok, e0, S, N, Cv);
                step_rows();
                token_output(tok);
            }
            store_lean_rows(state_out + srow, step, valid, e0, S, N, h);
        } else {
            /* Long rows: per token, span after span through state_out. */
            for (int64_t tok = 0; tok < T; tok++) {
                token_inputs(tok);
                for (int64_t sp = 0; sp < plan.spans; sp++) {
                    const int64_t e0 = sp * span_len + (int64_t)sub * W;
                    load_lean_rows<true>((tok == 0 ? state : state_out) + srow, step, valid, e0, S, N, h);
                    if constexpr (!M2) load_lean_rows<false>(t.A + prow * N, step, valid, e0, S, N, Av);
                    load_lane<In, W, K>(B + bcrow + tok * bc_tok, e0, S, N, Bv);
                    load_lane<In, W, K>(C + bcrow + tok * bc_tok, e0, S, N, Cv);
                    step_rows();
                    store_lean_rows(state_out + srow, step, valid, e0, S, N, h);
                }
                token_output(tok);
            }
        }
    }
}

/* ---- Host side of versions 6-8 ---- */

/* W as in version 4. K: 4 vectors per lane above 16 vectors per row, 2
 * from 8, else 1; S: the fewest lanes (<= 32) that take the row in K
 * vectors each; the rest by plan_blocks, as in version 4. */
static CoalescedLaunch plan_lean(const DecodeTensors *t, size_t in_bytes) {
    const DecodeShape *s = &t->s;
    CoalescedLaunch c;
    c.W = access_width(t, in_bytes);
    const int64_t vectors = ceil_div(s->dstate, c.W);  // per row
    c.K = vectors > 16 ? 4 : vectors >= 8 ? 2 : 1;
    int S = 1;
    while ((int64_t)S * c.K < vectors && S < 32) S *= 2;
    plan_blocks(s, S, kLeanThreads, lean_rows(c.K), &c);
    return c;
}

/* St: how the state is stored, float (6, 7) or __half (8). */
template <typename St>
struct LeanKernel {
    template <typename In, int W, int K, bool M2>
    static void launch(const DecodeTensors *t, const CoalescedLaunch &c) {
        decode_lean_kernel<In, W, K, M2, St><<<c.grid, c.threads>>>(*t, c.plan);
    }
};

extern "C" void decode_lean(const DecodeTensors *t, void *workspace) {
    (void)workspace;
    launch_planned<LeanKernel<float>, float>(t, plan_lean(t, sizeof(float)));
}

extern "C" void decode_lean_fp16(const DecodeTensors *t, void *workspace) {
    (void)workspace;
    launch_planned<LeanKernel<float>, __half>(t, plan_lean(t, sizeof(__half)));
}

/* ---- Version 8: version 7 with the state stored in fp16 ----
 *
 * The state is the step's bytes: stored in fp16 (as the official fp16 runs
 * keep it) a step moves half of them, 8-byte state accesses where 7 makes
 * 16-byte ones, the same plan, registers and arithmetic (the state is
 * widened to fp32 on load and rounded on store). What it costs in accuracy
 * over 1,000 tokens is computed by the program (lessons.c) and in the
 * README; the check runs it against the oracle on the unrounded fp32 state,
 * so it counts the state's rounding on the way in and out. With T tokens a
 * row that fits one pass of its lanes stays in fp32 registers from the first
 * token to the last (rounded once, on the store); a longer row (N > 512, or
 * N > 128 when N is not a multiple of 4) goes through state_out after every
 * token, rounded each time.
 * Bytes: 2·2·b·(d or h·p)·N for the state, plus version 7's per-token
 * tensors. Exps: as version 6. */
extern "C" void decode_lean_state16(const DecodeTensors *t, void *workspace) {
    (void)workspace;
    launch_planned<LeanKernel<__half>, __half>(t, plan_lean(t, sizeof(__half)));
}

/* ========================================================================
 * The previous stage: T decode steps as a scan of L = T steps
 *
 * Unrolled over its T tokens, the decode step is the selective scan with
 * h0 = state, final state = state_out and y at every step:
 *   M2: mamba_chunk_scan_combined with initial_states; its layouts (x (b, L,
 *       h, p), dt (b, L, h), B/C (b, L, g, N), y (b, L, h, p), states (b, h,
 *       p, N)) are decode's with L = T: 05's ssd_steps_fp32 takes the
 *       tensors as they are.
 *   M1: selective_scan_fn with h0 (03): time-last layouts (u, delta, z, y
 *       (b, d, L), B/C (b, 1, N, L)), so x, dt, z, B, C are transposed into
 *       the workspace and y back.
 * Neither scan promises to read its initial state before writing its final
 * state, so when state_out == state the state is copied first.
 * ====================================================================== */

constexpr int64_t kScanChunk = 64;   // 05's chunk size Q for the M2 scan

/* The M1 decode problem as 03's scan problem. */
static ScanShape scan_shape_of(const DecodeShape *s) {
    ScanShape m;
    m.batch = s->batch;
    m.dim = s->dim;
    m.dstate = s->dstate;
    m.seqlen = s->tokens;
    m.groups = 1;
    m.has_z = s->has_z;
    m.has_D = s->has_D;
    m.has_bias = s->has_bias;
    m.softplus = s->softplus;
    m.has_h0 = true;
    return m;
}

/* The M2 decode problem as 05's SSD problem. */
static SsdShape ssd_shape_of(const DecodeShape *s) {
    SsdShape m;
    m.batch = s->batch;
    m.seqlen = s->tokens;
    m.heads = s->heads;
    m.headdim = s->headdim;
    m.groups = s->groups;
    m.dstate = s->dstate;
    m.chunk = kScanChunk;
    m.has_z = s->has_z;
    m.has_D = s->has_D;
    m.D_per_channel = false;
    m.has_bias = s->has_bias;
    m.softplus = s->softplus;
    m.has_h0 = true;
    return m;
}

/* Byte offsets in the workspace, each 256-byte aligned (03 reads rows with
 * 16-byte loads); a tensor that is not needed takes no room. */
struct ViaScanLayout {
    size_t h0;                // the state copy: M1 (b, d, N), M2 (b, h, p, N) fp32
    size_t u, delta, z, y;    // M1 (b, d, T) fp32: x, dt, z, and y before the transpose back
    size_t B, C;              // M1 (b, 1, N, T) fp32
    size_t scan;              // the scan's own workspace
    size_t total;
};

static ViaScanLayout via_scan_layout(const DecodeShape *s) {
    ViaScanLayout lay;
    size_t at = 0;
    auto take = [&at](int64_t floats) {
        const size_t start = at;
        at += (sizeof(float) * (size_t)floats + 255) / 256 * 256;
        return start;
    };
    const bool m1 = s->form == DECODE_M1;
    const int64_t seq = m1 ? s->batch * s->dim * s->tokens : 0;
    const int64_t bc = m1 ? s->batch * s->dstate * s->tokens : 0;
    lay.h0 = take(decode_rows(s) * s->dstate);  // reserved always: the size cannot see whether state_out == state
    lay.u = take(seq);
    lay.delta = take(seq);
    lay.z = take(s->has_z ? seq : 0);
    lay.y = take(seq);
    lay.B = take(bc);
    lay.C = take(bc);
    lay.scan = at;
    if (m1) {
        const ScanShape m = scan_shape_of(s);
        lay.total = at + scan_fused_tuned_workspace(&m);
    } else {
        const SsdShape m = ssd_shape_of(s);
        lay.total = at + ssd_steps_workspace(&m);
    }
    return lay;
}

extern "C" size_t decode_via_scan_workspace(const DecodeShape *s) { return via_scan_layout(s).total; }

extern "C" const char *decode_via_scan_unsupported(const DecodeShape *s) {
    if (s->form == DECODE_M1) {
        const ScanShape m = scan_shape_of(s);
        return scan_fused_tiled_unsupported(&m);  // the tuned scan has the tiled one's limits (03's kernels.h)
    }
    if (s->batch * s->heads * ceil_div(s->tokens, kScanChunk) > INT_MAX) return "more than 2^31 - 1 (b, h, chunk) blocks";
    return NULL;
}

static void via_scan_m1(const DecodeTensors *t, const float *h0, char *ws, const ViaScanLayout &lay) {
    const DecodeShape *s = &t->s;
    const int64_t b = s->batch, T = s->tokens, d = s->dim, N = s->dstate;
    ScanTensors m;
    m.s = scan_shape_of(s);
    float *u = (float *)(ws + lay.u);          // (b, d, T) fp32: x time-last
    float *delta = (float *)(ws + lay.delta);  // (b, d, T) fp32: dt time-last
    float *B = (float *)(ws + lay.B);          // (b, 1, N, T) fp32
    float *C = (float *)(ws + lay.C);          // (b, 1, N, T) fp32
    float *y = (float *)(ws + lay.y);          // (b, d, T) fp32: y before the transpose back
    transpose_batched(u, (const float *)t->x, b, T, d);
    transpose_batched(delta, (const float *)t->dt, b, T, d);
    transpose_batched(B, (const float *)t->B, b, T, N);
    transpose_batched(C, (const float *)t->C, b, T, N);
    m.u = u;
    m.delta = delta;
    m.B = B;
    m.C = C;
    m.z = NULL;
    if (t->z) {
        float *z = (float *)(ws + lay.z);  // (b, d, T) fp32
        transpose_batched(z, (const float *)t->z, b, T, d);
        m.z = z;
    }
    m.A = t->A;
    m.D = t->D;
    m.delta_bias = t->dt_bias;
    m.h0 = h0;
    m.y = y;
    m.last_state = t->state_out;
    scan_fused_tuned(&m, ws + lay.scan);
    transpose_batched((float *)t->y, y, b, d, T);
}

static void via_scan_m2(const DecodeTensors *t, const float *h0, char *ws, const ViaScanLayout &lay) {
    SsdTensors m;
    m.s = ssd_shape_of(&t->s);
    m.x = t->x;
    m.dt = t->dt;
    m.A = t->A;
    m.B = t->B;
    m.C = t->C;
    m.D = t->D;
    m.z = t->z;
    m.dt_bias = t->dt_bias;
    m.initial_states = h0;
    m.y = t->y;
    m.final_state = t->state_out;
    ssd_steps_fp32(&m, ws + lay.scan);
}

extern "C" void decode_via_scan(const DecodeTensors *t, void *workspace) {
    const DecodeShape *s = &t->s;
    const ViaScanLayout lay = via_scan_layout(s);
    char *ws = (char *)workspace;
    const float *h0 = t->state;
    if (t->state_out == t->state) {
        float *copy = (float *)(ws + lay.h0);  // like state
        cuda_check(cudaMemcpyAsync(copy, t->state, sizeof(float) * (size_t)(decode_rows(s) * s->dstate),
                                   cudaMemcpyDeviceToDevice, 0));
        h0 = copy;
    }
    if (s->form == DECODE_M1) via_scan_m1(t, h0, ws, lay);
    else via_scan_m2(t, h0, ws, lay);
}
