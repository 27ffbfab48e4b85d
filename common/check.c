/* The validator: tolerances, the NaN-safe element test, check lines, counters. */
#include "check.h"

#include <math.h>
#include <stdio.h>

#include "codes8.h"

/* Never looser than the official tests (docs/design.md §3). An op may hold
 * its versions to tolerances of its own (Op.tol_fp32, ...). */
const Tol TOLERANCES[TOL_COUNT] = {
    [TOL_FP32] = {"fp32", 6e-4, 2e-3, 0.0},
    [TOL_FP16] = {"fp16", 3e-3, 5e-3, 0.0},
    [TOL_BF16] = {"bf16", 3e-2, 5e-2, 0.0},
    [TOL_FIXTURE] = {"fixture", 1e-4, 1e-5, 1e-5},
    [TOL_EXACT] = {"exact", 1e-12, 1e-12, 1e-12},
};

static int n_pass, n_fail, n_skip;
static bool inputs_not_finite;  // the problem's inputs hold NaN or inf (check_inputs_finite)

void check_inputs_finite(bool finite) { inputs_not_finite = !finite; }

static CheckResult compare(const float *got32, const double *got64, const double *ref, const double *scale,
                           const double *extra, int64_t n, Tol tol) {
    CheckResult r = {0.0, 0.0, n, 0, true, 0, scale != NULL, 0.0, 0, 0.0, 0.0, false, -1};
    double err2 = 0.0, ref2 = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double g = got32 ? (double)got32[i] : got64[i];
        if (!isfinite(ref[i])) {  // NaN or inf: matched only where the inputs hold some
            r.ref_not_finite++;
            if (inputs_not_finite && ((isnan(ref[i]) && isnan(g)) || g == ref[i])) continue;
            r.n_bad++;  // an overflow of the reference, or the version's value differs
            if (!isnan(r.worst)) r.worst = NAN, r.worst_i = i, r.worst_ref = ref[i], r.worst_bound = NAN;
            r.max_abs = NAN;
            continue;
        }
        double e = fabs(g - ref[i]);
        double bound = tol.atol + tol.rtol * (scale ? scale[i] : fabs(ref[i])) + (extra ? extra[i] : 0.0);
        /* Written so that NaN fails: a comparison with NaN is false. */
        if (!(e <= bound)) r.n_bad++;
        double ratio = e / bound;
        if (!isnan(r.worst) && !(ratio <= r.worst)) {  // the first NaN sticks, as max_abs's does
            r.worst = ratio;
            r.worst_i = i;
            r.worst_ref = ref[i];
            r.worst_bound = bound;
        }
        if (!isnan(r.max_abs) && !(e <= r.max_abs)) r.max_abs = e;  // a NaN error sticks
        err2 += e * e;
        ref2 += ref[i] * ref[i];
    }
    r.rel_l2 = ref2 > 0.0 ? sqrt(err2 / ref2) : sqrt(err2);
    r.pass = r.n_bad == 0 && !isnan(r.rel_l2) &&
             (tol.max_rel_l2 <= 0.0 || r.rel_l2 <= tol.max_rel_l2);
    return r;
}

CheckResult compare_f32(const float *got, const double *ref, int64_t n, Tol tol) {
    return compare(got, NULL, ref, NULL, NULL, n, tol);
}

CheckResult compare_f64(const double *got, const double *ref, int64_t n, Tol tol) {
    return compare(NULL, got, ref, NULL, NULL, n, tol);
}

CheckResult compare_f32_scaled(const float *got, const double *ref, const double *scale, int64_t n, Tol tol) {
    return compare(got, NULL, ref, scale, NULL, n, tol);
}

CheckResult compare_f32_bounded(const float *got, const double *ref, const double *scale, const double *bound,
                                int64_t n, Tol tol) {
    return compare(got, NULL, ref, scale, bound, n, tol);
}

CheckResult check_merge(CheckResult a, CheckResult b) {
    CheckResult r;
    r.max_abs = (isnan(a.max_abs) || isnan(b.max_abs)) ? NAN : fmax(a.max_abs, b.max_abs);
    r.rel_l2 = fmax(a.rel_l2, b.rel_l2);
    if (isnan(a.rel_l2) || isnan(b.rel_l2)) r.rel_l2 = NAN;
    r.n = a.n + b.n;
    r.n_bad = a.n_bad + b.n_bad;
    r.pass = a.pass && b.pass;
    r.ref_not_finite = a.ref_not_finite + b.ref_not_finite;
    r.scaled = a.scaled || b.scaled;
    const CheckResult *w = (isnan(a.worst) || !(b.worst > a.worst)) ? &a : &b;
    r.worst = w->worst;
    r.worst_i = w->worst_i;
    r.worst_ref = w->worst_ref;
    r.worst_bound = w->worst_bound;
    r.row = w->row;
    r.worst_row = a.worst_row || b.worst_row;
    return r;
}

CheckResult check_rows_merge(CheckResult a, CheckResult b) {
    CheckResult r = check_merge(a, b);
    r.worst_row = true;
    return r;
}

/* The heading of the checks that follow, printed before the first of them
 * that prints a line: a heading whose checks were all skipped without a line
 * (check_skip_quiet) is not printed. */
static char heading[256];
static int n_quiet;  // checks skipped without a line
/* Compact output (check_compact): a heading's passed and skipped checks are
 * counted, not printed, and said in one line when the next heading comes. */
static bool compact;
static int h_pass, h_skip;  // the current heading's checks counted, not printed

static void print_heading(void) {
    if (heading[0]) printf("%s\n", heading);
    heading[0] = '\0';
}

void check_flush(void) {
    if (h_pass + h_skip > 0) {
        if (heading[0]) printf("%s:", heading);
        else printf("  and");
        if (h_pass) printf(" %d checks passed%s", h_pass, h_skip ? "," : "");
        if (h_skip) printf(" %d skipped (`--check` says why)", h_skip);
        printf("\n");
    }
    heading[0] = '\0';
    h_pass = h_skip = 0;
}

void check_compact(bool on) {
    check_flush();
    compact = on;
}

void check_heading(const char *line) {
    check_flush();
    snprintf(heading, sizeof(heading), "%s", line);
}

void check_report(const char *label, CheckResult r, Tol tol) {
    if (compact && r.pass) { h_pass++; n_pass++; return; }
    print_heading();
    printf("  %-52s max_abs %.2e  rel_l2 %.2e%s  tol %s (rtol %.0e atol %.0e",
           label, r.max_abs, r.rel_l2, r.worst_row ? " (worst row)" : "", tol.name, tol.rtol, tol.atol);
    if (tol.max_rel_l2 > 0.0) printf(" rel_l2 %.0e", tol.max_rel_l2);
    if (r.scaled) printf(" of sum|terms|");
    if (tol.codes8) printf(" + the %s roundings' bound", codes8_name(tol.codes8));
    printf(")  %s", r.pass ? "PASS" : "FAIL");
    if (!r.pass) printf(" (%lld of %lld elements out)", (long long)r.n_bad, (long long)r.n);
    if (r.n_bad > 0) {
        printf(" -- the worst at value %lld", (long long)r.worst_i);
        if (r.row >= 0) printf(" of row %lld", (long long)r.row);
        printf(": error %.3g times its bound %.3g (ref %.4g)", r.worst, r.worst_bound, r.worst_ref);
    }
    if (!r.pass && r.ref_not_finite)
        printf(" -- the reference itself is not finite at %lld elements (an overflow, or NaN/inf in the inputs)",
               (long long)r.ref_not_finite);
    if (r.pass && r.ref_not_finite)
        printf(" (NaN or inf at %lld elements of the reference, the inputs holding some, and the same there)",
               (long long)r.ref_not_finite);
    printf("\n");
    if (r.pass) n_pass++; else n_fail++;
}

void check_skip(const char *label, const char *reason) {
    if (compact) { h_skip++; n_skip++; return; }
    print_heading();
    printf("  %-52s SKIP (%s)\n", label, reason);
    n_skip++;
}

void check_skip_quiet(void) {
    n_skip++;
    n_quiet++;
}

int check_quiet_skips(void) {
    return n_quiet;
}

void check_report_bool(const char *label, bool pass, const char *detail) {
    if (compact && pass) { h_pass++; n_pass++; return; }
    print_heading();
    printf("  %-52s %s  %s\n", label, detail ? detail : "", pass ? "PASS" : "FAIL");
    if (pass) n_pass++; else n_fail++;
}


int check_exit_code(bool gpu_skipped) {
    if (n_fail > 0) return EXIT_FAIL;
    if (gpu_skipped) return EXIT_GPU_SKIPPED;
    return EXIT_OK;
}

void check_summary(const char *program) {
    check_flush();
    printf("%s checks: %d passed, %d failed, %d skipped\n", program, n_pass, n_fail, n_skip);
}
