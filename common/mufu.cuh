/* The special-function unit (MUFU) from CUDA C: one instruction each, the
 * approximations every fused kernel uses (03, 04). */
#ifndef MUFU_CUH
#define MUFU_CUH

#define LOG2E_F 1.4426950408889634f
#define LN2_F 0.6931471805599453f

/* 2^x: one MUFU.EX2, relative error about 2^-22. */
static __device__ __forceinline__ float exp2_approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/* log2(x): one MUFU.LG2, absolute error about 2^-22. */
static __device__ __forceinline__ float lg2_approx(float x) {
    float y;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/* 1/x: one MUFU.RCP; 1/inf = 0. */
static __device__ __forceinline__ float rcp_approx(float x) {
    float y;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

#endif
