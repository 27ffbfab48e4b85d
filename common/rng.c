/* splitmix64 turns the seed into the 256-bit state of xoshiro256**
 * (Blackman and Vigna): fast, and the same stream on every machine. */
#include "rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void rng_seed(Rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x); // never all zero
}

uint64_t rng_u64(Rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* The top 53 bits as a double in [0, 1). */
double rng_uniform(Rng *r) { return (double)(rng_u64(r) >> 11) * 0x1.0p-53; }

double rng_range(Rng *r, double lo, double hi) { return lo + (hi - lo) * rng_uniform(r); }

/* Box-Muller, one value per call: u1 in (0, 1] so log(u1) is finite. */
double rng_normal(Rng *r) {
    const double two_pi = 6.283185307179586;
    double u1 = 1.0 - rng_uniform(r);
    double u2 = rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}

void rng_fill_uniform(Rng *r, float *x, int64_t n, double lo, double hi) {
    for (int64_t i = 0; i < n; i++) x[i] = (float)rng_range(r, lo, hi);
}
