/* 01_naive_scan, CPU versions: the scan as selective_scan_ref writes it
 * (materialized (b,d,L,N) tensors) and the streaming scan (one state vector). */
#ifndef NAIVE_SCAN_CPU_H
#define NAIVE_SCAN_CPU_H

#include "scan.h"

/* deltaA and deltaB_u materialized as (b, d, L, N) fp32, then stepped. */
size_t scan_materialized_cpu_workspace(const ScanShape *s);
void scan_materialized_cpu(const ScanTensors *t, void *workspace);

/* One pass over time per (b, d) row with h[N] in a small array: the
 * algorithm every later chapter parallelizes. */
void scan_streaming_cpu(const ScanTensors *t, void *workspace);

#endif
