/* Mamba-2's SSD as the harness runs it: the version type of chapter 05, the
 * operation (op_ssd.c), its benchmark sets, its fp64 oracle and its official
 * fixture. Shapes and tensors: ssd.h. */
#ifndef OP_SSD_H
#define OP_SSD_H

#include "op_scan.h"
#include "ssd.h"

/* A version of Mamba-2's SSD (chapter 05 on): the same, on SsdShape and
 * SsdTensors; run() writes t->y and t->final_state. */
typedef struct {
    VERSION_MEMBERS(SsdShape, SsdTensors);
    /* NULL (the version takes no packed problem), or the forward of a packed
     * one (SsdPacked, ssd.h), with the workspace of t->t.s. */
    void (*run_packed)(const SsdPacked *t, void *workspace);
} SsdVersion;

/* --load: the sizes and flags from the files of the first nine tensors
 * (x .. initial_states), which OP_BIDIR's table shares (op_ssd.c). */
void ssd_infer_sizes(Problem *p, const LoadFolder *f);

/* The SSD shape of a problem of OP_SSD or OP_BIDIR (op_ssd.c). */
SsdShape problem_ssd_shape(const Problem *p);

/* The common command-line flags (ARG_*, args.h) its chapters accept; its
 * own (--heads, --headdim, --chunk) are in its flag table, SSD_FLAGS. */
enum {
    ARGS_SSD = ARG_CHECK | ARG_BENCH | ARG_LIST | ARG_BATCH | ARG_SEQLEN | ARG_GROUPS | ARG_DSTATE |
               ARG_NO_Z | ARG_NO_D | ARG_NO_BIAS | ARG_NO_SOFTPLUS | ARG_H0 | ARG_SEED | ARG_REPS |
               ARG_SAMPLED | ARG_CSV | ARG_DUMP | ARG_LOAD | ARG_VERSION | ARG_SEQLENS,
};

/* Its own sizes in Problem.opt (op.h): heads h, head dimension p, chunk
 * size Q, and the chunks of a packed problem that --load read (else 0). */
enum { SSD_HEADS, SSD_HEADDIM, SSD_CHUNK, SSD_NCHUNKS, SSD_NOPTS };
/* --heads, --headdim, --chunk: the flags of OP_SSD, and the first of OP_BIDIR's. */
#define SSD_FLAG_ROWS                                                                          \
    {"--heads", "H  heads", OPT_SIZE, SSD_HEADS, NULL, true, false, true, NULL},               \
    {"--headdim", "P  head dimension", OPT_SIZE, SSD_HEADDIM, NULL, true, false, false, NULL}, \
    {"--chunk", "Q  chunk size (a power of two, 16..256)", OPT_SIZE, SSD_CHUNK, NULL, true, false, false, NULL}
/* The problems that sizes given on the command line start from, for --check
 * and for --bench, of OP_SSD and OP_BIDIR alike. */
#define SSD_CHECK_BASE                                                                                          \
    {.batch = 2, .seqlen = 333, .dstate = 16, .groups = 2, .opt = {[SSD_HEADS] = 4, [SSD_HEADDIM] = 8, [SSD_CHUNK] = 64}, \
     .has_z = true, .has_D = true, .has_bias = true, .softplus = true}
#define SSD_BENCH_BASE                                                                                              \
    {.batch = 1, .seqlen = 512, .dstate = 128, .groups = 1, .opt = {[SSD_HEADS] = 32, [SSD_HEADDIM] = 64, [SSD_CHUNK] = 256}, \
     .has_D = true, .has_bias = true, .softplus = true}
/* A row's CSV sizes (MAMBA_CSV_COLUMNS) of a problem of OP_SSD or OP_BIDIR. */
int ssd_csv_sizes(const Problem *p, int64_t *v);

extern const Op OP_SSD;   // Mamba-2 SSD; versions are SsdVersion

enum {
    BENCH_S3 = 1 << 0,    // OP_SSD: h 32, p 64, N 128, g 1, chunk 256, no z, L 512 .. 16384, batch 1 and 8
    BENCH_S3_Z = 1 << 1,  // OP_SSD: the same with z, L 8192, batch 1 and 8
    BENCH_CROSSOVER = 7 << 2,  // OP_SSD: S3 at N 16, 64, 128 (three grids), L 4096, batch 8: SSD against 03's scan
    BENCH_SERVING_S3 = 7 << 5, // OP_SSD: S3, h0: the serving mix packed; one sequence of its tokens; padded
};

/* SsdTensors (ssd.h) with fp32 host arrays; y and final_state unused. */

/* y (b,L,h,p) fp64, final_state (b,h,p,N) fp64 (may be NULL), y_terms
 * (b,L,h,p) fp64 (may be NULL): the magnitude of each y's terms, ScanRow's
 * terms. Computed as the Mamba-1 scan through the official Mamba-2 -> Mamba-1
 * mapping. chunk only matters to chunked algorithms; the result does not
 * depend on it. */
void oracle_ssd(const SsdTensors *t, double *y, double *final_state, double *y_terms);
/* One channel (head hi, row pi) of batch bi: y (L,) fp64 (y[bi, :, hi, pi]),
 * its final state (N,) fp64 and, unless NULL, its terms' magnitude (L,) fp64. */
void oracle_ssd_channel(const SsdTensors *t, int64_t bi, int64_t hi, int64_t pi, double *y, double *state,
                        double *terms);

/* A packed problem, sequence by sequence, one chunk after another: channel
 * (hi, pi)'s y over every sequence (L,), its final state in each (nseq, N),
 * its state after each chunk (nchunks, N) and, unless NULL, its terms'
 * magnitude (L,), fp64. */
void oracle_ssd_packed_channel(const SsdPacked *t, int64_t hi, int64_t pi, double *y, double *final_states,
                               double *chunk_states, double *terms);
/* Every channel: y (1,L,h,p), final states (nseq,h,p,N), chunk states
 * (nchunks,h,p,N), y_terms (1,L,h,p) (may be NULL), fp64. */
void oracle_ssd_packed(const SsdPacked *t, int64_t nchunks, double *y, double *final_states, double *chunk_states,
                       double *y_terms);

/* The row of channel (hi, pi) of batch bi in original time order, as the
 * official mapping reads it (the bidirectional oracle reuses it). */
ScanRow oracle_ssd_row(const SsdTensors *t, int64_t bi, int64_t hi, int64_t pi);

/* The oracle against the official fixture ssd (<root>/ops/ssd/fixtures). */
void fixtures_check_ssd(const char *root);

/* The inputs every Mamba-2 fixture has (the SSD's and the bidirectional
 * ones'): x, dt, A, B, C and, when given, D and dt_bias, loaded from an open
 * fixture (fixture.h) with their sizes; every shape checked against x's and
 * B's, a mismatch marking the fixture failed. */
typedef struct Fixture Fixture;
typedef struct {
    float *x, *dt, *A, *B, *C, *D, *bias;  // (b,L,h,p) (b,L,h) (h,) (b,L,g,N) x2 (h,)|(h,p) (h,) fp32; D, bias may be NULL
    int64_t b, L, H, P, G, N;
    bool D_per_channel;  // D is (h, p)
} Mamba2FixtureInputs;
Mamba2FixtureInputs fixture_mamba2_inputs(Fixture *fx);

#endif
