/* 08_mamba3, the lesson a plain run and --bench print after the timings: the
 * angle state θ over 2^20 steps, θ_t = (θ_{t-1} + π·tanh(angles_t)·dt_t) mod
 * 2π, summed in fp32 three ways, against the same sum in fp64:
 *   cumsum, then mod   the order mamba3_siso_fwd_ref writes: a running sum
 *                      that grows without bound, reduced once at the end;
 *                      each addition rounds at the sum's size, not θ's;
 *   mod every step     versions 1, 3 and 4: θ stays below 2π, so each step
 *                      rounds at θ's size, but 2^20 roundings add up;
 *   compensated        the same with Kahan's running correction: the part
 *                      of each addition a float drops is carried into the
 *                      next, so the sum's roundings do not add up (each
 *                      step's own, tanhf's and the product's, still do);
 *   fp64 sum           each step and the sum in fp64, θ rounded to fp32 only
 *                      where it is stored: a serial chain of one add a step
 *                      costs the same in fp64 on a GPU with fp64 units.
 * Computed in C (no GPU needed); the inputs drawn in the op's ranges. */
#include "lessons.h"

#include <math.h>
#include <stdio.h>

#include "csv.h"
#include "rng.h"

static const double TWO_PI_D = 6.283185307179586;
static const float TWO_PI = 6.283185307179586f;

/* a - b on the circle, in (-π, π]. */
static double circular(double a, double b) {
    double d = fmod(a - b, TWO_PI_D);
    if (d > TWO_PI_D / 2) d -= TWO_PI_D;
    if (d <= -TWO_PI_D / 2) d += TWO_PI_D;
    return d;
}

/* x mod 2π in [0, 2π), fp32, as the versions reduce θ. */
static float mod_two_pi(float x) {
    const float a = fmodf(x, TWO_PI);
    return a < 0.0f ? a + TWO_PI : a;
}

enum { WAYS = 4, CHECKPOINTS = 5 };
static const char *const WAY_NAMES[WAYS] = {"cumsum, then mod", "mod every step", "compensated", "fp64 sum"};

void mamba3_lessons(const Args *a) {
    enum { S = 16 };                                          // angle pairs, each its own walk
    const long steps[CHECKPOINTS] = {1L << 10, 1L << 13, 1L << 16, 1L << 18, 1L << 20};
    double ref[S] = {0};                                      // (S,) fp64: θ, mod every step, the reference
    double sum64[S] = {0};                                    // (S,) fp64: the fourth way, from fp32 inputs
    float cum[S] = {0}, mod[S] = {0}, kahan[S] = {0}, carry[S] = {0};  // (S,) fp32: the three ways
    double worst[WAYS][CHECKPOINTS] = {{0}};                  // the largest |θ - θ_ref| over the S angles
    Rng r;
    rng_seed(&r, a->seed);
    int c = 0;
    for (long t = 1; t <= steps[CHECKPOINTS - 1]; t++) {
        for (int i = 0; i < S; i++) {
            const float ang = (float)rng_range(&r, -3.0, 3.0), dt = (float)rng_range(&r, 0.001, 0.1);
            // Angles = torch.tanh(Angles) * math.pi;  Angle_State = Angle_State + angles * dt
            const float step = (TWO_PI / 2) * tanhf(ang) * dt;
            ref[i] = fmod(ref[i] + (TWO_PI_D / 2) * tanh((double)ang) * (double)dt, TWO_PI_D);
            cum[i] += step;
            mod[i] = mod_two_pi(mod[i] + step);
            const float y = step - carry[i], sum = kahan[i] + y;  // Kahan: carry holds what the last sum dropped
            carry[i] = (sum - kahan[i]) - y;
            kahan[i] = mod_two_pi(sum);
            sum64[i] = fmod(sum64[i] + (TWO_PI_D / 2) * tanh((double)ang) * (double)dt, TWO_PI_D);
        }
        if (t != steps[c]) continue;
        for (int i = 0; i < S; i++) {
            const double got[WAYS] = {mod_two_pi(cum[i]), mod[i], kahan[i], (float)sum64[i]};
            for (int w = 0; w < WAYS; w++) worst[w][c] = fmax(worst[w][c], fabs(circular(got[w], ref[i])));
        }
        c++;
    }
    char path[512];
    FILE *f = csv_sibling(a->csv, "angle_drift", path, sizeof(path));
    if (f) fprintf(f, "way,steps,angle_error_rad\n");
    printf("\nthe angle state over %ld steps, %d angles (inputs in the op's ranges), fp32 against fp64:\n"
           "the largest |θ - θ_fp64| (radians)\n  %-18s", steps[CHECKPOINTS - 1], S, "steps");
    for (int k = 0; k < CHECKPOINTS; k++) printf(" %10ld", steps[k]);
    printf("\n");
    for (int w = 0; w < WAYS; w++) {
        printf("  %-18s", WAY_NAMES[w]);
        for (int k = 0; k < CHECKPOINTS; k++) {
            printf(" %10.2e", worst[w][k]);
            if (f) fprintf(f, "\"%s\",%ld,%.3e\n", WAY_NAMES[w], steps[k], worst[w][k]);  // quoted: a name has a comma
        }
        printf("\n");
    }
    if (f) {
        fclose(f);
        printf("  (written to %s)\n", path);
    }
}
