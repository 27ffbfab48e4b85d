/* 00_ssm_basics: where the selective scan comes from. A continuous SSM, its
 * exact solution, three ways to discretize it and how fast each converges;
 * the LTI SSM as a convolution; and why an input-dependent step breaks that.
 *   build/00_ssm_basics            every version: tables and check lines
 *   build/00_ssm_basics 2          one version
 *   build/00_ssm_basics --check    check lines only
 *   build/00_ssm_basics --list     the numbered versions */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "check.h"
#include "cpu.h"
#include "op_scan.h"
#include "rng.h"

typedef struct {
    bool tables;     // print the tables (off with --check)
    uint64_t seed;   // --seed, 1234 by default
} Lesson;

static double *new_f64(int64_t n) {
    double *p = calloc((size_t)n, sizeof(double));
    if (!p) die_usage("cannot allocate %lld bytes", (long long)(n * (int64_t)sizeof(double)));
    return p;
}

static double max_abs_diff(const double *x, const double *y, int64_t n) {
    double m = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs(x[i] - y[i]);
        if (!(e <= m)) m = e;   // NaN sticks
    }
    return m;
}

/* Least-squares slope of log2(err) against log2(dt): err ~ C dt^p gives p. */
static double fit_order(const double *dt, const double *err, int n) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double x = log2(dt[i]), y = log2(err[i]);
        sx += x; sy += y; sxx += x * x; sxy += x * y;
    }
    return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

/* Check a measured order against the expected one. */
static void check_order(const char *label, double order, double expected) {
    const double slack = 0.1;
    char detail[96];
    snprintf(detail, sizeof detail, "order %.3f (expect %.0f +- %.1f)", order, expected, slack);
    check_report_bool(label, fabs(order - expected) <= slack, detail);
}

/* The model of versions 1 and 2: four stable modes, x_n' = a_n x_n + b_n u. */
static const double MODE_A[] = {-0.5, -1.0, -2.0, -4.0};
static const double MODE_B[] = {1.0, 0.5, -0.8, 1.5};
static const double MODE_C[] = {0.7, -1.2, 1.0, 0.9};
static const DiagSsm MODEL = {4, MODE_A, MODE_B, MODE_C};

#define T_END 4.0     // simulate t in [0, 4]
#define NGRIDS 8      // dt = 1/8, 1/16, ..., 1/1024
static double grid_dt(int g) { return 1.0 / (double)(8 << g); }

static const DiscRule RULES[3] = {DISC_ZOH, DISC_EULER_B, DISC_EULER};
static const char *RULE_NAMES[3] = {"zoh", "euler_b", "euler"};

/* ---- version 1: held_input ----
 * The continuous model vs three discretizations, u held constant per step: ZOH
 * integrates exactly that input (analytic to rounding); the others are order 1. */
static void held_input(const Lesson *ls) {
    enum { NLEVELS = 16 };
    const double width = T_END / NLEVELS;   // u jumps every 0.25
    double levels[NLEVELS];                 // (16,) fp64, the held values of u
    Rng rng;
    rng_seed(&rng, ls->seed);
    for (int j = 0; j < NLEVELS; j++) levels[j] = rng_range(&rng, -1.0, 1.0);

    double dts[NGRIDS], err[3][NGRIDS];
    CheckResult zoh = {0};
    for (int g = 0; g < NGRIDS; g++) {
        double dt = grid_dt(g);
        int64_t K = (int64_t)(T_END / dt), per_level = (int64_t)(width / dt);
        double *u = new_f64(K);     // (K,) fp64, u on step k
        double *ref = new_f64(K);   // (K,) fp64, analytic y((k+1) dt)
        double *y = new_f64(K);     // (K,) fp64, discrete y_k
        for (int64_t k = 0; k < K; k++) {
            u[k] = levels[k / per_level];
            ref[k] = ssm_exact_held(&MODEL, levels, width, (double)(k + 1) * dt);
        }
        dts[g] = dt;
        for (int r = 0; r < 3; r++) {
            ssm_run_discrete(&MODEL, RULES[r], dt, u, K, y);
            err[r][g] = max_abs_diff(y, ref, K);
            if (RULES[r] == DISC_ZOH) {
                CheckResult c = compare_f64(y, ref, K, TOLERANCES[TOL_EXACT]);
                zoh = g == 0 ? c : check_merge(zoh, c);
            }
        }
        free(u); free(ref); free(y);
    }
    double order_eb = fit_order(dts, err[1], NGRIDS), order_e = fit_order(dts, err[2], NGRIDS);
    if (ls->tables) {
        printf("    max |y_k - y((k+1)dt)| over t in [0, 4], u held on [j/4, (j+1)/4)\n");
        printf("    %-8s %12s %12s %12s\n", "dt", RULE_NAMES[0], RULE_NAMES[1], RULE_NAMES[2]);
        for (int g = 0; g < NGRIDS; g++)
            printf("    1/%-6d %12.3e %12.3e %12.3e\n", 8 << g, err[0][g], err[1][g], err[2][g]);
        printf("    %-8s %12s %12.3f %12.3f\n", "order", "(rounding)", order_eb, order_e);
    }
    check_report("zoh = analytic solution, u held per step", zoh, TOLERANCES[TOL_EXACT]);
    check_order("euler_b converges at order 1 (held u)", order_eb, 1.0);
    check_order("euler converges at order 1 (held u)", order_e, 1.0);
}

/* ---- version 2: smooth_input ----
 * Changed from 1: u is smooth, so holding one sample per step is itself an
 * approximation; it buys the orders a real input gets (order 2 only for ZOH
 * sampled at the step's midpoint). Per step:
 *   integral_0^dt exp(a (dt - s)) u(t_k + s) ds
 *     = u(t_k) (dt + a dt^2/2) + u'(t_k) dt^2/2 + O(dt^3)
 *   zoh:     (dt + a dt^2/2) (u(t_k) + theta dt u')  -> matches at theta = 1/2
 *   euler_b: dt (u(t_k) + theta dt u')              -> misses a dt^2 u/2 always
 *   euler:   abar = 1 + a dt is itself off by a^2 dt^2/2 per step */
static void smooth_input(const Lesson *ls) {
    const double omega = 3.0;              // u(t) = sin(3 t)
    const double theta[2] = {0.0, 0.5};    // sample at the step's start, or its midpoint
    const char *where[2] = {"start", "mid"};
    const double expect[2][3] = {{1, 1, 1}, {2, 1, 1}};   // [theta][rule]

    double dts[NGRIDS], err[2][3][NGRIDS];
    for (int g = 0; g < NGRIDS; g++) {
        double dt = grid_dt(g);
        int64_t K = (int64_t)(T_END / dt);
        double *u = new_f64(K);     // (K,) fp64, the sample held over step k
        double *ref = new_f64(K);   // (K,) fp64, analytic y((k+1) dt)
        double *y = new_f64(K);     // (K,) fp64, discrete y_k
        for (int64_t k = 0; k < K; k++)
            ref[k] = ssm_exact_sine(&MODEL, omega, (double)(k + 1) * dt);
        dts[g] = dt;
        for (int s = 0; s < 2; s++) {
            for (int64_t k = 0; k < K; k++) u[k] = sin(omega * ((double)k + theta[s]) * dt);
            for (int r = 0; r < 3; r++) {
                ssm_run_discrete(&MODEL, RULES[r], dt, u, K, y);
                err[s][r][g] = max_abs_diff(y, ref, K);
            }
        }
        free(u); free(ref); free(y);
    }
    double order[2][3];
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < 3; r++) order[s][r] = fit_order(dts, err[s][r], NGRIDS);
    if (ls->tables) {
        printf("    max |y_k - y((k+1)dt)| over t in [0, 4], u(t) = sin(3t)"
               " sampled at a step's start or mid\n");
        printf("    %-8s", "dt");
        for (int s = 0; s < 2; s++)
            for (int r = 0; r < 3; r++) {
                char col[32];
                snprintf(col, sizeof col, "%s@%s", RULE_NAMES[r], where[s]);
                printf(" %15s", col);
            }
        printf("\n");
        for (int g = 0; g < NGRIDS; g++) {
            printf("    1/%-6d", 8 << g);
            for (int s = 0; s < 2; s++)
                for (int r = 0; r < 3; r++) printf(" %15.3e", err[s][r][g]);
            printf("\n");
        }
        printf("    %-8s", "order");
        for (int s = 0; s < 2; s++)
            for (int r = 0; r < 3; r++) printf(" %15.3f", order[s][r]);
        printf("\n");
    }
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < 3; r++) {
            char label[64];
            snprintf(label, sizeof label, "%s, u sampled at step %s: order %.0f", RULE_NAMES[r],
                     where[s], expect[s][r]);
            check_order(label, order[s][r], expect[s][r]);
        }
}

/* ---- version 3: step_difference ----
 * Changed from 2: one step of one mode instead of a trajectory, to see the
 * official rule's only departure from ZOH. Both share abar = exp(dt a):
 *   zoh:     bbar = (exp(dt a) - 1)/a * b = dt b (1 + a dt/2 + (a dt)^2/6 + ...)
 *   euler_b: bbar = dt b
 * so |bbar_eb - bbar_zoh| / |bbar_zoh| = |x/(exp(x) - 1) - 1| with x = a dt,
 * = |a| dt/2 * (1 + |a| dt/6 + ...) for a < 0. */
/* |bbar_eb - bbar_zoh| / |bbar_zoh| for mode a at step dt; clears *same_abar
 * if the two rules' abar differ in any bit. */
static double bbar_gap(double a, double dt, bool *same_abar) {
    double abar_z, bbar_z, abar_e, bbar_e;
    oracle_discretize(DISC_ZOH, a, 1.0, dt, &abar_z, &bbar_z);
    oracle_discretize(DISC_EULER_B, a, 1.0, dt, &abar_e, &bbar_e);
    if (abar_z != abar_e) *same_abar = false;
    return fabs(bbar_e - bbar_z) / fabs(bbar_z);
}

static void step_difference(const Lesson *ls) {
    enum { NROWS = 11 };   // |a| dt = 1, 1/2, ..., 1/1024
    const double a = -1.0;
    double x[NROWS], gap[NROWS];
    bool same_abar = true, near_half = true;
    if (ls->tables)
        printf("    %-12s %14s %14s %10s\n", "|a|dt", "rel gap bbar", "|a|dt/2", "ratio");
    for (int i = 0; i < NROWS; i++) {
        double dt = ldexp(1.0, -i);
        x[i] = fabs(a) * dt;
        gap[i] = bbar_gap(a, dt, &same_abar);
        double ratio = gap[i] / (x[i] / 2);
        // ratio = 1 + x/6 + O(x^2): allow x/4
        near_half = near_half && fabs(ratio - 1.0) <= x[i] / 4;
        if (ls->tables) printf("    %-12.6g %14.6e %14.6e %10.6f\n", x[i], gap[i], x[i] / 2, ratio);
    }
    double order = fit_order(x, gap, NROWS);
    /* Mamba's init: A_n = -1 .. -16 (S4D real), dt in [dt_min, dt_max] = [0.001, 0.1]. */
    double lo = bbar_gap(-1.0, 0.001, &same_abar), hi = bbar_gap(-16.0, 0.1, &same_abar);
    if (ls->tables) {
        printf("    at Mamba's init (A -1..-16, dt 0.001..0.1, |a|dt 0.001..1.6):"
               " bbar gap %.3g%% .. %.3g%%\n", 100 * lo, 100 * hi);
    }
    check_report_bool("euler_b keeps zoh's abar = exp(dt a)", same_abar,
                      "bit for bit at every row");
    char detail[96];
    snprintf(detail, sizeof detail, "ratio to |a|dt/2 within |a|dt/4 of 1 at %d rows", NROWS);
    check_report_bool("bbar: euler_b vs zoh differ by |a|dt/2 (relative)", near_half, detail);
    check_order("that gap shrinks at order 1", order, 1.0);
}

/* S4D-real, Mamba's init of A:
 *   A_log = torch.log(A) with A = arange(1, d_state + 1);  A = -torch.exp(self.A_log.float()) */
static void s4d_real(double *a, int N) {
    for (int n = 0; n < N; n++) a[n] = -(double)(n + 1);
}

/* ---- version 4: lti_convolution ----
 * Changed from 3: N = 16 modes stepped L times at a fixed dt. (abar, bbar) are
 * the same at every step, so the SSM is linear time-invariant and its
 * recurrence unrolls into a causal convolution with one kernel K. */
static void lti_convolution(const Lesson *ls) {
    enum { N = 16, L = 256 };
    const double dt = 0.05;
    double a[N], B[N], C[N];   // (N,) fp64 each
    Rng rng;
    rng_seed(&rng, ls->seed);
    s4d_real(a, N);
    for (int n = 0; n < N; n++) B[n] = rng_normal(&rng);
    for (int n = 0; n < N; n++) C[n] = rng_normal(&rng);
    double *u = new_f64(L);        // (L,) fp64
    double *y_rec = new_f64(L);    // (L,) fp64, by the recurrence
    double *y_conv = new_f64(L);   // (L,) fp64, by the convolution
    double *K[2] = {new_f64(L), new_f64(L)};   // (L,) fp64, kernel per rule
    for (int t = 0; t < L; t++) u[t] = rng_normal(&rng);

    CheckResult same[2];
    for (int r = 0; r < 2; r++) {   // zoh and euler_b
        double abar[N], bbar[N];    // (N,) fp64 each
        for (int n = 0; n < N; n++) oracle_discretize(RULES[r], a[n], B[n], dt, &abar[n], &bbar[n]);
        lti_recurrence(N, abar, bbar, C, u, L, y_rec);
        lti_kernel(N, abar, bbar, C, L, K[r]);
        causal_conv(K[r], u, L, y_conv);
        same[r] = compare_f64(y_conv, y_rec, L, TOLERANCES[TOL_EXACT]);
    }
    if (ls->tables) {
        const int ks[] = {0, 1, 2, 5, 10, 20, 50, 100, 255};
        printf("    K_k = C Abar^k Bbar, A_n = -(n+1), dt %.2f, N %d, L %d\n", dt, N, L);
        printf("    %-5s %14s %14s\n", "k", RULE_NAMES[0], RULE_NAMES[1]);
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
            printf("    %-5d %14.6e %14.6e\n", ks[i], K[0][ks[i]], K[1][ks[i]]);
    }
    for (int r = 0; r < 2; r++) {
        char label[64];
        snprintf(label, sizeof label, "%s: recurrence = convolution with K", RULE_NAMES[r]);
        check_report(label, same[r], TOLERANCES[TOL_EXACT]);
    }
    free(u); free(y_rec); free(y_conv); free(K[0]); free(K[1]);
}

/* ---- version 5: selective_kernel ----
 * Changed from 4: dt_t = softplus(w u_t + bias) depends on the input, as in
 * Mamba, so abar_t, bbar_t change every step (Euler-B, the official rule). The
 * output is still a sum over past inputs, with a kernel K_{t,s} that depends
 * on both t and s: the convolution is gone and a scan is what remains. */
static void selective_kernel(const Lesson *ls) {
    enum { N = 16, L = 128 };
    const double dt_weight = 1.5, dt_bias = -2.5;
    double a[N];                       // (N,) fp64
    double *u = new_f64(L);            // (L,) fp64
    double *dt = new_f64(L);           // (L,) fp64, dt_t
    double *Bt = new_f64(L * N);       // (L, N) fp64, B_t (random: a projection of x in Mamba)
    double *Ct = new_f64(L * N);       // (L, N) fp64, C_t
    double *abar = new_f64(L * N);     // (L, N) fp64
    double *bbar = new_f64(L * N);     // (L, N) fp64
    double *Cuse = new_f64(L * N);     // (L, N) fp64, the C_t a case uses
    double *K = new_f64(L * L);        // (L, L) fp64, K_{t,s}
    double *Kref = new_f64(L * L);     // (L, L) fp64, Toeplitz K_{t-s}
    double *Klti = new_f64(L);         // (L,) fp64, one LTI kernel
    double *y_rec = new_f64(L);        // (L,) fp64
    double *y_ker = new_f64(L);        // (L,) fp64
    Rng rng;
    rng_seed(&rng, ls->seed);
    s4d_real(a, N);
    double dt_mean = 0, dt_min = INFINITY, dt_max = 0;
    for (int t = 0; t < L; t++) {
        u[t] = rng_normal(&rng);
        // delta = F.softplus(delta)   (delta = dt_proj(x) + delta_bias in Mamba)
        dt[t] = oracle_softplus(dt_weight * u[t] + dt_bias);
        dt_mean += dt[t] / L;
        dt_min = fmin(dt_min, dt[t]);
        dt_max = fmax(dt_max, dt[t]);
    }
    for (int i = 0; i < L * N; i++) Bt[i] = rng_normal(&rng);
    for (int i = 0; i < L * N; i++) Ct[i] = rng_normal(&rng);

    /* Case 1, fully selective: dt_t, B_t and C_t all change with t. */
    for (int t = 0; t < L; t++)
        for (int n = 0; n < N; n++)
            // deltaA = torch.exp(torch.einsum('bdl,dn->bdln', delta, A))
            // deltaB_u = torch.einsum('bdl,bnl,bdl->bdln', delta, B, u)   (B times u later)
            oracle_discretize(DISC_EULER_B, a[n], Bt[t * N + n], dt[t], &abar[t * N + n],
                              &bbar[t * N + n]);
    selective_recurrence(N, L, abar, bbar, Ct, u, y_rec);
    selective_kernel_matrix(N, L, abar, bbar, Ct, K);
    kernel_matrix_apply(K, u, L, y_ker);
    CheckResult selective = compare_f64(y_ker, y_rec, L, TOLERANCES[TOL_EXACT]);

    /* Case 2, only dt_t selective: B_t = B_0, C_t = C_0 for every t. The
     * kernel still changes along each diagonal t - s = k, and the LTI kernel
     * at the mean dt gives a different output. */
    for (int t = 0; t < L; t++)
        for (int n = 0; n < N; n++) {
            oracle_discretize(DISC_EULER_B, a[n], Bt[n], dt[t], &abar[t * N + n], &bbar[t * N + n]);
            Cuse[t * N + n] = Ct[n];
        }
    selective_recurrence(N, L, abar, bbar, Cuse, u, y_rec);
    selective_kernel_matrix(N, L, abar, bbar, Cuse, K);
    double abar0[N], bbar0[N];   // (N,) fp64, the LTI model at the mean dt
    for (int n = 0; n < N; n++)
        oracle_discretize(DISC_EULER_B, a[n], Bt[n], dt_mean, &abar0[n], &bbar0[n]);
    lti_kernel(N, abar0, bbar0, Ct, L, Klti);
    causal_conv(Klti, u, L, y_ker);
    CheckResult lti = compare_f64(y_ker, y_rec, L, TOLERANCES[TOL_EXACT]);
    if (ls->tables) {
        const int lags[] = {0, 1, 4, 16};
        printf("    dt_t = softplus(%.1f u_t %c %.1f): min %.4f  mean %.4f  max %.4f\n", dt_weight,
               dt_bias < 0 ? '-' : '+', fabs(dt_bias), dt_min, dt_mean, dt_max);
        printf("    K_{t,t-k} along a diagonal, only dt selective (B, C fixed):\n");
        printf("    %-5s %14s %14s %16s\n", "k", "min over t", "max over t", "LTI K_k mean dt");
        for (size_t i = 0; i < sizeof lags / sizeof lags[0]; i++) {
            int k = lags[i];
            double lo = INFINITY, hi = -INFINITY;
            for (int t = k; t < L; t++) {
                lo = fmin(lo, K[t * L + t - k]);
                hi = fmax(hi, K[t * L + t - k]);
            }
            printf("    %-5d %14.6e %14.6e %16.6e\n", k, lo, hi, Klti[k]);
        }
        printf("    one LTI kernel (mean dt) instead: rel_l2 error %.3e, max_abs %.3e"
               " (measured, not a check)\n", lti.rel_l2, lti.max_abs);
    }

    /* Case 3, dt_t = mean dt for every t: the kernel matrix must collapse to
     * the Toeplitz matrix of version 4's K_{t-s}. */
    for (int t = 0; t < L; t++)
        for (int n = 0; n < N; n++) {
            abar[t * N + n] = abar0[n];
            bbar[t * N + n] = bbar0[n];
        }
    selective_kernel_matrix(N, L, abar, bbar, Cuse, K);
    for (int t = 0; t < L; t++)
        for (int s = 0; s < L; s++) Kref[t * L + s] = s <= t ? Klti[t - s] : 0.0;
    check_report("selective: recurrence = sum_s K_{t,s} u_s", selective, TOLERANCES[TOL_EXACT]);
    check_report("constant dt: K_{t,s} = K_{t-s} (Toeplitz)",
                 compare_f64(K, Kref, L * L, TOLERANCES[TOL_EXACT]), TOLERANCES[TOL_EXACT]);

    free(u); free(dt); free(Bt); free(Ct); free(abar); free(bbar); free(Cuse);
    free(K); free(Kref); free(Klti); free(y_rec); free(y_ker);
}

/* ---- version 6: trapezoid_rule ----
 * Changed from 2: the input enters at both ends of a step, as Mamba-3's
 * update does (08_mamba3). With samples u_k = u(k dt) at the grid points,
 *   x_k = exp(a dt) x_{k-1} + (1 - lambda) dt exp(a dt) b u_{k-1} + lambda dt b u_k
 * approximates integral_0^dt exp(a (dt - s)) b u(t_{k-1} + s) ds by a
 * weighted sum of its integrand's two ends: lambda = 1 (the right end alone,
 * Mamba-2's rule with the step's own input) and lambda = 0 are order 1;
 * lambda = 1/2, the trapezoid rule, is order 2. Mamba-3 learns lambda per
 * step (lambda_t = sigmoid(trap_t)). */
static void trapezoid_rule(const Lesson *ls) {
    const double omega = 3.0;                       // u(t) = sin(3 t)
    const double lambdas[3] = {1.0, 0.5, 0.0}, expect[3] = {1, 2, 1};
    double dts[NGRIDS], err[3][NGRIDS];
    for (int g = 0; g < NGRIDS; g++) {
        const double dt = grid_dt(g);
        const int64_t K = (int64_t)(T_END / dt);
        dts[g] = dt;
        for (int r = 0; r < 3; r++) {
            double x[4] = {0};   // (N,) fp64, the modes' states; N = MODEL.N = 4
            err[r][g] = 0.0;
            for (int64_t k = 1; k <= K; k++) {
                const double u0 = sin(omega * (double)(k - 1) * dt), u1 = sin(omega * (double)k * dt);
                double y = 0.0;
                for (int n = 0; n < MODEL.N; n++) {
                    const double abar = exp(MODEL.a[n] * dt);
                    x[n] = abar * x[n] + (1.0 - lambdas[r]) * dt * abar * MODEL.b[n] * u0
                           + lambdas[r] * dt * MODEL.b[n] * u1;
                    y += MODEL.c[n] * x[n];
                }
                const double e = fabs(y - ssm_exact_sine(&MODEL, omega, (double)k * dt));
                if (!(e <= err[r][g])) err[r][g] = e;   // NaN sticks
            }
        }
    }
    if (ls->tables) {
        printf("    max |y_k - y(k dt)| over t in [0, 4], u(t) = sin(3t) sampled at the grid points\n");
        printf("    %-8s %14s %14s %14s\n", "dt", "lambda=1", "lambda=1/2", "lambda=0");
        for (int g = 0; g < NGRIDS; g++)
            printf("    1/%-6d %14.3e %14.3e %14.3e\n", 8 << g, err[0][g], err[1][g], err[2][g]);
        printf("    %-8s %14.3f %14.3f %14.3f\n", "order", fit_order(dts, err[0], NGRIDS),
               fit_order(dts, err[1], NGRIDS), fit_order(dts, err[2], NGRIDS));
    }
    for (int r = 0; r < 3; r++) {
        char label[64];
        snprintf(label, sizeof label, "lambda = %g: order %.0f", lambdas[r], expect[r]);
        check_order(label, fit_order(dts, err[r], NGRIDS), expect[r]);
    }
}

typedef struct {
    const char *name, *what;
    void (*run)(const Lesson *ls);
} Version;

static const Version VERSIONS[] = {
    {"held_input", "u held per step: zoh = analytic to rounding; euler_b, euler order 1",
     held_input},
    {"smooth_input", "u = sin(3t) sampled per step: measured orders of zoh, euler_b, euler",
     smooth_input},
    {"step_difference", "one step: euler_b's bbar = dt b vs zoh's, relative gap -a dt/2",
     step_difference},
    {"lti_convolution", "fixed dt: recurrence = causal convolution, K_k = C Abar^k Bbar",
     lti_convolution},
    {"selective_kernel", "dt_t from the input: K_{t,s} depends on t and s, no single kernel",
     selective_kernel},
    {"trapezoid_rule", "the input at both ends of a step (Mamba-3): lambda = 1 or 0 order 1, 1/2 order 2",
     trapezoid_rule},
};
#define NVERSIONS (int)(sizeof(VERSIONS) / sizeof(VERSIONS[0]))

int main(int argc, char **argv) {
    Args args;
    args_parse(&args, argc, argv, ARG_CHECK | ARG_LIST | ARG_VERSION | ARG_SEED, NULL, 0,
               "00_ssm_basics: continuous SSM, ZOH vs Euler-B vs Euler, "
               "convolution vs recurrence (CPU)", NULL);
    if (args.list) {
        for (int v = 0; v < NVERSIONS; v++)
            printf("  %d  %s  %s\n", v + 1, VERSIONS[v].name, VERSIONS[v].what);
        return EXIT_OK;
    }
    if (args.version > NVERSIONS)
        die_usage("no version %d (there are %d; try --list)", args.version, NVERSIONS);
    const Lesson ls = {.tables = !args.check, .seed = args.seed};

    printf("00_ssm_basics: from a continuous SSM to the selective scan (fp64, CPU, seed %llu)\n",
           (unsigned long long)args.seed);
    for (int v = 0; v < NVERSIONS; v++) {
        if (args.version != 0 && args.version != v + 1) continue;
        printf("\n[%d] %s: %s\n", v + 1, VERSIONS[v].name, VERSIONS[v].what);
        VERSIONS[v].run(&ls);
    }
    printf("\n");
    check_summary("00_ssm_basics");
    return check_exit_code(false);
}
