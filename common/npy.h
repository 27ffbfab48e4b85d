/* NumPy .npy files (format 1.0/2.0, little-endian, C order): read and write
 * fp32 ('<f4'), fp16 ('<f2') and int32 ('<i4', indices such as cu_seqlens);
 * reading fp16 widens to fp32. */
#ifndef NPY_H
#define NPY_H

#include <stdbool.h>
#include <stdint.h>

#define NPY_MAX_DIMS 8

typedef struct {
    int ndim;
    int64_t shape[NPY_MAX_DIMS];
} NpyShape;

int64_t npy_numel(const NpyShape *s);

/* Read path into a new fp32 array (malloc'd, caller frees). On any problem
 * (missing, truncated, not '<f4'/'<f2', Fortran order, bad header) returns
 * NULL and writes one clear line into err (size errlen). */
float *npy_read_f32(const char *path, NpyShape *shape, char *err, int errlen);
/* The same for an int32 file ('<i4' only). */
int32_t *npy_read_i32(const char *path, NpyShape *shape, char *err, int errlen);

/* The same checks, reading the header alone (of an '<i4' file with int32):
 * the shape, with the file's size checked against it, and no data read. */
bool npy_read_shape(const char *path, NpyShape *shape, bool int32, char *err, int errlen);

/* Write n values as '<f4' or '<f2' with the given shape; returns false and
 * fills err on failure. */
bool npy_write_f32(const char *path, const float *x, const NpyShape *shape, char *err, int errlen);
bool npy_write_f16(const char *path, const uint16_t *x, const NpyShape *shape, char *err, int errlen);
bool npy_write_i32(const char *path, const int32_t *x, const NpyShape *shape, char *err, int errlen);

/* Convenience: shape from a list of dims, each passed as int64_t
 * (write npy_shape(1, (int64_t)5), not npy_shape(1, 5)). */
NpyShape npy_shape(int ndim, ...);

#endif
