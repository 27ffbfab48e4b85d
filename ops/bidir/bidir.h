/* Bidirectional Mamba-2 (chapter 06): shapes, flags and tensors, shared by
 * the chapter, the oracle and the kernels (C and CUDA both include this).
 * Official layouts (mamba_chunk_scan_combined's), C order.
 *
 * Default form:  y = SS(x) + flip(SS(flip(x))) + D·x
 * Hydra form:    y = shift(SS_f(x)) + flip(shift(SS_b(flip(x)))) + D·x,
 *                shift(s)_t = s_{t-1}, shift(s)_0 = 0, the backward direction
 *                with its own dt_bwd, B_bwd, C_bwd (given in original time order)
 * SS is the Mamba-2 scan without D and z; flip reverses time in x, dt, B, C;
 * then y *= silu(z) when z is given. The forward direction starts from
 * initial_states, the backward one (at t = L-1, walking back) from
 * initial_states_bwd, each zero when not given. */
#ifndef BIDIR_H
#define BIDIR_H

#include <stdbool.h>

#include "ssd.h"

/* s: b, L, h, p, g, N, chunk and the flags of the SSD problem (has_h0: both
 * directions' initial states given); hydra: the Hydra form. */
typedef struct {
    SsdShape s;
    bool hydra;
} BidirShape;

/* One forward's tensors, host or device pointers (the version says which).
 * x, dt, z, B, C, the backward dt/B/C and y hold fp32 or fp16 (uint16_t bits)
 * per the version's dtype; A, D, dt_bias and the states are fp32. A pointer
 * is NULL exactly when its flag is off. */
typedef struct {
    BidirShape s;
    SSD_INPUT_MEMBERS;                // x, dt, A, B, C, D, z, dt_bias as ssd.h's; initial_states the forward h0
    const float *initial_states_bwd;  // (b, h, p, N)  fp32, backward h0, NULL without h0
    const void *dt_bwd;               // (b, L, h)     Hydra only, else NULL
    const void *B_bwd;                // (b, L, g, N)  Hydra only, else NULL
    const void *C_bwd;                // (b, L, g, N)  Hydra only, else NULL
    void *y;                          // (b, L, h, p)  fp32 | fp16, written
} BidirTensors;

/* The SSD problem of one direction: the Mamba-2 scan without D and z (the
 * sum of both directions gets them once), the initial state if given. */
static inline SsdShape bidir_direction_shape(const SsdShape *s) {
    SsdShape d = *s;
    d.has_z = false;
    d.has_D = false;
    d.D_per_channel = false;
    return d;
}

#endif
