/* The dense wgmma rate: every warpgroup issues m64n256k16 products back to
 * back, A (64 x 16) and B (16 x 256) read from shared memory through matrix
 * descriptors, fp32 accumulators in registers, one full wave of blocks.
 *
 * m64n256k16 is the largest product one wgmma issues (2·64·256·16 =
 * 524,288 FLOPs): per FLOP it reads the least shared memory, so the tensor
 * pipe, not the operand reads, sets the time. A block is one warpgroup
 * holding a 64 x 64 tile of A and a 256 x 64 tile of B (K-major, the
 * 128-byte swizzle of wgmma_sm90.cuh); a group of kGroup wgmmas walks the
 * tiles' four k-steps of 16 kGroup / 4 times, all into one accumulator.
 * Products of one shape into the same accumulator are ordered by the
 * hardware, so one group is issued while the previous one still runs
 * (wait_group 1), and the pipe never drains between groups.
 *
 * The operands are small pseudo-random values, not zeros: the tensor cores
 * draw more power on varied bits, and a probe on zeros would time a clock a
 * real product never runs at. The sums are stored, so nothing is dropped.
 *
 * sm_90a code only: the Makefile builds this file with
 * -gencode=arch=compute_90a,code=sm_90a and WGMMA_PROBE_SM90A where
 * CUDA_ARCH is sm_90; for any other target only the launcher is built, and
 * it returns 0. */
#include "wgmma_probe.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <algorithm>
#include <type_traits>

#include "cuda_check.h"
#include "wgmma_sm90.cuh"  // sw128_desc, wgmma_fence / commit / wait / touch, fence_async_smem

#ifdef WGMMA_PROBE_SM90A
constexpr int kProbeThreads = 128;  // one warpgroup a block
constexpr int kTileM = 64, kTileN = 256, kTileK = 64;  // A 64 x 64, B 256 x 64: one 128-byte slab each
constexpr int kGroup = 16;          // wgmmas a commit group: the 4 k-steps of the slabs, 4 times
constexpr int kIters = 1024;        // groups a warpgroup: a few ms a launch at the peak
constexpr double kWgmmaFlops = 2.0 * 64 * 256 * 16;

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* The 128 fp32 accumulators of a 64 x 256 product, %0 to %127. */
#define WGMMA_D128                                                                                   \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, " \
    "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "  \
    "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, "  \
    "%59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, "  \
    "%78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, "  \
    "%97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, "    \
    "%113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"
#define WGMMA_F4(d, i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define WGMMA_F32(d, i)                                                                        \
    WGMMA_F4(d, i), WGMMA_F4(d, i + 4), WGMMA_F4(d, i + 8), WGMMA_F4(d, i + 12), WGMMA_F4(d, i + 16), \
        WGMMA_F4(d, i + 20), WGMMA_F4(d, i + 24), WGMMA_F4(d, i + 28)
#define WGMMA_D128_OPERANDS(d) WGMMA_F32(d, 0), WGMMA_F32(d, 32), WGMMA_F32(d, 64), WGMMA_F32(d, 96)

/* d (64 x 256 fp32) += A·B, A and B K-major tiles of T in shared memory
 * (descriptors a, b), neither transposed, scales 1. */
template <typename T>
static __device__ __forceinline__ void wgmma_64x256_ss(float (&d)[128], uint64_t a, uint64_t b) {
    if constexpr (std::is_same<T, __nv_bfloat16>::value)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " WGMMA_D128 ", %128, %129, p, 1, 1, 0, 0;\n}"
                     : WGMMA_D128_OPERANDS(d)
                     : "l"(a), "l"(b), "r"(1));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " WGMMA_D128 ", %128, %129, p, 1, 1, 0, 0;\n}"
                     : WGMMA_D128_OPERANDS(d)
                     : "l"(a), "l"(b), "r"(1));
}

/* A pseudo-random value in (-1/8, 1/8) for element i of block blk. */
template <typename T>
static __device__ __forceinline__ T probe_value(uint32_t i, uint32_t blk) {
    uint32_t h = (i + 0x9E3779B9u * (blk + 1)) * 2654435761u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    float v = ((float)(h & 0xFFFF) - 32767.5f) * (1.0f / 262144.0f);
    if constexpr (std::is_same<T, __nv_bfloat16>::value) return __float2bfloat16(v);
    else return __float2half(v);
}
#endif

template <typename T>
__global__ void __launch_bounds__(kProbeThreads) probe_wgmma(float *out, int iters) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(1024) T a_tile[kTileM * kTileK];
    __shared__ __align__(1024) T b_tile[kTileN * kTileK];
    for (int i = threadIdx.x; i < kTileM * kTileK; i += kProbeThreads) a_tile[i] = probe_value<T>(i, blockIdx.x);
    for (int i = threadIdx.x; i < kTileN * kTileK; i += kProbeThreads)
        b_tile[i] = probe_value<T>(i + kTileM * kTileK, blockIdx.x);
    fence_async_smem();  // the stores above, seen by wgmma's reads
    __syncthreads();

    /* k-step s of 16 starts 32 bytes further along every row of both slabs. */
    const uint32_t a_addr = (uint32_t)__cvta_generic_to_shared(a_tile);
    const uint32_t b_addr = (uint32_t)__cvta_generic_to_shared(b_tile);
    uint64_t a_desc[kTileK / 16], b_desc[kTileK / 16];
#pragma unroll
    for (int s = 0; s < kTileK / 16; s++) {
        a_desc[s] = sw128_desc(a_addr + 32 * s);
        b_desc[s] = sw128_desc(b_addr + 32 * s);
    }

    float d[128];
#pragma unroll
    for (int i = 0; i < 128; i++) d[i] = 0.0f;
    for (int it = 0; it < iters; it++) {
        wgmma_fence();
#pragma unroll
        for (int g = 0; g < kGroup; g++) wgmma_64x256_ss<T>(d, a_desc[g % 4], b_desc[g % 4]);
        wgmma_commit();
        wgmma_wait<1>();
    }
    wgmma_wait<0>();
    wgmma_touch(d);

    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < 128; i++) sum += d[i];
    out[(size_t)blockIdx.x * kProbeThreads + threadIdx.x] = sum;
#else
    (void)out;
    (void)iters;
#endif
}

struct WgmmaProbe { float *out; int blocks, iters; bool bf16; };

static void launch_wgmma(void *ctx) {
    WgmmaProbe *p = (WgmmaProbe *)ctx;
    if (p->bf16) probe_wgmma<__nv_bfloat16><<<p->blocks, kProbeThreads>>>(p->out, p->iters);
    else probe_wgmma<__half><<<p->blocks, kProbeThreads>>>(p->out, p->iters);
    cuda_check_launch();
}

extern "C" double wgmma_probe_tflops(int bf16, ProbeTimer time_ms) {
    cudaDeviceProp prop;
    cuda_check(cudaGetDeviceProperties(&prop, 0));
    if (prop.major != 9 || prop.minor != 0) return 0.0;  // sm_90a code runs on 9.0 alone
    /* One full wave: as many blocks as fit on every SM at once. */
    int per_sm = 0;
    if (bf16)
        cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, probe_wgmma<__nv_bfloat16>, kProbeThreads, 0));
    else
        cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, probe_wgmma<__half>, kProbeThreads, 0));
    WgmmaProbe p = {NULL, prop.multiProcessorCount * std::max(per_sm, 1), kIters, bf16 != 0};
    cuda_check(cudaMalloc(&p.out, (size_t)p.blocks * kProbeThreads * sizeof(float)));
    double flops = (double)p.blocks * p.iters * kGroup * kWgmmaFlops;
    double ms = time_ms(launch_wgmma, &p);
    cuda_check(cudaFree(p.out));
    return flops / (ms * 1e-3) / 1e12;
}
#else
/* Built without sm_90a code: no wgmma to probe. */
extern "C" double wgmma_probe_tflops(int bf16, ProbeTimer time_ms) {
    (void)bf16;
    (void)time_ms;
    return 0.0;
}
#endif
