/* The Mamba-1 selective scan problem: shapes, flags and tensors, shared by
 * chapters 01-04, the oracle and the kernels (C and CUDA both include this). */
#ifndef SCAN_H
#define SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* b batch, d channels, N state size, L sequence length, G groups of B/C. */
typedef struct {
    int64_t batch, dim, dstate, seqlen, groups;
    bool has_z, has_D, has_bias, softplus, has_h0;
} ScanShape;

/* One forward's tensors, host or device pointers (the version says which).
 * u, delta, z, B, C, y hold fp32, fp16 or bf16 (uint16_t bits) per the version's
 * dtype; everything else is fp32. A pointer is NULL exactly when its flag in
 * `s` is off (z, D, delta_bias, h0). Outputs do not overlap inputs (04's
 * version 11 reads h0 while other blocks of the same grid write last_state). */
typedef struct {
    ScanShape s;
    const void *u;          // (b, d, L)    fp32 | fp16 | bf16
    const void *delta;      // (b, d, L)    fp32 | fp16 | bf16
    const void *z;          // (b, d, L)    fp32 | fp16 | bf16, NULL without z
    const float *A;         // (d, N)       fp32
    const void *B;          // (b, G, N, L) fp32 | fp16 | bf16
    const void *C;          // (b, G, N, L) fp32 | fp16 | bf16
    const float *D;         // (d,)         fp32, NULL without D
    const float *delta_bias;// (d,)         fp32, NULL without bias
    const float *h0;        // (b, d, N)    fp32, NULL without h0
    void *y;                // (b, d, L)    fp32 | fp16 | bf16, written
    float *last_state;      // (b, d, N)    fp32, written
} ScanTensors;

/* A packed problem: nseq sequences of different lengths laid end to end on
 * one row (t.s.batch 1, t.s.seqlen their total), sequence k on steps
 * [cu_seqlens[k], cu_seqlens[k + 1]). Each starts from its own initial state,
 * t.h0 (nseq, d, N) (NULL: zeros), and ends in its own final state,
 * t.last_state (nseq, d, N); nothing flows from one sequence to the next. */
typedef struct {
    ScanTensors t;
    int64_t nseq;
    const int32_t *cu_seqlens;  // (nseq + 1,) int32: 0, the end of sequence 0, ..., L
} ScanPacked;

/* Element counts of each tensor. */
static inline int64_t scan_n_seq(const ScanShape *s) { return s->batch * s->dim * s->seqlen; }
static inline int64_t scan_n_bc(const ScanShape *s) { return s->batch * s->groups * s->dstate * s->seqlen; }
static inline int64_t scan_n_state(const ScanShape *s) { return s->batch * s->dim * s->dstate; }
static inline int64_t scan_n_A(const ScanShape *s) { return s->dim * s->dstate; }

/* Group of channel c: the official code uses c / (d / G). */
static inline int64_t scan_group_of(const ScanShape *s, int64_t c) { return c / (s->dim / s->groups); }

#endif
