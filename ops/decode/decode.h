/* The decode step (selective_state_update, mamba_ssm/ops/triton/
 * selective_state_update.py) in both forms, over T consecutive tokens of one
 * sequence per batch entry: shapes, flags and tensors shared by chapter 07,
 * the oracle and the kernels (C and CUDA both include this). Official
 * layouts, C order; with T = 1 every tensor has the official shape (the T
 * axis of length 1 changes no offset).
 *
 * Per token, per state row (Mamba-1: channel (b, c); Mamba-2: (b, h, p)):
 *   Δ = dt + dt_bias (softplus when dt_softplus)
 *   state = state·exp(Δ·A) + Δ·B·x        (N values)
 *   y = Σ_n state·C + D·x;  y *= silu(z) when z is given */
#ifndef DECODE_H
#define DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { DECODE_M1 = 1, DECODE_M2 = 2 };

/* form DECODE_M1: dim d channels, A (d, N), B/C shared by every channel.
 * form DECODE_M2: heads h of headdim p, one A, dt, D and dt_bias per head,
 * B/C in g groups (head i uses group i / (h / g)). tokens T >= 1. */
typedef struct {
    int form;
    int64_t batch, tokens, dim, heads, headdim, groups, dstate;
    bool has_z, has_D, has_bias, softplus;
    /* The position of token 0 in its sequence, which keys a stochastic
     * rounding of an 8-bit state (codes8.h): 0, or token k of a run split
     * into one-token launches. */
    int64_t first_token;
} DecodeShape;

/* One launch's tensors, host or device pointers (the version says which).
 * x, dt, z, B, C, y hold fp32, fp16 or bf16 (uint16_t bits) per the
 * version's dtype; A, D and dt_bias are fp32, and so is the state except in
 * a DT_FP16_STATE16 (fp16 bits) or DT_BF16_STATE16 (bf16 bits) version, and
 * a DT_FP32_STATE_INT8 or _E4M3 one: 8-bit codes, then the rows' fp32
 * scales (codes8.h; a row is a state row's N values). A
 * pointer is NULL exactly when its flag in `s` is off (z, D, dt_bias).
 * state_out may equal state: every version reads a state element before it
 * writes it (in place). */
typedef struct {
    DecodeShape s;
    const float *state;     // M1 (b, d, N)     M2 (b, h, p, N)  fp32 (16-bit: DT_*_STATE16; 8-bit codes: DT_*_STATE_*8), before the first token
    const void *x;          // M1 (b, T, d)     M2 (b, T, h, p)  fp32 | fp16 | bf16
    const void *dt;         // M1 (b, T, d)     M2 (b, T, h)     fp32 | fp16 | bf16
    const float *A;         // M1 (d, N)        M2 (h,)          fp32
    const void *B;          // M1 (b, T, N)     M2 (b, T, g, N)  fp32 | fp16 | bf16
    const void *C;          // M1 (b, T, N)     M2 (b, T, g, N)  fp32 | fp16 | bf16
    const float *D;         // M1 (d,)          M2 (h,)          fp32, NULL without D
    const void *z;          // like x, NULL without z
    const float *dt_bias;   // M1 (d,)          M2 (h,)          fp32, NULL without bias
    void *y;                // like x, written
    float *state_out;       // like state, written: the state after the last token
} DecodeTensors;

/* What a server adds (chapter 07's --slots and --intermediate). The states
 * live in a pool of S slots, t.state and t.state_out (S, d, N) | (S, h, p, N):
 * batch entry b reads and writes slot state_batch_indices[b]; a negative
 * index marks padding: the entry reads and writes no state, and its y and
 * intermediate states are zeros. Slots no entry names keep their state.
 * intermediate_states holds the state after every token (speculative
 * decoding: the caller keeps the state of the last accepted draft token). */
typedef struct {
    DecodeTensors t;
    int64_t slots;                       // S; 0: no pool, state b's rows are batch entry b's
    const int32_t *state_batch_indices;  // (b,) int32, NULL without a pool
    float *intermediate_states;          // M1 (b, T, d, N)  M2 (b, T, h, p, N) the state's dtype, written; NULL when not asked
} DecodeServing;

/* State rows (independent recurrences): M1 b·d, M2 b·h·p; each is N floats. */
static inline int64_t decode_rows(const DecodeShape *s) {
    return s->form == DECODE_M1 ? s->batch * s->dim : s->batch * s->heads * s->headdim;
}
/* Rows per batch entry and per token: the width of x, z and y. */
static inline int64_t decode_width(const DecodeShape *s) {
    return s->form == DECODE_M1 ? s->dim : s->heads * s->headdim;
}
/* Values of a server's state (the pool: S slots, or one state a batch
 * entry), (S | b) · rows per entry · N. */
static inline int64_t decode_pool_values(const DecodeServing *sv) {
    return (sv->slots ? sv->slots : sv->t.s.batch) * decode_width(&sv->t.s) * sv->t.s.dstate;
}
/* Group of head hi (Mamba-2): the official code uses hi / (h / g). */
static inline int64_t decode_group_of(const DecodeShape *s, int64_t hi) { return hi / (s->heads / s->groups); }

#endif
