/* IEEE binary16 and bfloat16 on the host, as raw uint16_t bits (round to nearest even). */
#ifndef HALF_H
#define HALF_H

#include <stdint.h>

uint16_t half_from_float(float f);
float half_to_float(uint16_t h);
void floats_to_halves(const float *x, uint16_t *h, int64_t n);
void halves_to_floats(const uint16_t *h, float *x, int64_t n);

/* bfloat16 (the top 16 bits of a binary32) the same way: round to nearest
 * even, as __float2bfloat16_rn does; NaN stays NaN. */
uint16_t bf16_from_float(float f);
float bf16_to_float(uint16_t h);
void floats_to_bf16s(const float *x, uint16_t *h, int64_t n);
void bf16s_to_floats(const uint16_t *h, float *x, int64_t n);

#endif
