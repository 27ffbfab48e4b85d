/* 03_fused_cuda, GPU: the scalar pieces versions 2-7 share (kernels.cu,
 * tiled.cu). */
#ifndef FUSED_SCALARS_CUH
#define FUSED_SCALARS_CUH

#include "mufu.cuh"

/* Δ from delta, as the official kernel forms it, with libm's expf (versions 2-3).
 * delta_vals[r][i] = float(delta_vals_load[r][i]) + delta_bias[r];
 * delta_vals[r][i] = delta_vals[r][i] <= 20.f ? log1pf(expf(delta_vals[r][i])) : delta_vals[r][i]; */
static __device__ __forceinline__ float dt_libm(float delta, float bias, bool softplus) {
    const float x = delta + bias;
    return softplus ? (x <= 20.f ? log1pf(expf(x)) : x) : x;
}

/* The same with the exp on one MUFU.EX2 (versions 4-6); log1pf stays libm's:
 * its argument e^x can be tiny, where log2(1 + e) on the MUFU loses digits. */
static __device__ __forceinline__ float dt_fast(float delta, float bias, bool softplus) {
    const float x = delta + bias;
    return softplus ? (x <= 20.f ? log1pf(exp2_approx(x * LOG2E_F)) : x) : x;
}

/* z·σ(z): out_vals[r][i] *= z_val / (1 + expf(-z_val)); */
/* (The same on two MUFU operations, EX2 and RCP, is silu_fast in mufu.cuh.) */
static __device__ __forceinline__ float silu_libm(float z) { return z / (1.f + expf(-z)); }

#endif
