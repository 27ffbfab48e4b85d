/* Bidirectional Mamba-2 as an operation of the driver core (chapter 06), in
 * both published forms: the default y = SS(x) + flip(SS(flip(x))) + D·x and
 * Hydra's shifted form with its own backward dt, B, C (ops/bidir/bidir.h).
 * mamba_chunk_scan_combined's tensors and ranges as in op_ssd.c, plus the
 * backward direction's initial state and Hydra's backward inputs; the
 * oracle, the exp and FLOP counts, the check and benchmark shapes, and the
 * calls into a BidirVersion. */
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "op_bidir.h"

/* The tensors in table order: inputs (random ones are drawn in this order),
 * then outputs. The first nine are OP_SSD's, in its order (op_ssd.c), so its
 * table, validation, --load sizes and big-Δ inputs serve here too. */
enum {
    T_X, T_DT, T_A, T_B, T_C, T_D, T_Z, T_DT_BIAS, T_INITIAL_STATES, T_INITIAL_STATES_BWD,
    T_DT_BWD, T_B_BWD, T_C_BWD, T_Y, N_TENSORS
};

/* OP_SSD's inputs, then the backward direction's initial state and (Hydra)
 * inputs in the same ranges as the forward ones, and y. */
static int bidir_tensors(const Problem *p, TensorSpec *t) {
    OP_SSD.tensors(p, t);  // x .. initial_states; its outputs are overwritten below
    t[T_INITIAL_STATES_BWD] = t[T_INITIAL_STATES];
    t[T_INITIAL_STATES_BWD].name = "initial_states_bwd";
    const char *bwd_names[3] = {"dt_bwd", "B_bwd", "C_bwd"};
    const int fwd[3] = {T_DT, T_B, T_C};
    for (int k = 0; k < 3; k++) {
        t[T_DT_BWD + k] = t[fwd[k]];
        t[T_DT_BWD + k].name = bwd_names[k];
        t[T_DT_BWD + k].role = OPTIONAL_INPUT;
        t[T_DT_BWD + k].present = p->opt[BIDIR_HYDRA];
    }
    t[T_Y] = (TensorSpec){"y", OUTPUT, VERSION_DTYPE, true, 0.0, 0.0, 4, {p->batch, p->seqlen, p->opt[SSD_HEADS], p->opt[SSD_HEADDIM]}, false};
    return N_TENSORS;
}

/* OP_SSD's rules: g divides h, the chunk a power of two in 16..256. */
static void bidir_validate(const Problem *p) { OP_SSD.validate(p); }

static void bidir_shape_text(const Problem *p, char *buf, size_t len) {
    snprintf(buf, len, "%s b%lld L%lld h%lld p%lld g%lld N%lld Q%lld", p->opt[BIDIR_HYDRA] ? "hydra" : "default",
             (long long)p->batch, (long long)p->seqlen, (long long)p->opt[SSD_HEADS], (long long)p->opt[SSD_HEADDIM],
             (long long)p->groups, (long long)p->dstate, (long long)p->opt[SSD_CHUNK]);
}

static void bidir_bench_text(const Problem *p, char *buf, size_t len) {
    snprintf(buf, len, "%-7s b%-3lld h%-3lld p%-3lld N%-3lld Q%-3lld L%-6lld", p->opt[BIDIR_HYDRA] ? "hydra" : "default",
             (long long)p->batch, (long long)p->opt[SSD_HEADS], (long long)p->opt[SSD_HEADDIM], (long long)p->dstate,
             (long long)p->opt[SSD_CHUNK], (long long)p->seqlen);
}

/* ------------------------------------------------------ calls into versions */

static BidirShape bidir_shape(const Problem *p) {
    BidirShape s = {problem_ssd_shape(p), p->opt[BIDIR_HYDRA]};
    return s;
}

static BidirTensors bidir_view(const Problem *p, void *const *t) {
    BidirTensors bt = {bidir_shape(p), t[T_X], t[T_DT], t[T_A], t[T_B], t[T_C], t[T_D], t[T_Z], t[T_DT_BIAS],
                       t[T_INITIAL_STATES], t[T_INITIAL_STATES_BWD], t[T_DT_BWD], t[T_B_BWD], t[T_C_BWD], t[T_Y]};
    return bt;
}

/* A chapter of this op lists BidirVersions, whose first member is the info. */
static const BidirVersion *bidir_version(const VersionInfo *v) { return (const BidirVersion *)v; }

static size_t bidir_workspace(const VersionInfo *v, const Problem *p) {
    BidirShape s = bidir_shape(p);
    return bidir_version(v)->workspace_bytes ? bidir_version(v)->workspace_bytes(&s) : 0;
}

static const char *bidir_unsupported(const VersionInfo *v, const Problem *p) {
    BidirShape s = bidir_shape(p);
    return bidir_version(v)->unsupported ? bidir_version(v)->unsupported(&s) : NULL;
}

static void bidir_run(const VersionInfo *v, const Problem *p, void *const *t, void *workspace) {
    BidirTensors bt = bidir_view(p, t);
    bidir_version(v)->run(&bt, workspace);
}

/* ------------------------------------------------------ inputs and oracle */

/* dt + dt_bias above 20 on every other head, as OP_SSD makes it; without a
 * bias Hydra's dt_bwd gets the same. */
static void bidir_big_delta(const Problem *p, void *const *t) {
    OP_SSD.big_delta(p, t);
    float *dt_bwd = t[T_DT_BWD];  // (b, L, h) fp32, NULL but in Hydra
    if (t[T_DT_BIAS] || !dt_bwd) return;
    for (int64_t hi = 0; hi < p->opt[SSD_HEADS]; hi += 2)
        for (int64_t bl = 0; bl < p->batch * p->seqlen; bl++) dt_bwd[bl * p->opt[SSD_HEADS] + hi] += 22.0f;
}

static void bidir_oracle(const Problem *p, void *const *t, double *const *ref) {
    BidirTensors bt = bidir_view(p, t);
    oracle_bidir(&bt, ref[T_Y], NULL);
}

/* y and Σ|term| per element of y: Σ_n |C_n h_n| of each direction plus
 * |D x|. The two directions can cancel (Hydra's shifted outputs are two
 * different steps' terms), and a kernel rounds each product of each
 * direction's C.h, not their sum. */
static void bidir_oracle_terms(const Problem *p, void *const *t, double *const *ref, double *terms) {
    BidirTensors bt = bidir_view(p, t);
    oracle_bidir(&bt, ref[T_Y], terms);
}
/* The 16-bit versions; the fp32 version keeps rtol of |y|, as 05's do. */
static bool bidir_terms_rtol(DType dt) { return dt != DT_FP32; }

/* Sampled validation on channels (b, h, p): y[b, :, h, p]. */
static int64_t bidir_rows(const Problem *p) { return p->batch * p->opt[SSD_HEADS] * p->opt[SSD_HEADDIM]; }

static CheckResult bidir_check_row(const Problem *p, void *const *t, int64_t row, Tol tol) {
    BidirTensors bt = bidir_view(p, t);
    int64_t L = p->seqlen, H = p->opt[SSD_HEADS], P = p->opt[SSD_HEADDIM];
    int64_t bi = row / (H * P), hi = row / P % H, pi = row % P;
    double *y = host_alloc(L * (int64_t)sizeof(double), "oracle channel");  // (L,) fp64
    double *terms = host_alloc(L * (int64_t)sizeof(double), "oracle magnitudes");  // (L,) fp64: Σ|term|
    float *got = host_alloc(L * (int64_t)sizeof(float), "channel output");  // (L,) fp32: y[bi, :, hi, pi]
    oracle_bidir_channel(&bt, bi, hi, pi, y, terms);
    for (int64_t l = 0; l < L; l++) got[l] = ((const float *)bt.y)[((bi * L + l) * H + hi) * P + pi];
    CheckResult r = compare_f32_scaled(got, y, terms, L, tol);
    free(y);
    free(terms);
    free(got);
    return r;
}

/* Per (b, t, h) and direction: exp(cum_t) and exp(cum_last - cum_t) as in
 * op_ssd.c, and softplus's exp once per dt (one dt in the default form, two
 * in Hydra): b * L * h * (4 + softplus (1 or 2)). */
static double bidir_exps(const Problem *p) {
    int dts = p->opt[BIDIR_HYDRA] ? 2 : 1;
    return (double)p->batch * p->seqlen * p->opt[SSD_HEADS] * (4 + (p->softplus ? dts : 0));
}

/* Matrix FLOPs of one chunk of q steps of the fused form, counted as
 * op_ssd.c counts the causal one (full squares, the masks after; the
 * derivation is in 06_bidirectional/cpu.c):
 *   C B^T          2 q^2 N per group, once (default: both triangles share
 *                  it) or twice (Hydra: C_bwd B_bwd^T is its own product)
 *   M X            2 q^2 p per head, once: both triangles are one q x q block
 *   chunk states   2 q N p per head and direction
 *   state outputs  2 q N p per head and direction */
static double chunk_flops(const Problem *p, double q) {
    int products = p->opt[BIDIR_HYDRA] ? 2 : 1;
    return products * p->groups * 2.0 * q * q * p->dstate + p->opt[SSD_HEADS] * 2.0 * q * q * p->opt[SSD_HEADDIM] +
           p->opt[SSD_HEADS] * 2.0 * (4.0 * q * p->dstate * p->opt[SSD_HEADDIM]);
}

static double bidir_flops(const Problem *p) {
    int64_t full = p->seqlen / p->opt[SSD_CHUNK], tail = p->seqlen % p->opt[SSD_CHUNK];
    return (double)p->batch * (full * chunk_flops(p, (double)p->opt[SSD_CHUNK]) + chunk_flops(p, (double)tail));
}

/* ---------------------------------------------------------------- --load */

/* OP_SSD's sizes and flags from the files, then the backward direction's. */
static void bidir_infer(Problem *p, const LoadFolder *f) {
    ssd_infer_sizes(p, f);
    if (f->given[T_INITIAL_STATES] != f->given[T_INITIAL_STATES_BWD])
        die_usage("--load: %s holds one of initial_states.npy and initial_states_bwd.npy: give both or neither",
                  f->dir);
    p->opt[BIDIR_HYDRA] = meta_bool(f, "shift", f->given[T_DT_BWD]);
    if (p->opt[BIDIR_HYDRA] && !(f->given[T_DT_BWD] && f->given[T_B_BWD] && f->given[T_C_BWD]))
        die_usage("--load: %s is the Hydra form (shift) but lacks dt_bwd.npy, B_bwd.npy or C_bwd.npy", f->dir);
    if (!p->opt[BIDIR_HYDRA] && (f->given[T_DT_BWD] || f->given[T_B_BWD] || f->given[T_C_BWD]))
        die_usage("--load: %s holds backward inputs (dt_bwd, B_bwd, C_bwd) but its meta.json says shift: false", f->dir);
}

static void bidir_meta_text(const Problem *p, char *buf, size_t len) {
    snprintf(buf, len, "{\"dt_softplus\": %s, \"shift\": %s, \"chunk_size\": %lld}", p->softplus ? "true" : "false",
             p->opt[BIDIR_HYDRA] ? "true" : "false", (long long)p->opt[SSD_CHUNK]);
}

/* ----------------------------------------------------------------- shapes */

/* Small and awkward (docs/design.md §3), both forms: L = 1, L = 2, L not a
 * multiple of the chunk, odd p and N, g > 1, D per channel, flags on and
 * off (softplus off with a bias), both initial states, dt + bias above 20
 * with and without a bias (then on dt and Hydra's dt_bwd), the S3 head shape. */
static const Problem CHECK_CASES[] = {
    {.batch = 1, .seqlen = 1, .dstate = 8, .groups = 1, .opt = {[SSD_HEADS] = 2, [SSD_HEADDIM] = 4, [SSD_CHUNK] = 16}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true},
    {.batch = 1, .seqlen = 1, .dstate = 8, .groups = 1, .opt = {[SSD_HEADS] = 2, [SSD_HEADDIM] = 4, [SSD_CHUNK] = 16, [BIDIR_HYDRA] = 1}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true},
    {.batch = 2, .seqlen = 2, .dstate = 5, .groups = 2, .opt = {[SSD_HEADS] = 4, [SSD_HEADDIM] = 3, [SSD_CHUNK] = 16}, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true},
    {.batch = 2, .seqlen = 2, .dstate = 5, .groups = 2, .opt = {[SSD_HEADS] = 4, [SSD_HEADDIM] = 3, [SSD_CHUNK] = 16, [BIDIR_HYDRA] = 1}, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true},
    {.batch = 2, .seqlen = 37, .dstate = 5, .groups = 2, .opt = {[SSD_HEADS] = 4, [SSD_HEADDIM] = 3, [SSD_CHUNK] = 16}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true},
    {.batch = 2, .seqlen = 37, .dstate = 5, .groups = 2, .opt = {[SSD_HEADS] = 4, [SSD_HEADDIM] = 3, [SSD_CHUNK] = 16, [BIDIR_HYDRA] = 1}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    {.batch = 2, .seqlen = 100, .dstate = 16, .groups = 1, .opt = {[SSD_HEADS] = 4, [SSD_HEADDIM] = 16, [SSD_CHUNK] = 32}, .has_D = true, .has_bias = true, .softplus = true, .D_per_channel = true},
    {.batch = 1, .seqlen = 333, .dstate = 20, .groups = 3, .opt = {[SSD_HEADS] = 6, [SSD_HEADDIM] = 24, [SSD_CHUNK] = 64}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .big_delta = true},
    {.batch = 1, .seqlen = 333, .dstate = 20, .groups = 3, .opt = {[SSD_HEADS] = 6, [SSD_HEADDIM] = 24, [SSD_CHUNK] = 64, [BIDIR_HYDRA] = 1}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true, .big_delta = true},
    {.batch = 1, .seqlen = 200, .dstate = 33, .groups = 1, .opt = {[SSD_HEADS] = 3, [SSD_HEADDIM] = 7, [SSD_CHUNK] = 128, [BIDIR_HYDRA] = 1}},
    {.batch = 2, .seqlen = 513, .dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 2, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true},
    {.batch = 2, .seqlen = 45, .dstate = 6, .groups = 2, .opt = {[SSD_HEADS] = 4, [SSD_HEADDIM] = 5, [SSD_CHUNK] = 16, [BIDIR_HYDRA] = 1}, .has_z = true, .has_D = true, .has_bias = true, .has_h0 = true, .D_per_channel = true},
    {.batch = 1, .seqlen = 70, .dstate = 9, .groups = 1, .opt = {[SSD_HEADS] = 4, [SSD_HEADDIM] = 6, [SSD_CHUNK] = 32, [BIDIR_HYDRA] = 1}, .has_D = true, .softplus = true, .big_delta = true},
    {.batch = 1, .seqlen = 70, .dstate = 9, .groups = 1, .opt = {[SSD_HEADS] = 4, [SSD_HEADDIM] = 6, [SSD_CHUNK] = 32}, .has_z = true, .has_D = true, .softplus = true, .has_h0 = true, .D_per_channel = true, .big_delta = true},
    /* p and N multiples of 8, where the bulk tensor copies run: one slab of N
     * with p 32 at chunk 64, z and D per channel, in both forms; two slabs,
     * the second part-filled, at chunk 128; Hydra with a 3-step tail chunk
     * and z. */
    {.batch = 2, .seqlen = 300, .dstate = 64, .groups = 2, .opt = {[SSD_HEADS] = 4, [SSD_HEADDIM] = 32, [SSD_CHUNK] = 64, [BIDIR_HYDRA] = 1}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true, .D_per_channel = true},
    {.batch = 2, .seqlen = 300, .dstate = 64, .groups = 2, .opt = {[SSD_HEADS] = 4, [SSD_HEADDIM] = 32, [SSD_CHUNK] = 64}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true, .D_per_channel = true},
    {.batch = 1, .seqlen = 333, .dstate = 96, .groups = 1, .opt = {[SSD_HEADS] = 2, [SSD_HEADDIM] = 48, [SSD_CHUNK] = 256}, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true},
    {.batch = 1, .seqlen = 259, .dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 2, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 128, [BIDIR_HYDRA] = 1}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true},
};

/* Benchmark sets (docs/design.md §7): S3 in each form. */
static const BenchGrid BENCH[] = {
    {.base = {.dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 32, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, .has_D = true, .has_bias = true, .softplus = true},
     .batch = {1, 8}, .seqlen = {512, 1024, 2048, 4096, 8192, 16384}},
    {.base = {.dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 32, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256, [BIDIR_HYDRA] = 1}, .has_D = true, .has_bias = true, .softplus = true},
     .batch = {1, 8}, .seqlen = {512, 1024, 2048, 4096, 8192, 16384}},
};
static const BenchGrid QUICK[] = {
    {.base = {.dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 32, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, .has_D = true, .has_bias = true, .softplus = true},
     .batch = {8}, .seqlen = {8192}},
    {.base = {.dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 32, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256, [BIDIR_HYDRA] = 1}, .has_D = true, .has_bias = true, .softplus = true},
     .batch = {8}, .seqlen = {8192}},
};

static const OpFlag BIDIR_FLAGS[] = {
    SSD_FLAG_ROWS,
    {"--hydra", "the Hydra form (default: both forms at the built-in shapes, the default form at sizes given)",
     OPT_SWITCH, BIDIR_HYDRA, NULL, false, true, false, "hydra"},
};

const Op OP_BIDIR = {
    .args = ARGS_BIDIR,
    .version_size = sizeof(BidirVersion),
    .tol_fp32 = &TOLERANCES[TOL_FP32],
    .tol_fp16 = &TOLERANCES[TOL_FP16],
    .tol_bf16 = &TOLERANCES[TOL_BF16],
    .flags = BIDIR_FLAGS, .nflags = COUNT(BIDIR_FLAGS),
    .csv_columns = MAMBA_CSV_COLUMNS,
    .csv_sizes = ssd_csv_sizes,
    .tensors = bidir_tensors,
    .validate = bidir_validate,
    .shape_text = bidir_shape_text,
    .bench_text = bidir_bench_text,
    .workspace = bidir_workspace,
    .unsupported = bidir_unsupported,
    .run = bidir_run,
    .big_delta = bidir_big_delta,
    .oracle = bidir_oracle,
    .oracle_terms = bidir_oracle_terms,
    .terms_output = T_Y,
    .terms_rtol = bidir_terms_rtol,
    .rows = bidir_rows,
    .check_row = bidir_check_row,
    .exps = bidir_exps,
    .flops = bidir_flops,
    .infer = bidir_infer,
    .meta_text = bidir_meta_text,
    .fixtures = fixtures_check_bidir,
    .check_cases = CHECK_CASES, .ncheck = COUNT(CHECK_CASES),
    .check_base = SSD_CHECK_BASE,
    .bench_base = SSD_BENCH_BASE,
    .bench = BENCH, .nbench = COUNT(BENCH),
    .quick = QUICK, .nquick = COUNT(QUICK),
};
