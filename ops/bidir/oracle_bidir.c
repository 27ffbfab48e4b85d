/* The fp64 oracle of bidirectional Mamba-2, both forms, on the SSD oracle's rows. */
#include "op_bidir.h"

#include <math.h>
#include <stdlib.h>

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
    /* Each direction's Σ_n |C_n h_n| per step (original / flipped time), when
     * scale is asked for: the kernels round the N products of each
     * direction's C.h, so an output that cancels inside one direction keeps
     * their error (05's terms, ops/ssd/op_ssd.c). */
    double *terms_fwd = scale ? oracle_alloc((size_t)L * sizeof(double)) : NULL;  // (L,) or NULL
    double *terms_bwd = scale ? oracle_alloc((size_t)L * sizeof(double)) : NULL;  // (L,) or NULL
    int64_t channel = (bi * H + hi) * P + pi;

    /* Both directions are the Mamba-2 scan with D=None, z=None. */
    ScanRow fw = oracle_ssd_row(&f, bi, hi, pi);
    fw.D = NULL;
    fw.z = NULL;
    fw.h0 = t->initial_states ? t->initial_states + channel * N : NULL;
    fw.terms = terms_fwd;
    oracle_row(&fw, y_fwd, h);

    /* flip(x), flip(dt), flip(B), flip(C): start at the last step and walk
     * back, from the backward direction's own initial state. Hydra's
     * backward direction reads its own dt_bwd, B_bwd, C_bwd, given in
     * original time order:
     *   x = torch.cat((x, torch.flip(x, (1,))), dim=0)
     *   torch.flip(BC[:, :, 2 * self.ngroups * self.d_state:], (1,)) */
    ScanRow bw = fw;
    bw.h0 = t->initial_states_bwd ? t->initial_states_bwd + channel * N : NULL;
    bw.terms = terms_bwd;
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
    oracle_row(&bw, y_bwd, h);

    const float *D = NULL;   // this channel's D, NULL without D
    if (t->D) D = s->s.D_per_channel ? t->D + hi * P + pi : t->D + hi;
    for (int64_t l = 0; l < L; l++) {
        int64_t i = ((bi * L + l) * H + hi) * P + pi;
        int64_t lf = l, lb = L - 1 - l;  // the steps of y_fwd and y_bwd that land on l (-1 or L: none)
        if (s->hydra) {
            /* y = torch.roll(y, shifts=1, dims=1); y[:, 0, :] = 0.0
             * y_fw, y_bw = y[:batch], torch.flip(y[batch:], (1,))
             * y_bw at step l is the shifted backward output at flipped
             * step L-1-l, i.e. y_bwd[L-2-l]. */
            lf = l - 1;
            lb = L - 2 - l;
        }
        const double fwd_l = lf >= 0 ? y_fwd[lf] : 0.0, bwd_l = lb >= 0 ? y_bwd[lb] : 0.0;
        // y = y_fw + y_bw + x_og * D   (Hydra's D is input-dependent; here a parameter)
        const double skip = D ? (double)((const float *)t->x)[i] * (double)*D : 0.0;
        double y_l = fwd_l + bwd_l + skip, terms = fabs(skip);
        if (scale) terms += (lf >= 0 ? terms_fwd[lf] : 0.0) + (lb >= 0 ? terms_bwd[lb] : 0.0);
        // out = out * F.silu(z), after the sum (as the causal scan gates its own output)
        if (t->z) {
            const double gate = oracle_silu((double)((const float *)t->z)[i]);
            y_l *= gate;
            terms *= fabs(gate);
        }
        y[l] = y_l;
        if (scale) scale[l] = terms;
    }
    free(y_fwd);
    free(y_bwd);
    free(h);
    free(terms_fwd);
    free(terms_bwd);
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
