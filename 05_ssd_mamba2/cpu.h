/* 05_ssd_mamba2, the algorithm in C: the recurrence, the quadratic
 * ("attention") form and the chunked SSD form of one Mamba-2 forward, fp32
 * host tensors (SsdTensors, ops/ssd/ssd.h). */
#ifndef SSD_CPU_H
#define SSD_CPU_H

#include <stddef.h>

#include "ssd.h"

/* H_t = exp(dt_t A) H_{t-1} + dt_t x_t B_t^T, y_t = H_t C_t: one step at a time.
 * Workspace: the running state of one (b, h), (p, N) fp64. */
size_t ssd_recurrent_cpu_workspace(const SsdShape *s);
void ssd_recurrent_cpu(const SsdTensors *t, void *workspace);

/* y = (L o C B^T) X with the (L x L) decay mask: O(L^2), small L only
 * (unsupported, with the reason, for L > 2048). Workspace: Δ, Δ·A and one
 * row of the mask for one (b, h), (3, L) fp64. */
const char *ssd_quadratic_cpu_unsupported(const SsdShape *s);
size_t ssd_quadratic_cpu_workspace(const SsdShape *s);
void ssd_quadratic_cpu(const SsdTensors *t, void *workspace);

/* The paper's Listing 1: per chunk, the diagonal block, chunk states, state
 * passing between chunks, the off-diagonal output. Workspace for one (b, h):
 * Δ and the chunk-local cumsum of Δ·A, (2, L) fp64; one chunk row's weights,
 * (Q,) fp64; the chunk states, (nchunks, p, N) fp32. */
size_t ssd_chunked_cpu_workspace(const SsdShape *s);
void ssd_chunked_cpu(const SsdTensors *t, void *workspace);
/* The same on a packed problem: every sequence from its own initial state,
 * its chunks counted from its first step, and the state after each chunk. */
void ssd_chunked_cpu_packed(const SsdPacked *t, void *workspace);

#endif
