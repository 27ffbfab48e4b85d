/* The Mamba-1 selective scan as the harness runs it: the version type of
 * chapters 01-04, the operation (op_scan.c), its benchmark sets, its fp64
 * oracle and its official fixtures. The shapes and tensors kernels see are
 * in scan.h. */
#ifndef OP_SCAN_H
#define OP_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "op.h"
#include "scan.h"

/* A version of the Mamba-1 selective scan (chapters 01-04): run() writes t->y
 * and t->last_state. */
typedef struct {
    VERSION_MEMBERS(ScanShape, ScanTensors);
    /* NULL (the version takes no packed problem), or the forward of a packed
     * one (ScanPacked, scan.h), with the workspace of t->t.s. */
    void (*run_packed)(const ScanPacked *t, void *workspace);
} ScanVersion;

/* The command-line flags (ARG_*, args.h) its chapters accept. */
enum {
    /* what the Mamba-1 scan chapters (01-04) accept */
    ARGS_SCAN = ARG_CHECK | ARG_BENCH | ARG_LIST | ARG_BATCH | ARG_DIM | ARG_DSTATE |
                ARG_SEQLEN | ARG_SEQLENS | ARG_GROUPS | ARG_NO_Z | ARG_NO_D | ARG_NO_BIAS |
                ARG_NO_SOFTPLUS | ARG_H0 | ARG_SEED | ARG_REPS | ARG_SAMPLED | ARG_CSV | ARG_DUMP |
                ARG_LOAD | ARG_VERSION,
};

extern const Op OP_SCAN;  // Mamba-1 selective scan; versions are ScanVersion

/* The size columns every Mamba op's CSV rows share (plots/ reads them by
 * name), and a row's values: channels is d, or h·p; a size the op does not
 * have is 0. */
#define MAMBA_CSV_COLUMNS "batch,dim,heads,headdim,groups,dstate,seqlen,chunk"
int mamba_csv_sizes(const Problem *p, int64_t heads, int64_t headdim, int64_t chunk, int64_t *v);

/* Benchmark sets (docs/design.md §7): bit k of a chapter's bench_sets picks
 * its operation's k-th set. */
enum {
    BENCH_S1 = 1 << 0,    // OP_SCAN: d 2048, N 32, L 512, batch 1, 2, 4, 8, 16
    BENCH_S2 = 1 << 1,    // OP_SCAN: d 2048, N 16, L 512 .. 65536, batch 1 and 8
    BENCH_SERVING_S1 = 7 << 2,  // OP_SCAN: S1's widths, h0: the serving mix packed; one sequence of its tokens; padded
};

/* ---- packed problems (--seqlens), shared with the SSD ---- */

/* The benchmarks' serving mix: 64 requests of 17 to 8192 tokens, 65,536 in
 * all (lengths spread geometrically, taken in the order k·37 mod 64 of the sorted list). */
#define SERVING_MIX_SEQS 64
#define SERVING_MIX_TOKENS 65536
extern const int64_t SERVING_MIX[SERVING_MIX_SEQS];

/* Exit 2 unless a packed p lies on one row of at most INT32_MAX tokens that
 * its lengths add up to. */
void packed_validate(const Problem *p);
/* cu (nseq + 1,) int32 from p->seqlens: 0, then each sequence's end. */
void cu_seqlens_fill(const Problem *p, int32_t *cu);
/* --load: p->nseq from the header of the folder's cu_seqlens.npy (file k of
 * the table), where the folder holds one: exit 2, before any data is read,
 * unless it is (nseq + 1,) with 1 <= nseq <= the tokens of the row (every
 * sequence at least one token) and the batch is 1. */
void packed_infer(Problem *p, const LoadFolder *f, int k);
/* Exit 2 unless a loaded cu rises from 0 to p->seqlen, every sequence at
 * least one token. */
void cu_seqlens_check(const Problem *p, const int32_t *cu);

/* ---- the fp64 oracle (oracle_scan.c): plain loops that mirror the official
 * reference functions line by line, accumulating in double. Inputs are fp32
 * host arrays (fp16 chapters pass their fp16-rounded values); outputs fp64. ---- */

/* malloc, or exit 2 naming the bytes. */
void *oracle_alloc(size_t bytes);

/* softplus as the official kernels apply it: x <= 20 ? log1p(exp(x)) : x */
double oracle_softplus(double x);

/* Discretizing dx/dt = a*x + b*u over a step dt for a diagonal entry a:
 *   exact ZOH:  abar = exp(dt*a), bbar = (exp(dt*a) - 1) / a * b  (dt*b at a = 0)
 *   Euler-B:    abar = exp(dt*a), bbar = dt*b  (the rule every official kernel uses)
 *   Euler:      abar = 1 + dt*a,  bbar = dt*b */
typedef enum { DISC_ZOH, DISC_EULER_B, DISC_EULER } DiscRule;
void oracle_discretize(DiscRule rule, double a, double b, double dt, double *abar, double *bbar);

/* silu(z) = z * sigmoid(z) */
double oracle_silu(double z);

/* Where one channel's inputs live. Element t of a sequence input is at
 * ptr[t * stride]; a pointer at the last step with a negative stride walks
 * time backwards (flip). Per-channel scalars are single pointers. */
typedef struct {
    int64_t L, N;
    bool softplus;
    const float *u;     int64_t u_t;          // u_t = u[t * u_t]
    const float *delta; int64_t delta_t;      // delta_t = delta[t * delta_t]
    const float *z;     int64_t z_t;          // NULL without z
    const float *A;     int64_t A_n;          // A[n] = A[n * A_n]; A_n = 0: one value for every n
    const float *B;     int64_t B_n, B_t;     // B_t[n] = B[n * B_n + t * B_t]
    const float *C;     int64_t C_n, C_t;
    const float *D;                           // one value, NULL without D
    const float *bias;                        // one value, NULL without bias
    const float *h0;                          // (N,) contiguous, NULL: start from zero
    double *terms;  // (L,) fp64 or NULL: per step, the magnitude of y's terms, (Σ_n |h_n C_n| + |u D|) |silu(z)|
} ScanRow;

/* The recurrence of selective_scan_ref on one row: y (L,) in the row's own
 * time order, h (N,) its final state. */
void oracle_row(const ScanRow *r, double *y, double *h);
/* The same from the state h (N,) as given, in double (r->h0 unused). */
void oracle_row_from(const ScanRow *r, double *y, double *h);
/* Steps [start, start + len) of row r as a row of its own (no h0). */
ScanRow oracle_row_segment(ScanRow r, int64_t start, int64_t len);

/* One (batch bi, channel c) row: y[L] and state[N] (final h). t holds fp32
 * host arrays (u, delta, z, B, C as float). */
void oracle_scan_row(const ScanTensors *t, int64_t bi, int64_t c, double *y, double *state);
/* Every row: y (b,d,L) fp64, last_state (b,d,N) fp64. */
void oracle_scan(const ScanTensors *t, double *y, double *last_state);
/* A packed problem, sequence by sequence: channel c's y over every sequence
 * (L,) and its final states (nseq, N), fp64. */
void oracle_scan_packed_channel(const ScanPacked *t, int64_t c, double *y, double *states);
/* Every channel: y (1,d,L) fp64, final states (nseq,d,N) fp64. */
void oracle_scan_packed(const ScanPacked *t, double *y, double *final_states);

/* The oracle against the official fixtures mamba1 and mamba1_plain
 * (<root>/ops/scan/fixtures, fixtures_scan.c). */
void fixtures_check_scan(const char *root);

#endif
