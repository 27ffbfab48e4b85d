/* The driver of the Mamba-1 scan chapters (01-04): a chapter's main.c lists
 * its numbered versions and hands them here. The driver parses the command
 * line, makes the inputs, checks every version against the fp64 oracle and
 * the previous stage, times it, and writes CSV rows. */
#ifndef SCAN_DRIVER_H
#define SCAN_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

#include "scan.h"

typedef struct {
    const char *name;   // what it is, e.g. "scan_fused_regs"
    const char *what;   // one line for --list: what changed and what it buys
    bool gpu;           // run() gets device pointers (else host pointers)
    DType dtype;        // dtype of u, delta, z, B, C, y
    /* Bytes of scratch run() needs beyond inputs and outputs; NULL: none. */
    size_t (*workspace_bytes)(const ScanShape *s);
    /* NULL, or a function returning NULL when the shape is runnable and
     * otherwise the reason it is not (printed as SKIP). */
    const char *(*unsupported)(const ScanShape *s);
    /* One forward: reads t's inputs, writes t->y and t->last_state. A GPU
     * version only enqueues work (checked launches); the driver syncs. */
    void (*run)(const ScanTensors *t, void *workspace);
} ScanVersion;

/* Benchmark sets (DESIGN section 7). */
enum {
    BENCH_S1 = 1,   // d 2048, N 32, L 512, batch 1, 2, 4, 8, 16
    BENCH_S2 = 2,   // d 2048, N 16, L 512 .. 65536, batch 1 and 8
};

typedef struct {
    const char *name;                 // "03_fused_cuda" (the CSV's chapter)
    const char *title;                // one line printed first
    const ScanVersion *versions;      // numbered from 1 in this order
    int nversions;
    const ScanVersion *prev_cpu;      // previous stage for CPU versions, or NULL
    const ScanVersion *prev_gpu;      // previous stage for GPU versions, or NULL
    bool fp16_inputs;                 // round inputs to fp16 (the oracle sees them rounded)
    bool check_fixtures;              // also check the oracle against the official fixtures
    unsigned bench_sets;              // BENCH_* used by --bench
} ScanChapter;

/* The whole program: returns the exit code (0, 1, 2 or 3). */
int scan_chapter_main(const ScanChapter *ch, int argc, char **argv);

#endif
