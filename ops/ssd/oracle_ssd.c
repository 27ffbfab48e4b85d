/* The fp64 oracle of Mamba-2's SSD: the Mamba-1 recurrence (oracle_row)
 * through the official Mamba-2 -> Mamba-1 mapping (ssd_selective_scan in
 * mamba_ssm/ops/triton/ssd_combined.py), read as strides. */
#include "op_ssd.h"

#include <stdlib.h>

/* The row of channel (hi, pi) of batch bi, in original time order:
 * ssd_selective_scan's rearranges, read as strides. */
ScanRow oracle_ssd_row(const SsdTensors *t, int64_t bi, int64_t hi, int64_t pi) {
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

void oracle_ssd(const SsdTensors *t, double *y, double *final_state, double *y_terms) {
    int64_t L = t->s.seqlen, H = t->s.heads, P = t->s.headdim, N = t->s.dstate;
    double *y_row = oracle_alloc((size_t)L * sizeof(double));       // (L,) one channel's output
    double *terms_row = oracle_alloc((size_t)L * sizeof(double));   // (L,) the magnitude of its terms
    double *h = oracle_alloc((size_t)N * sizeof(double));           // (N,) its final state
    for (int64_t bi = 0; bi < t->s.batch; bi++)
        for (int64_t hi = 0; hi < H; hi++)
            for (int64_t pi = 0; pi < P; pi++) {
                oracle_ssd_channel(t, bi, hi, pi, y_row, h, y_terms ? terms_row : NULL);
                // return rearrange(out, "b (h p) l -> b l h p", p=headdim)
                for (int64_t l = 0; l < L; l++) {
                    y[((bi * L + l) * H + hi) * P + pi] = y_row[l];
                    if (y_terms) y_terms[((bi * L + l) * H + hi) * P + pi] = terms_row[l];
                }
                if (final_state)
                    for (int64_t n = 0; n < N; n++) final_state[((bi * H + hi) * P + pi) * N + n] = h[n];
            }
    free(y_row);
    free(terms_row);
    free(h);
}

void oracle_ssd_channel(const SsdTensors *t, int64_t bi, int64_t hi, int64_t pi, double *y, double *state,
                        double *terms) {
    ScanRow r = oracle_ssd_row(t, bi, hi, pi);
    r.terms = terms;
    oracle_row(&r, y, state);
}

/* ---- a packed problem, sequence by sequence, one chunk after another ---- */

void oracle_ssd_packed_channel(const SsdPacked *pk, int64_t hi, int64_t pi, double *y, double *final_states,
                               double *chunk_states, double *terms) {
    const SsdShape *s = &pk->t.s;
    int64_t H = s->heads, P = s->headdim, N = s->dstate, Q = s->chunk, j = 0;
    ScanRow row = oracle_ssd_row(&pk->t, 0, hi, pi);  // the whole packed row, batch 0
    row.terms = terms;
    for (int64_t k = 0; k < pk->nseq; k++) {
        /* Sequence k from its own initial state; its state after each chunk
         * of Q steps counted from its first step (the last chunk shorter). */
        int64_t start = pk->cu_seqlens[k], len = pk->cu_seqlens[k + 1] - start;
        double *h = final_states + k * N;  // (N,): the running state, its final state at the end
        const float *h0 = pk->t.initial_states ? pk->t.initial_states + ((k * H + hi) * P + pi) * N : NULL;
        for (int64_t n = 0; n < N; n++) h[n] = h0 ? (double)h0[n] : 0.0;
        for (int64_t c0 = 0; c0 < len; c0 += Q, j++) {
            int64_t steps = len - c0 < Q ? len - c0 : Q;
            ScanRow seg = oracle_row_segment(row, start + c0, steps);
            oracle_row_from(&seg, y + start + c0, h);
            for (int64_t n = 0; n < N; n++) chunk_states[j * N + n] = h[n];
        }
    }
}

void oracle_ssd_packed(const SsdPacked *pk, int64_t nchunks, double *y, double *final_states, double *chunk_states,
                       double *y_terms) {
    const SsdShape *s = &pk->t.s;
    int64_t L = s->seqlen, H = s->heads, P = s->headdim, N = s->dstate, S = pk->nseq;
    double *y_row = oracle_alloc((size_t)L * sizeof(double));             // (L,) one channel's output
    double *terms_row = oracle_alloc((size_t)L * sizeof(double));         // (L,) the magnitude of its terms
    double *fin = oracle_alloc((size_t)(S * N) * sizeof(double));         // (nseq, N) its final states
    double *chunks = oracle_alloc((size_t)(nchunks * N) * sizeof(double)); // (nchunks, N) its chunk states
    for (int64_t hi = 0; hi < H; hi++)
        for (int64_t pi = 0; pi < P; pi++) {
            oracle_ssd_packed_channel(pk, hi, pi, y_row, fin, chunks, y_terms ? terms_row : NULL);
            for (int64_t l = 0; l < L; l++) {
                y[(l * H + hi) * P + pi] = y_row[l];
                if (y_terms) y_terms[(l * H + hi) * P + pi] = terms_row[l];
            }
            for (int64_t k = 0; k < S; k++)
                for (int64_t n = 0; n < N; n++) final_states[((k * H + hi) * P + pi) * N + n] = fin[k * N + n];
            for (int64_t j = 0; j < nchunks; j++)
                for (int64_t n = 0; n < N; n++) chunk_states[((j * H + hi) * P + pi) * N + n] = chunks[j * N + n];
        }
    free(y_row);
    free(terms_row);
    free(fin);
    free(chunks);
}
