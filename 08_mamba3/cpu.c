/* Mamba-3 SISO in C, the step form (cpu.h): what mamba3_siso_step_ref does
 * token by token, in fp32. Per (sequence, head) and step: the angles advance,
 * q and k get their bias and are rotated, the state takes two rank-1 terms
 * (the trapezoid's two endpoints: the last step's v k̃ᵀ and this one's), and
 * y reads the state along q̃. */
#include "cpu.h"

#include "op_mamba3.h"

#include <math.h>
#include <string.h>

size_t mamba3_step_cpu_workspace(const Mamba3Shape *s) {
    return (size_t)(s->angles + s->headdim * s->dstate + 3 * s->dstate + s->headdim) * sizeof(float);
}

/* x (N,) plus its bias, the pairs (2i, 2i+1), i < S, rotated by th. */
static void biased_rotated(float *out, const float *x, const float *bias, const float *th, int64_t S, int64_t N) {
    for (int64_t i = 0; i < N; i++) out[i] = x[i] + bias[i];
    for (int64_t i = 0; i < S; i++) {
        const float c = cosf(th[i]), s = sinf(th[i]), a = out[2 * i], b = out[2 * i + 1];
        out[2 * i] = a * c - b * s;
        out[2 * i + 1] = a * s + b * c;
    }
}

/* The four states of (sequence, head) o into ws: θ (S), H (p, N), the last
 * rotated key (N) and the last v (p), one after another; zeros without them. */
static void states_in(const Mamba3Tensors *t, int64_t o, float *ws) {
    const int64_t S = t->s.angles, P = t->s.headdim, N = t->s.dstate;
    float *th = ws, *hs = th + S, *kp = hs + P * N, *vp = kp + N;
    for (int64_t i = 0; i < S; i++) th[i] = t->angle_state ? t->angle_state[o * S + i] : 0.0f;
    for (int64_t i = 0; i < P * N; i++) hs[i] = t->ssm_state ? t->ssm_state[o * P * N + i] : 0.0f;
    for (int64_t i = 0; i < N; i++) kp[i] = t->k_state ? t->k_state[o * N + i] : 0.0f;
    for (int64_t i = 0; i < P; i++) vp[i] = t->v_state ? t->v_state[o * P + i] : 0.0f;
}

/* The same four from ws to the final states of o. */
static void states_out(const Mamba3Tensors *t, int64_t o, const float *ws) {
    const int64_t S = t->s.angles, P = t->s.headdim, N = t->s.dstate;
    memcpy(t->final_angle_state + o * S, ws, (size_t)S * sizeof(float));
    memcpy(t->final_ssm_state + o * P * N, ws + S, (size_t)(P * N) * sizeof(float));
    memcpy(t->final_k_state + o * N, ws + S + P * N, (size_t)N * sizeof(float));
    memcpy(t->final_v_state + o * P, ws + S + P * N + N, (size_t)P * sizeof(float));
}

/* A pool's slots that no batch entry names keep their states: every slot's
 * four states copied to the final ones first, the named ones then written
 * over. Without a pool, nothing. */
static void pool_keep(const Mamba3Pool *pool) {
    if (!pool->state_batch_indices) return;
    const Mamba3Tensors *t = &pool->t;
    const int64_t SH = pool->slots * t->s.heads, S = t->s.angles, P = t->s.headdim, N = t->s.dstate;
    memcpy(t->final_angle_state, t->angle_state, (size_t)(SH * S) * sizeof(float));
    memcpy(t->final_ssm_state, t->ssm_state, (size_t)(SH * P * N) * sizeof(float));
    memcpy(t->final_k_state, t->k_state, (size_t)(SH * N) * sizeof(float));
    memcpy(t->final_v_state, t->v_state, (size_t)(SH * P) * sizeof(float));
}

/* A padding entry n of a pool (mamba3_state_of < 0): its y is zeros. */
static void padding_y(const Mamba3Tensors *t, int64_t n) {
    const int64_t HP = t->s.heads * t->s.headdim;
    memset((float *)t->y + n * t->s.seqlen * HP, 0, (size_t)(t->s.seqlen * HP) * sizeof(float));
}

/* Every (sequence, head) through one of this file's walks, a pool's slots kept first. */
static void each_head(const Mamba3Pool *pool, float *ws,
                      void (*walk)(const Mamba3Tensors *, int64_t, int64_t, int64_t, float *)) {
    const Mamba3Tensors *t = &pool->t;
    pool_keep(pool);
    for (int64_t n = 0; n < (t->s.nseq ? t->s.nseq : t->s.batch); n++) {
        const int64_t state = mamba3_state_of(pool, n);
        if (state < 0) {
            padding_y(t, n);
            continue;
        }
        for (int64_t h = 0; h < t->s.heads; h++) walk(t, n, h, state * t->s.heads + h, ws);
    }
}

/* One (sequence, head) n, h: its steps (mamba3_sequence), from its states o to its final states. */
static void head(const Mamba3Tensors *t, int64_t n, int64_t h, int64_t o, float *ws) {
    int64_t r, t0, t1;  // the sequence: row r, steps [t0, t1)
    mamba3_sequence(t, n, &r, &t0, &t1);
    const Mamba3Shape *s = &t->s;
    const int64_t L = s->seqlen, H = s->heads, G = s->heads_qk, P = s->headdim, N = s->dstate, S = s->angles;
    const int64_t g = h / (H / G);
    const float *q_in = t->q, *k_in = t->k, *v_in = t->v, *z_in = t->z;  // fp32 host arrays
    float *th = ws, *hs = th + S, *kp = hs + P * N, *vp = kp + N, *q = vp + P, *k = q + N;  // the workspace
    states_in(t, o, th);
    for (int64_t l = t0; l < t1; l++) {
        const int64_t bl = r * L + l, hl = (r * H + h) * L + l;
        const float dt = t->dt[hl], alpha = expf(t->adt[hl]), lambda = 1.0f / (1.0f + expf(-t->trap[hl]));
        for (int64_t i = 0; i < S; i++) th[i] = mamba3_angle_step(th[i], t->angles[(bl * H + h) * S + i], dt);
        biased_rotated(q, q_in + (bl * G + g) * N, t->q_bias + h * N, th, S, N);
        biased_rotated(k, k_in + (bl * G + g) * N, t->k_bias + h * N, th, S, N);
        // H = alpha H + (1 - lambda) dt alpha v_prev k_prev^T + lambda dt v k^T;  y = H q + D v
        const float before = (1.0f - lambda) * dt * alpha, now = lambda * dt;
        const float *v = v_in + (bl * H + h) * P;
        float *y = (float *)t->y + (bl * H + h) * P;
        for (int64_t pi = 0; pi < P; pi++) {
            float *row = hs + pi * N, acc = 0.0f;
            const float bv = before * vp[pi], nv = now * v[pi];
            for (int64_t i = 0; i < N; i++) {
                row[i] = alpha * row[i] + bv * kp[i] + nv * k[i];
                acc += row[i] * q[i];
            }
            if (t->D) acc += t->D[h] * v[pi];
            if (z_in) {
                const float z = z_in[(bl * H + h) * P + pi];
                acc *= z / (1.0f + expf(-z));
            }
            y[pi] = acc;
        }
        memcpy(vp, v, (size_t)P * sizeof(float));
        memcpy(kp, k, (size_t)N * sizeof(float));
    }
    states_out(t, o, th);
}

void mamba3_step_cpu_pool(const Mamba3Pool *t, void *workspace) { each_head(t, workspace, head); }

void mamba3_step_cpu(const Mamba3Tensors *t, void *workspace) {
    const Mamba3Pool pool = {*t, 0, NULL};
    mamba3_step_cpu_pool(&pool, workspace);
}

size_t mamba3_chunked_cpu_workspace(const Mamba3Shape *s) {
    const int64_t N = s->dstate, P = s->headdim, Q = s->chunk;
    return (size_t)(s->angles + P * N + N + P + Q * (2 * N + 3)) * sizeof(float);
}

/* One (sequence, head) by chunks, from its states o to its final states. */
static void head_chunked(const Mamba3Tensors *t, int64_t n, int64_t h, int64_t o, float *ws) {
    int64_t r, t0, t1;  // the sequence: row r, steps [t0, t1)
    mamba3_sequence(t, n, &r, &t0, &t1);
    const Mamba3Shape *s = &t->s;
    const int64_t L = s->seqlen, H = s->heads, G = s->heads_qk, P = s->headdim, N = s->dstate, S = s->angles;
    const int64_t Q = s->chunk, g = h / (H / G);
    const float *q_in = t->q, *k_in = t->k, *v_in = t->v, *z_in = t->z;  // fp32 host arrays
    float *th = ws, *hs = th + S, *kp = hs + P * N, *vp = kp + N;          // the states
    float *qc = vp + P, *kc = qc + Q * N, *cum = kc + Q * N, *w = cum + Q, *gam = w + Q;  // one chunk
    states_in(t, o, th);
    for (int64_t c0 = t0; c0 < t1; c0 += Q) {
        const int64_t m = t1 - c0 < Q ? t1 - c0 : Q;
        float entering = 0.0f;  // (1 - λ_0) dt_0: the previous chunk's key and v, folded into H_0'
        for (int64_t j = 0; j < m; j++) {
            const int64_t bl = r * L + c0 + j, hl = (r * H + h) * L + c0 + j;
            const float dt = t->dt[hl], lambda = 1.0f / (1.0f + expf(-t->trap[hl]));
            cum[j] = (j ? cum[j - 1] : 0.0f) + t->adt[hl];
            gam[j] = lambda * dt;
            if (j == 0) entering = (1.0f - lambda) * dt;
            else w[j - 1] += (1.0f - lambda) * dt;
            w[j] = gam[j];
            for (int64_t i = 0; i < S; i++) th[i] = mamba3_angle_step(th[i], t->angles[(bl * H + h) * S + i], dt);
            biased_rotated(qc + j * N, q_in + (bl * G + g) * N, t->q_bias + h * N, th, S, N);
            biased_rotated(kc + j * N, k_in + (bl * G + g) * N, t->k_bias + h * N, th, S, N);
        }
        for (int64_t pi = 0; pi < P; pi++)
            for (int64_t i = 0; i < N; i++) hs[pi * N + i] += entering * vp[pi] * kp[i];
        // y_t = e^{A_t} H_0' q_t + sum_{s<t} e^{A_t - A_s} w_s (q_t . k_s) v_s + gamma_t (q_t . k_t) v_t + D v_t
        for (int64_t j = 0; j < m; j++) {
            const int64_t bl = r * L + c0 + j;
            float *y = (float *)t->y + (bl * H + h) * P;
            for (int64_t pi = 0; pi < P; pi++) y[pi] = 0.0f;
            for (int64_t si = 0; si <= j; si++) {
                float qk = 0.0f;
                for (int64_t i = 0; i < N; i++) qk += qc[j * N + i] * kc[si * N + i];
                const float coef = (si < j ? expf(cum[j] - cum[si]) * w[si] : gam[j]) * qk;
                const float *v = v_in + ((r * L + c0 + si) * H + h) * P;
                for (int64_t pi = 0; pi < P; pi++) y[pi] += coef * v[pi];
            }
            const float decay = expf(cum[j]), *v = v_in + (bl * H + h) * P;
            for (int64_t pi = 0; pi < P; pi++) {
                float acc = 0.0f;
                for (int64_t i = 0; i < N; i++) acc += hs[pi * N + i] * qc[j * N + i];
                acc = y[pi] + decay * acc;
                if (t->D) acc += t->D[h] * v[pi];
                if (z_in) {
                    const float z = z_in[(bl * H + h) * P + pi];
                    acc *= z / (1.0f + expf(-z));
                }
                y[pi] = acc;
            }
        }
        // the chunk's state: e^{A_last} H_0' + sum_s e^{A_last - A_s} w_s v_s k_s^T
        for (int64_t si = 0; si < m; si++) w[si] *= expf(cum[m - 1] - cum[si]);
        const float last = expf(cum[m - 1]);
        for (int64_t pi = 0; pi < P; pi++) {
            float *row = hs + pi * N;
            for (int64_t i = 0; i < N; i++) row[i] *= last;
            for (int64_t si = 0; si < m; si++) {
                const float wv = w[si] * v_in[((r * L + c0 + si) * H + h) * P + pi];
                for (int64_t i = 0; i < N; i++) row[i] += wv * kc[si * N + i];
            }
        }
        memcpy(vp, v_in + ((r * L + c0 + m - 1) * H + h) * P, (size_t)P * sizeof(float));
        memcpy(kp, kc + (m - 1) * N, (size_t)N * sizeof(float));
    }
    states_out(t, o, th);
}

void mamba3_chunked_cpu_pool(const Mamba3Pool *t, void *workspace) { each_head(t, workspace, head_chunked); }

void mamba3_chunked_cpu(const Mamba3Tensors *t, void *workspace) {
    const Mamba3Pool pool = {*t, 0, NULL};
    mamba3_chunked_cpu_pool(&pool, workspace);
}
