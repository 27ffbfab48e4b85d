/* 00_ssm_basics: a diagonal state-space model in continuous time, its exact
 * solutions, its discretizations, and its two discrete views (recurrence and
 * convolution). Everything is fp64 on the CPU. */
#ifndef SSM_BASICS_CPU_H
#define SSM_BASICS_CPU_H

#include <stdint.h>

#include "op_scan.h"

/* A diagonal continuous-time SSM with N modes, started at rest:
 *   x_n'(t) = a_n x_n(t) + b_n u(t),   y(t) = sum_n c_n x_n(t),   x(0) = 0 */
typedef struct {
    int N;
    const double *a, *b, *c;   // (N,) fp64 each
} DiagSsm;

/* ---- exact solutions of the continuous model ---- */

/* y(t) when u is held at levels[j] on [j*width, (j+1)*width). */
double ssm_exact_held(const DiagSsm *m, const double *levels, double width, double t);
/* y(t) when u(t) = sin(omega*t). */
double ssm_exact_sine(const DiagSsm *m, double omega, double t);

/* ---- the discretized model ---- */

/* Discretize every mode with `rule` at step dt and take K steps:
 *   x_k = abar*x_{k-1} + bbar*u[k],  y[k] = c·x_k
 * Step k covers [k*dt, (k+1)*dt], so y[k] approximates y((k+1)*dt). */
void ssm_run_discrete(const DiagSsm *m, DiscRule rule, double dt, const double *u, int64_t K,
                      double *y);

/* ---- LTI: one (abar, bbar) for every step ---- */

/* h_t = abar*h_{t-1} + bbar*u_t, y_t = C·h_t, h_{-1} = 0.
 * abar, bbar, C: (N,) fp64; u, y: (L,) fp64. */
void lti_recurrence(int N, const double *abar, const double *bbar, const double *C,
                    const double *u, int64_t L, double *y);
/* K_k = sum_n C_n * abar_n^k * bbar_n for k = 0..L-1; K: (L,) fp64. */
void lti_kernel(int N, const double *abar, const double *bbar, const double *C, int64_t L,
                double *K);
/* y_t = sum_{k=0..t} K_k * u_{t-k}; K, u, y: (L,) fp64. */
void causal_conv(const double *K, const double *u, int64_t L, double *y);

/* ---- selective: (abar_t, bbar_t, C_t) change with t ---- */

/* h_t = abar_t*h_{t-1} + bbar_t*u_t, y_t = C_t·h_t.
 * abar, bbar, C: (L, N) fp64; u, y: (L,) fp64. */
void selective_recurrence(int N, int64_t L, const double *abar, const double *bbar,
                          const double *C, const double *u, double *y);
/* K[t*L + s] = sum_n C_t[n] * (prod_{r=s+1..t} abar_r[n]) * bbar_s[n] for s <= t,
 * 0 for s > t. abar, bbar, C: (L, N) fp64; K: (L, L) fp64. */
void selective_kernel_matrix(int N, int64_t L, const double *abar, const double *bbar,
                             const double *C, double *K);
/* y_t = sum_{s=0..t} K[t*L + s] * u_s; K: (L, L), u, y: (L,) fp64. */
void kernel_matrix_apply(const double *K, const double *u, int64_t L, double *y);

#endif
