/* The timing loop (bench.c): GPU versions checked on sampled rows and timed,
 * one CSV row each; CPU versions timed by the wall clock. */
#ifndef BENCH_H
#define BENCH_H

#include "buffers.h"

/* What a reader without a GPU sees timed: every CPU version of the chapter on
 * the first of its quick shapes at batch 1 and at most 512 tokens (06's CPU
 * versions take half a minute each at 8192), the median of 3 runs by the wall
 * clock (no CSV: the committed rows are the GPU's). */
void cpu_timing(Session *se, const Problem *problems, int n, uint64_t seed);
/* Checks on sampled rows, then times every GPU version on every problem
 * (quick: the short table a plain run prints; a->csv: one row each). */
void bench(Session *se, const Problem *problems, int n, const Args *a, bool quick);

#endif
