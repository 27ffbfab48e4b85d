/* 07_decode_kernel, the lessons a plain run and --bench print after the
 * timings: what a sequence keeps between tokens (the recurrent state against
 * a transformer's KV cache), and what a state stored in 16 or 8 bits costs
 * over a long decode (computed in C with decode_step_cpu, no GPU needed). */
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
#include "codes8.h"

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

/* How a state is stored between tokens: its format and rounding. */
typedef enum { STORE_FP32, STORE_FP16, STORE_BF16, STORE_INT8, STORE_E4M3 } StoreFormat;
typedef struct {
    const char *name;
    StoreFormat format;
    Rounding rounding;
    int block;  // 8-bit formats: the values that share a scale (0: the whole row)
} StateStore;
static const StateStore STORES[] = {
    {"fp32", STORE_FP32, ROUND_NEAREST, 0},
    {"fp16", STORE_FP16, ROUND_NEAREST, 0},
    {"bf16", STORE_BF16, ROUND_NEAREST, 0},
    {"int8", STORE_INT8, ROUND_NEAREST, 0},
    {"int8 stochastic", STORE_INT8, ROUND_STOCHASTIC, 0},
    {"int8 per 32", STORE_INT8, ROUND_NEAREST, 32},
    {"int8 per 32 stochastic", STORE_INT8, ROUND_STOCHASTIC, 32},
    {"e4m3", STORE_E4M3, ROUND_NEAREST, 0},
    {"e4m3 stochastic", STORE_E4M3, ROUND_STOCHASTIC, 0},
};

/* The state (rows of n values) as st stores it after token k: each value
 * rounded to the format, an 8-bit block (a row, or st->block values of it)
 * to its codes and the block's scale (codes8_store_row, as versions 13-16
 * store a row) and back. codes: (n,) bytes of scratch. */
static void store_state(const StateStore *st, float *state, int64_t rows, int64_t n, int64_t k, uint8_t *codes) {
    if (st->format == STORE_INT8 || st->format == STORE_E4M3) {
        const Codes8 format = st->format == STORE_INT8 ? CODES_INT8 : CODES_E4M3;
        const int64_t block = st->block ? st->block : n;
        for (int64_t b0 = 0, m; b0 < rows * n; b0 += m) {
            m = b0 % n + block <= n ? block : n - b0 % n;  // a row's last block may be short
            // one sequence: slot 0, the state's element b0 + i
            const float scale = codes8_store_row(format, state + b0, m, st->rounding, 0, (uint64_t)k, (uint64_t)b0, codes);
            codes8_load_row(format, codes, scale, m, state + b0);
        }
        return;
    }
    for (int64_t i = 0; i < rows * n; i++) {
        if (st->format == STORE_FP16) state[i] = half_to_float(half_from_float(state[i]));
        else if (st->format == STORE_BF16) state[i] = bf16_to_float(bf16_from_float(state[i]));
    }
}

/* Relative L2 distance of got (fp32) from ref (fp64) over n values. */
static double rel_l2(const float *got, const double *ref, int64_t n) {
    double e = 0.0, r = 0.0;
    for (int64_t i = 0; i < n; i++) {
        e += ((double)got[i] - ref[i]) * ((double)got[i] - ref[i]);
        r += ref[i] * ref[i];
    }
    return sqrt(e / r);
}

/* The windows of tokens the lesson sums y's error over: doubling up to 64
 * (1, 2, 3-4, 5-8, ..., 33-64), where the error settles, then 64 tokens each.
 * window_of: the window of token k (counted from 0); window_first: the first
 * token of window w (counted from 1). */
enum { WINDOW = 64, DOUBLING = 7 };
static int window_of(int64_t k) {
    if (k >= WINDOW) return DOUBLING + (int)((k - WINDOW) / WINDOW);
    int w = 0;
    while ((1 << w) < k + 1) w++;
    return w;
}
static int64_t window_first(int w) { return w < DOUBLING ? (w ? (1 << (w - 1)) + 1 : 1) : WINDOW * (w - DOUBLING + 1) + 1; }

/* y's relative L2 error over tokens first..last (counted from 1, window
 * edges), from the windows' sums of squared error and reference. */
static double windows_rel_l2(const double *err, const double *ref, int nwin, int64_t first, int64_t last) {
    double e = 0.0, r = 0.0;
    for (int w = 0; w < nwin; w++)
        if (window_first(w) >= first && window_first(w) <= last) e += err[w], r += ref[w];
    return sqrt(e / r);
}

/* The state precision lesson: T tokens of one Mamba-2 sequence (h 4, p 16,
 * N 128: S4's rows, fewer of them) from one state, the state stored after
 * every token in each of STORES as a state in memory would be, computed by
 * decode_step_cpu in fp32; y against the fp64 oracle's over windows of
 * tokens, and the final state. With --csv FILE: FILE_state_precision.csv, a
 * row a store and window (y's squared error and reference, and their ratio's
 * root). */
static void state_precision(const Args *a) {
    enum { T = 4096, H = 4, P = 16, N = 128, W = H * P, S = H * P * N, NWIN = DOUBLING + (T - WINDOW) / WINDOW };
    _Static_assert(T % WINDOW == 0, "the windows past the doubling ones are whole");
    DecodeShape shape = {DECODE_M2, 1, T, 0, H, P, 1, N, false, true, true, true, 0};
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
    uint8_t codes[N];                                                // (N,) an 8-bit row's codes
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
    if (f) fprintf(f, "state,bytes_per_value,token_from,token_to,y_err_sq,y_ref_sq,y_rel_l2,final_state_rel_l2\n");
    printf("\na state stored between tokens, %d tokens (Mamba-2, h %d, p %d, N %d; C step, fp32 math): rel. L2\n"
           "error against the fp64 oracle\n  %-22s %6s %13s %13s %13s %13s\n", T, H, P, N, "state", "bytes",
           "y, tok 1-64", "y, 65-512", "y, 513-4096", "final state");
    for (int s = 0; s < COUNT(STORES); s++) {
        const StateStore *st = &STORES[s];
        const double bytes = st->format == STORE_FP32 ? 4.0 : st->format <= STORE_BF16 ? 2.0
                             : 1.0 + 4.0 / (st->block ? st->block : N);  // a code, and a share of its fp32 scale
        double err[NWIN] = {0}, ref[NWIN] = {0};  // y's squared error and reference, a window each
        memcpy(state, state0, sizeof(float) * S);
        for (int64_t k = 0; k < T; k++) {
            DecodeShape one = shape;
            one.tokens = 1;
            DecodeTensors t = {one, state, x + k * W, dt + k * H, A, B + k * N, C + k * N, D, NULL, bias,
                               y + k * W, state};
            decode_step_cpu(&t, NULL);
            store_state(st, state, S / N, N, k, codes);
            for (int64_t i = 0; i < W; i++) {
                const double e = (double)y[k * W + i] - y_ref[k * W + i];
                err[window_of(k)] += e * e;
                ref[window_of(k)] += y_ref[k * W + i] * y_ref[k * W + i];
            }
        }
        const double es = rel_l2(state, state_ref, S);
        printf("  %-22s %6.2f %13.2e %13.2e %13.2e %13.2e\n", st->name, bytes, windows_rel_l2(err, ref, NWIN, 1, 64),
               windows_rel_l2(err, ref, NWIN, 65, 512), windows_rel_l2(err, ref, NWIN, 513, T), es);
        for (int w = 0; f && w < NWIN; w++)
            fprintf(f, "%s,%.4f,%lld,%lld,%.6e,%.6e,%.3e,%.3e\n", st->name, bytes, (long long)window_first(w),
                    (long long)(w + 1 < NWIN ? window_first(w + 1) - 1 : T), err[w], ref[w], sqrt(err[w] / ref[w]), es);
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
