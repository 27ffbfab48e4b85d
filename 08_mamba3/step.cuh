/* 08_mamba3, versions 7-12: what the decode step's kernels share. A block
 * (or several) steps one (sequence, head) by one token; per head:
 *   θ' = (θ + π·tanh(angles)·dt) mod 2π,   q̃ = R(θ')(q + q_bias),  k̃ = R(θ')(k + k_bias)
 *   H'[p] = α H[p] + (1 - λ) dt α v_prev[p] k̃_prev + λ dt v[p] k̃,   y[p] = H'[p]·q̃ + D v[p]
 * then y ·= silu(z); k̃, v and θ' are the new k, v and angle states.
 * IO: q, k, v, z, y (float, __half, __nv_bfloat16); ST: H (the same set);
 * arithmetic in fp32. */
#ifndef MAMBA3_STEP_CUH
#define MAMBA3_STEP_CUH

#include <stdint.h>

#include "cuda_check.h"
#include "launch.cuh"
#include "mamba2_io.cuh"
#include "mamba3.h"

/* Where a block's (sequence, head) lives. */
struct StepHead {
    int64_t h, g;   // the head, its qk head
    int64_t bl;     // b·L + t of its token (q, k, v, z, y, angles)
    int64_t hl;     // (b·h + h)·L + t (adt, dt, trap)
    int64_t o;      // its state's slot·h + h; -1: a pool's padding entry (no state)
};

/* The (sequence, head) of grid row `item` (sequence-major); slot_of: (b,)
 * int32, a pool's slot of each sequence, NULL: state n is sequence n's. */
static __device__ __forceinline__ StepHead step_head(const Mamba3Tensors &t, const int32_t *slot_of, int64_t item) {
    const Mamba3Shape &s = t.s;
    const int64_t n = item / s.heads;
    StepHead a;
    a.h = item % s.heads;
    a.g = a.h / (s.heads / s.heads_qk);
    int64_t r, t0, t1;  // the sequence's row and its one step t0
    mamba3_sequence(&t, n, &r, &t0, &t1);
    a.bl = r * s.seqlen + t0;
    a.hl = (r * s.heads + a.h) * s.seqlen + t0;
    const int64_t slot = slot_of ? slot_of[n] : n;
    a.o = slot < 0 ? -1 : slot * s.heads + a.h;
    return a;
}

/* The prologue's shared memory: q̃, k̃ and the last key (N,) each, the last
 * v (p,), cos and sin of the angles (S,) each, fp32. */
static inline size_t step_prologue_bytes(const Mamba3Shape *s) {
    return (size_t)(3 * s->dstate + s->headdim + 2 * s->angles) * sizeof(float);
}

/* Every thread of the block: the head's q̃, k̃ (rotated), last key and last
 * v into sm (step_prologue_bytes); the writer block also writes the new
 * angle, k and v states. Every global read is issued at once; an old small
 * state is read, and its new value written, by the same thread at the same
 * index, or after the barrier: in place too. The shared memory is complete
 * at its last barrier; only the writer's store of k̃ follows it. */
template <typename IO>
static __device__ void step_prologue(const Mamba3Tensors &t, const StepHead &a, bool writer, float *sm) {
    const int64_t H = t.s.heads, G = t.s.heads_qk, P = t.s.headdim, N = t.s.dstate, S = t.s.angles, o = a.o, h = a.h;
    float *qt = sm, *kt = qt + N, *kp = kt + N, *vp = kp + N, *cs = vp + P, *sn = cs + S;
    const float dt = t.dt[a.hl];
    const IO *v_in = (const IO *)t.v + (a.bl * H + h) * P;  // (p,) this step's v
    // (N,) each: the step's q and k of the head's qk head g
    const IO *q_in = (const IO *)t.q + (a.bl * G + a.g) * N, *k_in = (const IO *)t.k + (a.bl * G + a.g) * N;
    const int64_t span = N > P ? (N > S ? N : S) : (P > S ? P : S);
    for (int64_t i = threadIdx.x; i < span; i += blockDim.x) {
        float q = 0.f, k = 0.f, kprev = 0.f, v = 0.f, vprev = 0.f, th0 = 0.f, ang = 0.f;  // every load first
        if (i < N) {
            // q = q + q_bias  (k alike)
            q = to_float(q_in[i]) + t.q_bias[h * N + i], k = to_float(k_in[i]) + t.k_bias[h * N + i];
            kprev = t.k_state ? t.k_state[o * N + i] : 0.f;
        }
        if (i < P) v = to_float(v_in[i]), vprev = t.v_state ? t.v_state[o * P + i] : 0.f;
        if (i < S) th0 = t.angle_state ? t.angle_state[o * S + i] : 0.f, ang = t.angles[(a.bl * H + h) * S + i];
        if (i < N) qt[i] = q, kt[i] = k, kp[i] = kprev;
        if (i < P) {
            vp[i] = vprev;
            if (writer) t.final_v_state[o * P + i] = v;
        }
        if (i < S) {
            const float th = mamba3_angle_step(th0, ang, dt);
            sincosf(th, &sn[i], &cs[i]);
            if (writer) t.final_angle_state[o * S + i] = th;
        }
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
}

/* The token's weights of the state and of its two rank-1 terms. */
struct StepWeights {
    float alpha, before, now;  // α, (1 - λ) dt α, λ dt
};
static __device__ __forceinline__ StepWeights step_weights(const Mamba3Tensors &t, const StepHead &a) {
    // Trap = torch.sigmoid(Trap);  alpha = torch.exp(ADT)
    const float dt = t.dt[a.hl], lambda = 1.f / (1.f + __expf(-t.trap[a.hl])), alpha = __expf(t.adt[a.hl]);
    return StepWeights{alpha, (1.f - lambda) * dt * alpha, lambda * dt};
}

/* Four values of a row of H stepped: x ·= α, plus vb·before·k̃_prev and
 * vt·now·k̃; returns their part of y, x·q̃. */
static __device__ __forceinline__ float step4(float4 &x, const float *qt, const float *kt, const float *kp, int64_t c,
                                              const StepWeights &w, float vb, float vt) {
    const float4 q4 = *reinterpret_cast<const float4 *>(qt + c), k4 = *reinterpret_cast<const float4 *>(kt + c),
                 b4 = *reinterpret_cast<const float4 *>(kp + c);
    const float pb = w.before * vb, pn = w.now * vt;
    // ssm_state = ssm_state * alpha + (1 - trap) * dt * alpha * v_prev k_prev^T + trap * dt * v k^T
    x.x = w.alpha * x.x + pb * b4.x + pn * k4.x;
    x.y = w.alpha * x.y + pb * b4.y + pn * k4.y;
    x.z = w.alpha * x.z + pb * b4.z + pn * k4.z;
    x.w = w.alpha * x.w + pb * b4.w + pn * k4.w;
    // out = ssm_state @ q
    return x.x * q4.x + x.y * q4.y + x.z * q4.z + x.w * q4.w;
}

/* y[p] from a warp's partial sums of row p (every lane calls; lane 0 writes). */
template <typename IO>
static __device__ __forceinline__ void step_write_y(const Mamba3Tensors &t, const StepHead &a, int64_t p, float acc,
                                                    float vt) {
#pragma unroll
    for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (threadIdx.x % 32 != 0 || p >= t.s.headdim) return;
    const int64_t at = (a.bl * t.s.heads + a.h) * t.s.headdim + p;  // y, z of row p
    // out = out + D * v
    if (t.D) acc += t.D[a.h] * vt;
    // out = out * z * torch.sigmoid(z)
    if (t.z) {
        const float z = to_float(((const IO *)t.z)[at]);
        acc *= z / (1.f + __expf(-z));
    }
    ((IO *)t.y)[at] = from_float<IO>(acc);
}

/* A pool's padding entry: rows first, first + stride, ... of its y zeros (one thread a row). */
template <typename IO>
static __device__ __forceinline__ void step_padding_y(const Mamba3Tensors &t, const StepHead &a, int64_t first,
                                                      int64_t stride) {
    IO *y = (IO *)t.y + (a.bl * t.s.heads + a.h) * t.s.headdim;  // (p,)
    for (int64_t p = first; p < t.s.headdim; p += stride) y[p] = from_float<IO>(0.f);
}

/* Four consecutive values of H (ST) as fp32 and back, in registers: a 16-byte
 * (fp32) or 8-byte (16-bit) vector. */
template <typename ST>
struct Vec4;
template <>
struct Vec4<float> {
    using raw = float4;
    static __device__ __forceinline__ float4 widen(float4 v) { return v; }
    static __device__ __forceinline__ float4 narrow(float4 x) { return x; }
};
template <typename F>
struct Vec4 {
    using raw = uint2;
    static __device__ __forceinline__ float4 widen(uint2 u) {
        const F *v = reinterpret_cast<const F *>(&u);
        return make_float4(to_float(v[0]), to_float(v[1]), to_float(v[2]), to_float(v[3]));
    }
    static __device__ __forceinline__ uint2 narrow(float4 x) {
        uint2 u;
        F *v = reinterpret_cast<F *>(&u);
        v[0] = from_float<F>(x.x), v[1] = from_float<F>(x.y), v[2] = from_float<F>(x.z), v[3] = from_float<F>(x.w);
        return u;
    }
};

/* Blocks a head, at most ceil(p / unit): one where the heads alone make
 * eight blocks an SM (the block's prologue, the rotation of q and k, is then
 * paid once a head), else as many as it takes to come near that; one where a
 * small state is stepped in place (every block of a head reads the old θ and
 * k̃ that the head's writer replaces), as in a pool. */
static unsigned blocks_per_head(const Mamba3Tensors *t, int64_t heads, int64_t unit) {
    if (t->angle_state == t->final_angle_state || t->k_state == t->final_k_state || t->v_state == t->final_v_state)
        return 1;
    const int64_t want = 8 * (int64_t)sm_count(), most = (t->s.headdim + unit - 1) / unit;
    const int64_t split = (want + heads - 1) / heads;
    return (unsigned)(split < most ? split : most);
}

/* A pool stepped in place: handed separate final states, the pool is copied
 * there first (slots no entry names keep their states), and the returned
 * tensors step it there. */
template <typename ST>
static Mamba3Tensors pool_in_place(const Mamba3Pool *pool) {
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
    return t;
}

#endif
