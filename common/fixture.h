/* Reading one folder of official fixtures and reporting its checks: each
 * operation's fixtures_<op>.c loads its tensors with these, checks every
 * shape against the others before anything is indexed, runs its oracle and
 * reports one check line per output (relative L2 <= 1e-5, TOL_FIXTURE), then
 * a perturbed copy of y that must fail. A folder that cannot be loaded is a
 * failed check with the reason. The sets and how they were made:
 * ops/README.md. */
#ifndef FIXTURE_H
#define FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npy.h"

#define FIXTURE_MAX_FILES 24
#define FIXTURE_FOLDER_MAX 4200  // bytes of an operation's fixtures folder path

typedef struct Fixture {
    const char *name;                 // "mamba1"
    char dir[1024];                   // "<folder>/mamba1"
    bool failed;                      // a file is missing, damaged or of the wrong shape
    char err[640];                    // the first such problem, one line
    char meta[4096];                  // meta.json's text, "" without one
    float *files[FIXTURE_MAX_FILES];  // every tensor loaded, freed by fixture_close
    int nfiles;
} Fixture;

/* Marks the folder failed with one line (the first problem is kept). */
void fixture_fail(Fixture *fx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* <folder>/<name>, its meta.json read (none: the official defaults). */
void fixture_open(Fixture *fx, const char *folder, const char *name);
void fixture_close(Fixture *fx);
/* One tensor of the folder. NULL when an optional file is absent (or after
 * an earlier failure). */
float *fixture_load(Fixture *fx, const char *tensor, bool required, NpyShape *shape);
/* The first tensor of a folder sets the sizes: ndim dims, each at least 1. */
bool fixture_sizes_from(Fixture *fx, const char *tensor, const NpyShape *s, int ndim);
/* Fails the folder unless a present tensor has exactly these int64_t dims. */
void fixture_want_shape(Fixture *fx, const char *tensor, const float *x, const NpyShape *s, int ndim, ...);
/* A boolean of meta.json ("key": true|false); dflt when the key is absent. */
bool fixture_meta_bool(Fixture *fx, const char *key, bool dflt);
/* n doubles, or exit 2. */
double *fixture_alloc_f64(int64_t n);

/* Check lines: the load failure; one output against the oracle; the
 * perturbed y that must fail. */
void fixture_report_load_failure(const Fixture *fx);
void fixture_report(const Fixture *fx, const char *output, const float *want, const double *got, int64_t n);
void fixture_report_perturbed(const Fixture *fx, const float *y, const double *ref, int64_t n);
/* Whether the folder failed to load; if so its load line is reported and the
 * folder closed. */
bool fixture_load_failed(Fixture *fx);
/* The end of a case: y against the oracle's y_ref (ny values), the state
 * against state_ref where the fixture holds one (state may be NULL; its file
 * is state_name), the perturbed y that must fail; then y_ref and state_ref
 * (either may be NULL) freed and the folder closed. */
void fixture_finish(Fixture *fx, const float *y, double *y_ref, int64_t ny,
                    const char *state_name, const float *state, double *state_ref, int64_t nstate);

/* <root>/<sub> into buf (an operation's fixtures folder, e.g.
 * "ops/scan/fixtures"). */
void fixture_folder(char *buf, size_t len, const char *root, const char *sub);

/* The repository's root, found from the program's own path (the nearest
 * folder above it that holds ops/: build/ is one below the root, build/asan/
 * two), so that a program run from any folder finds the fixtures; "." if
 * that fails. */
const char *repository_root(void);

#endif
