/* The operations the driver core runs (driver.h) and their version types: a
 * chapter lists its numbered versions in its operation's type and hands them
 * to chapter_main with the operation. */
#ifndef OPS_H
#define OPS_H

#include <stddef.h>

#include "bidir.h"
#include "decode.h"
#include "driver.h"
#include "scan.h"
#include "ssd.h"

/* A version of the Mamba-1 selective scan (chapters 01-04). */
typedef struct {
    VersionInfo info;   // first member: the core reads every version through it
    /* Bytes of scratch run() needs beyond inputs and outputs; NULL: none. */
    size_t (*workspace_bytes)(const ScanShape *s);
    /* NULL, or a function returning NULL when the shape is runnable and
     * otherwise the reason it is not (printed as SKIP). */
    const char *(*unsupported)(const ScanShape *s);
    /* One forward: reads t's inputs, writes t->y and t->last_state. A GPU
     * version only enqueues work (checked launches); the core syncs. */
    void (*run)(const ScanTensors *t, void *workspace);
} ScanVersion;

/* A version of Mamba-2's SSD (chapter 05 on): the same, on SsdShape and
 * SsdTensors; run() writes t->y and t->final_state. */
typedef struct {
    VersionInfo info;
    size_t (*workspace_bytes)(const SsdShape *s);
    const char *(*unsupported)(const SsdShape *s);
    void (*run)(const SsdTensors *t, void *workspace);
} SsdVersion;

/* A version of bidirectional Mamba-2 (chapter 06): the same, on BidirShape
 * and BidirTensors; run() writes t->y. */
typedef struct {
    VersionInfo info;
    size_t (*workspace_bytes)(const BidirShape *s);
    const char *(*unsupported)(const BidirShape *s);
    void (*run)(const BidirTensors *t, void *workspace);
} BidirVersion;

/* A version of the decode step (chapter 07): the same, on DecodeShape and
 * DecodeTensors; run() writes t->y and t->state_out (which may be t->state). */
typedef struct {
    VersionInfo info;
    size_t (*workspace_bytes)(const DecodeShape *s);
    const char *(*unsupported)(const DecodeShape *s);
    void (*run)(const DecodeTensors *t, void *workspace);
    bool graph;  // its launches go to the per-thread default stream: the token loop can be a CUDA graph
} DecodeVersion;

/* The SSD shape of a problem of OP_SSD or OP_BIDIR (op_ssd.c). */
SsdShape problem_ssd_shape(const Problem *p);

extern const Op OP_SCAN;  // Mamba-1 selective scan; versions are ScanVersion
extern const Op OP_SSD;   // Mamba-2 SSD; versions are SsdVersion
extern const Op OP_BIDIR;   // bidirectional Mamba-2, both forms; versions are BidirVersion
extern const Op OP_DECODE;  // decode step, both forms, T tokens; versions are DecodeVersion

/* Benchmark sets (docs/design.md §7): bit k of a chapter's bench_sets picks
 * its operation's k-th set. */
enum {
    BENCH_S1 = 1 << 0,    // OP_SCAN: d 2048, N 32, L 512, batch 1, 2, 4, 8, 16
    BENCH_S2 = 1 << 1,    // OP_SCAN: d 2048, N 16, L 512 .. 65536, batch 1 and 8
};
enum {
    BENCH_S3 = 1 << 0,    // OP_SSD: h 32, p 64, N 128, g 1, chunk 256, no z, L 512 .. 16384, batch 1 and 8
    BENCH_S3_Z = 1 << 1,  // OP_SSD: the same with z, L 8192, batch 1 and 8
    BENCH_CROSSOVER = 7 << 2,  // OP_SSD: S3 at N 16, 64, 128 (three grids), L 4096, batch 8: SSD against 03's scan
};
enum {
    BENCH_S3_DEFAULT = 1 << 0,  // OP_BIDIR: S3 (as OP_SSD's) in the default form
    BENCH_S3_HYDRA = 1 << 1,    // OP_BIDIR: S3 in the Hydra form
};
enum {
    BENCH_S4_M2 = 1 << 0,      // OP_DECODE: Mamba-2 h 32, p 64, N 128, g 1, no z, one token, batch 1..256
    BENCH_S4_M1 = 1 << 1,      // OP_DECODE: Mamba-1 d 2048, N 16, z, one token, batch 1..256
    BENCH_TOKENS_M2 = 1 << 2,  // OP_DECODE: S4 Mamba-2 at batch 8, T 4..256 tokens per launch
    BENCH_TOKENS_M1 = 1 << 3,  // OP_DECODE: S4 Mamba-1 at batch 8, T 4..256 tokens per launch
};

#endif
