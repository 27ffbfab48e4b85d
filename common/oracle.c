/* The fp64 oracle. Every operation comes down to one routine, scan_row: the
 * Mamba-1 recurrence of selective_scan_ref for one channel, written as plain
 * loops in double. SSD, both bidirectional forms and the Mamba-1 scan only
 * differ in where each row finds its inputs (strides), which is exactly the
 * official Mamba-2 -> Mamba-1 mapping (ssd_selective_scan in
 * mamba_ssm/ops/triton/ssd_combined.py). The decode step mirrors
 * selective_state_update_ref (mamba_ssm/ops/triton/selective_state_update.py). */
#include "oracle.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void *oracle_alloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "oracle: cannot allocate %zu bytes\n", bytes);
        exit(2);
    }
    return p;
}

/* ---- scalar pieces ---- */

/* torch.nn.functional.softplus(x) with its default beta 1, threshold 20. */
double oracle_softplus(double x) { return x <= 20.0 ? log1p(exp(x)) : x; }

/* silu(z) = z * sigmoid(z); exp(-z) = inf for very negative z gives 0, as it should. */
static double silu(double z) { return z / (1.0 + exp(-z)); }

void oracle_discretize(DiscRule rule, double a, double b, double dt, double *abar, double *bbar) {
    switch (rule) {
    case DISC_ZOH:
        /* abar = exp(dt a), bbar = (exp(dt a) - 1) / a * b, with expm1 so that
         * small dt*a keeps its digits; the limit a -> 0 is dt * b. */
        *abar = exp(dt * a);
        *bbar = a == 0.0 ? dt * b : expm1(dt * a) / a * b;
        break;
    case DISC_EULER_B:
        /* deltaA = torch.exp(torch.einsum('bdl,dn->bdln', delta, A))
         * deltaB_u = torch.einsum('bdl,bdnl,bdl->bdln', delta, B, u) */
        *abar = exp(dt * a);
        *bbar = dt * b;
        break;
    case DISC_EULER:
        *abar = 1.0 + dt * a;
        *bbar = dt * b;
        break;
    }
}

/* ---- one row of the Mamba-1 scan ---- */

/* Where one channel's inputs live. Element t of a sequence input is at
 * ptr[t * stride]; a pointer at the last step with a negative stride walks
 * time backwards (flip). Per-channel scalars are single pointers. */
typedef struct {
    int64_t L, N;
    bool softplus;
    const float *u;     int64_t u_t;          // u_t = u[t * u_t]
    const float *delta; int64_t delta_t;      // delta_t = delta[t * delta_t]
    const float *z;     int64_t z_t;          // NULL without z
    const float *A;     int64_t A_n;          // A[n] = A[n * A_n]; A_n = 0: one value for every n
    const float *B;     int64_t B_n, B_t;     // B_t[n] = B[n * B_n + t * B_t]
    const float *C;     int64_t C_n, C_t;
    const float *D;                           // one value, NULL without D
    const float *bias;                        // one value, NULL without bias
    const float *h0;                          // (N,) contiguous, NULL: start from zero
} ScanRow;

/* y (L,) in the row's own time order; h (N,): the final state. */
static void scan_row(const ScanRow *r, double *y, double *h) {
    // x = A.new_zeros((batch, dim, dstate))   (or the given initial state)
    for (int64_t n = 0; n < r->N; n++) h[n] = r->h0 ? (double)r->h0[n] : 0.0;

    for (int64_t t = 0; t < r->L; t++) {
        double u = r->u[t * r->u_t];
        double delta = r->delta[t * r->delta_t];
        // delta = delta + delta_bias[..., None].float()
        if (r->bias) delta += (double)*r->bias;
        // if delta_softplus: delta = F.softplus(delta)
        if (r->softplus) delta = oracle_softplus(delta);

        double y_t = 0.0;
        for (int64_t n = 0; n < r->N; n++) {
            // deltaA = torch.exp(torch.einsum('bdl,dn->bdln', delta, A))
            double deltaA = exp(delta * (double)r->A[n * r->A_n]);
            // deltaB_u = torch.einsum('bdl,bdnl,bdl->bdln', delta, B, u)
            double deltaB_u = delta * (double)r->B[n * r->B_n + t * r->B_t] * u;
            // x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
            h[n] = deltaA * h[n] + deltaB_u;
            // y = torch.einsum('bdn,bdn->bd', x, C[:, :, :, i])
            y_t += h[n] * (double)r->C[n * r->C_n + t * r->C_t];
        }
        // out = y if D is None else y + u * rearrange(D, "d -> d 1")
        if (r->D) y_t += u * (double)*r->D;
        // if z is not None: out = out * F.silu(z)
        if (r->z) y_t *= silu(r->z[t * r->z_t]);
        y[t] = y_t;
    }
}

/* ---- Mamba-1 selective scan ---- */

void oracle_scan_row(const ScanTensors *t, int64_t bi, int64_t c, double *y, double *state) {
    const ScanShape *s = &t->s;
    int64_t d = s->dim, N = s->dstate, L = s->seqlen, G = s->groups;
    int64_t row = bi * d + c;
    // B = repeat(B, "B G N L -> B (G H) N L", H=dim // B.shape[1])
    int64_t bc = (bi * G + scan_group_of(s, c)) * N * L;
    ScanRow r = {
        .L = L, .N = N, .softplus = s->softplus,
        .u = (const float *)t->u + row * L, .u_t = 1,
        .delta = (const float *)t->delta + row * L, .delta_t = 1,
        .z = s->has_z ? (const float *)t->z + row * L : NULL, .z_t = 1,
        .A = t->A + c * N, .A_n = 1,
        .B = (const float *)t->B + bc, .B_n = L, .B_t = 1,
        .C = (const float *)t->C + bc, .C_n = L, .C_t = 1,
        .D = s->has_D ? t->D + c : NULL,
        .bias = s->has_bias ? t->delta_bias + c : NULL,
        .h0 = s->has_h0 ? t->h0 + row * N : NULL,
    };
    scan_row(&r, y, state);
}

void oracle_scan(const ScanTensors *t, double *y, double *last_state) {
    const ScanShape *s = &t->s;
    for (int64_t bi = 0; bi < s->batch; bi++)
        for (int64_t c = 0; c < s->dim; c++) {
            int64_t row = bi * s->dim + c;
            oracle_scan_row(t, bi, c, y + row * s->seqlen, last_state + row * s->dstate);
        }
}

/* ---- Mamba-2 SSD through the Mamba-1 mapping ---- */

/* The row of channel (hi, pi) of batch bi, in original time order:
 * ssd_selective_scan's rearranges, read as strides. */
static ScanRow ssd_row(const SsdTensors *t, int64_t bi, int64_t hi, int64_t pi) {
    const SsdShape *s = &t->s;
    int64_t L = s->seqlen, H = s->heads, P = s->headdim, G = s->groups, N = s->dstate;
    const float *x = t->x, *dt = t->dt, *B = t->B, *C = t->C, *z = t->z;  // fp32 host arrays
    // x = rearrange(x, "b l h p -> b (h p) l")
    int64_t x0 = bi * L * H * P + hi * P + pi;
    // B = rearrange(B, "b l g n -> b g n l"), then in selective_scan_ref
    // B = repeat(B, "B G N L -> B (G H) N L", H=dim // B.shape[1]): channel hi*P+pi uses group hi / (H/G)
    int64_t bc0 = bi * L * G * N + (hi / (H / G)) * N;
    ScanRow r = {
        .L = L, .N = N, .softplus = s->softplus,
        .u = x + x0, .u_t = H * P,
        // dt = repeat(dt, "b l h -> b l h p", p=headdim); dt = rearrange(dt, "b l h p -> b (h p) l")
        .delta = dt + bi * L * H + hi, .delta_t = H,
        // z = rearrange(z, "b l h p -> b (h p) l")
        .z = z ? z + x0 : NULL, .z_t = H * P,
        // A = repeat(A, "h -> (h p) n", p=headdim, n=dstate)
        .A = t->A + hi, .A_n = 0,
        .B = B + bc0, .B_n = 1, .B_t = G * N,
        .C = C + bc0, .C_n = 1, .C_t = G * N,
        // D = rearrange(D, "h p -> (h p)")  or  D = repeat(D, "h -> (h p)", p=headdim)
        .D = t->D ? (s->D_per_channel ? t->D + hi * P + pi : t->D + hi) : NULL,
        // dt_bias = repeat(dt_bias, "h -> h p", p=headdim); dt_bias = rearrange(dt_bias, "h p -> (h p)")
        .bias = t->dt_bias ? t->dt_bias + hi : NULL,
        .h0 = t->initial_states ? t->initial_states + ((bi * H + hi) * P + pi) * N : NULL,
    };
    return r;
}

void oracle_ssd(const SsdTensors *t, double *y, double *final_state) {
    int64_t L = t->s.seqlen, H = t->s.heads, P = t->s.headdim, N = t->s.dstate;
    double *y_row = oracle_alloc((size_t)L * sizeof(double));   // (L,) one channel's output
    double *h = oracle_alloc((size_t)N * sizeof(double));       // (N,) its final state
    for (int64_t bi = 0; bi < t->s.batch; bi++)
        for (int64_t hi = 0; hi < H; hi++)
            for (int64_t pi = 0; pi < P; pi++) {
                oracle_ssd_channel(t, bi, hi, pi, y_row, h);
                // return rearrange(out, "b (h p) l -> b l h p", p=headdim)
                for (int64_t l = 0; l < L; l++) y[((bi * L + l) * H + hi) * P + pi] = y_row[l];
                if (final_state)
                    for (int64_t n = 0; n < N; n++) final_state[((bi * H + hi) * P + pi) * N + n] = h[n];
            }
    free(y_row);
    free(h);
}

void oracle_ssd_channel(const SsdTensors *t, int64_t bi, int64_t hi, int64_t pi, double *y, double *state) {
    ScanRow r = ssd_row(t, bi, hi, pi);
    scan_row(&r, y, state);
}

/* ---- Bidirectional Mamba-2 ----
 * Default: y = SS(x) + flip(SS(flip(x))) + D*x, one set of parameters.
 * Hydra (goombalab/hydra, hydra/modules/hydra.py): both directions run as one
 * batch of 2b through mamba_chunk_scan_combined(..., D=None, z=None), the
 * backward half on flipped inputs, then every output moves one step later. */

void oracle_bidir_channel(const BidirTensors *t, int64_t bi, int64_t hi, int64_t pi, double *y, double *scale) {
    const BidirShape *s = &t->s;
    int64_t L = s->s.seqlen, H = s->s.heads, P = s->s.headdim, G = s->s.groups, N = s->s.dstate;
    /* The forward direction's inputs as an SSD problem: ssd_row reads them. */
    SsdTensors f = {s->s, t->x, t->dt, t->A, t->B, t->C, t->D, t->z, t->dt_bias, t->initial_states, NULL, NULL};
    double *y_fwd = oracle_alloc((size_t)L * sizeof(double)); // (L,) SS(x), original time
    double *y_bwd = oracle_alloc((size_t)L * sizeof(double)); // (L,) SS(flip(x)), flipped time
    double *h = oracle_alloc((size_t)N * sizeof(double));     // (N,) final state, unused
    int64_t channel = (bi * H + hi) * P + pi;

    /* Both directions are the Mamba-2 scan with D=None, z=None. */
    ScanRow fw = ssd_row(&f, bi, hi, pi);
    fw.D = NULL;
    fw.z = NULL;
    fw.h0 = t->initial_states ? t->initial_states + channel * N : NULL;
    scan_row(&fw, y_fwd, h);

    /* flip(x), flip(dt), flip(B), flip(C): start at the last step and walk
     * back, from the backward direction's own initial state. Hydra's
     * backward direction reads its own dt_bwd, B_bwd, C_bwd, given in
     * original time order:
     *   x = torch.cat((x, torch.flip(x, (1,))), dim=0)
     *   torch.flip(BC[:, :, 2 * self.ngroups * self.d_state:], (1,)) */
    ScanRow bw = fw;
    bw.h0 = t->initial_states_bwd ? t->initial_states_bwd + channel * N : NULL;
    if (s->hydra) {
        int64_t bc0 = bi * L * G * N + (hi / (H / G)) * N;
        bw.delta = (const float *)t->dt_bwd + bi * L * H + hi;
        bw.B = (const float *)t->B_bwd + bc0;
        bw.C = (const float *)t->C_bwd + bc0;
    }
    bw.u += (L - 1) * bw.u_t;             bw.u_t = -bw.u_t;
    bw.delta += (L - 1) * bw.delta_t;     bw.delta_t = -bw.delta_t;
    bw.B += (L - 1) * bw.B_t;             bw.B_t = -bw.B_t;
    bw.C += (L - 1) * bw.C_t;             bw.C_t = -bw.C_t;
    scan_row(&bw, y_bwd, h);

    const float *D = NULL;   // this channel's D, NULL without D
    if (t->D) D = s->s.D_per_channel ? t->D + hi * P + pi : t->D + hi;
    for (int64_t l = 0; l < L; l++) {
        int64_t i = ((bi * L + l) * H + hi) * P + pi;
        double fwd_l, bwd_l;
        if (s->hydra) {
            /* y = torch.roll(y, shifts=1, dims=1); y[:, 0, :] = 0.0
             * y_fw, y_bw = y[:batch], torch.flip(y[batch:], (1,))
             * y_bw at step l is the shifted backward output at flipped
             * step L-1-l, i.e. y_bwd[L-2-l]. */
            fwd_l = l >= 1 ? y_fwd[l - 1] : 0.0;
            bwd_l = l <= L - 2 ? y_bwd[L - 2 - l] : 0.0;
        } else {
            fwd_l = y_fwd[l];
            bwd_l = y_bwd[L - 1 - l];
        }
        // y = y_fw + y_bw + x_og * D   (Hydra's D is input-dependent; here a parameter)
        const double skip = D ? (double)((const float *)t->x)[i] * (double)*D : 0.0;
        double y_l = fwd_l + bwd_l + skip, terms = fabs(fwd_l) + fabs(bwd_l) + fabs(skip);
        // out = out * F.silu(z), after the sum (as the causal scan gates its own output)
        if (t->z) {
            const double gate = silu((double)((const float *)t->z)[i]);
            y_l *= gate;
            terms *= fabs(gate);
        }
        y[l] = y_l;
        if (scale) scale[l] = terms;
    }
    free(y_fwd);
    free(y_bwd);
    free(h);
}

void oracle_bidir(const BidirTensors *t, double *y, double *scale) {
    const SsdShape *s = &t->s.s;
    int64_t L = s->seqlen, H = s->heads, P = s->headdim;
    double *y_row = oracle_alloc((size_t)L * sizeof(double));      // (L,) one channel's output
    double *scale_row = oracle_alloc((size_t)L * sizeof(double));  // (L,) its Σ|term|
    for (int64_t bi = 0; bi < s->batch; bi++)
        for (int64_t hi = 0; hi < H; hi++)
            for (int64_t pi = 0; pi < P; pi++) {
                oracle_bidir_channel(t, bi, hi, pi, y_row, scale_row);
                for (int64_t l = 0; l < L; l++) {
                    const int64_t i = ((bi * L + l) * H + hi) * P + pi;
                    if (y) y[i] = y_row[l];
                    if (scale) scale[i] = scale_row[l];
                }
            }
    free(y_row);
    free(scale_row);
}

/* ---- Decode step ---- */

/* One state row over the T tokens. Mamba-1 (selective_state_update_ref with
 * state (b, d, N)): row = bi*d + c, its own A row, dt, D and dt_bias; B and C
 * per batch entry. Mamba-2: the tied form that Mamba2.step
 * (mamba_ssm/modules/mamba2.py) builds before calling selective_state_update:
 *   A = repeat(A, "h -> h p n", p=self.headdim, n=self.d_state).to(dtype=torch.float32)
 *   dt = repeat(dt, "b h -> b h p", p=self.headdim)
 *   dt_bias = repeat(self.dt_bias, "h -> h p", p=self.headdim)
 *   D = repeat(self.D, "h -> h p", p=self.headdim)
 * so one dt, A, D and dt_bias serve every p of head hi = row / p % h, and
 *   B = repeat(B, "b g n -> b (g h) n", h=nheads // ngroups)
 * picks B and C of the head's group. Token k reads x, dt, z, B, C at k and
 * writes y at k; the state carries from one token to the next in fp64. */
void oracle_decode_row(const DecodeTensors *t, int64_t row, double *y, double *state) {
    const DecodeShape *s = &t->s;
    int64_t T = s->tokens, N = s->dstate, W = decode_width(s);
    int64_t bi = row / W, c = row % W;       // c: channel (M1) or hi·p + pi (M2)
    int64_t hi = s->form == DECODE_M2 ? c / s->headdim : c;  // what dt, D, dt_bias follow: head (M2) or channel (M1)
    const float *A = t->A + (s->form == DECODE_M1 ? c * N : hi);  // (N,) for M1, one value for M2
    int64_t dt_width = s->form == DECODE_M1 ? W : s->heads;
    const float *x = t->x, *dtp = t->dt, *z = t->z, *B = t->B, *C = t->C;
    int64_t bc_width = s->form == DECODE_M1 ? N : s->groups * N;
    int64_t bc_off = s->form == DECODE_M1 ? 0 : decode_group_of(s, hi) * N;
    for (int64_t n = 0; n < N; n++) state[n] = t->state[row * N + n];
    for (int64_t k = 0; k < T; k++) {
        int64_t at = (bi * T + k) * W + c;                            // x, z, y
        const float *Bk = B + (bi * T + k) * bc_width + bc_off;       // (N,)
        const float *Ck = C + (bi * T + k) * bc_width + bc_off;       // (N,)
        double xv = x[at];
        double dt = dtp[(bi * T + k) * dt_width + hi];
        // dt = dt + dt_bias
        if (t->dt_bias) dt += (double)t->dt_bias[hi];
        // dt = F.softplus(dt) if dt_softplus else dt
        if (s->softplus) dt = oracle_softplus(dt);
        double out = 0.0;
        for (int64_t n = 0; n < N; n++) {
            // dA = torch.exp(rearrange(dt, "b d -> b d 1") * A)
            double dA = exp(dt * (double)A[s->form == DECODE_M1 ? n : 0]);
            // dB = rearrange(dt, "b d -> b d 1") * rearrange(B, "b n -> b 1 n")
            double dB = dt * (double)Bk[n];
            // state.copy_(state * dA + dB * rearrange(x, "b d -> b d 1"))
            state[n] = state[n] * dA + dB * xv;
            // out = torch.einsum("bdn,bn->bd", state.to(C.dtype), C)
            out += state[n] * (double)Ck[n];
        }
        // if D is not None: out += (x * D).to(out.dtype)
        if (t->D) out += xv * (double)t->D[hi];
        // return (out if z is None else out * F.silu(z)).to(x.dtype)
        if (z) out *= silu(z[at]);
        y[k] = out;
    }
}

void oracle_decode(const DecodeTensors *t, double *y, double *state_out) {
    const DecodeShape *s = &t->s;
    int64_t T = s->tokens, N = s->dstate, W = decode_width(s);
    double *yr = oracle_alloc((size_t)T * sizeof(double));  // (T,) fp64: one row's outputs
    for (int64_t row = 0; row < decode_rows(s); row++) {
        oracle_decode_row(t, row, yr, state_out + row * N);
        int64_t bi = row / W, c = row % W;
        for (int64_t k = 0; k < T; k++) y[(bi * T + k) * W + c] = yr[k];
    }
    free(yr);
}
