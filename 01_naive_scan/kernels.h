/* 01_naive_scan, GPU: the eager baseline, as PyTorch eager runs
 * selective_scan_ref: materialized (b,d,L,N) tensors, one launch per step. */
#ifndef NAIVE_SCAN_KERNELS_H
#define NAIVE_SCAN_KERNELS_H

#include <stddef.h>

#include "c_decls.h"
#include "scan.h"

BEGIN_C_DECLS

size_t scan_eager_workspace(const ScanShape *s);
void scan_eager_gpu(const ScanTensors *t, void *workspace);

END_C_DECLS

#endif
