/* 07_decode_kernel, CPU: the decode step (selective_state_update) in plain C,
 * fp32 host tensors (DecodeTensors, ops/decode/decode.h), both forms, T tokens of
 * one sequence per batch entry, the state carried from token to token. */
#ifndef DECODE_CPU_H
#define DECODE_CPU_H

#include <stddef.h>

#include "decode.h"

/* Per token, per state row: Δ, state = state·exp(Δ·A) + Δ·B·x, y = state·C
 * + D·x, y *= silu(z). The state is updated in t->state_out (which may be
 * t->state: in place). No workspace: `workspace` is not used (may be NULL). */
void decode_step_cpu(const DecodeTensors *t, void *workspace);
/* The same on a server's problem (DecodeServing, decode.h): the states in a
 * pool of slots, and the state after every token. */
void decode_step_cpu_serving(const DecodeServing *t, void *workspace);

/* 13-16: the same with the state in 8-bit codes and an fp32 scale a row
 * (codes8.h; the tensors otherwise fp32): int8 or fp8 e4m3, rounded to the
 * nearest or stochastically, after every token. Workspace: one batch
 * entry's state in fp32. */
size_t decode_step_cpu_codes8_workspace(const DecodeShape *s);
void decode_step_cpu_state_int8(const DecodeTensors *t, void *workspace);
void decode_step_cpu_state_int8_serving(const DecodeServing *t, void *workspace);
void decode_step_cpu_state_int8_sr(const DecodeTensors *t, void *workspace);
void decode_step_cpu_state_int8_sr_serving(const DecodeServing *t, void *workspace);
void decode_step_cpu_state_fp8(const DecodeTensors *t, void *workspace);
void decode_step_cpu_state_fp8_serving(const DecodeServing *t, void *workspace);
void decode_step_cpu_state_fp8_sr(const DecodeTensors *t, void *workspace);
void decode_step_cpu_state_fp8_sr_serving(const DecodeServing *t, void *workspace);

#endif
