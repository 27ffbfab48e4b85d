/* 00_ssm_basics: the continuous model solved exactly, the discrete model
 * stepped, and the discrete model written as a convolution. Plain loops in
 * fp64; each function is the formula above it. */
#include "cpu.h"

#include <math.h>
#include <stdlib.h>

#include "args.h"

/* ---- exact solutions ----
 * Variation of constants for one mode, x(0) = 0:
 *   x_n(t) = b_n * integral_0^t exp(a_n (t - s)) u(s) ds                    */

/* With u held at u_j on [s0, s1]:
 *   integral_{s0}^{s1} exp(a (t - s)) ds = exp(a (t - s1)) * (exp(a (s1 - s0)) - 1) / a
 * (expm1 keeps the short pieces free of cancellation; the limit at a = 0 is s1 - s0). */
static double held_piece(double a, double t, double s0, double s1) {
    if (a == 0.0) return s1 - s0;
    return exp(a * (t - s1)) * expm1(a * (s1 - s0)) / a;
}

double ssm_exact_held(const DiagSsm *m, const double *levels, double width, double t) {
    double y = 0.0;
    for (int n = 0; n < m->N; n++) {
        double x = 0.0;
        for (int64_t j = 0; j * width < t; j++) {
            double s0 = j * width, s1 = fmin((j + 1) * width, t);
            // x_n(t) = b_n * sum_j u_j * integral over piece j
            x += m->b[n] * levels[j] * held_piece(m->a[n], t, s0, s1);
        }
        // y(t) = sum_n c_n x_n(t)
        y += m->c[n] * x;
    }
    return y;
}

/* With u(s) = sin(w s):
 *   x_n(t) = b_n * (w exp(a t) - a sin(w t) - w cos(w t)) / (a^2 + w^2)
 * (the particular solution (-a sin - w cos)/(a^2 + w^2) plus the free decay
 * w exp(a t)/(a^2 + w^2) that makes x(0) = 0). */
double ssm_exact_sine(const DiagSsm *m, double omega, double t) {
    double y = 0.0;
    for (int n = 0; n < m->N; n++) {
        double a = m->a[n], w = omega;
        double x = m->b[n] * (w * exp(a * t) - a * sin(w * t) - w * cos(w * t)) / (a * a + w * w);
        y += m->c[n] * x;
    }
    return y;
}

/* ---- the discretized model ---- */

void ssm_run_discrete(const DiagSsm *m, DiscRule rule, double dt, const double *u, int64_t K,
                      double *y) {
    for (int64_t k = 0; k < K; k++) y[k] = 0.0;
    for (int n = 0; n < m->N; n++) {
        double abar, bbar;
        // ZOH:     abar = exp(dt a), bbar = (exp(dt a) - 1)/a * b
        // Euler-B: abar = exp(dt a), bbar = dt b
        // Euler:   abar = 1 + dt a,  bbar = dt b
        oracle_discretize(rule, m->a[n], m->b[n], dt, &abar, &bbar);
        double x = 0.0;
        for (int64_t k = 0; k < K; k++) {
            // x = deltaA[:, :, i] * x + deltaB_u[:, :, i]   (selective_scan_ref)
            x = abar * x + bbar * u[k];
            y[k] += m->c[n] * x;
        }
    }
}

/* A zeroed state of N doubles; exit 2 when it does not fit. */
static double *new_state(int N) {
    double *h = calloc((size_t)N, sizeof(double));
    if (!h) die_usage("cannot allocate a state of %zu bytes", (size_t)N * sizeof(double));
    return h;
}

/* ---- LTI ---- */

void lti_recurrence(int N, const double *abar, const double *bbar, const double *C,
                    const double *u, int64_t L, double *y) {
    double *h = new_state(N);   // (N,) fp64, the state, h_{-1} = 0
    for (int64_t t = 0; t < L; t++) {
        double yt = 0.0;
        for (int n = 0; n < N; n++) {
            // h_t = abar * h_{t-1} + bbar * u_t
            h[n] = abar[n] * h[n] + bbar[n] * u[t];
            // y_t = C · h_t
            yt += C[n] * h[n];
        }
        y[t] = yt;
    }
    free(h);
}

/* Unrolling the recurrence from h_{-1} = 0:
 *   h_t = sum_{s=0..t} abar^(t-s) * bbar * u_s
 *   y_t = sum_{s=0..t} (C · abar^(t-s) · bbar) * u_s = sum_k K_k u_{t-k} */
void lti_kernel(int N, const double *abar, const double *bbar, const double *C, int64_t L,
                double *K) {
    for (int64_t k = 0; k < L; k++) {
        double Kk = 0.0;
        // K_k = C · abar^k · bbar
        for (int n = 0; n < N; n++) Kk += C[n] * pow(abar[n], (double)k) * bbar[n];
        K[k] = Kk;
    }
}

void causal_conv(const double *K, const double *u, int64_t L, double *y) {
    for (int64_t t = 0; t < L; t++) {
        double yt = 0.0;
        // y_t = sum_{k=0..t} K_k u_{t-k}
        for (int64_t k = 0; k <= t; k++) yt += K[k] * u[t - k];
        y[t] = yt;
    }
}

/* ---- selective ---- */

void selective_recurrence(int N, int64_t L, const double *abar, const double *bbar,
                          const double *C, const double *u, double *y) {
    double *h = new_state(N);   // (N,) fp64, the state, h_{-1} = 0
    for (int64_t t = 0; t < L; t++) {
        double yt = 0.0;
        for (int n = 0; n < N; n++) {
            // x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
            h[n] = abar[t * N + n] * h[n] + bbar[t * N + n] * u[t];
            // y = torch.einsum('bdn,bn->bd', x, C[:, :, i])
            yt += C[t * N + n] * h[n];
        }
        y[t] = yt;
    }
    free(h);
}

/* Unrolling the selective recurrence:
 *   h_t = sum_{s=0..t} (prod_{r=s+1..t} abar_r) * bbar_s * u_s
 *   y_t = sum_{s=0..t} K_{t,s} u_s,  K_{t,s} = C_t · (prod_{r=s+1..t} abar_r) · bbar_s
 * The product runs over the steps between s and t, so K_{t,s} depends on
 * both ends, not on t - s alone: there is no single kernel to convolve with. */
void selective_kernel_matrix(int N, int64_t L, const double *abar, const double *bbar,
                             const double *C, double *K) {
    for (int64_t i = 0; i < L * L; i++) K[i] = 0.0;
    for (int64_t t = 0; t < L; t++) {
        for (int n = 0; n < N; n++) {
            double decay = 1.0;   // prod_{r=s+1..t} abar_r[n], empty at s = t
            for (int64_t s = t; s >= 0; s--) {
                K[t * L + s] += C[t * N + n] * decay * bbar[s * N + n];
                decay *= abar[s * N + n];
            }
        }
    }
}

void kernel_matrix_apply(const double *K, const double *u, int64_t L, double *y) {
    for (int64_t t = 0; t < L; t++) {
        double yt = 0.0;
        // y_t = sum_{s=0..t} K_{t,s} u_s
        for (int64_t s = 0; s <= t; s++) yt += K[t * L + s] * u[s];
        y[t] = yt;
    }
}
