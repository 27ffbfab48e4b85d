/* host_alloc, tensor_numel and a tensor's bytes in a version's dtype (tensor.h). */
#define _POSIX_C_SOURCE 200809L  // sysconf
#include "tensor.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "half.h"

/* The machine's memory in bytes, 0 where it cannot be told. */
static double phys_bytes(void) {
    return (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
}

void *host_alloc(int64_t bytes, const char *what) {
    const double phys = phys_bytes();
    void *p = (phys > 0 && bytes > phys) ? NULL : malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!p) die_usage("cannot allocate %lld bytes (%.1f MiB) of host memory for %s",
                      (long long)bytes, bytes / 1048576.0, what);
    return p;
}

void host_budget(double bytes, const char *what, const char *flags) {
    const double phys = phys_bytes();
    if (phys > 0 && bytes > phys)
        die_usage("%s needs at least %.1f GiB of host memory, this machine has %.1f GiB: give smaller sizes (%s)", what,
                  bytes / 1073741824.0, phys / 1073741824.0, flags);
}

static int64_t mul(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r) || r > ((int64_t)1 << 62))
        die_usage("problem too large: %lld x %lld elements overflows", (long long)a, (long long)b);
    return r;
}

int64_t tensor_numel(const TensorSpec *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n = mul(n, t->shape[i]);
    return n;
}

size_t tensor_elem_bytes(const TensorSpec *t, DType dt) {
    if (t->dtype == STATE_DTYPE && dtype_codes8(dt)) return 1;
    const bool half = (t->dtype == VERSION_DTYPE && dtype_io16(dt)) || (t->dtype == STATE_DTYPE && dtype_state16(dt));
    return half ? 2 : 4;
}

/* Values a row of t: its last dimension (a row of 8-bit codes shares a scale). */
static int64_t row_values(const TensorSpec *t) { return t->ndim ? t->shape[t->ndim - 1] : 1; }

size_t tensor_bytes(const TensorSpec *t, DType dt) {
    const int64_t n = tensor_numel(t);
    if (tensor_elem_bytes(t, dt) == 1) return codes8_bytes(n, row_values(t));
    return (size_t)n * tensor_elem_bytes(t, dt);
}

void tensor_narrow(const TensorSpec *t, DType dt, const float *x, void *dst) {
    const int64_t n = tensor_numel(t), row = row_values(t);
    switch (tensor_elem_bytes(t, dt)) {
    case 1: {
        uint8_t *codes = dst;                                              // (numel,) 8-bit codes
        float *scales = (float *)((char *)dst + codes8_scales_at(n));  // (numel / row,) fp32
        for (int64_t r = 0; r < n / row; r++)
            scales[r] = codes8_store_row(dtype_codes8(dt), x + r * row, row, ROUND_NEAREST, 0, 0, 0, codes + r * row);
        break;
    }
    case 2:
        if (dtype_bf16(dt)) floats_to_bf16s(x, dst, n);
        else floats_to_halves(x, dst, n);
        break;
    default: memcpy(dst, x, sizeof(float) * (size_t)n);
    }
}

void tensor_widen(const TensorSpec *t, DType dt, const void *src, float *x) {
    const int64_t n = tensor_numel(t), row = row_values(t);
    switch (tensor_elem_bytes(t, dt)) {
    case 1: {
        const uint8_t *codes = src;                                                  // (numel,) 8-bit codes
        const float *scales = (const float *)((const char *)src + codes8_scales_at(n));  // (numel / row,) fp32
        for (int64_t r = 0; r < n / row; r++) codes8_load_row(dtype_codes8(dt), codes + r * row, scales[r], row, x + r * row);
        break;
    }
    case 2:
        if (dtype_bf16(dt)) bf16s_to_floats(src, x, n);
        else halves_to_floats(src, x, n);
        break;
    default: memcpy(x, src, sizeof(float) * (size_t)n);
    }
}
