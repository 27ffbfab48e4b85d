/* 04_fp16_half2, GPU, versions 2-7 (kernels.cu): a block's geometry (rows of S
 * lanes, the B/C tiles and scratch in shared memory) and the 16-bit loads and
 * stores of a thread's row and of the B/C tiles, 8 steps at a time. */
#ifndef FP16_LANES16_CUH
#define FP16_LANES16_CUH

#include <stdint.h>
#include <string.h>

#include "mufu.cuh"
#include "row_block.cuh"
#include "rows16.cuh"

/* ========================================================================
 * Geometry
 * ====================================================================== */

/* kThreads and the map of a block's threads onto rows: row_block.cuh. */
constexpr int kMaxStates = 256;          // 16 lanes x 16 states (versions 2, 3)
constexpr int kGroup = 8;                // steps per global load: 8 halves = 16 bytes
constexpr int kMaxTile = 64;             // steps per B/C tile
constexpr int kTileHalves = 2048;        // N_pad x T of a B/C tile: T = 64 up to N = 32, 8 at N = 256
constexpr int kPieces = 2 * kTileHalves / kGroup / kThreads;  // 8-step pieces of B and C per thread per tile
constexpr int64_t kFillThreads = 32768;  // enough to fill an H200: 2 warps on each of its 528 schedulers

/* R states per lane, S lanes per row, T steps per B/C tile, L cut into
 * `chunks` pieces of chunk_len steps (a multiple of T; 1 piece = one pass). */
typedef struct {
    int R, S, T, chunks;
    int64_t chunk_len;
} Plan;

/* B/C tiles in shared memory, fp32, step-major: step t of the tile at
 * t·step_floats, lane s's R states from s·lane_floats, so one float4 holds
 * 4 states of one step. Lanes are padded to R + 4 floats when R >= 8, so that
 * the float4 reads of the 8 threads of one wavefront (up to 8 lanes) fall on
 * distinct banks; the rows of a block read the same addresses (broadcast). */
static __host__ __device__ __forceinline__ int lane_floats(int R) { return R >= 8 ? R + 4 : R; }
static __host__ __device__ __forceinline__ int step_floats(int R, int S) { return S * lane_floats(R); }

/* Each row's scratch for one group of 8 steps (at its lane 0's slot):
 * (Δ_e, Δ_e·u_e) at 2e and y_e at 16 + e. Slots are 28 floats apart (16-byte
 * aligned for the float4 writes); the float2 reads of 16 rows then meet at
 * most 2 to a bank. */
constexpr int kStage = 28;

/* Floats of shared memory: two buffers of B then C (T steps each), then the
 * threads' scratch. */
static __host__ __device__ __forceinline__ int smem_floats(int R, int S, int T) {
    return 2 * 2 * T * step_floats(R, S) + kThreads * kStage;
}

/* This thread's rows of the tensors. F: the 16-bit format of u, delta, z,
 * B, C, y: __half (versions 2-6) or __nv_bfloat16 (version 7). */
template <typename F>
struct RowPtrs {
    const F *u, *delta, *z;  // (L,) fp16 | bf16 of the row; z NULL without z
    F *y;                    // (L,) fp16 | bf16
    const F *B, *C;          // (N, L) fp16 | bf16 of the block's (batch, group)
    float bias, D;           // delta_bias[c], D[c] (0 when not given)
};

template <typename F>
static __device__ RowPtrs<F> row_ptrs(const ScanTensors &t, const RowBlock &w) {
    const int64_t L = t.s.seqlen;
    RowPtrs<F> in;
    in.u = (const F *)t.u + w.row * L;
    in.delta = (const F *)t.delta + w.row * L;
    in.z = t.z ? (const F *)t.z + w.row * L : NULL;
    in.y = (F *)t.y + w.row * L;
    in.B = (const F *)t.B + w.bg * t.s.dstate * L;
    in.C = (const F *)t.C + w.bg * t.s.dstate * L;
    in.bias = t.delta_bias ? t.delta_bias[w.c] : 0.f;
    in.D = t.D ? t.D[w.c] : 0.f;
    return in;
}

/* A2[j] = A[c, n]·log2 e for this thread's states (0 for padding and missing
 * rows: exp2(0) = 1 and B = 0 there, so such a state stays 0). */
template <int R>
static __device__ void load_A2(const ScanTensors &t, const RowBlock &w, float (&A2)[R]) {
    const int64_t N = t.s.dstate;
#pragma unroll
    for (int j = 0; j < R; j++) {
        const int64_t n = (int64_t)w.s * R + j;
        // A_val[r] *= kLog2e;
        A2[j] = w.valid && n < N ? t.A[w.c * N + n] * LOG2E_F : 0.f;
    }
}

/* h[j] = state[row, n], or 0. state is (b, d, N) fp32 or NULL. */
template <int R>
static __device__ void load_state(const float *state, int64_t N, const RowBlock &w, float (&h)[R]) {
#pragma unroll
    for (int j = 0; j < R; j++) {
        const int64_t n = (int64_t)w.s * R + j;
        h[j] = state && w.valid && n < N ? state[w.row * N + n] : 0.f;
    }
}

template <int R>
static __device__ void store_state(float *state, int64_t N, const RowBlock &w, const float (&h)[R]) {
#pragma unroll
    for (int j = 0; j < R; j++) {
        const int64_t n = (int64_t)w.s * R + j;
        if (w.valid && n < N) state[w.row * N + n] = h[j];
    }
}

/* ========================================================================
 * fp16 (bf16) in and out: 8 steps at a time
 * ====================================================================== */

/* Steps [tt, tt + 8) of a 16-bit row as raw bits, steps >= L as 0. VEC and vec
 * (L % 8 == 0 and 16-byte aligned rows, so the 8 steps are all in or all
 * out): one 16-byte load. Otherwise 8 loads of 2 bytes (version 2, odd L). */
template <bool VEC, typename F>
static __device__ __forceinline__ uint4 fetch8(const F *row, int64_t tt, int64_t L, bool vec) {
    if (VEC && vec) return tt < L ? *reinterpret_cast<const uint4 *>(row + tt) : make_uint4(0u, 0u, 0u, 0u);
    const unsigned short *bits = reinterpret_cast<const unsigned short *>(row);
    unsigned b[kGroup];
#pragma unroll
    for (int e = 0; e < kGroup; e++) b[e] = tt + e < L ? bits[tt + e] : 0u;
    return make_uint4(b[0] | b[1] << 16, b[2] | b[3] << 16, b[4] | b[5] << 16, b[6] | b[7] << 16);
}

/* Two values (the bits of a pair) to two floats. */
template <typename F>
static __device__ __forceinline__ float2 pair_bits_to_float2(unsigned bits) {
    typename Pair<F>::type h2;
    memcpy(&h2, &bits, sizeof bits);
    return Pair<F>::widen(h2);
}

/* 8 values to 8 floats, a pair at a time (__half22float2, __bfloat1622float2). */
template <typename F>
static __device__ __forceinline__ void widen8(uint4 q, float (&v)[kGroup]) {
    typename Pair<F>::type h2[4];
    memcpy(h2, &q, sizeof q);
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const float2 f = Pair<F>::widen(h2[k]);
        v[2 * k] = f.x;
        v[2 * k + 1] = f.y;
    }
}

/* y for steps [tt, tt + 8), rounded to F (__floats2half2_rn,
 * __floats2bfloat162_rn: two at a time); steps >= L are not written. */
template <bool VEC, typename F>
static __device__ __forceinline__ void store8(F *row, int64_t tt, int64_t L, bool vec, const float (&v)[kGroup]) {
    if (VEC && vec) {
        typename Pair<F>::type h2[4];
#pragma unroll
        for (int k = 0; k < 4; k++) h2[k] = Pair<F>::narrow(v[2 * k], v[2 * k + 1]);
        uint4 q;
        memcpy(&q, h2, sizeof q);
        if (tt < L) *reinterpret_cast<uint4 *>(row + tt) = q;
        return;
    }
#pragma unroll
    for (int e = 0; e < kGroup; e++)
        if (tt + e < L) row[tt + e] = Pair<F>::narrow1(v[e]);
}

/* u, delta and z of 8 steps of this thread's row, as fetched (raw fp16 | bf16). */
struct Steps8 {
    uint4 u, delta, z;
};

/* z only where it is used: lane 0 of a row, in a pass that writes y. */
template <bool VEC, bool WRITE_Y, typename F>
static __device__ __forceinline__ Steps8 fetch_steps(const RowBlock &w, const RowPtrs<F> &in, int64_t tt, int64_t L,
                                                     bool vec) {
    Steps8 q = {make_uint4(0u, 0u, 0u, 0u), make_uint4(0u, 0u, 0u, 0u), make_uint4(0u, 0u, 0u, 0u)};
    if (!w.valid) return q;
    q.u = fetch8<VEC>(in.u, tt, L, vec);
    q.delta = fetch8<VEC>(in.delta, tt, L, vec);
    if (WRITE_Y && in.z && w.s == 0) q.z = fetch8<VEC>(in.z, tt, L, vec);
    return q;
}

/* The block's B and C for steps [t0, t0 + T) into one buffer, widened to
 * fp32: B (T, step_floats), then C. 2·N_pad·T/8 pieces of 8 steps of one
 * state; piece i = threadIdx.x + k·kThreads is state n = i % N_pad, so a warp
 * writes 32 consecutive states of a step. All loads are issued before the
 * first store. States n >= N and the C of a pass that writes no y are 0. */
template <int R, bool VEC, bool WITH_C, typename F>
static __device__ void load_bc_tile(float *buf, const RowPtrs<F> &in, int N, int S, int T, int64_t t0, int64_t L,
                                    bool vec) {
    const int npad = R * S, per_tensor = npad * (T / kGroup), step = step_floats(R, S);
    uint4 raw[kPieces];
#pragma unroll
    for (int k = 0; k < kPieces; k++) {
        const int i = threadIdx.x + k * kThreads;
        const int tensor = i / per_tensor, rem = i % per_tensor, n = rem % npad, q = rem / npad;
        const bool wanted = i < 2 * per_tensor && n < N && (tensor == 0 || WITH_C);
        raw[k] = wanted ? fetch8<VEC>((tensor == 0 ? in.B : in.C) + (int64_t)n * L, t0 + q * kGroup, L, vec)
                        : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int k = 0; k < kPieces; k++) {
        const int i = threadIdx.x + k * kThreads;
        if (i >= 2 * per_tensor) break;
        const int tensor = i / per_tensor, rem = i % per_tensor, n = rem % npad, q = rem / npad;
        float v[kGroup];
        widen8<F>(raw[k], v);
        float *dst = buf + tensor * T * step + q * kGroup * step + (n / R) * lane_floats(R) + n % R;
#pragma unroll
        for (int e = 0; e < kGroup; e++) dst[e * step] = v[e];
    }
}

#endif
