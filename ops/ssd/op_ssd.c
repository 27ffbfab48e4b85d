/* Mamba-2's SSD as an operation of the driver core (chapter 05 on):
 * mamba_chunk_scan_combined's tensors, random inputs in the official tests'
 * ranges, the oracle, the exp and FLOP counts of the chunked form, the check
 * and benchmark shapes, and the calls into an SsdVersion. A packed problem
 * (--seqlens) adds cu_seqlens, one initial and final state per sequence and
 * the state after every chunk of every sequence (SsdPacked, ssd.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "op_ssd.h"

/* The tensors in table order: inputs (random ones are drawn in this order), then outputs. */
enum { T_X, T_DT, T_A, T_B, T_C, T_D, T_Z, T_DT_BIAS, T_INITIAL_STATES, T_CU_SEQLENS, T_Y, T_FINAL_STATE,
       T_CHUNK_STATES, N_TENSORS };

/* Chunks of a packed problem over every sequence, each cut at its own start:
 * Σ ceil(length / chunk); from --load, what cu_seqlens gave. */
static int64_t packed_chunks(const Problem *p) {
    if (!p->seqlens) return p->opt[SSD_NCHUNKS];
    const int64_t Q = p->opt[SSD_CHUNK];
    int64_t n = 0;
    for (int64_t k = 0; k < p->nseq; k++) n += (p->seqlens[k] + Q - 1) / Q;
    return n;
}

/* Ranges of the official tests: A < 0, softplus(dt + dt_bias) a step of
 * about 0.02..0.5. Without softplus dt + dt_bias is the step itself and is
 * drawn above 0, as the official tests draw it. */
static int ssd_tensors(const Problem *p, TensorSpec *t) {
    int64_t b = p->batch, L = p->seqlen, h = p->opt[SSD_HEADS], P = p->opt[SSD_HEADDIM], g = p->groups, N = p->dstate;
    int64_t S = p->nseq ? p->nseq : b;  // initial and final states: one a sequence
    bool sp = p->softplus;
    //                                    name              role            dtype          present      range                               shape           finite
    t[T_X]              = (TensorSpec){"x",              INPUT,          VERSION_DTYPE, true,        -1.5, 1.5,                          4, {b, L, h, P}, false};
    t[T_DT]             = (TensorSpec){"dt",             INPUT,          VERSION_DTYPE, true,        sp ? 0.0 : 0.01, 0.5,               3, {b, L, h}, false};
    t[T_A]              = (TensorSpec){"A",              INPUT,          ALWAYS_FP32,   true,        -4.0, -0.5,                         1, {h}, true};
    t[T_B]              = (TensorSpec){"B",              INPUT,          VERSION_DTYPE, true,        -1.5, 1.5,                          4, {b, L, g, N}, false};
    t[T_C]              = (TensorSpec){"C",              INPUT,          VERSION_DTYPE, true,        -1.5, 1.5,                          4, {b, L, g, N}, false};
    t[T_D]              = (TensorSpec){"D",              OPTIONAL_INPUT, ALWAYS_FP32,   p->has_D,    -1.0, 1.0,                          1, {h}, false};
    t[T_Z]              = (TensorSpec){"z",              OPTIONAL_INPUT, VERSION_DTYPE, p->has_z,    -2.0, 2.0,                          4, {b, L, h, P}, false};
    t[T_DT_BIAS]        = (TensorSpec){"dt_bias",        OPTIONAL_INPUT, ALWAYS_FP32,   p->has_bias, sp ? -4.0 : 0.0, sp ? -1.0 : 0.1,   1, {h}, false};
    t[T_INITIAL_STATES] = (TensorSpec){"initial_states", OPTIONAL_INPUT, ALWAYS_FP32,   p->has_h0,   -1.0, 1.0,                          4, {S, h, P, N}, false};
    t[T_CU_SEQLENS]     = (TensorSpec){"cu_seqlens",     OPTIONAL_INPUT, INDEX_INT32,   p->nseq > 0,  0.0, 0.0,                          1, {p->nseq + 1}, false};
    t[T_Y]              = (TensorSpec){"y",              OUTPUT,         VERSION_DTYPE, true,        0.0, 0.0,                           4, {b, L, h, P}, false};
    t[T_FINAL_STATE]    = (TensorSpec){"final_state",    OUTPUT,         ALWAYS_FP32,   true,        0.0, 0.0,                           4, {S, h, P, N}, false};
    t[T_CHUNK_STATES]   = (TensorSpec){"chunk_states",   OUTPUT,         ALWAYS_FP32,   p->nseq > 0,  0.0, 0.0,                          4, {packed_chunks(p), h, P, N}, false};
    if (p->D_per_channel) {  // D (h, p): one value per channel
        t[T_D].ndim = 2;
        t[T_D].shape[1] = P;
    }
    return N_TENSORS;
}

static void ssd_validate(const Problem *p) {
    const int64_t h = p->opt[SSD_HEADS], Q = p->opt[SSD_CHUNK];
    if (h % p->groups != 0)
        die_usage("--heads %lld is not a multiple of --groups %lld", (long long)h, (long long)p->groups);
    if (Q < 16 || Q > 256 || (Q & (Q - 1)) != 0) die_usage("--chunk %lld is not a power of two in 16..256", (long long)Q);
    packed_validate(p);
}

static void ssd_shape_text(const Problem *p, char *buf, size_t len) {
    snprintf(buf, len, "b%lld L%lld h%lld p%lld g%lld N%lld Q%lld", (long long)p->batch, (long long)p->seqlen,
             (long long)p->opt[SSD_HEADS], (long long)p->opt[SSD_HEADDIM], (long long)p->groups, (long long)p->dstate,
             (long long)p->opt[SSD_CHUNK]);
}

static void ssd_bench_text(const Problem *p, char *buf, size_t len) {
    int n = snprintf(buf, len, "b%-3lld h%-3lld p%-3lld N%-3lld Q%-3lld L%-6lld", (long long)p->batch,
                     (long long)p->opt[SSD_HEADS], (long long)p->opt[SSD_HEADDIM], (long long)p->dstate, (long long)p->opt[SSD_CHUNK],
                     (long long)p->seqlen);
    if (p->nseq && n > 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, " in %lld seqs", (long long)p->nseq);
}

/* ------------------------------------------------------ calls into versions */

SsdShape problem_ssd_shape(const Problem *p) {
    SsdShape s = {p->batch, p->seqlen, p->opt[SSD_HEADS], p->opt[SSD_HEADDIM], p->groups, p->dstate, p->opt[SSD_CHUNK],
                  p->has_z, p->has_D, p->D_per_channel, p->has_bias, p->softplus, p->has_h0, p->nseq};
    return s;
}

static SsdTensors ssd_view(const Problem *p, void *const *t) {
    SsdTensors st = {problem_ssd_shape(p), t[T_X], t[T_DT], t[T_A], t[T_B], t[T_C], t[T_D], t[T_Z],
                     t[T_DT_BIAS], t[T_INITIAL_STATES], t[T_Y], t[T_FINAL_STATE]};
    return st;
}

/* A chapter of this op lists SsdVersions, whose first member is the info. */
static const SsdVersion *ssd_version(const VersionInfo *v) { return (const SsdVersion *)v; }

static size_t ssd_workspace(const VersionInfo *v, const Problem *p) {
    SsdShape s = problem_ssd_shape(p);
    return ssd_version(v)->workspace_bytes ? ssd_version(v)->workspace_bytes(&s) : 0;
}

static SsdPacked ssd_packed_view(const Problem *p, void *const *t) {
    SsdPacked pk = {ssd_view(p, t), p->nseq, t[T_CU_SEQLENS], t[T_CHUNK_STATES]};
    return pk;
}

static const char *ssd_unsupported(const VersionInfo *v, const Problem *p) {
    if (p->nseq && !ssd_version(v)->run_packed) return "takes no packed sequences";
    SsdShape s = problem_ssd_shape(p);
    return ssd_version(v)->unsupported ? ssd_version(v)->unsupported(&s) : NULL;
}

static void ssd_run(const VersionInfo *v, const Problem *p, void *const *t, void *workspace) {
    if (p->nseq) {
        SsdPacked pk = ssd_packed_view(p, t);
        ssd_version(v)->run_packed(&pk, workspace);
        return;
    }
    SsdTensors st = ssd_view(p, t);
    ssd_version(v)->run(&st, workspace);
}

/* ------------------------------------------------------ inputs and oracle */

/* dt + dt_bias above 20 on every other head: softplus's linear branch. */
static void ssd_big_delta(const Problem *p, void *const *t) {
    float *dt = t[T_DT], *bias = t[T_DT_BIAS];  // (b, L, h), (h,) fp32
    for (int64_t hi = 0; hi < p->opt[SSD_HEADS]; hi += 2) {
        if (bias) bias[hi] = 22.0f;
        else
            for (int64_t bl = 0; bl < p->batch * p->seqlen; bl++) dt[bl * p->opt[SSD_HEADS] + hi] += 22.0f;
    }
}

static void ssd_indices(const Problem *p, void *const *t) { cu_seqlens_fill(p, t[T_CU_SEQLENS]); }

/* A loaded cu_seqlens is checked and gives the chunk count; a chunk_states.npy
 * the folder holds must have that many. */
static void ssd_from_loaded(Problem *p, void *const *t) {
    const int32_t *cu = t[T_CU_SEQLENS];  // (nseq + 1,) int32
    if (!cu) return;
    cu_seqlens_check(p, cu);
    int64_t n = 0;
    const int64_t Q = p->opt[SSD_CHUNK];
    for (int64_t k = 0; k < p->nseq; k++) n += (cu[k + 1] - cu[k] + Q - 1) / Q;
    if (p->opt[SSD_NCHUNKS] && p->opt[SSD_NCHUNKS] != n)
        die_usage("--load: chunk_states.npy holds %lld chunks, cu_seqlens and chunk_size %lld give %lld",
                  (long long)p->opt[SSD_NCHUNKS], (long long)Q, (long long)n);
    p->opt[SSD_NCHUNKS] = n;
}

/* ref, and y's terms' magnitude in y_terms unless NULL (Op.oracle_terms). */
static void ssd_oracle_terms(const Problem *p, void *const *t, double *const *ref, double *y_terms) {
    if (p->nseq) {
        SsdPacked pk = ssd_packed_view(p, t);
        oracle_ssd_packed(&pk, packed_chunks(p), ref[T_Y], ref[T_FINAL_STATE], ref[T_CHUNK_STATES], y_terms);
        return;
    }
    SsdTensors st = ssd_view(p, t);
    oracle_ssd(&st, ref[T_Y], ref[T_FINAL_STATE], y_terms);
}

static void ssd_oracle(const Problem *p, void *const *t, double *const *ref) { ssd_oracle_terms(p, t, ref, NULL); }

/* What rtol is taken of, for the 16-bit versions. y_t =
 * C_t . h_t + D x_t is a dot product of N terms, and they multiply C by the
 * state rounded to x's dtype (as the official kernel does): the rounding is of
 * the terms, not of their sum, so y's error grows with Σ_n |C_tn h_tn| +
 * |D x_t| (times |silu(z_t)|), and an output that cancels to near zero keeps
 * the error of its terms. The states are sums the kernels keep in fp32: rtol
 * of their own magnitude. fp32 versions keep rtol of |y|: fp32-grade
 * accuracy is held element by element. */
static bool ssd_terms_rtol(DType dt) { return dt != DT_FP32; }

/* Rows are (b, h) heads. */
/* Sampled validation works on channels (b, h, p), the Mamba-1 rows of the
 * mapping: y[b, :, h, p] and final_state[b, h, p, :]. */
static int64_t ssd_rows(const Problem *p) { return p->batch * p->opt[SSD_HEADS] * p->opt[SSD_HEADDIM]; }

/* Channel (hi, pi) of a packed problem: its y, its final state in every
 * sequence and its state after every chunk. */
static CheckResult ssd_check_packed_channel(const Problem *p, void *const *t, int64_t row, Tol tol) {
    SsdPacked pk = ssd_packed_view(p, t);
    int64_t L = p->seqlen, H = p->opt[SSD_HEADS], P = p->opt[SSD_HEADDIM], N = p->dstate, S = p->nseq, K = packed_chunks(p);
    int64_t hi = row / P % H, pi = row % P;
    double *y = host_alloc(L * 8, "oracle channel");            // (L,) fp64
    double *fin = host_alloc(S * N * 8, "oracle channel");      // (nseq, N) fp64
    double *chunks = host_alloc(K * N * 8, "oracle channel");   // (nchunks, N) fp64
    double *terms = host_alloc(L * 8, "oracle channel");        // (L,) fp64: y's terms' magnitude
    float *got = host_alloc((L + (S + K) * N) * 4, "channel");  // y, then final and chunk states, fp32
    oracle_ssd_packed_channel(&pk, hi, pi, y, fin, chunks, terms);
    for (int64_t l = 0; l < L; l++) got[l] = ((const float *)pk.t.y)[(l * H + hi) * P + pi];
    for (int64_t k = 0; k < S + K; k++)
        for (int64_t n = 0; n < N; n++) {
            const float *from = k < S ? pk.t.final_state + ((k * H + hi) * P + pi) * N
                                      : pk.chunk_states + (((k - S) * H + hi) * P + pi) * N;
            got[L + k * N + n] = from[n];
        }
    CheckResult r = check_merge(check_merge(compare_f32_scaled(got, y, tol.of_terms ? terms : NULL, L, tol),
                                            compare_f32(got + L, fin, S * N, tol)),
                                compare_f32(got + L + S * N, chunks, K * N, tol));
    free(y);
    free(terms);
    free(fin);
    free(chunks);
    free(got);
    return r;
}

static CheckResult ssd_check_row(const Problem *p, void *const *t, int64_t row, Tol tol) {
    if (p->nseq) return ssd_check_packed_channel(p, t, row, tol);
    SsdTensors st = ssd_view(p, t);
    int64_t L = p->seqlen, H = p->opt[SSD_HEADS], P = p->opt[SSD_HEADDIM], N = p->dstate;
    int64_t bi = row / (H * P), hi = row / P % H, pi = row % P;
    double *y = host_alloc(L * 8, "oracle channel");      // (L,) fp64
    double *state = host_alloc(N * 8, "oracle channel");  // (N,) fp64, the final state
    double *terms = host_alloc(L * 8, "oracle channel");  // (L,) fp64: y's terms' magnitude
    float *got = host_alloc(L * 4, "channel output");     // (L,) fp32: y[bi, :, hi, pi]
    oracle_ssd_channel(&st, bi, hi, pi, y, state, terms);
    for (int64_t l = 0; l < L; l++) got[l] = ((const float *)st.y)[((bi * L + l) * H + hi) * P + pi];
    CheckResult r = check_merge(compare_f32_scaled(got, y, tol.of_terms ? terms : NULL, L, tol),
                                compare_f32(st.final_state + row * N, state, N, tol));
    free(y);
    free(terms);
    free(state);
    free(got);
    return r;
}

/* The chunked form's minimum, per (b, t, h): exp(cum_t) and
 * exp(cum_last - cum_t), cum the chunk-local cumsum of dt*A (every decay
 * of the form is a product of these), and softplus's exp when it is on:
 *   b * L * h * (2 + softplus). */
static double ssd_exps(const Problem *p) {
    return (double)p->batch * p->seqlen * p->opt[SSD_HEADS] * (2 + (p->softplus ? 1 : 0));
}

/* Matrix FLOPs of one chunk of q steps, counted as docs/performance.md does:
 *   C B^T           2 q^2 N per group (the full square: the mask comes after)
 *   (L o C B^T) X   2 q^2 p per head
 *   chunk state     2 q N p per head (B^T X, decay-weighted)
 *   state output    2 q N p per head (C S) */
static double chunk_flops(const Problem *p, double q) {
    const double h = (double)p->opt[SSD_HEADS], P = (double)p->opt[SSD_HEADDIM];
    return p->groups * 2.0 * q * q * p->dstate + h * (2.0 * q * q * P + 4.0 * q * p->dstate * P);
}

/* Every (b, chunk), the last chunk shorter: 1.42e11 at S3 b 8, L 8192. */
static double ssd_flops(const Problem *p) {
    const int64_t Q = p->opt[SSD_CHUNK], full = p->seqlen / Q, tail = p->seqlen % Q;
    return (double)p->batch * (full * chunk_flops(p, (double)Q) + chunk_flops(p, (double)tail));
}

/* ---------------------------------------------------------------- --load */

void ssd_infer_sizes(Problem *p, const LoadFolder *f) {
    const NpyShape *x = folder_shape(f, T_X), *B = folder_shape(f, T_B);
    if (x->ndim != 4)
        die_usage("--load: %s/x.npy must be (batch, seqlen, heads, headdim), has %d dims", f->dir, x->ndim);
    p->batch = x->shape[0];
    p->seqlen = x->shape[1];
    p->opt[SSD_HEADS] = x->shape[2];
    p->opt[SSD_HEADDIM] = x->shape[3];
    if (B->ndim != 4)
        die_usage("--load: %s/B.npy must be (batch, seqlen, groups, dstate), has %d dims", f->dir, B->ndim);
    p->groups = B->shape[2];
    p->dstate = B->shape[3];
    if (p->opt[SSD_HEADS] % p->groups != 0)
        die_usage("--load: %s/B.npy: %lld groups do not divide %lld heads", f->dir, (long long)p->groups,
                  (long long)p->opt[SSD_HEADS]);
    p->has_z = f->given[T_Z];
    p->has_D = f->given[T_D];
    p->D_per_channel = f->given[T_D] && f->shape[T_D].ndim == 2;
    p->has_bias = f->given[T_DT_BIAS];
    p->has_h0 = f->given[T_INITIAL_STATES];
    p->softplus = meta_bool(f, "dt_softplus", false);  // the official default
    const int64_t Q = meta_int(f, "chunk_size", 256);  // Mamba2's default
    if (Q < 16 || Q > 256 || (Q & (Q - 1)) != 0)
        die_usage("--load: %s/meta.json: chunk_size %lld is not a power of two in 16..256", f->dir, (long long)Q);
    p->opt[SSD_CHUNK] = Q;
}

/* The sizes, then a packed problem's: the lengths are in cu_seqlens's data
 * (ssd_from_loaded), the chunk count with them. */
static void ssd_infer(Problem *p, const LoadFolder *f) {
    ssd_infer_sizes(p, f);
    packed_infer(p, f, T_CU_SEQLENS);
    if (f->given[T_CHUNK_STATES] && !p->nseq)
        die_usage("--load: %s/chunk_states.npy belongs to packed sequences, but cu_seqlens.npy is missing", f->dir);
    if (!p->nseq || !f->given[T_CHUNK_STATES]) return;
    /* Σ ceil(length / Q) over the sequences is at most nseq + L / Q: more is
     * refused from the header, before the file's data is read. */
    const NpyShape *cs = folder_shape(f, T_CHUNK_STATES);
    if (cs->ndim != 4)
        die_usage("--load: %s/chunk_states.npy has %d dimensions; expected 4 (chunks, heads, headdim, dstate)", f->dir,
                  cs->ndim);
    const int64_t most = p->nseq + p->seqlen / p->opt[SSD_CHUNK], got = cs->shape[0];
    if (got > most)
        die_usage("--load: %s/chunk_states.npy holds %lld chunks; %lld sequences of %lld tokens in all make at most %lld",
                  f->dir, (long long)got, (long long)p->nseq, (long long)p->seqlen, (long long)most);
    p->opt[SSD_NCHUNKS] = got;
}

static void ssd_meta_text(const Problem *p, char *buf, size_t len) {
    snprintf(buf, len, "{\"dt_softplus\": %s, \"chunk_size\": %lld}", p->softplus ? "true" : "false",
             (long long)p->opt[SSD_CHUNK]);
}

/* ----------------------------------------------------------------- shapes */

/* Lengths of the packed check cases. */
static const int64_t SEQS_SHORT[] = {1, 1, 3, 1};               // 6 tokens
static const int64_t SEQS_EDGES[] = {16, 32, 15, 1, 17, 40};    // 121 tokens: ends at 16, 48, 63, 64, 81, 121

/* Small and awkward (docs/design.md §3), cheap for the CPU forms: L = 1, L
 * not a multiple of the chunk, odd p and N, g > 1, D per channel, flags on
 * and off, dt + bias above 20, the S3 head shape, and L up to 4100. */
static const Problem CHECK_CASES[] = {
    {.batch = 1, .seqlen = 1, .dstate = 8, .groups = 1, .opt = {[SSD_HEADS] = 2, [SSD_HEADDIM] = 4, [SSD_CHUNK] = 16}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true},
    {.batch = 2, .seqlen = 37, .dstate = 5, .groups = 2, .opt = {[SSD_HEADS] = 4, [SSD_HEADDIM] = 3, [SSD_CHUNK] = 16}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true},
    {.batch = 2, .seqlen = 100, .dstate = 16, .groups = 1, .opt = {[SSD_HEADS] = 4, [SSD_HEADDIM] = 16, [SSD_CHUNK] = 32}, .has_D = true, .has_bias = true, .softplus = true, .D_per_channel = true},
    {.batch = 1, .seqlen = 333, .dstate = 20, .groups = 3, .opt = {[SSD_HEADS] = 6, [SSD_HEADDIM] = 24, [SSD_CHUNK] = 64}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .big_delta = true},
    {.batch = 1, .seqlen = 200, .dstate = 33, .groups = 1, .opt = {[SSD_HEADS] = 3, [SSD_HEADDIM] = 7, [SSD_CHUNK] = 128}},
    {.batch = 2, .seqlen = 513, .dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 2, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true},
    {.batch = 1, .seqlen = 4100, .dstate = 64, .groups = 2, .opt = {[SSD_HEADS] = 2, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    {.batch = 1, .seqlen = 2048, .dstate = 16, .groups = 1, .opt = {[SSD_HEADS] = 2, [SSD_HEADDIM] = 32, [SSD_CHUNK] = 256}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    /* Packed: sequences of length 1; sequences shorter than the chunk and
     * ending on chunk edges (16, 48, 64 at chunk 16) and inside chunks, each
     * from its own initial state; with no initial state, D (h, p) and dt +
     * bias above 20. */
    {.batch = 1, .seqlen = 6, .dstate = 8, .groups = 1, .opt = {[SSD_HEADS] = 2, [SSD_HEADDIM] = 4, [SSD_CHUNK] = 16}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true, .nseq = 4, .seqlens = SEQS_SHORT},
    {.batch = 1, .seqlen = 121, .dstate = 5, .groups = 2, .opt = {[SSD_HEADS] = 4, [SSD_HEADDIM] = 3, [SSD_CHUNK] = 16}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .has_h0 = true, .nseq = 6, .seqlens = SEQS_EDGES},
    {.batch = 1, .seqlen = 121, .dstate = 9, .groups = 1, .opt = {[SSD_HEADS] = 3, [SSD_HEADDIM] = 7, [SSD_CHUNK] = 32}, .has_D = true, .has_bias = true, .softplus = true, .D_per_channel = true, .big_delta = true, .nseq = 6, .seqlens = SEQS_EDGES},
};

/* Benchmark sets (docs/design.md §7): S3 is the official timing's configuration,
 * D, dt_bias and softplus on, no z. */
static const BenchGrid BENCH[] = {
    {.base = {.dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 32, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, .has_D = true, .has_bias = true, .softplus = true},
     .batch = {1, 8}, .seqlen = {512, 1024, 2048, 4096, 8192, 16384}},
    {.base = {.dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 32, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
     .batch = {1, 8}, .seqlen = {8192}},
    {.base = {.dstate = 16, .groups = 1, .opt = {[SSD_HEADS] = 32, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, .has_D = true, .has_bias = true, .softplus = true},
     .batch = {8}, .seqlen = {4096}},
    {.base = {.dstate = 64, .groups = 1, .opt = {[SSD_HEADS] = 32, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, .has_D = true, .has_bias = true, .softplus = true},
     .batch = {8}, .seqlen = {4096}},
    {.base = {.dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 32, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, .has_D = true, .has_bias = true, .softplus = true},
     .batch = {8}, .seqlen = {4096}},
    // Serving at S3: the mix packed (chunk states out); one sequence of its tokens; padded to the longest
    {.base = {.dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 32, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, .has_D = true, .has_bias = true,
              .softplus = true, .has_h0 = true, .nseq = SERVING_MIX_SEQS, .seqlens = SERVING_MIX},
     .batch = {1}, .seqlen = {SERVING_MIX_TOKENS}},
    {.base = {.dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 32, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, .has_D = true, .has_bias = true,
              .softplus = true, .has_h0 = true},
     .batch = {1}, .seqlen = {SERVING_MIX_TOKENS}},
    {.base = {.dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 32, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, .has_D = true, .has_bias = true,
              .softplus = true, .has_h0 = true},
     .batch = {SERVING_MIX_SEQS}, .seqlen = {8192}},
};
static const BenchGrid QUICK[] = {
    {.base = {.dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 32, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, .has_D = true, .has_bias = true, .softplus = true},
     .batch = {1}, .seqlen = {512}},
    {.base = {.dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 32, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, .has_D = true, .has_bias = true, .softplus = true},
     .batch = {8}, .seqlen = {8192}},
};

static const OpFlag SSD_FLAGS[] = {SSD_FLAG_ROWS};

int ssd_csv_sizes(const Problem *p, int64_t *v) {
    return mamba_csv_sizes(p, p->opt[SSD_HEADS], p->opt[SSD_HEADDIM], p->opt[SSD_CHUNK], v);
}

const Op OP_SSD = {
    .args = ARGS_SSD,
    .tol_fp32 = &TOLERANCES[TOL_FP32],
    .tol_fp16 = &TOLERANCES[TOL_FP16],
    .tol_bf16 = &TOLERANCES[TOL_BF16],
    .flags = SSD_FLAGS, .nflags = COUNT(SSD_FLAGS),
    .csv_columns = MAMBA_CSV_COLUMNS,
    .csv_sizes = ssd_csv_sizes,
    .version_size = sizeof(SsdVersion),
    .tensors = ssd_tensors,
    .validate = ssd_validate,
    .shape_text = ssd_shape_text,
    .bench_text = ssd_bench_text,
    .workspace = ssd_workspace,
    .unsupported = ssd_unsupported,
    .run = ssd_run,
    .indices = ssd_indices,
    .from_loaded = ssd_from_loaded,
    .big_delta = ssd_big_delta,
    .oracle = ssd_oracle,
    .oracle_terms = ssd_oracle_terms,
    .terms_output = T_Y,
    .terms_rtol = ssd_terms_rtol,
    .rows = ssd_rows,
    .check_row = ssd_check_row,
    .exps = ssd_exps,
    .flops = ssd_flops,
    .infer = ssd_infer,
    .meta_text = ssd_meta_text,
    .fixtures = fixtures_check_ssd,
    .check_cases = CHECK_CASES, .ncheck = COUNT(CHECK_CASES),
    .check_base = SSD_CHECK_BASE,
    .bench_base = SSD_BENCH_BASE,
    .bench = BENCH, .nbench = COUNT(BENCH),
    .quick = QUICK, .nquick = COUNT(QUICK),
};
