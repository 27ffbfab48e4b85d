/* A batched fp32 transpose on the device, for the layout changes the
 * "previous stage" versions need (05 and 07 run 03's scan, whose tensors are
 * time-last, on time-first data). */
#ifndef TRANSPOSE_H
#define TRANSPOSE_H

#include <stdint.h>

#include "c_decls.h"

BEGIN_C_DECLS

/* dst (batch, cols, rows) = src (batch, rows, cols) transposed, fp32, on the
 * default stream (launch checked). dst and src must not overlap. */
void transpose_batched(float *dst, const float *src, int64_t batch, int64_t rows, int64_t cols);

END_C_DECLS

#endif
