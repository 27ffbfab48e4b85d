/* IEEE binary16 <-> binary32 on the host, bit by bit, rounding to nearest
 * even: the conversion the GPU's __float2half_rn does; and bfloat16, whose
 * rounding is the same on the 16 bits a binary32 drops. */
#include "half.h"

#include "float_bits.h"

/* Round q + r / 2^shift to an integer, ties to even (r < 2^shift). */
static uint32_t round_shifted(uint32_t q, uint32_t r, int shift) {
    uint32_t halfway = 1u << (shift - 1);
    if (r > halfway || (r == halfway && (q & 1u))) q++;
    return q;
}

uint16_t half_from_float(float f) {
    uint32_t u = float_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t exp = (u >> 23) & 0xffu;      // biased by 127
    uint32_t mant = u & 0x7fffffu;         // 23 bits

    if (exp == 0xffu) {                    // inf, or NaN (kept quiet, top payload bits kept)
        if (mant == 0) return sign | 0x7c00u;
        return (uint16_t)(sign | 0x7e00u | (mant >> 13));
    }
    if (exp == 0) return sign;             // zero or fp32 subnormal (< 2^-126): rounds to 0

    int e = (int)exp - 127;                // f = 1.mant * 2^e
    if (e > 15) return sign | 0x7c00u;     // above 65504 and every value that rounds past it
    if (e >= -14) {
        /* Normal half: 5-bit exponent e + 15, keep the top 10 mantissa bits and
         * round on the 13 dropped ones. A carry out of the mantissa bumps the
         * exponent, and out of 65504 gives 0x7c00 (inf), as it should. */
        uint32_t q = ((uint32_t)(e + 15) << 10) | (mant >> 13);
        return (uint16_t)(sign | round_shifted(q, mant & 0x1fffu, 13));
    }
    /* Subnormal half: the value in units of 2^-24 is M * 2^(e + 1), M the
     * 24-bit significand, so shift M right by -(e + 1) >= 14 and round.
     * Below half of 2^-24 (shift > 24) it rounds to zero; exactly half (M =
     * 2^23 at shift 24) is a tie that goes to the even 0. */
    int shift = -(e + 1);
    if (shift > 24) return sign;
    uint32_t m = 0x800000u | mant;
    uint32_t q = m >> shift;
    uint32_t r = m & ((1u << shift) - 1u);
    return (uint16_t)(sign | round_shifted(q, r, shift)); // 0x400 on carry: the smallest normal
}

float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;

    if (exp == 0x1fu) return bits_float(sign | 0x7f800000u | (mant << 13)); // inf, NaN
    if (exp != 0) return bits_float(sign | ((exp - 15 + 127) << 23) | (mant << 13));
    if (mant == 0) return bits_float(sign);                                  // +-0
    /* Subnormal: mant * 2^-24, exact in fp32 (mant < 2^10). */
    float v = (float)mant * (1.0f / 16777216.0f);
    return sign ? -v : v;
}

/* The array conversions run on every core where OpenMP is built in, once an
 * array is large enough to pay for the threads: at a million tokens a chapter's
 * tensors hold billions of elements, converted for every version. */
#define CONVERT_PARALLEL_MIN (1 << 22)
#ifdef _OPENMP
#define CONVERT_IN_PARALLEL _Pragma("omp parallel for if (n >= CONVERT_PARALLEL_MIN)")
#else
#define CONVERT_IN_PARALLEL
#endif

/* One array conversion, dst[i] = convert(src[i]) for i < n, defined by name. */
#define CONVERT_ARRAY(name, From, To, convert)                    \
    void name(const From *src, To *dst, int64_t n) {              \
        CONVERT_IN_PARALLEL                                       \
        for (int64_t i = 0; i < n; i++) dst[i] = convert(src[i]); \
    }

CONVERT_ARRAY(floats_to_halves, float, uint16_t, half_from_float)
CONVERT_ARRAY(halves_to_floats, uint16_t, float, half_to_float)

uint16_t bf16_from_float(float f) {
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);  // NaN, kept quiet
    return (uint16_t)(round_shifted(u >> 16, u & 0xffffu, 16));  // a carry rounds up to the next binade, or inf
}

float bf16_to_float(uint16_t h) { return bits_float((uint32_t)h << 16); }

CONVERT_ARRAY(floats_to_bf16s, float, uint16_t, bf16_from_float)
CONVERT_ARRAY(bf16s_to_floats, uint16_t, float, bf16_to_float)
