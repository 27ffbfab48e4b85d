/* A server's state slots (07's decode step, 08's Mamba-3 step): a pool of S
 * states, batch entry b reading and writing slot state_batch_indices[b]
 * (negative: a padding entry that touches no state). The indices the checks
 * draw, and the check of indices a --load folder gives. */
#ifndef SLOTS_H
#define SLOTS_H

#include <stdint.h>

/* idx (batch,) int32: a fixed shuffle of the S slots (a 64-bit LCG, so that
 * every machine draws the same), entry b taking its b-th, every third entry
 * padding (-1). */
void slot_indices_fill(int32_t *idx, int64_t batch, int64_t slots);

/* Loaded indices name slots of the pool, none twice (negative: padding);
 * else one line and exit 2. */
void slot_indices_check(const int32_t *idx, int64_t batch, int64_t slots);

#endif
