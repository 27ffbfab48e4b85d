/* The two 16-bit storage formats (F: __half, __nv_bfloat16) as a trait, so
 * that one kernel template serves both: a pair of values as one 32-bit
 * register (Pair<F>::type: __half2, __nv_bfloat162), widened to and narrowed
 * from fp32, where all arithmetic happens (04's scans, 05's SSD, 07's 16-bit
 * state), and one value to and from its 16 bits. */
#ifndef PAIR16_CUH
#define PAIR16_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

template <typename F>
struct Pair;
template <>
struct Pair<__half> {
    using type = __half2;
    static __device__ __forceinline__ float2 widen(__half2 v) { return __half22float2(v); }
    static __device__ __forceinline__ float lo(__half2 v) { return __low2float(v); }
    static __device__ __forceinline__ float hi(__half2 v) { return __high2float(v); }
    static __device__ __forceinline__ __half2 narrow(float a, float b) { return __floats2half2_rn(a, b); }
    static __device__ __forceinline__ __half narrow1(float a) { return __float2half_rn(a); }
    static __device__ __forceinline__ __half from_bits(unsigned short b) { return __ushort_as_half(b); }
    static __device__ __forceinline__ unsigned short bits(__half v) { return __half_as_ushort(v); }
};
template <>
struct Pair<__nv_bfloat16> {
    using type = __nv_bfloat162;
    static __device__ __forceinline__ float2 widen(__nv_bfloat162 v) { return __bfloat1622float2(v); }
    static __device__ __forceinline__ float lo(__nv_bfloat162 v) { return __low2float(v); }
    static __device__ __forceinline__ float hi(__nv_bfloat162 v) { return __high2float(v); }
    static __device__ __forceinline__ __nv_bfloat162 narrow(float a, float b) { return __floats2bfloat162_rn(a, b); }
    static __device__ __forceinline__ __nv_bfloat16 narrow1(float a) { return __float2bfloat16_rn(a); }
    static __device__ __forceinline__ __nv_bfloat16 from_bits(unsigned short b) { return __ushort_as_bfloat16(b); }
    static __device__ __forceinline__ unsigned short bits(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }
};

#endif
