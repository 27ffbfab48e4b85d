/* A seeded random generator (splitmix64 + xoshiro256**): the same seed gives
 * the same inputs on every machine. */
#ifndef RNG_H
#define RNG_H

#include <stdint.h>

typedef struct { uint64_t s[4]; } Rng;

void rng_seed(Rng *r, uint64_t seed);
uint64_t rng_u64(Rng *r);
double rng_uniform(Rng *r);                   // [0, 1)
double rng_range(Rng *r, double lo, double hi);// [lo, hi)
double rng_normal(Rng *r);                    // standard normal (Box-Muller)
void rng_fill_uniform(Rng *r, float *x, int64_t n, double lo, double hi);

#endif
