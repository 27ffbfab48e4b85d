/* 07_decode_kernel, the lessons a plain run and --bench print after the
 * timings: what a sequence keeps between tokens (the recurrent state against
 * a transformer's KV cache), and what a state stored in 16 bits costs over a
 * long decode (computed in C with decode_step_cpu, no GPU needed). */
#include "lessons.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "csv.h"
#include "driver.h"
#include "half.h"
#include "op_decode.h"
#include "rng.h"

/* The memory lesson: what one sequence keeps per layer between tokens. A
 * Mamba layer keeps its recurrent state, the same size at any L; a
 * transformer layer of the same width keeps K and V of every token so far,
 * fp16: 2 x width x 2 bytes a token. Shapes: S4's layers (Mamba-2 h 32, p 64,
 * N 128; Mamba-1 d 2048, N 16), fp32 state, width 2048. With --csv FILE the
 * table also goes to FILE's name with _state_vs_kv before .csv. */
static void state_vs_kv_cache(const Args *a) {
    const double mib = 1024.0 * 1024.0, width = 2048.0;
    const double m2_state = 32.0 * 64 * 128 * 4 / mib, m1_state = 2048.0 * 16 * 4 / mib;
    const long long seqlens[] = {1024, 4096, 16384, 65536, 131072};
    char path[512];
    FILE *f = csv_sibling(a->csv, "state_vs_kv", path, sizeof(path));
    if (f) fprintf(f, "seqlen,width,kv_cache_mib,mamba2_state_mib,mamba1_state_mib\n");
    printf("\nper sequence and layer: recurrent state (fp32) vs a KV cache of width %.0f (fp16 K and V)\n", width);
    printf("  %8s %14s %18s %18s\n", "L", "KV cache MiB", "Mamba-2 state MiB", "Mamba-1 state MiB");
    for (int i = 0; i < (int)(sizeof(seqlens) / sizeof(seqlens[0])); i++) {
        double kv = 2.0 * width * 2.0 * (double)seqlens[i] / mib;
        printf("  %8lld %14.1f %10.3f (%5.0fx) %10.3f (%5.0fx)\n", seqlens[i], kv, m2_state, kv / m2_state, m1_state,
               kv / m1_state);
        if (f) fprintf(f, "%lld,%.0f,%.4f,%.4f,%.4f\n", seqlens[i], width, kv, m2_state, m1_state);
    }
    if (f) {
        fclose(f);
        printf("  (written to %s)\n", path);
    }
}

typedef enum { STATE_FP32, STATE_FP16, STATE_BF16 } StateStore;

/* Relative L2 distance of got (fp32) from ref (fp64) over n values. */
static double rel_l2(const float *got, const double *ref, int64_t n) {
    double e = 0.0, r = 0.0;
    for (int64_t i = 0; i < n; i++) {
        e += ((double)got[i] - ref[i]) * ((double)got[i] - ref[i]);
        r += ref[i] * ref[i];
    }
    return sqrt(e / r);
}

/* The state precision lesson: T tokens of one Mamba-2 sequence (h 4, p 16,
 * N 128, D, dt_bias, softplus), decoded one token per call of the C step
 * with the state kept in fp32, or rounded to fp16 or bf16 after every token
 * as a 16-bit state in memory would be; y of every token and the final
 * state against the fp64 oracle. */
static void state_precision(const Args *a) {
    enum { T = 1000, H = 4, P = 16, N = 128, W = H * P, S = H * P * N };
    DecodeShape shape = {DECODE_M2, 1, T, 0, H, P, 1, N, false, true, true, true};
    float *state0 = host_alloc(sizeof(float) * S, "lesson");         // (1, h, p, N) fp32: the state before token 0
    float *x = host_alloc(sizeof(float) * T * W, "lesson");          // (1, T, h, p) fp32
    float *dt = host_alloc(sizeof(float) * T * H, "lesson");         // (1, T, h) fp32
    float *B = host_alloc(sizeof(float) * T * N, "lesson");          // (1, T, 1, N) fp32
    float *C = host_alloc(sizeof(float) * T * N, "lesson");          // (1, T, 1, N) fp32
    float A[H], D[H], bias[H];                                       // (h,) fp32 each
    float *y = host_alloc(sizeof(float) * T * W, "lesson");          // (1, T, h, p) fp32: the C step's outputs
    float *state = host_alloc(sizeof(float) * S, "lesson");          // (1, h, p, N) fp32: the running state
    double *y_ref = host_alloc(sizeof(double) * T * W, "lesson");    // (1, T, h, p) fp64: the oracle's
    double *state_ref = host_alloc(sizeof(double) * S, "lesson");    // (1, h, p, N) fp64: the oracle's final state
    Rng r;
    rng_seed(&r, a->seed);
    rng_fill_uniform(&r, state0, S, -1.0, 1.0);
    rng_fill_uniform(&r, x, T * W, -1.5, 1.5);
    rng_fill_uniform(&r, dt, T * H, 0.0, 0.5);
    rng_fill_uniform(&r, B, T * N, -1.5, 1.5);
    rng_fill_uniform(&r, C, T * N, -1.5, 1.5);
    rng_fill_uniform(&r, A, H, -2.0, -1.0);
    rng_fill_uniform(&r, D, H, -1.0, 1.0);
    rng_fill_uniform(&r, bias, H, -4.0, -3.0);
    DecodeTensors all = {shape, state0, x, dt, A, B, C, D, NULL, bias, NULL, NULL};
    oracle_decode(&all, y_ref, state_ref);

    char path[512];
    FILE *f = csv_sibling(a->csv, "state_precision", path, sizeof(path));
    if (f) fprintf(f, "state_dtype,state_bytes,tokens,y_rel_l2,final_state_rel_l2\n");
    printf("\na 16-bit state over %d tokens (Mamba-2, h %d, p %d, N %d; C step, fp32 math): rel. L2 error\n"
           "against the fp64 oracle\n  %-6s %12s %14s %16s\n", T, H, P, N, "state", "bytes/elem", "y, all tokens",
           "final state");
    const char *names[] = {"fp32", "fp16", "bf16"};
    for (StateStore st = STATE_FP32; st <= STATE_BF16; st++) {
        memcpy(state, state0, sizeof(float) * S);
        for (int64_t k = 0; k < T; k++) {
            DecodeShape one = shape;
            one.tokens = 1;
            DecodeTensors t = {one, state, x + k * W, dt + k * H, A, B + k * N, C + k * N, D, NULL, bias,
                               y + k * W, state};
            decode_step_cpu(&t, NULL);
            for (int64_t i = 0; st != STATE_FP32 && i < S; i++)
                state[i] = st == STATE_FP16 ? half_to_float(half_from_float(state[i]))
                                            : bf16_to_float(bf16_from_float(state[i]));
        }
        double ey = rel_l2(y, y_ref, T * W), es = rel_l2(state, state_ref, S);
        printf("  %-6s %12d %14.2e %16.2e\n", names[st], st == STATE_FP32 ? 4 : 2, ey, es);
        if (f) fprintf(f, "%s,%d,%d,%.3e,%.3e\n", names[st], st == STATE_FP32 ? 4 : 2, T, ey, es);
    }
    if (f) {
        fclose(f);
        printf("  (written to %s)\n", path);
    }
    free(state0), free(x), free(dt), free(B), free(C), free(y), free(state), free(y_ref), free(state_ref);
}

void decode_lessons(const Args *a) {
    state_vs_kv_cache(a);
    state_precision(a);
}
