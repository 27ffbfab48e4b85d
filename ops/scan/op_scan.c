/* The Mamba-1 selective scan as an operation of the driver core (chapters
 * 01-04): selective_scan_fn's tensors, random inputs in the official tests'
 * ranges, the oracle, the exp count, the check and benchmark shapes, and the
 * calls into a ScanVersion. A packed problem (--seqlens) lays sequences end
 * to end on one row, with cu_seqlens and one h0 and last_state row per
 * sequence (ScanPacked, scan.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "op_scan.h"

/* The tensors in table order: inputs (random ones are drawn in this order), then outputs. */
enum { T_U, T_DELTA, T_Z, T_A, T_B, T_C, T_D, T_DELTA_BIAS, T_H0, T_CU_SEQLENS, T_Y, T_LAST_STATE, N_TENSORS };

/* Ranges of the official tests: A < 0, delta > 0 small, softplus(delta +
 * bias) around 0.3..1.3. Uniform draws keep generation fast at benchmark
 * sizes (a billion elements per tensor at S2's longest L). Without softplus
 * delta + delta_bias is the step itself, so delta_bias is drawn as
 * test_selective_scan draws it, 0.5 * rand: Δ > 0, exp(Δ·A) < 1, and the
 * state cannot grow without bound over a long L. */
static int scan_tensors(const Problem *p, TensorSpec *t) {
    int64_t b = p->batch, d = p->dim, N = p->dstate, L = p->seqlen, G = p->groups;
    int64_t S = p->nseq ? p->nseq : b;  // rows of h0 and last_state: one a sequence
    bool sp = p->softplus;
    //                                name          role            dtype          present      range         shape     finite
    t[T_U]          = (TensorSpec){"u",          INPUT,          VERSION_DTYPE, true,        -1.5, 1.5,   3, {b, d, L}, false};
    t[T_DELTA]      = (TensorSpec){"delta",      INPUT,          VERSION_DTYPE, true,         0.0, 0.5,   3, {b, d, L}, false};
    t[T_Z]          = (TensorSpec){"z",          OPTIONAL_INPUT, VERSION_DTYPE, p->has_z,    -2.0, 2.0,   3, {b, d, L}, false};
    t[T_A]          = (TensorSpec){"A",          INPUT,          ALWAYS_FP32,   true,        -1.0, -0.02, 2, {d, N}, true};
    t[T_B]          = (TensorSpec){"B",          INPUT,          VERSION_DTYPE, true,        -1.5, 1.5,   4, {b, G, N, L}, false};
    t[T_C]          = (TensorSpec){"C",          INPUT,          VERSION_DTYPE, true,        -1.5, 1.5,   4, {b, G, N, L}, false};
    t[T_D]          = (TensorSpec){"D",          OPTIONAL_INPUT, ALWAYS_FP32,   p->has_D,    -1.0, 1.0,   1, {d}, false};
    t[T_DELTA_BIAS] = (TensorSpec){"delta_bias", OPTIONAL_INPUT, ALWAYS_FP32,   p->has_bias, sp ? -1.0 : 0.0, 0.5, 1, {d}, false};
    t[T_H0]         = (TensorSpec){"h0",         OPTIONAL_INPUT, ALWAYS_FP32,   p->has_h0,   -1.0, 1.0,   3, {S, d, N}, false};
    t[T_CU_SEQLENS] = (TensorSpec){"cu_seqlens", OPTIONAL_INPUT, INDEX_INT32,   p->nseq > 0,  0.0, 0.0,   1, {p->nseq + 1}, false};
    t[T_Y]          = (TensorSpec){"y",          OUTPUT,         VERSION_DTYPE, true,         0.0, 0.0,   3, {b, d, L}, false};
    t[T_LAST_STATE] = (TensorSpec){"last_state", OUTPUT,         ALWAYS_FP32,   true,         0.0, 0.0,   3, {S, d, N}, false};
    /* With one group B and C are (b, N, L), the official ungrouped form (the same memory). */
    if (G == 1)
        for (int k = T_B; k <= T_C; k++) {
            t[k].ndim = 3;
            t[k].shape[1] = N;
            t[k].shape[2] = L;
        }
    return N_TENSORS;
}

static void scan_validate(const Problem *p) {
    if (p->dim % p->groups != 0)
        die_usage("--dim %lld is not a multiple of --groups %lld", (long long)p->dim, (long long)p->groups);
    packed_validate(p);
}

const int64_t SERVING_MIX[SERVING_MIX_SEQS] = {
    17, 294, 26, 962, 55, 3550, 139, 18, 414, 32, 1406, 71, 5367, 190, 21, 590,
    39, 2077, 94, 8192, 263, 24, 850, 50, 3100, 126, 18, 369, 30, 1238, 65, 4671,
    171, 20, 523, 37, 1822, 85, 7108, 236, 23, 751, 46, 2710, 114, 17, 329, 28,
    1090, 59, 4070, 154, 19, 465, 34, 1600, 78, 6173, 212, 22, 665, 43, 2371, 103,
};

void packed_validate(const Problem *p) {
    if (!p->nseq) return;
    if (p->batch != 1) die_usage("packed sequences lie on one row: batch %lld must be 1", (long long)p->batch);
    if (p->seqlen > INT32_MAX)
        die_usage("--seqlens: %lld tokens in all, more than cu_seqlens (int32) can index", (long long)p->seqlen);
    if (p->seqlens) {
        int64_t total = 0;
        for (int64_t k = 0; k < p->nseq; k++) total += p->seqlens[k];
        if (total != p->seqlen)
            die_usage("packed problem: the sequences hold %lld tokens, not L = %lld", (long long)total,
                      (long long)p->seqlen);
    }
}

static void scan_shape_text(const Problem *p, char *buf, size_t len) {
    snprintf(buf, len, "b%lld d%lld N%lld L%lld G%lld", (long long)p->batch, (long long)p->dim,
             (long long)p->dstate, (long long)p->seqlen, (long long)p->groups);
}

static void scan_bench_text(const Problem *p, char *buf, size_t len) {
    int n = snprintf(buf, len, "b%-3lld N%-3lld L%-6lld", (long long)p->batch, (long long)p->dstate,
                     (long long)p->seqlen);
    if (p->nseq && n > 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, " in %lld seqs", (long long)p->nseq);
}

/* ------------------------------------------------------ calls into versions */

static ScanShape scan_shape(const Problem *p) {
    ScanShape s = {p->batch, p->dim, p->dstate, p->seqlen, p->groups,
                   p->has_z, p->has_D, p->has_bias, p->softplus, p->has_h0};
    return s;
}

static ScanTensors scan_view(const Problem *p, void *const *t) {
    ScanTensors st = {scan_shape(p), t[T_U], t[T_DELTA], t[T_Z], t[T_A], t[T_B], t[T_C], t[T_D],
                      t[T_DELTA_BIAS], t[T_H0], t[T_Y], t[T_LAST_STATE]};
    return st;
}

/* A chapter of this op lists ScanVersions, whose first member is the info. */
static const ScanVersion *scan_version(const VersionInfo *v) { return (const ScanVersion *)v; }

static size_t scan_workspace(const VersionInfo *v, const Problem *p) {
    ScanShape s = scan_shape(p);
    return scan_version(v)->workspace_bytes ? scan_version(v)->workspace_bytes(&s) : 0;
}

static ScanPacked scan_packed_view(const Problem *p, void *const *t) {
    ScanPacked pk = {scan_view(p, t), p->nseq, t[T_CU_SEQLENS]};
    return pk;
}

static const char *scan_unsupported(const VersionInfo *v, const Problem *p) {
    if (p->nseq && !scan_version(v)->run_packed) return "takes no packed sequences";
    ScanShape s = scan_shape(p);
    return scan_version(v)->unsupported ? scan_version(v)->unsupported(&s) : NULL;
}

static void scan_run(const VersionInfo *v, const Problem *p, void *const *t, void *workspace) {
    if (p->nseq) {
        ScanPacked pk = scan_packed_view(p, t);
        scan_version(v)->run_packed(&pk, workspace);
        return;
    }
    ScanTensors st = scan_view(p, t);
    scan_version(v)->run(&st, workspace);
}

/* ------------------------------------------------------ inputs and oracle */

/* delta + bias above 20 on every other channel: softplus's linear branch. */
static void scan_big_delta(const Problem *p, void *const *t) {
    float *delta = t[T_DELTA], *bias = t[T_DELTA_BIAS];  // (b, d, L), (d,) fp32
    for (int64_t c = 0; c < p->dim; c += 2) {
        if (bias) bias[c] = 22.0f;
        else
            for (int64_t b = 0; b < p->batch; b++)
                for (int64_t l = 0; l < p->seqlen; l++) delta[(b * p->dim + c) * p->seqlen + l] += 22.0f;
    }
}

void packed_infer(Problem *p, const LoadFolder *f, int k) {
    if (!f->given[k]) return;
    const NpyShape *cu = folder_shape(f, k);
    if (cu->ndim != 1 || cu->shape[0] < 2)
        die_usage("--load: %s/cu_seqlens.npy must be (nseq + 1,) with nseq >= 1", f->dir);
    p->nseq = cu->shape[0] - 1;
    if (p->batch != 1)
        die_usage("--load: %s: cu_seqlens.npy packs sequences on one row, but the inputs have batch %lld", f->dir,
                  (long long)p->batch);
    if (p->nseq > p->seqlen)
        die_usage("--load: %s/cu_seqlens.npy holds %lld sequences for %lld tokens: each needs at least one", f->dir,
                  (long long)p->nseq, (long long)p->seqlen);
}

void cu_seqlens_fill(const Problem *p, int32_t *cu) {
    if (!cu) return;
    cu[0] = 0;
    for (int64_t k = 0; k < p->nseq; k++) cu[k + 1] = cu[k] + (int32_t)p->seqlens[k];
}

void cu_seqlens_check(const Problem *p, const int32_t *cu) {
    if (!cu) return;
    if (cu[0] != 0) die_usage("--load: cu_seqlens.npy must start at 0, starts at %d", cu[0]);
    for (int64_t k = 0; k < p->nseq; k++)
        if (cu[k + 1] <= cu[k])
            die_usage("--load: cu_seqlens.npy must rise (every sequence at least 1 token): entry %lld is %d after %d",
                      (long long)(k + 1), cu[k + 1], cu[k]);
    if (cu[p->nseq] != p->seqlen)
        die_usage("--load: cu_seqlens.npy ends at %d, not at L = %lld", cu[p->nseq], (long long)p->seqlen);
}

static void scan_indices(const Problem *p, void *const *t) { cu_seqlens_fill(p, t[T_CU_SEQLENS]); }

static void scan_from_loaded(Problem *p, void *const *t) { cu_seqlens_check(p, t[T_CU_SEQLENS]); }

static void scan_oracle(const Problem *p, void *const *t, double *const *ref) {
    if (p->nseq) {
        ScanPacked pk = scan_packed_view(p, t);
        oracle_scan_packed(&pk, ref[T_Y], ref[T_LAST_STATE]);
        return;
    }
    ScanTensors st = scan_view(p, t);
    oracle_scan(&st, ref[T_Y], ref[T_LAST_STATE]);
}

/* Rows are (b, d) channels; packed, the d channels of the one row, each over
 * every sequence. */
static int64_t scan_rows(const Problem *p) { return p->batch * p->dim; }

/* Channel c of a packed problem: its y over every sequence and its final
 * state in each. */
static CheckResult scan_check_packed_channel(const Problem *p, void *const *t, int64_t c, Tol tol) {
    ScanPacked pk = scan_packed_view(p, t);
    int64_t L = p->seqlen, N = p->dstate, d = p->dim, S = p->nseq;
    double *y = host_alloc(L * 8, "oracle row");          // (L,) fp64
    double *h = host_alloc(S * N * 8, "oracle row");      // (nseq, N) fp64, the final states
    float *got = host_alloc(S * N * 4, "final states");   // (nseq, N) fp32, channel c's of last_state
    oracle_scan_packed_channel(&pk, c, y, h);
    for (int64_t k = 0; k < S; k++)
        for (int64_t n = 0; n < N; n++) got[k * N + n] = pk.t.last_state[(k * d + c) * N + n];
    CheckResult r = check_merge(compare_f32((const float *)pk.t.y + c * L, y, L, tol), compare_f32(got, h, S * N, tol));
    free(y);
    free(h);
    free(got);
    return r;
}

static CheckResult scan_check_row(const Problem *p, void *const *t, int64_t row, Tol tol) {
    if (p->nseq) return scan_check_packed_channel(p, t, row, tol);
    ScanTensors st = scan_view(p, t);
    int64_t L = p->seqlen, N = p->dstate;
    double *y = host_alloc(L * 8, "oracle row");      // (L,) fp64
    double *h = host_alloc(N * 8, "oracle row");      // (N,) fp64, the final state
    oracle_scan_row(&st, row / p->dim, row % p->dim, y, h);
    CheckResult r = check_merge(compare_f32((const float *)st.y + row * L, y, L, tol),
                                compare_f32(st.last_state + row * N, h, N, tol));
    free(y);
    free(h);
    return r;
}

/* One exp per (b, d, t, n): exp(delta * A). */
static double scan_exps(const Problem *p) { return (double)p->batch * p->dim * p->seqlen * p->dstate; }

/* ---------------------------------------------------------------- --load */

static void scan_infer(Problem *p, const LoadFolder *f) {
    const NpyShape *u = folder_shape(f, T_U), *A = folder_shape(f, T_A), *B = folder_shape(f, T_B);
    if (u->ndim != 3) die_usage("--load: %s/u.npy must be (batch, dim, seqlen), has %d dims", f->dir, u->ndim);
    p->batch = u->shape[0];
    p->dim = u->shape[1];
    p->seqlen = u->shape[2];
    if (A->ndim != 2) die_usage("--load: %s/A.npy must be (dim, dstate), has %d dims", f->dir, A->ndim);
    p->dstate = A->shape[1];
    if (B->ndim == 3) p->groups = 1;
    else if (B->ndim == 4) p->groups = B->shape[1];
    else die_usage("--load: %s/B.npy must be (batch, dstate, seqlen) or (batch, groups, dstate, seqlen)", f->dir);
    if (p->groups < 1 || p->dim % p->groups != 0)
        die_usage("--load: %s/B.npy: %lld groups do not divide dim %lld", f->dir, (long long)p->groups,
                  (long long)p->dim);
    p->has_z = f->given[T_Z];
    p->has_D = f->given[T_D];
    p->has_bias = f->given[T_DELTA_BIAS];
    p->has_h0 = f->given[T_H0];
    packed_infer(p, f, T_CU_SEQLENS);  // packed: the lengths are in the file, read once every shape is checked
    p->softplus = meta_bool(f, "delta_softplus", false);  // the official default
}

static void scan_meta_text(const Problem *p, char *buf, size_t len) {
    snprintf(buf, len, "{\"delta_softplus\": %s}", p->softplus ? "true" : "false");
}

/* ----------------------------------------------------------------- shapes */

/* Lengths of the packed check cases. */
static const int64_t SEQS_SHORT[] = {1, 1, 3, 1};                // 6 tokens
static const int64_t SEQS_EDGES[] = {64, 128, 64, 1, 37, 100, 7};  // 401 tokens: ends at 64, 192, 256, 257, ...

/* Small and awkward (docs/design.md §3): L = 1, odd L, L not a multiple of
 * any block or chunk, N not a power of two, N = 256, G > 1, flags on and off,
 * delta + bias above 20, long L. */
static const Problem CHECK_CASES[] = {
    {.batch = 1, .seqlen = 1, .dim = 3, .dstate = 1, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    {.batch = 2, .seqlen = 37, .dim = 5, .dstate = 7, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true},
    {.batch = 2, .seqlen = 333, .dim = 8, .dstate = 16, .groups = 2, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    {.batch = 1, .seqlen = 100, .dim = 4, .dstate = 3, .groups = 1},
    {.batch = 2, .seqlen = 77, .dim = 6, .dstate = 5, .groups = 3, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .big_delta = true},
    {.batch = 1, .seqlen = 45, .dim = 4, .dstate = 9, .groups = 2, .has_D = true, .has_h0 = true, .big_delta = true},
    {.batch = 3, .seqlen = 513, .dim = 6, .dstate = 32, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true},
    {.batch = 1, .seqlen = 130, .dim = 2, .dstate = 256, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    {.batch = 1, .seqlen = 4100, .dim = 4, .dstate = 16, .groups = 2, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true},
    {.batch = 1, .seqlen = 8192, .dim = 16, .dstate = 32, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    /* Packed: sequences of length 1; sequences shorter than a 64-step chunk
     * and ending on chunk edges (64, 192, 256) and inside chunks, each from its
     * own initial state; a packed problem with no initial state. */
    {.batch = 1, .seqlen = 6, .dim = 3, .dstate = 4, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true, .nseq = 4, .seqlens = SEQS_SHORT},
    {.batch = 1, .seqlen = 401, .dim = 6, .dstate = 7, .groups = 2, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true, .nseq = 7, .seqlens = SEQS_EDGES},
    {.batch = 1, .seqlen = 401, .dim = 4, .dstate = 32, .groups = 1, .has_D = true, .big_delta = true, .nseq = 7, .seqlens = SEQS_EDGES},
};

/* Benchmark sets (docs/design.md §7): z, D, delta_bias and softplus on; B/C (b, N, L). */
static const BenchGrid BENCH[] = {
    // S1: d 2048, N 32, L 512
    {.base = {.dim = 2048, .dstate = 32, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
     .batch = {1, 2, 4, 8, 16}, .seqlen = {512}},
    // S2: d 2048, N 16, long L
    {.base = {.dim = 2048, .dstate = 16, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
     .batch = {1, 8}, .seqlen = {512, 2048, 8192, 65536}},
    // Serving: the mix packed on one row, each request from its own state; the same tokens as one
    // sequence; the requests padded to the longest (S1's widths)
    {.base = {.dim = 2048, .dstate = 32, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true,
              .has_h0 = true, .nseq = SERVING_MIX_SEQS, .seqlens = SERVING_MIX},
     .batch = {1}, .seqlen = {SERVING_MIX_TOKENS}},
    {.base = {.dim = 2048, .dstate = 32, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true,
              .has_h0 = true},
     .batch = {1}, .seqlen = {SERVING_MIX_TOKENS}},
    {.base = {.dim = 2048, .dstate = 32, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true,
              .has_h0 = true},
     .batch = {SERVING_MIX_SEQS}, .seqlen = {8192}},
};
static const BenchGrid QUICK[] = {
    {.base = {.dim = 2048, .dstate = 32, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
     .batch = {1, 16}, .seqlen = {512}},
};

int mamba_csv_sizes(const Problem *p, int64_t heads, int64_t headdim, int64_t chunk, int64_t *v) {
    const int64_t row[] = {p->batch, p->dim ? p->dim : heads * headdim, heads, headdim, p->groups, p->dstate,
                           p->seqlen, chunk};
    for (int k = 0; k < 8; k++) v[k] = row[k];
    return 8;
}

static int scan_csv_sizes(const Problem *p, int64_t *v) { return mamba_csv_sizes(p, 0, 0, 0, v); }

const Op OP_SCAN = {
    .args = ARGS_SCAN,
    .tol_fp32 = &TOLERANCES[TOL_FP32],
    .tol_fp16 = &TOLERANCES[TOL_FP16],
    .tol_bf16 = &TOLERANCES[TOL_BF16],
    .csv_columns = MAMBA_CSV_COLUMNS,
    .csv_sizes = scan_csv_sizes,
    .version_size = sizeof(ScanVersion),
    .tensors = scan_tensors,
    .validate = scan_validate,
    .shape_text = scan_shape_text,
    .bench_text = scan_bench_text,
    .workspace = scan_workspace,
    .unsupported = scan_unsupported,
    .run = scan_run,
    .indices = scan_indices,
    .from_loaded = scan_from_loaded,
    .big_delta = scan_big_delta,
    .oracle = scan_oracle,
    .rows = scan_rows,
    .check_row = scan_check_row,
    .exps = scan_exps,
    .flops = NULL,  // no matrix products
    .infer = scan_infer,
    .meta_text = scan_meta_text,
    .fixtures = fixtures_check_scan,
    .check_cases = CHECK_CASES, .ncheck = COUNT(CHECK_CASES),
    .check_base = {.batch = 2, .seqlen = 333, .dim = 8, .dstate = 16, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    .bench_base = {.batch = 1, .seqlen = 512, .dim = 2048, .dstate = 32, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    .bench = BENCH, .nbench = COUNT(BENCH),
    .quick = QUICK, .nquick = COUNT(QUICK),
};
