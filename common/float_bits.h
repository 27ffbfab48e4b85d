/* A float's 32 bits and back, by memcpy (a bit cast without aliasing): the
 * host's fp16 and bf16 conversions (half.c) and 04's polynomial exp2
 * (exp2_poly.h). C and CUDA alike. */
#ifndef FLOAT_BITS_H
#define FLOAT_BITS_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define FLOAT_BITS_FN static inline __host__ __device__
#else
#define FLOAT_BITS_FN static inline
#endif

FLOAT_BITS_FN uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

FLOAT_BITS_FN float bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#endif
