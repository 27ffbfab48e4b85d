/* Reading a folder of official fixtures (fixture.h). */
#define _POSIX_C_SOURCE 200809L  // readlink
#include "fixture.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "json.h"

void fixture_fail(Fixture *fx, const char *fmt, ...) {
    if (fx->failed) return;  // keep the first problem
    fx->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fx->err, sizeof fx->err, fmt, ap);
    va_end(ap);
}

void fixture_open(Fixture *fx, const char *folder, const char *name) {
    memset(fx, 0, sizeof *fx);
    fx->name = name;
    if (snprintf(fx->dir, sizeof fx->dir, "%s/%s", folder, name) >= (int)sizeof fx->dir) {
        fixture_fail(fx, "%s/%s: path too long", folder, name);
        return;
    }
    char path[1100];
    snprintf(path, sizeof path, "%s/meta.json", fx->dir);
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno != ENOENT) fixture_fail(fx, "%s: cannot open: %s", path, strerror(errno));
        return;  // no meta.json: the official defaults
    }
    size_t n = fread(fx->meta, 1, sizeof fx->meta - 1, f);
    if (n == sizeof fx->meta - 1 && fgetc(f) != EOF)
        fixture_fail(fx, "%s: larger than %zu bytes", path, sizeof fx->meta - 1);
    fx->meta[n] = '\0';
    fclose(f);
}

void fixture_close(Fixture *fx) {
    for (int i = 0; i < fx->nfiles; i++) free(fx->files[i]);
    fx->nfiles = 0;
}

/* One tensor of the folder. NULL when an optional file is absent (or after
 * an earlier failure). */
float *fixture_load(Fixture *fx, const char *tensor, bool required, NpyShape *shape) {
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
        fixture_fail(fx, "%s", err);
        return NULL;
    }
    if (fx->nfiles == FIXTURE_MAX_FILES) {
        free(x);
        fixture_fail(fx, "%s: more than %d tensors", fx->dir, FIXTURE_MAX_FILES);
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
bool fixture_sizes_from(Fixture *fx, const char *tensor, const NpyShape *s, int ndim) {
    if (fx->failed) return false;
    bool ok = s->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++) ok = s->shape[i] >= 1;
    if (!ok) {
        char got[128];
        shape_text(s, got, sizeof got);
        fixture_fail(fx, "%s/%s.npy: shape %s, expected %d dims, none empty", fx->dir, tensor, got, ndim);
    }
    return ok;
}

/* Fails the folder unless a present tensor has exactly these int64_t dims. */
void fixture_want_shape(Fixture *fx, const char *tensor, const float *x, const NpyShape *s, int ndim, ...) {
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
        fixture_fail(fx, "%s/%s.npy: shape %s, expected %s", fx->dir, tensor, got, exp);
    }
}

/* A boolean of meta.json ("key": true|false); dflt when the key is absent. */
bool fixture_meta_bool(Fixture *fx, const char *key, bool dflt) {
    if (!fx->meta[0]) return dflt;
    JsonObject o;
    char err[160];
    if (!json_parse_flat(fx->meta, &o, err, sizeof err)) {
        fixture_fail(fx, "%s/meta.json: %s", fx->dir, err);
        return dflt;
    }
    const JsonMember *m = json_find(&o, key);
    if (!m) return dflt;
    if (m->type != JSON_TRUE && m->type != JSON_FALSE)
        fixture_fail(fx, "%s/meta.json: \"%s\" is not true or false", fx->dir, key);
    return m->type == JSON_TRUE;
}

double *fixture_alloc_f64(int64_t n) {
    double *p = malloc((size_t)n * sizeof(double));
    if (!p) {
        fprintf(stderr, "fixtures: cannot allocate %lld bytes\n", (long long)n * 8);
        exit(2);
    }
    return p;
}

/* ---- check lines ---- */

void fixture_report_load_failure(const Fixture *fx) {
    char label[96];
    snprintf(label, sizeof label, "fixture %s: load", fx->name);
    check_report_bool(label, false, fx->err);
}

void fixture_report(const Fixture *fx, const char *output, const float *want, const double *got, int64_t n) {
    char label[96];
    snprintf(label, sizeof label, "fixture %s: %s", fx->name, output);
    Tol tol = TOLERANCES[TOL_FIXTURE];
    check_report(label, compare_f32(want, got, n, tol), tol);
}

/* A check that cannot fail proves nothing: move one element of the fixture's
 * y by 1e-3 of y's RMS, and the same comparison must now fail. */
void fixture_report_perturbed(const Fixture *fx, const float *y, const double *ref, int64_t n) {
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


void fixture_folder(char *buf, size_t len, const char *root, const char *sub) {
    if (snprintf(buf, len, "%s/%s", root, sub) >= (int)len) {
        fprintf(stderr, "fixtures: %s/%s: path too long\n", root, sub);
        exit(2);
    }
}

const char *repository_root(void) {
    static char dir[4096];
    char probe[4100];
    ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
    if (n > 0) {
        dir[n] = '\0';
        /* The folders above the program, nearest first (build/, or build/asan/). */
        for (int up = 0; up < 4; up++) {
            char *slash = strrchr(dir, '/');
            if (!slash) break;
            *slash = '\0';
            struct stat st;
            snprintf(probe, sizeof(probe), "%s/ops", dir);
            if (stat(probe, &st) == 0 && S_ISDIR(st.st_mode)) return dir;
        }
    }
    return ".";
}

bool fixture_load_failed(Fixture *fx) {
    if (!fx->failed) return false;
    fixture_report_load_failure(fx);
    fixture_close(fx);
    return true;
}

void fixture_finish(Fixture *fx, const float *y, double *y_ref, int64_t ny,
                    const char *state_name, const float *state, double *state_ref, int64_t nstate) {
    fixture_report(fx, "y", y, y_ref, ny);
    if (state) fixture_report(fx, state_name, state, state_ref, nstate);
    fixture_report_perturbed(fx, y, y_ref, ny);
    free(y_ref);
    free(state_ref);
    fixture_close(fx);
}
