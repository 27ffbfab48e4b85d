/* The driver core: inputs, checks and --dump/--load for any operation
 * (driver.h); the timing loop and CSV rows are in bench.c, the problems of
 * a run in problems.c (session.h holds what the three share). A problem
 * lives on the host as its operation's table of named tensors, fp32 arrays
 * in the official layouts. A version reads the inputs as made (PLAIN),
 * rounded to fp16 (ROUNDED: fp16 versions, and every version of an
 * fp16_inputs chapter) or to bf16 (ROUNDED_BF16: bf16 versions). The rounded
 * sets, the oracle on each set and each previous stage's outputs are made
 * once per problem, when a version first needs them. */
#include "driver.h"
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "fixture.h"
#include "gpu.h"
#include "half.h"
#include "rng.h"

/* ------------------------------------------------------------------ sizes */

/* a*b with overflow caught: sizes come from the command line and files. */

static bool is_input(const TensorSpec *t) { return t->role != OUTPUT; }
/* An output this problem has (chunk_states only where sequences are packed). */
static bool is_output(const TensorSpec *t) { return t->role == OUTPUT && t->present; }

/* n 16-bit values a version of dtype dt wrote (bf16 or fp16 bits) as floats. */
static void widen_bits(DType dt, const uint16_t *h, float *x, int64_t n) {
    if (dtype_bf16(dt)) bf16s_to_floats(h, x, n);
    else halves_to_floats(h, x, n);
}

/* The op's table for p, once the op has accepted p (exit 2 otherwise) and
 * every tensor's element count fits (mul exits 2 on overflow). */
int problem_table(const Op *op, const Problem *p, TensorSpec *t) {
    op->validate(p);
    int n = op->tensors(p, t);
    for (int k = 0; k < n; k++) tensor_numel(&t[k]);
    return n;
}

/* Minimal bytes of one forward: each input read once, each output written once. */
double problem_bytes(const TensorSpec *t, int n, DType dt) {
    double bytes = 0.0;
    for (int k = 0; k < n; k++)
        if (t[k].present) bytes += (double)tensor_numel(&t[k]) * (double)tensor_elem_bytes(&t[k], dt);
    return bytes;
}

/* "z+D+bias+softplus+h0" ("Dhp": D of shape (h, p); "packed64": 64
 * sequences on one row; "slots1024": the states in a pool of 1024 slots;
 * "states": the state after every token written), "none" without any. */
void flags_text(const Problem *p, char *buf, size_t len) {
    char packed[32] = "", slots[32] = "";  // "packed64+", "slots1024+"
    if (p->nseq) snprintf(packed, sizeof(packed), "packed%lld+", (long long)p->nseq);
    if (p->slots) snprintf(slots, sizeof(slots), "slots%lld+", (long long)p->slots);
    snprintf(buf, len, "%s%s%s%s%s%s%s%s%s", p->has_z ? "z+" : "",
             p->has_D ? (p->D_per_channel ? "Dhp+" : "D+") : "", p->has_bias ? "bias+" : "",
             p->softplus ? "softplus+" : "", p->has_h0 ? "h0+" : "", p->hydra ? "hydra+" : "", packed, slots,
             p->intermediate ? "states+" : "");
    size_t n = strlen(buf);
    if (n == 0) snprintf(buf, len, "none");
    else buf[n - 1] = '\0';
}

/* The dtype of x, dt, B, C, y...: a 16-bit state shows in the version's name. */
const char *dtype_name(DType dt) { return dt == DT_FP32 ? "fp32" : dtype_bf16(dt) ? "bf16" : "fp16"; }

/* ------------------------------------------------------------ the session */

/* Version i (0-based) of the chapter's array of the op's version type. */
const VersionInfo *version_at(const Session *se, int i) {
    return (const VersionInfo *)((const char *)se->ch->versions + (size_t)i * se->op->version_size);
}

int input_set(const Session *se, const VersionInfo *v) {
    if (dtype_bf16(v->dtype)) return ROUNDED_BF16;
    return (v->dtype != DT_FP32 || se->ch->fp16_inputs) ? ROUNDED : PLAIN;
}

/* Whether the oracle gives Σ|term| on input set `set`: some version that
 * reads the set is held to it (PLAIN: the fp32 versions). */
static bool of_terms(const Session *se, int set) {
    return se->op->oracle_terms && (set != PLAIN || !se->op->terms_rtol || se->op->terms_rtol(DT_FP32));
}

Tol version_tol(const Session *se, const VersionInfo *v) {
    const int set = input_set(se, v);
    Tol tol = TOLERANCES[set == ROUNDED_BF16 ? se->op->tol_bf16 : set == ROUNDED ? se->op->tol_fp16 : se->op->tol_fp32];
    tol.of_terms = of_terms(se, set) && (!se->op->terms_rtol || se->op->terms_rtol(v->dtype));
    return tol;
}

/* ---------------------------------------------------------- host problems */

/* The tensors of one run on the host in table order, as the op takes them:
 * inputs of one set, outputs out[k] (fp32; out NULL: none). */
void host_view(const HostProblem *hp, int set, float *const *out, void **t) {
    for (int k = 0; k < hp->n; k++)
        t[k] = is_input(&hp->t[k]) ? (void *)hp->in[set][k] : out ? (void *)out[k] : NULL;
}

/* Input set `set` (ROUNDED or ROUNDED_BF16): copies of the inputs of
 * VERSION_DTYPE rounded to fp16 (bf16) values, so that the oracle sees what a
 * 16-bit version reads, and their bits for those versions; each set is
 * rounded from the inputs as made (bf16 from fp16 values would inherit
 * fp16's range). Inputs of STATE_DTYPE keep their fp32 values (a 16-bit
 * version with an fp32 state reads them so) and get fp16 (bf16) bits, both
 * rounded to nearest even, for the versions that store them in 16 bits
 * (dtype_state16): those are checked against the oracle on the fp32 state,
 * so the check counts the state's rounding. */
static void host_round(HostProblem *hp, int set) {
    const bool bf16 = set == ROUNDED_BF16;
    for (int k = 0; k < hp->n; k++) {
        const TensorSpec *t = &hp->t[k];
        float *x = hp->in[PLAIN][k];
        if (x && t->dtype == STATE_DTYPE) {
            hp->bits[set][k] = host_alloc(tensor_numel(t) * 2, t->name);
            if (bf16) floats_to_bf16s(x, hp->bits[set][k], tensor_numel(t));
            else floats_to_halves(x, hp->bits[set][k], tensor_numel(t));
        } else if (x && t->dtype == VERSION_DTYPE) {
            int64_t n = tensor_numel(t);
            hp->bits[set][k] = host_alloc(n * 2, t->name);
            if (bf16) floats_to_bf16s(x, hp->bits[set][k], n);
            else floats_to_halves(x, hp->bits[set][k], n);
            x = host_alloc(n * 4, t->name);  // the rounded values: the bits widened back
            widen_bits(bf16 ? DT_BF16 : DT_FP16, hp->bits[set][k], x, n);
        }
        hp->in[set][k] = x;
    }
    hp->rounded[set] = true;
}

void need_inputs(HostProblem *hp, int set) {
    if (set != PLAIN && !hp->rounded[set]) host_round(hp, set);
}

/* Random inputs in the op's ranges, drawn in table order from one seed. */
void host_random(const Session *se, HostProblem *hp, const Problem *p, uint64_t seed) {
    memset(hp, 0, sizeof(*hp));
    hp->p = *p;
    hp->n = problem_table(se->op, p, hp->t);
    Rng r;
    rng_seed(&r, seed);
    for (int k = 0; k < hp->n; k++) {
        const TensorSpec *t = &hp->t[k];
        if (!is_input(t) || !t->present) continue;
        hp->in[PLAIN][k] = host_alloc(tensor_numel(t) * 4, t->name);
        if (t->dtype != INDEX_INT32) rng_fill_uniform(&r, hp->in[PLAIN][k], tensor_numel(t), t->lo, t->hi);
    }
    if (se->op->indices) {
        void *t[MAX_TENSORS];  // the inputs, the indices not made yet
        host_view(hp, PLAIN, NULL, t);
        se->op->indices(p, t);
    }
    if (p->big_delta) {
        void *t[MAX_TENSORS];  // the inputs just drawn
        host_view(hp, PLAIN, NULL, t);
        se->op->big_delta(p, t);
    }
}

/* Keep fp32 outputs x (table order; NULL where none) as fp64 in r. */
static void reference_keep(const HostProblem *hp, Reference *r, float *const *x) {
    r->tried = true;
    for (int k = 0; k < hp->n; k++) {
        if (is_input(&hp->t[k]) || !x[k]) continue;
        int64_t n = tensor_numel(&hp->t[k]);
        r->out[k] = host_alloc(n * 8, hp->t[k].name);
        for (int64_t i = 0; i < n; i++) r->out[k][i] = x[k][i];
        r->ran = true;
    }
}

static void reference_free(Reference *r) {
    for (int k = 0; k < MAX_TENSORS; k++) {
        free(r->out[k]);
        free(r->scale[k]);
    }
}

void host_free(HostProblem *hp) {
    for (int k = 0; k < hp->n; k++) {
        for (int s = ROUNDED; s < NSETS; s++) {
            if (hp->in[s][k] != hp->in[PLAIN][k]) free(hp->in[s][k]);
            free(hp->bits[s][k]);
        }
        free(hp->in[PLAIN][k]);
    }
    for (int s = 0; s < NSETS; s++) {
        reference_free(&hp->oracle[s]);
        for (int k = 0; k < 3; k++) reference_free(&hp->prev[k][s]);
    }
    reference_free(&hp->given);
}

/* Host room for a run's outputs, fp32 in table order (NULL for inputs). */
void outputs_alloc(const HostProblem *hp, float **out) {
    for (int k = 0; k < hp->n; k++)
        out[k] = is_output(&hp->t[k]) ? host_alloc(tensor_numel(&hp->t[k]) * 4, hp->t[k].name) : NULL;
}

void outputs_free(const HostProblem *hp, float **out) {
    for (int k = 0; k < hp->n; k++) { free(out[k]); out[k] = NULL; }
}

/* ------------------------------------------------------- running a version */

/* A CPU version on host arrays in its dtype; outputs widened to fp32 in out. */
/* A CPU version on host tensors: the op's run, or with split its second
 * way (run_split); the reason that does not apply, else NULL. */
static const char *run_cpu_as(const Session *se, const VersionInfo *v, HostProblem *hp, int set, float **out,
                              bool split) {
    void *t[MAX_TENSORS];                      // what the version reads and writes
    uint16_t *half_out[MAX_TENSORS] = {NULL};  // (table shape) fp16 | bf16 outputs of a 16-bit version
    host_view(hp, set, out, t);
    for (int k = 0; k < hp->n && v->dtype != DT_FP32; k++) {
        const TensorSpec *s = &hp->t[k];
        if (!s->present || tensor_elem_bytes(s, v->dtype) != 2) continue;
        if (is_input(s)) t[k] = hp->bits[set][k];
        else t[k] = half_out[k] = host_alloc(tensor_numel(s) * 2, s->name);
    }
    size_t ws_bytes = se->op->workspace(v, &hp->p);
    void *ws = ws_bytes ? host_alloc((int64_t)ws_bytes, "workspace") : NULL;
    const char *why = NULL;
    if (split) why = se->op->run_split(v, &hp->p, t, false);
    else se->op->run(v, &hp->p, t, ws);
    for (int k = 0; k < hp->n; k++) {
        if (half_out[k] && !why) widen_bits(v->dtype, half_out[k], out[k], tensor_numel(&hp->t[k]));
        free(half_out[k]);
    }
    free(ws);
    return why;
}

void run_cpu(const Session *se, const VersionInfo *v, HostProblem *hp, int set, float **out) {
    run_cpu_as(se, v, hp, set, out, false);
}

size_t device_bytes(const Op *op, const VersionInfo *v, const Problem *p, const TensorSpec *t, int n) {
    return (size_t)problem_bytes(t, n, v->dtype) + op->workspace(v, p);
}

void device_too_small(const Op *op, const VersionInfo *v, const Problem *p, size_t need, size_t free_b) {
    char shape[128];
    op->shape_text(p, shape, sizeof(shape));
    die_usage("%s at %s needs %zu bytes (%.1f MiB) of device memory, %zu free", v->name, shape, need,
              need / 1048576.0, free_b);
}

/* Input k of one set into dst (device), in the version's dtype dt. */
void upload_input(void *dst, const HostProblem *hp, int k, int set, DType dt) {
    const TensorSpec *s = &hp->t[k];
    size_t bytes = (size_t)tensor_numel(s) * tensor_elem_bytes(s, dt);
    h2d(dst, tensor_elem_bytes(s, dt) == 2 ? (const void *)hp->bits[set][k] : hp->in[set][k], bytes);
}

void device_problem(DeviceProblem *d, const Op *op, const VersionInfo *v, const HostProblem *hp, int set) {
    size_t need = device_bytes(op, v, &hp->p, hp->t, hp->n), free_b = gpu_free_bytes();
    if (need > free_b) device_too_small(op, v, &hp->p, need, free_b);
    memset(d, 0, sizeof(*d));
    mem_reset_peak();
    for (int k = 0; k < hp->n; k++) {
        const TensorSpec *s = &hp->t[k];
        if (!s->present) continue;
        size_t bytes = (size_t)tensor_numel(s) * tensor_elem_bytes(s, v->dtype);
        d->t[k] = dev_alloc(bytes, is_input(s) ? MEM_INPUT : MEM_OUTPUT, s->name);
        if (is_input(s)) upload_input(d->t[k], hp, k, set, v->dtype);
    }
    size_t ws_bytes = op->workspace(v, &hp->p);
    d->ws = ws_bytes ? dev_alloc(ws_bytes, MEM_WORKSPACE, "workspace") : NULL;
}

/* Fill the outputs with NaN so a kernel that skips an element cannot pass. */
void device_poison(const DeviceProblem *d, const HostProblem *hp, DType dt) {
    for (int k = 0; k < hp->n; k++)
        if (is_output(&hp->t[k])) dev_poison(d->t[k], (size_t)tensor_numel(&hp->t[k]) * tensor_elem_bytes(&hp->t[k], dt));
}

void device_outputs(const DeviceProblem *d, const HostProblem *hp, DType dt, float **out) {
    for (int k = 0; k < hp->n; k++) {
        const TensorSpec *s = &hp->t[k];
        if (!is_output(s)) continue;
        int64_t n = tensor_numel(s);
        if (tensor_elem_bytes(s, dt) == 2) {
            uint16_t *h = host_alloc(n * 2, s->name);  // (table shape) fp16 | bf16 as the version wrote it
            d2h(h, d->t[k], (size_t)n * 2);
            widen_bits(dt, h, out[k], n);
            free(h);
        } else {
            d2h(out[k], d->t[k], (size_t)n * 4);
        }
    }
}

void device_free(DeviceProblem *d) {
    for (int k = 0; k < MAX_TENSORS; k++) dev_free(d->t[k]);
    dev_free(d->ws);
}

/* The same buffers with the op's loop output written over its loop input
 * (the decode state updated in place). */
DeviceProblem in_place_view(const Op *op, const DeviceProblem *d) {
    DeviceProblem view = *d;
    view.t[op->loop_output] = view.t[op->loop_input];
    return view;
}

/* How check_problem runs a version: once; in place (GPU, ops with loops: the
 * loop output over its loop input); or the op's second way (run_split). */
typedef enum { RUN_ONCE, RUN_IN_PLACE, RUN_SPLIT } RunMode;

/* Run version v on one input set (CPU or GPU); outputs fp32 in out. Returns
 * NULL, or why the op's second way does not apply (out then unwritten). */
static const char *run_version(const Session *se, const VersionInfo *v, HostProblem *hp, int set, RunMode mode,
                               float **out) {
    need_inputs(hp, set);
    if (!v->gpu) return run_cpu_as(se, v, hp, set, out, mode == RUN_SPLIT);
    DeviceProblem d;
    device_problem(&d, se->op, v, hp, set);
    device_poison(&d, hp, v->dtype);
    DeviceProblem view = mode == RUN_IN_PLACE ? in_place_view(se->op, &d) : d;
    const char *why = NULL;
    if (mode == RUN_SPLIT) why = se->op->run_split(v, &hp->p, view.t, true);
    else se->op->run(v, &hp->p, view.t, view.ws);
    if (!why) {
        gpu_sync();
        device_outputs(&view, hp, v->dtype, out);
    }
    device_free(&d);
    return why;
}

/* ------------------------------------------------------------- dump, load */

/* The inputs of one set and the outputs out of a version of dtype dt. */
static void dump_problem(const Session *se, const HostProblem *hp, int set, float *const *out, DType dt) {
    const float *x[MAX_TENSORS];  // what each file holds
    for (int k = 0; k < hp->n; k++) x[k] = is_input(&hp->t[k]) ? hp->in[set][k] : out[k];
    char meta[256];
    se->op->meta_text(&hp->p, meta, sizeof(meta));
    folder_write(se->dump, hp->t, hp->n, x, dt, meta);
}

/* --load DIR: the op's tensors by name (a missing optional input is off),
 * the problem as the op reads it from the shapes and meta.json, every file's
 * shape checked against its table. Outputs the folder holds go to hp->given. */
static void load_problem(const Session *se, const char *dir, HostProblem *hp) {
    TensorSpec names[MAX_TENSORS];  // the table's names and roles; its sizes are not used
    int n = se->op->tensors(&se->op->check_base, names);
    LoadFolder f;
    float *file[MAX_TENSORS];       // (its shape) fp32, what each file held; NULL where absent
    folder_read(&f, dir, names, n);
    memset(hp, 0, sizeof(*hp));
    se->op->infer(&hp->p, &f);
    hp->n = problem_table(se->op, &hp->p, hp->t);
    for (int k = 0; k < hp->n; k++)
        if (f.given[k]) folder_expect_shape(&f, &hp->t[k], k);
    folder_read_data(&f, names, n, file);  // only once every shape is what the problem expects
    reference_keep(hp, &hp->given, file);
    for (int k = 0; k < hp->n; k++) {
        if (is_input(&hp->t[k])) hp->in[PLAIN][k] = file[k];
        else free(file[k]);
    }
    if (se->op->from_loaded) {
        void *t[MAX_TENSORS];  // the inputs read
        host_view(hp, PLAIN, NULL, t);
        se->op->from_loaded(&hp->p, t);
        problem_table(se->op, &hp->p, hp->t);  // the same tensors, sizes the data completed
    }
}

/* ------------------------------------------------------------------ checks */

/* Every output the reference holds against got, merged into one result. */
/* got against ref; rtol of the oracle's Σ|term| where the op gives one and
 * tol takes it (the same problem's magnitudes serve every reference it is
 * compared with). */
static CheckResult compare(const HostProblem *hp, float *const *got, const Reference *ref, const Reference *oracle_ref,
                           Tol tol) {
    CheckResult all = {0.0, 0.0, 0, 0, true, 0, false, 0.0, 0, 0.0, 0.0, false, -1};
    bool first = true;
    for (int k = 0; k < hp->n; k++) {
        if (!ref->out[k]) continue;
        CheckResult r = compare_f32_scaled(got[k], ref->out[k], tol.of_terms ? oracle_ref->scale[k] : NULL,
                                           tensor_numel(&hp->t[k]), tol);
        all = first ? r : check_merge(all, r);
        first = false;
    }
    return all;
}

/* The fp64 oracle on one input set. */
static const Reference *oracle(const Session *se, HostProblem *hp, int set) {
    Reference *r = &hp->oracle[set];
    if (r->ran) return r;
    need_inputs(hp, set);
    for (int k = 0; k < hp->n; k++)
        if (is_output(&hp->t[k])) r->out[k] = host_alloc(tensor_numel(&hp->t[k]) * 8, "oracle output");
    void *t[MAX_TENSORS];  // the inputs of the set
    host_view(hp, set, NULL, t);
    if (of_terms(se, set)) {
        const int k = se->op->terms_output;
        r->scale[k] = host_alloc(tensor_numel(&hp->t[k]) * 8, "oracle magnitudes");
        se->op->oracle_terms(&hp->p, t, r->out, r->scale[k]);
    } else {
        se->op->oracle(&hp->p, t, r->out);
    }
    r->tried = r->ran = true;
    return r;
}

/* Previous stage `slot` (0 prev_cpu, 1 and 2 prev_gpu) on the inputs a
 * version of set `set` saw; not ran when it cannot run this shape here. */
static const Reference *previous(const Session *se, HostProblem *hp, int slot, const VersionInfo *prev, int set) {
    if (prev->dtype != DT_FP32) set = input_set(se, prev);  // a 16-bit stage reads its own rounding
    Reference *r = &hp->prev[slot][set];
    if (r->tried) return r;
    r->tried = true;
    if (se->op->unsupported(prev, &hp->p) || (prev->gpu && !gpu_available())) return r;
    float *out[MAX_TENSORS];  // the previous stage's outputs, fp32
    outputs_alloc(hp, out);
    run_version(se, prev, hp, set, RUN_ONCE, out);
    reference_keep(hp, r, out);
    outputs_free(hp, out);
    return r;
}

/* Check every selected version on one problem against the oracle and the
 * previous stages (and against the outputs --load read, when it read any). */
static void check_problem(Session *se, HostProblem *hp) {
    const Chapter *ch = se->ch;
    char shape[160], flags[64], given[128] = "", label[256];
    se->op->shape_text(&hp->p, shape, sizeof(shape));
    flags_text(&hp->p, flags, sizeof(flags));
    printf("%s %s\n", shape, flags);
    for (int k = 0; k < hp->n; k++)  // "y, last_state": the outputs --load read
        if (hp->given.out[k])
            snprintf(given + strlen(given), sizeof(given) - strlen(given), "%s%s", given[0] ? ", " : "", hp->t[k].name);
    const VersionInfo *prevs[3] = {ch->prev_cpu, ch->prev_gpu[0], ch->prev_gpu[1]};

    float *out[MAX_TENSORS] = {NULL}, *last[MAX_TENSORS] = {NULL};  // fp32 outputs of this run, of the last one
    const VersionInfo *last_v = NULL;
    int last_set = PLAIN;
    for (int i = se->first; i <= se->last; i++) {
        const VersionInfo *v = version_at(se, i);
        int set = input_set(se, v);
        Tol tol = version_tol(se, v);
        snprintf(label, sizeof(label), "%d %s vs oracle", i + 1, v->name);
        const char *why = se->op->unsupported(v, &hp->p);
        if (why) { check_skip(label, why); continue; }
        if (v->gpu && !gpu_available()) {
            check_skip(label, gpu_unavailable_reason());
            se->gpu_skipped = true;
            continue;
        }
        outputs_alloc(hp, out);
        run_version(se, v, hp, set, RUN_ONCE, out);
        check_report(label, compare(hp, out, oracle(se, hp, set), oracle(se, hp, set), tol), tol);
        if (hp->given.ran) {
            snprintf(label, sizeof(label), "%d %s vs loaded %s", i + 1, v->name, given);
            check_report(label, compare(hp, out, &hp->given, oracle(se, hp, set), tol), tol);
        }
        for (int k = v->gpu ? 1 : 0; k < (v->gpu ? 3 : 1); k++) {
            if (!prevs[k] || prevs[k] == v) continue;
            snprintf(label, sizeof(label), "%d %s vs %s", i + 1, v->name, prevs[k]->name);
            const Reference *r = previous(se, hp, k, prevs[k], set);
            if (r->ran) check_report(label, compare(hp, out, r, oracle(se, hp, set), tol), tol);
            else check_skip(label, "previous stage cannot run this shape here");
        }
        if (v->gpu && se->op->loops) {
            float *again[MAX_TENSORS] = {NULL};  // fp32 outputs of the in-place run
            outputs_alloc(hp, again);
            run_version(se, v, hp, set, RUN_IN_PLACE, again);
            snprintf(label, sizeof(label), "%d %s in place (%s = %s) vs oracle", i + 1, v->name,
                     hp->t[se->op->loop_output].name, hp->t[se->op->loop_input].name);
            check_report(label, compare(hp, again, oracle(se, hp, set), oracle(se, hp, set), tol), tol);
            outputs_free(hp, again);
        }
        if (se->op->run_split) {
            float *split[MAX_TENSORS] = {NULL};  // fp32 outputs of the smaller launches
            outputs_alloc(hp, split);
            snprintf(label, sizeof(label), "%d %s as %s vs one launch", i + 1, v->name, se->op->split_what);
            const char *why_not = run_version(se, v, hp, set, RUN_SPLIT, split);
            if (why_not) {
                if (why_not[0]) check_skip(label, why_not);
            } else {
                Reference one = {0};  // this version's one launch, as the reference
                reference_keep(hp, &one, out);
                check_report(label, compare(hp, split, &one, oracle(se, hp, set), tol), tol);
                reference_free(&one);
            }
            outputs_free(hp, split);
        }
        outputs_free(hp, last);
        memcpy(last, out, sizeof(out));
        last_v = v;
        last_set = set;
    }
    if (se->dump && last_v) dump_problem(se, hp, last_set, last, last_v->dtype);
    else if (se->dump) printf("--dump: no version ran, nothing written to %s\n", se->dump);
    outputs_free(hp, last);
}

/* ------------------------------------------------------------------- main */

static void list_versions(const Session *se) {
    for (int i = 0; i < se->ch->nversions; i++) {
        const VersionInfo *v = version_at(se, i);
        printf("%3d  %-4s %-4s %-28s %s\n", i + 1, v->gpu ? "gpu" : "cpu", dtype_name(v->dtype), v->name, v->what);
    }
}

/* The output paths, before any work: --csv takes --bench's rows and must be
 * writable, --dump a --check or --load run's problem, and the two differ. */
static void check_output_paths(const Args *a) {
    if (a->csv && !a->bench) die_usage("--csv takes the rows of --bench: add --bench, or drop --csv");
    if (a->sampled && !a->bench) die_usage("--sampled checks --bench's shapes on 64 rows: add --bench");
    if (a->sampled && a->csv) die_usage("--sampled times nothing, so it writes no rows: drop --csv");
    if (a->sampled && (a->given & ARG_REPS)) die_usage("--sampled times nothing: drop --reps");
    if (a->dump && a->bench && !a->check && !a->load)
        die_usage("--dump writes the problem that --check or --load checks, not --bench's: add --check, or drop --dump");
    if (a->csv && a->dump && strcmp(a->csv, a->dump) == 0)
        die_usage("--csv and --dump name the same path, '%s'", a->csv);
    if (!a->csv) return;
    if (access(a->csv, F_OK) == 0) {
        if (access(a->csv, W_OK) != 0) die_usage("--csv: cannot write %s", a->csv);
        return;
    }
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", a->csv);
    char *slash = strrchr(dir, '/');
    if (slash == dir) slash[1] = '\0';
    else if (slash) *slash = '\0';
    else snprintf(dir, sizeof(dir), ".");
    if (access(dir, W_OK) != 0) die_usage("--csv: cannot create %s (its folder is missing or not writable)", a->csv);
}

int chapter_main(const Chapter *ch, int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const Op *op = ch->op;
    Args a;
    args_parse(&a, argc, argv, op->args, ch->title);
    check_output_paths(&a);
    Session se = {ch, op, 0, ch->nversions - 1, false, a.dump};
    if (a.list) { list_versions(&se); return EXIT_OK; }
    if (a.version > ch->nversions)
        die_usage("version %d does not exist: this chapter has versions 1..%d (see --list)",
                  a.version, ch->nversions);
    if (a.version) se.first = se.last = a.version - 1;
    if (a.load && sizes_given(&a)) die_usage("--load takes the shape from its files; drop the shape flags");
    if (a.load && (a.given & ARG_SEED)) die_usage("--load takes its inputs from the files; drop --seed");
    if ((a.given & (ARG_NO_Z | ARG_NO_D | ARG_NO_BIAS | ARG_NO_SOFTPLUS | ARG_H0 | ARG_HYDRA | ARG_FORM)) && a.load)
        die_usage("--load takes the flags from its files; drop the flag options");
    bool quick = !a.check && !a.bench && !a.load;  // what a reader runs
    printf("%s\n", ch->title);

    Problem problems[MAX_PROBLEMS];
    if (a.load) {
        HostProblem hp;
        load_problem(&se, a.load, &hp);
        if (!hp.given.ran) {
            int y = 0;  // the first output
            while (is_input(&hp.t[y])) y++;
            printf("(%s holds no %s.npy: checking against the oracle only)\n", a.load, hp.t[y].name);
        }
        check_problem(&se, &hp);
        host_free(&hp);
    } else if (a.check || quick) {
        int n = 0;  // the op's cases, or with sizes given the grid on its check_base
        if (sizes_given(&a)) n = command_line_grid(op, op->check_base, false, &a, problems);
        else
            for (int k = 0; k < op->ncheck && n < MAX_PROBLEMS; k++)
                if (picked(&op->check_cases[k], &a)) problems[n++] = op->check_cases[k];
        if (a.dump && n != 1) die_usage("--dump writes one problem: give one --batch and one --seqlen (or --tokens) value");
        with_flags(op, &a, problems, n);
        if (ch->check_fixtures) {
            printf("oracle vs the official fixtures\n");
            op->fixtures(repository_root());
        }
        for (int i = 0; i < n; i++) {
            HostProblem hp;
            host_random(&se, &hp, &problems[i], a.seed + (uint64_t)i);
            check_problem(&se, &hp);
            host_free(&hp);
        }
    }
    if (a.bench || quick) {
        int n = bench_problems(&se, &a, quick, problems);
        with_flags(op, &a, problems, n);
        if (quick) cpu_timing(&se, problems, n, a.seed);
        bench(&se, problems, n, &a, quick);
        if (ch->lesson) ch->lesson(&a);
    }
    check_summary(ch->name);
    return check_exit_code(se.gpu_skipped);
}

