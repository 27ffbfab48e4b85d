/* 04_fp16_half2, CPU: the chapter's algorithm in C, so that CI without a GPU
 * checks it: fp16 u, delta, z, B, C, y (uint16_t bits), fp32 state, and the
 * exponentials split between exp2f and the degree-3 polynomial exp2 of
 * exp2_poly.h exactly as version 5 splits them on the GPU. */
#ifndef FP16_HALF2_CPU_H
#define FP16_HALF2_CPU_H

#include <stddef.h>

#include "scan.h"

/* h[N] and A·log2 e [N] of the row being scanned: 2·N fp32. */
size_t scan_fp16_poly3_cpu_workspace(const ScanShape *s);

/* States n = 7, 15, 23, ... (EXP2_POLY_STATE) on the degree-3 polynomial,
 * the others on exp2f. */
void scan_fp16_poly3_cpu(const ScanTensors *t, void *workspace);

#endif
