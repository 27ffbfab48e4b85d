/* --dump and --load folders (folder.h): an operation's named tensors as
 * DIR/<name>.npy in the official layouts, and meta.json with the flags the
 * shapes cannot show. Anything wrong with a folder is one line and exit 2. */
#define _XOPEN_SOURCE 700  // mkdir, realpath, getpid
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "folder.h"

#include "args.h"
#include "half.h"

static NpyShape npy_shape_of(const TensorSpec *t) {
    NpyShape s = {t->ndim, {0}};
    for (int i = 0; i < t->ndim; i++) s.shape[i] = t->shape[i];
    return s;
}

/* Whether path is an empty folder (false if it is not a folder or cannot be read). */
static bool empty_folder(const char *path) {
    DIR *d = opendir(path);
    if (!d) return false;
    struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) empty = false;
    closedir(d);
    return empty;
}

/* path without trailing slashes into buf: "out/" is the folder "out". */
static void strip_slashes(char *buf, size_t len, const char *path) {
    snprintf(buf, len, "%s", path);
    for (size_t n = strlen(buf); n > 1 && buf[n - 1] == '/'; n--) buf[n - 1] = '\0';
}

/* path's folder into parent and its last name into name: "out/x/" is "out"
 * and "x"; a name without a slash is in ".". */
static void split_path(const char *path, char *parent, size_t plen, char *name, size_t nlen) {
    char buf[4096];
    strip_slashes(buf, sizeof(buf), path);
    char *slash = strrchr(buf, '/');
    snprintf(name, nlen, "%s", slash ? slash + 1 : buf);
    if (slash == buf) snprintf(parent, plen, "/");
    else if (slash) snprintf(parent, plen, "%.*s", (int)(slash - buf), buf);
    else snprintf(parent, plen, ".");
}

bool same_path(const char *a, const char *b) {
    struct stat sa, sb;  // both there: one file (or folder) however reached, links included
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char pa[4096], na[4096], pb[4096], nb[4096], ra[PATH_MAX], rb[PATH_MAX];
    split_path(a, pa, sizeof(pa), na, sizeof(na));
    split_path(b, pb, sizeof(pb), nb, sizeof(nb));
    if (!realpath(pa, ra) || !realpath(pb, rb)) return strcmp(a, b) == 0;
    return strcmp(ra, rb) == 0 && strcmp(na, nb) == 0;
}

void check_output_file(const char *flag, const char *path) {
    struct stat st;
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode)) die_usage("%s: %s exists and is not a regular file", flag, path);
        if (access(path, W_OK) != 0) die_usage("%s: cannot write %s", flag, path);
        return;
    }
    /* A new file: made and removed now, so that a path no file can be made
     * at (a missing or read-only folder, /sys) is refused before the work. */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) die_usage("%s: cannot create %s (%s)", flag, path, strerror(errno));
    struct stat made, now;  // removed only while the name is still the file made here
    const bool ours = fstat(fd, &made) == 0 && lstat(path, &now) == 0 && made.st_dev == now.st_dev &&
                      made.st_ino == now.st_ino;
    close(fd);
    if (ours) unlink(path);
}

bool path_in_folder(const char *path, const char *dir) {
    char parent[4096], name[4096];
    split_path(path, parent, sizeof(parent), name, sizeof(name));
    return same_path(parent, dir);
}

void folder_check_target(const char *dir, const char *load_dir) {
    struct stat st;
    if (load_dir && same_path(load_dir, dir))
        die_usage("--dump %s is --load's folder: the dump would replace what it is checked against", dir);
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) die_usage("--dump: %s exists and is not a folder", dir);
        if (!empty_folder(dir))
            die_usage("--dump: %s exists and is not empty: a dump is written whole, never over another "
                      "(name a new folder, or remove it)", dir);
    }
    /* A folder made and removed now beside it, as folder_write makes one:
     * where none can be made (a missing or read-only folder, /proc, /sys,
     * even as root) the refusal comes before the work. */
    char probe[4200], plain[4096];
    strip_slashes(plain, sizeof(plain), dir);
    snprintf(probe, sizeof(probe), "%s.part%ld", plain, (long)getpid());
    if (mkdir(probe, 0755) != 0) die_usage("--dump: cannot create %s (%s)", dir, strerror(errno));
    rmdir(probe);
}

/* The files folder_write wrote into tmp (the table's present tensors and
 * meta.json) removed, then tmp itself: a dump that fails leaves nothing. */
static void remove_partial(const char *tmp, const TensorSpec *t, int n) {
    char path[4096];
    for (int k = 0; k < n; k++) {
        snprintf(path, sizeof(path), "%s/%s.npy", tmp, t[k].name);
        unlink(path);
    }
    snprintf(path, sizeof(path), "%s/meta.json", tmp);
    unlink(path);
    rmdir(tmp);
}

void folder_write(const char *target, const TensorSpec *t, int n, const float *const *x, DType dt, const char *meta) {
    char dir[4096];  // target without trailing slashes
    strip_slashes(dir, sizeof(dir), target);
    char tmp[4200];  // the folder the dump is written in, renamed to dir once whole
    snprintf(tmp, sizeof(tmp), "%s.part%ld", dir, (long)getpid());
    int64_t most = 1;  // the most elements of a 16-bit tensor: its buffers are taken before the folder is made
    for (int k = 0; k < n; k++)
        if (t[k].present && t[k].dtype != INDEX_INT32 && tensor_elem_bytes(&t[k], dt) == 2) {
            NpyShape shape = npy_shape_of(&t[k]);
            if (npy_numel(&shape) > most) most = npy_numel(&shape);
        }
    uint16_t *h = host_alloc(most * 2, "the dump's 16-bit values");  // (most,) fp16 | bf16 bits
    float *f16 = host_alloc(most * 4, "the dump's bf16 values");     // (most,) fp32: bf16 values widened
    if (mkdir(tmp, 0755) != 0) die_usage("--dump: cannot create folder %s (%s)", tmp, strerror(errno));
    char path[4400], err[512], names[512] = "";
    for (int k = 0; k < n; k++) {
        if (!t[k].present) continue;  // optional input that is off
        NpyShape shape = npy_shape_of(&t[k]);
        snprintf(path, sizeof(path), "%s/%s.npy", tmp, t[k].name);
        bool ok;
        /* A 16-bit tensor as the version read and wrote it: fp16 as fp16; bf16
         * as fp32 of its bf16 values (.npy has no bf16), so that a 16-bit state,
         * which the harness keeps in fp32, is written as the version read it. */
        const bool half = tensor_elem_bytes(&t[k], dt) == 2;
        if (t[k].dtype == INDEX_INT32) {
            ok = npy_write_i32(path, (const int32_t *)x[k], &shape, err, sizeof(err));
        } else if (half) {
            int64_t e = npy_numel(&shape);
            if (dtype_bf16(dt)) {
                floats_to_bf16s(x[k], h, e);
                bf16s_to_floats(h, f16, e);
                ok = npy_write_f32(path, f16, &shape, err, sizeof(err));
            } else {
                floats_to_halves(x[k], h, e);
                ok = npy_write_f16(path, h, &shape, err, sizeof(err));
            }
        } else {
            ok = npy_write_f32(path, x[k], &shape, err, sizeof(err));
        }
        if (!ok) {
            remove_partial(tmp, t, n);
            die_usage("--dump %s: nothing written (%s)", dir, err);
        }
        snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", names[0] ? "," : "", t[k].name);
    }
    free(h), free(f16);
    snprintf(path, sizeof(path), "%s/meta.json", tmp);
    FILE *f = fopen(path, "w");
    bool ok = f && fprintf(f, "%s\n", meta) > 0;
    if (f && fclose(f) != 0) ok = false;
    /* Whole: into place (an empty folder of that name, checked up front, is replaced). */
    rmdir(dir);
    if (!ok || rename(tmp, dir) != 0) {
        remove_partial(tmp, t, n);
        die_usage("--dump: cannot write %s (%s)", ok ? dir : path, strerror(errno));
    }
    printf("wrote %s/{%s}.npy and meta.json\n", dir, names);
}

/* "2,6,5" */
static void dims_text(const NpyShape *s, char *buf, size_t len) {
    buf[0] = '\0';
    for (int i = 0; i < s->ndim; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%lld", i ? "," : "", (long long)s->shape[i]);
}

/* Whether path exists; a path that exists must be a regular file (a FIFO or
 * a folder named like a tensor would block a read or fail it). */
static bool regular_file(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) return false;
        die_usage("--load: cannot read %s (%s)", path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) die_usage("--load: %s is not a regular file", path);
    return true;
}

/* meta.json: read whole, then as a flat JSON object (json.h). */
static void read_meta(LoadFolder *f, const char *path) {
    f->json = &f->meta_obj;
    if (!regular_file(path)) return;
    FILE *m = fopen(path, "r");
    if (!m) die_usage("--load: cannot read %s (%s)", path, strerror(errno));
    size_t len = fread(f->meta, 1, sizeof(f->meta) - 1, m);
    bool whole = feof(m) && !ferror(m);
    fclose(m);
    if (!whole) die_usage("--load: %s is longer than %zu bytes or unreadable", path, sizeof(f->meta) - 1);
    f->meta[len] = '\0';
    char err[160];
    if (!json_parse_flat(f->meta, f->json, err, sizeof(err))) die_usage("--load: %s: %s", path, err);
    f->has_meta = true;
}

/* One line on stderr for each .npy of dir that the table t does not name: it is not read. */
static void name_unknown_files(const char *dir, const TensorSpec *t, int n) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".npy") != 0) continue;
        bool known = false;
        for (int k = 0; k < n && !known; k++)
            known = strlen(t[k].name) == len - 4 && strncmp(t[k].name, e->d_name, len - 4) == 0;
        if (!known) fprintf(stderr, "--load: %s/%s is not a tensor of this program (not read)\n", dir, e->d_name);
    }
    closedir(d);
}

void folder_read(LoadFolder *f, const char *dir, const TensorSpec *t, int n) {
    memset(f, 0, sizeof(*f));
    f->dir = dir;
    f->sized_by = f->sized;
    char path[4096], err[512];
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) die_usage("--load: %s is not a folder", dir);
    snprintf(path, sizeof(path), "%s/meta.json", dir);
    read_meta(f, path);
    for (int k = 0; k < n; k++) {
        snprintf(path, sizeof(path), "%s/%s.npy", dir, t[k].name);
        if (!regular_file(path)) {
            if (t[k].role == INPUT) die_usage("--load: %s is missing", path);
            continue;
        }
        if (!npy_read_shape(path, &f->shape[k], t[k].dtype == INDEX_INT32, err, sizeof(err)))
            die_usage("--load: %s", err);
        for (int i = 0; i < f->shape[k].ndim; i++)
            if (f->shape[k].shape[i] < 1) {
                char dims[128];
                dims_text(&f->shape[k], dims, sizeof(dims));
                die_usage("--load: %s has shape (%s): every size must be at least 1", path, dims);
            }
        f->given[k] = true;
    }
    f->table = t;
    f->ntable = n;
}

bool folder_read_data(const LoadFolder *f, const TensorSpec *t, int n, float **x) {
    char path[4096], err[512];
    bool finite = true;  // every input value read
    for (int k = 0; k < n; k++) {
        x[k] = NULL;
        if (!f->given[k]) continue;
        snprintf(path, sizeof(path), "%s/%s.npy", f->dir, t[k].name);
        NpyShape shape;
        x[k] = t[k].dtype == INDEX_INT32 ? (float *)npy_read_i32(path, &shape, err, sizeof(err))
                                          : npy_read_f32(path, &shape, err, sizeof(err));
        if (!x[k]) die_usage("--load: %s", err);
        if (t[k].role == OUTPUT || t[k].dtype == INDEX_INT32) continue;
        const int64_t numel = npy_numel(&shape);
        for (int64_t i = 0; i < numel; i++) {
            if (isfinite(x[k][i])) continue;
            if (t[k].finite)
                die_usage("--load: %s element %lld is %g: %s is a model's parameter and must be finite (versions "
                          "that subtract its running sums turn an inf into NaN)", path, (long long)i, x[k][i], t[k].name);
            finite = false;
        }
    }
    return finite;
}

const NpyShape *folder_shape(const LoadFolder *f, int k) {
    f->sized_by[k] = true;
    return &f->shape[k];
}

static bool same_shape(const NpyShape *a, const NpyShape *b) {
    bool ok = a->ndim == b->ndim;
    for (int i = 0; ok && i < a->ndim; i++) ok = a->shape[i] == b->shape[i];
    return ok;
}

void folder_expect_shapes(const LoadFolder *f, const TensorSpec *t, int n) {
    int off = 0, first = -1;  // files whose shape is not their tensor's, the first of them
    for (int k = 0; k < n; k++) {
        NpyShape want = npy_shape_of(&t[k]);
        if (f->given[k] && !same_shape(&f->shape[k], &want) && off++ == 0) first = k;
    }
    if (off == 0) return;
    char g[128], w[128], from[512] = "";
    NpyShape want = npy_shape_of(&t[first]);
    dims_text(&f->shape[first], g, sizeof(g));
    dims_text(&want, w, sizeof(w));
    for (int k = 0; k < n; k++)
        if (f->sized[k])
            snprintf(from + strlen(from), sizeof(from) - strlen(from), "%s%s.npy", from[0] ? ", " : "", t[k].name);
    if (off == 1)
        die_usage("--load: %s/%s.npy has shape (%s), expected (%s) from the shapes of %s", f->dir, t[first].name, g, w,
                  from[0] ? from : "the folder's other files");
    die_usage("--load: %s: %s.npy has shape (%s), expected (%s), and %d other file%s not fit the sizes read from "
              "%s: is one of those the odd one out?", f->dir, t[first].name, g, w, off - 1, off == 2 ? " does" : "s do",
              from[0] ? from : "the folder's files");
}

bool meta_bool(const LoadFolder *f, const char *key, bool dflt) {
    const JsonMember *m = json_find(f->json, key);
    if (!m) return dflt;
    if (m->type != JSON_TRUE && m->type != JSON_FALSE)
        die_usage("--load: %s/meta.json: \"%s\" must be true or false, not %s", f->dir, key, m->text);
    return m->type == JSON_TRUE;
}

int64_t meta_int(const LoadFolder *f, const char *key, int64_t dflt) {
    const JsonMember *m = json_find(f->json, key);
    if (!m) return dflt;
    char *end = NULL;
    errno = 0;
    long long x = m->type == JSON_NUMBER ? strtoll(m->text, &end, 10) : 0;
    if (m->type != JSON_NUMBER || errno != 0 || *end != '\0')
        die_usage("--load: %s/meta.json: \"%s\" must be an integer, not %s", f->dir, key, m->text);
    return (int64_t)x;
}

const char *meta_string(const LoadFolder *f, const char *key) {
    const JsonMember *m = json_find(f->json, key);
    if (!m) return NULL;
    if (m->type != JSON_STRING) die_usage("--load: %s/meta.json: \"%s\" must be a string, not %s", f->dir, key, m->text);
    return m->text;
}

void folder_notes(const LoadFolder *f) {
    name_unknown_files(f->dir, f->table, f->ntable);
    if (!f->has_meta) {
        fprintf(stderr, "--load: %s has no meta.json: every flag takes the official function's default\n", f->dir);
        return;
    }
    for (int i = 0; i < f->json->n; i++)
        if (!f->json->m[i].used)
            fprintf(stderr, "--load: %s/meta.json: \"%s\" is not read by this program (ignored)\n", f->dir,
                    f->json->m[i].key);
}
