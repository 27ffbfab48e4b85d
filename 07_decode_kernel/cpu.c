/* 07_decode_kernel, CPU: the decode step as selective_state_update_ref
 * (mamba_ssm/ops/triton/selective_state_update.py) writes it, one token after
 * another, fp32 arithmetic.
 *
 * One token touches every state element once: read, scaled by exp(Δ·A),
 * plus Δ·B·x, written back, and dotted with C into y. The state is the only
 * large tensor (M1 (b, d, N), M2 (b, h, p, N)); the per-token tensors are
 * a row (x, z, y), a scalar (dt) or N values (B, C) per state row.
 *
 * The state lives in state_out: it is copied there first (unless the two are
 * one buffer), then every token updates it in place, so token t + 1 starts
 * from token t's state.
 *
 * Mamba-2 form: Mamba2.step repeats A, dt, D, dt_bias over the head's p rows
 * (and A over N) before calling the reference, so one Δ, dA and D serve the
 * whole head; computed once per (b, t, h) here. */
#include "cpu.h"

#include <math.h>
#include <string.h>

#include "codes8.h"
#include "host_math.h"

/* silu(z) = z·sigmoid(z). */
static float silu_f(float z) { return z / (1.0f + expf(-z)); }

/* Δ of one row (M1) or head (M2) at one token. */
static float delta_of(const DecodeShape *s, float dt, const float *dt_bias, int64_t k) {
    // dt = dt + dt_bias
    if (dt_bias) dt += dt_bias[k];
    // dt = F.softplus(dt) if dt_softplus else dt
    return s->softplus ? softplus_f32(dt) : dt;
}

/* Mamba-1 form, token t of batch entry bi on its state rows `state_b` (d, N):
 * A (d, N), B/C (N,) shared by every channel. */
static void token_m1(const DecodeTensors *t, int64_t bi, int64_t tok, float *state_b) {
    const DecodeShape *s = &t->s;
    const int64_t d = s->dim, N = s->dstate;
    const int64_t at = (bi * s->tokens + tok) * d;  // x/dt/z/y[bi, tok, 0]
    const float *x = (const float *)t->x + at;      // (d,) fp32
    const float *dt = (const float *)t->dt + at;    // (d,) fp32
    const float *z = t->z ? (const float *)t->z + at : NULL;  // (d,) fp32
    const float *B = (const float *)t->B + (bi * s->tokens + tok) * N;  // (N,) fp32
    const float *C = (const float *)t->C + (bi * s->tokens + tok) * N;  // (N,) fp32
    float *y = (float *)t->y + at;                                     // (d,) fp32, written
    for (int64_t c = 0; c < d; c++) {
        float *state = state_b + c * N;  // (N,) fp32, updated
        const float *A = t->A + c * N;                   // (N,) fp32
        const float delta = delta_of(s, dt[c], t->dt_bias, c);
        float out = 0.0f;
        for (int64_t n = 0; n < N; n++) {
            // dA = torch.exp(rearrange(dt, "b d -> b d 1") * A)
            const float dA = expf(delta * A[n]);
            // dB = rearrange(dt, "b d -> b d 1") * rearrange(B, "b n -> b 1 n")
            const float dB = delta * B[n];
            // state.copy_(state * dA + dB * rearrange(x, "b d -> b d 1"))
            state[n] = state[n] * dA + dB * x[c];
            // out = torch.einsum("bdn,bn->bd", state.to(C.dtype), C)
            out += state[n] * C[n];
        }
        // if D is not None: out += (x * D).to(out.dtype)
        if (t->D) out += x[c] * t->D[c];
        // return (out if z is None else out * F.silu(z)).to(x.dtype)
        if (z) out *= silu_f(z[c]);
        y[c] = out;
    }
}

/* Mamba-2 form, token t of batch entry bi on its state rows `state_b` (h, p,
 * N): one Δ, dA, D per head, B/C (g, N), head hi reading group hi / (h / g). */
static void token_m2(const DecodeTensors *t, int64_t bi, int64_t tok, float *state_b) {
    const DecodeShape *s = &t->s;
    const int64_t H = s->heads, P = s->headdim, G = s->groups, N = s->dstate;
    const int64_t at = (bi * s->tokens + tok) * H * P;  // x/z/y[bi, tok, 0, 0]
    const float *x = (const float *)t->x + at;          // (h, p) fp32
    const float *z = t->z ? (const float *)t->z + at : NULL;  // (h, p) fp32
    const float *dt = (const float *)t->dt + (bi * s->tokens + tok) * H;  // (h,) fp32
    float *y = (float *)t->y + at;                                       // (h, p) fp32, written
    for (int64_t hi = 0; hi < H; hi++) {
        // B = repeat(B, "b g n -> b (g h) n", h=nheads // ngroups)
        const int64_t bc = ((bi * s->tokens + tok) * G + decode_group_of(s, hi)) * N;
        const float *B = (const float *)t->B + bc;  // (N,) fp32
        const float *C = (const float *)t->C + bc;  // (N,) fp32
        const float delta = delta_of(s, dt[hi], t->dt_bias, hi);
        // dA = torch.exp(rearrange(dt, "b h d -> b h d 1") * A)
        const float dA = expf(delta * t->A[hi]);
        for (int64_t pi = 0; pi < P; pi++) {
            const int64_t col = hi * P + pi;
            float *state = state_b + (hi * P + pi) * N;  // (N,) fp32, updated
            float out = 0.0f;
            for (int64_t n = 0; n < N; n++) {
                // dB = rearrange(dt, "b h d -> b h d 1") * rearrange(B, "b h n -> b h 1 n")
                const float dB = delta * B[n];
                // state.copy_(state * dA + dB * rearrange(x, "b h d -> b h d 1"))
                state[n] = state[n] * dA + dB * x[col];
                // out = torch.einsum("bhdn,bhn->bhd", state.to(C.dtype), C)
                out += state[n] * C[n];
            }
            // if D is not None: out += (x * D).to(out.dtype)
            if (t->D) out += x[col] * t->D[hi];
            // out = (out if z is None else out * F.silu(z)).to(x.dtype)
            if (z) out *= silu_f(z[col]);
            y[col] = out;
        }
    }
}

void decode_step_cpu(const DecodeTensors *t, void *workspace) {
    const DecodeServing sv = {*t, 0, NULL, NULL};
    decode_step_cpu_serving(&sv, workspace);
}

/* The pool is copied to state_out (slots no entry names keep their state),
 * then each batch entry's tokens run on its slot's rows in place; after each
 * token those rows are copied to the intermediate states. Padding (a
 * negative slot) writes zeros to y and the intermediate states. */
void decode_step_cpu_serving(const DecodeServing *sv, void *workspace) {
    (void)workspace;
    const DecodeTensors *t = &sv->t;
    const DecodeShape *s = &t->s;
    const int64_t W = decode_width(s), T = s->tokens, block = W * s->dstate;  // state elements of one entry
    if (t->state_out != t->state)
        memcpy(t->state_out, t->state, sizeof(float) * (size_t)decode_pool_values(sv));
    for (int64_t bi = 0; bi < s->batch; bi++) {
        const int64_t slot = sv->state_batch_indices ? sv->state_batch_indices[bi] : bi;
        float *inter = sv->intermediate_states ? sv->intermediate_states + bi * T * block : NULL;  // (T, W, N)
        if (slot < 0) {
            memset((float *)t->y + bi * T * W, 0, sizeof(float) * (size_t)(T * W));
            if (inter) memset(inter, 0, sizeof(float) * (size_t)(T * block));
            continue;
        }
        float *state_b = t->state_out + slot * block;  // (W, N) fp32: the entry's rows
        for (int64_t tok = 0; tok < T; tok++) {
            if (s->form == DECODE_M1) token_m1(t, bi, tok, state_b);
            else token_m2(t, bi, tok, state_b);
            if (inter) memcpy(inter + tok * block, state_b, sizeof(float) * (size_t)block);
        }
    }
}

/* ---------------------------------------------- the state in 8-bit codes */

/* Versions 13-16: the step with the state in 8-bit codes and an fp32 scale a
 * row (codes8.h). What it buys: a quarter of the state's bytes, at the
 * accuracy of the README's table; the C form of versions 17-20. A batch
 * entry's rows are decoded into fp32 (the workspace), each token updates
 * them as decode_step_cpu does and writes y from those fp32 values, then
 * rounds each row to codes (a new scale from its largest value; a
 * stochastic rounding keyed on (slot, token, the element's place in the
 * slot)) and decodes them back, so that the next token starts from what
 * memory holds: one launch of T tokens stores what T launches of one
 * would, code for code. */
static void step_codes8(const DecodeServing *sv, float *work /* (W, N) fp32: the entry's rows decoded */,
                        Codes8 format, Rounding rounding) {
    const DecodeTensors *t = &sv->t;
    const DecodeShape *s = &t->s;
    const int64_t W = decode_width(s), T = s->tokens, N = s->dstate;
    const int64_t pool = decode_pool_values(sv) / N;                 // state rows of the pool
    uint8_t *codes = (uint8_t *)t->state_out;                      // (pool, N) codes, updated
    float *scales = (float *)((char *)t->state_out + codes8_scales_at(pool * N));  // (pool,) fp32, updated
    if ((const void *)t->state != (void *)t->state_out) memcpy(t->state_out, t->state, codes8_bytes(pool * N, N));
    uint8_t *inter = (uint8_t *)sv->intermediate_states;  // (b, T, W, N) codes, written; NULL when not asked
    float *inter_scales = inter ? (float *)(inter + codes8_scales_at(s->batch * T * W * N)) : NULL;  // (b, T, W) fp32
    for (int64_t bi = 0; bi < s->batch; bi++) {
        const int64_t slot = sv->state_batch_indices ? sv->state_batch_indices[bi] : bi;
        if (slot < 0) {  // padding: y and the intermediate states zeros (codes 0, scale 0)
            memset((float *)t->y + bi * T * W, 0, sizeof(float) * (size_t)(T * W));
            if (inter) {
                memset(inter + bi * T * W * N, 0, (size_t)(T * W * N));
                memset(inter_scales + bi * T * W, 0, sizeof(float) * (size_t)(T * W));
            }
            continue;
        }
        for (int64_t c = 0; c < W; c++)
            codes8_load_row(format, codes + (slot * W + c) * N, scales[slot * W + c], N, work + c * N);
        for (int64_t tok = 0; tok < T; tok++) {
            if (s->form == DECODE_M1) token_m1(t, bi, tok, work);
            else token_m2(t, bi, tok, work);
            for (int64_t c = 0; c < W; c++) {
                const int64_t r = slot * W + c;  // the row in the pool
                scales[r] = codes8_store_row(format, work + c * N, N, rounding, (uint64_t)slot,
                                              (uint64_t)(s->first_token + tok), (uint64_t)(c * N), codes + r * N);
                codes8_load_row(format, codes + r * N, scales[r], N, work + c * N);
                if (inter) {
                    memcpy(inter + ((bi * T + tok) * W + c) * N, codes + r * N, (size_t)N);
                    inter_scales[(bi * T + tok) * W + c] = scales[r];
                }
            }
        }
    }
}

size_t decode_step_cpu_codes8_workspace(const DecodeShape *s) {
    return sizeof(float) * (size_t)(decode_width(s) * s->dstate);
}

void decode_step_cpu_state_int8_serving(const DecodeServing *sv, void *workspace) {
    step_codes8(sv, workspace, CODES_INT8, ROUND_NEAREST);
}
void decode_step_cpu_state_int8_sr_serving(const DecodeServing *sv, void *workspace) {
    step_codes8(sv, workspace, CODES_INT8, ROUND_STOCHASTIC);
}
void decode_step_cpu_state_fp8_serving(const DecodeServing *sv, void *workspace) {
    step_codes8(sv, workspace, CODES_E4M3, ROUND_NEAREST);
}
void decode_step_cpu_state_fp8_sr_serving(const DecodeServing *sv, void *workspace) {
    step_codes8(sv, workspace, CODES_E4M3, ROUND_STOCHASTIC);
}

void decode_step_cpu_state_int8(const DecodeTensors *t, void *workspace) {
    const DecodeServing sv = {*t, 0, NULL, NULL};
    decode_step_cpu_state_int8_serving(&sv, workspace);
}
void decode_step_cpu_state_int8_sr(const DecodeTensors *t, void *workspace) {
    const DecodeServing sv = {*t, 0, NULL, NULL};
    decode_step_cpu_state_int8_sr_serving(&sv, workspace);
}
void decode_step_cpu_state_fp8(const DecodeTensors *t, void *workspace) {
    const DecodeServing sv = {*t, 0, NULL, NULL};
    decode_step_cpu_state_fp8_serving(&sv, workspace);
}
void decode_step_cpu_state_fp8_sr(const DecodeTensors *t, void *workspace) {
    const DecodeServing sv = {*t, 0, NULL, NULL};
    decode_step_cpu_state_fp8_sr_serving(&sv, workspace);
}
