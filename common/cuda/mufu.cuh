/* The special-function unit (MUFU) from CUDA C: one instruction each, the
 * approximations every fused kernel uses (03, 04, 07), the gate z·σ(z) on
 * them, and the polynomial log1p that takes softplus off libm. */
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

/* z·σ(z) = z / (1 + e^-z) on two MUFU operations (EX2, RCP):
 * out_vals[r][i] *= z_val / (1 + expf(-z_val)); */
static __device__ __forceinline__ float silu_fast(float z) {
    return z * rcp_approx(1.f + exp2_approx(-z * LOG2E_F));
}

/* The same with e^-z by __expf and an IEEE division (the SSD kernels' y). */
static __device__ __forceinline__ float silu_div(float z) { return z / (1.f + __expf(-z)); }

/* log1p(w) for w in [0, 1] as w·P(w), P the degree-7 minimax fit of
 * log1p(w)/w on [0, 1] (relative error 3.5e-7 in fp32): seven FMAs and a
 * multiply. With w = e^-|x| on the MUFU, softplus(x) = max(x, 0) + log1p(w). */
static __device__ __forceinline__ float log1p_unit(float w) {
    float p = -8.539104834e-03f;
    p = fmaf(p, w, 4.408928007e-02f);
    p = fmaf(p, w, -1.076812521e-01f);
    p = fmaf(p, w, 1.774521172e-01f);
    p = fmaf(p, w, -2.449545413e-01f);
    p = fmaf(p, w, 3.327547908e-01f);
    p = fmaf(p, w, -4.999740422e-01f);
    p = fmaf(p, w, 9.999998212e-01f);
    return w * p;
}

#endif
