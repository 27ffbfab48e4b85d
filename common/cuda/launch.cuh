/* Small helpers that the kernels' launchers (and some kernels) share: a
 * rounded-up division, the next power of two, a workspace piece's size
 * rounded to 256 bytes and its place in a workspace laid out piece by piece,
 * the most shared memory a block may opt in to, the opt-in to more than
 * 48 KiB of dynamic shared memory, and the GPU's SM count. */
#ifndef LAUNCH_CUH
#define LAUNCH_CUH

#include <stddef.h>
#include <stdint.h>

#include "cuda_check.h"

static __host__ __device__ __forceinline__ int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Bytes rounded up to 256: each piece of a workspace starts aligned. */
static __host__ __device__ __forceinline__ size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

/* The byte offset of a workspace piece of n elements of elem bytes, placed
 * at *at; *at moves past it, rounded up to 256 bytes (n 0: it takes no room). */
static inline size_t take_piece(size_t *at, int64_t n, size_t elem) {
    const size_t start = *at;
    *at += align256(elem * (size_t)n);
    return start;
}

static inline int pow2_at_least(int64_t x) {
    int p = 1;
    while (p < x) p *= 2;
    return p;
}

/* SMs of the device in use (asked once: a program uses one device). */
static inline int sm_count(void) {
    static int count = 0;
    if (count == 0) {
        int dev = 0;
        cuda_check(cudaGetDevice(&dev));
        cuda_check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev));
    }
    return count;
}

/* The most dynamic shared memory a block may opt in to on the device in use
 * (sm_90's 227 KiB where no device answers: a version's unsupported() is
 * asked on machines without one too). */
static inline size_t smem_optin_bytes(void) {
    int dev = 0, optin = 227 * 1024;
    if (cudaGetDevice(&dev) == cudaSuccess)
        cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    else
        (void)cudaGetLastError();
    return (size_t)optin;
}

/* Opt a kernel in to more than 48 KiB of dynamic shared memory (once per size). */
template <typename Kernel>
static void allow_smem(Kernel kernel, size_t bytes, size_t *allowed) {
    if (bytes > 48 * 1024 && bytes > *allowed) {
        cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
        *allowed = bytes;
    }
}

#endif
