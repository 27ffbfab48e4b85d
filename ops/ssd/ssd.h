/* The Mamba-2 SSD problem (mamba_chunk_scan_combined): shapes, flags and
 * tensors, shared by chapters 05-07, the oracle and the kernels (C and CUDA
 * both include this). Official layouts, C order. */
#ifndef SSD_H
#define SSD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* b batch, L sequence length, h heads, p headdim, g groups of B/C (head i
 * uses group i / (h / g)), N state size, chunk the chunk size Q (a power of
 * two; L need not be a multiple of it). */
typedef struct {
    int64_t batch, seqlen, heads, headdim, groups, dstate, chunk;
    bool has_z, has_D, D_per_channel, has_bias, softplus, has_h0;
    int64_t nseq;  // a packed problem's sequences (SsdPacked), 0 otherwise
} SsdShape;

/* The inputs of one forward, the members SsdTensors and BidirTensors
 * (ops/bidir/bidir.h) start with after their shape. */
#define SSD_INPUT_MEMBERS                                                         \
    const void *x;                /* (b, L, h, p)  fp32 | fp16 */                 \
    const void *dt;               /* (b, L, h)     fp32 | fp16 */                 \
    const float *A;               /* (h,)          fp32 */                        \
    const void *B;                /* (b, L, g, N)  fp32 | fp16 */                 \
    const void *C;                /* (b, L, g, N)  fp32 | fp16 */                 \
    const float *D;               /* (h,) or (h, p) fp32, NULL without D */       \
    const void *z;                /* (b, L, h, p)  fp32 | fp16, NULL without z */ \
    const float *dt_bias;         /* (h,)          fp32, NULL without bias */     \
    const float *initial_states   /* (b, h, p, N)  fp32, NULL without h0 */

/* One forward's tensors, host or device pointers (the version says which).
 * x, dt, z, B, C, y hold fp32 or fp16 (uint16_t bits) per the version's
 * dtype; A, D, dt_bias and the states are fp32. A pointer is NULL exactly
 * when its flag in `s` is off (z, D, dt_bias, initial_states). */
typedef struct {
    SsdShape s;
    SSD_INPUT_MEMBERS;
    void *y;                      // (b, L, h, p)  fp32 | fp16, written
    float *final_state;           // (b, h, p, N)  fp32, written
} SsdTensors;

/* A packed problem: nseq sequences of different lengths laid end to end on
 * one row (t.s.batch 1, t.s.seqlen their total), sequence k on steps
 * [cu_seqlens[k], cu_seqlens[k + 1]), each from its own initial state
 * (t.initial_states (nseq, h, p, N), NULL: zeros) to its own final state
 * (t.final_state (nseq, h, p, N)). Chunks of t.s.chunk steps restart at each
 * sequence's first step, so none straddles two; chunk_states holds the state
 * after each chunk of each sequence, in order (sequence 0's chunks, then
 * sequence 1's, ...): what a server keeps to reuse a shared prefix.
 * t.s.nseq equals nseq. */
typedef struct {
    SsdTensors t;
    int64_t nseq;
    const int32_t *cu_seqlens;  // (nseq + 1,) int32: 0, the end of sequence 0, ..., L
    float *chunk_states;        // (nchunks, h, p, N) fp32, written: nchunks = Σ ceil(length / chunk)
} SsdPacked;

/* Element counts of each tensor. */
static inline int64_t ssd_n_x(const SsdShape *s) { return s->batch * s->seqlen * s->heads * s->headdim; }
static inline int64_t ssd_n_dt(const SsdShape *s) { return s->batch * s->seqlen * s->heads; }
static inline int64_t ssd_n_bc(const SsdShape *s) { return s->batch * s->seqlen * s->groups * s->dstate; }
static inline int64_t ssd_n_state(const SsdShape *s) { return s->batch * s->heads * s->headdim * s->dstate; }
static inline int64_t ssd_n_chunks(const SsdShape *s) { return (s->seqlen + s->chunk - 1) / s->chunk; }

/* Group of head hi: the official code uses hi / (h / g). */
static inline int64_t ssd_group_of(const SsdShape *s, int64_t hi) { return hi / (s->heads / s->groups); }

#endif
