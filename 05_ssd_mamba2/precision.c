/* 05_ssd_mamba2, the lesson a plain run and --bench print after the timings:
 * what the precision of the matrix products' operands costs in accuracy,
 * computed in C (no GPU needed). The chunked form as the fused kernels order
 * it (per chunk: C·Bᵀ, the decay-weighted scores times X, the entering
 * state's term C·S, the chunk's own state Bᵀ·(decay·Δ·X); sums in fp32), with
 * every product operand taken as a tensor core would take it:
 *   fp32    no rounding: what CUDA cores compute (versions 4-5)
 *   tf32    10 mantissa bits, rounded to nearest (cvt.rna.tf32.f32): one
 *           TF32 product, what the official fp32 path runs
 *   3xtf32  a = hi + lo with hi = tf32(a), lo = tf32(a - hi); a·b as
 *           hi·hi + hi·lo + lo·hi, three TF32 products: about fp32's 24 bits
 *   3xbf16  the same split into bf16 halves (8 + 8 significant bits and
 *           fp32's range): hi = bf16(a), lo = bf16(a - hi), three bf16
 *           products, what versions 16-17 run on 16-bit tensor cores
 *   fp16    10 mantissa bits and fp16's range: what versions 7-11 feed
 *           mma.sync and wgmma (there on fp16 inputs too; here the inputs
 *           stay fp32, so only the products' rounding shows)
 * Each product of two rounded operands is exact in fp32 (11 x 11 bits), so
 * the only error besides the operands' is the fp32 summation's, as on the
 * tensor cores. y and the final state against the fp64 oracle. */
#include "precision.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "half.h"
#include "host_math.h"
#include "op_ssd.h"
#include "rng.h"

typedef enum { OPERAND_FP32, OPERAND_TF32, OPERAND_3XTF32, OPERAND_3XBF16, OPERAND_FP16, N_OPERANDS } Operand;

static const char *const OPERAND_NAMES[N_OPERANDS] = {"fp32", "tf32", "3xtf32", "3xbf16", "fp16"};
static const int PRODUCTS_PER_MAC[N_OPERANDS] = {1, 1, 3, 3, 1};

/* f rounded to TF32, to nearest with ties away from zero (cvt.rna): the 13
 * low mantissa bits dropped after adding half of their weight. */
static float tf32(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    u = (u + 0x1000u) & 0xffffe000u;
    memcpy(&f, &u, sizeof(f));
    return f;
}

static float fp16(float f) { return half_to_float(half_from_float(f)); }
static float bf16(float f) { return bf16_to_float(bf16_from_float(f)); }


/* One multiply-accumulate term a·b with both operands taken as `op` takes them. */
static float product(Operand op, float a, float b) {
    switch (op) {
    case OPERAND_TF32: return tf32(a) * tf32(b);
    case OPERAND_3XTF32: {
        const float ah = tf32(a), bh = tf32(b), al = tf32(a - ah), bl = tf32(b - bh);
        return (ah * bl + al * bh) + ah * bh;
    }
    case OPERAND_3XBF16: {
        const float ah = bf16(a), bh = bf16(b), al = bf16(a - ah), bl = bf16(b - bh);
        return (ah * bl + al * bh) + ah * bh;
    }
    case OPERAND_FP16: return fp16(a) * fp16(b);
    default: return a * b;
    }
}

/* The lesson's problem: one sequence, S3's head shape. */
enum { L = 1024, H = 2, P = 64, N = 128, Q = 256 };

typedef struct {
    float *x;        // (1, L, h, p) fp32
    float *dt;       // (1, L, h)    fp32
    float *B, *C;    // (1, L, 1, N) fp32
    float A[H], D[H], bias[H];  // (h,) fp32 each
} Inputs;

/* One head's forward, chunk by chunk: y (1, L, h, p) and the final state
 * (1, h, p, N), fp32, its products' operands taken as `op` takes them. */
static void head_forward(Operand op, const Inputs *in, int hi, float *y, float *final_state) {
    float delta[L], cum[Q], w[Q], S[P][N];  // (L,) Δ; (Q,) chunk-local cumsum of Δ·A; (Q,) weights; (p, N) the state
    for (int t = 0; t < L; t++) delta[t] = softplus_f32(in->dt[t * H + hi] + in->bias[hi]);
    memset(S, 0, sizeof(S));
    for (int t0 = 0; t0 < L; t0 += Q) {
        const int len = L - t0 < Q ? L - t0 : Q;
        float c = 0.0f;
        for (int s = 0; s < len; s++) cum[s] = c += delta[t0 + s] * in->A[hi];
        for (int l = 0; l < len; l++) {
            const float *Cl = in->C + (size_t)(t0 + l) * N;
            for (int s = 0; s <= l; s++) {  // the masked, decay-weighted scores of row l
                const float *Bs = in->B + (size_t)(t0 + s) * N;
                float cb = 0.0f;
                for (int n = 0; n < N; n++) cb += product(op, Cl[n], Bs[n]);
                w[s] = cb * expf(cum[l] - cum[s]) * delta[t0 + s];
            }
            const float decay_out = expf(cum[l]);
            for (int pi = 0; pi < P; pi++) {
                float diag = 0.0f, off = 0.0f;
                for (int s = 0; s <= l; s++) diag += product(op, w[s], in->x[(size_t)((t0 + s) * H + hi) * P + pi]);
                for (int n = 0; n < N; n++) off += product(op, Cl[n], S[pi][n]);
                const float xv = in->x[(size_t)((t0 + l) * H + hi) * P + pi];
                y[(size_t)((t0 + l) * H + hi) * P + pi] = diag + decay_out * off + in->D[hi] * xv;
            }
        }
        for (int s = 0; s < len; s++) w[s] = expf(cum[len - 1] - cum[s]) * delta[t0 + s];
        const float chunk_decay = expf(cum[len - 1]);
        for (int pi = 0; pi < P; pi++)
            for (int n = 0; n < N; n++) {
                float local = 0.0f;
                for (int s = 0; s < len; s++)
                    local += product(op, in->x[(size_t)((t0 + s) * H + hi) * P + pi] * w[s],
                                     in->B[(size_t)(t0 + s) * N + n]);
                S[pi][n] = chunk_decay * S[pi][n] + local;
            }
    }
    for (int pi = 0; pi < P; pi++)
        for (int n = 0; n < N; n++) final_state[(hi * P + pi) * N + n] = S[pi][n];
}

void ssd_precision_lesson(const Args *a) {
    const int64_t nx = (int64_t)L * H * P, nstate = (int64_t)H * P * N;
    Inputs in;
    in.x = host_alloc(nx * 4, "lesson");
    in.dt = host_alloc((int64_t)L * H * 4, "lesson");
    in.B = host_alloc((int64_t)L * N * 4, "lesson");
    in.C = host_alloc((int64_t)L * N * 4, "lesson");
    float *y = host_alloc(nx * 4, "lesson");                   // (1, L, h, p) fp32
    float *state = host_alloc(nstate * 4, "lesson");           // (1, h, p, N) fp32
    double *y_ref = host_alloc(nx * 8, "lesson");              // (1, L, h, p) fp64: the oracle's
    double *state_ref = host_alloc(nstate * 8, "lesson");      // (1, h, p, N) fp64
    /* The op's ranges (op_ssd.c): x, B, C in ±1.5, softplus(dt + dt_bias) a
     * step of about 0.02..0.5, A in [-4, -0.5). */
    Rng r;
    rng_seed(&r, a->seed);
    rng_fill_uniform(&r, in.x, nx, -1.5, 1.5);
    rng_fill_uniform(&r, in.dt, (int64_t)L * H, 0.0, 0.5);
    rng_fill_uniform(&r, in.A, H, -4.0, -0.5);
    rng_fill_uniform(&r, in.B, (int64_t)L * N, -1.5, 1.5);
    rng_fill_uniform(&r, in.C, (int64_t)L * N, -1.5, 1.5);
    rng_fill_uniform(&r, in.D, H, -1.0, 1.0);
    rng_fill_uniform(&r, in.bias, H, -4.0, -1.0);
    SsdTensors t = {
        .s = {.batch = 1, .seqlen = L, .heads = H, .headdim = P, .groups = 1, .dstate = N, .chunk = Q,
              .has_D = true, .has_bias = true, .softplus = true},
        .x = in.x, .dt = in.dt, .A = in.A, .B = in.B, .C = in.C, .D = in.D, .dt_bias = in.bias,
    };
    oracle_ssd(&t, y_ref, state_ref, NULL);

    char path[512];
    FILE *f = csv_sibling(a->csv, "precision", path, sizeof(path));
    if (f) fprintf(f, "operand,products_per_mac,seqlen,heads,headdim,dstate,chunk,y_rel_l2,y_max_abs,"
                      "final_state_rel_l2,y_out_of_fp32_tol,y_elements\n");
    const Tol tol = TOLERANCES[TOL_FP32];
    printf("\nthe products' operands (the chunked form in C, fp32 sums; L %d, h %d, p %d, N %d, chunk %d):\n"
           "error against the fp64 oracle, and y's elements outside the fp32 tolerance (%s)\n"
           "  %-7s %9s %11s %11s %14s %16s\n", L, H, P, N, Q, tol.name, "operand", "products", "y rel L2",
           "y max abs", "state rel L2", "y out of tol");
    for (Operand op = OPERAND_FP32; op < N_OPERANDS; op++) {
        for (int hi = 0; hi < H; hi++) head_forward(op, &in, hi, y, state);
        CheckResult ry = compare_f32(y, y_ref, nx, tol), rs = compare_f32(state, state_ref, nstate, tol);
        printf("  %-7s %9d %11.2e %11.2e %14.2e %9lld of %lld\n", OPERAND_NAMES[op], PRODUCTS_PER_MAC[op], ry.rel_l2,
               ry.max_abs, rs.rel_l2, (long long)ry.n_bad, (long long)ry.n);
        if (f)
            fprintf(f, "%s,%d,%d,%d,%d,%d,%d,%.3e,%.3e,%.3e,%lld,%lld\n", OPERAND_NAMES[op], PRODUCTS_PER_MAC[op], L,
                    H, P, N, Q, ry.rel_l2, ry.max_abs, rs.rel_l2, (long long)ry.n_bad, (long long)ry.n);
    }
    if (f) {
        fclose(f);
        printf("  (written to %s)\n", path);
    }
    free(in.x), free(in.dt), free(in.B), free(in.C), free(y), free(state), free(y_ref), free(state_ref);
}
