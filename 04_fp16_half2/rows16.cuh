/* 16-bit rows of u, delta, z, B, C and y (fp16, bf16): the pair trait
 * (pair16.cuh) and when a row's 8 steps can move as one 16-byte access. */
#ifndef ROWS16_CUH
#define ROWS16_CUH

#include <stdint.h>

#include "pair16.cuh"
#include "scan.h"

/* 8 steps of a 16-bit row can move as one 16-byte access when L % 8 == 0 and
 * every (..., L) tensor starts on 16 bytes (then every row does). */
static inline bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }
static inline bool rows16_aligned(const ScanTensors *t) {
    return t->s.seqlen % 8 == 0 && aligned16(t->u) && aligned16(t->delta) && aligned16(t->B) && aligned16(t->C) &&
           aligned16(t->y) && (t->z == NULL || aligned16(t->z));
}

#endif
