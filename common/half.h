/* IEEE binary16 on the host, as raw uint16_t bits (round to nearest even). */
#ifndef HALF_H
#define HALF_H

#include <stdint.h>

uint16_t half_from_float(float f);
float half_to_float(uint16_t h);
/* Round every element to the nearest fp16 value, in place (stays fp32). */
void round_to_half(float *x, int64_t n);
void floats_to_halves(const float *x, uint16_t *h, int64_t n);
void halves_to_floats(const uint16_t *h, float *x, int64_t n);

#endif
