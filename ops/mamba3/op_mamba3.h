/* Mamba-3 SISO as the harness runs it: the version type of chapter 08, the
 * operation (op_mamba3.c), its fp64 oracle and its official fixtures.
 * Shapes and tensors: mamba3.h. */
#ifndef OP_MAMBA3_H
#define OP_MAMBA3_H

#include "mamba3.h"
#include "op.h"

/* A version of Mamba-3 SISO: run() writes t->y and the four final states;
 * a packed problem (t->s.nseq > 0) comes with t->cu_seqlens. */
typedef struct {
    VERSION_MEMBERS(Mamba3Shape, Mamba3Tensors);
    bool graph;  // launches on the per-thread default stream: its token loop is also timed as a CUDA graph
    /* NULL (the version takes no pool of state slots), or the forward of a
     * Mamba3Pool problem (mamba3.h). */
    void (*run_pool)(const Mamba3Pool *t, void *workspace);
} Mamba3Version;

/* The common command-line flags (ARG_*, args.h) its chapter accepts: --groups
 * is the qk heads, --dstate N, --h0 the four initial states; its own (--heads,
 * --headdim, --angles) are in its flag table. */
enum {
    ARGS_MAMBA3 = ARG_CHECK | ARG_BENCH | ARG_LIST | ARG_BATCH | ARG_SEQLEN | ARG_GROUPS | ARG_DSTATE |
                  ARG_NO_Z | ARG_NO_D | ARG_H0 | ARG_SEED | ARG_REPS | ARG_SAMPLED | ARG_CSV | ARG_DUMP |
                  ARG_LOAD | ARG_VERSION | ARG_SEQLENS,
};

/* Its own sizes in Problem.opt (op.h): heads h, headdim p of v, angle pairs
 * S, the chunk Q of the chunked form (the official kernel's 64), and the
 * slots of a pool of states (0: none). */
enum { M3_HEADS, M3_HEADDIM, M3_ANGLES, M3_CHUNK, M3_SLOTS, M3_NOPTS };

extern const Op OP_MAMBA3;  // versions are Mamba3Version

enum {
    BENCH_S6 = 1 << 0,       // OP_MAMBA3: h 32, g 1, N 128, p 64, S 32, z, D, L 2048 and 8192, batch 1 and 8
    BENCH_S6_STEP = 1 << 1,  // OP_MAMBA3: the same shape, one token from the four states, no z, batch 1, 64, 256
    BENCH_SERVING_S6 = 3 << 2,  // OP_MAMBA3: S6, states in: the serving mix packed; one sequence of its tokens
};

/* The fp64 oracle, the step form, one (sequence, head) at a time: sequence
 * n is batch entry n, or of a packed problem the steps [cu_seqlens[n],
 * cu_seqlens[n + 1]) of the one row. t's tensors are fp32 host arrays. y
 * gets the sequence's outputs of the head, (len, p) fp64; the final states
 * go to angle (S,), ssm (p, N), k (N,), v (p,) fp64. y_terms (len, p), unless
 * NULL, gets each output's Σ|term|: the state's recurrence run on the
 * magnitudes of its terms, against |q̃|, plus |D v|, times |silu(z)| (what the
 * 16-bit versions' rtol is taken of: they round q̃, k̃ and the products' terms). */
void oracle_mamba3_head(const Mamba3Pool *t, int64_t n, int64_t h, double *y, double *angle, double *ssm,
                        double *k, double *v, double *y_terms);
/* The same from the chunked form (oracle_mamba3.c says how it is derived),
 * chunks of Q steps counted from the sequence's first: what make check
 * compares with the step form, to about 1e-12 (no pool of slots). */
void oracle_mamba3_chunked_head(const Mamba3Tensors *t, int64_t Q, int64_t n, int64_t h, double *y, double *angle,
                                double *ssm, double *k, double *v);
/* Every (sequence, head): y (b, L, h, p), final states (n, h, S), (n, h, p, N),
 * (n, h, N), (n, h, p), all fp64 (n: a pool's slots, whose unnamed ones keep
 * their states); y_terms (b, L, h, p) unless NULL. */
void oracle_mamba3(const Mamba3Pool *t, double *y, double *angle, double *ssm, double *k, double *v,
                   double *y_terms);

/* The oracle against the official fixtures in <root>/ops/mamba3/fixtures. */
void fixtures_check_mamba3(const char *root);

#endif
