/* The driver of the Mamba-1 scan chapters: inputs, checks, timing, CSV,
 * --dump/--load. A chapter's main.c hands it a table of versions. */
#define _POSIX_C_SOURCE 200809L  // sysconf, mkdir
#include "scan_driver.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "check.h"
#include "csv.h"
#include "fixtures.h"
#include "floors.h"
#include "gpu.h"
#include "half.h"
#include "npy.h"
#include "oracle.h"
#include "rng.h"

/* ------------------------------------------------------------------ sizes */

/* a*b with overflow caught: sizes come from the command line and files. */
static int64_t mul(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r) || r > ((int64_t)1 << 62))
        die_usage("problem too large: %lld x %lld elements overflows", (long long)a, (long long)b);
    return r;
}

/* malloc or exit 2 naming the bytes; more than the machine's memory is refused
 * up front (an overcommitting kernel would say yes and kill us later). */
static void *xmalloc(int64_t bytes, const char *what) {
    double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    void *p = (phys > 0 && bytes > phys) ? NULL : malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!p) die_usage("cannot allocate %lld bytes (%.1f MiB) of host memory for %s",
                      (long long)bytes, bytes / 1048576.0, what);
    return p;
}

static void check_shape_valid(const ScanShape *s) {
    if (s->dim % s->groups != 0)
        die_usage("--dim %lld is not a multiple of --groups %lld", (long long)s->dim, (long long)s->groups);
    /* Every tensor's element count must fit: these die on overflow. */
    mul(mul(s->batch, s->dim), s->seqlen);
    mul(mul(mul(s->batch, s->groups), s->dstate), s->seqlen);
    mul(mul(s->batch, s->dim), s->dstate);
}

static void flags_string(const ScanShape *s, char *buf, size_t len) {
    snprintf(buf, len, "%s%s%s%s%s", s->has_z ? "z+" : "", s->has_D ? "D+" : "",
             s->has_bias ? "bias+" : "", s->softplus ? "softplus+" : "", s->has_h0 ? "h0+" : "");
    size_t n = strlen(buf);
    if (n == 0) snprintf(buf, len, "none");
    else buf[n - 1] = '\0';
}

static void shape_string(const ScanShape *s, char *buf, size_t len) {
    char flags[64];
    flags_string(s, flags, sizeof(flags));
    snprintf(buf, len, "b%lld d%lld N%lld L%lld G%lld %s", (long long)s->batch, (long long)s->dim,
             (long long)s->dstate, (long long)s->seqlen, (long long)s->groups, flags);
}

/* Minimal bytes of one forward: each input read once, each output written once. */
static double scan_bytes(const ScanShape *s, DType dt) {
    double e = dt == DT_FP16 ? 2.0 : 4.0;
    double seq = (double)scan_n_seq(s), st = (double)scan_n_state(s);
    double b = seq * e * (2 + (s->has_z ? 1 : 0) + 1);             // u, delta, (z) in; y out
    b += 2.0 * scan_n_bc(s) * e;                                     // B, C
    b += 4.0 * scan_n_A(s) + 4.0 * s->dim * ((s->has_D ? 1 : 0) + (s->has_bias ? 1 : 0));
    b += 4.0 * st * (1 + (s->has_h0 ? 1 : 0));                       // last_state (+ h0)
    return b;
}

/* One exp per (b, d, t, n): exp(delta * A). */
static double scan_exps(const ScanShape *s) { return (double)scan_n_seq(s) * s->dstate; }

/* ---------------------------------------------------------------- inputs */

typedef struct {
    ScanShape s;
    float *u, *delta, *z;   // (b, d, L) fp32
    float *A;               // (d, N)    fp32
    float *B, *C;           // (b, G, N, L) fp32
    float *D, *delta_bias;  // (d,)      fp32
    float *h0;              // (b, d, N) fp32
    /* fp16 chapters: the same u, delta, z, B, C as fp16 bits, made once by
     * inputs_to_fp16 for every fp16 version to upload; NULL otherwise. */
    uint16_t *u_h, *delta_h, *z_h, *B_h, *C_h;
} HostInputs;

static void inputs_alloc(HostInputs *in, const ScanShape *s) {
    memset(in, 0, sizeof(*in));
    in->s = *s;
    int64_t seq = scan_n_seq(s) * 4, bc = scan_n_bc(s) * 4;
    in->u = xmalloc(seq, "u");
    in->delta = xmalloc(seq, "delta");
    if (s->has_z) in->z = xmalloc(seq, "z");
    in->A = xmalloc(scan_n_A(s) * 4, "A");
    in->B = xmalloc(bc, "B");
    in->C = xmalloc(bc, "C");
    if (s->has_D) in->D = xmalloc(s->dim * 4, "D");
    if (s->has_bias) in->delta_bias = xmalloc(s->dim * 4, "delta_bias");
    if (s->has_h0) in->h0 = xmalloc(scan_n_state(s) * 4, "h0");
}

static void inputs_free(HostInputs *in) {
    free(in->u); free(in->delta); free(in->z); free(in->A); free(in->B); free(in->C);
    free(in->D); free(in->delta_bias); free(in->h0);
    free(in->u_h); free(in->delta_h); free(in->z_h); free(in->B_h); free(in->C_h);
    memset(in, 0, sizeof(*in));
}

static uint16_t *to_half(const float *x, int64_t n, const char *what) {
    if (!x) return NULL;
    uint16_t *h = xmalloc(n * 2, what);
    floats_to_halves(x, h, n);
    return h;
}

/* Round u, delta, z, B, C to fp16 values (the oracle then sees what an fp16
 * version reads) and keep their fp16 bits for the fp16 versions. */
static void inputs_to_fp16(HostInputs *in) {
    int64_t seq = scan_n_seq(&in->s), bc = scan_n_bc(&in->s);
    round_to_half(in->u, seq);
    round_to_half(in->delta, seq);
    if (in->z) round_to_half(in->z, seq);
    round_to_half(in->B, bc);
    round_to_half(in->C, bc);
    in->u_h = to_half(in->u, seq, "u");
    in->delta_h = to_half(in->delta, seq, "delta");
    in->z_h = to_half(in->z, seq, "z");
    in->B_h = to_half(in->B, bc, "B");
    in->C_h = to_half(in->C, bc, "C");
}

/* Random inputs in the ranges of the official tests: A < 0, delta > 0 small,
 * softplus(delta + bias) around 0.3..1.3. Uniform draws keep generation fast
 * at benchmark sizes (a billion elements per tensor at S2's longest L).
 * big_delta puts delta + bias above 20 on every other channel (softplus's
 * linear branch). */
static void inputs_random(HostInputs *in, uint64_t seed, bool big_delta, bool fp16) {
    const ScanShape *s = &in->s;
    Rng r;
    rng_seed(&r, seed);
    int64_t seq = scan_n_seq(s), bc = scan_n_bc(s);
    rng_fill_uniform(&r, in->u, seq, -1.5, 1.5);
    rng_fill_uniform(&r, in->delta, seq, 0.0, 0.5);
    if (in->z) rng_fill_uniform(&r, in->z, seq, -2.0, 2.0);
    rng_fill_uniform(&r, in->A, scan_n_A(s), -1.0, -0.02);
    rng_fill_uniform(&r, in->B, bc, -1.5, 1.5);
    rng_fill_uniform(&r, in->C, bc, -1.5, 1.5);
    if (in->D) rng_fill_uniform(&r, in->D, s->dim, -1.0, 1.0);
    if (in->delta_bias) rng_fill_uniform(&r, in->delta_bias, s->dim, -1.0, 0.5);
    if (in->h0) rng_fill_uniform(&r, in->h0, scan_n_state(s), -1.0, 1.0);
    if (big_delta) {
        for (int64_t c = 0; c < s->dim; c += 2) {
            if (in->delta_bias) in->delta_bias[c] = 22.0f;
            else
                for (int64_t b = 0; b < s->batch; b++)
                    for (int64_t t = 0; t < s->seqlen; t++)
                        in->delta[(b * s->dim + c) * s->seqlen + t] += 22.0f;
        }
    }
    if (fp16) inputs_to_fp16(in);
}

static ScanTensors host_tensors(const HostInputs *in, float *y, float *last_state) {
    ScanTensors t = {in->s, in->u, in->delta, in->z, in->A, in->B, in->C, in->D,
                     in->delta_bias, in->h0, y, last_state};
    return t;
}

/* ------------------------------------------------------- running a version */

/* Outputs of one run, as fp32 on the host. */
typedef struct {
    float *y;           // (b, d, L) fp32
    float *last_state;  // (b, d, N) fp32
} HostOutputs;

static void outputs_alloc(HostOutputs *o, const ScanShape *s) {
    o->y = xmalloc(scan_n_seq(s) * 4, "y");
    o->last_state = xmalloc(scan_n_state(s) * 4, "last_state");
}

static void outputs_free(HostOutputs *o) { free(o->y); free(o->last_state); }

/* The fp16 bits of inputs for an fp16 version: only fp16 chapters have them. */
static void require_halves(const ScanVersion *v, const HostInputs *in) {
    if (!in->u_h) {
        fprintf(stderr, "%s: fp16 version %s in a chapter without fp16_inputs\n", g_prog, v->name);
        exit(EXIT_FAIL);
    }
}

/* A CPU version on host tensors in its dtype. */
static void run_cpu(const ScanVersion *v, const HostInputs *in, HostOutputs *out) {
    const ScanShape *s = &in->s;
    int64_t seq = scan_n_seq(s);
    size_t ws_bytes = v->workspace_bytes ? v->workspace_bytes(s) : 0;
    void *ws = ws_bytes ? xmalloc((int64_t)ws_bytes, "workspace") : NULL;
    ScanTensors t = host_tensors(in, out->y, out->last_state);
    if (v->dtype == DT_FP16) {
        require_halves(v, in);
        uint16_t *y = xmalloc(seq * 2, "y");
        t.u = in->u_h; t.delta = in->delta_h; t.z = in->z_h; t.B = in->B_h; t.C = in->C_h; t.y = y;
        v->run(&t, ws);
        halves_to_floats(y, out->y, seq);
        free(y);
    } else {
        v->run(&t, ws);
    }
    free(ws);
}

/* Device copies of one problem in a version's dtype, allocated through the tracker. */
typedef struct {
    ScanTensors t;
    void *ws;
    size_t ws_bytes;
} DeviceProblem;

/* A host array to the device: the fp32 values, or their fp16 bits xh. */
static void *upload(const float *x, const uint16_t *xh, int64_t n, DType dt, MemRole role, const char *what) {
    if (!x) return NULL;
    size_t bytes = (size_t)n * (dt == DT_FP16 ? 2 : 4);
    void *d = dev_alloc(bytes, role, what);
    h2d(d, dt == DT_FP16 ? (const void *)xh : (const void *)x, bytes);
    return d;
}

static size_t device_bytes(const ScanVersion *v, const ScanShape *s) {
    return (size_t)scan_bytes(s, v->dtype) + (v->workspace_bytes ? v->workspace_bytes(s) : 0);
}

static void device_problem(DeviceProblem *p, const ScanVersion *v, const HostInputs *in) {
    const ScanShape *s = &in->s;
    size_t need = device_bytes(v, s), free_b = gpu_free_bytes();
    if (need > free_b)
        die_usage("%s at %lld x %lld x %lld x %lld needs %zu bytes (%.1f MiB) of device memory, %zu free",
                  v->name, (long long)s->batch, (long long)s->dim, (long long)s->seqlen,
                  (long long)s->dstate, need, need / 1048576.0, free_b);
    int64_t seq = scan_n_seq(s), bc = scan_n_bc(s);
    DType dt = v->dtype;
    size_t e = dt == DT_FP16 ? 2 : 4;
    mem_reset_peak();
    p->t.s = *s;
    if (dt == DT_FP16) require_halves(v, in);
    p->t.u = upload(in->u, in->u_h, seq, dt, MEM_INPUT, "u");
    p->t.delta = upload(in->delta, in->delta_h, seq, dt, MEM_INPUT, "delta");
    p->t.z = upload(in->z, in->z_h, seq, dt, MEM_INPUT, "z");
    p->t.A = upload(in->A, NULL, scan_n_A(s), DT_FP32, MEM_INPUT, "A");
    p->t.B = upload(in->B, in->B_h, bc, dt, MEM_INPUT, "B");
    p->t.C = upload(in->C, in->C_h, bc, dt, MEM_INPUT, "C");
    p->t.D = upload(in->D, NULL, s->dim, DT_FP32, MEM_INPUT, "D");
    p->t.delta_bias = upload(in->delta_bias, NULL, s->dim, DT_FP32, MEM_INPUT, "delta_bias");
    p->t.h0 = upload(in->h0, NULL, scan_n_state(s), DT_FP32, MEM_INPUT, "h0");
    p->t.y = dev_alloc((size_t)seq * e, MEM_OUTPUT, "y");
    p->t.last_state = dev_alloc((size_t)scan_n_state(s) * 4, MEM_OUTPUT, "last_state");
    p->ws_bytes = v->workspace_bytes ? v->workspace_bytes(s) : 0;
    p->ws = p->ws_bytes ? dev_alloc(p->ws_bytes, MEM_WORKSPACE, "workspace") : NULL;
}

static void device_problem_free(DeviceProblem *p) {
    dev_free((void *)p->t.u); dev_free((void *)p->t.delta); dev_free((void *)p->t.z);
    dev_free((void *)p->t.A); dev_free((void *)p->t.B); dev_free((void *)p->t.C);
    dev_free((void *)p->t.D); dev_free((void *)p->t.delta_bias); dev_free((void *)p->t.h0);
    dev_free(p->t.y); dev_free(p->t.last_state); dev_free(p->ws);
}

static void device_outputs(const DeviceProblem *p, DType dt, HostOutputs *out) {
    const ScanShape *s = &p->t.s;
    int64_t seq = scan_n_seq(s);
    if (dt == DT_FP16) {
        uint16_t *h = xmalloc(seq * 2, "y");
        d2h(h, p->t.y, (size_t)seq * 2);
        halves_to_floats(h, out->y, seq);
        free(h);
    } else {
        d2h(out->y, p->t.y, (size_t)seq * 4);
    }
    d2h(out->last_state, p->t.last_state, (size_t)scan_n_state(s) * 4);
}

/* Run version v once on in (CPU or GPU), outputs as fp32 on the host. */
static void run_version(const ScanVersion *v, const HostInputs *in, HostOutputs *out) {
    if (!v->gpu) { run_cpu(v, in, out); return; }
    DeviceProblem p;
    device_problem(&p, v, in);
    /* Poison the outputs so a kernel that skips an element cannot pass. */
    size_t e = v->dtype == DT_FP16 ? 2 : 4;
    dev_poison(p.t.y, (size_t)scan_n_seq(&in->s) * e);
    dev_poison(p.t.last_state, (size_t)scan_n_state(&in->s) * 4);
    v->run(&p.t, p.ws);
    gpu_sync();
    device_outputs(&p, v->dtype, out);
    device_problem_free(&p);
}

/* ------------------------------------------------------------- dump, load */

static void dump_problem(const char *dir, const HostInputs *in, const HostOutputs *out, DType dt) {
    const ScanShape *s = &in->s;
    if (mkdir(dir, 0755) != 0) {
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) die_usage("--dump: cannot create folder %s", dir);
    }
    NpyShape seq = npy_shape(3, s->batch, s->dim, s->seqlen);
    NpyShape bc = s->groups == 1 ? npy_shape(3, s->batch, s->dstate, s->seqlen)
                                 : npy_shape(4, s->batch, s->groups, s->dstate, s->seqlen);
    NpyShape state = npy_shape(3, s->batch, s->dim, s->dstate);
    NpyShape a = npy_shape(2, s->dim, s->dstate), vec = npy_shape(1, s->dim);
    struct { const char *name; const float *x; NpyShape shape; bool io_dtype; } files[] = {
        {"u", in->u, seq, true}, {"delta", in->delta, seq, true}, {"z", in->z, seq, true},
        {"A", in->A, a, false}, {"B", in->B, bc, true}, {"C", in->C, bc, true},
        {"D", in->D, vec, false}, {"delta_bias", in->delta_bias, vec, false},
        {"h0", in->h0, state, false}, {"y", out->y, seq, true},
        {"last_state", out->last_state, state, false},
    };
    char path[4096], err[512];
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        if (!files[i].x) continue;  // optional input that is off
        snprintf(path, sizeof(path), "%s/%s.npy", dir, files[i].name);
        bool ok;
        if (files[i].io_dtype && dt == DT_FP16) {
            int64_t n = npy_numel(&files[i].shape);
            uint16_t *h = to_half(files[i].x, n, files[i].name);
            ok = npy_write_f16(path, h, &files[i].shape, err, sizeof(err));
            free(h);
        } else {
            ok = npy_write_f32(path, files[i].x, &files[i].shape, err, sizeof(err));
        }
        if (!ok) die_usage("--dump: %s", err);
    }
    snprintf(path, sizeof(path), "%s/meta.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) die_usage("--dump: cannot write %s", path);
    fprintf(f, "{\"delta_softplus\": %s}\n", s->softplus ? "true" : "false");
    fclose(f);
    printf("wrote %s/{u,delta,%sA,B,C,%s%s%sy,last_state}.npy and meta.json\n", dir,
           s->has_z ? "z," : "", s->has_D ? "D," : "", s->has_bias ? "delta_bias," : "",
           s->has_h0 ? "h0," : "");
}

/* Read DIR/name.npy; NULL if absent and optional. Dies (exit 2) on a bad file. */
static float *load_npy(const char *dir, const char *name, bool required, NpyShape *shape) {
    char path[4096], err[512];
    snprintf(path, sizeof(path), "%s/%s.npy", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (required) die_usage("--load: %s is missing", path);
        return NULL;
    }
    fclose(f);
    float *x = npy_read_f32(path, shape, err, sizeof(err));
    if (!x) die_usage("--load: %s", err);
    return x;
}

static void expect_shape(const char *dir, const char *name, const NpyShape *got, int ndim, ...) {
    va_list ap;
    va_start(ap, ndim);
    bool ok = got->ndim == ndim;
    int64_t want[NPY_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        want[i] = va_arg(ap, int64_t);
        if (ok && got->shape[i] != want[i]) ok = false;
    }
    va_end(ap);
    if (ok) return;
    char g[128] = "", w[128] = "";
    for (int i = 0; i < got->ndim; i++)
        snprintf(g + strlen(g), sizeof(g) - strlen(g), "%s%lld", i ? "," : "", (long long)got->shape[i]);
    for (int i = 0; i < ndim; i++)
        snprintf(w + strlen(w), sizeof(w) - strlen(w), "%s%lld", i ? "," : "", (long long)want[i]);
    die_usage("--load: %s/%s.npy has shape (%s), expected (%s)", dir, name, g, w);
}

/* meta.json: {"delta_softplus": true}; absent means the official default (false). */
static bool load_softplus(const char *dir) {
    char path[4096], buf[4096];
    snprintf(path, sizeof(path), "%s/meta.json", dir);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *k = strstr(buf, "\"delta_softplus\"");
    if (!k) return false;
    k = strchr(k, ':');
    if (!k) die_usage("--load: %s: no value after \"delta_softplus\"", path);
    k++;
    while (*k == ' ' || *k == '\t' || *k == '\n' || *k == '\r') k++;
    if (strncmp(k, "true", 4) == 0) return true;
    if (strncmp(k, "false", 5) == 0) return false;
    die_usage("--load: %s: delta_softplus must be true or false", path);
    return false;
}

/* Returns whether DIR held the outputs (then ref holds them). */
static bool load_problem(const char *dir, HostInputs *in, HostOutputs *ref) {
    NpyShape su, sd, sa, sb, sc, sx;
    memset(in, 0, sizeof(*in));
    in->u = load_npy(dir, "u", true, &su);
    if (su.ndim != 3) die_usage("--load: %s/u.npy must be (batch, dim, seqlen), has %d dims", dir, su.ndim);
    ScanShape *s = &in->s;
    s->batch = su.shape[0]; s->dim = su.shape[1]; s->seqlen = su.shape[2];
    in->delta = load_npy(dir, "delta", true, &sd);
    expect_shape(dir, "delta", &sd, 3, s->batch, s->dim, s->seqlen);
    in->A = load_npy(dir, "A", true, &sa);
    if (sa.ndim != 2 || sa.shape[0] != s->dim)
        die_usage("--load: %s/A.npy must be (dim=%lld, dstate)", dir, (long long)s->dim);
    s->dstate = sa.shape[1];
    in->B = load_npy(dir, "B", true, &sb);
    if (sb.ndim == 3) s->groups = 1;
    else if (sb.ndim == 4) s->groups = sb.shape[1];
    else die_usage("--load: %s/B.npy must be (batch, dstate, seqlen) or (batch, groups, dstate, seqlen)", dir);
    if (s->groups < 1 || s->dim % s->groups != 0)
        die_usage("--load: %s/B.npy: %lld groups do not divide dim %lld", dir, (long long)s->groups, (long long)s->dim);
    if (sb.ndim == 3) expect_shape(dir, "B", &sb, 3, s->batch, s->dstate, s->seqlen);
    else expect_shape(dir, "B", &sb, 4, s->batch, s->groups, s->dstate, s->seqlen);
    in->C = load_npy(dir, "C", true, &sc);
    if (sb.ndim == 3) expect_shape(dir, "C", &sc, 3, s->batch, s->dstate, s->seqlen);
    else expect_shape(dir, "C", &sc, 4, s->batch, s->groups, s->dstate, s->seqlen);
    if ((in->z = load_npy(dir, "z", false, &sx))) expect_shape(dir, "z", &sx, 3, s->batch, s->dim, s->seqlen);
    if ((in->D = load_npy(dir, "D", false, &sx))) expect_shape(dir, "D", &sx, 1, s->dim);
    if ((in->delta_bias = load_npy(dir, "delta_bias", false, &sx))) expect_shape(dir, "delta_bias", &sx, 1, s->dim);
    if ((in->h0 = load_npy(dir, "h0", false, &sx))) expect_shape(dir, "h0", &sx, 3, s->batch, s->dim, s->dstate);
    s->has_z = in->z; s->has_D = in->D; s->has_bias = in->delta_bias; s->has_h0 = in->h0;
    s->softplus = load_softplus(dir);
    check_shape_valid(s);
    ref->y = load_npy(dir, "y", false, &sx);
    if (ref->y) expect_shape(dir, "y", &sx, 3, s->batch, s->dim, s->seqlen);
    ref->last_state = load_npy(dir, "last_state", false, &sx);
    if (ref->last_state) expect_shape(dir, "last_state", &sx, 3, s->batch, s->dim, s->dstate);
    return ref->y != NULL;
}

/* ------------------------------------------------------------------ checks */

typedef struct {
    int64_t b, d, N, L, G;
    bool z, D, bias, softplus, h0, big_delta;
} CheckCase;

/* Small and awkward (DESIGN section 3): L = 1, odd L, L not a multiple of
 * any block or chunk, N not a power of two, N = 256, G > 1, flags on and off,
 * delta + bias above 20, long L. */
static const CheckCase CHECK_CASES[] = {
    {1, 3, 1, 1, 1, true, true, true, true, false, false},
    {2, 5, 7, 37, 1, true, true, true, true, true, false},
    {2, 8, 16, 333, 2, true, true, true, true, false, false},
    {1, 4, 3, 100, 1, false, false, false, false, false, false},
    {2, 6, 5, 77, 3, true, true, true, true, false, true},
    {1, 4, 9, 45, 2, false, true, false, false, true, true},
    {3, 6, 32, 513, 1, true, true, true, true, true, false},
    {1, 2, 256, 130, 1, true, true, true, true, false, false},
    {1, 4, 16, 4100, 2, true, true, true, true, true, false},
    {1, 16, 32, 8192, 1, true, true, true, true, false, false},
};

static Tol version_tol(const ScanVersion *v, const ScanChapter *ch) {
    return (v->dtype == DT_FP16 || ch->fp16_inputs) ? TOLERANCES[TOL_FP16] : TOLERANCES[TOL_FP32_SCAN];
}

static double *to_double(const float *x, int64_t n) {
    double *d = xmalloc(n * 8, "reference copy");
    for (int64_t i = 0; i < n; i++) d[i] = x[i];
    return d;
}

static CheckResult compare_outputs(const HostOutputs *got, const double *y_ref, const double *st_ref,
                                   const ScanShape *s, Tol tol) {
    return check_merge(compare_f32(got->y, y_ref, scan_n_seq(s), tol),
                       compare_f32(got->last_state, st_ref, scan_n_state(s), tol));
}

typedef struct {
    const ScanChapter *ch;
    int first, last;       // selected versions, 0-based inclusive
    bool gpu_skipped;
    const char *dump;      // write the last run's problem here
} Session;

/* Check every selected version on one problem against the oracle and the
 * previous stage (and against given outputs, when loaded). */
static void check_problem(Session *se, const HostInputs *in, const HostOutputs *given) {
    const ScanChapter *ch = se->ch;
    const ScanShape *s = &in->s;
    char shape[160], label[256];
    shape_string(s, shape, sizeof(shape));
    printf("%s\n", shape);

    int64_t seq = scan_n_seq(s), st = scan_n_state(s);
    double *y_ref = xmalloc(seq * 8, "oracle y"), *st_ref = xmalloc(st * 8, "oracle state");
    ScanTensors t = host_tensors(in, NULL, NULL);
    oracle_scan(&t, y_ref, st_ref);

    double *given_y = given ? to_double(given->y, seq) : NULL;
    double *given_st = given && given->last_state ? to_double(given->last_state, st) : NULL;
    const ScanVersion *prevs[2] = {ch->prev_cpu, ch->prev_gpu};
    double *prev_y[2] = {NULL, NULL}, *prev_st[2] = {NULL, NULL};
    bool prev_tried[2] = {false, false};

    HostOutputs out, last = {NULL, NULL};
    const ScanVersion *last_v = NULL;
    for (int i = se->first; i <= se->last; i++) {
        const ScanVersion *v = &ch->versions[i];
        Tol tol = version_tol(v, ch);
        snprintf(label, sizeof(label), "%d %s vs oracle", i + 1, v->name);
        const char *why = v->unsupported ? v->unsupported(s) : NULL;
        if (why) { check_skip(label, why); continue; }
        if (v->gpu && !gpu_available()) {
            check_skip(label, gpu_unavailable_reason());
            se->gpu_skipped = true;
            continue;
        }
        outputs_alloc(&out, s);
        run_version(v, in, &out);
        check_report(label, compare_outputs(&out, y_ref, st_ref, s, tol), tol);

        if (given_y) {
            snprintf(label, sizeof(label), "%d %s vs loaded y%s", i + 1, v->name,
                     given_st ? ", last_state" : "");
            CheckResult r = compare_f32(out.y, given_y, seq, tol);
            if (given_st) r = check_merge(r, compare_f32(out.last_state, given_st, st, tol));
            check_report(label, r, tol);
        }

        int k = v->gpu ? 1 : 0;
        const ScanVersion *p = prevs[k];
        if (p && p != v) {
            snprintf(label, sizeof(label), "%d %s vs %s", i + 1, v->name, p->name);
            if (!prev_tried[k]) {
                prev_tried[k] = true;
                const char *pwhy = p->unsupported ? p->unsupported(s) : NULL;
                if (!pwhy && (!p->gpu || gpu_available())) {
                    HostOutputs po;
                    outputs_alloc(&po, s);
                    run_version(p, in, &po);
                    prev_y[k] = to_double(po.y, seq);
                    prev_st[k] = to_double(po.last_state, st);
                    outputs_free(&po);
                }
            }
            if (prev_y[k]) check_report(label, compare_outputs(&out, prev_y[k], prev_st[k], s, tol), tol);
            else check_skip(label, "previous stage cannot run this shape here");
        }
        if (last_v) outputs_free(&last);
        last = out;
        last_v = v;
    }
    if (se->dump) {
        if (last_v) dump_problem(se->dump, in, &last, last_v->dtype);
        else printf("--dump: no version ran, nothing written to %s\n", se->dump);
    }
    if (last_v) outputs_free(&last);
    for (int k = 0; k < 2; k++) { free(prev_y[k]); free(prev_st[k]); }
    free(y_ref); free(st_ref); free(given_y); free(given_st);
}

/* ------------------------------------------------------------------ bench */

typedef struct {
    const ScanVersion *v;
    DeviceProblem *p;
} RunCtx;

static void run_ctx(void *ctx) {
    RunCtx *c = ctx;
    c->v->run(&c->p->t, c->p->ws);
}

/* The oracle on a sample of at least 64 (b, d) rows (all rows when fewer). */
static CheckResult validate_rows(const DeviceProblem *p, const ScanVersion *v, const HostInputs *in,
                                 Tol tol) {
    const ScanShape *s = &in->s;
    HostOutputs out;
    outputs_alloc(&out, s);
    device_outputs(p, v->dtype, &out);
    int64_t rows = s->batch * s->dim, nsample = rows < 64 ? rows : 64;
    double *y = xmalloc(s->seqlen * 8, "oracle row"), *h = xmalloc(s->dstate * 8, "oracle row");
    ScanTensors t = host_tensors(in, NULL, NULL);
    CheckResult all = {0.0, 0.0, 0, 0, true};
    for (int64_t k = 0; k < nsample; k++) {
        int64_t row = k * rows / nsample, bi = row / s->dim, c = row % s->dim;
        oracle_scan_row(&t, bi, c, y, h);
        CheckResult r = check_merge(compare_f32(out.y + row * s->seqlen, y, s->seqlen, tol),
                                    compare_f32(out.last_state + row * s->dstate, h, s->dstate, tol));
        all = k == 0 ? r : check_merge(all, r);
    }
    free(y); free(h);
    outputs_free(&out);
    return all;
}

static void bench_config(Session *se, const ScanShape *s, uint64_t seed, int reps, const char *csv) {
    const ScanChapter *ch = se->ch;
    HostInputs in;
    inputs_alloc(&in, s);
    inputs_random(&in, seed, false, ch->fp16_inputs);
    const Floors *fl = floors_get();
    char flags[64], label[256];
    flags_string(s, flags, sizeof(flags));
    for (int i = se->first; i <= se->last; i++) {
        const ScanVersion *v = &ch->versions[i];
        if (!v->gpu) continue;
        const char *why = v->unsupported ? v->unsupported(s) : NULL;
        printf("  %2d %-26s %s b%-3lld N%-3lld L%-6lld", i + 1, v->name,
               v->dtype == DT_FP16 ? "fp16" : "fp32", (long long)s->batch, (long long)s->dstate,
               (long long)s->seqlen);
        if (why) { printf(" SKIP (%s)\n", why); continue; }
        fflush(stdout);
        DeviceProblem p;
        device_problem(&p, v, &in);
        RunCtx ctx = {v, &p};
        Tol tol = version_tol(v, ch);
        run_ctx(&ctx);
        gpu_sync();
        CheckResult before = validate_rows(&p, v, &in, tol);
        Timing tm = gpu_time(run_ctx, &ctx, reps);
        dev_poison(p.t.y, (size_t)scan_n_seq(s) * (v->dtype == DT_FP16 ? 2 : 4));
        run_ctx(&ctx);
        gpu_sync();
        CheckResult r = check_merge(before, validate_rows(&p, v, &in, tol));
        double bytes = scan_bytes(s, v->dtype), exps = scan_exps(s);
        double fms = floor_ms(fl, bytes, exps, 0.0);
        CsvRow row = {ch->name, v->name, v->dtype == DT_FP16 ? "fp16" : "fp32", flags, i + 1,
                      s->batch, s->dim, 0, 0, s->groups, s->dstate, s->seqlen, 0,
                      tm.median_ms, tm.min_ms, bytes, exps, 0.0, bytes / (tm.median_ms * 1e-3) / 1e9,
                      fl->bw_gbps, fl->exp_rate, fms, tm.median_ms / fms, mem_peak_mib(),
                      mem_workspace_mib(), r.rel_l2};
        printf(" %9.4f ms %7.1f GB/s  floor %.4f ms  x%5.2f  peak %8.1f MiB  ws %8.1f MiB\n",
               row.ms_median, row.gbps, fms, row.time_over_floor, row.peak_mib, row.workspace_mib);
        snprintf(label, sizeof(label), "%d %s b%lld L%lld timed output vs oracle (%s rows)", i + 1,
                 v->name, (long long)s->batch, (long long)s->seqlen,
                 s->batch * s->dim < 64 ? "all" : "64");
        check_report(label, r, tol);
        if (csv) csv_append(csv, &row);
        device_problem_free(&p);
    }
    inputs_free(&in);
}

static int bench_shapes(const Args *a, const ScanChapter *ch, bool quick, ScanShape *out, int max) {
    ScanShape base = {1, 2048, 32, 512, 1, !a->no_z, !a->no_D, !a->no_bias, !a->no_softplus, a->h0};
    int n = 0;
    bool custom = a->given & (ARG_BATCH | ARG_DIM | ARG_DSTATE | ARG_SEQLEN | ARG_GROUPS);
    if (custom) {
        int nb = a->nbatch ? a->nbatch : 1, nl = a->nseqlen ? a->nseqlen : 1;
        for (int i = 0; i < nb; i++)
            for (int j = 0; j < nl && n < max; j++) {
                ScanShape s = base;
                if (a->nbatch) s.batch = a->batch[i];
                if (a->nseqlen) s.seqlen = a->seqlen[j];
                if (a->dim) s.dim = a->dim;
                if (a->dstate) s.dstate = a->dstate;
                if (a->groups) s.groups = a->groups;
                out[n++] = s;
            }
        return n;
    }
    static const int64_t s1_batch[] = {1, 2, 4, 8, 16}, quick_batch[] = {1, 16};
    static const int64_t s2_seqlen[] = {512, 2048, 8192, 65536}, s2_batch[] = {1, 8};
    if (quick || (ch->bench_sets & BENCH_S1)) {
        const int64_t *bs = quick ? quick_batch : s1_batch;
        int nb = quick ? 2 : 5;
        for (int i = 0; i < nb && n < max; i++) { out[n] = base; out[n++].batch = bs[i]; }
    }
    if (!quick && (ch->bench_sets & BENCH_S2))
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 4 && n < max; j++) {
                out[n] = base;
                out[n].dstate = 16;
                out[n].batch = s2_batch[i];
                out[n++].seqlen = s2_seqlen[j];
            }
    return n;
}

static void bench(Session *se, const Args *a, bool quick) {
    if (!gpu_available()) {
        printf("bench: GPU rows need a CUDA device (%s); nothing timed, no CSV written\n",
               gpu_unavailable_reason());
        se->gpu_skipped = true;
        return;
    }
    ScanShape shapes[64];
    int n = bench_shapes(a, se->ch, quick, shapes, 64);
    for (int i = 0; i < n; i++) check_shape_valid(&shapes[i]);
    /* Fail before any work if a shape cannot fit on the device (exit 2). */
    size_t free_b = gpu_free_bytes();
    for (int i = 0; i < n; i++)
        for (int k = se->first; k <= se->last; k++) {
            const ScanVersion *v = &se->ch->versions[k];
            if (!v->gpu || (v->unsupported && v->unsupported(&shapes[i]))) continue;
            size_t need = device_bytes(v, &shapes[i]);
            if (need > free_b)
                die_usage("%s at b%lld d%lld N%lld L%lld needs %zu bytes (%.1f MiB) of device memory, %zu free",
                          v->name, (long long)shapes[i].batch, (long long)shapes[i].dim,
                          (long long)shapes[i].dstate, (long long)shapes[i].seqlen, need,
                          need / 1048576.0, free_b);
        }
    const Floors *fl = floors_get();
    printf("\n%s on %s (copy %.0f GB/s, exp2 %.3g/s measured; commit %s)\n", quick ? "timing" : "bench",
           gpu_name(), fl->bw_gbps, fl->exp_rate, commit_id());
    for (int i = 0; i < n; i++) bench_config(se, &shapes[i], a->seed, a->reps, quick ? NULL : a->csv);
}

/* ------------------------------------------------------------------- main */

static void list_versions(const ScanChapter *ch) {
    for (int i = 0; i < ch->nversions; i++) {
        const ScanVersion *v = &ch->versions[i];
        printf("%3d  %-4s %-4s %-28s %s\n", i + 1, v->gpu ? "gpu" : "cpu",
               v->dtype == DT_FP16 ? "fp16" : "fp32", v->name, v->what);
    }
}

int scan_chapter_main(const ScanChapter *ch, int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    Args a;
    args_parse(&a, argc, argv, ARGS_SCAN, ch->title);
    if (a.list) { list_versions(ch); return EXIT_OK; }
    if (a.version > ch->nversions)
        die_usage("version %d does not exist: this chapter has versions 1..%d (see --list)",
                  a.version, ch->nversions);
    Session se = {ch, 0, ch->nversions - 1, false, a.dump};
    if (a.version) se.first = se.last = a.version - 1;
    bool shape_given = a.given & (ARG_BATCH | ARG_DIM | ARG_DSTATE | ARG_SEQLEN | ARG_GROUPS);
    if (a.load && shape_given) die_usage("--load takes the shape from its files; drop the shape flags");
    if ((a.given & (ARG_NO_Z | ARG_NO_D | ARG_NO_BIAS | ARG_NO_SOFTPLUS | ARG_H0)) && a.load)
        die_usage("--load takes the flags from its files; drop the flag options");
    bool quick = !a.check && !a.bench && !a.load;  // what a reader runs
    printf("%s\n", ch->title);

    if (a.load) {
        HostInputs in;
        HostOutputs given;
        bool has_out = load_problem(a.load, &in, &given);
        if (ch->fp16_inputs) inputs_to_fp16(&in);
        if (!has_out) printf("(%s holds no y.npy: checking against the oracle only)\n", a.load);
        check_problem(&se, &in, has_out ? &given : NULL);
        if (has_out) outputs_free(&given);
        inputs_free(&in);
    } else if (a.check || quick) {
        if (ch->check_fixtures) {
            printf("oracle vs the official fixtures\n");
            fixtures_check_mamba1("common/fixtures");
        }
        int ncase = 0;
        CheckCase cases[64];
        if (shape_given) {
            int nb = a.nbatch ? a.nbatch : 1, nl = a.nseqlen ? a.nseqlen : 1;
            for (int i = 0; i < nb; i++)
                for (int j = 0; j < nl && ncase < 64; j++) {
                    CheckCase c = {a.nbatch ? a.batch[i] : 2, a.dim ? a.dim : 8, a.dstate ? a.dstate : 16,
                                   a.nseqlen ? a.seqlen[j] : 333, a.groups ? a.groups : 1,
                                   !a.no_z, !a.no_D, !a.no_bias, !a.no_softplus, a.h0, false};
                    cases[ncase++] = c;
                }
        } else {
            ncase = sizeof(CHECK_CASES) / sizeof(CHECK_CASES[0]);
            memcpy(cases, CHECK_CASES, sizeof(CHECK_CASES));
            for (int i = 0; i < ncase; i++) {  // flag options apply to every case
                if (a.no_z) cases[i].z = false;
                if (a.no_D) cases[i].D = false;
                if (a.no_bias) cases[i].bias = false;
                if (a.no_softplus) cases[i].softplus = false;
                if (a.h0) cases[i].h0 = true;
            }
        }
        if (a.dump && ncase != 1) die_usage("--dump writes one problem: give one --batch and one --seqlen value");
        for (int i = 0; i < ncase; i++) {
            const CheckCase *c = &cases[i];
            ScanShape s = {c->b, c->d, c->N, c->L, c->G, c->z, c->D, c->bias, c->softplus, c->h0};
            check_shape_valid(&s);
            HostInputs in;
            inputs_alloc(&in, &s);
            inputs_random(&in, a.seed + i, c->big_delta, ch->fp16_inputs);
            check_problem(&se, &in, NULL);
            inputs_free(&in);
        }
    }
    if (a.bench || quick) bench(&se, &a, quick);
    check_summary(ch->name);
    return check_exit_code(se.gpu_skipped);
}
