/* Hopper's bulk tensor copies (TMA, cp.async.bulk.tensor, sm_90) and the
 * shared-memory barrier they complete on.
 *
 * A tensor map, built once on the host, describes a tensor in device memory
 * (its element type, up to five sizes and the byte strides between them) and
 * the box one copy moves. One thread then moves a whole box between device
 * and shared memory with one instruction: no per-element addresses, no
 * registers, rows past the tensor's end filled with zeros on the way in and
 * dropped on the way out. With the 128-byte swizzle the box lands in shared
 * memory in exactly the layout wgmma reads (wgmma_sm90.cuh): rows of 128
 * bytes, the 16-byte chunk c of row r at c ^ (r % 8), the destination
 * 1024-byte aligned.
 *
 * A load completes on an mbarrier in shared memory: the issuing thread tells
 * the barrier how many bytes to expect, the copy engine counts them in as
 * they land, and the barrier's phase flips when all have arrived; any thread
 * waiting on that phase may then read the box. A store is read from shared
 * memory asynchronously: the issuing thread waits for its bulk group before
 * that memory is written again or the block exits. */
#ifndef TMA_SM90_CUH
#define TMA_SM90_CUH

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_check.h"
#include "mma_sm80.cuh"  // smem_addr

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
/* The barrier expects `count` arrivals a phase; its initialisation is made
 * visible to the copy engine before any copy names it. */
static __device__ __forceinline__ void mbar_init(uint64_t *bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
/* One arrival, and `bytes` more to come from copies before the phase ends. */
static __device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
                 : "memory");
}
/* `bytes` more to come from copies before the phase ends, no arrival. */
static __device__ __forceinline__ void mbar_expect_tx(uint64_t *bar, uint32_t bytes) {
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
/* One arrival, nothing more expected. */
static __device__ __forceinline__ void mbar_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}
/* Until the phase of parity `phase` has completed. */
static __device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t phase) {
    asm volatile(
        "{\n.reg .pred done;\n"
        "wait_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra wait_%=;\n}" ::"r"(smem_addr(bar)),
        "r"(phase)
        : "memory");
}
/* `bytes` (a multiple of 16) of device memory at src into shared memory at
 * dst, both 16-byte aligned: a bulk copy without a tensor map. */
static __device__ __forceinline__ void bulk_load(void *dst, const void *src, uint32_t bytes, uint64_t *bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(smem_addr(bar))
                 : "memory");
}
/* Shared memory written by ordinary stores (or cp.async) is read by wgmma
 * and by bulk stores through the async proxy: each writing thread fences
 * before the barrier after which they are issued. */
static __device__ __forceinline__ void fence_async_smem() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
/* `bytes` (a multiple of 16) of shared memory at src into device memory at
 * dst, both 16-byte aligned: a bulk store without a tensor map, closed as
 * its own bulk group (tma_store_wait waits for it). */
static __device__ __forceinline__ void bulk_store(void *dst, const void *src, uint32_t bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(smem_addr(src)),
                 "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
/* The box at coordinates (c0 innermost, .., c3) of `map` into shared memory at dst. */
static __device__ __forceinline__ void tma_load_4d(void *dst, const CUtensorMap *map, uint64_t *bar, int c0, int c1,
                                                   int c2, int c3) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
        "%5}], [%6];" ::"r"(smem_addr(dst)),
        "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(smem_addr(bar))
        : "memory");
}
/* Shared memory at src into the box at (c0, .., c3) of `map`; then close the
 * bulk group and wait until the copy has read src. */
static __device__ __forceinline__ void tma_store_4d_wait(const CUtensorMap *map, const void *src, int c0, int c1,
                                                         int c2, int c3) {
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];" ::"l"(map),
                 "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(smem_addr(src))
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
/* The same without the wait: the store runs on while the thread goes on. */
static __device__ __forceinline__ void tma_store_4d(const CUtensorMap *map, const void *src, int c0, int c1, int c2,
                                                    int c3) {
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];" ::"l"(map),
                 "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(smem_addr(src))
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
/* Until this thread's stores have read their shared memory (READ), or have
 * also written device memory (before the block exits). */
template <bool READ>
static __device__ __forceinline__ void tma_store_wait() {
    if (READ) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    else asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
#else
/* Built for another target: the kernels that call these never run there. */
static __device__ __forceinline__ void mbar_init(uint64_t *, int) { __trap(); }
static __device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t *, uint32_t) { __trap(); }
static __device__ __forceinline__ void mbar_arrive(uint64_t *) { __trap(); }
static __device__ __forceinline__ void mbar_expect_tx(uint64_t *, uint32_t) { __trap(); }
static __device__ __forceinline__ void mbar_wait(uint64_t *, uint32_t) { __trap(); }
static __device__ __forceinline__ void bulk_load(void *, const void *, uint32_t, uint64_t *) { __trap(); }
static __device__ __forceinline__ void fence_async_smem() { __trap(); }
static __device__ __forceinline__ void bulk_store(void *, const void *, uint32_t) { __trap(); }
static __device__ __forceinline__ void tma_load_4d(void *, const CUtensorMap *, uint64_t *, int, int, int, int) {
    __trap();
}
static __device__ __forceinline__ void tma_store_4d_wait(const CUtensorMap *, const void *, int, int, int, int) {
    __trap();
}
static __device__ __forceinline__ void tma_store_4d(const CUtensorMap *, const void *, int, int, int, int) { __trap(); }
template <bool READ>
static __device__ __forceinline__ void tma_store_wait() { __trap(); }
#endif

/* A tensor map of a 4-d tensor of `type` elements: sizes dims[0]
 * (innermost, contiguous) .. dims[3], byte strides of dims 1..3 (each a
 * multiple of 16), boxes of box[0..3] elements landing in shared memory with
 * `swizzle` (the 128-byte swizzle wants box[0] · element size = 128 bytes;
 * none, rows of any multiple of 16 bytes, dense), elements outside the tensor
 * read as zero. The driver's encoder is reached through the runtime, so
 * nothing links libcuda. */
static inline CUtensorMap tma_map_4d(const void *base, CUtensorMapDataType type, CUtensorMapSwizzle swizzle,
                                     const uint64_t dims[4], const uint64_t strides[3], const uint32_t box[4]) {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    if (!encode) {
        void *fn = NULL;
        cudaDriverEntryPointQueryResult found;
        cuda_check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || !fn) {
            fprintf(stderr, "the CUDA driver has no cuTensorMapEncodeTiled (bulk tensor copies need CUDA 12)\n");
            exit(1);
        }
        encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    }
    CUtensorMap map;
    const cuuint32_t unit[4] = {1, 1, 1, 1};
    const CUresult r = encode(&map, type, 4, (void *)base, dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "cuTensorMapEncodeTiled failed (CUresult %d) for a tensor of %llu x %llu x %llu x %llu\n",
                (int)r, (unsigned long long)dims[0], (unsigned long long)dims[1], (unsigned long long)dims[2],
                (unsigned long long)dims[3]);
        exit(1);
    }
    return map;
}

/* The same for 16-bit elements (fp16 or bf16) with the 128-byte swizzle:
 * box[0] · 2 = 128 bytes, the layout wgmma reads. */
static inline CUtensorMap tma_map_16bit_4d(const void *base, bool bf16, const uint64_t dims[4],
                                           const uint64_t strides[3], const uint32_t box[4]) {
    return tma_map_4d(base, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                      CU_TENSOR_MAP_SWIZZLE_128B, dims, strides, box);
}

#endif
