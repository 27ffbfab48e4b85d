/* Values in 8 bits: each row of a tensor (its last dimension, n values; a
 * decode state's row), or each block of a row, stored as 8-bit codes and one
 * fp32 scale, the block's largest |value| over the code's largest. Two codes:
 *   int8   integers -127..127 times the scale: a uniform grid, 1/127 of the
 *          row's largest |value| a step;
 *   e4m3   fp8 (1 sign, 4 exponent, 3 mantissa bits, finite up to 448, no
 *          inf) times the scale: 3 bits of mantissa at every magnitude, so a
 *          small value keeps its relative precision where int8 rounds it to 0.
 * A scale a row costs 4 bytes on n codes (n 128: 1.03 bytes a value), and a
 * row is what one group of lanes of a decode kernel holds, so its scale is
 * one max over those lanes.
 * Two roundings: to the nearest code (ties to even), or stochastic, up with
 * probability (value - code below) / step, so that the stored
 * value is the true one on average and a chain of roundings walks without a
 * drift. The random number is counter-based, a hash of (slot, token,
 * element), so that a GPU version draws the same one as the C code, and one
 * launch of T tokens the same as T launches of one.
 * In memory (codes8_bytes): a tensor's codes, one byte a value in C order,
 * then, from the next multiple of 256 bytes, its rows' fp32 scales in the
 * same order. C and CUDA. */
#ifndef CODES8_H
#define CODES8_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define CODES8_FN __host__ __device__ static inline
#else
#define CODES8_FN static inline
#endif

/* The 8-bit code of a tensor stored so (CODES_NONE: not in 8 bits). */
typedef enum { CODES_NONE, CODES_INT8, CODES_E4M3 } Codes8;
typedef enum { ROUND_NEAREST, ROUND_STOCHASTIC } Rounding;

#define INT8_CODE_MAX 127.0f
#define E4M3_MAX 448.0f

/* The largest value of a code: 127 or 448. */
CODES8_FN float codes8_max(Codes8 c) { return c == CODES_INT8 ? INT8_CODE_MAX : E4M3_MAX; }
/* Its name in check lines, --list and the CSV's dtype column. */
static inline const char *codes8_name(Codes8 c) { return c == CODES_INT8 ? "int8" : "e4m3"; }

/* Where the scales of a tensor of numel codes start, and its bytes in all,
 * n values a row. */
CODES8_FN size_t codes8_scales_at(int64_t numel) { return ((size_t)numel + 255) / 256 * 256; }
CODES8_FN size_t codes8_bytes(int64_t numel, int64_t n) {
    return codes8_scales_at(numel) + sizeof(float) * (size_t)(numel / n);
}

/* A 32-bit integer hash (Wellons' lowbias32: two multiplies, three
 * xor-shifts; a bijection of the 32-bit integers). */
CODES8_FN uint32_t hash32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* A stochastic rounding's random numbers: the key of (slot, token), the
 * same for every row of the slot, and from it a uniform number in [0, 1)
 * for each element: 23 bits of the hash as the mantissa of a float in
 * [1, 2), less 1 (exact; no integer-to-float conversion). Within a key,
 * distinct elements below 2^32 hash to distinct values (odd multiply, xor
 * and hash32 are bijections; the 23 bits kept may repeat). Three multiplies
 * and three xor-shifts an element (on the GPU the first becomes an add:
 * consecutive elements). */
CODES8_FN uint32_t codes8_key(uint64_t slot, uint64_t token) {
    return hash32((uint32_t)slot * 0x9e3779b9u ^ hash32((uint32_t)token + 0x632be5abu));
}
CODES8_FN float codes8_uniform(uint32_t key, uint64_t element) {
    const uint32_t bits = 0x3f800000u | hash32(key ^ (uint32_t)element * 0x85ebca6bu) >> 9;  // a float in [1, 2)
#ifdef __CUDA_ARCH__
    return __uint_as_float(bits) - 1.0f;
#else
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f - 1.0f;
#endif
}

/* v on the grid of multiples of step: the nearest (ties to even), or
 * floor(v / step + u)·step, which goes up with the probability of v's
 * fraction of the step (u uniform in [0, 1)). */
CODES8_FN float round_to_grid(float v, float step, Rounding r, float u) {
    const float k = v / step;
    return (r == ROUND_NEAREST ? rintf(k) : floorf(k + u)) * step;
}

/* The row's scale for a code whose largest value is code_max: max |row| (m)
 * times 1 / code_max (1 where that is 0, a row of zeros or of values too small for
 * a float scale, which any scale then stores as zeros). A value is coded
 * as value · inv, inv = 1 / scale: one division a row, not one a value. */
CODES8_FN float codes8_scale_of_max(float m, float code_max) {
    const float scale = m * (1.0f / code_max);
    return scale > 0.0f ? scale : 1.0f;
}
CODES8_FN float codes8_scale(const float *row, int64_t n, float code_max) {
    float m = 0.0f;
    for (int64_t i = 0; i < n; i++) m = fmaxf(m, fabsf(row[i]));
    return codes8_scale_of_max(m, code_max);
}

/* x · inv as int8 stores it: an integer in -127..127. */
CODES8_FN float int8_code(float x, float inv, Rounding r, float u) {
    return fminf(fmaxf(round_to_grid(x * inv, 1.0f, r, u), -INT8_CODE_MAX), INT8_CODE_MAX);
}

/* x · inv as e4m3 stores it: on the e4m3 grid (3 mantissa bits: a step of
 * 2^(e-3) in [2^e, 2^(e+1)), 2^-9 below 2^-6, the subnormals), at most 448. */
CODES8_FN float e4m3_code(float x, float inv, Rounding r, float u) {
    const float v = fabsf(x * inv);
    const float step = v < 0x1.0p-6f ? 0x1.0p-9f : ldexpf(1.0f, ilogbf(v) - 3);
    return copysignf(fminf(round_to_grid(v, step, r, u), E4M3_MAX), x);
}

/* A code's byte and back: int8 two's complement; e4m3 sign, exponent (bias
 * 7; 0 for the subnormals) and mantissa, of a value on its grid. */
CODES8_FN uint8_t codes8_byte(Codes8 c, float code) {
    if (c == CODES_INT8) return (uint8_t)(int8_t)code;
    const uint8_t sign = signbit(code) ? 0x80 : 0;
    const float v = fabsf(code);
    if (v < 0x1.0p-6f) return sign | (uint8_t)(v * 0x1.0p9f);
    const int e = ilogbf(v);
    return sign | (uint8_t)((e + 7) << 3) | (uint8_t)(ldexpf(v, -e) * 8.0f - 8.0f);
}
CODES8_FN float codes8_value(Codes8 c, uint8_t b) {
    if (c == CODES_INT8) return (float)(int8_t)b;
    const int e = (b >> 3) & 15, m = b & 7;
    const float v = e ? ldexpf((float)(8 + m), e - 10) : ldexpf((float)m, -9);
    return b & 0x80 ? -v : v;
}

/* One row of n values into codes (and its scale, returned); u(i) the
 * uniform number of value i for a stochastic rounding: key = (slot, token,
 * element0 + i). */
CODES8_FN float codes8_store_row(Codes8 c, const float *row, int64_t n, Rounding r, uint64_t slot, uint64_t token,
                                  uint64_t element0, uint8_t *codes) {
    const float scale = codes8_scale(row, n, codes8_max(c)), inv = 1.0f / scale;
    const uint32_t key = codes8_key(slot, token);
    for (int64_t i = 0; i < n; i++) {
        const float u = r == ROUND_STOCHASTIC ? codes8_uniform(key, element0 + (uint64_t)i) : 0.0f;
        const float code = c == CODES_INT8 ? int8_code(row[i], inv, r, u) : e4m3_code(row[i], inv, r, u);
        codes[i] = codes8_byte(c, code);
    }
    return scale;
}
CODES8_FN void codes8_load_row(Codes8 c, const uint8_t *codes, float scale, int64_t n, float *row) {
    for (int64_t i = 0; i < n; i++) row[i] = codes8_value(c, codes[i]) * scale;
}

#endif
