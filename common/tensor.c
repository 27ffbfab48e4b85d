/* host_alloc and tensor_elem_bytes (tensor.h). */
#define _POSIX_C_SOURCE 200809L  // sysconf
#include "tensor.h"

#include <stdlib.h>
#include <unistd.h>

#include "args.h"

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
    const bool half = (t->dtype == VERSION_DTYPE && dt != DT_FP32) ||
                      (t->dtype == STATE_DTYPE && dtype_state16(dt));
    return half ? 2 : 4;
}
