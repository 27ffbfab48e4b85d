/* The validator: one tolerance table, NaN-safe element test, check lines and
 * the pass/fail/skip counters that decide a chapter's exit code. */
#ifndef CHECK_H
#define CHECK_H

#include <stdbool.h>
#include <stdint.h>

/* Exit codes of every chapter program (docs/design.md §3). */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_GPU_SKIPPED = 3 };

typedef enum {
    TOL_FP32,         // fp32 inputs and sums, and tensor-core products with split operands
    TOL_FP16,         // fp16 inputs, or fp16/bf16 tensor-core operands
    TOL_BF16,         // bf16 inputs (the official bf16 tolerance, selective_scan's test)
    TOL_FIXTURE,      // fp64 oracle vs the official fp32 fixtures
    TOL_EXACT,        // two computations that must agree to rounding (fp64)
    TOL_COUNT
} TolKind;

typedef struct {
    const char *name;
    double rtol, atol;   // element passes when |got - ref| <= atol + rtol*|ref|
    double max_rel_l2;   // and the relative L2 error is at most this (0: not used)
    bool of_terms;       // rtol of the oracle's Σ|term| where the op gives one (Op.oracle_terms), not of |ref|
    int codes8;          // the Codes8 (codes8.h) of a version that stores a tensor in 8 bits: each element may
                         // also be off by what the op derives of their roundings (Op.codes8_bound); else 0
} Tol;

extern const Tol TOLERANCES[TOL_COUNT];

typedef struct {
    double max_abs;      // max |got - ref| (NaN if any element is NaN)
    double rel_l2;       // ||got - ref|| / ||ref||
    int64_t n, n_bad;    // elements compared, elements out of tolerance
    bool pass;
    int64_t ref_not_finite;  // reference elements that are NaN or inf (a match only where the inputs hold some)
    bool scaled;             // rtol was taken of the summed terms' magnitude, not of |ref|
    double worst;            // the largest |got - ref| / (atol + rtol*scale) (NaN if any is NaN): > 1 fails
    int64_t worst_i;         // where it is (index into the compared values)
    double worst_ref, worst_bound;  // ref and atol + rtol*scale there
    bool worst_row;          // merged from sampled rows: rel_l2 is the worst row's (check_rows_merge)
    int64_t row;             // the row worst_i is in, when rows were checked one by one (else -1)
} CheckResult;

/* Compare n values; got is fp32 or fp64, ref is fp64. NaN in got or ref fails. */
/* Whether the problem being checked has only finite inputs: where it does not
 * (a loaded folder with NaN or inf), a NaN or inf of the reference that the
 * version gives too is a match; else every non-finite reference value fails. */
void check_inputs_finite(bool finite);

CheckResult compare_f32(const float *got, const double *ref, int64_t n, Tol tol);
CheckResult compare_f64(const double *got, const double *ref, int64_t n, Tol tol);
/* The same with each element's rtol taken of scale[i] instead of |ref[i]|:
 * scale[i] = Σ|term| of the terms ref[i] adds up (>= |ref[i]|), where
 * rounding each term by rtol can cancel into an error far above rtol·|ref[i]|. */
CheckResult compare_f32_scaled(const float *got, const double *ref, const double *scale, int64_t n, Tol tol);
/* The same, each element also allowed bound[i] more (NULL: none): what the
 * roundings of an 8-bit stored tensor can add, derived by the op. */
CheckResult compare_f32_bounded(const float *got, const double *ref, const double *scale, const double *bound,
                                int64_t n, Tol tol);
/* Merge two results (for y and last_state in one line). */
CheckResult check_merge(CheckResult a, CheckResult b);
/* The same for rows checked one by one: the line then says that its rel_l2
 * is the worst row's (a row of one element that cancels to near zero can
 * have a large one). */
CheckResult check_rows_merge(CheckResult a, CheckResult b);

/* Print one check line and count it:
 *   "  <label>  max_abs 1.2e-06  rel_l2 3.4e-07  tol rtol 6e-04 atol 2e-03  PASS"
 * A failure whose reference holds NaN or inf says so. */
void check_report(const char *label, CheckResult r, Tol tol);
/* The line that heads the next checks (a problem's shape): printed before
 * the first of them that prints a line, not at all if none does. */
void check_heading(const char *line);
/* Compact output on or off: with it on, a heading's passed and skipped
 * checks are counted and said in one line ("<heading>: 8 checks passed");
 * a failure still prints in full. check_flush says the pending count now. */
void check_compact(bool on);
void check_flush(void);
/* Print and count a skipped check with its reason. */
void check_skip(const char *label, const char *reason);
/* Count a skipped check without a line (a GPU version on a machine without a
 * usable GPU: the program says so once, with check_quiet_skips' count). */
void check_skip_quiet(void);
int check_quiet_skips(void);
/* Count a check decided elsewhere (e.g. "perturbed output must fail"). */
void check_report_bool(const char *label, bool pass, const char *detail);

/* The exit code: 1 if any check failed; else 3 if any check was
 * skipped because the GPU is missing (gpu_skipped); else 0. */
int check_exit_code(bool gpu_skipped);
/* Print "checks: N passed, N failed, N skipped" for this program. */
void check_summary(const char *program);

#endif
