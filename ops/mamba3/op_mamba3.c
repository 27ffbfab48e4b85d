/* Mamba-3 SISO as an operation of the driver core (chapter 08):
 * mamba3_siso_combined's tensors in the official names and layouts, random
 * inputs in the official tests' ranges, the oracle, the check and benchmark
 * shapes, and the calls into a Mamba3Version. A packed problem (--seqlens)
 * adds cu_seqlens and four initial and final states per sequence. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_mamba3.h"
#include "op_scan.h"
#include "slots.h"

#define CHUNK 64  // the official kernel's chunk; the check cases vary it
/* The conventions, in the words of the official fixtures' meta.json. */
static const char ROTATION[] = "interleaved pairs (2i, 2i+1), i < headdim_angles";
static const char TRAP[] = "pre-sigmoid";
static const char ANGLES[] = "raw: theta += pi*tanh(Angles)*DT, mod 2 pi";

/* The tensors in table order: inputs (random ones are drawn in this order), then outputs. */
enum { T_Q, T_K, T_V, T_Z, T_ADT, T_DT, T_TRAP, T_Q_BIAS, T_K_BIAS, T_ANGLES, T_D, T_ANGLE_STATE, T_SSM_STATE,
       T_K_STATE, T_V_STATE, T_CU_SEQLENS, T_STATE_BATCH_INDICES, T_Y, T_FINAL_ANGLE, T_FINAL_SSM, T_FINAL_K,
       T_FINAL_V, N_TENSORS };

/* Uniform draws in the ranges the official tests' inputs fall in, a little
 * wider: a decay α = exp(adt) in (0.24, 1), a step dt of 0.001..0.1, λ =
 * σ(trap) in (0.12, 0.88), angle rates of a few radians. */
static int m3_tensors(const Problem *p, TensorSpec *t) {
    const int64_t b = p->batch, L = p->seqlen, h = p->opt[M3_HEADS], P = p->opt[M3_HEADDIM], g = p->groups,
                  N = p->dstate, S = p->opt[M3_ANGLES];
    const int64_t n = p->opt[M3_SLOTS] ? p->opt[M3_SLOTS] : p->nseq ? p->nseq : b;  // n: a pool's slots, or a state a sequence
    const bool st = p->has_h0;
    //                                   name                 role            dtype          present      range          shape          finite
    t[T_Q]           = (TensorSpec){"Q",                 INPUT,          VERSION_DTYPE, true,        -1.5, 1.5,     4, {b, L, g, N}, false};
    t[T_K]           = (TensorSpec){"K",                 INPUT,          VERSION_DTYPE, true,        -1.5, 1.5,     4, {b, L, g, N}, false};
    t[T_V]           = (TensorSpec){"V",                 INPUT,          VERSION_DTYPE, true,        -1.5, 1.5,     4, {b, L, h, P}, false};
    t[T_Z]           = (TensorSpec){"Z",                 OPTIONAL_INPUT, VERSION_DTYPE, p->has_z,    -2.0, 2.0,     4, {b, L, h, P}, false};
    t[T_ADT]         = (TensorSpec){"ADT",               INPUT,          ALWAYS_FP32,   true,        -1.4, -0.001,  3, {b, h, L}, true};
    t[T_DT]          = (TensorSpec){"DT",                INPUT,          ALWAYS_FP32,   true,        0.001, 0.1,    3, {b, h, L}, false};
    t[T_TRAP]        = (TensorSpec){"Trap",              INPUT,          ALWAYS_FP32,   true,        -2.0, 2.0,     3, {b, h, L}, false};
    t[T_Q_BIAS]      = (TensorSpec){"Q_bias",            INPUT,          ALWAYS_FP32,   true,        -1.0, 1.0,     2, {h, N}, false};
    t[T_K_BIAS]      = (TensorSpec){"K_bias",            INPUT,          ALWAYS_FP32,   true,        -1.0, 1.0,     2, {h, N}, false};
    t[T_ANGLES]      = (TensorSpec){"Angles",            INPUT,          ALWAYS_FP32,   true,        -3.0, 3.0,     4, {b, L, h, S}, false};
    t[T_D]           = (TensorSpec){"D",                 OPTIONAL_INPUT, ALWAYS_FP32,   p->has_D,    0.0, 2.0,      1, {h}, false};
    t[T_ANGLE_STATE] = (TensorSpec){"angle_state",       OPTIONAL_INPUT, ALWAYS_FP32,   st,          0.0, 6.28,     3, {n, h, S}, false};
    t[T_SSM_STATE]   = (TensorSpec){"ssm_state",         OPTIONAL_INPUT, STATE_DTYPE,   st,          -1.0, 1.0,     4, {n, h, P, N}, false};
    t[T_K_STATE]     = (TensorSpec){"k_state",           OPTIONAL_INPUT, ALWAYS_FP32,   st,          -2.0, 2.0,     3, {n, h, N}, false};
    t[T_V_STATE]     = (TensorSpec){"v_state",           OPTIONAL_INPUT, ALWAYS_FP32,   st,          -2.0, 2.0,     3, {n, h, P}, false};
    t[T_CU_SEQLENS]  = (TensorSpec){"cu_seqlens",        OPTIONAL_INPUT, INDEX_INT32,   p->nseq > 0, 0.0, 0.0,      1, {p->nseq + 1}, false};
    t[T_STATE_BATCH_INDICES] = (TensorSpec){"state_batch_indices", OPTIONAL_INPUT, INDEX_INT32, p->opt[M3_SLOTS] > 0, 0.0, 0.0, 1, {b}, false};
    t[T_Y]           = (TensorSpec){"out",               OUTPUT,         VERSION_DTYPE, true,        0.0, 0.0,      4, {b, L, h, P}, false};
    t[T_FINAL_ANGLE] = (TensorSpec){"final_angle_state", OUTPUT,         ALWAYS_FP32,   true,        0.0, 0.0,      3, {n, h, S}, false};
    t[T_FINAL_SSM]   = (TensorSpec){"final_ssm_state",   OUTPUT,         STATE_DTYPE,   true,        0.0, 0.0,      4, {n, h, P, N}, false};
    t[T_FINAL_K]     = (TensorSpec){"final_k_state",     OUTPUT,         ALWAYS_FP32,   true,        0.0, 0.0,      3, {n, h, N}, false};
    t[T_FINAL_V]     = (TensorSpec){"final_v_state",     OUTPUT,         ALWAYS_FP32,   true,        0.0, 0.0,      3, {n, h, P}, false};
    return N_TENSORS;
}

static void m3_validate(const Problem *p) {
    const int64_t h = p->opt[M3_HEADS], S = p->opt[M3_ANGLES];
    if (h % p->groups != 0)
        die_usage("--heads %lld is not a multiple of --groups %lld (the qk heads)", (long long)h, (long long)p->groups);
    if (2 * S > p->dstate)
        die_usage("--angles %lld rotates %lld dims, more than --dstate %lld", (long long)S, (long long)(2 * S),
                  (long long)p->dstate);
    const int64_t Q = p->opt[M3_CHUNK];
    if (Q < 16 || Q > 256 || (Q & (Q - 1)) != 0) die_usage("--chunk %lld is not a power of two in 16..256", (long long)Q);
    const long long slots = p->opt[M3_SLOTS];
    if (slots && !p->has_h0) die_usage("--slots %lld: a pool holds the four states: give them with --h0", slots);
    if (slots && p->nseq) die_usage("--slots %lld: a pool's entries are batch entries, not with --seqlens", slots);
    if (slots && slots < p->batch)
        die_usage("--slots %lld: a pool holds at least one slot per batch entry (--batch %lld)", slots,
                  (long long)p->batch);
    if (slots > INT32_MAX) die_usage("--slots %lld: more than state_batch_indices (int32) can name", slots);
    packed_validate(p);
}

static void m3_shape_text(const Problem *p, char *buf, size_t len) {
    snprintf(buf, len, "b%lld L%lld h%lld g%lld p%lld N%lld S%lld Q%lld", (long long)p->batch, (long long)p->seqlen,
             (long long)p->opt[M3_HEADS], (long long)p->groups, (long long)p->opt[M3_HEADDIM], (long long)p->dstate,
             (long long)p->opt[M3_ANGLES], (long long)p->opt[M3_CHUNK]);
}

static void m3_bench_text(const Problem *p, char *buf, size_t len) {
    int n = snprintf(buf, len, "b%-3lld h%-3lld p%-3lld N%-3lld S%-3lld L%-6lld", (long long)p->batch,
                     (long long)p->opt[M3_HEADS], (long long)p->opt[M3_HEADDIM], (long long)p->dstate,
                     (long long)p->opt[M3_ANGLES], (long long)p->seqlen);
    if (p->nseq && n > 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, " in %lld seqs", (long long)p->nseq);
}

/* The CSV's size columns (MAMBA_CSV_COLUMNS): groups are the qk heads. */
static int m3_csv_sizes(const Problem *p, int64_t *v) {
    return mamba_csv_sizes(p, p->opt[M3_HEADS], p->opt[M3_HEADDIM], p->opt[M3_CHUNK], v);
}

/* ------------------------------------------------------ calls into versions */

static Mamba3Shape m3_shape(const Problem *p) {
    Mamba3Shape s = {p->batch, p->seqlen, p->opt[M3_HEADS], p->groups, p->opt[M3_HEADDIM], p->dstate,
                     p->opt[M3_ANGLES], p->opt[M3_CHUNK], p->has_z, p->has_D, p->has_h0, p->nseq};
    return s;
}

static Mamba3Tensors m3_view(const Problem *p, void *const *t) {
    Mamba3Tensors m = {m3_shape(p), t[T_Q], t[T_K], t[T_V], t[T_Z], t[T_ADT], t[T_DT], t[T_TRAP], t[T_Q_BIAS],
                       t[T_K_BIAS], t[T_ANGLES], t[T_D], t[T_ANGLE_STATE], t[T_SSM_STATE], t[T_K_STATE],
                       t[T_V_STATE], t[T_CU_SEQLENS], t[T_Y], t[T_FINAL_ANGLE], t[T_FINAL_SSM], t[T_FINAL_K],
                       t[T_FINAL_V]};
    return m;
}

static Mamba3Pool m3_pool_view(const Problem *p, void *const *t) {
    Mamba3Pool pool = {m3_view(p, t), p->opt[M3_SLOTS], t[T_STATE_BATCH_INDICES]};
    return pool;
}

/* A chapter of this op lists Mamba3Versions, whose first member is the info. */
static const Mamba3Version *m3_version(const VersionInfo *v) { return (const Mamba3Version *)v; }

static size_t m3_workspace(const VersionInfo *v, const Problem *p) {
    Mamba3Shape s = m3_shape(p);
    return m3_version(v)->workspace_bytes ? m3_version(v)->workspace_bytes(&s) : 0;
}

static const char *m3_unsupported(const VersionInfo *v, const Problem *p) {
    if (p->opt[M3_SLOTS] && !m3_version(v)->run_pool) return "takes no pool of state slots";
    Mamba3Shape s = m3_shape(p);
    return m3_version(v)->unsupported ? m3_version(v)->unsupported(&s) : NULL;
}

static void m3_run(const VersionInfo *v, const Problem *p, void *const *t, void *workspace) {
    if (p->opt[M3_SLOTS]) {
        Mamba3Pool pool = m3_pool_view(p, t);
        m3_version(v)->run_pool(&pool, workspace);
        return;
    }
    Mamba3Tensors m = m3_view(p, t);
    m3_version(v)->run(&m, workspace);
}

/* ------------------------------------------------------ oracle and checks */

static void m3_indices(const Problem *p, void *const *t) {
    cu_seqlens_fill(p, t[T_CU_SEQLENS]);
    if (t[T_STATE_BATCH_INDICES]) slot_indices_fill(t[T_STATE_BATCH_INDICES], p->batch, p->opt[M3_SLOTS]);
}

static void m3_from_loaded(Problem *p, void *const *t) {
    if (t[T_CU_SEQLENS]) cu_seqlens_check(p, t[T_CU_SEQLENS]);
    if (t[T_STATE_BATCH_INDICES]) slot_indices_check(t[T_STATE_BATCH_INDICES], p->batch, p->opt[M3_SLOTS]);
}

/* ref, and y's terms' magnitude in y_terms unless NULL (Op.oracle_terms). */
static void m3_oracle_terms(const Problem *p, void *const *t, double *const *ref, double *y_terms) {
    Mamba3Pool pool = m3_pool_view(p, t);
    oracle_mamba3(&pool, ref[T_Y], ref[T_FINAL_ANGLE], ref[T_FINAL_SSM], ref[T_FINAL_K], ref[T_FINAL_V], y_terms);
}

static void m3_oracle(const Problem *p, void *const *t, double *const *ref) { m3_oracle_terms(p, t, ref, NULL); }

/* The 16-bit versions round q̃, k̃, the weighted scores and the entering
 * state before their products: each term of y carries its own rounding, so
 * y's error grows with its terms' Σ|term|, and an output that cancels to
 * near zero keeps it. The states are fp32 sums: rtol of their magnitude. */
static bool m3_terms_rtol(DType dt) { return dt != DT_FP32; }

/* Rows are (sequence, head) pairs: each is its own recurrence. */
static int64_t m3_rows(const Problem *p) { return (p->nseq ? p->nseq : p->batch) * p->opt[M3_HEADS]; }

/* Row (n, h): its outputs and its four final states against the oracle's. */
static CheckResult m3_check_row(const Problem *p, void *const *t, int64_t row, Tol tol) {
    const Mamba3Pool pool = m3_pool_view(p, t);
    const Mamba3Tensors m = pool.t;
    const int64_t L = p->seqlen, H = p->opt[M3_HEADS], P = p->opt[M3_HEADDIM], N = p->dstate, S = p->opt[M3_ANGLES];
    const int64_t n = row / H, h = row % H, nfin = S + P * N + N + P;
    int64_t r, t0, t1;
    mamba3_sequence(&m, n, &r, &t0, &t1);
    double *y = host_alloc((t1 - t0) * P * 8, "oracle row");      // (len, p) fp64
    double *terms = host_alloc((t1 - t0) * P * 8, "oracle row");  // (len, p) fp64: y's Σ|term|
    double *fin = host_alloc(nfin * 8, "oracle row");             // angle, ssm, k, v fp64
    float *got = host_alloc(((t1 - t0) * P + nfin) * 4, "row");   // the same, the version's, fp32
    oracle_mamba3_head(&pool, n, h, y, fin, fin + S, fin + S + P * N, fin + S + P * N + N, terms);
    for (int64_t l = t0; l < t1; l++)
        for (int64_t pi = 0; pi < P; pi++) got[(l - t0) * P + pi] = ((const float *)m.y)[((r * L + l) * H + h) * P + pi];
    float *g = got + (t1 - t0) * P;
    const int64_t state = mamba3_state_of(&pool, n), o = state * H + h;  // a pool's padding entry: no state
    for (int64_t i = 0; state >= 0 && i < S; i++) g[i] = m.final_angle_state[o * S + i];
    for (int64_t i = 0; state >= 0 && i < P * N; i++) g[S + i] = m.final_ssm_state[o * P * N + i];
    for (int64_t i = 0; state >= 0 && i < N; i++) g[S + P * N + i] = m.final_k_state[o * N + i];
    for (int64_t i = 0; state >= 0 && i < P; i++) g[S + P * N + N + i] = m.final_v_state[o * P + i];
    CheckResult res = compare_f32_scaled(got, y, tol.of_terms ? terms : NULL, (t1 - t0) * P, tol);
    if (state >= 0) res = check_merge(res, compare_f32(g, fin, nfin, tol));
    free(y);
    free(terms);
    free(fin);
    free(got);
    return res;
}

/* Per (b, t, h): exp(adt) and σ(trap)'s exp, then tanh, cos and sin of each
 * angle pair; per (b, t, h, p) silu's exp when z is given. */
static double m3_exps(const Problem *p) {
    const double bth = (double)p->batch * p->seqlen * p->opt[M3_HEADS];
    return bth * (2.0 + 3.0 * p->opt[M3_ANGLES]) + (p->has_z ? bth * p->opt[M3_HEADDIM] : 0.0);
}

/* ---------------------------------------------------------------- --load */

static void m3_infer(Problem *p, const LoadFolder *f) {
    const NpyShape *q = folder_shape(f, T_Q), *v = folder_shape(f, T_V), *a = folder_shape(f, T_ANGLES);
    if (q->ndim != 4 || v->ndim != 4 || a->ndim != 4)
        die_usage("--load: %s: Q, V and Angles must be (batch, seqlen, heads, dim)", f->dir);
    p->batch = q->shape[0];
    p->seqlen = q->shape[1];
    p->groups = q->shape[2];
    p->dstate = q->shape[3];
    p->opt[M3_HEADS] = v->shape[2];
    p->opt[M3_HEADDIM] = v->shape[3];
    p->opt[M3_ANGLES] = a->shape[3];
    p->opt[M3_CHUNK] = meta_int(f, "chunk_size", CHUNK);
    /* The official fixtures' meta.json also names the sizes and the conventions:
     * where it does, they must be these files' and this oracle's. */
    const struct { const char *key; int64_t size; } SIZES[] = {
        {"nheads_qk", p->groups}, {"nheads", p->opt[M3_HEADS]}, {"headdim_qk", p->dstate},
        {"headdim_v", p->opt[M3_HEADDIM]}, {"headdim_angles", p->opt[M3_ANGLES]}};
    for (size_t i = 0; i < sizeof(SIZES) / sizeof(SIZES[0]); i++)
        if (meta_int(f, SIZES[i].key, SIZES[i].size) != SIZES[i].size)
            die_usage("--load: %s/meta.json: %s %lld, the files give %lld", f->dir, SIZES[i].key,
                      (long long)meta_int(f, SIZES[i].key, 0), (long long)SIZES[i].size);
    const struct { const char *key, *want; } CONVENTIONS[] = {
        {"rotation", ROTATION}, {"trap", TRAP}, {"angles", ANGLES}};
    for (size_t i = 0; i < sizeof(CONVENTIONS) / sizeof(CONVENTIONS[0]); i++) {
        const char *got = meta_string(f, CONVENTIONS[i].key);
        if (got && strcmp(got, CONVENTIONS[i].want) != 0)
            die_usage("--load: %s/meta.json: %s \"%s\", this program computes \"%s\"", f->dir,
                      CONVENTIONS[i].key, got, CONVENTIONS[i].want);
    }
    if (p->opt[M3_HEADS] % p->groups != 0 || 2 * p->opt[M3_ANGLES] > p->dstate)
        die_usage("--load: %s: %lld qk heads of %lld heads, %lld angles of N %lld", f->dir, (long long)p->groups,
                  (long long)p->opt[M3_HEADS], (long long)p->opt[M3_ANGLES], (long long)p->dstate);
    p->has_z = f->given[T_Z];
    p->has_D = f->given[T_D];
    const int states = f->given[T_ANGLE_STATE] + f->given[T_SSM_STATE] + f->given[T_K_STATE] + f->given[T_V_STATE];
    if (states != 0 && states != 4)
        die_usage("--load: %s: the four initial states come together (angle_state, ssm_state, k_state, v_state): "
                  "%d of 4 given", f->dir, states);
    p->has_h0 = states == 4;
    if (f->given[T_STATE_BATCH_INDICES]) {  // a pool: its slots are the states' first dimension
        if (!p->has_h0) die_usage("--load: %s: state_batch_indices names slots of a pool the folder lacks (its four states)", f->dir);
        const NpyShape *pool = folder_shape(f, T_SSM_STATE);
        if (pool->ndim != 4)
            die_usage("--load: %s: ssm_state.npy must be (slots, heads, headdim, dstate), not %d-dimensional", f->dir,
                      pool->ndim);
        if (pool->shape[0] < p->batch)
            die_usage("--load: %s: ssm_state.npy holds %lld slots, fewer than the batch's %lld entries", f->dir,
                      (long long)pool->shape[0], (long long)p->batch);
        p->opt[M3_SLOTS] = pool->shape[0];
    }
    packed_infer(p, f, T_CU_SEQLENS);
}

static void m3_meta_text(const Problem *p, char *buf, size_t len) {
    snprintf(buf, len, "{\"chunk_size\": %lld, \"rotation\": \"%s\", \"trap\": \"%s\", \"angles\": \"%s\"}",
             (long long)p->opt[M3_CHUNK], ROTATION, TRAP, ANGLES);
}

/* ----------------------------------------------------------------- shapes */


static const int64_t SEQS_MIX[] = {5, 1, 40, 17};             // 63 tokens
static const int64_t SEQS_EDGES[] = {16, 32, 15, 1, 17, 40};  // 121 tokens

/* Small and awkward: L 1, 37 and 4097, qk heads shared by 1, 2 or 4 heads,
 * S below and at N/2, p not a multiple of the GPU version's 4 warps and N
 * odd and over a warp's 32 lanes, with and without z, D and the states,
 * packed rows, and a pool of state slots (one step and 37, padding entries
 * and slots no entry names). */
static const Problem CHECK_CASES[] = {
    {.batch = 1, .seqlen = 1, .dstate = 8, .groups = 1, .opt = {[M3_HEADS] = 2, [M3_HEADDIM] = 4, [M3_ANGLES] = 2, [M3_CHUNK] = CHUNK}, .has_z = true, .has_D = true, .has_h0 = true},
    {.batch = 2, .seqlen = 37, .dstate = 16, .groups = 2, .opt = {[M3_HEADS] = 4, [M3_HEADDIM] = 8, [M3_ANGLES] = 4, [M3_CHUNK] = 16}, .has_z = true, .has_D = true, .has_h0 = true},
    {.batch = 1, .seqlen = 70, .dstate = 8, .groups = 1, .opt = {[M3_HEADS] = 3, [M3_HEADDIM] = 4, [M3_ANGLES] = 4, [M3_CHUNK] = CHUNK}},
    {.batch = 2, .seqlen = 333, .dstate = 32, .groups = 4, .opt = {[M3_HEADS] = 4, [M3_HEADDIM] = 16, [M3_ANGLES] = 8, [M3_CHUNK] = 32}, .has_z = true, .has_D = true},
    {.batch = 1, .seqlen = 50, .dstate = 65, .groups = 1, .opt = {[M3_HEADS] = 3, [M3_HEADDIM] = 5, [M3_ANGLES] = 16, [M3_CHUNK] = 16}, .has_z = true, .has_D = true, .has_h0 = true},
    {.batch = 1, .seqlen = 4097, .dstate = 16, .groups = 1, .opt = {[M3_HEADS] = 2, [M3_HEADDIM] = 8, [M3_ANGLES] = 8, [M3_CHUNK] = CHUNK}, .has_z = true, .has_D = true, .has_h0 = true},
    {.batch = 1, .seqlen = 63, .dstate = 8, .groups = 1, .opt = {[M3_HEADS] = 2, [M3_HEADDIM] = 4, [M3_ANGLES] = 2, [M3_CHUNK] = CHUNK}, .has_z = true, .has_D = true, .has_h0 = true, .nseq = 4, .seqlens = SEQS_MIX},
    {.batch = 1, .seqlen = 121, .dstate = 16, .groups = 2, .opt = {[M3_HEADS] = 4, [M3_HEADDIM] = 8, [M3_ANGLES] = 4, [M3_CHUNK] = 16}, .has_z = true, .has_h0 = true, .nseq = 6, .seqlens = SEQS_EDGES},
    {.batch = 5, .seqlen = 1, .dstate = 16, .groups = 1, .opt = {[M3_HEADS] = 2, [M3_HEADDIM] = 4, [M3_ANGLES] = 4, [M3_CHUNK] = CHUNK, [M3_SLOTS] = 8}, .has_D = true, .has_h0 = true},
    {.batch = 4, .seqlen = 37, .dstate = 16, .groups = 2, .opt = {[M3_HEADS] = 4, [M3_HEADDIM] = 8, [M3_ANGLES] = 4, [M3_CHUNK] = 16, [M3_SLOTS] = 6}, .has_z = true, .has_D = true, .has_h0 = true},
};

/* Benchmark sets: S6, the official Mamba-3 timing's shape (bf16 there). */
#define S6_BASE {.dstate = 128, .groups = 1, .opt = {[M3_HEADS] = 32, [M3_HEADDIM] = 64, [M3_ANGLES] = 32, [M3_CHUNK] = CHUNK}, .has_z = true, .has_D = true}
/* S6's step: one token from the four states, no z (the official step's call). */
#define S6_STEP_BASE {.dstate = 128, .groups = 1, .opt = {[M3_HEADS] = 32, [M3_HEADDIM] = 64, [M3_ANGLES] = 32, [M3_CHUNK] = CHUNK}, .has_D = true, .has_h0 = true}
/* S6 serving: the mix of ops/scan packed, each request from its four states; one sequence of its tokens. */
#define S6_SERVING_BASE(packed) {.dstate = 128, .groups = 1, .opt = {[M3_HEADS] = 32, [M3_HEADDIM] = 64, [M3_ANGLES] = 32, [M3_CHUNK] = CHUNK}, .has_z = true, .has_D = true, .has_h0 = true, .nseq = (packed) ? SERVING_MIX_SEQS : 0, .seqlens = (packed) ? SERVING_MIX : NULL}
static const BenchGrid BENCH[] = {
    {.base = S6_BASE, .batch = {1, 8}, .seqlen = {2048, 8192}},
    {.base = S6_STEP_BASE, .batch = {1, 64, 256}, .seqlen = {1}},
    {.base = S6_SERVING_BASE(1), .batch = {1}, .seqlen = {SERVING_MIX_TOKENS}},
    {.base = S6_SERVING_BASE(0), .batch = {1}, .seqlen = {SERVING_MIX_TOKENS}},
};
static const BenchGrid QUICK[] = {{.base = S6_BASE, .batch = {1}, .seqlen = {512}}};

/* The chunked form's products a chunk of Q steps and a head: the scores q̃·k̃ (Q² N,
 * the causal half counted whole, as a tensor core computes it), scores·V (Q² p), the
 * chunk's state V K̃ᵀ (Q p N) and y from the state entering it (Q p N); 2 FLOPs a
 * multiply-add. A problem shorter than Q has chunks of its length. */
static double m3_flops(const Problem *p) {
    const double L = (double)p->seqlen, Q = p->opt[M3_CHUNK] < p->seqlen ? (double)p->opt[M3_CHUNK] : L;
    const double N = (double)p->dstate, P = (double)p->opt[M3_HEADDIM];
    return 2.0 * (double)p->batch * (double)p->opt[M3_HEADS] * L * (Q * (N + P) + 2.0 * P * N);
}

/* The step (one token from the four states) in place, the SSM state's
 * output over its input, as a server runs it: a version that can be captured
 * is timed back to back, launched one by one and as a CUDA graph. The other
 * three states are a few hundred bytes a head and keep their own outputs. */
static bool m3_loops(const VersionInfo *v, const Problem *p) {
    return m3_version(v)->graph && p->seqlen == 1 && p->has_h0 && !p->nseq;
}

/* Versions that can be captured are built for the per-thread default stream. */
static bool m3_per_thread(const VersionInfo *v) { return m3_version(v)->graph; }

static const OpFlag M3_FLAGS[] = {
    {"--heads", "H  heads (of v, z, y; --groups is the qk heads)", OPT_SIZE, M3_HEADS, NULL, true, false, true, NULL},
    {"--headdim", "P  head dimension of v", OPT_SIZE, M3_HEADDIM, NULL, true, false, false, NULL},
    {"--angles", "S  rotated pairs of q and k (2S <= N)", OPT_SIZE, M3_ANGLES, NULL, true, false, false, NULL},
    {"--chunk", "Q  chunk of the chunked forms (a power of two, 16..256)", OPT_SIZE, M3_CHUNK, NULL, true, false, false, NULL},
    {"--slots", "S  the four states in a pool of S slots (with --h0), each batch entry naming its own", OPT_SIZE,
     M3_SLOTS, NULL, true, false, false, "slots"},
};

const Op OP_MAMBA3 = {
    .args = ARGS_MAMBA3,
    .tol_fp32 = &TOLERANCES[TOL_FP32],
    .tol_fp16 = &TOLERANCES[TOL_FP16],
    .tol_bf16 = &TOLERANCES[TOL_BF16],
    .flags = M3_FLAGS, .nflags = COUNT(M3_FLAGS),
    .csv_columns = MAMBA_CSV_COLUMNS,
    .csv_sizes = m3_csv_sizes,
    .version_size = sizeof(Mamba3Version),
    .tensors = m3_tensors,
    .validate = m3_validate,
    .shape_text = m3_shape_text,
    .bench_text = m3_bench_text,
    .workspace = m3_workspace,
    .unsupported = m3_unsupported,
    .run = m3_run,
    .indices = m3_indices,
    .from_loaded = m3_from_loaded,
    .oracle = m3_oracle,
    .oracle_terms = m3_oracle_terms,
    .terms_output = T_Y,
    .terms_rtol = m3_terms_rtol,
    .rows = m3_rows,
    .check_row = m3_check_row,
    .exps = m3_exps,
    .flops = m3_flops,
    .infer = m3_infer,
    .meta_text = m3_meta_text,
    .fixtures = fixtures_check_mamba3,
    .loops = m3_loops,
    .loop_output = T_FINAL_SSM,
    .loop_input = T_SSM_STATE,
    .per_thread = m3_per_thread,
    .check_cases = CHECK_CASES, .ncheck = COUNT(CHECK_CASES),
    .check_base = {.batch = 2, .seqlen = 100, .dstate = 16, .groups = 1, .opt = {[M3_HEADS] = 4, [M3_HEADDIM] = 8, [M3_ANGLES] = 4, [M3_CHUNK] = CHUNK}, .has_z = true, .has_D = true},
    .bench_base = {.batch = 1, .seqlen = 2048, .dstate = 128, .groups = 1, .opt = {[M3_HEADS] = 32, [M3_HEADDIM] = 64, [M3_ANGLES] = 32, [M3_CHUNK] = CHUNK}, .has_z = true, .has_D = true},
    .bench = BENCH, .nbench = COUNT(BENCH),
    .quick = QUICK, .nquick = COUNT(QUICK),
};
