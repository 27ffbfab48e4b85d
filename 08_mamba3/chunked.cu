/* 08_mamba3, version 4: the chunked form on the GPU: a map of the chunks,
 * then the four steps 05's version 5 takes Mamba-2's in (kernels.h).
 *
 * Version 3 walks L steps in a chain; here only the angles θ walk them (a
 * tanh, a multiply-add and an fmod per step and angle pair), and the rest is
 * cut into chunks of Q steps that run at once:
 *   0. chunk_map:     which chunks there are: a packed row's sequences each
 *                     start a chunk (one thread, a few instructions a chunk);
 *   1. angles:        θ at every step, a block per (sequence, head), a thread
 *                     per angle pair, and the final angle state;
 *   2. chunk_state:   a block per (chunk, head): the chunk's own state
 *                     Σ_s e^{cum_last - cum_s} w_s v_s k̃_sᵀ (p x N), Q·p·N FMAs;
 *   3. state_pass:    a block per (sequence, head) walks its chunks: H_0' of
 *                     each chunk (the state entering it, with the trapezoid's
 *                     term of the last step before it), p·N FMAs a chunk;
 *   4. chunk_output:  a block per (chunk, head): the chunk's scores q̃_t·k̃_s
 *                     weighted (Q²·N FMAs), y = scores·V + e^{cum_t} H_0' q̃_t.
 * What it should buy over version 3: but for θ's, the chain of L dependent
 * steps becomes L/Q chunk steps, and the rest is independent work whose bulk
 * is products (the next version puts them on tensor cores). What it costs: the
 * chunk states go through DRAM four times (written in 2, read and rewritten
 * as H_0' in 3, read in 4: p·N fp32 per chunk and head each time), and q̃, k̃
 * are rotated twice (steps 2 and 4), all on CUDA cores in fp32.
 * The notation is the C chunked form's (version 2, cpu.c): cum the running
 * sum of dt·A in the chunk, γ_t = λ_t dt_t, w_s = γ_s + (1 - λ_{s+1}) dt_{s+1}
 * (the next step's first endpoint; the official `scale`), "entering" the
 * chunk's first (1 - λ) dt (the official `scalar`). The official lines quoted
 * are mamba3_siso_fwd_ref's, the chunked reference. */
#include "kernels.h"

#include "chunk_map.cuh"
#include "cuda_check.h"
#include "launch.cuh"

#define THREADS 128
#define PASS_THREADS 256

/* The workspace, one after another:
 *   theta  (b, L, h, S)            fp32  θ at every step
 *   cs     (chunks, h, p, N)       fp32  a chunk's own state, then its H_0'
 *   scal   (chunks, h, 2)          fp32  entering (1 - λ_0) dt_0, e^{cum_last}
 *   chunks                         int64 the chunk map (chunk_map.cuh) */
typedef struct {
    float *theta, *cs, *scal;
    ChunkMap chunks;
} Work;

/* The floats of theta, cs and scal, rounded up to an even count: the int64 parts start 8-byte aligned. */
static size_t work_floats(const Mamba3Shape *s) {
    const int64_t C = max_chunks(s);
    const size_t f = (size_t)(s->batch * s->seqlen * s->heads * s->angles + C * s->heads * (s->headdim * s->dstate + 2));
    return (f + 1) / 2 * 2;
}

static Work work_of(const Mamba3Shape *s, void *workspace) {
    const int64_t C = max_chunks(s);
    Work w;
    w.theta = (float *)workspace;
    w.cs = w.theta + s->batch * s->seqlen * s->heads * s->angles;
    w.scal = w.cs + C * s->heads * s->headdim * s->dstate;
    w.chunks = chunk_map_at(s, (int64_t *)((float *)workspace + work_floats(s)));
    return w;
}

extern "C" size_t mamba3_chunked_gpu_workspace(const Mamba3Shape *s) {
    return work_floats(s) * sizeof(float) + chunk_map_words(s) * sizeof(int64_t);
}

/* 1. θ along a sequence, a thread per angle pair. */
__global__ void angles_kernel(Mamba3Tensors t, Work w) {
    const Mamba3Shape s = t.s;
    const int64_t L = s.seqlen, H = s.heads, S = s.angles, n = blockIdx.x, h = blockIdx.y, o = n * H + h;
    int64_t r, t0, t1;
    mamba3_sequence(&t, n, &r, &t0, &t1);
    for (int64_t i = threadIdx.x; i < S; i += blockDim.x) {
        float th = t.angle_state ? t.angle_state[o * S + i] : 0.0f;
        // the step's angle and dt are loaded a step ahead, so that the chain should wait on its
        // arithmetic, not on DRAM (a sequence has at least one step: t0 < t1)
        float ang = t.angles[((r * L + t0) * H + h) * S + i], dt = t.dt[(r * H + h) * L + t0];
        for (int64_t l = t0; l < t1; l++) {
            const int64_t bl = r * L + l;
            const float a_now = ang, dt_now = dt;
            if (l + 1 < t1) ang = t.angles[((bl + 1) * H + h) * S + i], dt = t.dt[(r * H + h) * L + l + 1];
            // Angles = torch.tanh(Angles) * math.pi;  Angles_Cumsum = torch.cumsum(Angles_scaled, dim=0)
            th = mamba3_angle_step(th, a_now, dt_now);
            w.theta[(bl * H + h) * S + i] = th;
        }
        t.final_angle_state[o * S + i] = th;
    }
}

/* x (q or k) of step l plus its bias, the pairs below 2S rotated by θ_l,
 * into out (N,); the block's threads share the work. */
__device__ static void rotated_row(const Mamba3Tensors &t, const Work &w, const float *x_in, const float *bias,
                                   int64_t r, int64_t l, int64_t h, float *out) {
    const Mamba3Shape &s = t.s;
    const int64_t L = s.seqlen, H = s.heads, G = s.heads_qk, N = s.dstate, S = s.angles, g = h / (H / G);
    const int64_t bl = r * L + l;
    for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
        const int64_t pair = i / 2;
        float x = x_in[(bl * G + g) * N + i] + bias[h * N + i];
        if (pair < S) {  // x' = x c - y s (even), x s + y c (odd), with its partner
            const int64_t j = i ^ 1;
            const float other = x_in[(bl * G + g) * N + j] + bias[h * N + j];
            float sn, cs;
            sincosf(w.theta[(bl * H + h) * S + pair], &sn, &cs);
            x = (i % 2 == 0) ? x * cs - other * sn : other * sn + x * cs;
        }
        out[i] = x;
    }
}

/* The chunk's scalars into cum, gam, w (m of each) by one thread; returns entering. */
__device__ static float chunk_scalars(const Mamba3Tensors &t, int64_t r, int64_t h, int64_t c0, int64_t m, float *cum,
                                      float *gam, float *wt) {
    const int64_t L = t.s.seqlen, H = t.s.heads;
    float entering = 0.0f;
    for (int64_t j = 0; j < m; j++) {
        const int64_t hl = (r * H + h) * L + c0 + j;
        // Trap_curr = torch.sigmoid(Trap_curr)
        const float dt = t.dt[hl], lambda = 1.0f / (1.0f + __expf(-t.trap[hl]));
        // da_cs = torch.cumsum(ADT_curr, dim=-1)
        cum[j] = (j ? cum[j - 1] : 0.0f) + t.adt[hl];
        // scalar = DT_curr[:, 0] * (1 - Trap_curr[:, 0]);  scale = DT_curr * Trap_curr + DT_shifted * (1 - Trap_shifted)
        gam[j] = lambda * dt;
        if (j == 0) entering = (1.0f - lambda) * dt;
        else wt[j - 1] += (1.0f - lambda) * dt;
        wt[j] = gam[j];
    }
    return entering;
}

/* 2. A chunk's own state Σ_s e^{cum_last - cum_s} w_s v_s k̃_sᵀ, and its scalars. */
__global__ void __launch_bounds__(THREADS) chunk_state_kernel(Mamba3Tensors t, Work w) {
    extern __shared__ float smem[];
    const Mamba3Shape s = t.s;
    const int64_t L = s.seqlen, H = s.heads, P = s.headdim, N = s.dstate, Q = s.chunk;
    const int64_t c = blockIdx.x, h = blockIdx.y;
    int64_t r, c0, m;  // the chunk: row r, steps [c0, c0 + m)
    if (!chunk_of(t, w.chunks, c, &r, &c0, &m)) return;
    // shared: kc (Q, N) the rotated keys, vc (Q, p) the values, cum, gam, wt (Q,) the scalars; fp32
    float *kc = smem, *vc = kc + Q * N, *cum = vc + Q * P, *gam = cum + Q, *wt = gam + Q;
    const float *k_in = (const float *)t.k, *v_in = (const float *)t.v;  // (b, L, g, N), (b, L, h, p) fp32
    if (threadIdx.x == 0) {
        const float entering = chunk_scalars(t, r, h, c0, m, cum, gam, wt);
        w.scal[(c * H + h) * 2] = entering;
        w.scal[(c * H + h) * 2 + 1] = __expf(cum[m - 1]);
    }
    for (int64_t j = 0; j < m; j++) rotated_row(t, w, k_in, t.k_bias, r, c0 + j, h, kc + j * N);
    for (int64_t e = threadIdx.x; e < m * P; e += THREADS) vc[e] = v_in[((r * L + c0 + e / P) * H + h) * P + e % P];
    __syncthreads();
    // da_cs_rev = torch.exp(torch.sum(ADT_curr, dim=-1, keepdim=True) - torch.cumsum(ADT_curr, dim=-1))
    for (int64_t j = threadIdx.x; j < m; j += THREADS) wt[j] *= __expf(cum[m - 1] - cum[j]);
    __syncthreads();
    float *out = w.cs + (c * H + h) * P * N;  // (p, N) fp32: the chunk's own state
    // torch.einsum("thd,thD->hDd", K_curr_scaled, V_curr_scaled)
    for (int64_t e = threadIdx.x; e < P * N; e += THREADS) {
        const int64_t p = e / N, i = e % N;
        float acc = 0.0f;
        for (int64_t j = 0; j < m; j++) acc += wt[j] * vc[j * P + p] * kc[j * N + i];
        out[e] = acc;
    }
}

/* 3. A sequence's chunks in order: H_0' = H + entering v_prev k̃_prevᵀ (kept
 * in cs for step 4), then H = e^{cum_last} H_0' + the chunk's own state. The
 * running H lives in the final state's buffer; each thread reads and writes
 * only its own elements of it, so it needs no barrier. */
__global__ void __launch_bounds__(PASS_THREADS) state_pass_kernel(Mamba3Tensors t, Work w) {
    extern __shared__ float smem[];
    const Mamba3Shape s = t.s;
    const int64_t L = s.seqlen, H = s.heads, P = s.headdim, N = s.dstate, n = blockIdx.x, h = blockIdx.y, o = n * H + h;
    int64_t r, t0, t1;
    mamba3_sequence(&t, n, &r, &t0, &t1);
    float *kp = smem, *vp = kp + N;  // (N,) the last rotated key, (p,) the last v; fp32
    const float *v_in = (const float *)t.v;  // (b, L, h, p) fp32
    float *hs = t.final_ssm_state + o * P * N;  // (p, N) fp32, the running state
    for (int64_t e = threadIdx.x; e < P * N; e += PASS_THREADS) hs[e] = t.ssm_state ? t.ssm_state[o * P * N + e] : 0.0f;
    for (int64_t c = w.chunks.first[n]; c <= w.chunks.first[n + 1]; c++) {
        const int64_t last = c < w.chunks.first[n + 1] ? w.chunks.map[2 * c + 1] - 1 : t1 - 1;  // the step before chunk c
        if (last < t0) {  // the sequence's first chunk: the states it came with
            for (int64_t i = threadIdx.x; i < N; i += PASS_THREADS) kp[i] = t.k_state ? t.k_state[o * N + i] : 0.0f;
            for (int64_t i = threadIdx.x; i < P; i += PASS_THREADS) vp[i] = t.v_state ? t.v_state[o * P + i] : 0.0f;
        } else {
            rotated_row(t, w, (const float *)t.k, t.k_bias, r, last, h, kp);
            for (int64_t i = threadIdx.x; i < P; i += PASS_THREADS) vp[i] = v_in[((r * L + last) * H + h) * P + i];
        }
        __syncthreads();
        if (c == w.chunks.first[n + 1]) {  // past the last chunk: the last step's key and v are the final ones
            for (int64_t i = threadIdx.x; i < N; i += PASS_THREADS) t.final_k_state[o * N + i] = kp[i];
            for (int64_t i = threadIdx.x; i < P; i += PASS_THREADS) t.final_v_state[o * P + i] = vp[i];
            break;
        }
        const float entering = w.scal[(c * H + h) * 2], decay = w.scal[(c * H + h) * 2 + 1];
        float *cs = w.cs + (c * H + h) * P * N;  // (p, N) fp32: the chunk's own state in, its H_0' out
        for (int64_t e = threadIdx.x; e < P * N; e += PASS_THREADS) {
            // acc_states = Initial_SSM_State_curr + Initial_V_State_curr[:, :, None] * Initial_K_State_curr[:, None, :] * scalar
            // final_acc_states = acc_states * da_cs_last + torch.einsum("thd,thD->hDd", K_curr_scaled, V_curr_scaled)
            const float entered = hs[e] + entering * vp[e / N] * kp[e % N], own = cs[e];
            cs[e] = entered;
            hs[e] = decay * entered + own;
        }
        __syncthreads();  // kp, vp are read: the next chunk's take their place
    }
}

/* 4. y of a chunk's steps: y_t = e^{cum_t} H_0' q̃_t + Σ_{s<t} e^{cum_t - cum_s}
 * w_s (q̃_t·k̃_s) v_s + γ_t (q̃_t·k̃_t) v_t + D v_t, times silu(z_t). */
__global__ void __launch_bounds__(THREADS) chunk_output_kernel(Mamba3Tensors t, Work w) {
    extern __shared__ float smem[];
    const Mamba3Shape s = t.s;
    const int64_t L = s.seqlen, H = s.heads, P = s.headdim, N = s.dstate, Q = s.chunk;
    const int64_t c = blockIdx.x, h = blockIdx.y;
    int64_t r, c0, m;  // the chunk: row r, steps [c0, c0 + m)
    if (!chunk_of(t, w.chunks, c, &r, &c0, &m)) return;
    // shared: qc, kc (Q, N + 1) rotated q and k, sc (Q, Q + 1) the weighted scores, cum, gam,
    // wt (Q,); fp32. The rows are one float longer than their data, so that a warp reading
    // one column of consecutive rows reads 32 banks, not one.
    const int64_t NS = N + 1, QS = Q + 1;
    float *qc = smem, *kc = qc + Q * NS, *sc = kc + Q * NS, *cum = sc + Q * QS, *gam = cum + Q, *wt = gam + Q;
    const float *v_in = (const float *)t.v, *z_in = (const float *)t.z;  // (b, L, h, p) fp32
    float *y_out = (float *)t.y;                                          // (b, L, h, p) fp32
    if (threadIdx.x == 0) chunk_scalars(t, r, h, c0, m, cum, gam, wt);
    for (int64_t j = 0; j < m; j++) {
        rotated_row(t, w, (const float *)t.q, t.q_bias, r, c0 + j, h, qc + j * NS);
        rotated_row(t, w, (const float *)t.k, t.k_bias, r, c0 + j, h, kc + j * NS);
    }
    __syncthreads();
    for (int64_t e = threadIdx.x; e < m * m; e += THREADS) {  // a warp: consecutive rows j of one key si
        const int64_t j = e % m, si = e / m;
        float coef = 0.0f;
        if (si <= j) {
            float qk = 0.0f;
            for (int64_t i = 0; i < N; i++) qk += qc[j * NS + i] * kc[si * NS + i];
            // QK_causal = (torch.tril(QK) * torch.exp(_segsum(ADT_curr)));  out = out - V_curr * QK_dot
            // (the diagonal: scale_t minus the shifted part, γ_t; q̃_t·k̃_t = q_t·k_t, one angle turns both)
            coef = (si < j ? __expf(cum[j] - cum[si]) * wt[si] : gam[j]) * qk;
        }
        sc[j * QS + si] = coef;
    }
    __syncthreads();
    const float *entered = w.cs + (c * H + h) * P * N;  // (p, N) fp32, H_0'
    for (int64_t e = threadIdx.x; e < m * P; e += THREADS) {  // a warp: consecutive steps j of one row p
        const int64_t j = e % m, p = e / m, bl = r * L + c0 + j;
        float acc = 0.0f, hq = 0.0f;
        // out = torch.einsum("hts,shd->thd", QK_causal, V_curr)
        for (int64_t si = 0; si <= j; si++) acc += sc[j * QS + si] * v_in[((r * L + c0 + si) * H + h) * P + p];
        // out = out + torch.einsum("hDd,thd,ht->thD", acc_states, Q_curr, exp_da_cs)
        for (int64_t i = 0; i < N; i++) hq += entered[p * N + i] * qc[j * NS + i];
        acc += __expf(cum[j]) * hq;
        const float v = v_in[(bl * H + h) * P + p];
        // out = out + D[None, :, None] * V_curr
        if (t.D) acc += t.D[h] * v;
        // out = out * Z_curr * torch.sigmoid(Z_curr)
        if (z_in) {
            const float z = z_in[(bl * H + h) * P + p];
            acc *= z / (1.0f + __expf(-z));
        }
        y_out[(bl * H + h) * P + p] = acc;
    }
}

static size_t state_smem(const Mamba3Shape *s) {
    return (size_t)(s->chunk * (s->dstate + s->headdim) + 3 * s->chunk) * sizeof(float);
}
static size_t output_smem(const Mamba3Shape *s) {
    return (size_t)(2 * s->chunk * (s->dstate + 1) + s->chunk * (s->chunk + 1) + 3 * s->chunk) * sizeof(float);
}

extern "C" const char *mamba3_chunked_gpu_unsupported(const Mamba3Shape *s) {
    const size_t most = smem_optin_bytes() < 200 * 1024 ? smem_optin_bytes() : 200 * 1024;  // the device's, at most 200 KiB
    if (output_smem(s) > most || state_smem(s) > most)
        return "a chunk's rotated q and k and its scores, or its keys and values, over 200 KiB of shared memory "
               "(or the device's opt-in, if less)";
    if (s->heads > 65535) return "more than 65,535 heads (one a block on the grid's y dimension)";
    if (max_chunks(s) > 2147483647) return "more than 2^31 - 1 chunks (one a block on the grid's x dimension)";
    return NULL;
}

extern "C" void mamba3_chunked_gpu(const Mamba3Tensors *t, void *workspace) {
    static size_t allowed_state = 0, allowed_output = 0;
    const Mamba3Shape *s = &t->s;
    const Work w = work_of(s, workspace);
    const unsigned n = (unsigned)(s->nseq ? s->nseq : s->batch), H = (unsigned)s->heads;
    const dim3 chunks((unsigned)max_chunks(s), H), sequences(n, H);
    allow_smem(chunk_state_kernel, state_smem(s), &allowed_state);
    allow_smem(chunk_output_kernel, output_smem(s), &allowed_output);
    chunk_map_kernel<<<1, 1>>>(*t, w.chunks);
    cuda_check_launch();
    angles_kernel<<<sequences, 32>>>(*t, w);
    cuda_check_launch();
    chunk_state_kernel<<<chunks, THREADS, state_smem(s)>>>(*t, w);
    cuda_check_launch();
    state_pass_kernel<<<sequences, PASS_THREADS, (size_t)(s->dstate + s->headdim) * sizeof(float)>>>(*t, w);
    cuda_check_launch();
    chunk_output_kernel<<<chunks, THREADS, output_smem(s)>>>(*t, w);
    cuda_check_launch();
}
