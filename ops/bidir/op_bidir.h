/* Bidirectional Mamba-2 as the harness runs it: the version type of chapter
 * 06, the operation (op_bidir.c), its benchmark sets, its fp64 oracle and its
 * official fixtures. Shapes and tensors: bidir.h. */
#ifndef OP_BIDIR_H
#define OP_BIDIR_H

#include "bidir.h"
#include "op_ssd.h"

/* A version of bidirectional Mamba-2 (chapter 06): the same, on BidirShape
 * and BidirTensors; run() writes t->y. */
typedef struct {
    VERSION_MEMBERS(BidirShape, BidirTensors);
} BidirVersion;

/* The common command-line flags (ARG_*, args.h) its chapter accepts: SSD's
 * but packed sequences; its own are SSD's and --hydra (BIDIR_FLAGS). */
enum { ARGS_BIDIR = ARGS_SSD & ~ARG_SEQLENS };

/* Its sizes in Problem.opt: SSD's (op_ssd.h), and the Hydra form (0 or 1). */
enum { BIDIR_HYDRA = SSD_NOPTS };

extern const Op OP_BIDIR;   // bidirectional Mamba-2, both forms; versions are BidirVersion

enum {
    BENCH_S3_DEFAULT = 1 << 0,  // OP_BIDIR: S3 (as OP_SSD's) in the default form
    BENCH_S3_HYDRA = 1 << 1,    // OP_BIDIR: S3 in the Hydra form
};

/* Default: y = SS(x) + flip(SS(flip(x))) + D*x.
 * Hydra:   y = shift(SS_f(x)) + flip(shift(SS_b(flip(x)))) + D*x.
 * Each direction from its own initial state; then y *= silu(z) when z is
 * given. t holds fp32 host tensors; y is (b,L,h,p) fp64. */
void oracle_bidir(const BidirTensors *t, double *y, double *scale);
/* One channel (bi, hi, pi): y (L,) fp64 in time order. y and scale may be
 * NULL; scale (like y) gets Σ|term| of each output, |forward| + |backward| +
 * |D·x| (times |silu(z)|): where the two directions nearly cancel, an fp16
 * kernel's error is a fraction of these, not of |y|. */
void oracle_bidir_channel(const BidirTensors *t, int64_t bi, int64_t hi, int64_t pi, double *y, double *scale);

/* The oracle against the official fixtures bidir and bidir_hydra
 * (<root>/ops/bidir/fixtures). */
void fixtures_check_bidir(const char *root);

#endif
