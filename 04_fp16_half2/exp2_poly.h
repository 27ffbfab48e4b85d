/* 2^x on the FMA pipe, shared by the CPU scan (cpu.c) and the kernels
 * (kernels.cu) so that both use the same coefficients and the same split.
 *
 *     2^x = 2^j · 2^f,   j = round(x),  f = x - j in [-1/2, 1/2]
 *     2^f ≈ p(f) = 1 + c1·f + c2·f^2 + ... (degree 3 or 5, Horner: 3 or 5 FFMA)
 *     2^j · p(f): j added to the exponent field of p(f) with one integer add
 *
 * p is the minimax fit of 2^f on [-1/2, 1/2] in relative error with p(0) = 1
 * held exact (fitted by Lawson's algorithm, coefficients rounded to fp32 and
 * written as hex floats: the exact fp32 values).
 * p(0) = 1 matters more than the last digit of the fit: a state with Δ·A near 0
 * keeps its past for 1/(1 - 2^x) steps, so an exp that is off by e at x = 0
 * drifts the state by e per step for thousands of steps. With p(0) = 1 the
 * error near 0 is e'(0)·x and the drift stays bounded by about e'(0)/ln 2.
 *
 * Measured over every fp32 x in [-126, 128) (see the chapter README):
 * degree 3 max relative error 1.0e-4, degree 5 1.7e-7 (fp32 rounding
 * dominates); ex2.approx.f32 on the MUFU is about 2^-22 (2.4e-7). */
#ifndef EXP2_POLY_H
#define EXP2_POLY_H

#include <math.h>
#include <stdint.h>

#include "float_bits.h"

#ifdef __CUDACC__
#define EXP2_POLY_FN static inline __host__ __device__
#else
#define EXP2_POLY_FN static inline
#endif

/* Which states take the polynomial: one in eight, n = 7, 15, 23, ... (4 of
 * 32, 2 of 16). A thread's states start at a multiple of 8 whenever it holds
 * 8, 16 or 32 of them, so the choice is the same for every thread (no
 * divergence) and known at compile time. The share balances the MUFU (16
 * exps per clock per SM) against issue (128 instructions per clock per SM)
 * in versions 5 and 6: see the README. */
#define EXP2_POLY_STATE(n) (((n) & 7) == 7)

/* 2^x with a polynomial of degree 3 or 5 (a compile-time constant at every
 * call site, so the branch folds away). Clamped to [-127, 128] first, so the
 * exponent add cannot wrap: x >= 128 gives +inf as exp2f does, x <= -127
 * gives 0, and -127 < x < -126 a denormal within 2^-126 of 2^x (ex2.approx.ftz
 * flushes those to 0). NaN becomes 128, so a NaN exponent poisons the state
 * with inf instead of vanishing. 10 instructions at degree 3: FMUL (the
 * caller's Δ·A2), 2 FMNMX, 3 FADD, 3 FFMA and 1 IMAD (the exponent add, on
 * sm_90); degree 5 adds 2 FFMA. */
EXP2_POLY_FN float exp2_poly(float x, int degree) {
    const float round_magic = 0x1.8p+23f;  // 1.5·2^23: x + magic rounds x to an integer j
    x = fmaxf(fminf(x, 128.0f), -127.0f);    // fminf first: fminf(NaN, 128) = 128
    const float shifted = x + round_magic;   // j sits in the low mantissa bits
    const float f = x - (shifted - round_magic);
    float p;
    if (degree == 3) {
        p = fmaf(fmaf(fmaf(0x1.c2a218p-5f, f, 0x1.f00c4ep-3f), f, 0x1.62f5fap-1f), f, 1.0f);
    } else {
        p = fmaf(0x1.5bba14p-10f, f, 0x1.3cea88p-7f);
        p = fmaf(p, f, 0x1.c6b752p-5f);
        p = fmaf(p, f, 0x1.ebf9bcp-3f);
        p = fmaf(p, f, 0x1.62e42ap-1f);
        p = fmaf(p, f, 1.0f);
    }
    /* j·2^23 added to p's bits: (bits(shifted) << 23) keeps only j's low 9
     * bits, shifted into the exponent field; two's complement does the sign. */
    return bits_float(float_bits(p) + (float_bits(shifted) << 23));
}

#endif
