/* The fp64 oracle of the Mamba-1 selective scan, and the routine every
 * operation's oracle comes down to: oracle_row, the recurrence of
 * selective_scan_ref for one channel, written as plain loops in double. SSD,
 * both bidirectional forms and the Mamba-1 scan only differ in where each row
 * finds its inputs (strides), which is exactly the official Mamba-2 -> Mamba-1
 * mapping (ssd_selective_scan in mamba_ssm/ops/triton/ssd_combined.py). */
#include "op_scan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void *oracle_alloc(size_t bytes) {
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
double oracle_silu(double z) { return z / (1.0 + exp(-z)); }

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

/* ---- one row of the Mamba-1 scan (ScanRow, op_scan.h: where its inputs live) ---- */

/* y (L,) in the row's own time order; h (N,): the final state. */
void oracle_row(const ScanRow *r, double *y, double *h) {
    // x = A.new_zeros((batch, dim, dstate))   (or the given initial state)
    for (int64_t n = 0; n < r->N; n++) h[n] = r->h0 ? (double)r->h0[n] : 0.0;
    oracle_row_from(r, y, h);
}

ScanRow oracle_row_segment(ScanRow r, int64_t start, int64_t len) {
    r.L = len;
    r.u += start * r.u_t;
    r.delta += start * r.delta_t;
    if (r.z) r.z += start * r.z_t;
    r.B += start * r.B_t;
    r.C += start * r.C_t;
    r.h0 = NULL;
    if (r.terms) r.terms += start;
    return r;
}

void oracle_row_from(const ScanRow *r, double *y, double *h) {
    for (int64_t t = 0; t < r->L; t++) {
        double u = r->u[t * r->u_t];
        double delta = r->delta[t * r->delta_t];
        // delta = delta + delta_bias[..., None].float()
        if (r->bias) delta += (double)*r->bias;
        // if delta_softplus: delta = F.softplus(delta)
        if (r->softplus) delta = oracle_softplus(delta);

        double y_t = 0.0, terms = 0.0;
        /* Mamba-2's A is one number a head (A_n == 0, repeated over n): one exp serves every
         * n of the step, the same value the loop would compute N times. */
        const double deltaA_shared = r->A_n == 0 ? exp(delta * (double)r->A[0]) : 0.0;
        for (int64_t n = 0; n < r->N; n++) {
            // deltaA = torch.exp(torch.einsum('bdl,dn->bdln', delta, A))
            double deltaA = r->A_n == 0 ? deltaA_shared : exp(delta * (double)r->A[n * r->A_n]);
            // deltaB_u = torch.einsum('bdl,bdnl,bdl->bdln', delta, B, u)
            double deltaB_u = delta * (double)r->B[n * r->B_n + t * r->B_t] * u;
            // x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
            h[n] = deltaA * h[n] + deltaB_u;
            // y = torch.einsum('bdn,bdn->bd', x, C[:, :, :, i])
            const double term = h[n] * (double)r->C[n * r->C_n + t * r->C_t];
            y_t += term;
            terms += fabs(term);
        }
        // out = y if D is None else y + u * rearrange(D, "d -> d 1")
        if (r->D) {
            y_t += u * (double)*r->D;
            terms += fabs(u * (double)*r->D);
        }
        // if z is not None: out = out * F.silu(z)
        if (r->z) {
            const double gate = oracle_silu(r->z[t * r->z_t]);
            y_t *= gate;
            terms *= fabs(gate);
        }
        y[t] = y_t;
        if (r->terms) r->terms[t] = terms;
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
    oracle_row(&r, y, state);
}

void oracle_scan(const ScanTensors *t, double *y, double *last_state) {
    const ScanShape *s = &t->s;
    for (int64_t bi = 0; bi < s->batch; bi++)
        for (int64_t c = 0; c < s->dim; c++) {
            int64_t row = bi * s->dim + c;
            oracle_scan_row(t, bi, c, y + row * s->seqlen, last_state + row * s->dstate);
        }
}

/* ---- a packed problem, sequence by sequence ---- */

void oracle_scan_packed_channel(const ScanPacked *pk, int64_t c, double *y, double *states) {
    const ScanTensors *t = &pk->t;
    const ScanShape *s = &t->s;
    int64_t d = s->dim, N = s->dstate, L = s->seqlen;
    // B = repeat(B, "B G N L -> B (G H) N L", H=dim // B.shape[1]): the channel's group, batch 0
    int64_t bc = scan_group_of(s, c) * N * L;
    for (int64_t k = 0; k < pk->nseq; k++) {
        /* Sequence k is selective_scan_ref on steps [start, end) of the row,
         * from its own initial state. */
        int64_t start = pk->cu_seqlens[k], len = pk->cu_seqlens[k + 1] - start;
        ScanRow r = {
            .L = len, .N = N, .softplus = s->softplus,
            .u = (const float *)t->u + c * L + start, .u_t = 1,
            .delta = (const float *)t->delta + c * L + start, .delta_t = 1,
            .z = s->has_z ? (const float *)t->z + c * L + start : NULL, .z_t = 1,
            .A = t->A + c * N, .A_n = 1,
            .B = (const float *)t->B + bc + start, .B_n = L, .B_t = 1,
            .C = (const float *)t->C + bc + start, .C_n = L, .C_t = 1,
            .D = s->has_D ? t->D + c : NULL,
            .bias = s->has_bias ? t->delta_bias + c : NULL,
            .h0 = s->has_h0 ? t->h0 + (k * d + c) * N : NULL,
        };
        oracle_row(&r, y + start, states + k * N);
    }
}

void oracle_scan_packed(const ScanPacked *pk, double *y, double *final_states) {
    const ScanShape *s = &pk->t.s;
    int64_t d = s->dim, N = s->dstate, L = s->seqlen;
    double *h = oracle_alloc((size_t)(pk->nseq * N) * sizeof(double));  // (nseq, N) one channel's final states
    for (int64_t c = 0; c < d; c++) {
        oracle_scan_packed_channel(pk, c, y + c * L, h);
        for (int64_t k = 0; k < pk->nseq; k++)
            for (int64_t n = 0; n < N; n++) final_states[(k * d + c) * N + n] = h[k * N + n];
    }
    free(h);
}
