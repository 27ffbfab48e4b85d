/* Hopper's warpgroup matrix product (wgmma, sm_90a only) for fp16 or bf16
 * operands (T = __half or __nv_bfloat16) and fp32 accumulators, and the shared-memory tile layout it reads.
 *
 * A warpgroup is four consecutive warps (128 threads, the first warp's index
 * a multiple of 4). One wgmma.mma_async m64n64k16 multiplies a 64 x 16 tile A
 * by a 16 x 64 tile B into a 64 x 64 fp32 accumulator spread over the
 * warpgroup: warp w of the group holds rows 16w..16w+15, in the layout of
 * mma.sync's m16n8 accumulator repeated over the eight n8 column blocks,
 * d[4c + e] = (row lane/4 + 8·(e/2), column 8c + 2·(lane%4) + e%2).
 * A comes from shared memory (a descriptor) or from registers (the m16k16
 * fragment of mma.sync, per warp); B always from shared memory. The product
 * runs asynchronously: issue, commit the group, wait for it before reading
 * the accumulators (or changing the A registers).
 *
 * The tile layout (the 128-byte swizzle): a tile of R rows of 64 fp16 (128
 * bytes a row) stored row after row, its base 1024-byte aligned; the 16-byte
 * chunk c of row r sits at chunk position c ^ (r % 8). Eight rows (1024 bytes)
 * form one swizzle atom. Wider rows are cut into slabs of 64 columns, one
 * such tile each. The same bytes serve as
 *   K-major (rows are M or N, the 64 columns are K): a k-step of 16 starts
 *     32 bytes further along the row;
 *   MN-major (rows are K, the 64 columns are N): a k-step of 16 starts 16
 *     rows (2048 bytes) further down.
 * Both descriptor strides are set to the atom, 1024 bytes: the step between
 * 8-row groups, the only one these 64-column tiles use. */
#ifndef WGMMA_SM90_CUH
#define WGMMA_SM90_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

#include "tma_sm90.cuh"  // fence_async_smem

/* Byte address of fp16 element (r, col) in a 128-byte-swizzled slab, col < 64. */
static __host__ __device__ __forceinline__ uint32_t sw128_offset(int r, int col) {
    return (uint32_t)(r * 128 + ((((col >> 3) ^ r) & 7) << 4) + (col & 7) * 2);
}

/* The shared-memory matrix descriptor of a 128-byte-swizzled tile starting at
 * shared address `addr`: start address, leading and stride byte offsets (both
 * 1024, in units of 16 bytes), swizzle mode 1 (128 bytes) in bits 62-63. */
static __device__ __forceinline__ uint64_t sw128_desc(uint32_t addr) {
    return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)(1024 >> 4) << 16 | (uint64_t)(1024 >> 4) << 32 |
           (uint64_t)1 << 62;
}

/* sw128_desc in two steps, for tiles at fixed offsets from one base: the
 * low word of the descriptor of the tile at `addr`, and the descriptor of a
 * low word. The tile `bytes` on (a multiple of 16) has the low word
 * sw128_desc_lo(addr) + bytes / 16, one add: shared addresses stay under
 * 2^18, so the 14-bit address field never carries. */
static __device__ __forceinline__ uint32_t sw128_desc_lo(uint32_t addr) {
    return ((addr & 0x3FFFF) >> 4) | (uint32_t)(1024 >> 4) << 16;
}
static __device__ __forceinline__ uint64_t sw128_desc_of(uint32_t lo) {
    return (uint64_t)((1024 >> 4) | 1u << 30) << 32 | lo;
}

#define WGMMA_D32                                                                                              \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
    "%23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define WGMMA_D32_OPERANDS(d)                                                                                    \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),  \
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), \
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])

#define WGMMA_D16 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define WGMMA_D16_OPERANDS(d)                                                                                    \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])

#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || !defined(__CUDA_ARCH__)
static __device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
static __device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
/* Wait until at most `pending` committed groups are still running. */
template <int pending>
static __device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(pending) : "memory");
}
/* A warpgroup gives back registers (to `regs` a thread) or takes more from
 * the SM's pool (waiting until they are free): warp specialization lets a
 * warpgroup that only issues copies run on few, and one that holds tiles of
 * accumulators on many. Every thread of the warpgroup executes it. */
template <int regs>
static __device__ __forceinline__ void warpgroup_regs_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(regs));
}
template <int regs>
static __device__ __forceinline__ void warpgroup_regs_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(regs));
}
/* Keeps the compiler from moving reads or writes of an accumulator across a
 * wgmma issue or wait (the asm statements do not name them otherwise). */
template <int n>
static __device__ __forceinline__ void wgmma_touch(float (&d)[n]) {
#pragma unroll
    for (int i = 0; i < n; i++) asm volatile("" : "+f"(d[i])::"memory");
}

/* Four 8x8 fp16 matrices from registers to shared memory, each transposed on
 * the way: r[m] holds matrix m in the m16n8 accumulator layout (row lane/4,
 * columns 2·(lane%4) and +1), lane l gives the address of stored row l % 8
 * of matrix l / 8 (16 bytes, a column of the matrix as held). */
static __device__ __forceinline__ void stsm_x4_trans(uint32_t addr, const uint32_t (&r)[4]) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r[0]),
                 "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
}

/* The same without the transpose: matrix m is stored as held, lane l giving
 * the address of its row l % 8 (16 bytes). */
static __device__ __forceinline__ void stsm_x4(uint32_t addr, const uint32_t (&r)[4]) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r[0]), "r"(r[1]),
                 "r"(r[2]), "r"(r[3])
                 : "memory");
}

/* d (64x64 fp32) = A·B + (accumulate ? d : 0), A a K-major tile of T in
 * shared memory (descriptor a; TRANS_A 1: MN-major, its rows the k), B one
 * too (TRANS_B 0) or MN-major (TRANS_B 1). */
template <typename T, int TRANS_B = 0, int TRANS_A = 0>
static __device__ __forceinline__ void wgmma_64x64_ss(float (&d)[32], uint64_t a, uint64_t b, int accumulate) {
    if constexpr (std::is_same<T, __nv_bfloat16>::value)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " WGMMA_D32 ", %32, %33, p, 1, 1, %36, %35;\n}"
                     : WGMMA_D32_OPERANDS(d)
                     : "l"(a), "l"(b), "r"(accumulate), "n"(TRANS_B), "n"(TRANS_A));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " WGMMA_D32 ", %32, %33, p, 1, 1, %36, %35;\n}"
                     : WGMMA_D32_OPERANDS(d)
                     : "l"(a), "l"(b), "r"(accumulate), "n"(TRANS_B), "n"(TRANS_A));
}

/* The same for a 64x32 product: d (64x32 fp32, 16 values a thread, the
 * first four column blocks of the 64x64 layout), B 32 rows of N (TRANS_B 1:
 * 32 columns of N, which may start 64 bytes into a swizzled row). */
template <typename T, int TRANS_B = 0, int TRANS_A = 0>
static __device__ __forceinline__ void wgmma_64x32_ss(float (&d)[16], uint64_t a, uint64_t b, int accumulate) {
    if constexpr (std::is_same<T, __nv_bfloat16>::value)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 " WGMMA_D16 ", %16, %17, p, 1, 1, %20, %19;\n}"
                     : WGMMA_D16_OPERANDS(d)
                     : "l"(a), "l"(b), "r"(accumulate), "n"(TRANS_B), "n"(TRANS_A));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 " WGMMA_D16 ", %16, %17, p, 1, 1, %20, %19;\n}"
                     : WGMMA_D16_OPERANDS(d)
                     : "l"(a), "l"(b), "r"(accumulate), "n"(TRANS_B), "n"(TRANS_A));
}

/* d (64x64 fp32) = A·B + (accumulate ? d : 0), A from registers (this
 * warp's m16k16 fragment), B in shared memory, K-major (TRANS_B 0) or
 * MN-major (TRANS_B 1). */
template <typename T, int TRANS_B>
static __device__ __forceinline__ void wgmma_64x64_rs(float (&d)[32], const uint32_t (&a)[4], uint64_t b,
                                                      int accumulate) {
    if constexpr (std::is_same<T, __nv_bfloat16>::value)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " WGMMA_D32
                     ", {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}"
                     : WGMMA_D32_OPERANDS(d)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate), "n"(TRANS_B));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " WGMMA_D32
                     ", {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}"
                     : WGMMA_D32_OPERANDS(d)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate), "n"(TRANS_B));
}
#else
/* Built for another target: the kernels that call these never run there
 * (their launchers refuse), and the calls trap. */
static __device__ __forceinline__ void wgmma_fence() { __trap(); }
static __device__ __forceinline__ void wgmma_commit() { __trap(); }
template <int pending>
static __device__ __forceinline__ void wgmma_wait() { __trap(); }
template <int n>
static __device__ __forceinline__ void wgmma_touch(float (&)[n]) {}
template <int regs>
static __device__ __forceinline__ void warpgroup_regs_dec() { __trap(); }
template <int regs>
static __device__ __forceinline__ void warpgroup_regs_inc() { __trap(); }
static __device__ __forceinline__ void stsm_x4_trans(uint32_t, const uint32_t (&)[4]) { __trap(); }
static __device__ __forceinline__ void stsm_x4(uint32_t, const uint32_t (&)[4]) { __trap(); }
template <typename T, int TRANS_B = 0, int TRANS_A = 0>
static __device__ __forceinline__ void wgmma_64x64_ss(float (&)[32], uint64_t, uint64_t, int) { __trap(); }
template <typename T, int TRANS_B = 0, int TRANS_A = 0>
static __device__ __forceinline__ void wgmma_64x32_ss(float (&)[16], uint64_t, uint64_t, int) { __trap(); }
template <typename T, int TRANS_B>
static __device__ __forceinline__ void wgmma_64x64_rs(float (&)[32], const uint32_t (&)[4], uint64_t, int) {
    __trap();
}
#endif

#endif
