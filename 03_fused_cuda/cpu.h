/* 03_fused_cuda, CPU: the chapter's algorithm in plain C, so that it is
 * verified without a GPU: the scan cut into chunks of L, each chunk's end
 * state from zero, the carries combined through the chunk decays, and the
 * chunks scanned again from their true start states. */
#ifndef FUSED_CUDA_CPU_H
#define FUSED_CUDA_CPU_H

#include <stddef.h>

#include "scan.h"

/* Chunk length of the CPU version (the GPU versions choose their own). */
#define SCAN_CPU_CHUNK 64

/* One row's chunk end states and Δ sums: (chunks - 1, N + 1) fp32. */
size_t scan_chunked_cpu_workspace(const ScanShape *s);
void scan_chunked_cpu(const ScanTensors *t, void *workspace);
/* The same on a packed problem: each sequence of each channel from its own
 * initial state, its chunks restarting at the sequence's first step. */
void scan_chunked_cpu_packed(const ScanPacked *t, void *workspace);

#endif
