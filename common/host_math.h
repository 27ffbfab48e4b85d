/* Scalar pieces the C forms of chapters 05-07 share, in fp64 (and fp32
 * where a C version computes as the GPU does). */
#ifndef HOST_MATH_H
#define HOST_MATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* F.softplus with its threshold 20, as the official kernels take it:
 *   dt = tl.where(dt <= 20.0, softplus(dt), dt) */
static inline double softplus_thresholded(double v) { return v <= 20.0 ? log1p(exp(v)) : v; }
/* The same in fp32, as the kernels compute it. */
static inline float softplus_f32(float v) { return v <= 20.0f ? log1pf(expf(v)) : v; }

/* silu(z) = z·sigmoid(z); for very negative z, exp(-z) = inf gives 0. */
static inline double silu_f64(double z) { return z / (1.0 + exp(-z)); }

/* Δ of one step from its dt, as the official _chunk_cumsum_fwd_kernel computes it:
 *   dt += dt_bias[:, None]
 *   dt = tl.where(dt <= 20.0, softplus(dt), dt)   (with dt_softplus) */
static inline double delta_f64(double dt, double bias, bool softplus) {
    dt += bias;
    return softplus ? softplus_thresholded(dt) : dt;
}

/* One output from the scan's sum acc: acc + x·D, then times silu(z), in
 * fp32; D and z point at the element's D and z, NULL without. */
static inline float gated_f64(double acc, double x, const float *D, const float *z) {
    if (D) acc += x * (double)*D;
    if (z) acc *= silu_f64(*z);
    return (float)acc;
}

/* Σ_n a[n]·b[n] over n < N, fp32 vectors summed in fp64. */
static inline double dot_f64(const float *a, const float *b, int64_t N) {
    double sum = 0.0;
    for (int64_t n = 0; n < N; n++) sum += (double)a[n] * (double)b[n];
    return sum;
}

#endif
