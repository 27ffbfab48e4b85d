/* 02_parallel_scan, CPU versions: the recurrence as a scan over materialized
 * pairs (a_t, b_t) with an associative operator (sequential, Hillis-Steele,
 * Blelloch), and the log-space cumsum form of the same scan. */
#ifndef PARALLEL_SCAN_CPU_H
#define PARALLEL_SCAN_CPU_H

#include <stddef.h>

#include "scan.h"

/* The pairs folded left to right: the recurrence, written with the operator. */
size_t scan_sequential_cpu_workspace(const ScanShape *s);
void scan_sequential_cpu(const ScanTensors *t, void *workspace);

/* log2(L) rounds, every element combined with the one 2^k steps back. */
size_t scan_hillis_steele_cpu_workspace(const ScanShape *s);
void scan_hillis_steele_cpu(const ScanTensors *t, void *workspace);

/* Up-sweep / down-sweep over a tree: O(L) combines. */
size_t scan_blelloch_cpu_workspace(const ScanShape *s);
void scan_blelloch_cpu(const ScanTensors *t, void *workspace);

/* h_t = exp(A c_t) (h + sum_s exp(-A c_s) b_s), c = cumsum(delta), rebased
 * before exp(|A c|) can leave fp32's range. */
size_t scan_logspace_cpu_workspace(const ScanShape *s);
void scan_logspace_cpu(const ScanTensors *t, void *workspace);

#endif
