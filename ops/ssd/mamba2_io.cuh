/* Device pieces chapters 05 and 07 share (SSD and both decode forms): tensors that are fp32
 * or fp16 by the version's dtype, Δ as the official code forms it, and (launch.cuh) the
 * rounding-up division of grid sizes. */
#ifndef MAMBA2_IO_CUH
#define MAMBA2_IO_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "launch.cuh"

/* x, dt, z, B, C, y are float, __half or __nv_bfloat16; arithmetic is fp32. */
static __device__ __forceinline__ float to_float(float v) { return v; }
static __device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
static __device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T>
static __device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

/* Δ from dt, as the official code forms it: _chunk_cumsum_fwd_kernel (SSD)
 * and selective_state_update both add dt_bias, then take F.softplus with
 * threshold 20. (The SSD kernel then clamps Δ to dt_limit, by default
 * [0, inf): a no-op with softplus on, and not part of the recurrence, docs/design.md
 * §2, so not done here.) */
static __device__ __forceinline__ float delta_of(float dt, float bias, bool softplus) {
    // dt = dt + dt_bias
    const float v = dt + bias;
    // dt = tl.where(dt <= 20.0, softplus(dt), dt)        (SSD; softplus(dt) = log1p(exp(dt)))
    // dt = F.softplus(dt) if dt_softplus else dt           (selective_state_update_ref)
    return softplus && v <= 20.f ? log1pf(expf(v)) : v;
}

#endif
