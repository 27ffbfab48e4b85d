/* NumPy .npy files: a 10- or 12-byte preamble, a Python dict literal as the
 * header, then the raw little-endian data in C order:
 *   \x93NUMPY <major> <minor> <header length: uint16 (1.0) | uint32 (2.0)>
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 8, 37), }   + padding + '\n'
 * The header is parsed strictly (every read bounds-checked, sizes checked for
 * overflow), so a damaged or hostile file gives one clear line, never a crash. */
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"

#define NPY_MAX_HEADER (1 << 20)   // numpy itself writes a few hundred bytes

int64_t npy_numel(const NpyShape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++) n *= s->shape[i];
    return n;
}

/* The dims are read as int64_t: pass int64_t values (cast literals). */
NpyShape npy_shape(int ndim, ...) {
    NpyShape s = {0, {0}};
    if (ndim < 0 || ndim > NPY_MAX_DIMS) {
        fprintf(stderr, "npy_shape: %d dims (at most %d)\n", ndim, NPY_MAX_DIMS);
        exit(1);
    }
    va_list ap;
    va_start(ap, ndim);
    s.ndim = ndim;
    for (int i = 0; i < ndim; i++) s.shape[i] = va_arg(ap, int64_t);
    va_end(ap);
    return s;
}

static void set_err(char *err, int errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, int errlen, const char *fmt, ...) {
    if (!err || errlen <= 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, (size_t)errlen, fmt, ap);
    va_end(ap);
}

/* "2x8x37" ("scalar" for 0 dims). */
static void shape_text(const NpyShape *s, char *out, size_t outlen) {
    if (s->ndim == 0) {
        snprintf(out, outlen, "scalar");
        return;
    }
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < s->ndim && used < outlen; i++) {
        int w = snprintf(out + used, outlen - used, i ? "x%lld" : "%lld", (long long)s->shape[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
}

/* ---- the header dict: a tiny parser over [p, end) ---- */

typedef struct {
    const char *p, *end;
} Cursor;

static void skip_space(Cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool eat(Cursor *c, char ch) {
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

static bool eat_word(Cursor *c, const char *word) {
    skip_space(c);
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, word, n) == 0) {
        c->p += n;
        return true;
    }
    return false;
}

/* A '...' or "..." string without escapes, into out (fails if it does not fit). */
static bool parse_string(Cursor *c, char *out, size_t outlen) {
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return false;
    char quote = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != quote) {
        if (*c->p == '\\' || n + 1 >= outlen) return false;
        out[n++] = *c->p++;
    }
    if (c->p >= c->end) return false;
    c->p++;
    out[n] = '\0';
    return true;
}

/* A non-negative decimal integer that fits in int64_t. */
static bool parse_dim(Cursor *c, int64_t *v) {
    skip_space(c);
    if (c->p >= c->end || *c->p < '0' || *c->p > '9') return false;
    int64_t x = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        int d = *c->p++ - '0';
        if (x > (INT64_MAX - d) / 10) return false;
        x = x * 10 + d;
    }
    *v = x;
    return true;
}

/* (), (n,), (a, b, c) or (a, b, c,) */
static bool parse_shape(Cursor *c, NpyShape *s, const char **why) {
    s->ndim = 0;
    *why = "shape is not a tuple of non-negative integers";
    if (!eat(c, '(')) return false;
    if (eat(c, ')')) return true;
    for (;;) {
        if (s->ndim == NPY_MAX_DIMS) {
            *why = "shape has more dims than NPY_MAX_DIMS";
            return false;
        }
        if (!parse_dim(c, &s->shape[s->ndim])) return false;
        s->ndim++;
        if (eat(c, ')')) return true;
        if (!eat(c, ',')) return false;
        if (eat(c, ')')) return true;
    }
}

typedef struct {
    char descr[32];
    bool fortran_order;
    NpyShape shape;
} NpyHeader;

/* Parses the dict; on failure returns false with a short reason in why. */
static bool parse_header(const char *text, size_t len, NpyHeader *h, char *why, size_t whylen) {
    Cursor c = {text, text + len};
    bool have_descr = false, have_order = false, have_shape = false;
    const char *reason = "not a dict";
    if (!eat(&c, '{')) goto bad;
    while (!eat(&c, '}')) {
        char key[32];
        reason = "expected a quoted key";
        if (!parse_string(&c, key, sizeof key)) goto bad;
        reason = "expected ':' after a key";
        if (!eat(&c, ':')) goto bad;
        if (strcmp(key, "descr") == 0) {
            reason = "descr is not a short string";
            if (!parse_string(&c, h->descr, sizeof h->descr)) goto bad;
            have_descr = true;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (eat_word(&c, "True")) h->fortran_order = true;
            else if (eat_word(&c, "False")) h->fortran_order = false;
            else { reason = "fortran_order is not True or False"; goto bad; }
            have_order = true;
        } else if (strcmp(key, "shape") == 0) {
            if (!parse_shape(&c, &h->shape, &reason)) goto bad;
            have_shape = true;
        } else {
            snprintf(why, whylen, "unexpected key '%s'", key);
            return false;
        }
        if (eat(&c, ',')) continue;
        reason = "expected ',' or '}'";
        if (!eat(&c, '}')) goto bad;
        break;
    }
    skip_space(&c);
    reason = "bytes after the dict";
    if (c.p != c.end) goto bad;
    reason = "missing 'descr', 'fortran_order' or 'shape'";
    if (!have_descr || !have_order || !have_shape) goto bad;
    return true;
bad:
    snprintf(why, whylen, "%s", reason);
    return false;
}

static uint32_t le32(const unsigned char *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* ---- reader ---- */

/* The header, checked against the file's size, then (data not NULL) the
 * values into a new array: fp32 ('<f4', or '<f2' widened), or with int32 the
 * int32 values of an '<i4' file (the same 4 bytes an element). */
static bool npy_read(const char *path, NpyShape *shape, void **data, bool int32, char *err, int errlen) {
    float *out = NULL;
    unsigned char *raw = NULL;
    char *text = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return false;
    }

    unsigned char pre[12];
    size_t got = fread(pre, 1, 8, f);
    if (ferror(f)) {
        set_err(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        goto fail;
    }
    if (got != 8 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        set_err(err, errlen, "%s: not a .npy file (no \\x93NUMPY magic)", path);
        goto fail;
    }
    int major = pre[6], minor = pre[7];
    size_t lenbytes = major == 1 ? 2 : 4;
    if ((major != 1 && major != 2) || minor != 0) {
        set_err(err, errlen, "%s: .npy format %d.%d not supported (need 1.0 or 2.0)", path, major, minor);
        goto fail;
    }
    if (fread(pre + 8, 1, lenbytes, f) != lenbytes) {
        set_err(err, errlen, "%s: truncated: file ends inside the preamble", path);
        goto fail;
    }
    uint32_t hlen = major == 1 ? (uint32_t)pre[8] | (uint32_t)pre[9] << 8 : le32(pre + 8);
    if (hlen > NPY_MAX_HEADER) {
        set_err(err, errlen, "%s: bad header: %u bytes long (at most %d)", path, hlen, NPY_MAX_HEADER);
        goto fail;
    }
    text = malloc((size_t)hlen + 1);
    if (!text) {
        set_err(err, errlen, "%s: out of memory reading the header", path);
        goto fail;
    }
    if (fread(text, 1, hlen, f) != hlen) {
        set_err(err, errlen, "%s: truncated: file ends inside the %u-byte header", path, hlen);
        goto fail;
    }
    text[hlen] = '\0';

    NpyHeader h;
    char why[128];
    if (!parse_header(text, hlen, &h, why, sizeof why)) {
        set_err(err, errlen, "%s: bad header: %s", path, why);
        goto fail;
    }
    int elsize;
    const char *type_name;
    if (int32) {
        if (strcmp(h.descr, "<i4") != 0) {
            set_err(err, errlen, "%s: dtype '%s' not supported (need '<i4')", path, h.descr);
            goto fail;
        }
        elsize = 4;
        type_name = "int32";
    } else if (strcmp(h.descr, "<f4") == 0) {
        elsize = 4;
        type_name = "float32";
    } else if (strcmp(h.descr, "<f2") == 0) {
        elsize = 2;
        type_name = "float16";
    } else {
        set_err(err, errlen, "%s: dtype '%s' not supported (need '<f4' or '<f2')", path, h.descr);
        goto fail;
    }
    if (h.fortran_order) {
        set_err(err, errlen, "%s: Fortran order not supported (need C order)", path);
        goto fail;
    }

    /* Element count and bytes, refusing anything whose size overflows. */
    char dims[160];
    shape_text(&h.shape, dims, sizeof dims);
    int64_t numel = 1;
    for (int i = 0; i < h.shape.ndim; i++) {
        int64_t d = h.shape.shape[i];
        if (d != 0 && numel > INT64_MAX / 4 / d) {
            set_err(err, errlen, "%s: bad header: shape %s is too large", path, dims);
            goto fail;
        }
        numel *= d;
    }
    int64_t want = numel * elsize;

    long data_start = ftell(f);
    if (data_start < 0 || fseek(f, 0, SEEK_END) != 0) {
        set_err(err, errlen, "%s: cannot seek: %s", path, strerror(errno));
        goto fail;
    }
    long file_end = ftell(f);
    if (file_end < 0 || fseek(f, data_start, SEEK_SET) != 0) {
        set_err(err, errlen, "%s: cannot seek: %s", path, strerror(errno));
        goto fail;
    }
    int64_t have = (int64_t)file_end - (int64_t)data_start;
    if (have != want) {
        set_err(err, errlen, "%s: %sheader says %s %s (%lld bytes) but file holds %lld bytes",
                path, have < want ? "truncated: " : "", dims, type_name, (long long)want,
                (long long)have);
        goto fail;
    }
    if (!data) {
        free(text);
        fclose(f);
        *shape = h.shape;
        return true;
    }
    if ((uint64_t)numel > SIZE_MAX / sizeof(float)) {
        set_err(err, errlen, "%s: shape %s does not fit in memory", path, dims);
        goto fail;
    }

    raw = malloc(want > 0 ? (size_t)want : 1);
    out = malloc(numel > 0 ? (size_t)numel * sizeof(float) : 1);
    if (!raw || !out) {
        set_err(err, errlen, "%s: out of memory (%lld bytes)", path, (long long)(want + numel * 4));
        goto fail;
    }
    if (fread(raw, 1, (size_t)want, f) != (size_t)want) {
        set_err(err, errlen, "%s: truncated: read failed inside the data", path);
        goto fail;
    }
    for (int64_t i = 0; i < numel; i++) {
        if (elsize == 4) {
            uint32_t u = le32(raw + 4 * i);
            memcpy(&out[i], &u, sizeof u);
        } else {
            out[i] = half_to_float((uint16_t)(raw[2 * i] | raw[2 * i + 1] << 8));
        }
    }
    free(raw);
    free(text);
    fclose(f);
    *shape = h.shape;
    *data = out;
    return true;

fail:
    free(out);
    free(raw);
    free(text);
    fclose(f);
    return false;
}

float *npy_read_f32(const char *path, NpyShape *shape, char *err, int errlen) {
    void *x = NULL;
    return npy_read(path, shape, &x, false, err, errlen) ? x : NULL;
}

int32_t *npy_read_i32(const char *path, NpyShape *shape, char *err, int errlen) {
    void *x = NULL;
    return npy_read(path, shape, &x, true, err, errlen) ? x : NULL;
}

bool npy_read_shape(const char *path, NpyShape *shape, bool int32, char *err, int errlen) {
    return npy_read(path, shape, NULL, int32, err, errlen);
}

/* ---- writer (format 1.0, header padded to a multiple of 64 bytes) ---- */

/* descr: "<f4", "<i4" (4-byte elements) or "<f2". */
static bool npy_write(const char *path, const void *x, const char *descr, const NpyShape *shape,
                      char *err, int errlen) {
    const int elsize = descr[2] == '2' ? 2 : 4;
    if (shape->ndim < 0 || shape->ndim > NPY_MAX_DIMS) {
        set_err(err, errlen, "%s: cannot write %d dims (at most %d)", path, shape->ndim, NPY_MAX_DIMS);
        return false;
    }
    char dims[256] = "";
    size_t used = 0;
    for (int i = 0; i < shape->ndim; i++) {
        if (shape->shape[i] < 0) {
            set_err(err, errlen, "%s: cannot write a negative dim", path);
            return false;
        }
        used += (size_t)snprintf(dims + used, sizeof dims - used, i ? ", %lld" : "%lld",
                                 (long long)shape->shape[i]);
    }
    if (shape->ndim == 1) snprintf(dims + used, sizeof dims - used, ",");

    char header[512];
    int len = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
                       descr, dims);
    /* 10 preamble bytes + dict + spaces + '\n' = a multiple of 64. */
    int total = 10 + len + 1;
    int pad = (64 - total % 64) % 64;
    memset(header + len, ' ', (size_t)pad);
    header[len + pad] = '\n';
    int hlen = len + pad + 1;

    FILE *f = fopen(path, "wb");
    if (!f) {
        set_err(err, errlen, "%s: cannot open for writing: %s", path, strerror(errno));
        return false;
    }
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    bool ok = fwrite(pre, 1, sizeof pre, f) == sizeof pre &&
              fwrite(header, 1, (size_t)hlen, f) == (size_t)hlen;

    /* The data as little-endian bytes, a buffer at a time. */
    int64_t n = npy_numel(shape);
    unsigned char buf[4096];
    size_t fill = 0;
    for (int64_t i = 0; i < n && ok; i++) {
        uint32_t u;
        if (elsize == 4) memcpy(&u, (const float *)x + i, sizeof u);
        else u = ((const uint16_t *)x)[i];
        for (int k = 0; k < elsize; k++) buf[fill++] = (unsigned char)(u >> (8 * k));
        if (fill == sizeof buf) {
            ok = fwrite(buf, 1, fill, f) == fill;
            fill = 0;
        }
    }
    if (ok && fill > 0) ok = fwrite(buf, 1, fill, f) == fill;
    if (fclose(f) != 0) ok = false;
    if (!ok) {
        set_err(err, errlen, "%s: write failed: %s", path, strerror(errno));
        remove(path);
    }
    return ok;
}

bool npy_write_f32(const char *path, const float *x, const NpyShape *shape, char *err, int errlen) {
    return npy_write(path, x, "<f4", shape, err, errlen);
}

bool npy_write_f16(const char *path, const uint16_t *x, const NpyShape *shape, char *err, int errlen) {
    return npy_write(path, x, "<f2", shape, err, errlen);
}

bool npy_write_i32(const char *path, const int32_t *x, const NpyShape *shape, char *err, int errlen) {
    return npy_write(path, x, "<i4", shape, err, errlen);
}
