/* The decode step as an operation of the driver core (chapter 07):
 * selective_state_update's tensors in both forms over T tokens (Problem's
 * seqlen is T; with T = 1 every tensor has the official shape), random inputs
 * in the official test's ranges, the oracle, the exp count, the check and
 * benchmark shapes, and the calls into a DecodeVersion.
 * The state is an input ("state") and an output ("state_out"): the driver
 * hands a version two buffers, so every timed run starts from the same state;
 * the versions are also correct in place (state_out == state). A server's
 * problem (--slots, --intermediate) keeps the states in a pool of slots named
 * by state_batch_indices and writes the state after every token
 * (DecodeServing, decode.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "gpu.h"
#include "op_decode.h"
#include "slots.h"

/* The tensors in table order: inputs (random ones are drawn in this order), then outputs. */
enum { T_STATE, T_X, T_DT, T_A, T_B, T_C, T_D, T_Z, T_DT_BIAS, T_STATE_BATCH_INDICES, T_Y, T_STATE_OUT,
       T_INTERMEDIATE_STATES, N_TENSORS };

/* shape[] of a per-token tensor: (b, [T,] rest...), the T axis only when T > 1. */
static void per_token(TensorSpec *t, int64_t b, int64_t T, int nrest, int64_t r0, int64_t r1, int64_t r2) {
    int64_t rest[3] = {r0, r1, r2};
    t->ndim = 0;
    t->shape[t->ndim++] = b;
    if (T > 1) t->shape[t->ndim++] = T;
    for (int i = 0; i < nrest; i++) t->shape[t->ndim++] = rest[i];
}

/* Ranges of the official test (test_selective_state_update): A = -rand - 1,
 * dt_bias = rand - 4 with softplus. Without softplus dt + dt_bias is the
 * step itself and is drawn above 0. */
static int decode_tensors(const Problem *p, TensorSpec *t) {
    int64_t b = p->batch, T = p->seqlen, N = p->dstate;
    bool m1 = p->opt[DECODE_FORM] == DECODE_M1, sp = p->softplus;
    int64_t d = p->dim, h = p->opt[DECODE_HEADS], P = p->opt[DECODE_HEADDIM], g = p->groups;
    int64_t S = p->opt[DECODE_SLOTS] ? p->opt[DECODE_SLOTS] : b;  // rows of the state: the pool's slots, or one a batch entry
    //                               name          role            dtype          present      range       (shapes below)
    t[T_STATE]     = (TensorSpec){"state",     INPUT,          STATE_DTYPE,   true,        -1.0, 1.0, 0, {0}, false};
    t[T_X]         = (TensorSpec){"x",         INPUT,          VERSION_DTYPE, true,        -1.5, 1.5, 0, {0}, false};
    t[T_DT]        = (TensorSpec){"dt",        INPUT,          VERSION_DTYPE, true,        sp ? 0.0 : 0.01, 0.5, 0, {0}, false};
    t[T_A]         = (TensorSpec){"A",         INPUT,          ALWAYS_FP32,   true,        -2.0, -1.0, 0, {0}, true};
    t[T_B]         = (TensorSpec){"B",         INPUT,          VERSION_DTYPE, true,        -1.5, 1.5, 0, {0}, false};
    t[T_C]         = (TensorSpec){"C",         INPUT,          VERSION_DTYPE, true,        -1.5, 1.5, 0, {0}, false};
    t[T_D]         = (TensorSpec){"D",         OPTIONAL_INPUT, ALWAYS_FP32,   p->has_D,    -1.0, 1.0, 0, {0}, false};
    t[T_Z]         = (TensorSpec){"z",         OPTIONAL_INPUT, VERSION_DTYPE, p->has_z,    -2.0, 2.0, 0, {0}, false};
    t[T_DT_BIAS]   = (TensorSpec){"dt_bias",   OPTIONAL_INPUT, ALWAYS_FP32,   p->has_bias, sp ? -4.0 : 0.0, sp ? -3.0 : 0.1, 0, {0}, false};
    t[T_STATE_BATCH_INDICES] = (TensorSpec){"state_batch_indices", OPTIONAL_INPUT, INDEX_INT32, p->opt[DECODE_SLOTS] > 0, 0.0, 0.0, 1, {b}, false};
    t[T_Y]         = (TensorSpec){"y",         OUTPUT,         VERSION_DTYPE, true,        0.0, 0.0, 0, {0}, false};
    t[T_STATE_OUT] = (TensorSpec){"state_out", OUTPUT,         STATE_DTYPE,   true,        0.0, 0.0, 0, {0}, false};
    t[T_INTERMEDIATE_STATES] = (TensorSpec){"intermediate_states", OUTPUT, STATE_DTYPE, p->opt[DECODE_INTERMEDIATE], 0.0, 0.0, 0, {0}, false};
    if (m1) {
        t[T_STATE].ndim = 3;                                                         // (S, d, N)
        t[T_STATE].shape[0] = S, t[T_STATE].shape[1] = d, t[T_STATE].shape[2] = N;
        per_token(&t[T_X], b, T, 1, d, 0, 0);                                        // (b, [T,] d)
        per_token(&t[T_DT], b, T, 1, d, 0, 0);                                       // (b, [T,] d)
        t[T_A].ndim = 2, t[T_A].shape[0] = d, t[T_A].shape[1] = N;                   // (d, N)
        per_token(&t[T_B], b, T, 1, N, 0, 0);                                        // (b, [T,] N)
        per_token(&t[T_C], b, T, 1, N, 0, 0);
        t[T_D].ndim = t[T_DT_BIAS].ndim = 1, t[T_D].shape[0] = t[T_DT_BIAS].shape[0] = d;  // (d,)
        per_token(&t[T_Z], b, T, 1, d, 0, 0);
        per_token(&t[T_Y], b, T, 1, d, 0, 0);
    } else {
        t[T_STATE].ndim = 4;                                                         // (S, h, p, N)
        t[T_STATE].shape[0] = S, t[T_STATE].shape[1] = h, t[T_STATE].shape[2] = P, t[T_STATE].shape[3] = N;
        per_token(&t[T_X], b, T, 2, h, P, 0);                                        // (b, [T,] h, p)
        per_token(&t[T_DT], b, T, 1, h, 0, 0);                                       // (b, [T,] h)
        t[T_A].ndim = 1, t[T_A].shape[0] = h;                                        // (h,)
        per_token(&t[T_B], b, T, 2, g, N, 0);                                        // (b, [T,] g, N)
        per_token(&t[T_C], b, T, 2, g, N, 0);
        t[T_D].ndim = t[T_DT_BIAS].ndim = 1, t[T_D].shape[0] = t[T_DT_BIAS].shape[0] = h;  // (h,)
        per_token(&t[T_Z], b, T, 2, h, P, 0);
        per_token(&t[T_Y], b, T, 2, h, P, 0);
    }
    t[T_STATE_OUT].ndim = t[T_STATE].ndim;
    for (int i = 0; i < t[T_STATE].ndim; i++) t[T_STATE_OUT].shape[i] = t[T_STATE].shape[i];
    /* (b, T, d, N) or (b, T, h, p, N): the state's rows of each batch entry after each token */
    TensorSpec *is = &t[T_INTERMEDIATE_STATES];
    is->ndim = t[T_STATE].ndim + 1;
    is->shape[0] = b, is->shape[1] = T;
    for (int i = 1; i < t[T_STATE].ndim; i++) is->shape[i + 1] = t[T_STATE].shape[i];
    return N_TENSORS;
}

static void decode_validate(const Problem *p) {
    if (p->opt[DECODE_FORM] == DECODE_M1) {
        if (p->opt[DECODE_HEADS] || p->opt[DECODE_HEADDIM] || p->groups != 1)
            die_usage("--form m1 takes --dim and --dstate; --heads, --headdim and --groups are for --form m2");
    } else {
        if (p->dim) die_usage("--form m2 takes --heads and --headdim; --dim is for --form m1");
        if (p->opt[DECODE_HEADS] % p->groups != 0)
            die_usage("--heads %lld is not a multiple of --groups %lld", (long long)p->opt[DECODE_HEADS], (long long)p->groups);
    }
    if (p->opt[DECODE_SLOTS] && p->opt[DECODE_SLOTS] < p->batch)
        die_usage("--slots %lld: a pool holds at least one slot per batch entry (--batch %lld)", (long long)p->opt[DECODE_SLOTS],
                  (long long)p->batch);
    if (p->opt[DECODE_SLOTS] > INT32_MAX)
        die_usage("--slots %lld: more than state_batch_indices (int32) can name", (long long)p->opt[DECODE_SLOTS]);
}

/* Sizes given on the command line start from the base of the form: --form,
 * else Mamba-1 when --dim is given, else Mamba-2. */
static const Problem CHECK_BASE_M1 = {.batch = 2, .seqlen = 1, .dim = 40, .dstate = 16, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .opt = {[DECODE_FORM] = DECODE_M1}};
static const Problem BENCH_BASE_M1 = {.batch = 64, .seqlen = 1, .dim = 2048, .dstate = 16, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .opt = {[DECODE_FORM] = DECODE_M1}};

static void decode_command_line_base(Problem *base, const Args *a, bool bench) {
    const int64_t form = a->opt[DECODE_FORM];  // 0 when --form is not given
    if (form == DECODE_M1 || (!form && a->dim)) *base = bench ? BENCH_BASE_M1 : CHECK_BASE_M1;
}

/* " slots 1024 +states": a server's problem, appended to a bench row's sizes. */
static void serving_text(const Problem *p, char *buf, size_t len, int n) {
    if (n < 0 || (size_t)n >= len) return;
    if (p->opt[DECODE_SLOTS]) n += snprintf(buf + n, len - (size_t)n, " slots %lld", (long long)p->opt[DECODE_SLOTS]);
    if (p->opt[DECODE_INTERMEDIATE] && n >= 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, " +states");
}

/* The check line's sizes; its flags name a pool and the states (flags_text). */
static void decode_shape_text(const Problem *p, char *buf, size_t len) {
    if (p->opt[DECODE_FORM] == DECODE_M1)
        snprintf(buf, len, "m1 b%lld T%lld d%lld N%lld", (long long)p->batch, (long long)p->seqlen, (long long)p->dim,
                 (long long)p->dstate);
    else
        snprintf(buf, len, "m2 b%lld T%lld h%lld p%lld g%lld N%lld", (long long)p->batch, (long long)p->seqlen,
                 (long long)p->opt[DECODE_HEADS], (long long)p->opt[DECODE_HEADDIM], (long long)p->groups, (long long)p->dstate);
}

static void decode_bench_text(const Problem *p, char *buf, size_t len) {
    int n;
    if (p->opt[DECODE_FORM] == DECODE_M1)
        n = snprintf(buf, len, "m1 b%-4lld d%-5lld N%-4lld T%-4lld", (long long)p->batch, (long long)p->dim,
                     (long long)p->dstate, (long long)p->seqlen);
    else
        n = snprintf(buf, len, "m2 b%-4lld h%-3lld p%-3lld N%-4lld T%-4lld", (long long)p->batch, (long long)p->opt[DECODE_HEADS],
                     (long long)p->opt[DECODE_HEADDIM], (long long)p->dstate, (long long)p->seqlen);
    serving_text(p, buf, len, n);
}

/* ------------------------------------------------------ calls into versions */

static DecodeShape decode_shape(const Problem *p) {
    DecodeShape s = {p->opt[DECODE_FORM], p->batch, p->seqlen, p->dim, p->opt[DECODE_HEADS], p->opt[DECODE_HEADDIM], p->groups, p->dstate,
                     p->has_z, p->has_D, p->has_bias, p->softplus, 0};
    return s;
}

static DecodeTensors decode_view(const Problem *p, void *const *t) {
    DecodeTensors dt = {decode_shape(p), t[T_STATE], t[T_X], t[T_DT], t[T_A], t[T_B], t[T_C], t[T_D], t[T_Z],
                        t[T_DT_BIAS], t[T_Y], t[T_STATE_OUT]};
    return dt;
}

/* A chapter of this op lists DecodeVersions, whose first member is the info. */
static const DecodeVersion *decode_version(const VersionInfo *v) { return (const DecodeVersion *)v; }

static size_t decode_workspace(const VersionInfo *v, const Problem *p) {
    DecodeShape s = decode_shape(p);
    return decode_version(v)->workspace_bytes ? decode_version(v)->workspace_bytes(&s) : 0;
}

static bool serving(const Problem *p) { return p->opt[DECODE_SLOTS] || p->opt[DECODE_INTERMEDIATE]; }

static DecodeServing decode_serving_view(const Problem *p, void *const *t) {
    DecodeServing sv = {decode_view(p, t), p->opt[DECODE_SLOTS], t[T_STATE_BATCH_INDICES], t[T_INTERMEDIATE_STATES]};
    return sv;
}

static const char *decode_unsupported(const VersionInfo *v, const Problem *p) {
    if (serving(p) && !decode_version(v)->run_serving) return "takes no state pool or intermediate states";
    DecodeShape s = decode_shape(p);
    return decode_version(v)->unsupported ? decode_version(v)->unsupported(&s) : NULL;
}

static void decode_run(const VersionInfo *v, const Problem *p, void *const *t, void *workspace) {
    if (serving(p)) {
        DecodeServing sv = decode_serving_view(p, t);
        decode_version(v)->run_serving(&sv, workspace);
        return;
    }
    DecodeTensors dt = decode_view(p, t);
    decode_version(v)->run(&dt, workspace);
}

/* A pool's bytes: of the (S, ...) state read and written, only the rows of
 * the slots the batch names (padding names none); every other tensor whole. */
static double decode_bytes(const Problem *p, const TensorSpec *table, void *const *t, double table_bytes, DType dt) {
    const int32_t *idx = t[T_STATE_BATCH_INDICES];  // (b,) int32
    if (!idx) return table_bytes;
    int64_t named = 0;
    for (int64_t b = 0; b < p->batch; b++) named += idx[b] >= 0;
    const double slot = (double)tensor_bytes(&table[T_STATE], dt) / (double)p->opt[DECODE_SLOTS];  // state bytes of one slot
    return table_bytes - 2.0 * (double)(p->opt[DECODE_SLOTS] - named) * slot;
}

/* Memory for the split runs: on the device (GPU versions) or the host. */
static void *split_alloc(bool device, size_t bytes, const char *what) {
    return device ? dev_alloc(bytes, MEM_WORKSPACE, what) : host_alloc((int64_t)bytes, what);
}
static void split_free(bool device, void *p) {
    if (device) dev_free(p);
    else free(p);
}
/* rows of row_bytes, dst_pitch and src_pitch apart, where the tensors live. */
static void split_copy(bool device, void *dst, size_t dst_pitch, const void *src, size_t src_pitch, size_t row_bytes,
                       size_t rows) {
    if (device) {
        d2d_rows(dst, dst_pitch, src, src_pitch, row_bytes, rows);
        return;
    }
    for (size_t r = 0; r < rows; r++) memcpy((char *)dst + r * dst_pitch, (const char *)src + r * src_pitch, row_bytes);
}

/* The state after token tok (state_out, one entry's after another) into
 * token tok's place of the intermediate states (b, T, ...): the values, and
 * for 8-bit codes, the rows' scales that follow them (codes8.h). */
static void keep_intermediate(bool device, void *const *t, const TensorSpec *state, DType dt, size_t tok, size_t T,
                              size_t b) {
    const int64_t numel = tensor_numel(state);  // b entries' states
    const size_t row = (size_t)(numel / (int64_t)b) * tensor_elem_bytes(state, dt);  // one entry's values
    char *inter = t[T_INTERMEDIATE_STATES];  // (b, T, ...) in the state's dtype
    split_copy(device, inter + tok * row, T * row, t[T_STATE_OUT], row, row, b);
    if (tensor_elem_bytes(state, dt) != 1) return;
    const size_t scales = (size_t)(numel / state->shape[state->ndim - 1] / (int64_t)b) * sizeof(float);  // one entry's
    split_copy(device, inter + codes8_scales_at(numel * (int64_t)T) + tok * scales, T * scales,
               (const char *)t[T_STATE_OUT] + codes8_scales_at(numel), scales, scales, b);
}

/* T tokens as T one-token launches of the same version: token k's x, dt, B,
 * C, z copied out of the (b, T, ...) tensors, the launch run from the state
 * the last one left (token 0 from state, then in place on state_out), its y,
 * and with --intermediate its state, copied into token k's place. The steps
 * in between of a pool's slots would need gathering: a pool is not split. */
static const char *decode_run_split(const VersionInfo *v, const Problem *p, void *const *t, bool device) {
    if (p->seqlen < 2) return "";  // one token: nothing to split, no line
    if (p->opt[DECODE_SLOTS]) return "not with a pool of slots";
    const DecodeVersion *dv = decode_version(v);
    Problem one = *p;
    one.seqlen = 1;
    one.opt[DECODE_INTERMEDIATE] = false;
    TensorSpec full[N_TENSORS], step[N_TENSORS];  // the tables of p and of one token
    decode_tensors(p, full);
    decode_tensors(&one, step);
    const DecodeShape s1 = decode_shape(&one);
    const size_t ws_bytes = dv->workspace_bytes ? dv->workspace_bytes(&s1) : 0;
    void *ws = ws_bytes ? split_alloc(device, ws_bytes, "one-token workspace") : NULL;
    /* The per-token tensors, (b, T, ...) in p and (b, ...) in one token: the inputs, then y. */
    const int per_token[] = {T_X, T_DT, T_B, T_C, T_Z, T_Y};
    enum { N_PER_TOKEN = sizeof(per_token) / sizeof(per_token[0]) };
    void *s[N_TENSORS];           // one launch's tensors: the per-token ones its own, the rest p's
    size_t row[N_TENSORS] = {0};  // per token: bytes of one batch entry's token
    for (int k = 0; k < N_TENSORS; k++) s[k] = t[k];
    for (int j = 0; j < N_PER_TOKEN; j++) {
        const int k = per_token[j];
        if (!step[k].present) continue;
        row[k] = (size_t)(tensor_numel(&step[k]) / p->batch) * tensor_elem_bytes(&step[k], v->dtype);
        s[k] = split_alloc(device, row[k] * (size_t)p->batch, step[k].name);
    }
    const size_t T = (size_t)p->seqlen, b = (size_t)p->batch;
    for (size_t tok = 0; tok < T; tok++) {
        for (int j = 0; j < N_PER_TOKEN - 1; j++) {  // the inputs
            const int k = per_token[j];
            if (row[k]) split_copy(device, s[k], row[k], (const char *)t[k] + tok * row[k], T * row[k], row[k], b);
        }
        s[T_STATE] = tok == 0 ? t[T_STATE] : t[T_STATE_OUT];
        DecodeTensors dt = decode_view(&one, s);
        dt.s.first_token = (int64_t)tok;
        dv->run(&dt, ws);
        split_copy(device, (char *)t[T_Y] + tok * row[T_Y], T * row[T_Y], s[T_Y], row[T_Y], row[T_Y], b);
        if (p->opt[DECODE_INTERMEDIATE]) keep_intermediate(device, t, &full[T_STATE], v->dtype, tok, T, b);
    }
    for (int k = 0; k < N_TENSORS; k++)
        if (row[k]) split_free(device, s[k]);
    split_free(device, ws);
    return NULL;
}

/* The token loop: one token per step, in place, for versions that can be
 * captured; a pool of slots too (a server steps its pool in place), but not
 * with intermediate states (one token has none to keep). */
static bool decode_loops(const VersionInfo *v, const Problem *p) {
    return p->seqlen == 1 && !p->opt[DECODE_INTERMEDIATE] && decode_version(v)->graph;
}

/* Versions that can be captured are built for the per-thread default stream. */
static bool decode_per_thread(const VersionInfo *v) { return decode_version(v)->graph; }

/* ------------------------------------------------------ inputs and oracle */

/* dt + dt_bias above 20 on every other channel (M1) or head (M2): softplus's linear branch. */
static void decode_big_delta(const Problem *p, void *const *t) {
    float *dt = t[T_DT], *bias = t[T_DT_BIAS];  // (b, T, d) or (b, T, h), (d,) or (h,) fp32
    int64_t width = p->opt[DECODE_FORM] == DECODE_M1 ? p->dim : p->opt[DECODE_HEADS];
    for (int64_t i = 0; i < width; i += 2) {
        if (bias) bias[i] = 22.0f;
        else
            for (int64_t bt = 0; bt < p->batch * p->seqlen; bt++) dt[bt * width + i] += 22.0f;
    }
}

/* The slots of a pool, shuffled, every third batch entry padding (slots.h). */
static void decode_indices(const Problem *p, void *const *t) {
    int32_t *idx = t[T_STATE_BATCH_INDICES];  // (b,) int32
    if (idx) slot_indices_fill(idx, p->batch, p->opt[DECODE_SLOTS]);
}

/* A loaded state_batch_indices names slots of the pool, none twice (negative: padding). */
static void decode_from_loaded(Problem *p, void *const *t) {
    const int32_t *idx = t[T_STATE_BATCH_INDICES];  // (b,) int32
    if (idx) slot_indices_check(idx, p->batch, p->opt[DECODE_SLOTS]);
}

/* Both problems through the server's oracle: without a pool or intermediate
 * states it is the plain step (decode_serving_view leaves them NULL). */
static void decode_oracle(const Problem *p, void *const *t, double *const *ref) {
    DecodeServing sv = decode_serving_view(p, t);
    oracle_decode_serving(&sv, ref[T_Y], ref[T_STATE_OUT], ref[T_INTERMEDIATE_STATES], NULL);
}

/* What rtol is taken of, for the versions that store the state in 16 bits
 * (decode_terms_rtol: 8, 9). y = Σ_n state·C + D·x is a dot product of N terms,
 * and they multiply C by the state rounded to 16 bits (as the official
 * kernel does with a 16-bit state): the rounding is of the terms, not of
 * their sum, so y's error grows with Σ_n |state·C| + |D·x| (times
 * |silu(z)|), and a y that cancels keeps the error of its terms. The bf16
 * decode tolerance holds a bf16 state as a whole (07's README, "A state
 * stored in 16 bits": relative L2 4.5e-3 over 1,000 tokens, under rtol
 * 1e-2), but not every y: version 9's roundings replayed in C (bf16 state
 * rounded on load and store, and after every token in rows longer than one
 * pass) leave y at N 600, T 5 off by up to 0.12 where |y| is about 4, twice
 * 5e-2 + 1e-2·|y|, and within 7e-4 of Σ|terms|. The states keep rtol of
 * their own magnitude. */
static void decode_oracle_terms(const Problem *p, void *const *t, double *const *ref, double *terms) {
    DecodeServing sv = decode_serving_view(p, t);
    oracle_decode_serving(&sv, ref[T_Y], ref[T_STATE_OUT], ref[T_INTERMEDIATE_STATES], terms);
}
static bool decode_terms_rtol(DType dt) { return dtype_state16(dt); }

/* Rows are the state rows: channels (b, c) for M1, (b, h, p) for M2: y over
 * the T tokens and the row's final state. */
static int64_t decode_rows_of(const Problem *p) {
    DecodeShape s = decode_shape(p);
    return decode_rows(&s);
}

/* Row (b, c): y over the T tokens (rtol of its terms' magnitude where tol
 * says), the final state (in its slot, none for padding) and, when asked,
 * its state after every token. */
static CheckResult decode_check_row(const Problem *p, void *const *t, int64_t row, Tol tol) {
    DecodeServing sv = decode_serving_view(p, t);
    int64_t T = p->seqlen, N = p->dstate, W = decode_width(&sv.t.s);
    int64_t bi = row / W, c = row % W;
    double *y = host_alloc(T * 8, "oracle row");          // (T,) fp64
    double *terms = host_alloc(T * 8, "oracle row");      // (T,) fp64: y's terms' magnitude
    double *state = host_alloc(N * 8, "oracle row");      // (N,) fp64, the final state
    /* (T, N) fp64, the state after each token: for the intermediate states, and for an 8-bit state's bounds */
    double *per = sv.intermediate_states || tol.codes8 ? host_alloc(T * N * 8, "oracle row") : NULL;
    float *got = host_alloc(T * (N + 1) * 4, "row");      // y (T,), then the states (T, N), fp32
    /* With 8-bit codes, what their roundings allow (NULL otherwise): y (T,), the final state (N,), after each token (T, N). */
    double *bound = tol.codes8 ? host_alloc((T * (N + 1) + N) * 8, "bounds") : NULL;
    bool skipped;
    oracle_decode_serving_row(&sv, row, y, state, per, terms, &skipped);
    if (bound)
        oracle_decode_codes8_bound_row(&sv, row, tol.codes8, per, bound, bound + T,
                                       sv.intermediate_states ? bound + T + N : NULL);
    for (int64_t k = 0; k < T; k++) got[k] = ((const float *)sv.t.y)[(bi * T + k) * W + c];
    CheckResult r = compare_f32_bounded(got, y, tol.of_terms ? terms : NULL, bound, T, tol);
    if (!skipped) {
        int64_t slot = sv.state_batch_indices ? sv.state_batch_indices[bi] : bi;
        r = check_merge(r, compare_f32_bounded(sv.t.state_out + (slot * W + c) * N, state, NULL,
                                               bound ? bound + T : NULL, N, tol));
    }
    if (sv.intermediate_states) {
        for (int64_t k = 0; k < T; k++)
            for (int64_t n = 0; n < N; n++) got[T + k * N + n] = sv.intermediate_states[((bi * T + k) * W + c) * N + n];
        r = check_merge(r, compare_f32_bounded(got + T, per, NULL, bound ? bound + T + N : NULL, T * N, tol));
    }
    free(y);
    free(terms);
    free(state);
    free(per);
    free(got);
    free(bound);
    return r;
}

/* What the roundings of an 8-bit state allow (t holds the inputs only). */
static void decode_codes8_bound(const Problem *p, void *const *t, int codes8, double *const *bound) {
    DecodeServing sv = decode_serving_view(p, t);
    oracle_decode_codes8_bound(&sv, p->opt[DECODE_INTERMEDIATE], codes8, bound[T_Y], bound[T_STATE_OUT],
                               bound[T_INTERMEDIATE_STATES]);
}

/* exp(Δ·A) per state element and token for M1 (A differs along N), per head
 * and token for M2 (one A per head), and softplus's exp per Δ. */
static double decode_exps(const Problem *p) {
    double per_token = p->opt[DECODE_FORM] == DECODE_M1 ? (double)p->dim * p->dstate + (p->softplus ? p->dim : 0)
                                            : (double)p->opt[DECODE_HEADS] * (p->softplus ? 2 : 1);
    return per_token * p->batch * p->seqlen;
}

/* ---------------------------------------------------------------- --load */

/* Sizes and form from state.npy, x.npy and B.npy. */
static void decode_infer_sizes(Problem *p, const LoadFolder *f, const NpyShape *st, const NpyShape *x,
                               const NpyShape *B) {
    if (st->ndim == 3) {
        p->opt[DECODE_FORM] = DECODE_M1;
        p->batch = st->shape[0], p->dim = st->shape[1], p->dstate = st->shape[2];
        p->groups = 1;
        if (x->ndim != 2 && x->ndim != 3)
            die_usage("--load: %s/x.npy must be (batch, dim) or (batch, tokens, dim), has %d dims", f->dir, x->ndim);
        p->seqlen = x->ndim == 3 ? x->shape[1] : 1;
    } else if (st->ndim == 4) {
        p->opt[DECODE_FORM] = DECODE_M2;
        p->batch = st->shape[0], p->opt[DECODE_HEADS] = st->shape[1], p->opt[DECODE_HEADDIM] = st->shape[2], p->dstate = st->shape[3];
        if (x->ndim != 3 && x->ndim != 4)
            die_usage("--load: %s/x.npy must be (batch, heads, headdim) or (batch, tokens, heads, headdim), has %d dims",
                      f->dir, x->ndim);
        p->seqlen = x->ndim == 4 ? x->shape[1] : 1;
        if (B->ndim != x->ndim)
            die_usage("--load: %s/B.npy must be (batch,%s groups, dstate), has %d dims", f->dir,
                      x->ndim == 4 ? " tokens," : "", B->ndim);
        p->groups = B->shape[B->ndim - 2];
        if (p->groups < 1 || p->opt[DECODE_HEADS] % p->groups != 0)
            die_usage("--load: %s/B.npy: %lld groups do not divide %lld heads", f->dir, (long long)p->groups,
                      (long long)p->opt[DECODE_HEADS]);
    } else {
        die_usage("--load: %s/state.npy must be (batch, dim, dstate) or (batch, heads, headdim, dstate), has %d dims",
                  f->dir, st->ndim);
    }
    p->has_z = f->given[T_Z];
    p->has_D = f->given[T_D];
    p->has_bias = f->given[T_DT_BIAS];
    p->softplus = meta_bool(f, "dt_softplus", false);  // the official default
}

static void decode_infer(Problem *p, const LoadFolder *f) {
    const NpyShape *st = folder_shape(f, T_STATE), *x = folder_shape(f, T_X), *B = folder_shape(f, T_B);
    decode_infer_sizes(p, f, st, x, B);
    p->opt[DECODE_INTERMEDIATE] = f->given[T_INTERMEDIATE_STATES];
    if (f->given[T_STATE_BATCH_INDICES]) {  // a pool: the state's rows are slots, the batch is x's
        const NpyShape *idx = folder_shape(f, T_STATE_BATCH_INDICES);
        if (idx->ndim != 1 || idx->shape[0] != x->shape[0])
            die_usage("--load: %s/state_batch_indices.npy must be (batch=%lld,), x.npy's first size", f->dir,
                      (long long)x->shape[0]);
        if (st->shape[0] < x->shape[0])
            die_usage("--load: %s/state.npy holds %lld slots, fewer than x.npy's batch of %lld", f->dir,
                      (long long)st->shape[0], (long long)x->shape[0]);
        p->opt[DECODE_SLOTS] = p->batch;
        p->batch = x->shape[0];
    }
}

static void decode_meta_text(const Problem *p, char *buf, size_t len) {
    snprintf(buf, len, "{\"dt_softplus\": %s}", p->softplus ? "true" : "false");
}

/* ----------------------------------------------------------------- shapes */

/* Small and awkward (docs/design.md §3), both forms: T = 1 and T > 1, N and p
 * not powers of two (and N not a multiple of 4), g > 1, flags on and off,
 * dt + bias above 20, the S4 shapes, and rows longer than one pass of the
 * coalesced kernels' lanes (N 600 in 16-byte pieces, N 130 in floats). */
static const Problem CHECK_CASES[] = {
    {.batch = 1, .seqlen = 1, .dim = 8, .dstate = 16, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .opt = {[DECODE_FORM] = DECODE_M1}},
    {.batch = 2, .seqlen = 1, .dim = 40, .dstate = 7, .groups = 1, .has_D = true, .has_bias = true, .softplus = true, .big_delta = true, .opt = {[DECODE_FORM] = DECODE_M1}},
    {.batch = 3, .seqlen = 5, .dim = 33, .dstate = 16, .groups = 1, .has_z = true, .has_bias = true, .softplus = true, .opt = {[DECODE_FORM] = DECODE_M1}},
    {.batch = 2, .seqlen = 37, .dim = 16, .dstate = 32, .groups = 1, .has_z = true, .has_D = true, .opt = {[DECODE_FORM] = DECODE_M1}},
    {.batch = 2, .seqlen = 1, .dim = 2048, .dstate = 16, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .opt = {[DECODE_FORM] = DECODE_M1}},
    {.batch = 2, .seqlen = 5, .dim = 24, .dstate = 600, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .opt = {[DECODE_FORM] = DECODE_M1}},
    {.batch = 1, .seqlen = 1, .dstate = 8, .groups = 1, .opt = {[DECODE_HEADS] = 2, [DECODE_HEADDIM] = 4, [DECODE_FORM] = DECODE_M2}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    {.batch = 2, .seqlen = 1, .dstate = 40, .groups = 3, .opt = {[DECODE_HEADS] = 6, [DECODE_HEADDIM] = 24, [DECODE_FORM] = DECODE_M2}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .big_delta = true},
    {.batch = 2, .seqlen = 3, .dstate = 33, .groups = 2, .opt = {[DECODE_HEADS] = 4, [DECODE_HEADDIM] = 7, [DECODE_FORM] = DECODE_M2}, .has_bias = true, .softplus = true},
    {.batch = 2, .seqlen = 64, .dstate = 128, .groups = 1, .opt = {[DECODE_HEADS] = 4, [DECODE_HEADDIM] = 16, [DECODE_FORM] = DECODE_M2}, .has_z = true, .has_D = true},
    {.batch = 1, .seqlen = 300, .dstate = 16, .groups = 2, .opt = {[DECODE_HEADS] = 2, [DECODE_HEADDIM] = 8, [DECODE_FORM] = DECODE_M2}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    {.batch = 2, .seqlen = 1, .dstate = 128, .groups = 1, .opt = {[DECODE_HEADS] = 32, [DECODE_HEADDIM] = 64, [DECODE_FORM] = DECODE_M2}, .has_D = true, .has_bias = true, .softplus = true},
    {.batch = 2, .seqlen = 3, .dstate = 130, .groups = 2, .opt = {[DECODE_HEADS] = 4, [DECODE_HEADDIM] = 8, [DECODE_FORM] = DECODE_M2}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    /* The staged versions' N (fp32 32, 64, 128; fp16 64, 128, 256), p not a
     * multiple of their 32-row units (a short last unit), g > 1. */
    {.batch = 3, .seqlen = 2, .dstate = 64, .groups = 2, .opt = {[DECODE_HEADS] = 4, [DECODE_HEADDIM] = 40, [DECODE_FORM] = DECODE_M2}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    {.batch = 2, .seqlen = 1, .dstate = 256, .groups = 1, .opt = {[DECODE_HEADS] = 3, [DECODE_HEADDIM] = 33, [DECODE_FORM] = DECODE_M2}, .has_D = true, .has_bias = true, .softplus = true},
    {.batch = 2, .seqlen = 4, .dstate = 32, .groups = 2, .opt = {[DECODE_HEADS] = 2, [DECODE_HEADDIM] = 70, [DECODE_FORM] = DECODE_M2}, .has_z = true, .big_delta = true, .has_bias = true, .softplus = true},
    /* The staged versions' Mamba-1 rows (N 16): units of 32 (fp32) and 64
     * (16-bit) channels, d 300 ending on a short unit, T > 1. */
    {.batch = 3, .seqlen = 2, .dim = 300, .dstate = 16, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .opt = {[DECODE_FORM] = DECODE_M1}},
    /* A server's: the states in a pool of shuffled slots with padding
     * entries (every third), T draft tokens with the state after each, both. */
    {.batch = 5, .seqlen = 1, .dim = 8, .dstate = 16, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .opt = {[DECODE_FORM] = DECODE_M1, [DECODE_SLOTS] = 11}},
    {.batch = 3, .seqlen = 4, .dim = 5, .dstate = 7, .groups = 1, .has_D = true, .has_bias = true, .softplus = true, .opt = {[DECODE_FORM] = DECODE_M1, [DECODE_SLOTS] = 3, [DECODE_INTERMEDIATE] = 1}},
    {.batch = 2, .seqlen = 8, .dstate = 16, .groups = 1, .opt = {[DECODE_HEADS] = 2, [DECODE_HEADDIM] = 4, [DECODE_FORM] = DECODE_M2, [DECODE_INTERMEDIATE] = 1}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    {.batch = 4, .seqlen = 5, .dstate = 9, .groups = 2, .opt = {[DECODE_HEADS] = 4, [DECODE_HEADDIM] = 6, [DECODE_FORM] = DECODE_M2, [DECODE_SLOTS] = 6, [DECODE_INTERMEDIATE] = 1}, .has_z = true, .has_bias = true, .softplus = true, .big_delta = true},
    /* The same at the staged versions' N: a short last unit (p 20), g > 1. */
    {.batch = 5, .seqlen = 3, .dstate = 64, .groups = 2, .opt = {[DECODE_HEADS] = 4, [DECODE_HEADDIM] = 20, [DECODE_FORM] = DECODE_M2, [DECODE_SLOTS] = 9, [DECODE_INTERMEDIATE] = 1}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    {.batch = 7, .seqlen = 1, .dstate = 128, .groups = 1, .opt = {[DECODE_HEADS] = 3, [DECODE_HEADDIM] = 16, [DECODE_FORM] = DECODE_M2, [DECODE_SLOTS] = 12}, .has_D = true, .has_bias = true, .softplus = true},
    {.batch = 5, .seqlen = 3, .dim = 300, .dstate = 16, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true, .opt = {[DECODE_FORM] = DECODE_M1, [DECODE_SLOTS] = 9, [DECODE_INTERMEDIATE] = 1}},
};

/* Benchmark sets (docs/design.md §7, S4): one token, batch 1..256 (the state
 * fp32, except in a DT_FP16_STATE16 or DT_BF16_STATE16 version);
 * Mamba-2 h 32, p 64, N 128, g 1, no z; Mamba-1 d 2048, N 16, z given. Then
 * T tokens per launch at batch 8, where the state's bytes are paid once.
 * Then a server's: batch 64 in a pool of 1024 slots (every third entry
 * padding), and T = 1, 2, 4, 8 draft tokens at batch 1 and 64 with the
 * state after each. */
#define S4_M2_SIZES .dstate = 128, .groups = 1, .has_D = true, .has_bias = true, .softplus = true
#define S4_M1_SIZES .dim = 2048, .dstate = 16, .groups = 1, .has_z = true, .has_D = true, .has_bias = true, .softplus = true
#define S4_M2_OPT [DECODE_HEADS] = 32, [DECODE_HEADDIM] = 64, [DECODE_FORM] = DECODE_M2
#define S4_M1_OPT [DECODE_FORM] = DECODE_M1
#define S4_M2 {S4_M2_SIZES, .opt = {S4_M2_OPT}}
#define S4_M1 {S4_M1_SIZES, .opt = {S4_M1_OPT}}
static const BenchGrid BENCH[] = {
    {.base = S4_M2, .batch = {1, 4, 8, 16, 32, 64, 128, 256}, .seqlen = {1}},
    {.base = S4_M1, .batch = {1, 4, 8, 16, 32, 64, 128, 256}, .seqlen = {1}},
    {.base = S4_M2, .batch = {8}, .seqlen = {4, 16, 64, 256}},  // T = 1 at batch 8 is S4's row
    {.base = S4_M1, .batch = {8}, .seqlen = {4, 16, 64, 256}},
    {.base = {S4_M2_SIZES, .opt = {S4_M2_OPT, [DECODE_SLOTS] = 1024}}, .batch = {64}, .seqlen = {1}},
    {.base = {S4_M1_SIZES, .opt = {S4_M1_OPT, [DECODE_SLOTS] = 1024}}, .batch = {64}, .seqlen = {1}},
    {.base = {S4_M2_SIZES, .opt = {S4_M2_OPT, [DECODE_INTERMEDIATE] = 1}}, .batch = {1, 64}, .seqlen = {1, 2, 4, 8}},
    {.base = {S4_M1_SIZES, .opt = {S4_M1_OPT, [DECODE_INTERMEDIATE] = 1}}, .batch = {1, 64}, .seqlen = {1, 2, 4, 8}},
};
static const BenchGrid QUICK[] = {
    {.base = S4_M2, .batch = {1, 64}, .seqlen = {1}},
    {.base = S4_M1, .batch = {1, 64}, .seqlen = {1}},
};

/* The step's tolerances by the state's dtype, fp32, fp16, bf16: one step
 * rounds far fewer terms than a scan, so they are tighter than the scans'
 * at fp32 and looser at 16 bits, where the state itself is rounded. */
static const Tol TOL_STEP[3] = {
    {"decode fp32", 3e-4, 1e-3, 0.0, false, CODES_NONE},
    {"decode fp16", 5e-3, 1e-2, 0.0, false, CODES_NONE},
    {"decode bf16", 1e-2, 5e-2, 0.0, false, CODES_NONE},
};

static const OpFlag DECODE_FLAGS[] = {
    {"--heads", "H  heads (Mamba-2)", OPT_SIZE, DECODE_HEADS, NULL, true, false, true, NULL},
    {"--headdim", "P  head dimension (Mamba-2)", OPT_SIZE, DECODE_HEADDIM, NULL, true, false, false, NULL},
    {"--form", "m1|m2  the Mamba-1 or the Mamba-2 step (default: both)", OPT_CHOICE, DECODE_FORM, "m1|m2", false,
     true, false, NULL},
    {"--tokens", "T[,T...]  tokens per launch", OPT_SEQLEN, 0, NULL, true, false, false, NULL},
    {"--slots", "S  the states in a pool of S slots, each batch entry naming its own", OPT_SIZE, DECODE_SLOTS, NULL,
     true, false, false, "slots"},
    {"--intermediate", "also write the state after every token (speculative decoding)", OPT_SWITCH,
     DECODE_INTERMEDIATE, NULL, true, false, false, "states"},
};

static int decode_csv_sizes(const Problem *p, int64_t *v) {
    return mamba_csv_sizes(p, p->opt[DECODE_HEADS], p->opt[DECODE_HEADDIM], 0, v);
}

const Op OP_DECODE = {
    .args = ARGS_DECODE,
    .version_size = sizeof(DecodeVersion),
    .tol_fp32 = &TOL_STEP[0],
    .tol_fp16 = &TOL_STEP[1],
    .tol_bf16 = &TOL_STEP[2],
    .flags = DECODE_FLAGS, .nflags = COUNT(DECODE_FLAGS),
    .csv_columns = MAMBA_CSV_COLUMNS,
    .csv_sizes = decode_csv_sizes,
    .tensors = decode_tensors,
    .validate = decode_validate,
    .command_line_base = decode_command_line_base,
    .shape_text = decode_shape_text,
    .bench_text = decode_bench_text,
    .workspace = decode_workspace,
    .unsupported = decode_unsupported,
    .run = decode_run,
    .indices = decode_indices,
    .from_loaded = decode_from_loaded,
    .big_delta = decode_big_delta,
    .oracle = decode_oracle,
    .oracle_terms = decode_oracle_terms,
    .terms_output = T_Y,
    .terms_rtol = decode_terms_rtol,
    .codes8_bound = decode_codes8_bound,
    .rows = decode_rows_of,
    .check_row = decode_check_row,
    .exps = decode_exps,
    .flops = NULL,
    .infer = decode_infer,
    .meta_text = decode_meta_text,
    .fixtures = fixtures_check_decode,
    .bytes = decode_bytes,
    .run_split = decode_run_split,
    .split_what = "T one-token launches",
    .loops = decode_loops,
    .loop_output = T_STATE_OUT,
    .loop_input = T_STATE,
    .per_thread = decode_per_thread,
    .check_cases = CHECK_CASES, .ncheck = COUNT(CHECK_CASES),
    .check_base = {.batch = 2, .seqlen = 1, .dstate = 40, .groups = 2, .opt = {[DECODE_HEADS] = 4, [DECODE_HEADDIM] = 24, [DECODE_FORM] = DECODE_M2}, .has_z = true, .has_D = true, .has_bias = true, .softplus = true},
    .bench_base = {.batch = 64, .seqlen = 1, .dstate = 128, .groups = 1, .opt = {[DECODE_HEADS] = 32, [DECODE_HEADDIM] = 64, [DECODE_FORM] = DECODE_M2}, .has_D = true, .has_bias = true, .softplus = true},
    .bench = BENCH, .nbench = COUNT(BENCH),
    .quick = QUICK, .nquick = COUNT(QUICK),
};
