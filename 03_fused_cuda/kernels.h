/* 03_fused_cuda, GPU: the selective scan fused into one pass (precompute,
 * scan and output together), from one thread per state to the tuned kernel.
 * Nothing of size (b, d, L, N) is ever written. Version 1 is the CPU form (cpu.h). */
#ifndef FUSED_CUDA_KERNELS_H
#define FUSED_CUDA_KERNELS_H

#include <stddef.h>

#include "c_decls.h"
#include "scan.h"

BEGIN_C_DECLS

/* 2: one thread per state n, a block per (b, d) row, block-wide sum for y. */
const char *scan_fused_naive_unsupported(const ScanShape *s);
void scan_fused_naive(const ScanTensors *t, void *workspace);

/* 3: one thread per (b, d) row, its N states in registers (N <= 32). */
const char *scan_fused_regs_unsupported(const ScanShape *s);
void scan_fused_regs(const ScanTensors *t, void *workspace);

/* 4: as 3, every exp one ex2.approx with A pre-scaled by log2(e). */
void scan_fused_exp2(const ScanTensors *t, void *workspace);
/* 3 and 4 on a packed row (ScanPacked): the thread's state restarts at every
 * sequence's first step, from its own h0 row, and ends in its own last_state row. */
void scan_fused_regs_packed(const ScanPacked *pk, void *workspace);
void scan_fused_exp2_packed(const ScanPacked *pk, void *workspace);

/* 5: time tiles through shared memory: B/C shared by the block's channels,
 * float4 loads and stores, N split over lanes when it exceeds 16 (N <= 256). */
const char *scan_fused_tiled_unsupported(const ScanShape *s);
void scan_fused_tiled(const ScanTensors *t, void *workspace);

/* 6: as 5, with L cut into chunks when b*d alone cannot fill the GPU:
 * chunk end states, carries through the chunk decays, chunks recomputed.
 * Workspace: (b, d, chunks - 1, N + 1) fp32. */
size_t scan_fused_chunked_workspace(const ScanShape *s);
void scan_fused_chunked(const ScanTensors *t, void *workspace);

/* 7: the tuned kernel: N split over lanes before L is chunked, cp.async
 * double-buffered tiles, softplus by a polynomial. Workspace as 6, none
 * unless b*d is small. */
size_t scan_fused_tuned_workspace(const ScanShape *s);
void scan_fused_tuned(const ScanTensors *t, void *workspace);
/* 7 on a packed row (ScanPacked): the chunks of its plan laid over the
 * sequences, each from its h0 row to its last_state row (ops/scan/
 * scan_tiles.cuh, packed rows). Workspace as 7. */
void scan_fused_tuned_packed(const ScanPacked *pk, void *workspace);

END_C_DECLS

#endif
