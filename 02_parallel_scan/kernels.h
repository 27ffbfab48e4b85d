/* 02_parallel_scan, GPU: materialized pairs (a_t, b_t) scanned along L,
 * sequentially per thread, with Hillis-Steele warp shuffles, and with a
 * Blelloch tree in shared memory. */
#ifndef PARALLEL_SCAN_KERNELS_H
#define PARALLEL_SCAN_KERNELS_H

#include <stddef.h>

#include "c_decls.h"
#include "scan.h"

BEGIN_C_DECLS

/* The pairs a, b as (b, d, N, L) fp32: the workspace of every version here. */
size_t scan_pairs_gpu_workspace(const ScanShape *s);

void scan_sequential_gpu(const ScanTensors *t, void *workspace);
void scan_hillis_steele_gpu(const ScanTensors *t, void *workspace);
void scan_blelloch_gpu(const ScanTensors *t, void *workspace);

END_C_DECLS

#endif
