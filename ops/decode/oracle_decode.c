/* The fp64 oracle of the decode step (selective_state_update_ref, mamba_ssm/ops/triton/selective_state_update.py). */
#include "op_decode.h"

#include <math.h>
#include <stdlib.h>

/* ---- Decode step ---- */

/* Δ of head (M2) or channel (M1) hi of batch entry bi at token k. */
static double row_delta(const DecodeTensors *t, int64_t bi, int64_t k, int64_t hi) {
    const DecodeShape *s = &t->s;
    const int64_t dt_width = s->form == DECODE_M1 ? s->dim : s->heads;
    double dt = ((const float *)t->dt)[(bi * s->tokens + k) * dt_width + hi];
    // dt = dt + dt_bias
    if (t->dt_bias) dt += (double)t->dt_bias[hi];
    // dt = F.softplus(dt) if dt_softplus else dt
    return s->softplus ? oracle_softplus(dt) : dt;
}

/* What row c (channel, M1; hi·p + pi, M2) reads: dt, D and dt_bias of hi
 * (its head, M2, or channel, M1), its A ((N,) for M1, one value for M2), and
 * its B and C at bc_off in rows of bc_width. */
typedef struct {
    int64_t hi, bc_width, bc_off;
    const float *A;
} RowReads;

static RowReads row_reads(const DecodeShape *s, const float *A, int64_t c) {
    RowReads r;
    r.hi = s->form == DECODE_M2 ? c / s->headdim : c;
    r.A = A + (s->form == DECODE_M1 ? c * s->dstate : r.hi);
    r.bc_width = s->form == DECODE_M1 ? s->dstate : s->groups * s->dstate;
    r.bc_off = s->form == DECODE_M1 ? 0 : decode_group_of(s, r.hi) * s->dstate;
    return r;
}

/* One state row over the T tokens, from state0. Mamba-1 (selective_state_update_ref with
 * state (b, d, N)): channel c of batch entry bi, its own A row, dt, D and dt_bias; B and C
 * per batch entry. Mamba-2: the tied form that Mamba2.step
 * (mamba_ssm/modules/mamba2.py) builds before calling selective_state_update:
 *   A = repeat(A, "h -> h p n", p=self.headdim, n=self.d_state).to(dtype=torch.float32)
 *   dt = repeat(dt, "b h -> b h p", p=self.headdim)
 *   dt_bias = repeat(self.dt_bias, "h -> h p", p=self.headdim)
 *   D = repeat(self.D, "h -> h p", p=self.headdim)
 * so one dt, A, D and dt_bias serve every p of head hi = row / p % h, and
 *   B = repeat(B, "b g n -> b (g h) n", h=nheads // ngroups)
 * picks B and C of the head's group. Token k reads x, dt, z, B, C at k and
 * writes y at k; the state carries from one token to the next in fp64.
 * terms[k] (when not NULL): the magnitude of y's terms, (Σ_n |state·C| +
 * |x·D|)·|silu(z)|. */
void oracle_decode_row_from(const DecodeTensors *t, int64_t bi, int64_t c, const float *state0, double *y,
                            double *state, double *per_token, double *terms) {
    const DecodeShape *s = &t->s;
    int64_t T = s->tokens, N = s->dstate, W = decode_width(s);  // c: channel (M1) or hi·p + pi (M2)
    const RowReads rr = row_reads(s, t->A, c);
    const int64_t hi = rr.hi, bc_width = rr.bc_width, bc_off = rr.bc_off;
    const float *A = rr.A;
    const float *x = t->x, *z = t->z, *B = t->B, *C = t->C;
    for (int64_t n = 0; n < N; n++) state[n] = state0[n];
    for (int64_t k = 0; k < T; k++) {
        int64_t at = (bi * T + k) * W + c;                            // x, z, y
        const float *Bk = B + (bi * T + k) * bc_width + bc_off;       // (N,)
        const float *Ck = C + (bi * T + k) * bc_width + bc_off;       // (N,)
        double xv = x[at];
        double dt = row_delta(t, bi, k, hi);
        double out = 0.0, mag = 0.0;  // y, and the sum of its terms' magnitudes
        for (int64_t n = 0; n < N; n++) {
            // dA = torch.exp(rearrange(dt, "b d -> b d 1") * A)
            double dA = exp(dt * (double)A[s->form == DECODE_M1 ? n : 0]);
            // dB = rearrange(dt, "b d -> b d 1") * rearrange(B, "b n -> b 1 n")
            double dB = dt * (double)Bk[n];
            // state.copy_(state * dA + dB * rearrange(x, "b d -> b d 1"))
            state[n] = state[n] * dA + dB * xv;
            // out = torch.einsum("bdn,bn->bd", state.to(C.dtype), C)
            out += state[n] * (double)Ck[n];
            mag += fabs(state[n] * (double)Ck[n]);
        }
        // if D is not None: out += (x * D).to(out.dtype)
        if (t->D) {
            out += xv * (double)t->D[hi];
            mag += fabs(xv * (double)t->D[hi]);
        }
        // return (out if z is None else out * F.silu(z)).to(x.dtype)
        if (z) {
            out *= oracle_silu(z[at]);
            mag *= fabs(oracle_silu(z[at]));
        }
        y[k] = out;
        if (terms) terms[k] = mag;
        if (per_token)
            for (int64_t n = 0; n < N; n++) per_token[k * N + n] = state[n];
    }
}

void oracle_decode(const DecodeTensors *t, double *y, double *state_out) {
    const DecodeServing sv = {*t, 0, NULL, NULL};  // one state per batch entry, no intermediate states
    oracle_decode_serving(&sv, y, state_out, NULL, NULL);
}

/* ---- a state pool and intermediate states ---- */

void oracle_decode_serving_row(const DecodeServing *sv, int64_t row, double *y, double *state, double *per_token,
                               double *terms, bool *skipped) {
    const DecodeTensors *t = &sv->t;
    int64_t T = t->s.tokens, N = t->s.dstate, W = decode_width(&t->s);
    int64_t bi = row / W, c = row % W;
    int64_t slot = sv->state_batch_indices ? sv->state_batch_indices[bi] : bi;
    *skipped = slot < 0;
    if (*skipped) {  // padding: no state read or written, zeros out
        for (int64_t k = 0; k < T; k++) y[k] = 0.0;
        for (int64_t k = 0; terms && k < T; k++) terms[k] = 0.0;
        if (per_token)
            for (int64_t e = 0; e < T * N; e++) per_token[e] = 0.0;
        return;
    }
    oracle_decode_row_from(t, bi, c, t->state + (slot * W + c) * N, y, state, per_token, terms);
}

void oracle_decode_serving(const DecodeServing *sv, double *y, double *state_out, double *intermediate,
                           double *y_terms) {
    const DecodeShape *s = &sv->t.s;
    int64_t T = s->tokens, N = s->dstate, W = decode_width(s);
    int64_t pool = decode_pool_values(sv);                        // elements of the state pool
    for (int64_t e = 0; e < pool; e++) state_out[e] = sv->t.state[e];  // slots no entry names keep theirs
    double *yr = oracle_alloc((size_t)T * sizeof(double));            // (T,) fp64: one row's outputs
    double *mag = y_terms ? oracle_alloc((size_t)T * sizeof(double)) : NULL;  // (T,) fp64: their terms' magnitudes
    double *h = oracle_alloc((size_t)N * sizeof(double));             // (N,) fp64: its final state
    double *per = intermediate ? oracle_alloc((size_t)(T * N) * sizeof(double)) : NULL;  // (T, N) fp64: after each token
    for (int64_t row = 0; row < s->batch * W; row++) {
        int64_t bi = row / W, c = row % W;
        bool skipped;
        oracle_decode_serving_row(sv, row, yr, h, per, mag, &skipped);
        for (int64_t k = 0; k < T; k++) y[(bi * T + k) * W + c] = yr[k];
        for (int64_t k = 0; mag && k < T; k++) y_terms[(bi * T + k) * W + c] = mag[k];
        if (!skipped) {
            int64_t slot = sv->state_batch_indices ? sv->state_batch_indices[bi] : bi;
            for (int64_t n = 0; n < N; n++) state_out[(slot * W + c) * N + n] = h[n];
        }
        if (intermediate)
            for (int64_t k = 0; k < T; k++)
                for (int64_t n = 0; n < N; n++) intermediate[((bi * T + k) * W + c) * N + n] = per[k * N + n];
    }
    free(yr);
    free(mag);
    free(h);
    free(per);
}

/* ---- what a state in 8-bit codes may move ---- */

/* One step of code `codes8` at a value within err of v, in a row whose
 * largest |value| is at most rowmax (scale rowmax / the code's largest):
 * int8, the scale; e4m3, 2^-3 of the value's magnitude (3 mantissa bits: a
 * step of 2^(k-3) in [2^k, 2^(k+1))) and at least the subnormals' 2^-9 of
 * the scale. A little above (2^-15): the fp32 reciprocal of the scale,
 * value · (1 / scale) and code · scale each move a value by up to 127·2^-24
 * of a step. */
static double code_step(int codes8, double v, double err, double rowmax) {
    const double scale = rowmax / codes8_max((Codes8)codes8);
    const double step = codes8 == CODES_INT8 ? scale : fmax((fabs(v) + err) * 0x1.0p-3, scale * 0x1.0p-9);
    return step * (1.0 + 0x1.0p-15);
}

/* The state the version carries into token k is off the oracle's by at most
 * E_(k-1)[n] (E_(-1) = 0: both start from the same codes). Token k
 * multiplies it by dA and adds what the oracle adds, then rounds it to a
 * code: a stochastic rounding moves a value by less than one step, one to
 * the nearest by half, so E_k = dA·E_(k-1) + one step (both roundings are
 * held to the step). y at token k is computed before that rounding, from a
 * state off by dA·E_(k-1): |Δy| <= |silu(z)|·Σ_n |C_n|·dA·E_(k-1)[n]. */
void oracle_decode_codes8_bound_row(const DecodeServing *sv, int64_t row, int codes8, const double *per,
                                    double *y_bound, double *state_bound, double *per_token_bound) {
    const DecodeTensors *t = &sv->t;
    const DecodeShape *s = &t->s;
    const int64_t T = s->tokens, N = s->dstate, W = decode_width(s), bi = row / W, c = row % W;
    const RowReads rr = row_reads(s, t->A, c);
    const int64_t hi = rr.hi, bc_width = rr.bc_width, bc_off = rr.bc_off;
    const float *A = rr.A;
    const bool skipped = sv->state_batch_indices && sv->state_batch_indices[bi] < 0;  // padding
    double *E = oracle_alloc((size_t)N * sizeof(double));  // (N,) fp64: the bound carried
    for (int64_t n = 0; n < N; n++) E[n] = 0.0;
    for (int64_t k = 0; k < T; k++) {
        const double dt = skipped ? 0.0 : row_delta(t, bi, k, hi);
        const float *Ck = (const float *)t->C + (bi * T + k) * bc_width + bc_off;  // (N,)
        double dy = 0.0, rowmax = 0.0;
        for (int64_t n = 0; n < N; n++) {
            E[n] *= exp(dt * (double)A[s->form == DECODE_M1 ? n : 0]);
            dy += fabs((double)Ck[n]) * E[n];
            // the version's row is within E of the oracle's: its largest |value| at most max |oracle| + E
            rowmax = fmax(rowmax, fabs(per[k * N + n]) + E[n]);
        }
        if (t->z) dy *= fabs(oracle_silu(((const float *)t->z)[(bi * T + k) * W + c]));
        y_bound[k] = skipped ? 0.0 : dy;
        for (int64_t n = 0; n < N && !skipped; n++) E[n] += code_step(codes8, per[k * N + n], E[n], rowmax);
        if (per_token_bound)
            for (int64_t n = 0; n < N; n++) per_token_bound[k * N + n] = E[n];
    }
    for (int64_t n = 0; n < N; n++) state_bound[n] = E[n];
    free(E);
}

void oracle_decode_codes8_bound(const DecodeServing *sv, bool intermediate, int codes8, double *y_bound,
                                double *state_bound, double *inter_bound) {
    const DecodeShape *s = &sv->t.s;
    const int64_t T = s->tokens, N = s->dstate, W = decode_width(s);
    const int64_t pool = decode_pool_values(sv);  // elements of the state pool
    for (int64_t e = 0; e < pool; e++) state_bound[e] = 0.0;  // slots no entry names: copied as they are
    double *yb = oracle_alloc((size_t)T * sizeof(double));           // (T,) fp64: one row's y bounds
    double *hb = oracle_alloc((size_t)N * sizeof(double));           // (N,) fp64: its final state's
    double *per = intermediate ? oracle_alloc((size_t)(T * N) * sizeof(double)) : NULL;  // (T, N) fp64: after each token
    double *y = oracle_alloc((size_t)T * sizeof(double));            // (T,) fp64: the oracle's row, unused
    double *h = oracle_alloc((size_t)N * sizeof(double));            // (N,) fp64: its final state, unused
    double *ref = oracle_alloc((size_t)(T * N) * sizeof(double));    // (T, N) fp64: its state after each token
    for (int64_t row = 0; row < s->batch * W; row++) {
        const int64_t bi = row / W, c = row % W;
        const int64_t slot = sv->state_batch_indices ? sv->state_batch_indices[bi] : bi;
        bool skipped;
        oracle_decode_serving_row(sv, row, y, h, ref, NULL, &skipped);
        oracle_decode_codes8_bound_row(sv, row, codes8, ref, yb, hb, per);
        for (int64_t k = 0; k < T; k++) y_bound[(bi * T + k) * W + c] = yb[k];
        for (int64_t n = 0; n < N && slot >= 0; n++) state_bound[(slot * W + c) * N + n] = hb[n];
        for (int64_t k = 0; per && k < T; k++)
            for (int64_t n = 0; n < N; n++) inter_bound[((bi * T + k) * W + c) * N + n] = per[k * N + n];
    }
    free(yb);
    free(hb);
    free(per);
    free(y);
    free(h);
    free(ref);
}
