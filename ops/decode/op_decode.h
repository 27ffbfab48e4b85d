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
    VersionInfo info;
    size_t (*workspace_bytes)(const DecodeShape *s);
    const char *(*unsupported)(const DecodeShape *s);
    void (*run)(const DecodeTensors *t, void *workspace);
    bool graph;  // its launches go to the per-thread default stream: the token loop can be a CUDA graph
} DecodeVersion;

/* The command-line flags (ARG_*, args.h) its chapters accept. */
enum {
    /* what the decode chapter (07) accepts: --tokens fills the seqlen list */
    ARGS_DECODE = ARG_CHECK | ARG_BENCH | ARG_LIST | ARG_BATCH | ARG_TOKENS | ARG_DIM |
                  ARG_HEADS | ARG_HEADDIM | ARG_GROUPS | ARG_DSTATE | ARG_NO_Z | ARG_NO_D |
                  ARG_NO_BIAS | ARG_NO_SOFTPLUS | ARG_FORM | ARG_SEED | ARG_REPS | ARG_CSV |
                  ARG_DUMP | ARG_LOAD | ARG_VERSION,
};

extern const Op OP_DECODE;  // decode step, both forms, T tokens; versions are DecodeVersion

enum {
    BENCH_S4_M2 = 1 << 0,      // OP_DECODE: Mamba-2 h 32, p 64, N 128, g 1, no z, one token, batch 1..256
    BENCH_S4_M1 = 1 << 1,      // OP_DECODE: Mamba-1 d 2048, N 16, z, one token, batch 1..256
    BENCH_TOKENS_M2 = 1 << 2,  // OP_DECODE: S4 Mamba-2 at batch 8, T 4..256 tokens per launch
    BENCH_TOKENS_M1 = 1 << 3,  // OP_DECODE: S4 Mamba-1 at batch 8, T 4..256 tokens per launch
};

/* t holds fp32 host tensors (DecodeTensors, ops/decode/decode.h); t->state is
 * read, never written. y (b, T, width) fp64 and the state after the last
 * token, fp64, the shape of t->state. */
void oracle_decode(const DecodeTensors *t, double *y, double *state_out);
/* One state row (M1: channel bi*d + c; M2: (bi*h + hi)*p + pi) over the T
 * tokens: y (T,) fp64 and its final state (N,) fp64. */
void oracle_decode_row(const DecodeTensors *t, int64_t row, double *y, double *state);

/* The oracle against the official fixtures decode_m1 and decode_m2
 * (<root>/ops/decode/fixtures). */
void fixtures_check_decode(const char *root);

#endif
