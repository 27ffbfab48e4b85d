/* The fp64 oracle of Mamba-3 SISO, the step form: one (sequence, head) at a
 * time, every step in order, as mamba3_siso_step_ref computes it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_mamba3.h"
#include "tensor.h"

static const double PI = 3.14159265358979323846;

/* x (N,) rotated by the angles th (S,) on the pairs (2i, 2i+1), i < S. */
static void rotate(double *x, const double *th, int64_t S) {
    for (int64_t i = 0; i < S; i++) {
        const double c = cos(th[i]), s = sin(th[i]), a = x[2 * i], b = x[2 * i + 1];
        x[2 * i] = a * c - b * s;
        x[2 * i + 1] = a * s + b * c;
    }
}

/* The four initial states of (sequence, head) o, zeros without them: angle
 * (S,), ssm (p, N), k (N,), v (p,) fp64. */
static void states_in(const Mamba3Tensors *t, int64_t o, double *angle, double *ssm, double *k, double *v) {
    const int64_t S = t->s.angles, P = t->s.headdim, N = t->s.dstate;
    for (int64_t i = 0; i < S; i++) angle[i] = t->angle_state ? t->angle_state[o * S + i] : 0.0;
    for (int64_t i = 0; i < P * N; i++) ssm[i] = t->ssm_state ? t->ssm_state[o * P * N + i] : 0.0;
    for (int64_t i = 0; i < N; i++) k[i] = t->k_state ? t->k_state[o * N + i] : 0.0;
    for (int64_t i = 0; i < P; i++) v[i] = t->v_state ? t->v_state[o * P + i] : 0.0;
}

void oracle_mamba3_head(const Mamba3Pool *pool, int64_t n, int64_t h, double *y, double *angle, double *ssm,
                        double *k, double *v, double *y_terms) {
    const Mamba3Tensors *t = &pool->t;
    const Mamba3Shape *s = &t->s;
    const int64_t L = s->seqlen, H = s->heads, G = s->heads_qk, P = s->headdim, N = s->dstate, S = s->angles;
    const int64_t g = h / (H / G);  // this head's qk head
    const float *q_in = t->q, *k_in = t->k, *v_in = t->v, *z_in = t->z;  // fp32 host arrays
    int64_t row, t0, t1;
    mamba3_sequence(t, n, &row, &t0, &t1);
    double *q = host_alloc(N * 8, "oracle head");   // (N,) fp64: this step's rotated query
    double *kt = host_alloc(N * 8, "oracle head");  // (N,) fp64: this step's rotated key
    double *mag = y_terms ? host_alloc(P * N * 8, "oracle head") : NULL;  // (p, N) fp64: the state's Σ|term|
    const int64_t state = mamba3_state_of(pool, n);
    if (state < 0) {  // a pool's padding entry: y and its terms zeros, no state
        for (int64_t i = 0; i < (t1 - t0) * P; i++) y[i] = 0.0;
        for (int64_t i = 0; y_terms && i < (t1 - t0) * P; i++) y_terms[i] = 0.0;
        free(q), free(kt), free(mag);
        return;
    }
    states_in(t, state * H + h, angle, ssm, k, v);
    for (int64_t i = 0; mag && i < P * N; i++) mag[i] = fabs(ssm[i]);
    for (int64_t l = t0; l < t1; l++) {
        const int64_t bl = row * L + l, hl = (row * H + h) * L + l;
        const double dt = t->dt[hl], alpha = exp((double)t->adt[hl]), lambda = 1.0 / (1.0 + exp(-(double)t->trap[hl]));
        // Angle_State = Angle_State + angles * dt;  Angle_State = Angle_State - TWO_PI * floor(Angle_State / TWO_PI)
        for (int64_t i = 0; i < S; i++) {
            double a = fmod(angle[i] + PI * tanh((double)t->angles[(bl * H + h) * S + i]) * dt, 2.0 * PI);
            angle[i] = a < 0.0 ? a + 2.0 * PI : a;
        }
        for (int64_t i = 0; i < N; i++) {
            q[i] = (double)q_in[(bl * G + g) * N + i] + t->q_bias[h * N + i];
            kt[i] = (double)k_in[(bl * G + g) * N + i] + t->k_bias[h * N + i];
        }
        rotate(q, angle, S);
        rotate(kt, angle, S);
        // H_t = α H_{t-1} + (1 - λ) dt α v_{t-1} k_{t-1}^T + λ dt v_t k_t^T;  y_t = H_t q_t + D v_t
        const double before = (1.0 - lambda) * dt * alpha, now = lambda * dt;
        for (int64_t pi = 0; pi < P; pi++) {
            const double vt = v_in[(bl * H + h) * P + pi];
            double acc = 0.0, terms = 0.0;
            for (int64_t i = 0; i < N; i++) {
                double *hs = &ssm[pi * N + i];
                *hs = alpha * *hs + before * v[pi] * k[i] + now * vt * kt[i];
                acc += *hs * q[i];
                if (mag) {  // the same recurrence on the terms' magnitudes
                    double *m = &mag[pi * N + i];
                    *m = alpha * *m + fabs(before * v[pi] * k[i]) + fabs(now * vt * kt[i]);
                    terms += *m * fabs(q[i]);
                }
            }
            if (t->D) acc += (double)t->D[h] * vt, terms += fabs((double)t->D[h] * vt);
            if (z_in) {
                const double z = z_in[(bl * H + h) * P + pi], gate = z / (1.0 + exp(-z));
                acc *= gate, terms *= fabs(gate);
            }
            y[(l - t0) * P + pi] = acc;
            if (y_terms) y_terms[(l - t0) * P + pi] = terms;
        }
        for (int64_t pi = 0; pi < P; pi++) v[pi] = v_in[(bl * H + h) * P + pi];
        memcpy(k, kt, (size_t)N * sizeof(double));
    }
    free(q);
    free(kt);
    free(mag);
}

void oracle_mamba3(const Mamba3Pool *pool, double *y, double *angle, double *ssm, double *k, double *v,
                   double *y_terms) {
    const Mamba3Tensors *t = &pool->t;
    const Mamba3Shape *s = &t->s;
    const int64_t H = s->heads, P = s->headdim, N = s->dstate, S = s->angles, L = s->seqlen;
    const int64_t nseq = s->nseq ? s->nseq : s->batch;
    double *yh = host_alloc(L * P * 8, "oracle");                         // (len, p) fp64: one head's outputs
    double *th = y_terms ? host_alloc(L * P * 8, "oracle") : NULL;        // (len, p) fp64: their Σ|term|
    if (pool->state_batch_indices)  // a pool: the slots no entry names keep their states
        for (int64_t o = 0; o < pool->slots * H; o++) {
            for (int64_t i = 0; i < S; i++) angle[o * S + i] = t->angle_state[o * S + i];
            for (int64_t i = 0; i < P * N; i++) ssm[o * P * N + i] = t->ssm_state[o * P * N + i];
            for (int64_t i = 0; i < N; i++) k[o * N + i] = t->k_state[o * N + i];
            for (int64_t i = 0; i < P; i++) v[o * P + i] = t->v_state[o * P + i];
        }
    for (int64_t n = 0; n < nseq; n++)
        for (int64_t h = 0; h < H; h++) {
            // a padding entry writes no state: its head gets the pool's first row to leave as it is
            const int64_t o = (mamba3_state_of(pool, n) < 0 ? 0 : mamba3_state_of(pool, n)) * H + h;
            oracle_mamba3_head(pool, n, h, yh, angle + o * S, ssm + o * P * N, k + o * N, v + o * P, th);
            int64_t row, t0, t1;
            mamba3_sequence(t, n, &row, &t0, &t1);
            for (int64_t l = t0; l < t1; l++) {
                const int64_t at = ((row * L + l) * H + h) * P;
                memcpy(y + at, yh + (l - t0) * P, (size_t)P * sizeof(double));
                if (th) memcpy(y_terms + at, th + (l - t0) * P, (size_t)P * sizeof(double));
            }
        }
    free(yh);
    free(th);
}

/* The chunked form. Write β_t = (1 - λ_t) dt_t α_t and γ_t = λ_t dt_t, and
 * A_t = Σ_{u<=t} adt_u from the chunk's first step. Since α_{s+1} e^{A_t -
 * A_{s+1}} = e^{A_t - A_s}, the last step's term of step s+1 joins step s's
 * own, and within a chunk
 *   H_t = e^{A_t} H_0' + Σ_{s<t} e^{A_t - A_s} w_s v_s k̃_sᵀ + γ_t v_t k̃_tᵀ,
 *   w_s = γ_s + (1 - λ_{s+1}) dt_{s+1},   H_0' = H_in + (1 - λ_0) dt_0 v_in k̃_inᵀ
 * (H_in, k̃_in, v_in: what the chunk before left). So
 *   y_t = e^{A_t} H_0' q̃_t + Σ_{s<t} e^{A_t - A_s} w_s (q̃_t·k̃_s) v_s + γ_t (q̃_t·k̃_t) v_t + D v_t:
 * Mamba-2's SSD with a per-key scale w_s and a diagonal of its own (γ_t, not
 * w_t), and the chunk's state H_0' e^{A_last} + Σ_s e^{A_last - A_s} w_s v_s k̃_sᵀ
 * (w_last = γ_last: the next step's term starts the next chunk's H_0'). */
void oracle_mamba3_chunked_head(const Mamba3Tensors *t, int64_t Q, int64_t n, int64_t h, double *y, double *angle,
                                double *ssm, double *k, double *v) {
    const Mamba3Shape *s = &t->s;
    const int64_t L = s->seqlen, H = s->heads, G = s->heads_qk, P = s->headdim, N = s->dstate, S = s->angles;
    const int64_t g = h / (H / G);
    const float *q_in = t->q, *k_in = t->k, *v_in = t->v, *z_in = t->z;  // fp32 host arrays
    int64_t row, t0, t1;
    mamba3_sequence(t, n, &row, &t0, &t1);
    double *qc = host_alloc(Q * N * 8, "oracle chunk");  // (Q, N) fp64: the chunk's rotated queries
    double *kc = host_alloc(Q * N * 8, "oracle chunk");  // (Q, N) fp64: its rotated keys
    double *cum = host_alloc(Q * 8, "oracle chunk");     // (Q,) fp64: A_t
    double *w = host_alloc(Q * 8, "oracle chunk");       // (Q,) fp64: w_s
    double *gam = host_alloc(Q * 8, "oracle chunk");     // (Q,) fp64: γ_t
    states_in(t, n * H + h, angle, ssm, k, v);
    for (int64_t c0 = t0; c0 < t1; c0 += Q) {
        const int64_t m = t1 - c0 < Q ? t1 - c0 : Q;
        double lam_next = 0.0;
        for (int64_t j = 0; j < m; j++) {
            const int64_t bl = row * L + c0 + j, hl = (row * H + h) * L + c0 + j;
            const double dt = t->dt[hl], lam = 1.0 / (1.0 + exp(-(double)t->trap[hl]));
            cum[j] = (j ? cum[j - 1] : 0.0) + t->adt[hl];
            gam[j] = lam * dt;
            if (j == 0) lam_next = (1.0 - lam) * dt;  // (1 - λ_0) dt_0: the previous chunk's key, folded into H_0'
            else w[j - 1] += (1.0 - lam) * dt;
            w[j] = gam[j];
            for (int64_t i = 0; i < S; i++) {
                double a = fmod(angle[i] + PI * tanh((double)t->angles[(bl * H + h) * S + i]) * dt, 2.0 * PI);
                angle[i] = a < 0.0 ? a + 2.0 * PI : a;
            }
            for (int64_t i = 0; i < N; i++) {
                qc[j * N + i] = (double)q_in[(bl * G + g) * N + i] + t->q_bias[h * N + i];
                kc[j * N + i] = (double)k_in[(bl * G + g) * N + i] + t->k_bias[h * N + i];
            }
            rotate(qc + j * N, angle, S);
            rotate(kc + j * N, angle, S);
        }
        for (int64_t pi = 0; pi < P; pi++)  // H_0' = H_in + (1 - λ_0) dt_0 v_in k̃_inᵀ
            for (int64_t i = 0; i < N; i++) ssm[pi * N + i] += lam_next * v[pi] * k[i];
        for (int64_t j = 0; j < m; j++) {
            const int64_t bl = row * L + c0 + j;
            for (int64_t pi = 0; pi < P; pi++) {
                double acc = 0.0;
                for (int64_t i = 0; i < N; i++) acc += ssm[pi * N + i] * qc[j * N + i];
                acc *= exp(cum[j]);
                for (int64_t si = 0; si <= j; si++) {
                    double qk = 0.0;
                    for (int64_t i = 0; i < N; i++) qk += qc[j * N + i] * kc[si * N + i];
                    const double coef = si < j ? exp(cum[j] - cum[si]) * w[si] : gam[j];
                    acc += coef * qk * v_in[((row * L + c0 + si) * H + h) * P + pi];
                }
                const double vt = v_in[(bl * H + h) * P + pi];
                if (t->D) acc += (double)t->D[h] * vt;
                if (z_in) {
                    const double z = z_in[(bl * H + h) * P + pi];
                    acc *= z / (1.0 + exp(-z));
                }
                y[(c0 + j - t0) * P + pi] = acc;
            }
        }
        for (int64_t pi = 0; pi < P; pi++)  // the chunk's state
            for (int64_t i = 0; i < N; i++) {
                double acc = exp(cum[m - 1]) * ssm[pi * N + i];
                for (int64_t si = 0; si < m; si++)
                    acc += exp(cum[m - 1] - cum[si]) * w[si] * v_in[((row * L + c0 + si) * H + h) * P + pi] *
                           kc[si * N + i];
                ssm[pi * N + i] = acc;
            }
        for (int64_t pi = 0; pi < P; pi++) v[pi] = v_in[((row * L + c0 + m - 1) * H + h) * P + pi];
        memcpy(k, kc + (m - 1) * N, (size_t)N * sizeof(double));
    }
    free(qc);
    free(kc);
    free(cum);
    free(w);
    free(gam);
}
