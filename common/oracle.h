/* The fp64 oracle: plain loops that mirror the official reference functions
 * line by line, accumulating in double. Every chapter checks against it.
 * All inputs are fp32 host arrays (fp16 chapters pass their fp16-rounded
 * values); outputs are fp64. */
#ifndef ORACLE_H
#define ORACLE_H

#include <stdbool.h>
#include <stdint.h>

#include "bidir.h"
#include "decode.h"
#include "scan.h"
#include "ssd.h"

/* ---- scalar pieces ---- */

/* softplus as the official kernels apply it: x <= 20 ? log1p(exp(x)) : x */
double oracle_softplus(double x);

/* Discretizing dx/dt = a*x + b*u over a step dt for a diagonal entry a:
 *   exact ZOH:  abar = exp(dt*a), bbar = (exp(dt*a) - 1) / a * b  (dt*b at a = 0)
 *   Euler-B:    abar = exp(dt*a), bbar = dt*b  (the rule every official kernel uses)
 *   Euler:      abar = 1 + dt*a,  bbar = dt*b */
typedef enum { DISC_ZOH, DISC_EULER_B, DISC_EULER } DiscRule;
void oracle_discretize(DiscRule rule, double a, double b, double dt, double *abar, double *bbar);

/* ---- Mamba-1 selective scan (selective_scan_ref) ---- */

/* One (batch bi, channel c) row: y[L] and state[N] (final h). t holds fp32
 * host arrays (u, delta, z, B, C as float). */
void oracle_scan_row(const ScanTensors *t, int64_t bi, int64_t c, double *y, double *state);
/* Every row: y (b,d,L) fp64, last_state (b,d,N) fp64. */
void oracle_scan(const ScanTensors *t, double *y, double *last_state);

/* ---- Mamba-2 SSD (mamba_chunk_scan_combined semantics) ---- */

/* SsdTensors (ssd.h) with fp32 host arrays; y and final_state unused. */

/* y (b,L,h,p) fp64, final_state (b,h,p,N) fp64 (may be NULL). Computed as the
 * Mamba-1 scan through the official Mamba-2 -> Mamba-1 mapping. chunk only
 * matters to chunked algorithms; the result does not depend on it. */
void oracle_ssd(const SsdTensors *t, double *y, double *final_state);
/* One channel (head hi, row pi) of batch bi: y (L,) fp64 (y[bi, :, hi, pi])
 * and its final state (N,) fp64. */
void oracle_ssd_channel(const SsdTensors *t, int64_t bi, int64_t hi, int64_t pi, double *y, double *state);

/* ---- Bidirectional Mamba-2 (BidirTensors, common/bidir.h) ---- */

/* Default: y = SS(x) + flip(SS(flip(x))) + D*x.
 * Hydra:   y = shift(SS_f(x)) + flip(shift(SS_b(flip(x)))) + D*x.
 * Each direction from its own initial state; then y *= silu(z) when z is
 * given. t holds fp32 host tensors; y is (b,L,h,p) fp64. */
void oracle_bidir(const BidirTensors *t, double *y, double *scale);
/* One channel (bi, hi, pi): y (L,) fp64 in time order. y and scale may be
 * NULL; scale (like y) gets Σ|term| of each output, |forward| + |backward| +
 * |D·x| (times |silu(z)|): where the two directions nearly cancel, an fp16
 * kernel's error is a fraction of these, not of |y|. */
void oracle_bidir_channel(const BidirTensors *t, int64_t bi, int64_t hi, int64_t pi, double *y, double *scale);

/* ---- Decode step (selective_state_update), both forms, T tokens ---- */

/* t holds fp32 host tensors (DecodeTensors, common/decode.h); t->state is
 * read, never written. y (b, T, width) fp64 and the state after the last
 * token, fp64, the shape of t->state. */
void oracle_decode(const DecodeTensors *t, double *y, double *state_out);
/* One state row (M1: channel bi*d + c; M2: (bi*h + hi)*p + pi) over the T
 * tokens: y (T,) fp64 and its final state (N,) fp64. */
void oracle_decode_row(const DecodeTensors *t, int64_t row, double *y, double *state);

#endif
