/* A decode state in 8 bits (chapter 07's lesson on what it costs): each row
 * of the state (the N values of one (head, p) row in Mamba-2, of one channel
 * in Mamba-1), or each block of a row, stored as 8-bit codes and one fp32
 * scale, the block's largest |value| over the code's largest. Two codes:
 *   int8   integers -127..127 times the scale: a uniform grid, 2^-7 of the
 *          row's largest value a step;
 *   e4m3   fp8 (1 sign, 4 exponent, 3 mantissa bits, finite up to 448, no
 *          inf) times the scale: 3 bits of mantissa at every magnitude, so a
 *          small value keeps its relative precision where int8 rounds it to 0.
 * A scale a row costs 4 bytes on N codes (N 128: 1.03 bytes a value), and a
 * row is what one warp of the decode kernels reads at once; the lesson also
 * measures a scale every 32 values.
 * Two roundings: to the nearest code (ties to even), or stochastic, up with
 * the probability of the distance from the code below, so that the stored
 * value is the true one on average and a chain of roundings walks without a
 * drift. The random number is counter-based, a hash of (slot, token,
 * element), so that a GPU version can draw the same one as the C code, and
 * one launch of T tokens the same as T launches of one. Here the codes are
 * kept as the fp32 values they stand for (what a kernel gets back when it
 * dequantizes). C and CUDA. */
#ifndef STATE8_H
#define STATE8_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define STATE8_FN __host__ __device__ static inline
#else
#define STATE8_FN static inline
#endif

typedef enum { ROUND_NEAREST, ROUND_STOCHASTIC } Rounding;

#define INT8_CODE_MAX 127.0f
#define E4M3_MAX 448.0f

/* A uniform number in [0, 1) from (slot, token, element): splitmix64's
 * finalizer over a key that packs the three (slot, token below 2^24, the
 * element's low 20 bits), its high bits mixed in by a multiply. */
STATE8_FN float state8_uniform(uint64_t slot, uint64_t token, uint64_t element) {
    uint64_t z = (slot << 44) ^ (token << 20) ^ (element & 0xfffffu) ^ (element >> 20) * 0x9e3779b97f4a7c15ull;
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)(z >> 40) * 0x1.0p-24f;  // 24 bits: exact in a float
}

/* v on the grid of multiples of step: the nearest (ties to even), or the one
 * below with probability 1 - f and the one above with f, f v's fraction of
 * the step (u uniform in [0, 1)). */
STATE8_FN float round_to_grid(float v, float step, Rounding r, float u) {
    const float k = v / step;
    if (r == ROUND_NEAREST) return rintf(k) * step;
    const float below = floorf(k);
    return (u < k - below ? below + 1.0f : below) * step;
}

/* The row's scale for a code whose largest value is code_max: max |row| / code_max
 * (1 where that is 0, a row of zeros or of values too small for a float
 * scale, which any scale then stores as zeros). */
STATE8_FN float state8_scale(const float *row, int64_t n, float code_max) {
    float m = 0.0f;
    for (int64_t i = 0; i < n; i++) m = fmaxf(m, fabsf(row[i]));
    const float scale = m / code_max;
    return scale > 0.0f ? scale : 1.0f;
}

/* What x is stored as in int8 with this scale: an integer in -127..127, times the scale. */
STATE8_FN float int8_stored(float x, float scale, Rounding r, float u) {
    return fminf(fmaxf(round_to_grid(x / scale, 1.0f, r, u), -INT8_CODE_MAX), INT8_CODE_MAX) * scale;
}

/* What x is stored as in e4m3 with this scale: x / scale on the e4m3 grid (3
 * mantissa bits: a step of 2^(e-3) in [2^e, 2^(e+1)), 2^-9 below 2^-6, the
 * subnormals), at most 448, times the scale. */
STATE8_FN float e4m3_stored(float x, float scale, Rounding r, float u) {
    const float v = fabsf(x / scale);
    const float step = v < 0x1.0p-6f ? 0x1.0p-9f : ldexpf(1.0f, ilogbf(v) - 3);
    const float q = fminf(round_to_grid(v, step, r, u), E4M3_MAX);
    return copysignf(q, x) * scale;
}

#endif
