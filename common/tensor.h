/* A tensor of an operation as the harness sees it: its name, role, dtype
 * rule and shape; the dtypes a version can run in. */
#ifndef TENSOR_H
#define TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codes8.h"

/* The dtype of a version's tensors that follow it (VERSION_DTYPE).
 * DT_FP16_STATE16: fp16 as DT_FP16, and the decode state (STATE_DTYPE) stored
 * in fp16 too. DT_BF16: bfloat16. DT_BF16_STATE16: bf16 as DT_BF16, and the
 * decode state stored in bf16 too. DT_FP32_STATE_INT8, DT_FP32_STATE_E4M3:
 * fp32, and the state in 8-bit codes with a scale a row (codes8.h). */
typedef enum {
    DT_FP32 = 0, DT_FP16 = 1, DT_FP16_STATE16 = 2, DT_BF16 = 3, DT_BF16_STATE16 = 4,
    DT_FP32_STATE_INT8 = 5, DT_FP32_STATE_E4M3 = 6
} DType;

/* Whether a version of dtype dt holds its VERSION_DTYPE tensors in 16 bits. */
static inline bool dtype_io16(DType dt) { return dt >= DT_FP16 && dt <= DT_BF16_STATE16; }
/* Whether it holds its 16-bit tensors in bf16 (else fp16). */
static inline bool dtype_bf16(DType dt) { return dt == DT_BF16 || dt == DT_BF16_STATE16; }
/* Whether it stores the decode state (STATE_DTYPE) in 16 bits, fp16 or bf16 as dtype_bf16 says. */
static inline bool dtype_state16(DType dt) { return dt == DT_FP16_STATE16 || dt == DT_BF16_STATE16; }
/* The 8-bit code it stores the state in (CODES_NONE: none). */
static inline Codes8 dtype_codes8(DType dt) {
    return dt == DT_FP32_STATE_INT8 ? CODES_INT8 : dt == DT_FP32_STATE_E4M3 ? CODES_E4M3 : CODES_NONE;
}

#define MAX_TENSORS 24
#define MAX_DIMS 5

typedef enum { INPUT, OPTIONAL_INPUT, OUTPUT } TensorRole;
/* ALWAYS_FP32; VERSION_DTYPE: fp16 in a DT_FP16 or DT_FP16_STATE16 version,
 * bf16 in a DT_BF16 or DT_BF16_STATE16 one; STATE_DTYPE (the decode state):
 * fp16 in a DT_FP16_STATE16 version, bf16 in a DT_BF16_STATE16 one, 8-bit
 * codes and a scale for each row of its last dimension in a DT_*_STATE_INT8
 * or _E4M3 one (codes8.h), else fp32; INDEX_INT32: int32 indices that the op
 * makes from the problem (cu_seqlens), never drawn or rounded, held in the
 * same 4 bytes an element as an fp32 tensor. */
typedef enum { ALWAYS_FP32, VERSION_DTYPE, STATE_DTYPE, INDEX_INT32 } TensorDType;

/* One tensor of an operation, named and laid out as the official code does. */
typedef struct {
    const char *name;        // official name, also its .npy file's: "u", "dt_bias"
    TensorRole role;         // an optional input may be off; outputs are written by a forward
    TensorDType dtype;       // fp32, or fp16 | bf16 as the version says (TensorDType)
    bool present;            // false: an optional input that is off in this problem
    double lo, hi;           // random inputs: uniform in [lo, hi)
    int ndim;
    int64_t shape[MAX_DIMS]; // C order
    bool finite;             // --load refuses NaN or inf in it: a parameter whose -inf the chunked forms cannot take
} TensorSpec;

/* malloc or exit 2 naming the bytes and what they were for (tensor.c). */
void *host_alloc(int64_t bytes, const char *what);
/* Exit 2 with one line (what needs how much, what the machine has, the flags
 * to change: "--batch, --seqlen") when bytes exceed the machine's memory: the
 * whole of a problem's host memory, checked before its first allocation. */
void host_budget(double bytes, const char *what, const char *flags);

/* Elements of tensor t; a count past 2^62 (or an overflow) exits 2: more
 * than any machine's memory is refused up front (tensor.c). */
int64_t tensor_numel(const TensorSpec *t);

/* Bytes of one element of tensor t in a version of dtype dt: 2 where it is
 * fp16 or bf16 there (TensorDType), 1 where it is 8-bit codes, else 4; and
 * of the whole tensor, 8-bit codes with their rows' scales (tensor.c). */
size_t tensor_elem_bytes(const TensorSpec *t, DType dt);
size_t tensor_bytes(const TensorSpec *t, DType dt);

/* Tensor t's fp32 values x as a version of dtype dt holds them (its
 * tensor_bytes at dst: 16-bit values rounded to nearest even, 8-bit codes
 * rounded to the nearest with a scale a row), and back to fp32. */
void tensor_narrow(const TensorSpec *t, DType dt, const float *x, void *dst);
void tensor_widen(const TensorSpec *t, DType dt, const void *src, float *x);

#endif
