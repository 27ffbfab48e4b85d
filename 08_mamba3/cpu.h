/* 08_mamba3, the algorithm in C: Mamba-3 SISO's forward on fp32 host tensors
 * (Mamba3Tensors, ops/mamba3/mamba3.h). */
#ifndef MAMBA3_CPU_H
#define MAMBA3_CPU_H

#include <stddef.h>

#include "mamba3.h"

/* The step form: each (sequence, head) walks its steps, its four states in
 * fp32 (θ, H, the last rotated key and the last v). Workspace: one head's
 * states and this step's rotated q and k, (S + p N + 3 N + p) fp32. */
size_t mamba3_step_cpu_workspace(const Mamba3Shape *s);
void mamba3_step_cpu(const Mamba3Tensors *t, void *workspace);
/* The same on a pool of state slots (Mamba3Pool): padding entries' y zeros,
 * unnamed slots kept. */
void mamba3_step_cpu_pool(const Mamba3Pool *t, void *workspace);

/* The chunked form (ops/mamba3/oracle_mamba3.c derives it): per chunk of Q
 * steps, Mamba-2's SSD with a per-key scale w_s and its own diagonal, the
 * last chunk's key folded into the entering state. Workspace: one head's
 * states and one chunk's rotated q and k, decays and scales,
 * (S + p N + N + p + Q (2 N + 3)) fp32. */
size_t mamba3_chunked_cpu_workspace(const Mamba3Shape *s);
void mamba3_chunked_cpu(const Mamba3Tensors *t, void *workspace);
void mamba3_chunked_cpu_pool(const Mamba3Pool *t, void *workspace);

#endif
