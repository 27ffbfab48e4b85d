/* The public types of the op registry (docs/design.md §1): a Problem of
 * any operation, the Op that an operation declares in ops/<op>/op_<op>.c
 * (its flags, tensors, tolerances, CSV columns, benchmark grids, oracle and
 * the calls into its version type), and the Chapter that a chapter's main.c
 * declares over one Op. The harness (common/) reads these tables and names
 * no operation itself. */
#ifndef OP_H
#define OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "args.h"
#include "check.h"
#include "folder.h"
#include "tensor.h"

/* The number of elements of the array a (a table's count beside the table). */
#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))

/* One problem of any operation: sizes and flags. Fields an operation does
 * not have stay 0 (false). */
typedef struct {
    int64_t batch, seqlen, dim, dstate, groups;   // b, L, channels d, state size N, groups of B/C
    bool has_z, has_D, has_bias, softplus, has_h0;
    bool D_per_channel;                           // a per-channel D where the op also has a per-head one
    bool big_delta;                               // check cases: delta + bias above 20 on every other channel or head
    /* Packed: nseq sequences laid end to end on one row (batch 1, seqlen
     * their total); 0 otherwise. seqlens: their lengths when the problem is
     * made here (NULL when read by --load: the op's index tensor holds them). */
    int64_t nseq;
    const int64_t *seqlens;
    /* The op's own sizes, switches (0 or 1) and choices (1, 2, ...), at the
     * slots its flag table (OpFlag) and its header name: e.g. the heads of a
     * Mamba-2 op at opt[SSD_HEADS] (ops/ssd/op_ssd.h). */
    int64_t opt[OP_MAX_OPTS];
} Problem;

/* What the core reads of a version. Each operation's version type starts
 * with it (ScanVersion in ops/scan/op_scan.h, ...). */
typedef struct {
    const char *name;   // what it is, e.g. "scan_fused_regs"
    const char *what;   // one line for --list: what changed and what it buys
    bool gpu;           // run() gets device pointers (else host pointers)
    DType dtype;        // dtype of the tensors that follow the version's dtype
} VersionInfo;

/* The members every operation's version type starts with, on its own shape
 * and tensor types (ScanVersion in ops/scan/op_scan.h, ...):
 *   info             first: the core reads every version through it;
 *   workspace_bytes  bytes of scratch run() needs beyond inputs and outputs (NULL: none);
 *   unsupported      NULL, or NULL when the shape is runnable and otherwise
 *                    the reason it is not (printed as SKIP);
 *   run              one forward: reads t's inputs, writes its outputs; a GPU
 *                    version only enqueues work (checked launches), the core syncs.
 * The op's own members (a packed forward, a pool's, ...) follow. */
#define VERSION_MEMBERS(Shape, Tensors)                   \
    VersionInfo info;                                     \
    size_t (*workspace_bytes)(const Shape *s);            \
    const char *(*unsupported)(const Shape *s);           \
    void (*run)(const Tensors *t, void *workspace)

/* A version table's entry starts with one of these: its info, named by its
 * run function (so the name --list prints, the CSV's version column and the
 * function a reader greps for are one name), and that function as run:
 *   {GPU_VERSION(scan_fused_regs, DT_FP32, "one thread per (b, d) row, ..."),
 *    .unsupported = scan_fused_regs_unsupported}, */
#define CPU_VERSION(fn, dtype_, what_) .info = {.name = #fn, .what = what_, .gpu = false, .dtype = dtype_}, .run = fn
#define GPU_VERSION(fn, dtype_, what_) .info = {.name = #fn, .what = what_, .gpu = true, .dtype = dtype_}, .run = fn

/* Benchmark shapes: every batch x every seqlen (batch outer) on one base. */
typedef struct {
    Problem base;           // every size and flag but batch and seqlen
    int64_t batch[8];       // zero-terminated
    int64_t seqlen[8];      // zero-terminated
} BenchGrid;

/* An operation. Tensors travel as void pointers in table order (NULL where
 * absent): device or host arrays in the version's dtype for run(), fp32 host
 * arrays for the oracle and the checks. */
typedef struct {
    unsigned args;          // the command-line flags its chapters accept (ARGS_*)
    size_t version_size;    // sizeof its version type
    const Tol *tol_fp32, *tol_fp16, *tol_bf16;  // the tolerances of its fp32, fp16 and bf16 versions
    const OpFlag *flags;    // its own flags (args.h), beside the common ones in args
    int nflags;

    /* Its tensors for p in a fixed order, inputs first (random inputs are
     * drawn in this order), then outputs; returns how many. */
    int (*tensors)(const Problem *p, TensorSpec *out);
    /* Exit 2 with one line when p is not a valid problem. */
    void (*validate)(const Problem *p);
    /* NULL, or: replaces the base that sizes given on the command line start
     * from (check_base, or bench_base when bench) after its own flags (a->opt). */
    void (*command_line_base)(Problem *base, const Args *a, bool bench);
    /* The sizes of a check line ("b2 d8 N16 L333 G1") and of a bench row. */
    void (*shape_text)(const Problem *p, char *buf, size_t len);
    void (*bench_text)(const Problem *p, char *buf, size_t len);
    /* Its CSV's size columns ("batch,dim,..."), and a row's values of them;
     * returns how many (at most CSV_MAX_SIZES, csv.h). */
    const char *csv_columns;
    int (*csv_sizes)(const Problem *p, int64_t *v);

    /* A version's own functions, called through its typed struct. */
    size_t (*workspace)(const VersionInfo *v, const Problem *p);
    const char *(*unsupported)(const VersionInfo *v, const Problem *p);
    void (*run)(const VersionInfo *v, const Problem *p, void *const *tensors, void *workspace);

    /* NULL, or: fills the INDEX_INT32 inputs from p (cu_seqlens from the
     * sequence lengths), after the random draw. */
    void (*indices)(const Problem *p, void *const *tensors);
    /* NULL, or: once --load has read the data, exit 2 with one line when the
     * inputs are not valid (indices out of order), and complete p from them
     * (p->nchunks from cu_seqlens); the table is then made again. */
    void (*from_loaded)(Problem *p, void *const *tensors);
    /* Inputs a uniform draw cannot make: delta + bias above 20 (p->big_delta). */
    void (*big_delta)(const Problem *p, void *const *tensors);
    /* The fp64 oracle: ref[k] for every output k of the table. */
    void (*oracle)(const Problem *p, void *const *tensors, double *const *ref);
    /* NULL, or the oracle that also gives, for each element of output
     * terms_output (y), what rtol is taken of: Σ|term| of the terms its sum
     * adds up, which can cancel (terms like ref[terms_output]). Run in place
     * of oracle, one pass; every other output keeps rtol of |ref|. */
    void (*oracle_terms)(const Problem *p, void *const *tensors, double *const *ref, double *terms);
    int terms_output;
    /* NULL (every version), or which versions, by dtype, are held to rtol of
     * the terms; the others keep rtol of |ref|. */
    bool (*terms_rtol)(DType dt);
    /* NULL, or: for the versions that store a tensor in 8-bit codes (Tol.codes8,
     * a Codes8), bound[k] for each output k (like the oracle's; NULL where
     * none): how far the codes' roundings, after every step, can move each
     * element from the oracle's, which starts from the same codes (the CODED
     * input sets). Derived from the rounding step, added to the tolerance. */
    void (*codes8_bound)(const Problem *p, void *const *tensors, int codes8, double *const *bound);
    /* Sampled validation: the independent rows ((b, d) or (b, h, p) channels), and one
     * row's outputs in tensors checked against the oracle. */
    int64_t (*rows)(const Problem *p);
    CheckResult (*check_row)(const Problem *p, void *const *tensors, int64_t row, Tol tol);
    /* Minimal exps and matrix FLOPs of one forward (NULL: no matrix
     * products); minimal bytes are every tensor of the table once. */
    double (*exps)(const Problem *p);
    double (*flops)(const Problem *p);
    /* NULL, or the minimal bytes when a forward never touches some elements
     * of the table t (a pool's slots no batch entry names): tensors holds the
     * inputs (outputs NULL), all the table's bytes come to `table_bytes`. */
    double (*bytes)(const Problem *p, const TensorSpec *t, void *const *tensors, double table_bytes, DType dt);

    /* --load: sizes and flags from the files' shapes and meta.json; --dump:
     * meta.json's text for p. */
    void (*infer)(Problem *p, const LoadFolder *f);
    void (*meta_text)(const Problem *p, char *buf, size_t len);
    /* The oracle against the official fixtures of this operation. */
    void (*fixtures)(const char *dir);

    /* In place (decode): when loops is not NULL, output loop_output may be
     * written over input loop_input; every GPU version is also checked so
     * (where the problem has that input: an optional one may be off), and
     * where loops(v, p) holds it is timed as LOOP_STEPS steps back to back in
     * place, launched one by one and as a CUDA graph (the token loop). */
    bool (*loops)(const VersionInfo *v, const Problem *p);
    int loop_output, loop_input;
    /* NULL, or whether version v's kernels go to the per-thread default
     * stream (nvcc --default-stream per-thread): they are then timed there
     * (gpu_time). */
    bool (*per_thread)(const VersionInfo *v);

    /* NULL, or: a version's outputs reached a second way from the same
     * tensors (device ones for a GPU version), by smaller runs of the same
     * version (split_what names them: decode's T tokens as T one-token
     * launches, each from the state the last one left). Returns NULL once it
     * has written every output, "" where p has nothing to split (no check
     * line), or the reason it cannot split p; --check compares the two ways. */
    const char *(*run_split)(const VersionInfo *v, const Problem *p, void *const *tensors, bool device);
    const char *split_what;

    const Problem *check_cases;   // --check: small and awkward
    int ncheck;
    Problem check_base;           // --check with sizes on the command line
    Problem bench_base;           // --bench with sizes on the command line
    const BenchGrid *bench;       // bench[k]: bit k of a chapter's bench_sets
    int nbench;
    const BenchGrid *quick;       // what a reader running no flags gets timed
    int nquick;
} Op;

/* The flag that gives the lengths: --seqlen, or the op's own name for it. */
static inline const char *op_seqlen_flag(const Op *op) {
    for (int k = 0; k < op->nflags; k++)
        if (op->flags[k].kind == OPT_SEQLEN) return op->flags[k].flag;
    return "--seqlen";
}

typedef struct {
    const char *name;                // "03_fused_cuda" (the CSV's chapter)
    const char *title;               // printed first after the name: "03_fused_cuda: <title>"
    const Op *op;                    // what its versions compute
    const void *versions;            // the op's version type, numbered from 1 in this order
    int nversions;
    const VersionInfo *prev_cpu;     // previous stage of the CPU versions, or NULL
    const VersionInfo *prev_gpu[2];  // previous stages of the GPU versions, or NULL
    bool fp16_inputs;                // every fp32 version, and the oracle, read the fp16-rounded inputs too
    bool check_fixtures;             // also check the oracle against the official fixtures
    unsigned bench_sets;             // bit k: the op's bench[k] (BENCH_* in the op's op_<op>.h)
    /* NULL, or what the chapter prints after its timings (a plain run and
     * --bench; with --csv FILE it writes the tables csv_tables names). */
    void (*lesson)(const Args *a);
    /* The tables lesson() writes beside --csv FILE, each replaced by every
     * run: "precision" is FILE's name + _precision.csv (csv_sibling_path). */
    const char *csv_tables[CSV_MAX_TABLES];
} Chapter;

#endif
