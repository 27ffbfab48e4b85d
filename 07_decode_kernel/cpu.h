/* 07_decode_kernel, CPU: the decode step (selective_state_update) in plain C,
 * fp32 host tensors (DecodeTensors, ops/decode/decode.h), both forms, T tokens of
 * one sequence per batch entry, the state carried from token to token. */
#ifndef DECODE_CPU_H
#define DECODE_CPU_H

#include "decode.h"

/* Per token, per state row: Δ, state = state·exp(Δ·A) + Δ·B·x, y = state·C
 * + D·x, y *= silu(z). The state is updated in t->state_out (which may be
 * t->state: in place). No workspace: `workspace` is not used (may be NULL). */
void decode_step_cpu(const DecodeTensors *t, void *workspace);
/* The same on a server's problem (DecodeServing, decode.h): the states in a
 * pool of slots, and the state after every token. */
void decode_step_cpu_serving(const DecodeServing *t, void *workspace);

#endif
