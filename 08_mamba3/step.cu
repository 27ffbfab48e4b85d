/* 08_mamba3, versions 7-9: the decode step (one token from the four states)
 * as a stream: the p x N state of every (sequence, head) read once and
 * written once, a warp two rows of H (four values a lane where N is a
 * multiple of 128, else one).
 *
 * Version 3 at L = 1 is already the step, but its block walks the state row
 * by row behind four barriers, a warp per row, and reads H a float a lane;
 * here a block of eight warps takes 16 rows of one head. A block's global
 * reads wait on nothing: each lane issues its first loads of H before the
 * block reads q, k and the angles (all at once) and rotates them, and its
 * next loads while it computes the current ones. What it should buy: from
 * batch 64 up, the state's bytes at the copy rate. Versions 8 and 9
 * keep H in fp16 or bf16 (16-bit I/O too): half the bytes, arithmetic still
 * fp32 in registers. Per (sequence, head):
 *   θ' = (θ + π·tanh(angles)·dt) mod 2π,   q̃ = R(θ')(q + q_bias),  k̃ = R(θ')(k + k_bias)
 *   H'[p] = α H[p] + (1 - λ) dt α v_prev[p] k̃_prev + λ dt v[p] k̃,   y[p] = H'[p]·q̃ + D v[p]
 * then y ·= silu(z); k̃, v and θ' are the new k, v and angle states.
 *
 * A server's pool (Mamba3Pool): sequence n steps slot state_batch_indices[n]
 * (negative: a padding entry, y zeros, no state touched), in place. Where the
 * small states are in place, one block takes all p rows of a head: every
 * block reads the old θ and k̃ that the head's writer replaces. */
#include "kernels.h"

#include <limits.h>
#include <stdint.h>

#include "cuda_check.h"
#include "launch.cuh"
#include "mamba2_io.cuh"

#define STEP_WARPS 8
#define ROWS_PER_WARP 2
#define ROWS_PER_BLOCK (STEP_WARPS * ROWS_PER_WARP)

/* Four consecutive values of H as fp32 and back: one 16-byte access (fp32)
 * or one 8-byte access (16 bits), streamed (read once, written once). */
template <typename ST>
static __device__ __forceinline__ float4 load_state4(const ST *h) {
    if constexpr (sizeof(ST) == 4) {
        return __ldcs(reinterpret_cast<const float4 *>(h));
    } else {
        const uint2 u = __ldcs(reinterpret_cast<const uint2 *>(h));
        const ST *v = reinterpret_cast<const ST *>(&u);
        return make_float4(to_float(v[0]), to_float(v[1]), to_float(v[2]), to_float(v[3]));
    }
}
template <typename ST>
static __device__ __forceinline__ void store_state4(ST *h, float4 x) {
    if constexpr (sizeof(ST) == 4) {
        __stcs(reinterpret_cast<float4 *>(h), x);
    } else {
        uint2 u;
        ST *v = reinterpret_cast<ST *>(&u);
        v[0] = from_float<ST>(x.x), v[1] = from_float<ST>(x.y), v[2] = from_float<ST>(x.z), v[3] = from_float<ST>(x.w);
        __stcs(reinterpret_cast<uint2 *>(h), u);
    }
}

/* Rows p0 and p0 + 1 of H (p, N) at columns c..c+3 as fp32, zeros past p or without a state. */
template <typename ST>
static __device__ __forceinline__ void load_rows(float4 (&hv)[ROWS_PER_WARP], const ST *h_in, int64_t p0, int64_t c,
                                                 int64_t P, int64_t N) {
#pragma unroll
    for (int k = 0; k < ROWS_PER_WARP; k++)
        hv[k] = h_in && p0 + k < P ? load_state4(h_in + (p0 + k) * N + c) : make_float4(0.f, 0.f, 0.f, 0.f);
}

/* IO: q, k, v, z, y (float, __half, __nv_bfloat16); ST: H (the same set).
 * VEC: N a multiple of 128 (four values a lane cover a row in N / 128 loads).
 * slot_of: (b,) int32, a pool's slot of each sequence; NULL: state n is sequence n's. */
template <typename IO, typename ST, bool VEC>
__global__ void __launch_bounds__(STEP_WARPS * 32, 4)
    mamba3_step_stream_kernel(Mamba3Tensors t, const int32_t *slot_of) {
    extern __shared__ float sm[];
    const Mamba3Shape s = t.s;
    const int64_t L = s.seqlen, H = s.heads, G = s.heads_qk, P = s.headdim, N = s.dstate, S = s.angles;
    const int64_t n = blockIdx.x / H, h = blockIdx.x % H, g = h / (H / G);
    int64_t r, t0, t1;  // the sequence's row and its one step t0
    mamba3_sequence(&t, n, &r, &t0, &t1);
    const int64_t bl = r * L + t0, hl = (r * H + h) * L + t0;
    IO *y_out = (IO *)t.y + (bl * H + h) * P;  // (p,) this step's y of the head
    const int64_t slot = slot_of ? slot_of[n] : n;
    if (slot < 0) {  // a pool's padding entry: y zeros, no state
        if (threadIdx.x < ROWS_PER_BLOCK)
            for (int64_t p = (int64_t)blockIdx.y * ROWS_PER_BLOCK + threadIdx.x; p < P; p += (int64_t)gridDim.y * ROWS_PER_BLOCK)
                y_out[p] = from_float<IO>(0.f);
        return;
    }
    const int64_t o = slot * H + h;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t first = (int64_t)blockIdx.y * ROWS_PER_BLOCK + warp * ROWS_PER_WARP, stride = (int64_t)gridDim.y * ROWS_PER_BLOCK;
    const ST *h_in = t.ssm_state ? (const ST *)t.ssm_state + o * P * N : nullptr;  // (p, N)
    ST *h_out = (ST *)t.final_ssm_state + o * P * N;                                  // (p, N)
    float4 hv[ROWS_PER_WARP];  // the next loads of H, in flight while the block rotates q and k
    if (VEC) load_rows(hv, h_in, first, lane * 4, P, N);

    float *qt = sm, *kt = qt + N, *kp = kt + N, *vp = kp + N, *cs = vp + P, *sn = cs + S;  // (N,) x3, (p,), (S,) x2 fp32
    const float dt = t.dt[hl];
    const bool writer = blockIdx.y == 0;  // the block that writes the head's small states
    /* Every global read of the prologue at once. An old small state is read,
     * and its new value written, by the same thread at the same index, or
     * after the barrier: in place too. */
    for (int64_t i = threadIdx.x; i < S; i += blockDim.x) {
        const float th0 = t.angle_state ? t.angle_state[o * S + i] : 0.f;
        const float th = mamba3_angle_step(th0, t.angles[(bl * H + h) * S + i], dt);
        sincosf(th, &sn[i], &cs[i]);
        if (writer) t.final_angle_state[o * S + i] = th;
    }
    const IO *v_in = (const IO *)t.v + (bl * H + h) * P;  // (p,) this step's v
    for (int64_t i = threadIdx.x; i < P; i += blockDim.x) {
        vp[i] = t.v_state ? t.v_state[o * P + i] : 0.f;
        if (writer) t.final_v_state[o * P + i] = to_float(v_in[i]);
    }
    // (N,) each: the step's q and k of the head's qk head g
    const IO *q_in = (const IO *)t.q + (bl * G + g) * N, *k_in = (const IO *)t.k + (bl * G + g) * N;
    for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
        // q = q + q_bias  (k alike)
        qt[i] = to_float(q_in[i]) + t.q_bias[h * N + i], kt[i] = to_float(k_in[i]) + t.k_bias[h * N + i];
        kp[i] = t.k_state ? t.k_state[o * N + i] : 0.f;
    }
    __syncthreads();
    for (int64_t i = threadIdx.x; i < S; i += blockDim.x) {
        // q = apply_rotary_emb(q, Angle_State)  (k alike): pair (2i, 2i+1) turned by θ_i
        const float c = cs[i], e = sn[i], q0 = qt[2 * i], q1 = qt[2 * i + 1], k0 = kt[2 * i], k1 = kt[2 * i + 1];
        qt[2 * i] = q0 * c - q1 * e, qt[2 * i + 1] = q0 * e + q1 * c;
        kt[2 * i] = k0 * c - k1 * e, kt[2 * i + 1] = k0 * e + k1 * c;
    }
    __syncthreads();
    for (int64_t i = threadIdx.x; writer && i < N; i += blockDim.x) t.final_k_state[o * N + i] = kt[i];

    // Trap = torch.sigmoid(Trap);  alpha = torch.exp(ADT)
    const float lambda = 1.f / (1.f + __expf(-t.trap[hl])), alpha = __expf(t.adt[hl]);
    const float before = (1.f - lambda) * dt * alpha, now = lambda * dt;
    for (int64_t p0 = first; p0 < P; p0 += stride) {
        float acc[ROWS_PER_WARP], vt[ROWS_PER_WARP], vb[ROWS_PER_WARP];
#pragma unroll
        for (int k = 0; k < ROWS_PER_WARP; k++) {
            const int64_t p = p0 + k;
            acc[k] = 0.f;
            vt[k] = p < P ? to_float(v_in[p]) : 0.f;
            vb[k] = p < P ? vp[p] : 0.f;
        }
        if (VEC) {
            for (int64_t c = lane * 4; c < N; c += 128) {
                float4 x4[ROWS_PER_WARP];
#pragma unroll
                for (int k = 0; k < ROWS_PER_WARP; k++) x4[k] = hv[k];
                // the next columns, or the next pass's first: in flight while these are computed
                const bool last = c + 128 >= N;
                if (!last || p0 + stride < P) load_rows(hv, h_in, last ? p0 + stride : p0, last ? lane * 4 : c + 128, P, N);
                const float4 q4 = *reinterpret_cast<const float4 *>(qt + c), k4 = *reinterpret_cast<const float4 *>(kt + c),
                             b4 = *reinterpret_cast<const float4 *>(kp + c);
#pragma unroll
                for (int k = 0; k < ROWS_PER_WARP; k++) {
                    if (p0 + k >= P) continue;
                    // ssm_state = ssm_state * alpha + (1 - trap) * dt * alpha * v_prev k_prev^T + trap * dt * v k^T
                    float4 x = x4[k];
                    x.x = alpha * x.x + before * vb[k] * b4.x + now * vt[k] * k4.x;
                    x.y = alpha * x.y + before * vb[k] * b4.y + now * vt[k] * k4.y;
                    x.z = alpha * x.z + before * vb[k] * b4.z + now * vt[k] * k4.z;
                    x.w = alpha * x.w + before * vb[k] * b4.w + now * vt[k] * k4.w;
                    // out = ssm_state @ q
                    acc[k] += x.x * q4.x + x.y * q4.y + x.z * q4.z + x.w * q4.w;
                    store_state4(h_out + (p0 + k) * N + c, x);
                }
            }
        } else {
            for (int64_t c = lane; c < N; c += 32)
#pragma unroll
                for (int k = 0; k < ROWS_PER_WARP; k++) {
                    if (p0 + k >= P) continue;
                    const float hv1 = h_in ? to_float(h_in[(p0 + k) * N + c]) : 0.f;
                    const float x = alpha * hv1 + before * vb[k] * kp[c] + now * vt[k] * kt[c];
                    acc[k] += x * qt[c];
                    h_out[(p0 + k) * N + c] = from_float<ST>(x);
                }
        }
#pragma unroll
        for (int k = 0; k < ROWS_PER_WARP; k++) {
#pragma unroll
            for (int off = 16; off > 0; off /= 2) acc[k] += __shfl_xor_sync(0xffffffffu, acc[k], off);
            const int64_t p = p0 + k;
            if (lane != 0 || p >= P) continue;
            float y = acc[k];
            // out = out + D * v
            if (t.D) y += t.D[h] * vt[k];
            // out = out * z * torch.sigmoid(z)
            if (t.z) {
                const float z = to_float(((const IO *)t.z)[(bl * H + h) * P + p]);
                y *= z / (1.f + __expf(-z));
            }
            y_out[p] = from_float<IO>(y);
        }
    }
}

static size_t step_smem(const Mamba3Shape *s) { return (size_t)(3 * s->dstate + s->headdim + 2 * s->angles) * sizeof(float); }

extern "C" const char *mamba3_step_stream_unsupported(const Mamba3Shape *s) {
    if (s->seqlen != 1) return "one token a sequence (the decode step): L must be 1";
    const int64_t n = s->nseq ? s->nseq : s->batch;
    if (n * s->heads > INT_MAX) return "more than 2^31 - 1 (sequence, head) blocks";
    if ((s->headdim + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK > 65535) return "more than 65,535 blocks of 16 rows a head";
    if (step_smem(s) > 48 * 1024) return "q̃, k̃, the last key and value over 48 KiB of shared memory";
    return NULL;
}

/* Blocks a head: one where the heads alone make several blocks an SM (the
 * block's prologue, the rotation of q and k, is then paid once a head), else
 * as many as it takes to come near that, up to one per 16 rows; one where a
 * small state is stepped in place. */
static unsigned blocks_per_head(const Mamba3Tensors *t, int64_t heads) {
    if (t->angle_state == t->final_angle_state || t->k_state == t->final_k_state || t->v_state == t->final_v_state)
        return 1;
    static int sms = 0;  // the device's SMs, asked once
    if (sms == 0) {
        int device;
        cuda_check(cudaGetDevice(&device));
        cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    }
    const int64_t want = 8 * (int64_t)sms, most = (t->s.headdim + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
    const int64_t split = (want + heads - 1) / heads;
    return (unsigned)(split < most ? split : most);
}

/* A grid of (sequence, head) x blocks_per_head. */
template <typename IO, typename ST>
static void launch_step(const Mamba3Tensors *t, const int32_t *slot_of) {
    const Mamba3Shape *s = &t->s;
    const int64_t n = s->nseq ? s->nseq : s->batch;
    const dim3 grid((unsigned)(n * s->heads), blocks_per_head(t, n * s->heads));
    if (s->dstate % 128 == 0) mamba3_step_stream_kernel<IO, ST, true><<<grid, STEP_WARPS * 32, step_smem(s)>>>(*t, slot_of);
    else mamba3_step_stream_kernel<IO, ST, false><<<grid, STEP_WARPS * 32, step_smem(s)>>>(*t, slot_of);
    cuda_check_launch();
}

/* A pool stepped in place: handed separate final states, the pool is copied
 * there first (slots no entry names keep their states) and stepped there. */
template <typename IO, typename ST>
static void launch_pool(const Mamba3Pool *pool) {
    Mamba3Tensors t = pool->t;
    const int64_t SH = pool->slots * t.s.heads, P = t.s.headdim, N = t.s.dstate, S = t.s.angles;
    const struct { const void *from; void *to; size_t bytes; } states[] = {
        {t.angle_state, t.final_angle_state, (size_t)(SH * S) * sizeof(float)},
        {t.ssm_state, t.final_ssm_state, (size_t)(SH * P * N) * sizeof(ST)},
        {t.k_state, t.final_k_state, (size_t)(SH * N) * sizeof(float)},
        {t.v_state, t.final_v_state, (size_t)(SH * P) * sizeof(float)},
    };
    for (const auto &st : states)
        if (st.from != st.to) cuda_check(cudaMemcpyAsync(st.to, st.from, st.bytes, cudaMemcpyDeviceToDevice, 0));
    t.angle_state = t.final_angle_state, t.ssm_state = t.final_ssm_state;
    t.k_state = t.final_k_state, t.v_state = t.final_v_state;
    launch_step<IO, ST>(&t, pool->state_batch_indices);
}

extern "C" void mamba3_step_stream(const Mamba3Tensors *t, void *workspace) {
    (void)workspace;
    launch_step<float, float>(t, nullptr);
}
extern "C" void mamba3_step_stream_pool(const Mamba3Pool *pool, void *workspace) {
    (void)workspace;
    launch_pool<float, float>(pool);
}
extern "C" void mamba3_step_state16(const Mamba3Tensors *t, void *workspace) {
    (void)workspace;
    launch_step<__half, __half>(t, nullptr);
}
extern "C" void mamba3_step_state16_pool(const Mamba3Pool *pool, void *workspace) {
    (void)workspace;
    launch_pool<__half, __half>(pool);
}
extern "C" void mamba3_step_state_bf16(const Mamba3Tensors *t, void *workspace) {
    (void)workspace;
    launch_step<__nv_bfloat16, __nv_bfloat16>(t, nullptr);
}
extern "C" void mamba3_step_state_bf16_pool(const Mamba3Pool *pool, void *workspace) {
    (void)workspace;
    launch_pool<__nv_bfloat16, __nv_bfloat16>(pool);
}
