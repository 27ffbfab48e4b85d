/* The oracle against the official fixtures. For each folder: load the .npy
 * inputs (a missing optional file means "not given"), read the flags from
 * meta.json, check every shape against the others before anything is
 * indexed, run the oracle, and compare with each output the folder holds. */
#define _POSIX_C_SOURCE 200809L  // readlink
#include "fixtures.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "npy.h"
#include "oracle.h"

#define FIXTURE_MAX_FILES 16

typedef struct {
    const char *name;                 // "mamba1"
    char dir[1024];                   // "<root>/mamba1"
    bool failed;                      // a file is missing, damaged or of the wrong shape
    char err[640];                    // the first such problem, one line
    char meta[4096];                  // meta.json's text, "" without one
    float *files[FIXTURE_MAX_FILES];  // every tensor loaded, freed by fixture_close
    int nfiles;
} Fixture;

static void fail(Fixture *fx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(Fixture *fx, const char *fmt, ...) {
    if (fx->failed) return;  // keep the first problem
    fx->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fx->err, sizeof fx->err, fmt, ap);
    va_end(ap);
}

static void fixture_open(Fixture *fx, const char *root, const char *name) {
    memset(fx, 0, sizeof *fx);
    fx->name = name;
    if (snprintf(fx->dir, sizeof fx->dir, "%s/%s", root, name) >= (int)sizeof fx->dir) {
        fail(fx, "%s/%s: path too long", root, name);
        return;
    }
    char path[1100];
    snprintf(path, sizeof path, "%s/meta.json", fx->dir);
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno != ENOENT) fail(fx, "%s: cannot open: %s", path, strerror(errno));
        return;  // no meta.json: the official defaults
    }
    size_t n = fread(fx->meta, 1, sizeof fx->meta - 1, f);
    if (n == sizeof fx->meta - 1 && fgetc(f) != EOF)
        fail(fx, "%s: larger than %zu bytes", path, sizeof fx->meta - 1);
    fx->meta[n] = '\0';
    fclose(f);
}

static void fixture_close(Fixture *fx) {
    for (int i = 0; i < fx->nfiles; i++) free(fx->files[i]);
    fx->nfiles = 0;
}

/* One tensor of the folder. NULL when an optional file is absent (or after
 * an earlier failure). */
static float *load(Fixture *fx, const char *tensor, bool required, NpyShape *shape) {
    shape->ndim = 0;
    if (fx->failed) return NULL;
    char path[1100];
    snprintf(path, sizeof path, "%s/%s.npy", fx->dir, tensor);
    if (!required) {
        FILE *f = fopen(path, "rb");
        if (!f && errno == ENOENT) return NULL;
        if (f) fclose(f);
    }
    char err[512];
    float *x = npy_read_f32(path, shape, err, sizeof err);
    if (!x) {
        fail(fx, "%s", err);
        return NULL;
    }
    if (fx->nfiles == FIXTURE_MAX_FILES) {
        free(x);
        fail(fx, "%s: more than %d tensors", fx->dir, FIXTURE_MAX_FILES);
        return NULL;
    }
    fx->files[fx->nfiles++] = x;
    return x;
}

/* "(2, 8, 37)" */
static void shape_text(const NpyShape *s, char *out, size_t outlen) {
    size_t used = (size_t)snprintf(out, outlen, "(");
    for (int i = 0; i < s->ndim && used < outlen; i++)
        used += (size_t)snprintf(out + used, outlen - used, i ? ", %lld" : "%lld", (long long)s->shape[i]);
    if (used < outlen) snprintf(out + used, outlen - used, ")");
}

/* The first tensor of a folder sets the sizes: ndim dims, each at least 1. */
static bool sizes_from(Fixture *fx, const char *tensor, const NpyShape *s, int ndim) {
    if (fx->failed) return false;
    bool ok = s->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++) ok = s->shape[i] >= 1;
    if (!ok) {
        char got[128];
        shape_text(s, got, sizeof got);
        fail(fx, "%s/%s.npy: shape %s, expected %d dims, none empty", fx->dir, tensor, got, ndim);
    }
    return ok;
}

/* Fails the folder unless a present tensor has exactly these int64_t dims. */
static void want_shape(Fixture *fx, const char *tensor, const float *x, const NpyShape *s, int ndim, ...) {
    if (fx->failed || !x) return;
    NpyShape want = {ndim, {0}};
    va_list ap;
    va_start(ap, ndim);
    for (int i = 0; i < ndim; i++) want.shape[i] = va_arg(ap, int64_t);
    va_end(ap);
    bool same = s->ndim == ndim;
    for (int i = 0; same && i < ndim; i++) same = s->shape[i] == want.shape[i];
    if (!same) {
        char got[128], exp[128];
        shape_text(s, got, sizeof got);
        shape_text(&want, exp, sizeof exp);
        fail(fx, "%s/%s.npy: shape %s, expected %s", fx->dir, tensor, got, exp);
    }
}

/* A boolean of meta.json ("key": true|false); dflt when the key is absent. */
static bool meta_bool(Fixture *fx, const char *key, bool dflt) {
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    for (const char *p = strstr(fx->meta, quoted); p; p = strstr(p + 1, quoted)) {
        const char *v = p + strlen(quoted);
        while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r') v++;
        if (*v != ':') continue;  // the name appeared as a value, not a key
        v++;
        while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r') v++;
        if (strncmp(v, "true", 4) == 0) return true;
        if (strncmp(v, "false", 5) == 0) return false;
        fail(fx, "%s/meta.json: \"%s\" is not true or false", fx->dir, key);
        return dflt;
    }
    return dflt;
}

static double *alloc_f64(int64_t n) {
    double *p = malloc((size_t)n * sizeof(double));
    if (!p) {
        fprintf(stderr, "fixtures: cannot allocate %lld bytes\n", (long long)n * 8);
        exit(2);
    }
    return p;
}

/* ---- check lines ---- */

static void report_load_failure(const Fixture *fx) {
    char label[96];
    snprintf(label, sizeof label, "fixture %s: load", fx->name);
    check_report_bool(label, false, fx->err);
}

static void report(const Fixture *fx, const char *output, const float *want, const double *got, int64_t n) {
    char label[96];
    snprintf(label, sizeof label, "fixture %s: %s", fx->name, output);
    Tol tol = TOLERANCES[TOL_FIXTURE];
    check_report(label, compare_f32(want, got, n, tol), tol);
}

/* A check that cannot fail proves nothing: move one element of the fixture's
 * y by 1e-3 of y's RMS, and the same comparison must now fail. */
static void report_perturbed(const Fixture *fx, const float *y, const double *ref, int64_t n) {
    float *copy = malloc((size_t)n * sizeof(float));  // (n,) fp32, y with one element moved
    if (!copy) {
        fprintf(stderr, "fixtures: cannot allocate %lld bytes\n", (long long)n * 4);
        exit(2);
    }
    double sum2 = 0.0;
    for (int64_t i = 0; i < n; i++) {
        copy[i] = y[i];
        sum2 += (double)y[i] * y[i];
    }
    double rms = sqrt(sum2 / (double)n);
    int64_t i = n / 2;
    copy[i] = (float)(copy[i] + 1e-3 * rms);
    CheckResult r = compare_f32(copy, ref, n, TOLERANCES[TOL_FIXTURE]);
    char label[96], detail[128];
    snprintf(label, sizeof label, "fixture %s: perturbed y fails", fx->name);
    snprintf(detail, sizeof detail, "y[%lld] += 1e-3 rms: rel_l2 %.2e, %lld of %lld out",
             (long long)i, r.rel_l2, (long long)r.n_bad, (long long)r.n);
    check_report_bool(label, !r.pass, detail);
    free(copy);
}

/* ---- Mamba-1: selective_scan_ref ---- */

static void check_mamba1_case(const char *root, const char *name) {
    Fixture fx;
    fixture_open(&fx, root, name);
    NpyShape su, sdelta, sA, sB, sC, sD, sz, sbias, sh0, sy, sstate;
    float *u = load(&fx, "u", true, &su);                    // (b, d, L)
    float *delta = load(&fx, "delta", true, &sdelta);        // (b, d, L)
    float *A = load(&fx, "A", true, &sA);                    // (d, N)
    float *B = load(&fx, "B", true, &sB);                    // (b, N, L) or (b, G, N, L)
    float *C = load(&fx, "C", true, &sC);                    // like B
    float *D = load(&fx, "D", false, &sD);                   // (d,)
    float *z = load(&fx, "z", false, &sz);                   // (b, d, L)
    float *bias = load(&fx, "delta_bias", false, &sbias);    // (d,)
    float *h0 = load(&fx, "h0", false, &sh0);                // (b, d, N)
    float *y = load(&fx, "y", true, &sy);                    // (b, d, L)
    float *last = load(&fx, "last_state", false, &sstate);   // (b, d, N)
    bool softplus = meta_bool(&fx, "delta_softplus", false);

    int64_t b = 0, d = 0, L = 0, N = 0, G = 1;
    if (sizes_from(&fx, "u", &su, 3)) b = su.shape[0], d = su.shape[1], L = su.shape[2];
    if (sizes_from(&fx, "A", &sA, 2)) N = sA.shape[1];
    want_shape(&fx, "A", A, &sA, 2, d, N);
    want_shape(&fx, "delta", delta, &sdelta, 3, b, d, L);
    /* B, C: (b, N, L) is the G = 1 form of (b, G, N, L), the same memory layout. */
    if (sB.ndim == 4) G = sB.shape[1];
    if (!fx.failed && (G < 1 || d % G != 0))
        fail(&fx, "%s/B.npy: %lld groups do not divide dim %lld", fx.dir, (long long)G, (long long)d);
    if (sB.ndim == 4) {
        want_shape(&fx, "B", B, &sB, 4, b, G, N, L);
        want_shape(&fx, "C", C, &sC, 4, b, G, N, L);
    } else {
        want_shape(&fx, "B", B, &sB, 3, b, N, L);
        want_shape(&fx, "C", C, &sC, 3, b, N, L);
    }
    want_shape(&fx, "D", D, &sD, 1, d);
    want_shape(&fx, "z", z, &sz, 3, b, d, L);
    want_shape(&fx, "delta_bias", bias, &sbias, 1, d);
    want_shape(&fx, "h0", h0, &sh0, 3, b, d, N);
    want_shape(&fx, "y", y, &sy, 3, b, d, L);
    want_shape(&fx, "last_state", last, &sstate, 3, b, d, N);
    if (fx.failed) {
        report_load_failure(&fx);
        fixture_close(&fx);
        return;
    }

    ScanTensors t = {
        .s = {.batch = b, .dim = d, .dstate = N, .seqlen = L, .groups = G,
              .has_z = z != NULL, .has_D = D != NULL, .has_bias = bias != NULL,
              .softplus = softplus, .has_h0 = h0 != NULL},
        .u = u, .delta = delta, .z = z, .A = A, .B = B, .C = C,
        .D = D, .delta_bias = bias, .h0 = h0,
    };
    double *y_ref = alloc_f64(b * d * L);      // (b, d, L) fp64
    double *state_ref = alloc_f64(b * d * N);  // (b, d, N) fp64
    oracle_scan(&t, y_ref, state_ref);
    report(&fx, "y", y, y_ref, b * d * L);
    if (last) report(&fx, "last_state", last, state_ref, b * d * N);
    report_perturbed(&fx, y, y_ref, b * d * L);
    free(y_ref);
    free(state_ref);
    fixture_close(&fx);
}

/* ---- Mamba-2 SSD: ssd_selective_scan ---- */

static void check_ssd_case(const char *root, const char *name) {
    Fixture fx;
    fixture_open(&fx, root, name);
    NpyShape sx, sdt, sA, sB, sC, sD, sz, sbias, sh0, sy, sstate;
    float *x = load(&fx, "x", true, &sx);                      // (b, L, h, p)
    float *dt = load(&fx, "dt", true, &sdt);                   // (b, L, h)
    float *A = load(&fx, "A", true, &sA);                      // (h,)
    float *B = load(&fx, "B", true, &sB);                      // (b, L, g, N)
    float *C = load(&fx, "C", true, &sC);                      // (b, L, g, N)
    float *D = load(&fx, "D", false, &sD);                     // (h,) or (h, p)
    float *z = load(&fx, "z", false, &sz);                     // (b, L, h, p)
    float *bias = load(&fx, "dt_bias", false, &sbias);         // (h,)
    float *h0 = load(&fx, "initial_states", false, &sh0);      // (b, h, p, N)
    float *y = load(&fx, "y", true, &sy);                      // (b, L, h, p)
    float *final = load(&fx, "final_state", false, &sstate);   // (b, h, p, N)
    bool softplus = meta_bool(&fx, "dt_softplus", false);

    int64_t b = 0, L = 0, H = 0, P = 0, G = 0, N = 0;
    if (sizes_from(&fx, "x", &sx, 4)) b = sx.shape[0], L = sx.shape[1], H = sx.shape[2], P = sx.shape[3];
    if (sizes_from(&fx, "B", &sB, 4)) G = sB.shape[2], N = sB.shape[3];
    if (!fx.failed && H % G != 0)
        fail(&fx, "%s/B.npy: %lld groups do not divide %lld heads", fx.dir, (long long)G, (long long)H);
    want_shape(&fx, "dt", dt, &sdt, 3, b, L, H);
    want_shape(&fx, "A", A, &sA, 1, H);
    want_shape(&fx, "B", B, &sB, 4, b, L, G, N);
    want_shape(&fx, "C", C, &sC, 4, b, L, G, N);
    bool D_per_channel = D && sD.ndim == 2;
    if (D_per_channel) want_shape(&fx, "D", D, &sD, 2, H, P);
    else want_shape(&fx, "D", D, &sD, 1, H);
    want_shape(&fx, "z", z, &sz, 4, b, L, H, P);
    want_shape(&fx, "dt_bias", bias, &sbias, 1, H);
    want_shape(&fx, "initial_states", h0, &sh0, 4, b, H, P, N);
    want_shape(&fx, "y", y, &sy, 4, b, L, H, P);
    want_shape(&fx, "final_state", final, &sstate, 4, b, H, P, N);
    if (fx.failed) {
        report_load_failure(&fx);
        fixture_close(&fx);
        return;
    }

    SsdTensors t = {
        .s = {.batch = b, .seqlen = L, .heads = H, .headdim = P, .groups = G, .dstate = N,
              .chunk = 0, .has_z = z, .has_D = D, .D_per_channel = D_per_channel,
              .has_bias = bias, .softplus = softplus, .has_h0 = h0},
        .x = x, .dt = dt, .A = A, .B = B, .C = C, .D = D, .z = z,
        .dt_bias = bias, .initial_states = h0,
    };
    double *y_ref = alloc_f64(b * L * H * P);      // (b, L, h, p) fp64
    double *state_ref = alloc_f64(b * H * P * N);  // (b, h, p, N) fp64
    oracle_ssd(&t, y_ref, state_ref);
    report(&fx, "y", y, y_ref, b * L * H * P);
    if (final) report(&fx, "final_state", final, state_ref, b * H * P * N);
    report_perturbed(&fx, y, y_ref, b * L * H * P);
    free(y_ref);
    free(state_ref);
    fixture_close(&fx);
}

/* ---- Bidirectional Mamba-2, both forms (meta "shift": the Hydra form) ---- */

static void check_bidir_case(const char *root, const char *name) {
    Fixture fx;
    fixture_open(&fx, root, name);
    bool hydra = meta_bool(&fx, "shift", false);
    NpyShape sx, sdt, sA, sB, sC, sD, sbias, sdtb, sBb, sCb, sy;
    float *x = load(&fx, "x", true, &sx);                  // (b, L, h, p)
    float *dt = load(&fx, "dt", true, &sdt);               // (b, L, h)
    float *A = load(&fx, "A", true, &sA);                  // (h,)
    float *B = load(&fx, "B", true, &sB);                  // (b, L, g, N)
    float *C = load(&fx, "C", true, &sC);                  // (b, L, g, N)
    float *D = load(&fx, "D", false, &sD);                 // (h,) or (h, p)
    float *bias = load(&fx, "dt_bias", false, &sbias);     // (h,)
    float *dt_bwd = hydra ? load(&fx, "dt_bwd", true, &sdtb) : NULL;  // (b, L, h)
    float *B_bwd = hydra ? load(&fx, "B_bwd", true, &sBb) : NULL;     // (b, L, g, N)
    float *C_bwd = hydra ? load(&fx, "C_bwd", true, &sCb) : NULL;     // (b, L, g, N)
    float *y = load(&fx, "y", true, &sy);                  // (b, L, h, p)
    bool softplus = meta_bool(&fx, "dt_softplus", false);

    int64_t b = 0, L = 0, H = 0, P = 0, G = 0, N = 0;
    if (sizes_from(&fx, "x", &sx, 4)) b = sx.shape[0], L = sx.shape[1], H = sx.shape[2], P = sx.shape[3];
    if (sizes_from(&fx, "B", &sB, 4)) G = sB.shape[2], N = sB.shape[3];
    if (!fx.failed && H % G != 0)
        fail(&fx, "%s/B.npy: %lld groups do not divide %lld heads", fx.dir, (long long)G, (long long)H);
    want_shape(&fx, "dt", dt, &sdt, 3, b, L, H);
    want_shape(&fx, "A", A, &sA, 1, H);
    want_shape(&fx, "B", B, &sB, 4, b, L, G, N);
    want_shape(&fx, "C", C, &sC, 4, b, L, G, N);
    bool D_per_channel = D && sD.ndim == 2;
    if (D_per_channel) want_shape(&fx, "D", D, &sD, 2, H, P);
    else want_shape(&fx, "D", D, &sD, 1, H);
    want_shape(&fx, "dt_bias", bias, &sbias, 1, H);
    want_shape(&fx, "dt_bwd", dt_bwd, &sdtb, 3, b, L, H);
    want_shape(&fx, "B_bwd", B_bwd, &sBb, 4, b, L, G, N);
    want_shape(&fx, "C_bwd", C_bwd, &sCb, 4, b, L, G, N);
    want_shape(&fx, "y", y, &sy, 4, b, L, H, P);
    if (fx.failed) {
        report_load_failure(&fx);
        fixture_close(&fx);
        return;
    }

    BidirTensors t = {
        .s = {.s = {.batch = b, .seqlen = L, .heads = H, .headdim = P, .groups = G, .dstate = N,
                    .chunk = 0, .has_D = D, .D_per_channel = D_per_channel, .has_bias = bias,
                    .softplus = softplus},
              .hydra = hydra},
        .x = x, .dt = dt, .A = A, .B = B, .C = C, .D = D, .dt_bias = bias,
        .dt_bwd = dt_bwd, .B_bwd = B_bwd, .C_bwd = C_bwd,
    };
    double *y_ref = alloc_f64(b * L * H * P);  // (b, L, h, p) fp64
    oracle_bidir(&t, y_ref, NULL);
    report(&fx, "y", y, y_ref, b * L * H * P);
    report_perturbed(&fx, y, y_ref, b * L * H * P);
    free(y_ref);
    fixture_close(&fx);
}

/* ---- Decode step: selective_state_update_ref ---- */

static void check_decode_m1_case(const char *root, const char *name) {
    Fixture fx;
    fixture_open(&fx, root, name);
    NpyShape sst, sx, sdt, sA, sB, sC, sD, sz, sbias, sy, sout;
    float *state = load(&fx, "state", true, &sst);          // (b, d, N)
    float *x = load(&fx, "x", true, &sx);                   // (b, d)
    float *dt = load(&fx, "dt", true, &sdt);                // (b, d)
    float *A = load(&fx, "A", true, &sA);                   // (d, N)
    float *B = load(&fx, "B", true, &sB);                   // (b, N)
    float *C = load(&fx, "C", true, &sC);                   // (b, N)
    float *D = load(&fx, "D", false, &sD);                  // (d,)
    float *z = load(&fx, "z", false, &sz);                  // (b, d)
    float *bias = load(&fx, "dt_bias", false, &sbias);      // (d,)
    float *y = load(&fx, "y", true, &sy);                   // (b, d)
    float *out = load(&fx, "state_out", false, &sout);      // (b, d, N)
    bool softplus = meta_bool(&fx, "dt_softplus", false);

    int64_t b = 0, d = 0, N = 0;
    if (sizes_from(&fx, "state", &sst, 3)) b = sst.shape[0], d = sst.shape[1], N = sst.shape[2];
    want_shape(&fx, "x", x, &sx, 2, b, d);
    want_shape(&fx, "dt", dt, &sdt, 2, b, d);
    want_shape(&fx, "A", A, &sA, 2, d, N);
    want_shape(&fx, "B", B, &sB, 2, b, N);
    want_shape(&fx, "C", C, &sC, 2, b, N);
    want_shape(&fx, "D", D, &sD, 1, d);
    want_shape(&fx, "z", z, &sz, 2, b, d);
    want_shape(&fx, "dt_bias", bias, &sbias, 1, d);
    want_shape(&fx, "y", y, &sy, 2, b, d);
    want_shape(&fx, "state_out", out, &sout, 3, b, d, N);
    if (fx.failed) {
        report_load_failure(&fx);
        fixture_close(&fx);
        return;
    }

    DecodeTensors t = {
        .s = {.form = DECODE_M1, .batch = b, .tokens = 1, .dim = d, .dstate = N, .groups = 1,
              .has_z = z != NULL, .has_D = D != NULL, .has_bias = bias != NULL, .softplus = softplus},
        .state = state, .x = x, .dt = dt, .A = A, .B = B, .C = C, .D = D, .z = z, .dt_bias = bias,
    };
    double *y_ref = alloc_f64(b * d);          // (b, d) fp64
    double *state_ref = alloc_f64(b * d * N);  // (b, d, N) fp64
    oracle_decode(&t, y_ref, state_ref);
    report(&fx, "y", y, y_ref, b * d);
    if (out) report(&fx, "state_out", out, state_ref, b * d * N);
    report_perturbed(&fx, y, y_ref, b * d);
    free(y_ref);
    free(state_ref);
    fixture_close(&fx);
}

static void check_decode_m2_case(const char *root, const char *name) {
    Fixture fx;
    fixture_open(&fx, root, name);
    NpyShape sst, sx, sdt, sA, sB, sC, sD, sz, sbias, sy, sout;
    float *state = load(&fx, "state", true, &sst);          // (b, h, p, N)
    float *x = load(&fx, "x", true, &sx);                   // (b, h, p)
    float *dt = load(&fx, "dt", true, &sdt);                // (b, h)
    float *A = load(&fx, "A", true, &sA);                   // (h,)
    float *B = load(&fx, "B", true, &sB);                   // (b, g, N)
    float *C = load(&fx, "C", true, &sC);                   // (b, g, N)
    float *D = load(&fx, "D", false, &sD);                  // (h,)
    float *z = load(&fx, "z", false, &sz);                  // (b, h, p)
    float *bias = load(&fx, "dt_bias", false, &sbias);      // (h,)
    float *y = load(&fx, "y", true, &sy);                   // (b, h, p)
    float *out = load(&fx, "state_out", false, &sout);      // (b, h, p, N)
    bool softplus = meta_bool(&fx, "dt_softplus", false);

    int64_t b = 0, H = 0, P = 0, N = 0, G = 0;
    if (sizes_from(&fx, "state", &sst, 4))
        b = sst.shape[0], H = sst.shape[1], P = sst.shape[2], N = sst.shape[3];
    if (sizes_from(&fx, "B", &sB, 3)) G = sB.shape[1];
    if (!fx.failed && H % G != 0)
        fail(&fx, "%s/B.npy: %lld groups do not divide %lld heads", fx.dir, (long long)G, (long long)H);
    want_shape(&fx, "x", x, &sx, 3, b, H, P);
    want_shape(&fx, "dt", dt, &sdt, 2, b, H);
    want_shape(&fx, "A", A, &sA, 1, H);
    want_shape(&fx, "B", B, &sB, 3, b, G, N);
    want_shape(&fx, "C", C, &sC, 3, b, G, N);
    want_shape(&fx, "D", D, &sD, 1, H);
    want_shape(&fx, "z", z, &sz, 3, b, H, P);
    want_shape(&fx, "dt_bias", bias, &sbias, 1, H);
    want_shape(&fx, "y", y, &sy, 3, b, H, P);
    want_shape(&fx, "state_out", out, &sout, 4, b, H, P, N);
    if (fx.failed) {
        report_load_failure(&fx);
        fixture_close(&fx);
        return;
    }

    DecodeTensors t = {
        .s = {.form = DECODE_M2, .batch = b, .tokens = 1, .heads = H, .headdim = P, .groups = G,
              .dstate = N, .has_z = z != NULL, .has_D = D != NULL, .has_bias = bias != NULL,
              .softplus = softplus},
        .state = state, .x = x, .dt = dt, .A = A, .B = B, .C = C, .D = D, .z = z, .dt_bias = bias,
    };
    double *y_ref = alloc_f64(b * H * P);          // (b, h, p) fp64
    double *state_ref = alloc_f64(b * H * P * N);  // (b, h, p, N) fp64
    oracle_decode(&t, y_ref, state_ref);
    report(&fx, "y", y, y_ref, b * H * P);
    if (out) report(&fx, "state_out", out, state_ref, b * H * P * N);
    report_perturbed(&fx, y, y_ref, b * H * P);
    free(y_ref);
    free(state_ref);
    fixture_close(&fx);
}

void fixtures_check_mamba1(const char *dir) {
    check_mamba1_case(dir, "mamba1");
    check_mamba1_case(dir, "mamba1_plain");
}

void fixtures_check_ssd(const char *dir) { check_ssd_case(dir, "ssd"); }

void fixtures_check_bidir(const char *dir) {
    check_bidir_case(dir, "bidir");
    check_bidir_case(dir, "bidir_hydra");
}

void fixtures_check_decode(const char *dir) {
    check_decode_m1_case(dir, "decode_m1");
    check_decode_m2_case(dir, "decode_m2");
}

void fixtures_check_all(const char *dir) {
    fixtures_check_mamba1(dir);
    fixtures_check_ssd(dir);
    fixtures_check_bidir(dir);
    fixtures_check_decode(dir);
}

const char *fixtures_dir(void) {
    static char dir[4096];
    char exe[4000];  // leaves room in dir for "/common/fixtures"
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = '\0';
        /* The folders above the program, nearest first (build/, or build/asan/). */
        for (int up = 0; up < 4; up++) {
            char *slash = strrchr(exe, '/');
            if (!slash) break;
            *slash = '\0';
            struct stat st;
            snprintf(dir, sizeof(dir), "%s/common/fixtures", exe);
            if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return dir;
        }
    }
    return "common/fixtures";
}
