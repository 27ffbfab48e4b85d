/* 06_bidirectional, CPU: one bidirectional Mamba-2 forward two ways: 05's
 * chunked form run twice (forward on x, backward on flipped copies), and the
 * chunked form that does both directions in one pass.
 *
 *   default  y = SS(x) + flip(SS(flip(x))) + D·x
 *   Hydra    y = shift(SS_f(x)) + flip(shift(SS_b(flip(x)))) + D·x,
 *            shift(s)_t = s_{t-1}, shift(s)_0 = 0; SS_b reads dt_bwd, B_bwd, C_bwd
 * then y *= silu(z) when z is given (ops/bidir/bidir.h).
 *
 * The backward direction in original time. SS(flip(x)) walks t = L-1 … 0:
 *   G_t = exp(Δ'_t·A)·G_{t+1} + Δ'_t·x_t ⊗ B'_t,  G_L = H0_bwd,  out_t = G_t·C'_t
 * (Δ', B', C' = Δ, B, C in the default form). Unrolled,
 *   G_i = Σ_{j>=i} exp(Σ_{k=i..j-1} Δ'_k·A)·Δ'_j·x_j ⊗ B'_j  +  exp(Σ_{k=i..L-1} Δ'_k·A)·H0_bwd
 * the mirror of the forward direction's exp(Σ_{k=j+1..i} Δ_k·A): the decay
 * holds the step that is read (i) and not the one that was written (j). With
 * the reverse inclusive cumsum rcum_t = Σ_{k>=t} Δ'_k·A it is exp(rcum_i −
 * rcum_j), as the forward one is exp(cum_i − cum_j) with cum_t = Σ_{k<=t} Δ_k·A.
 *
 * One mask. Both directions together are y = M·X (before D and z) with one
 * L×L matrix
 *   M[i][j] = [j <= i−σ]·exp(cum_{i−σ} − cum_j)·(C_{i−σ}·B_j)·Δ_j          (lower triangle)
 *           + [j >= i+σ]·exp(rcum_{i+σ} − rcum_j)·(C'_{i+σ}·B'_j)·Δ'_j     (upper triangle)
 * with σ = 0 for the default form and σ = 1 for Hydra. Default form: one
 * C·Bᵀ serves both triangles and the diagonal (j = i) is counted in both.
 * Hydra: the shift is a change of the mask's diagonal, strictly lower and
 * strictly upper, and it moves C and the decay's end one step too: output
 * row i reads C_{i−1} and the decay up to step i−1 (forward), C'_{i+1} and
 * the decay from step i+1 (backward); its backward direction has its own
 * B', C', so it needs a second product C'·B'ᵀ.
 *
 * The chunked form cuts M into Q×Q blocks, as 05 does. A diagonal block is
 * the mask above on one chunk's steps (the C·Bᵀ block once for the default
 * form); the blocks below it go through forward chunk states passed from
 * chunk 0 to the last, starting at initial_states; the blocks above it
 * through backward chunk states passed from the last chunk to chunk 0,
 * starting at initial_states_bwd. Row i of chunk [t0, t1) adds
 * exp(cum_{i−σ})·C_{i−σ}·S_in (S_in = H_{t0−1}, the forward state entering
 * the chunk) and exp(rcum_{i+σ})·C'_{i+σ}·S'_in (S'_in = G_{t1}, the backward
 * state entering it from the right), cumsums local to the chunk.
 *
 * FLOPs per chunk and (b, h), a multiply-add counted as 2, whole Q×Q blocks
 * counted as a matrix unit computes them (05's header counts 2·Q²·(N + p)
 * per chunk for its tensor cores), exps not counted:
 *   05 chunked, run twice  2·(2·Q²·N + 2·Q²·p + 4·Q·p·N + 2·p·N)
 *   default form here      2·Q²·N  (C·Bᵀ once)  + 2·Q²·p  (M·X once: both
 *                          triangles in one block) + 8·Q·p·N (chunk states
 *                          and off-diagonal outputs, both directions) + 4·p·N
 *   Hydra here             4·Q²·N  (C·Bᵀ and C'·B'ᵀ) + 2·Q²·p + 8·Q·p·N + 4·p·N
 * At p 64, N 128, Q 256: twice 67.1 MFLOP, default 42.0 (0.63×), Hydra 58.8
 * (0.88×). Exps per chunk, as
 * many as 05 run twice: Q² + Q for the mask (each triangle with its
 * diagonal; Hydra Q² − Q), 4·Q for the chunk states and off-diagonal decays.
 *
 * Precision: fp32 inputs and outputs; arithmetic, running sums and the
 * per-step scalars (Δ, cumsums) in double; the chunk states stored in fp32,
 * as 05 and the official kernels store them. */
#include "cpu.h"

#include <math.h>
#include <string.h>

#include "../05_ssd_mamba2/cpu.h"
#include "host_math.h"

/* One direction's per-step inputs for one (batch, head); step t of a
 * sequence tensor is at t * (its stride in Head). */
typedef struct {
    const float *dt;             // dt[t * dt_t]: (L,) inside (b, L, h) fp32
    const float *B, *C;          // B[t * bc_t + n]: (L, N) of the head's group inside (b, L, g, N) fp32
    const float *h0;             // (p, N) fp32: the state the direction starts from; NULL: 0
} Direction;

/* One (batch, head)'s view of the tensors, each pointer at its first element. */
typedef struct {
    int64_t L, P, N;
    int64_t x_t, dt_t, bc_t;     // strides of one time step: h·p, h, g·N
    const float *x;              // x[t * x_t + pi]: (L, p) inside (b, L, h, p) fp32
    const float *z;              // like x; NULL without z
    Direction fwd;               // dt, B, C, initial_states
    Direction bwd;               // default: dt, B, C; Hydra: dt_bwd, B_bwd, C_bwd; initial_states_bwd
    const float *D;              // D[pi * D_p]: (p,) or one value fp32; NULL without D
    int64_t D_p;                 // 1 for D (h, p), 0 for D (h,)
    double A;                    // A[h]: (h,) fp32 read as fp64
    double bias;                 // dt_bias[h]: (h,) fp32 read as fp64, 0 without bias
    bool softplus;
    int64_t shift;               // σ: 1 for Hydra, 0 for the default form
    float *y;                    // like x, written
} Head;

static Head head_of(const BidirTensors *t, int64_t bi, int64_t hi) {
    const SsdShape *s = &t->s.s;
    const int64_t L = s->seqlen, H = s->heads, P = s->headdim, G = s->groups, N = s->dstate;
    const int64_t x0 = bi * L * H * P + hi * P;
    const int64_t dt0 = bi * L * H + hi;
    const int64_t bc0 = bi * L * G * N + ssd_group_of(s, hi) * N;
    const int64_t state0 = (bi * H + hi) * P * N;
    const bool hydra = t->s.hydra;
    return (Head){
        .L = L, .P = P, .N = N,
        .x_t = H * P, .dt_t = H, .bc_t = G * N,
        .x = (const float *)t->x + x0,
        .z = t->z ? (const float *)t->z + x0 : NULL,
        .fwd = {
            .dt = (const float *)t->dt + dt0,
            .B = (const float *)t->B + bc0,
            .C = (const float *)t->C + bc0,
            .h0 = t->initial_states ? t->initial_states + state0 : NULL,
        },
        .bwd = {
            .dt = (const float *)(hydra ? t->dt_bwd : t->dt) + dt0,
            .B = (const float *)(hydra ? t->B_bwd : t->B) + bc0,
            .C = (const float *)(hydra ? t->C_bwd : t->C) + bc0,
            .h0 = t->initial_states_bwd ? t->initial_states_bwd + state0 : NULL,
        },
        .D = t->D ? (s->D_per_channel ? t->D + hi * P : t->D + hi) : NULL,
        .D_p = s->D_per_channel ? 1 : 0,
        .A = t->A[hi],
        .bias = t->dt_bias ? t->dt_bias[hi] : 0.0,
        .softplus = s->softplus,
        .shift = hydra ? 1 : 0,
        .y = (float *)t->y + x0,
    };
}

/* Δ_t of one direction, as the official _chunk_cumsum_fwd_kernel computes it. */
static double delta_of(const Head *hd, const Direction *dir, int64_t t) {
    return delta_f64(dir->dt[t * hd->dt_t], hd->bias, hd->softplus);
}

/* Writes y[t, pi] from the two directions' sum acc:
 *   y = y_fw + y_bw + x_og * D   (Hydra's D is input-dependent; here a parameter)
 *   out = out * F.silu(z) */
static void store_output(const Head *hd, int64_t t, int64_t pi, double acc) {
    const int64_t at = t * hd->x_t + pi;
    hd->y[at] = gated_f64(acc, hd->x[at], hd->D ? hd->D + pi * hd->D_p : NULL, hd->z ? hd->z + at : NULL);
}

/* ---- 1. 05's chunked form, run twice ----
 *
 * What users do today, with the previous chapter's own code: ssd_chunked_cpu
 * (05_ssd_mamba2/cpu.c) without D and z on x, then on flipped copies of x,
 * dt, B, C (Hydra: of dt_bwd, B_bwd, C_bwd), each direction from its own
 * initial state; the outputs summed (Hydra: each moved one step later in its
 * own time), then + D·x and × silu(z). */

/* dst[bi, l, :] = src[bi, L-1-l, :] for rows of `width` floats. */
static void flip_time(float *dst, const float *src, int64_t batch, int64_t L, int64_t width) {
    for (int64_t bi = 0; bi < batch; bi++)
        for (int64_t l = 0; l < L; l++)
            memcpy(dst + (bi * L + l) * width, src + (bi * L + L - 1 - l) * width, sizeof(float) * (size_t)width);
}

/* Floats of the flipped copies and the two directions' outputs and final
 * state, rounded up to 16 bytes so that 05's workspace (doubles) after them
 * is aligned. */
static int64_t twice_floats(const SsdShape *s) {
    return (3 * ssd_n_x(s) + ssd_n_dt(s) + 2 * ssd_n_bc(s) + ssd_n_state(s) + 3) / 4 * 4;
}

size_t bidir_twice_cpu_workspace(const BidirShape *s) {
    const SsdShape d = bidir_direction_shape(&s->s);
    return sizeof(float) * (size_t)twice_floats(&s->s) + ssd_chunked_cpu_workspace(&d);
}

void bidir_twice_cpu(const BidirTensors *t, void *workspace) {
    const SsdShape *s = &t->s.s;
    const int64_t b = s->batch, L = s->seqlen, H = s->heads, P = s->headdim, W = H * P;
    const int64_t GN = s->groups * s->dstate;
    float *x_flip = workspace;                // (b, L, h, p) fp32: x, time reversed
    float *dt_flip = x_flip + ssd_n_x(s);     // (b, L, h) fp32: dt (Hydra: dt_bwd), reversed
    float *B_flip = dt_flip + ssd_n_dt(s);    // (b, L, g, N) fp32: B (Hydra: B_bwd), reversed
    float *C_flip = B_flip + ssd_n_bc(s);     // (b, L, g, N) fp32: C (Hydra: C_bwd), reversed
    float *y_fwd = C_flip + ssd_n_bc(s);      // (b, L, h, p) fp32: SS(x)
    float *y_bwd = y_fwd + ssd_n_x(s);        // (b, L, h, p) fp32: SS(flip(x)), flipped time
    float *final = y_bwd + ssd_n_x(s);        // (b, h, p, N) fp32: a direction's final state, unused
    void *scan_ws = (float *)workspace + twice_floats(s);  // 05's own workspace
    const bool hydra = t->s.hydra;

    const SsdShape d = bidir_direction_shape(s);
    SsdTensors fwd = {d, t->x, t->dt, t->A, t->B, t->C, NULL, NULL, t->dt_bias, t->initial_states, y_fwd, final};
    ssd_chunked_cpu(&fwd, scan_ws);

    // x = torch.cat((x, torch.flip(x, (1,))), dim=0)
    flip_time(x_flip, t->x, b, L, W);
    flip_time(dt_flip, hydra ? t->dt_bwd : t->dt, b, L, H);
    flip_time(B_flip, hydra ? t->B_bwd : t->B, b, L, GN);
    flip_time(C_flip, hydra ? t->C_bwd : t->C, b, L, GN);
    SsdTensors bwd = {d, x_flip, dt_flip, t->A, B_flip, C_flip, NULL, NULL, t->dt_bias, t->initial_states_bwd,
                      y_bwd, final};
    ssd_chunked_cpu(&bwd, scan_ws);

    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t hi = 0; hi < H; hi++) {
            const Head hd = head_of(t, bi, hi);
            for (int64_t l = 0; l < L; l++)
                for (int64_t pi = 0; pi < P; pi++) {
                    const int64_t c = hi * P + pi;
                    // y = torch.roll(y, shifts=1, dims=1); y[:, 0, :] = 0.0   (Hydra, each direction)
                    // y_fw, y_bw = y[:batch], torch.flip(y[batch:], (1,))
                    const int64_t lf = hydra ? l - 1 : l, lb = hydra ? L - 2 - l : L - 1 - l;
                    store_output(&hd, l, pi,
                                 (lf >= 0 ? (double)y_fwd[(bi * L + lf) * W + c] : 0.0) +
                                     (lb >= 0 ? (double)y_bwd[(bi * L + lb) * W + c] : 0.0));
                }
        }
}

/* ---- 2. the chunked form: both directions in one pass ----
 *
 * Chunk c holds steps [c·Q, min((c+1)·Q, L)): the last chunk may be shorter.
 * Both directions use the same chunks (the backward scan of 05 run on flip(x)
 * would put its short chunk at t = 0 instead; the sum is the same). */

static int64_t chunk_end(const Head *hd, int64_t Q, int64_t c) {
    return (c + 1) * Q < hd->L ? (c + 1) * Q : hd->L;
}

/* Δ_t and Δ'_t, and per chunk the forward inclusive cumsum of Δ·A from the
 * chunk's first step, cum[t] = Σ_{k=t0..t}, and the backward one from its
 * last step, rcum[t] = Σ_{k=t..t1-1}: the backward scan's own cumsum, which
 * runs the other way. */
static void chunk_cumsums(const Head *hd, int64_t Q, int64_t n_chunks, double *delta, double *cum,
                          double *delta_bwd, double *rcum) {
    for (int64_t c = 0; c < n_chunks; c++) {
        const int64_t t0 = c * Q, t1 = chunk_end(hd, Q, c);
        double cumsum = 0.0;
        for (int64_t ti = t0; ti < t1; ti++) {
            delta[ti] = delta_of(hd, &hd->fwd, ti);
            // A_cumsum = torch.cumsum(A, dim=-1)
            cumsum += delta[ti] * hd->A;
            cum[ti] = cumsum;
        }
        cumsum = 0.0;
        for (int64_t ti = t1 - 1; ti >= t0; ti--) {
            delta_bwd[ti] = delta_of(hd, &hd->bwd, ti);
            cumsum += delta_bwd[ti] * hd->A;
            rcum[ti] = cumsum;
        }
    }
}

/* Each chunk's state from a zero start at the chunk's border where the
 * direction enters it, states (n_chunks, p, N): forward, the state after
 * step t1-1 (decay exp(cum[t1-1] − cum[s])); backward, the state at step t0
 * (decay exp(rcum[t0] − rcum[s]) = exp(Σ_{k=t0..s-1} Δ'_k·A)). */
static void chunk_states(const Head *hd, const Direction *dir, bool backward, int64_t Q, int64_t n_chunks,
                         const double *delta, const double *cum, double *decay_dt, float *states) {
    const int64_t P = hd->P, N = hd->N;
    for (int64_t c = 0; c < n_chunks; c++) {
        const int64_t t0 = c * Q, t1 = chunk_end(hd, Q, c);
        const int64_t edge = backward ? t0 : t1 - 1;  // the step at which the direction leaves the chunk
        for (int64_t s = t0; s < t1; s++)
            // decay_states = torch.exp((A_cumsum[:, :, :, -1:] - A_cumsum))
            // (times Δ_s: X in Listing 1 is Δ∘x)
            decay_dt[s - t0] = exp(cum[edge] - cum[s]) * delta[s];
        // states = torch.einsum("bclhn,bhcl,bclhp->bchpn", B, decay_states, X)
        for (int64_t pi = 0; pi < P; pi++)
            for (int64_t n = 0; n < N; n++) {
                double state = 0.0;
                for (int64_t s = t0; s < t1; s++)
                    state += (double)dir->B[s * hd->bc_t + n] * decay_dt[s - t0] *
                             (double)hd->x[s * hd->x_t + pi];
                states[(c * P + pi) * N + n] = (float)state;
            }
    }
}

/* The recurrence over chunks, in place: states[c] becomes the state entering
 * chunk c. Forward, chunk 0 → last: S_in[0] = initial_states (or 0),
 * S_in[c+1] = exp(cum[t1-1])·S_in[c] + states[c]. Backward, last → chunk 0:
 * S'_in[last] = initial_states_bwd (or 0), S'_in[c-1] = exp(rcum[t0])·S'_in[c]
 * + states[c]. */
static void pass_states(const Head *hd, const Direction *dir, bool backward, int64_t Q, int64_t n_chunks,
                        const double *cum, double *carry, float *states) {
    const int64_t PN = hd->P * hd->N;
    // if initial_states is None:
    //     initial_states = torch.zeros_like(states[:, :1])
    for (int64_t e = 0; e < PN; e++) carry[e] = dir->h0 ? (double)dir->h0[e] : 0.0;
    for (int64_t k = 0; k < n_chunks; k++) {
        const int64_t c = backward ? n_chunks - 1 - k : k;
        const int64_t edge = backward ? c * Q : chunk_end(hd, Q, c) - 1;
        const double chunk_decay = exp(cum[edge]);  // exp(Σ Δ·A over chunk c)
        float *state = states + c * PN;  // (p, N): chunk c's own state in, the state entering it out
        for (int64_t e = 0; e < PN; e++) {
            const double local = state[e];
            state[e] = (float)carry[e];
            carry[e] = chunk_decay * carry[e] + local;
        }
    }
}

/* The C·Bᵀ block of chunk [t0, t1) with C read `offset` steps away:
 * cb[(i - t0) * Q + (s - t0)] = C_{i+offset}·B_s, 0 where i+offset lies
 * outside the sequence. Every entry, as a matrix unit computes the block. */
static void chunk_product(const Head *hd, const Direction *dir, int64_t t0, int64_t t1, int64_t offset,
                          int64_t Q, double *cb) {
    for (int64_t i = t0; i < t1; i++) {
        const int64_t ci = i + offset;
        for (int64_t s = t0; s < t1; s++)
            cb[(i - t0) * Q + (s - t0)] = ci >= 0 && ci < hd->L
                ? dot_f64(dir->C + ci * hd->bc_t, dir->B + s * hd->bc_t, hd->N) : 0.0;
    }
}

/* y for every step of chunk c: the row of the mask (M above) on the
 * chunk's steps times X, plus both directions' off-diagonal terms. */
static void chunk_outputs(const Head *hd, int64_t Q, int64_t c, const double *delta, const double *cum,
                          const double *delta_bwd, const double *rcum, const float *states,
                          const float *states_bwd, double *cb, double *cb_bwd, double *row) {
    const int64_t L = hd->L, P = hd->P, N = hd->N, sigma = hd->shift;
    const int64_t t0 = c * Q, t1 = chunk_end(hd, Q, c);
    const float *state_in = states + c * P * N;          // (p, N): S_in[c] = H_{t0-1}
    const float *state_in_bwd = states_bwd + c * P * N;  // (p, N): S'_in[c] = G_{t1}
    // CB = torch.einsum("bclhn,bcshn->bhcls", C, B): once for both triangles in the
    // default form; Hydra reads C one step back and needs C'·B'ᵀ as well.
    chunk_product(hd, &hd->fwd, t0, t1, -sigma, Q, cb);
    if (sigma) chunk_product(hd, &hd->bwd, t0, t1, sigma, Q, cb_bwd);
    const double *cb_upper = sigma ? cb_bwd : cb;  // (Q, Q): the block the backward triangle reads
    for (int64_t i = t0; i < t1; i++) {
        for (int64_t s = t0; s < t1; s++) row[s - t0] = 0.0;
        // Forward, lower triangle s <= r = i − σ: exp(cum_r − cum_s)·(C_r·B_s)·Δ_s.
        // r = t0 − 1 (Hydra's first row) reads no step of the chunk, only S_in.
        const int64_t r = i - sigma;
        const double cum_r = r >= t0 ? cum[r] : 0.0;
        for (int64_t s = t0; s <= r; s++)
            row[s - t0] += exp(cum_r - cum[s]) * cb[(i - t0) * Q + (s - t0)] * delta[s];
        // Backward, upper triangle s >= q = i + σ: exp(rcum_q − rcum_s)·(C'_q·B'_s)·Δ'_s.
        // q = t1 (Hydra's last row) reads no step of the chunk, only S'_in.
        const int64_t q = i + sigma;
        const double rcum_q = q < t1 ? rcum[q] : 0.0;
        for (int64_t s = q; s < t1; s++)
            row[s - t0] += exp(rcum_q - rcum[s]) * cb_upper[(i - t0) * Q + (s - t0)] * delta_bwd[s];
        // state_decay_out = torch.exp(A_cumsum), for each direction
        const double decay_out = exp(cum_r), decay_out_bwd = exp(rcum_q);
        for (int64_t pi = 0; pi < P; pi++) {
            // Y_diag  = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", C, B, L, X): both triangles at once
            double y_diag = 0.0;
            for (int64_t s = t0; s < t1; s++) y_diag += row[s - t0] * (double)hd->x[s * hd->x_t + pi];
            // Y_off = torch.einsum('bclhn,bchpn,bhcl->bclhp', C, states, state_decay_out),
            // forward (C_r, 0 at r = -1) and backward (C'_q, 0 at q = L)
            double y_off = 0.0;
            if (r >= 0) y_off += decay_out * dot_f64(hd->fwd.C + r * hd->bc_t, state_in + pi * N, N);
            if (q < L) y_off += decay_out_bwd * dot_f64(hd->bwd.C + q * hd->bc_t, state_in_bwd + pi * N, N);
            store_output(hd, i, pi, y_diag + y_off);
        }
    }
}

size_t bidir_chunked_cpu_workspace(const BidirShape *s) {
    const int64_t Q = s->s.chunk, PN = s->s.headdim * s->s.dstate;
    return sizeof(double) * (size_t)(4 * s->s.seqlen + (s->hydra ? 2 : 1) * Q * Q + Q + PN) +
           sizeof(float) * (size_t)(2 * ssd_n_chunks(&s->s) * PN);
}

void bidir_chunked_cpu(const BidirTensors *t, void *workspace) {
    const SsdShape *s = &t->s.s;
    const int64_t L = s->seqlen, Q = s->chunk, n_chunks = ssd_n_chunks(s);
    const int64_t PN = s->headdim * s->dstate;
    double *delta = workspace;            // (L,) fp64: Δ_t of one (b, h), forward
    double *cum = delta + L;              // (L,) fp64: cumsum of Δ·A within each chunk, from its first step
    double *delta_bwd = cum + L;          // (L,) fp64: Δ'_t, backward (equal to Δ_t in the default form)
    double *rcum = delta_bwd + L;         // (L,) fp64: cumsum of Δ'·A within each chunk, from its last step
    double *cb = rcum + L;                // (Q, Q) fp64: one chunk's C·Bᵀ (Hydra: C shifted one step back)
    double *cb_bwd = t->s.hydra ? cb + Q * Q : NULL;  // (Q, Q) fp64: Hydra's C'·B'ᵀ (C' one step on), else NULL
    double *row = cb + (t->s.hydra ? 2 : 1) * Q * Q;  // (Q,) fp64: one row of M on a chunk's steps
    double *carry = row + Q;              // (p, N) fp64: the state passed between chunks
    float *states = (float *)(carry + PN);  // (n_chunks, p, N) fp32: forward chunk states, then S_in
    float *states_bwd = states + n_chunks * PN;  // (n_chunks, p, N) fp32: backward chunk states, then S'_in
    for (int64_t bi = 0; bi < s->batch; bi++)
        for (int64_t hi = 0; hi < s->heads; hi++) {
            const Head hd = head_of(t, bi, hi);
            chunk_cumsums(&hd, Q, n_chunks, delta, cum, delta_bwd, rcum);
            chunk_states(&hd, &hd.fwd, false, Q, n_chunks, delta, cum, row, states);
            chunk_states(&hd, &hd.bwd, true, Q, n_chunks, delta_bwd, rcum, row, states_bwd);
            pass_states(&hd, &hd.fwd, false, Q, n_chunks, cum, carry, states);
            pass_states(&hd, &hd.bwd, true, Q, n_chunks, rcum, carry, states_bwd);
            for (int64_t c = 0; c < n_chunks; c++)
                chunk_outputs(&hd, Q, c, delta, cum, delta_bwd, rcum, states, states_bwd, cb, cb_bwd, row);
        }
}
