/* The decode step as the harness runs it: the version type of chapter 07,
 * the operation (op_decode.c), its benchmark sets, its fp64 oracle and its
 * official fixtures. Shapes and tensors: decode.h. */
#ifndef OP_DECODE_H
#define OP_DECODE_H

#include "decode.h"
#include "op_scan.h"

/* A version of the decode step (chapter 07): the same, on DecodeShape and
 * DecodeTensors; run() writes t->y and t->state_out (which may be t->state). */
typedef struct {
    VERSION_MEMBERS(DecodeShape, DecodeTensors);
    bool graph;  // its launches go to the per-thread default stream: the token loop can be a CUDA graph
    /* NULL (the version takes no state pool and writes no intermediate
     * states), or the forward of a DecodeServing problem (decode.h). */
    void (*run_serving)(const DecodeServing *t, void *workspace);
} DecodeVersion;

/* The common command-line flags (ARG_*, args.h) its chapter accepts; its
 * own (--heads, --headdim, --form, --tokens, --slots, --intermediate) are in
 * its flag table (op_decode.c). */
enum {
    ARGS_DECODE = ARG_CHECK | ARG_BENCH | ARG_LIST | ARG_BATCH | ARG_DIM | ARG_GROUPS | ARG_DSTATE |
                  ARG_NO_Z | ARG_NO_D | ARG_NO_BIAS | ARG_NO_SOFTPLUS | ARG_SEED | ARG_REPS | ARG_SAMPLED |
                  ARG_CSV | ARG_DUMP | ARG_LOAD | ARG_VERSION,
};

/* Its own sizes in Problem.opt (op.h): Mamba-2's heads and head dimension
 * (0 in the Mamba-1 form), the form (DECODE_M1 or DECODE_M2), a pool of
 * slots (0: one state a batch entry), and whether the state after every
 * token is written. The tokens T are Problem.seqlen. */
enum { DECODE_HEADS, DECODE_HEADDIM, DECODE_FORM, DECODE_SLOTS, DECODE_INTERMEDIATE };

extern const Op OP_DECODE;  // decode step, both forms, T tokens; versions are DecodeVersion

enum {
    BENCH_S4_M2 = 1 << 0,      // OP_DECODE: Mamba-2 h 32, p 64, N 128, g 1, no z, one token, batch 1..256
    BENCH_S4_M1 = 1 << 1,      // OP_DECODE: Mamba-1 d 2048, N 16, z, one token, batch 1..256
    BENCH_TOKENS_M2 = 1 << 2,  // OP_DECODE: S4 Mamba-2 at batch 8, T 4..256 tokens per launch
    BENCH_TOKENS_M1 = 1 << 3,  // OP_DECODE: S4 Mamba-1 at batch 8, T 4..256 tokens per launch
    BENCH_SLOTS_M2 = 1 << 4,   // OP_DECODE: S4 Mamba-2 at batch 64 in a pool of 1024 slots
    BENCH_SLOTS_M1 = 1 << 5,   // OP_DECODE: S4 Mamba-1 at batch 64 in a pool of 1024 slots
    BENCH_DRAFTS_M2 = 1 << 6,  // OP_DECODE: S4 Mamba-2 at batch 1 and 64, T 1, 2, 4, 8 with the state after each
    BENCH_DRAFTS_M1 = 1 << 7,  // OP_DECODE: the same for Mamba-1
};

/* t holds fp32 host tensors (DecodeTensors, ops/decode/decode.h); t->state is
 * read, never written. y (b, T, width) fp64 and the state after the last
 * token, fp64, the shape of t->state. */
void oracle_decode(const DecodeTensors *t, double *y, double *state_out);
/* Row c (M1: a channel; M2: hi·p + pi) of batch entry bi over the T tokens,
 * from the state state0 (N,) fp32: y (T,), the final
 * state (N,) and, per_token not NULL, the state after each token (T, N);
 * terms not NULL, the magnitude of each y's terms (T,): (Σ_n |state·C| +
 * |x·D|)·|silu(z)|. */
void oracle_decode_row_from(const DecodeTensors *t, int64_t bi, int64_t c, const float *state0, double *y,
                            double *state, double *per_token, double *terms);
/* A DecodeServing problem (decode.h): row (bi, c) from its slot's state, or
 * *skipped (a negative index: y, per_token and terms zeros, state untouched). */
void oracle_decode_serving_row(const DecodeServing *sv, int64_t row, double *y, double *state, double *per_token,
                               double *terms, bool *skipped);
/* Every row: y like x, the pool after the tokens (state_out's shape), and
 * the intermediate states (b, T, ...) when not NULL, fp64; y_terms (like y)
 * when not NULL, the magnitude of each y's terms. */
void oracle_decode_serving(const DecodeServing *sv, double *y, double *state_out, double *intermediate,
                           double *y_terms);

/* Row `row` of a problem whose state is stored in 8-bit codes (codes8: a
 * Codes8) after every token, starting from the same codes as the oracle,
 * given the oracle's state after each token `per` (T, N) fp64
 * (oracle_decode_serving_row): the bound on each y (T,), on the final state
 * (N,) and, per_token_bound not NULL, on the state after each token (T, N)
 * that the roundings allow (zeros for padding). */
void oracle_decode_codes8_bound_row(const DecodeServing *sv, int64_t row, int codes8, const double *per,
                                    double *y_bound, double *state_bound, double *per_token_bound);

/* The same for every row, in the layouts of y, the pool after the tokens
 * and, when intermediate, the intermediate states (zeros where a slot is
 * not named: it is copied as it is). */
void oracle_decode_codes8_bound(const DecodeServing *sv, bool intermediate, int codes8, double *y_bound,
                                double *state_bound, double *inter_bound);

/* The oracle against the official fixtures decode_m1 and decode_m2
 * (<root>/ops/decode/fixtures). */
void fixtures_check_decode(const char *root);

#endif
