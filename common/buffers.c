/* A problem's buffers on the host and on the device, for any operation
 * (buffers.h): its table of named tensors as fp32 host arrays in the
 * official layouts, the rounded input sets, the references, and one problem
 * on the device in a version's dtype. A version reads the inputs as made
 * (PLAIN), rounded to fp16 (ROUNDED: fp16 versions, and every version of an
 * fp16_inputs chapter) or to bf16 (ROUNDED_BF16: bf16 versions). The rounded
 * sets, the oracle on each set and each previous stage's outputs are made
 * once per problem, when a version first needs them. */
#include "buffers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "rng.h"

/* ------------------------------------------------------------------ sizes */

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
        if (t[k].present) bytes += (double)tensor_bytes(&t[k], dt);
    return bytes;
}

/* "z+D+bias+softplus+h0" ("Dhp": D per channel; "packed64": 64 sequences
 * on one row), then the tags of the op's flags ("slots1024" for a size,
 * "hydra" for a switch), "none" without any. */
void flags_text(const Op *op, const Problem *p, char *buf, size_t len) {
    char packed[32] = "";  // "packed64+"
    if (p->nseq) snprintf(packed, sizeof(packed), "packed%lld+", (long long)p->nseq);
    snprintf(buf, len, "%s%s%s%s%s%s", p->has_z ? "z+" : "", p->has_D ? (p->D_per_channel ? "Dhp+" : "D+") : "",
             p->has_bias ? "bias+" : "", p->softplus ? "softplus+" : "", p->has_h0 ? "h0+" : "", packed);
    for (int k = 0; k < op->nflags; k++) {
        const OpFlag *f = &op->flags[k];
        size_t n = strlen(buf);
        if (!f->tag || !p->opt[f->slot] || n >= len) continue;
        if (f->kind == OPT_SWITCH) snprintf(buf + n, len - n, "%s+", f->tag);
        else snprintf(buf + n, len - n, "%s%lld+", f->tag, (long long)p->opt[f->slot]);
    }
    size_t n = strlen(buf);
    if (n == 0) snprintf(buf, len, "none");
    else buf[n - 1] = '\0';
}

/* The dtype of x, dt, B, C, y...: a 16-bit state shows in the version's
 * name; an 8-bit state's code stands for the version (its I/O is fp32). */
const char *dtype_name(DType dt) {
    if (dtype_codes8(dt)) return codes8_name(dtype_codes8(dt));
    return dt == DT_FP32 ? "fp32" : dtype_bf16(dt) ? "bf16" : "fp16";
}

/* ------------------------------------------------------------ the session */

/* Version i (0-based) of the chapter's array of the op's version type. */
const VersionInfo *version_at(const Session *se, int i) {
    return (const VersionInfo *)((const char *)se->ch->versions + (size_t)i * se->op->version_size);
}

int input_set(const Session *se, const VersionInfo *v) {
    if (dtype_codes8(v->dtype)) return dtype_codes8(v->dtype) == CODES_INT8 ? CODED_INT8 : CODED_E4M3;
    if (dtype_bf16(v->dtype)) return ROUNDED_BF16;
    return (v->dtype != DT_FP32 || se->ch->fp16_inputs) ? ROUNDED : PLAIN;
}

/* Whether the oracle gives Σ|term| on input set `set`: some version that
 * reads the set is held to it (PLAIN: the fp32 versions). */
bool of_terms(const Session *se, int set) {
    const bool fp32 = set == PLAIN || set_codes8(set);  // the sets of fp32 inputs
    return se->op->oracle_terms && (!fp32 || !se->op->terms_rtol || se->op->terms_rtol(DT_FP32));
}

Tol version_tol(const Session *se, const VersionInfo *v) {
    const int set = input_set(se, v);
    Tol tol = *(set == ROUNDED_BF16 ? se->op->tol_bf16 : set == ROUNDED ? se->op->tol_fp16 : se->op->tol_fp32);
    tol.of_terms = of_terms(se, set) && (!se->op->terms_rtol || se->op->terms_rtol(v->dtype));
    tol.codes8 = dtype_codes8(v->dtype);
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
 * so the check counts the state's rounding.
 * A CODED set (CODED_INT8, CODED_E4M3): the inputs as made, but those of
 * STATE_DTYPE in 8-bit codes, rounded to the nearest, and the values the
 * codes stand for: the oracle starts from the state the version reads, and
 * the check counts the roundings of the states it writes (Op.codes8_bound). */
static void host_round(HostProblem *hp, int set) {
    const Codes8 code = set_codes8(set);
    const bool coded = code != CODES_NONE;
    const DType dt = code == CODES_INT8 ? DT_FP32_STATE_INT8 : code == CODES_E4M3 ? DT_FP32_STATE_E4M3
                     : set == ROUNDED_BF16 ? DT_BF16_STATE16 : DT_FP16_STATE16;
    for (int k = 0; k < hp->n; k++) {
        const TensorSpec *t = &hp->t[k];
        float *x = hp->in[PLAIN][k];
        if (x && (t->dtype == STATE_DTYPE || (!coded && t->dtype == VERSION_DTYPE))) {
            hp->bits[set][k] = host_alloc((int64_t)tensor_bytes(t, dt), t->name);
            tensor_narrow(t, dt, x, hp->bits[set][k]);
            if (coded || t->dtype == VERSION_DTYPE) {
                x = host_alloc(tensor_numel(t) * 4, t->name);  // the values as the version reads them
                tensor_widen(t, dt, hp->bits[set][k], x);
            }
        }
        hp->in[set][k] = x;
    }
    hp->rounded[set] = true;
}

void need_inputs(HostProblem *hp, int set) {
    if (set != PLAIN && !hp->rounded[set]) host_round(hp, set);
}

void problem_budget(const Session *se, const Problem *p, const TensorSpec *t, int n) {
    device_budget(se, p);
    /* The least any run of p holds at once: the inputs in fp32 and each output
     * twice in fp32 (a version's result and the one it is compared with); a
     * check's fp64 oracle comes on top, each allocation checked again. */
    double need = 0.0;
    for (int k = 0; k < n; k++)
        if (t[k].present) need += (double)tensor_numel(&t[k]) * (is_input(&t[k]) ? 4.0 : 8.0);
    char flags[256];
    snprintf(flags, sizeof(flags), "--batch, %s%s or the sizes of the op's own flags", op_seqlen_flag(se->op),
             (se->op->args & ARG_SEQLENS) ? ", --seqlens" : "");
    host_budget(need, "the problem", flags);
}

/* Random inputs in the op's ranges, drawn in table order from one seed. */
void host_random(const Session *se, HostProblem *hp, const Problem *p, uint64_t seed) {
    memset(hp, 0, sizeof(*hp));
    hp->p = *p;
    hp->n = problem_table(se->op, p, hp->t);
    problem_budget(se, p, hp->t, hp->n);
    check_inputs_finite(true);
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
void reference_keep(const HostProblem *hp, Reference *r, float *const *x) {
    r->tried = true;
    for (int k = 0; k < hp->n; k++) {
        if (is_input(&hp->t[k]) || !x[k]) continue;
        int64_t n = tensor_numel(&hp->t[k]);
        r->out[k] = host_alloc(n * 8, hp->t[k].name);
        for (int64_t i = 0; i < n; i++) r->out[k][i] = x[k][i];
        r->ran = true;
    }
}

void reference_free(Reference *r) {
    for (int k = 0; k < MAX_TENSORS; k++) {
        free(r->out[k]);
        free(r->scale[k]);
        free(r->bound[k]);
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

/* A CPU version on host tensors: the op's run, or with split its second
 * way (run_split); the reason that does not apply, else NULL. */
const char *run_cpu_as(const Session *se, const VersionInfo *v, HostProblem *hp, int set, float **out,
                       bool split) {
    void *t[MAX_TENSORS];              // what the version reads and writes
    void *narrow[MAX_TENSORS] = {NULL};  // (tensor_bytes) outputs of a version that holds them in 16 or 8 bits
    host_view(hp, set, out, t);
    for (int k = 0; k < hp->n && v->dtype != DT_FP32; k++) {
        const TensorSpec *s = &hp->t[k];
        if (!s->present || tensor_elem_bytes(s, v->dtype) == 4) continue;
        if (is_input(s)) t[k] = hp->bits[set][k];
        else t[k] = narrow[k] = host_alloc((int64_t)tensor_bytes(s, v->dtype), s->name);
    }
    size_t ws_bytes = se->op->workspace(v, &hp->p);
    void *ws = ws_bytes ? host_alloc((int64_t)ws_bytes, "workspace") : NULL;
    const char *why = NULL;
    if (split) why = se->op->run_split(v, &hp->p, t, false);
    else se->op->run(v, &hp->p, t, ws);
    for (int k = 0; k < hp->n; k++) {
        if (narrow[k] && !why) tensor_widen(&hp->t[k], v->dtype, narrow[k], out[k]);
        free(narrow[k]);
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
    die_usage("%s at %s needs %zu bytes (%.1f MiB) of device memory, %zu free: give smaller sizes", v->name, shape,
              need, need / 1048576.0, free_b);
}

void device_budget(const Session *se, const Problem *p) {
    bool any_gpu = false;
    for (int k = se->first; k <= se->last; k++) any_gpu |= version_at(se, k)->gpu;
    if (!any_gpu || !gpu_available()) return;  // a version's unsupported() may ask the device
    TensorSpec t[MAX_TENSORS];
    int nt = problem_table(se->op, p, t);
    const VersionInfo *smallest = NULL;
    size_t least = 0;
    for (int k = se->first; k <= se->last; k++) {
        const VersionInfo *v = version_at(se, k);
        if (!v->gpu || se->op->unsupported(v, p)) continue;
        size_t need = device_bytes(se->op, v, p, t, nt);
        if (!smallest || need < least) smallest = v, least = need;
    }
    if (!smallest) return;
    size_t free_b = gpu_free_bytes();
    if (least > free_b) device_too_small(se->op, smallest, p, least, free_b);
}

/* Input k of one set into dst (device), in the version's dtype dt. */
void upload_input(void *dst, const HostProblem *hp, int k, int set, DType dt) {
    const TensorSpec *s = &hp->t[k];
    h2d(dst, tensor_elem_bytes(s, dt) == 4 ? (const void *)hp->in[set][k] : hp->bits[set][k], tensor_bytes(s, dt));
}

void device_problem(DeviceProblem *d, const Op *op, const VersionInfo *v, const HostProblem *hp, int set) {
    size_t need = device_bytes(op, v, &hp->p, hp->t, hp->n), free_b = gpu_free_bytes();
    if (need > free_b) device_too_small(op, v, &hp->p, need, free_b);
    memset(d, 0, sizeof(*d));
    mem_reset_peak();
    for (int k = 0; k < hp->n; k++) {
        const TensorSpec *s = &hp->t[k];
        if (!s->present) continue;
        d->t[k] = dev_alloc(tensor_bytes(s, v->dtype), is_input(s) ? MEM_INPUT : MEM_OUTPUT, s->name);
        if (is_input(s)) upload_input(d->t[k], hp, k, set, v->dtype);
    }
    size_t ws_bytes = op->workspace(v, &hp->p);
    d->ws = ws_bytes ? dev_alloc(ws_bytes, MEM_WORKSPACE, "workspace") : NULL;
}

/* Fill the outputs with NaN so a kernel that skips an element cannot pass. */
void device_poison(const DeviceProblem *d, const HostProblem *hp, DType dt) {
    for (int k = 0; k < hp->n; k++)
        if (is_output(&hp->t[k])) dev_poison(d->t[k], tensor_bytes(&hp->t[k], dt));
}

void device_outputs(const DeviceProblem *d, const HostProblem *hp, DType dt, float **out) {
    for (int k = 0; k < hp->n; k++) {
        const TensorSpec *s = &hp->t[k];
        if (!is_output(s)) continue;
        if (tensor_elem_bytes(s, dt) == 4) {
            d2h(out[k], d->t[k], sizeof(float) * (size_t)tensor_numel(s));
            continue;
        }
        void *h = host_alloc((int64_t)tensor_bytes(s, dt), s->name);  // (tensor_bytes) as the version wrote it
        d2h(h, d->t[k], tensor_bytes(s, dt));
        tensor_widen(s, dt, h, out[k]);
        free(h);
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

