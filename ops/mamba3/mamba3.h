/* Mamba-3 SISO (chapter 08): shapes, flags and tensors, shared by the
 * chapter, the oracle and the kernels (C and CUDA both include this).
 * Official layouts (mamba3_siso_combined's), C order.
 *
 * Per head, with λ_t = σ(trap_t), α_t = exp(adt_t) and θ the angle state:
 *   θ_t = (θ_{t-1} + π·tanh(angles_t)·dt_t) mod 2π           (S angles)
 *   q̃_t = R(θ_t)(q_t + q_bias),  k̃_t = R(θ_t)(k_t + k_bias)  R rotates pairs (2i, 2i+1), i < S
 *   H_t = α_t H_{t-1} + (1 - λ_t) dt_t α_t v_{t-1} k̃_{t-1}ᵀ + λ_t dt_t v_t k̃_tᵀ
 *   y_t = H_t q̃_t + D v_t,  then y_t *= silu(z_t)
 * The trapezoid's two endpoints: λ = 1 is Mamba-2's rule (H_t = α_t H_{t-1} +
 * dt_t v_t k̃_tᵀ). q and k belong to a qk head (g of them, head i uses i /
 * (h / g)), v, z and y to a head. Four states carry a sequence on: θ, H, the
 * last rotated key k̃ and the last v. */
#ifndef MAMBA3_H
#define MAMBA3_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* b batch, L sequence length, h heads, g qk heads (dividing h), p headdim
 * of v, N headdim of q and k (the state is p x N), S rotated angle pairs
 * (2S <= N: the dims from 2S up are not rotated), chunk the chunk Q of the
 * chunked forms. */
typedef struct {
    int64_t batch, seqlen, heads, heads_qk, headdim, dstate, angles, chunk;  // chunk: Q of the chunked forms
    bool has_z, has_D, has_states;  // states: the four initial states given
    int64_t nseq;                   // a packed problem's sequences (cu_seqlens), 0 otherwise
} Mamba3Shape;

/* One forward's tensors, host or device pointers (the version says which).
 * q, k, v, z and y hold fp32 or 16-bit values per the version's dtype, and
 * so do the SSM state and its final value in a DT_FP16_STATE16 or
 * DT_BF16_STATE16 version (the decode step's 16-bit state); the rest is fp32. A pointer is NULL exactly when its flag is off. n, the
 * states' first dimension, is the batch, or the sequences of a packed
 * problem (batch 1, its sequences end to end on the row, each from its own
 * states to its own final states), or a pool's slots (Mamba3Pool). */
typedef struct {
    Mamba3Shape s;
    const void *q, *k;                // (b, L, g, N)  fp32 | 16-bit
    const void *v;                    // (b, L, h, p)  fp32 | 16-bit
    const void *z;                    // (b, L, h, p)  fp32 | 16-bit, NULL without z
    const float *adt, *dt, *trap;     // (b, h, L)     fp32: dt·A, dt, λ before the sigmoid
    const float *q_bias, *k_bias;     // (h, N)        fp32
    const float *angles;              // (b, L, h, S)  fp32
    const float *D;                   // (h,)          fp32, NULL without D
    const float *angle_state;         // (n, h, S)     fp32, NULL without states
    const float *ssm_state;           // (n, h, p, N)  fp32 (16-bit: DT_*_STATE16), NULL without states
    const float *k_state;             // (n, h, N)     fp32, NULL without states
    const float *v_state;             // (n, h, p)     fp32, NULL without states
    const int32_t *cu_seqlens;        // (nseq + 1,)   int32, NULL unless packed
    void *y;                          // (b, L, h, p)  fp32 | 16-bit, written
    float *final_angle_state;         // (n, h, S)     fp32, written
    float *final_ssm_state;           // (n, h, p, N)  fp32 (16-bit: DT_*_STATE16), written
    float *final_k_state;             // (n, h, N)     fp32, written
    float *final_v_state;             // (n, h, p)     fp32, written
} Mamba3Tensors;

/* What a server adds (07's --slots): the four states live in a pool of
 * slots, every state (slots, h, ...) and the final states too; batch entry b
 * reads and writes slot state_batch_indices[b], a negative index marking a
 * padding entry that touches no state (its y is zeros). Slots no entry
 * names keep their states. */
typedef struct {
    Mamba3Tensors t;
    int64_t slots;                       // S; 0: no pool, state n is sequence n's
    const int32_t *state_batch_indices;  // (b,) int32, NULL without a pool
} Mamba3Pool;

/* The states of sequence n: their row n, or in a pool its slot (negative:
 * a padding entry, no state). */
static inline int64_t mamba3_state_of(const Mamba3Pool *p, int64_t n) {
    return p->state_batch_indices ? p->state_batch_indices[n] : n;
}

/* One angle advanced by one step, in fp32, reduced mod 2π at every step into
 * [0, 2π) (the official step reference's order; 08's lesson measures its
 * drift): versions 1 to 4 and 7 to 12. C and CUDA alike.
 * Angle_State = Angle_State + angles * dt;  Angle_State = Angle_State - TWO_PI * floor(Angle_State / TWO_PI) */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline float mamba3_angle_step(float theta, float angle, float dt) {
    const float two_pi = 6.283185307179586f;
    const float a = fmodf(theta + (two_pi / 2) * tanhf(angle) * dt, two_pi);
    return a < 0.0f ? a + two_pi : a;
}

/* The steps [*t0, *t1) of sequence n on its row *row: batch entry n whole,
 * or a packed row's sequence n (cu_seqlens). C and CUDA alike. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline void mamba3_sequence(const Mamba3Tensors *t, int64_t n, int64_t *row, int64_t *t0, int64_t *t1) {
    *row = n, *t0 = 0, *t1 = t->s.seqlen;
    if (t->s.nseq) *row = 0, *t0 = t->cu_seqlens[n], *t1 = t->cu_seqlens[n + 1];
}

#endif
