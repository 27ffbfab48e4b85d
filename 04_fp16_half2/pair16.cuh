/* The two 16-bit storage formats of u, delta, z, B, C and y (fp16, bf16) as
 * a trait, so that one kernel template serves both (04's versions 5 and 7, 8 and 9):
 * a pair of values as one 32-bit register, widened to and narrowed from
 * fp32, where all arithmetic happens. */
#ifndef PAIR16_CUH
#define PAIR16_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "scan.h"

/* Two values of format F as one 32-bit pair (__half2, __nv_bfloat162), to
 * and from two floats. */
template <typename F>
struct Pair;
template <>
struct Pair<__half> {
    using type = __half2;
    static __device__ __forceinline__ float2 widen(__half2 v) { return __half22float2(v); }
    static __device__ __forceinline__ __half2 narrow(float a, float b) { return __floats2half2_rn(a, b); }
    static __device__ __forceinline__ __half narrow1(float a) { return __float2half_rn(a); }
};
template <>
struct Pair<__nv_bfloat16> {
    using type = __nv_bfloat162;
    static __device__ __forceinline__ float2 widen(__nv_bfloat162 v) { return __bfloat1622float2(v); }
    static __device__ __forceinline__ __nv_bfloat162 narrow(float a, float b) { return __floats2bfloat162_rn(a, b); }
    static __device__ __forceinline__ __nv_bfloat16 narrow1(float a) { return __float2bfloat16_rn(a); }
};

/* 8 steps of a 16-bit row can move as one 16-byte access when L % 8 == 0 and
 * every (..., L) tensor starts on 16 bytes (then every row does). */
static inline bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }
static inline bool rows16_aligned(const ScanTensors *t) {
    return t->s.seqlen % 8 == 0 && aligned16(t->u) && aligned16(t->delta) && aligned16(t->B) && aligned16(t->C) &&
           aligned16(t->y) && (t->z == NULL || aligned16(t->z));
}

#endif
