/* 05_ssd_mamba2, CPU: one Mamba-2 forward (mamba_chunk_scan_combined) three
 * ways, per (batch, head): the recurrence, the quadratic "attention" form and
 * the chunked SSD form of the paper's Listing 1 (Dao & Gu 2024).
 *
 * Why they agree (the duality). Unroll H_t = a_t·H_{t-1} + Δ_t·x_t ⊗ B_t,
 * a_t = exp(Δ_t·A), and read y_i = H_i·C_i off it:
 *
 *     y_i = Σ_{j<=i} exp(segsum(i, j))·(C_i·B_j)·Δ_j·x_j  +  exp(segsum(i, -1))·H0·C_i
 *     segsum(i, j) = Σ_{k=j+1..i} Δ_k·A     (log of a_{j+1}···a_i; 0 when j = i)
 *
 * That is y = M·(Δ∘X) + (the H0 term), M = Lmask ∘ (C·Bᵀ), Lmask[i][j] =
 * exp(segsum(i, j)) on and below the diagonal, 0 above: causal attention
 * whose mask is 1-semiseparable (M itself is N-semiseparable: every block
 * of M below the diagonal has rank <= N). The three versions are three
 * orders of the same sum:
 *
 *   recurrent  multiplies by M without forming it, one step at a time,
 *              carrying the (p, N) state: linear in L, sequential in L.
 *   quadratic  forms M (a row at a time) and multiplies, like attention.
 *   chunked    cuts M into Q×Q blocks. A diagonal block is a small quadratic
 *              form. A block below the diagonal (rows in chunk c, columns in
 *              chunk c' < c) has rank N: M[i][j] = C_i · (decay from j to i)
 *              · B_j, and the decay splits at the chunk borders into
 *              exp(A_cumsum[i]) · (the chunks between) · exp(A_cumsum[last] −
 *              A_cumsum[j]); so those blocks go through (p, N) chunk states,
 *              passed from chunk to chunk by the recurrence over chunks.
 *
 * FLOPs per (b, h), a multiply-add counted as 2, exps not counted:
 *   recurrent  5·L·p·N                   (a·H + Δx·B: 3, y += H·C: 2)
 *   quadratic  L²·(N + p)                (C_i·B_j over the L²/2 causal pairs,
 *                                         then the L²/2 weights times x)
 *   chunked    L·(Q·(N + p) + 4·p·N)     (per chunk: diagonal block Q²·(N + p),
 *                                         chunk state 2·Q·p·N, off-diagonal
 *                                         output 2·Q·p·N; state passing 2·p·N)
 * quadratic / chunked ≈ L / (Q + 4·p·N/(N + p)). At the benchmark shape
 * (p 64, N 128, Q 256, L 8192): chunked 0.67 GFLOP, quadratic 12.9 GFLOP
 * (19×); the recurrence's 0.34 GFLOP are fewer still but are a chain of L
 * dependent steps, while the chunked form is made of matmuls that tensor
 * cores run (they compute whole Q×Q blocks: 2·Q²·(N + p) per chunk).
 * Exps: recurrent L, quadratic ≈ L²/2, chunked ≈ L·Q/2.
 *
 * Precision: fp32 inputs and outputs; arithmetic, running sums and the
 * per-step scalars (Δ, cumsums) in double; the chunk states are stored in
 * fp32, as the official kernels store them. */
#include "cpu.h"

#include <math.h>
#include <string.h>

#include "host_math.h"

/* Longest sequence the quadratic form takes: its time is O(L²·(N + p)). */
#define SSD_QUADRATIC_MAX_L 2048

/* One (batch, head)'s view of the tensors: each pointer at its first element;
 * step t of a sequence tensor is at t * (its stride). */
typedef struct {
    int64_t L, P, N;
    int64_t x_t, dt_t, bc_t;     // strides of one time step: h·p, h, g·N
    const float *x;              // x[t * x_t + pi]: (L, p) inside (b, L, h, p) fp32
    const float *z;              // like x; NULL without z
    const float *dt;             // dt[t * dt_t]: (L,) inside (b, L, h) fp32
    const float *B, *C;          // B[t * bc_t + n]: (L, N) of the head's group inside (b, L, g, N) fp32
    const float *D;              // D[pi * D_p]: (p,) or one value fp32; NULL without D
    int64_t D_p;                 // 1 for D (h, p), 0 for D (h,)
    double A;                    // A[h]
    double bias;                 // dt_bias[h], 0 without bias
    bool softplus;
    const float *h0;             // (p, N) fp32 initial state; NULL: start from 0
    float *y;                    // like x, written
    float *final_state;          // (p, N) fp32, written
} Head;

static Head head_of(const SsdTensors *t, int64_t bi, int64_t hi) {
    const SsdShape *s = &t->s;
    const int64_t L = s->seqlen, H = s->heads, P = s->headdim, G = s->groups, N = s->dstate;
    const int64_t x0 = bi * L * H * P + hi * P;
    const int64_t bc0 = bi * L * G * N + ssd_group_of(s, hi) * N;
    const int64_t state0 = (bi * H + hi) * P * N;
    return (Head){
        .L = L, .P = P, .N = N,
        .x_t = H * P, .dt_t = H, .bc_t = G * N,
        .x = (const float *)t->x + x0,
        .z = t->z ? (const float *)t->z + x0 : NULL,
        .dt = (const float *)t->dt + bi * L * H + hi,
        .B = (const float *)t->B + bc0,
        .C = (const float *)t->C + bc0,
        .D = t->D ? (s->D_per_channel ? t->D + hi * P : t->D + hi) : NULL,
        .D_p = s->D_per_channel ? 1 : 0,
        .A = t->A[hi],
        .bias = t->dt_bias ? t->dt_bias[hi] : 0.0,
        .softplus = s->softplus,
        .h0 = t->initial_states ? t->initial_states + state0 : NULL,
        .y = (float *)t->y + x0,
        .final_state = t->final_state + state0,
    };
}

/* Δ_t, as the official _chunk_cumsum_fwd_kernel computes it. */
static double delta_of(const Head *hd, int64_t t) { return delta_f64(hd->dt[t * hd->dt_t], hd->bias, hd->softplus); }

/* Writes y[t, pi] from the scan's output acc = (H_t·C_t)[pi], as the end of
 * the official _chunk_scan_fwd_kernel does:
 *   acc += x_residual * D;  acc *= z * tl.sigmoid(z) */
static void store_output(const Head *hd, int64_t t, int64_t pi, double acc) {
    const int64_t at = t * hd->x_t + pi;
    hd->y[at] = gated_f64(acc, hd->x[at], hd->D ? hd->D + pi * hd->D_p : NULL, hd->z ? hd->z + at : NULL);
}

/* ---- 1. the recurrence ---- */

size_t ssd_recurrent_cpu_workspace(const SsdShape *s) {
    return sizeof(double) * (size_t)(s->headdim * s->dstate);
}

void ssd_recurrent_cpu(const SsdTensors *t, void *workspace) {
    const SsdShape *s = &t->s;
    double *state = workspace;  // (p, N) fp64: the running state H_t of one (b, h)
    for (int64_t bi = 0; bi < s->batch; bi++)
        for (int64_t hi = 0; hi < s->heads; hi++) {
            const Head hd = head_of(t, bi, hi);
            const int64_t P = hd.P, N = hd.N;
            for (int64_t e = 0; e < P * N; e++) state[e] = hd.h0 ? (double)hd.h0[e] : 0.0;
            // Each step is one selective_state_update_ref (the decode step) in its Mamba-2 form.
            for (int64_t ti = 0; ti < hd.L; ti++) {
                const double delta = delta_of(&hd, ti);
                // dA = torch.exp(rearrange(dt, "b h d -> b h d 1") * A)
                const double dA = exp(delta * hd.A);
                const float *B_t = hd.B + ti * hd.bc_t;  // (N,)
                const float *C_t = hd.C + ti * hd.bc_t;  // (N,)
                for (int64_t pi = 0; pi < P; pi++) {
                    double *state_p = state + pi * N;    // (N,): row pi of H
                    const double dx = delta * (double)hd.x[ti * hd.x_t + pi];
                    double out = 0.0;
                    for (int64_t n = 0; n < N; n++) {
                        // state.copy_(state * dA + dB * rearrange(x, "b h d -> b h d 1"))
                        state_p[n] = state_p[n] * dA + dx * (double)B_t[n];
                        // out = torch.einsum("bhdn,bhn->bhd", state.to(C.dtype), C)
                        out += state_p[n] * (double)C_t[n];
                    }
                    store_output(&hd, ti, pi, out);
                }
            }
            for (int64_t e = 0; e < P * N; e++) hd.final_state[e] = (float)state[e];
        }
}

/* ---- 2. the quadratic ("attention") form ----
 *
 * This is Listing 1 with a single chunk of length L: only its diagonal block
 * Y_diag, plus the initial state's share. Listing 1 takes X = Δ∘x and A·Δ:
 *   y_min, _ = ssd_minimal_discrete(x*dt.unsqueeze(-1), A*dt, B, C, chunk_size)
 *
 * The decay exp(segsum(i, j)) is summed over its own segment (j, i], as the
 * stable segsum does, never formed from the cumsum cum_t = Σ_{k<=t} Δ_k·A.
 * cum_t falls without bound (A < 0, Δ > 0), about −t at Δ·A ≈ −1 per step,
 * so the naive exp(cum_i)·exp(−cum_j) overflows: exp(−cum_j) is inf in fp32
 * past j ≈ 89 (709 in fp64) and inf·0 gives NaN where the decay is tiny.
 * exp(cum_i − cum_j) cancels two large numbers instead: at |cum| ≈ 10⁴ an
 * fp32 cumsum is off by ~10⁻³ in the exponent, 10⁻³ relative in the decay. */

const char *ssd_quadratic_cpu_unsupported(const SsdShape *s) {
    if (s->seqlen > SSD_QUADRATIC_MAX_L)
        return "the quadratic form takes O(L^2) time: L > 2048 is left to the chunked form";
    return NULL;
}

size_t ssd_quadratic_cpu_workspace(const SsdShape *s) {
    return sizeof(double) * (size_t)(3 * s->seqlen);
}

void ssd_quadratic_cpu(const SsdTensors *t, void *workspace) {
    const SsdShape *s = &t->s;
    const int64_t L = s->seqlen;
    double *delta = workspace;  // (L,) fp64: Δ_t of one (b, h)
    double *dA = delta + L;     // (L,) fp64: Δ_t·A
    double *row = dA + L;       // (L,) fp64: one row of the L×L matrix, see below
    for (int64_t bi = 0; bi < s->batch; bi++)
        for (int64_t hi = 0; hi < s->heads; hi++) {
            const Head hd = head_of(t, bi, hi);
            const int64_t P = hd.P, N = hd.N;
            for (int64_t ti = 0; ti < L; ti++) {
                delta[ti] = delta_of(&hd, ti);
                dA[ti] = delta[ti] * hd.A;
            }
            double cum = 0.0;  // Σ_{k<=i} Δ_k·A = segsum(i, -1): log of the decay of H0 up to step i
            for (int64_t i = 0; i < L; i++) {
                cum += dA[i];
                const float *C_i = hd.C + i * hd.bc_t;  // (N,)
                // Row i of (Lmask ∘ C·Bᵀ) times Δ: row[j] = exp(segsum(i, j))·(C_i·B_j)·Δ_j for j <= i.
                // L = torch.exp(segsum(A)), where segsum sums each segment on its own:
                //   x = x.masked_fill(~mask, 0)
                //   x_segsum = torch.cumsum(x, dim=-2)
                double segsum = 0.0;  // segsum(i, j) = Σ_{k=j+1..i} Δ_k·A, grown as j walks down from i
                for (int64_t j = i; j >= 0; j--) {
                    row[j] = exp(segsum) * dot_f64(C_i, hd.B + j * hd.bc_t, N) * delta[j];
                    segsum += dA[j];
                }
                const double h0_decay = exp(cum);  // exp(segsum(i, -1))
                for (int64_t pi = 0; pi < P; pi++) {
                    // Y_diag  = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", C, B, L, X)
                    double out = 0.0;
                    for (int64_t j = 0; j <= i; j++) out += row[j] * (double)hd.x[j * hd.x_t + pi];
                    // the initial state, decayed to step i: exp(cum_i)·(H0·C_i)
                    if (hd.h0) out += h0_decay * dot_f64(hd.h0 + pi * N, C_i, N);
                    store_output(&hd, i, pi, out);
                }
            }
            // final_state = exp(cum_{L-1})·H0 + Σ_j exp(segsum(L-1, j))·Δ_j·x_j ⊗ B_j;
            // row[j] now holds exp(segsum(L-1, j))·Δ_j.
            double segsum = 0.0;
            for (int64_t j = L - 1; j >= 0; j--) {
                row[j] = exp(segsum) * delta[j];
                segsum += dA[j];
            }
            const double h0_decay = exp(cum);  // cum = segsum(L-1, -1): the whole sequence's decay
            for (int64_t pi = 0; pi < P; pi++)
                for (int64_t n = 0; n < N; n++) {
                    double state = hd.h0 ? h0_decay * (double)hd.h0[pi * N + n] : 0.0;
                    for (int64_t j = 0; j < L; j++)
                        state += row[j] * (double)hd.x[j * hd.x_t + pi] *
                                 (double)hd.B[j * hd.bc_t + n];
                    hd.final_state[pi * N + n] = (float)state;
                }
        }
}

/* ---- 3. the chunked form: Listing 1, ssd_minimal_discrete ----
 *
 * Chunk c holds steps [c·Q, min((c+1)·Q, L)): the last chunk may be shorter.
 * The steps run in the official Triton pipeline's order (_chunk_cumsum_fwd,
 * _chunk_state_fwd, _state_passing_fwd, _chunk_scan_fwd): Listing 1's step 1
 * (Y_diag) needs nothing from steps 2-3, so it is computed with step 4 in one
 * pass over each chunk's outputs. */

static int64_t chunk_end(const Head *hd, int64_t Q, int64_t c) {
    return (c + 1) * Q < hd->L ? (c + 1) * Q : hd->L;
}

/* Δ_t and, per chunk, the inclusive cumsum of Δ·A from the chunk's first step. */
static void chunk_cumsum(const Head *hd, int64_t Q, int64_t n_chunks, double *delta, double *A_cumsum) {
    for (int64_t c = 0; c < n_chunks; c++) {
        double cumsum = 0.0;
        for (int64_t ti = c * Q; ti < chunk_end(hd, Q, c); ti++) {
            delta[ti] = delta_of(hd, ti);
            // A_cumsum = torch.cumsum(A, dim=-1)
            cumsum += delta[ti] * hd->A;
            A_cumsum[ti] = cumsum;
        }
    }
}

/* Step 2: each chunk's end state from a zero start, states (n_chunks, p, N).
 * A_cumsum restarts at every chunk, so the subtraction below is of two
 * cumsums at most Q steps long, in double: it loses nothing that matters. */
static void chunk_states(const Head *hd, int64_t Q, int64_t n_chunks, const double *delta,
                         const double *A_cumsum, double *decay_dt, float *states) {
    const int64_t P = hd->P, N = hd->N;
    for (int64_t c = 0; c < n_chunks; c++) {
        const int64_t t0 = c * Q, t1 = chunk_end(hd, Q, c), last = t1 - 1;
        for (int64_t s = t0; s < t1; s++)
            // decay_states = torch.exp((A_cumsum[:, :, :, -1:] - A_cumsum))
            // (times Δ_s: X in Listing 1 is Δ∘x)
            decay_dt[s - t0] = exp(A_cumsum[last] - A_cumsum[s]) * delta[s];
        // states = torch.einsum("bclhn,bhcl,bclhp->bchpn", B, decay_states, X)
        for (int64_t pi = 0; pi < P; pi++)
            for (int64_t n = 0; n < N; n++) {
                double state = 0.0;
                for (int64_t s = t0; s < t1; s++)
                    state += (double)hd->B[s * hd->bc_t + n] * decay_dt[s - t0] *
                             (double)hd->x[s * hd->x_t + pi];
                states[(c * P + pi) * N + n] = (float)state;
            }
    }
}

/* Step 3: the recurrence over chunks, S_in[0] = H0 (or 0),
 * S_in[c+1] = exp(A_cumsum_c[last])·S_in[c] + states[c]. In place: states[c]
 * becomes S_in[c], the state entering chunk c; final_state = S_in[n_chunks].
 * Listing 1 writes this scan as one matmul with the chunk-level decay matrix
 *   decay_chunk = torch.exp(segsum(F.pad(A_cumsum[:, :, :, -1], (1, 0))))
 *   new_states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)
 *   states, final_state = new_states[:, :-1], new_states[:, -1]
 * which is the same sum (the quadratic form again, one level up); the official
 * _state_passing_fwd walks the chunks in order, as here. */
static void pass_states(const Head *hd, int64_t Q, int64_t n_chunks, const double *A_cumsum, float *states) {
    const int64_t PN = hd->P * hd->N;
    float *carry = hd->final_state;  // (p, N) fp32: S_in[c] before chunk c; S_in[n_chunks] at the end
    // if initial_states is None:
    //     initial_states = torch.zeros_like(states[:, :1])
    for (int64_t e = 0; e < PN; e++) carry[e] = hd->h0 ? hd->h0[e] : 0.0f;
    for (int64_t c = 0; c < n_chunks; c++) {
        const double chunk_decay = exp(A_cumsum[chunk_end(hd, Q, c) - 1]);  // exp(Σ Δ·A over chunk c)
        float *state = states + c * PN;  // (p, N): chunk c's own state in, S_in[c] out
        for (int64_t e = 0; e < PN; e++) {
            const double local = state[e];
            state[e] = carry[e];
            carry[e] = (float)(chunk_decay * (double)carry[e] + local);
        }
    }
}

/* Steps 1 and 4: y_l = Y_diag + Y_off (+ D·x, z gating) for every step l. */
static void chunk_outputs(const Head *hd, int64_t Q, int64_t n_chunks, const double *delta,
                          const double *A_cumsum, const float *states, double *row) {
    const int64_t P = hd->P, N = hd->N;
    for (int64_t c = 0; c < n_chunks; c++) {
        const int64_t t0 = c * Q, t1 = chunk_end(hd, Q, c);
        const float *state_in = states + c * P * N;  // (p, N): S_in[c]
        for (int64_t l = t0; l < t1; l++) {
            const float *C_l = hd->C + l * hd->bc_t;  // (N,)
            // 1. the diagonal block's row l: row[s - t0] = exp(segsum(l, s))·(C_l·B_s)·Δ_s, t0 <= s <= l.
            // L = torch.exp(segsum(A)), segsum summing each segment (s, l] on its own:
            //   x = x.masked_fill(~mask, 0)
            //   x_segsum = torch.cumsum(x, dim=-2)
            double segsum = 0.0;  // Σ_{k=s+1..l} Δ_k·A, grown as s walks down from l
            for (int64_t s = l; s >= t0; s--) {
                row[s - t0] = exp(segsum) * dot_f64(C_l, hd->B + s * hd->bc_t, N) * delta[s];
                segsum += delta[s] * hd->A;
            }
            // state_decay_out = torch.exp(A_cumsum)
            const double state_decay_out = exp(A_cumsum[l]);
            for (int64_t pi = 0; pi < P; pi++) {
                // Y_diag  = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", C, B, L, X)
                double y_diag = 0.0;
                for (int64_t s = t0; s <= l; s++) y_diag += row[s - t0] * (double)hd->x[s * hd->x_t + pi];
                // 4. Y_off = torch.einsum('bclhn,bchpn,bhcl->bclhp', C, states, state_decay_out)
                const double y_off = state_decay_out * dot_f64(C_l, state_in + pi * N, N);
                // Y = rearrange(Y_diag+Y_off, "b c l h p -> b (c l) h p")
                store_output(hd, l, pi, y_diag + y_off);
            }
        }
    }
}

size_t ssd_chunked_cpu_workspace(const SsdShape *s) {
    return sizeof(double) * (size_t)(2 * s->seqlen + s->chunk) +
           sizeof(float) * (size_t)(ssd_n_chunks(s) * s->headdim * s->dstate);
}

void ssd_chunked_cpu(const SsdTensors *t, void *workspace) {
    const SsdShape *s = &t->s;
    const int64_t L = s->seqlen, Q = s->chunk, n_chunks = ssd_n_chunks(s);
    double *delta = workspace;                // (L,) fp64: Δ_t of one (b, h)
    double *A_cumsum = delta + L;             // (L,) fp64: the cumsum of Δ·A within each chunk,
                                              //   (n_chunks, Q) flattened
    double *row = A_cumsum + L;               // (Q,) fp64: per-step weights of one chunk row (steps 1, 2)
    float *states = (float *)(row + Q);       // (n_chunks, p, N) fp32: chunk states, then S_in per chunk
    for (int64_t bi = 0; bi < s->batch; bi++)
        for (int64_t hi = 0; hi < s->heads; hi++) {
            const Head hd = head_of(t, bi, hi);
            chunk_cumsum(&hd, Q, n_chunks, delta, A_cumsum);
            chunk_states(&hd, Q, n_chunks, delta, A_cumsum, row, states);
            pass_states(&hd, Q, n_chunks, A_cumsum, states);
            chunk_outputs(&hd, Q, n_chunks, delta, A_cumsum, states, row);
        }
}

/* Sequence k of a packed problem as a head view: the pointers moved to its
 * first step, its own initial and final state. */
static Head sequence_head(const SsdPacked *pk, int64_t k, int64_t hi) {
    const SsdShape *s = &pk->t.s;
    const int64_t start = pk->cu_seqlens[k], PN = s->headdim * s->dstate;
    const int64_t state0 = (k * s->heads + hi) * PN;
    Head hd = head_of(&pk->t, 0, hi);
    hd.L = pk->cu_seqlens[k + 1] - start;
    hd.x += start * hd.x_t;
    if (hd.z) hd.z += start * hd.x_t;
    hd.dt += start * hd.dt_t;
    hd.B += start * hd.bc_t;
    hd.C += start * hd.bc_t;
    hd.y += start * hd.x_t;
    hd.h0 = pk->t.initial_states ? pk->t.initial_states + state0 : NULL;
    hd.final_state = pk->t.final_state + state0;
    return hd;
}

/* Packed: each sequence of each head is the chunked form on its own, its
 * chunks counted from its first step (the workspace of the whole row covers
 * any sequence). The state after chunk c is the state entering chunk c + 1,
 * and after the last chunk the final state. */
void ssd_chunked_cpu_packed(const SsdPacked *pk, void *workspace) {
    const SsdShape *s = &pk->t.s;
    const int64_t L = s->seqlen, Q = s->chunk, PN = s->headdim * s->dstate;
    double *delta = workspace;            // (L,) fp64, as in ssd_chunked_cpu
    double *A_cumsum = delta + L;         // (L,) fp64
    double *row = A_cumsum + L;           // (Q,) fp64
    float *states = (float *)(row + Q);   // (chunks of the sequence, p, N) fp32
    for (int64_t hi = 0; hi < s->heads; hi++) {
        int64_t j = 0;  // the sequence's first chunk among all
        for (int64_t k = 0; k < pk->nseq; k++) {
            const Head hd = sequence_head(pk, k, hi);
            const int64_t n_chunks = (hd.L + Q - 1) / Q;
            chunk_cumsum(&hd, Q, n_chunks, delta, A_cumsum);
            chunk_states(&hd, Q, n_chunks, delta, A_cumsum, row, states);
            pass_states(&hd, Q, n_chunks, A_cumsum, states);
            chunk_outputs(&hd, Q, n_chunks, delta, A_cumsum, states, row);
            for (int64_t c = 0; c < n_chunks; c++, j++) {
                const float *after = c + 1 < n_chunks ? states + (c + 1) * PN : hd.final_state;  // (p, N)
                memcpy(pk->chunk_states + (j * s->heads + hi) * PN, after, sizeof(float) * (size_t)PN);
            }
        }
    }
}
