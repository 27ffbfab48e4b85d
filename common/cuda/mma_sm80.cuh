/* Tensor-core and asynchronous-copy pieces the fused kernels of 05, 06 and
 * 08 share: ldmatrix, the m16n8k16 fp16 and bf16 mma with fp32 accumulation
 * (sm_80 on), 16-byte cp.async, the release/acquire flag that hands a chunk's state
 * to the next block, an inclusive prefix sum over a block, and the loader of
 * fp16 tiles into shared memory. */
#ifndef MMA_SM80_CUH
#define MMA_SM80_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "pair16.cuh"

/* Inclusive prefix sum over the block (blockDim.x a multiple of 32): each warp
 * scans by shuffles, then adds the totals of the warps before it. */
static __device__ float block_inclusive_sum(float v) {
    __shared__ float warp_total[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (int off = 1; off < 32; off *= 2) {
        const float u = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off) v += u;
    }
    if (lane == 31) warp_total[warp] = v;
    __syncthreads();
    for (int w = 0; w < warp; w++) v += warp_total[w];
    return v;
}

static __device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* Named barrier `id` (1-15; 0 is __syncthreads') for THREADS threads of the
 * block, a multiple of 32: the warps that share a piece of work meet there
 * while the block's other warps run on. */
template <int THREADS>
static __device__ __forceinline__ void named_barrier_sync(int id) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "n"(THREADS) : "memory");
}

/* Four 8x8 fp16 matrices; thread t gives the row address of matrix t / 8. */
static __device__ __forceinline__ void ldsm_x4(uint32_t r[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
/* The same, each matrix transposed on the way (K-major rows to an operand). */
static __device__ __forceinline__ void ldsm_x4_trans(uint32_t r[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

/* d (16x8 fp32) += a (16x16 fp16, row) * b (16x8 fp16, col). */
static __device__ __forceinline__ void mma_16816(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* The same with bf16 operands. */
static __device__ __forceinline__ void mma_16816_bf16(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* mma_16816 on operands of F (__half or __nv_bfloat16), for kernels templated on it. */
template <typename F>
static __device__ __forceinline__ void mma_16816_of(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1);
template <>
__device__ __forceinline__ void mma_16816_of<__half>(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
    mma_16816(d, a, b0, b1);
}
template <>
__device__ __forceinline__ void mma_16816_of<__nv_bfloat16>(float d[4], const uint32_t a[4], uint32_t b0,
                                                             uint32_t b1) {
    mma_16816_bf16(d, a, b0, b1);
}

static __device__ __forceinline__ uint32_t pack_half2(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
}
/* Two floats as one register of two F values (an mma operand). */
template <typename F>
static __device__ __forceinline__ uint32_t pack_pair(float lo, float hi) {
    typename Pair<F>::type h = Pair<F>::narrow(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
}

/* The chunk-to-chunk handshake: a gpu-scope release store after the block's
 * writes, an acquire load before the next block reads them. */
static __device__ __forceinline__ void store_release(int *p, int v) {
    asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
static __device__ __forceinline__ int load_acquire(const int *p) {
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* The line holding p brought into L2 (no register written, nothing to wait for). */
static __device__ __forceinline__ void prefetch_l2(const void *p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

static __device__ __forceinline__ void cp_async16(void *smem, const void *gmem) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(smem)), "l"(gmem));
}

static __device__ __forceinline__ void store_out(__half *p, float v) { *p = __float2half_rn(v); }
static __device__ __forceinline__ void store_pair(__half *p, float v0, float v1) {
    *reinterpret_cast<__half2 *>(p) = __floats2half2_rn(v0, v1);
}
static __device__ __forceinline__ void store_out(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }
static __device__ __forceinline__ void store_pair(__nv_bfloat16 *p, float v0, float v1) {
    *reinterpret_cast<__nv_bfloat162 *>(p) = __floats2bfloat162_rn(v0, v1);
}

/* Rows [0, rows) of a (rows x cols) 16-bit (F) tile into shared memory with row
 * pitch `pitch`: rows [from, to) are copied, row r from src + (r - from) *
 * stride, the others and the columns past `cols` are zero. Rows whose length
 * is a multiple of 8 go by 16-byte cp.async, the block's threads dealt over
 * (row, 8-column group) pairs; GROUPS, the groups per row, is a compile-time
 * constant where the caller knows it (0: cols_padded / 8 at run time). */
template <int GROUPS, typename F = __half>
static __device__ void load_tile(F *dst, int pitch, const F *src, int64_t stride, int from, int to, int rows,
                                 int cols, int cols_padded, bool vec16) {
    if (vec16) {
        const int groups = GROUPS ? GROUPS : cols_padded / 8;
        for (int i = threadIdx.x; i < rows * groups; i += blockDim.x) {
            const int r = i / groups, c = (i % groups) * 8;
            F *d = dst + r * pitch + c;
            if (r >= from && r < to && c < cols) cp_async16(d, src + (r - from) * stride + c);
            else *reinterpret_cast<uint4 *>(d) = make_uint4(0, 0, 0, 0);
        }
    } else {
        for (int i = threadIdx.x; i < rows * cols_padded; i += blockDim.x) {
            const int r = i / cols_padded, c = i % cols_padded;
            dst[r * pitch + c] = r >= from && r < to && c < cols ? src[(r - from) * stride + c] : Pair<F>::narrow1(0.f);
        }
    }
}

#endif
