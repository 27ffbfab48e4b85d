/* 06_bidirectional, the algorithm in C: one bidirectional Mamba-2 forward
 * (default or Hydra form, BidirTensors in ops/bidir/bidir.h) two ways, fp32 host
 * tensors, fp64 arithmetic. */
#ifndef BIDIR_CPU_H
#define BIDIR_CPU_H

#include <stddef.h>

#include "bidir.h"

/* What users do today: 05's ssd_chunked_cpu (without D and z) run twice,
 * forward on x and backward on flipped copies (Hydra: of dt_bwd, B_bwd,
 * C_bwd), each from its own initial state, outputs summed (Hydra: each
 * shifted one step), then + D·x and × silu(z). Workspace: the flipped x, dt,
 * B, C, both directions' outputs and a final state, fp32
 * (3·b·L·h·p + b·L·h + 2·b·L·g·N + b·h·p·N floats), then 05's own. */
size_t bidir_twice_cpu_workspace(const BidirShape *s);
void bidir_twice_cpu(const BidirTensors *t, void *workspace);

/* Both directions in one chunked pass: per chunk one C·Bᵀ (Q×Q) serves the
 * forward (lower) and the backward (upper) triangle of one mask (Hydra:
 * strictly lower and strictly upper, with a second product for the backward
 * direction's own B and C); chunk states passed forward and backward.
 * Workspace for one (b, h): Δ and the chunk-local cumsums of both
 * directions, (4, L) fp64; the C·Bᵀ blocks, (1 or 2, Q, Q) fp64; one row of
 * the mask times C·Bᵀ, (Q,) fp64; the state passed between chunks, (p, N)
 * fp64; the chunk states of both directions, (2, nchunks, p, N) fp32. */
size_t bidir_chunked_cpu_workspace(const BidirShape *s);
void bidir_chunked_cpu(const BidirTensors *t, void *workspace);

#endif
