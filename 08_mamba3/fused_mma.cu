/* 08_mamba3, versions 5, 6, 13 and 14: the chunked form fused into one kernel
 * on mma.sync tensor cores, fp16 (5, 13) and bf16 (6, 14) I/O: 05's version 7
 * for Mamba-3, on the same tensor-core steps (ops/ssd/ssd_mma.cuh).
 *
 * One block per (chunk, head), four warps, taken in chunk-major ticket order
 * so that chunk c - 1 of a sequence always started before chunk c. What it
 * removes from version 4: the chunk states' four trips through DRAM, the
 * serial walk of the angles, three of its four compute kernels' launches (the
 * four become one), and every product on CUDA cores.
 *
 * The one new idea is the chunk's own frame. θ_t = θ_in + φ_t, with θ_in the
 * angle entering the chunk (known only once chunk c - 1 is done) and φ_t the
 * chunk's own running sum of increments (known at once). One rotation turns
 * q and k alike, so q̃_t·k̃_s = (R(φ_t)q_t)·(R(φ_s)k_s): the scores need no
 * θ_in. The chunk's own state Σ w v k̃ᵀ is the same sum over R(φ)k, times
 * R(θ_in)ᵀ; and H q̃_t = (H R(θ_in)) R(φ_t) q_t. So the block does all its
 * products in its own frame before it waits, and turns only the entering
 * state, pairwise, once it has θ_in:
 *   1 q + bias and k + bias rotated by φ (16-bit, in shared memory), the
 *     chunk's scalars; S_own = Vᵀ·diag(w e^{cum_last - cum})·K̃ on tensor cores
 *   2 waits for chunk c - 1 (a flag per (sequence, head)), takes θ_in (fp64)
 *     and H_in from a two-slot ring in L2, forms H' = (H_in + (1 - λ_0) dt_0
 *     v_prev k̃_prevᵀ) R(θ_in), and hands on (e^{cum_last} H' + S_own) R(θ_in)ᵀ and θ_in plus
 *     the chunk's increments, summed in fp64: only this step is serial along L
 *   3 y = e^{cum_t} H' q̃_t + Σ_{s<=t} (q̃_t·k̃_s) coef_ts v_s + D v_t, then
 *     silu(z), 16 rows a warp
 * θ is carried in fp64: each chunk adds its increments, summed in fp64, to
 * θ_in and reduces mod 2π there (08's lesson measures the alternatives over
 * 2^20 steps); φ within a chunk is an fp32 running sum.
 * Notation as version 4's (chunked.cu): cum the running sum of dt·A in the
 * chunk (log2 units here), γ_t = λ_t dt_t, w_s = γ_s + (1 - λ_{s+1}) dt_{s+1},
 * "entering" (1 - λ_0) dt_0. coef_ts = e^{cum_t - cum_s} w_s below the
 * diagonal, γ_t on it. 16-bit roundings: q̃, k̃, the weighted scores and H'
 * before their products (relative 2^-11 fp16, 2^-8 bf16); sums in fp32.
 * What it leaves: row tile m of the causal product has m + 1 column tiles,
 * so at chunk 64 the warp of the last row tile does four causal tiles to
 * the first warp's one (the product with H' is equal work for all). */
#include "kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <limits.h>
#include <stdint.h>

#include "chunk_map.cuh"
#include "cuda_check.h"
#include "launch.cuh"
#include "mma_sm80.cuh"
#include "mufu.cuh"
#include "pair16.cuh"
#include "ssd_mma.cuh"

#define WARPS 4
#define THREADS (WARPS * 32)
#define NMAX SSD_MMA_NMAX  // N <= 128: 8 k-steps of 16 in registers
#define PMAX SSD_MMA_PMAX  // p <= 64: one 16-row p-tile a warp in step 1
#define QMAX THREADS       // Q <= 128: one step a thread in the chunk's scans

static const float PI_F = 3.14159265358979f, TWO_PI_F = 6.28318530717959f;
static const double TWO_PI_D = 6.283185307179586;

/* The row pitch of the chunk's angles (floats): 16-byte rows where the
 * INFLIGHT versions copy them in by cp.async, else S + 1 (no bank conflicts). */
static __host__ __device__ int angle_pitch(int S, bool inflight) { return inflight && S % 4 == 0 ? S + 4 : S + 1; }

struct FusedArgs {
    Mamba3Tensors t;    // 16-bit q, k, v, z, y (the version's dtype); the rest fp32
    ChunkMap map;       // the chunks (chunk_map.cuh)
    int64_t *rounds;    // (chunks,): the map's chunks in rounds (chunk_rounds_kernel), -1 past the last
    float *ring;        // (n, h, 2, p, N) fp32: a chunk's end state, slot (chunk of its sequence) % 2
    double *ring_theta; // (n, h, 2, S)    fp64: θ after the chunk, the same slots
    int *published;     // (n, h): how many chunks of the sequence have their end in the ring
    int *ticket;        // the next work item, chunk-major
    int Np, Pp;         // N and p rounded up to 16
};

/* The map's chunks in rounds: every sequence's first chunk, then every
 * second one, and so on, the order the work items go out in. Chunk-major,
 * the chains of chunks of all sequences and heads advance side by side; in
 * the map's order, sequence by sequence, the blocks on the GPU would all
 * wait on the same few chains. One block, a round at a time; the order
 * within a round is free. */
static __global__ void chunk_rounds_kernel(Mamba3Tensors t, ChunkMap w, int64_t *rounds) {
    __shared__ unsigned long long taken;  // the items listed so far
    __shared__ int more;                  // some sequence has a chunk in this round
    const int64_t n_seq = t.s.nseq ? t.s.nseq : t.s.batch, C = max_chunks(&t.s);
    if (threadIdx.x == 0) taken = 0;
    for (int64_t k = 0;; k++) {
        __syncthreads();
        if (threadIdx.x == 0) more = 0;
        __syncthreads();
        for (int64_t n = threadIdx.x; n < n_seq; n += blockDim.x)
            if (w.first[n] + k < w.first[n + 1]) rounds[atomicAdd(&taken, 1ull)] = w.first[n] + k, more = 1;
        __syncthreads();
        if (!more) break;
    }
    for (int64_t c = (int64_t)taken + threadIdx.x; c < C; c += blockDim.x) rounds[c] = -1;
}

/* FULL: N and p are exactly 128 and 64 (S6's head), so every tile bound is a
 * compile-time constant and no column of a tile is past p.
 *
 * Versions 13 and 14 (INFLIGHT): the chunk's inputs asked for before the block
 * computes, the angles' tanh and running sum in one pass; they should turn the
 * block's load-by-load waits into one wait for its inputs and one for z. */
template <typename F, bool FULL, bool INFLIGHT>
__global__ void __launch_bounds__(THREADS) mamba3_fused_kernel(FusedArgs a) {
    using F2 = typename Pair<F>::type;
    extern __shared__ __align__(16) unsigned char smem[];
    const Mamba3Tensors &t = a.t;
    const int Q = (int)t.s.chunk, N = (int)t.s.dstate, P = (int)t.s.headdim, S = (int)t.s.angles;
    const int Np = FULL ? NMAX : a.Np, Pp = FULL ? PMAX : a.Pp;
    const int NS = Np + 8, PS = Pp + 8;  // row pitches: +16 bytes keeps ldmatrix conflict-free
    const int AS = angle_pitch(S, INFLIGHT);
    F *Qs = reinterpret_cast<F *>(smem);             // (Q, Np) F: q + bias turned by φ
    F *Ks = Qs + Q * NS;                             // (Q, Np) F: k + bias turned by φ
    F *Vs = Ks + Q * NS;                             // (Q, Pp) F: v
    F *Hs = Vs + Q * PS;                             // (Pp, Np) F: H' = the entering state, in the chunk's frame
    F *wts = Hs + Pp * NS;                           // (Q,) F: w_j e^{cum_last - cum_j}
    float *cum2 = reinterpret_cast<float *>(wts + Q);  // (Q,) log2(e) · cumsum(adt)
    float *dts = cum2 + Q;                           // (Q,) dt
    float *gam = dts + Q;                            // (Q,) γ_j = λ_j dt_j
    float *shift = gam + Q;                          // (Q,) (1 - λ_j) dt_j, the term step j adds to j - 1's
    float *wj = shift + Q;                           // (Q,) w_j
    float *vdt = wj + Q;                             // (Q,) w_j e^{cum_e - cum_j}, e the last step of j's 16-tile
    float *phi = vdt + Q;                            // (Q, AS) fp32: angles (INFLIGHT), increments, then φ
    F *Zs = reinterpret_cast<F *>(phi);              // (Q, Pp + 8) F: z, in φ's place once φ is used (INFLIGHT)
    double *seg_tot = reinterpret_cast<double *>(phi + Q * AS);  // (THREADS,) fp64: a segment's increments (INFLIGHT)
    float *seg_run = reinterpret_cast<float *>(seg_tot + THREADS);  // (THREADS,) fp32: the same, summed in fp32
    __shared__ int item;
    __shared__ double total[NMAX / 2], theta_out[NMAX / 2];  // (S,) fp64: the chunk's increments; θ after it
    __shared__ float cs_in[NMAX / 2], sn_in[NMAX / 2];       // (S,) cos and sin of θ_in
    __shared__ float kprev[NMAX], vprev[PMAX];               // the entering key (chunk's frame) and v, padded

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    if (tid == 0) item = atomicAdd(a.ticket, 1);
    __syncthreads();
    const int64_t H = t.s.heads, G = t.s.heads_qk, L = t.s.seqlen, c = a.rounds[item / H], h = item % H;
    const int64_t g = h / (H / G);
    int64_t r, c0, len;  // the chunk: row r, steps [c0, c0 + len)
    if (c < 0 || !chunk_of(t, a.map, c, &r, &c0, &len)) return;
    const int m = (int)len;
    const int64_t n = a.map.map[2 * c], ci = c - a.map.first[n], o = n * H + h;  // chunk ci of sequence n
    const bool first = ci == 0, last = c + 1 == a.map.first[n + 1];

    /* Loads: q, k (their qk head's) and v of the chunk, rows past m zero. */
    const bool vec16 = N % 8 == 0 && P % 8 == 0;
    const F *qg = static_cast<const F *>(t.q) + ((r * L + c0) * G + g) * N;  // (len, N) rows at stride G·N
    const F *kg = static_cast<const F *>(t.k) + ((r * L + c0) * G + g) * N;
    const F *vg = static_cast<const F *>(t.v) + ((r * L + c0) * H + h) * P;  // (len, p) rows at stride H·p
    load_tile<FULL ? NMAX / 8 : 0, F>(Qs, NS, qg, G * N, 0, m, Q, N, Np, vec16);
    load_tile<FULL ? NMAX / 8 : 0, F>(Ks, NS, kg, G * N, 0, m, Q, N, Np, vec16);
    load_tile<FULL ? PMAX / 8 : 0, F>(Vs, PS, vg, H * P, 0, m, Q, P, Pp, vec16);
    if constexpr (INFLIGHT) {  // the chunk's angles, as they are, into φ's rows (by 16 bytes where S % 4 == 0)
        const float *ag = t.angles + ((r * L + c0) * H + h) * S;  // (len, S) fp32 rows at stride H·S
        if (S % 4 == 0)
            for (int i = tid; i < m * (S / 4); i += THREADS) {
                const int j = i / (S / 4), col = i % (S / 4) * 4;
                cp_async16(phi + j * AS + col, ag + j * H * S + col);
            }
        else
            for (int i = tid; i < m * S; i += THREADS) phi[i / S * AS + i % S] = ag[i / S * H * S + i % S];
    }
    asm volatile("cp.async.commit_group;");

    /* The chunk's scalars, a thread a step, while the copies fly. */
    float adt = 0.f, dt = 0.f, lambda = 0.f;
    if (tid < m) {
        const int64_t hl = (r * H + h) * L + c0 + tid;
        adt = t.adt[hl], dt = t.dt[hl];
        // Trap_curr = torch.sigmoid(Trap_curr)
        lambda = 1.f / (1.f + __expf(-t.trap[hl]));
    }
    // da_cs = torch.cumsum(ADT_curr, dim=-1)
    const float cum = block_inclusive_sum(adt * LOG2E_F);
    if (tid < Q) cum2[tid] = cum, dts[tid] = dt, gam[tid] = lambda * dt, shift[tid] = (1.f - lambda) * dt;
    __syncthreads();
    const float cum_last = cum2[m - 1];
    if (tid < Q) {
        // scale = DT_curr * Trap_curr + DT_shifted * (1 - Trap_shifted)
        const float w = tid < m ? gam[tid] + (tid + 1 < m ? shift[tid + 1] : 0.f) : 0.f;
        wj[tid] = w;
        // da_cs_rev = torch.exp(torch.sum(ADT_curr, dim=-1, keepdim=True) - torch.cumsum(ADT_curr, dim=-1))
        wts[tid] = Pair<F>::narrow1(w * exp2_approx(cum_last - cum2[tid]));
        vdt[tid] = w * exp2_approx(cum2[tid | 15] - cum2[tid]);
    }
    if constexpr (INFLIGHT) {
        /* φ in one pass: the chunk's steps cut into THREADS / S runs (segments);
         * thread (segment seg, pair i) turns its steps' angles into increments
         * and sums them, then adds the sums of the segments before its own.
         * Angles = torch.tanh(Angles) * math.pi; Angles_scaled = Angles * DT[..., None]
         * Angles_Cumsum = torch.cumsum(Angles_scaled, dim=0) */
        asm volatile("cp.async.wait_all;");
        __syncthreads();
        const int segs = THREADS / S, seg = tid / S, i = tid % S, per = (m + segs - 1) / segs;
        const int j0 = min(m, seg * per), j1 = min(m, j0 + per);  // this thread's steps
        float run = 0.f;
        double tot = 0.0;
        if (seg < segs) {
            for (int j = j0; j < j1; j++) {
                const float inc = PI_F * tanhf(phi[j * AS + i]) * dts[j];
                run += inc, tot += inc, phi[j * AS + i] = run;
            }
            seg_run[tid] = run, seg_tot[tid] = tot;
        }
        __syncthreads();
        if (seg < segs) {
            float before = 0.f;
            for (int k = 0; k < seg; k++) before += seg_run[k * S + i];
            for (int j = j0; j < j1; j++) phi[j * AS + i] += before;
            if (seg == 0) {
                for (int k = 1; k < segs; k++) tot += seg_tot[k * S + i];
                total[i] = tot;
            }
        }
    } else {
        /* The angle increments of the chunk, read row by row (coalesced).
         * Angles = torch.tanh(Angles) * math.pi; Angles_scaled = Angles * DT[..., None] */
        for (int j = warp; j < m; j += WARPS) {  // a warp a step, a lane an angle pair (S <= 64)
            const float *row = t.angles + ((r * L + c0 + j) * H + h) * S;
            for (int i = lane; i < S; i += 32) phi[j * AS + i] = PI_F * tanhf(row[i]) * dts[j];
        }
        __syncthreads();
        /* φ: a warp per angle pair, R consecutive steps a lane, a shuffle scan over
         * the lanes' sums; the pair's total in fp64 for θ.
         * Angles_Cumsum = torch.cumsum(Angles_scaled, dim=0) */
        const int R = (Q + 31) / 32;
        for (int i = warp; i < S; i += WARPS) {
            float run = 0.f;
            double tot = 0.0;
            for (int k = 0; k < R; k++) {
                const int j = lane * R + k;
                if (j < m) run += phi[j * AS + i], tot += phi[j * AS + i], phi[j * AS + i] = run;
            }
            float incl = run;
#pragma unroll
            for (int off = 1; off < 32; off *= 2) {
                const float u = __shfl_up_sync(0xffffffffu, incl, off);
                if (lane >= off) incl += u;
            }
            for (int k = 0; k < R; k++) {
                const int j = lane * R + k;
                if (j < m) phi[j * AS + i] += incl - run;
            }
#pragma unroll
            for (int off = 16; off > 0; off /= 2) tot += __shfl_down_sync(0xffffffffu, tot, off);
            if (lane == 0) total[i] = tot;
        }
        asm volatile("cp.async.wait_all;");
    }
    __syncthreads();

    /* q + bias and k + bias, the pairs below 2S turned by φ_j, in place: a
     * thread keeps one pair i over the steps (the block's first `busy`
     * threads, the largest multiple of Np / 2 not over the block). φ
     * is taken mod 2π first, so that the fast sine and cosine (absolute
     * error about 2^-21 there) serve: the results are rounded to 16 bits.
     * Q_curr = Q_curr + Q_bias; Q_rot = apply_rotary_emb(Q_curr, Angles_Cumsum) (k alike) */
    if (const int pairs = Np / 2, busy = THREADS / pairs * pairs; tid < busy) {
        const int i = tid % pairs, col = 2 * i;
        const bool two = col + 1 < N;
        const float qb0 = col < N ? t.q_bias[h * N + col] : 0.f, qb1 = two ? t.q_bias[h * N + col + 1] : 0.f;
        const float kb0 = col < N ? t.k_bias[h * N + col] : 0.f, kb1 = two ? t.k_bias[h * N + col + 1] : 0.f;
        for (int j = tid / pairs; col < N && j < m; j += busy / pairs) {  // padding stays zero
            float sn = 0.f, cs = 1.f;
            if (i < S) {
                const float ph = phi[j * AS + i];
                __sincosf(ph - TWO_PI_F * rintf(ph * (1.f / TWO_PI_F)), &sn, &cs);
            }
            F2 *qp = reinterpret_cast<F2 *>(Qs + j * NS + col), *kp = reinterpret_cast<F2 *>(Ks + j * NS + col);
            const float2 q = Pair<F>::widen(*qp), k = Pair<F>::widen(*kp);
            const float q0 = q.x + qb0, q1 = two ? q.y + qb1 : 0.f, k0 = k.x + kb0, k1 = two ? k.y + kb1 : 0.f;
            *qp = Pair<F>::narrow(q0 * cs - q1 * sn, q0 * sn + q1 * cs);
            *kp = Pair<F>::narrow(k0 * cs - k1 * sn, k0 * sn + k1 * cs);
        }
    }
    __syncthreads();

    /* ldmatrix row addresses: lane l points at row l % 8 of matrix l / 8;
     * pattern A orders the four matrices (r0,c0) (r8,c0) (r0,c8) (r8,c8),
     * pattern B (r0,c0) (r0,c8) (r8,c0) (r8,c8) (05's fused_mma.cu). */
    const int qd = lane / 8, rw = lane % 8;
    const int rowA = (qd & 1) * 8 + rw, colA = (qd >> 1) * 8, rowB = (qd >> 1) * 8 + rw, colB = (qd & 1) * 8;
    const uint32_t qs_a = smem_addr(Qs) + (rowA * NS + colA) * 2, ks_a = smem_addr(Ks) + (rowA * NS + colA) * 2;
    const uint32_t ks_b = smem_addr(Ks) + (rowB * NS + colB) * 2, hs_b = smem_addr(Hs) + (rowB * NS + colB) * 2;
    const uint32_t vs_a = smem_addr(Vs) + (rowA * PS + colA) * 2, vs_b = smem_addr(Vs) + (rowB * PS + colB) * 2;

    /* z of the chunk into φ's rows, which the rotation has used: it lands while
     * the block computes, for the outputs of step 3 (by 16 bytes where vec16). */
    if constexpr (INFLIGHT)
        if (t.z) {
            const F *zg = static_cast<const F *>(t.z) + ((r * L + c0) * H + h) * P;  // (len, p) rows at stride H·p
            load_tile<FULL ? PMAX / 8 : 0, F>(Zs, PS, zg, H * P, 0, m, Q, P, Pp, vec16);
            asm volatile("cp.async.commit_group;");
        }

    /* ---- 1. The chunk's own state in its frame: S_own (p x N) = Vᵀ diag(wts) K̃,
     * warp w the p-tile w and all of N.
     * torch.einsum("thd,thD->hDd", K_curr_scaled, V_curr_scaled) */
    constexpr int NT = 2 * ChunkStateBlocks<WARPS>::n;  // n8-tiles of N a warp holds: tile k is columns 8k..8k+7
    float st[NT][4] = {};
    accumulate_chunk_state<FULL, WARPS, F>(st, vs_b, ks_a, wts, Q, NS, PS, Np, Pp);

    /* The term the chunk's first step adds for the step before it, in the
     * chunk's frame: that step's k + bias as it is (its angle is θ_in), and
     * its v; a sequence's first chunk takes k_state and v_state below. */
    for (int i = tid; i < Np; i += THREADS)
        kprev[i] = i < N && !first ? to_float(kg[i - G * N]) + t.k_bias[h * N + i] : 0.f;
    for (int i = tid; i < Pp; i += THREADS) vprev[i] = i < P && !first ? to_float(vg[i - H * P]) : 0.f;

    /* ---- 2. Wait for chunk ci - 1 of the sequence; θ and the state handed on. */
    if (tid == 0 && !first)
        while (load_acquire(a.published + o) < ci) __nanosleep(32);
    __syncthreads();
    const int64_t in_slot = (o * 2 + ((ci - 1) & 1)), out_slot = (o * 2 + (ci & 1));
    if (tid < S) {
        const double th = first ? (t.angle_state ? (double)t.angle_state[o * S + tid] : 0.0)
                                : __ldcg(a.ring_theta + in_slot * S + tid);
        sincosf((float)th, &sn_in[tid], &cs_in[tid]);
        // Angles_Cumsum = Angles_Cumsum - TWO_PI * torch.floor(Angles_Cumsum / TWO_PI)
        const double sum = th + total[tid], out = sum - TWO_PI_D * floor(sum / TWO_PI_D);
        theta_out[tid] = out;
        if (last) t.final_angle_state[o * S + tid] = (float)out;
        else a.ring_theta[out_slot * S + tid] = out;
    }
    __syncthreads();
    if (first && t.k_state) {  // the sequence's k_state (absolute) turned back by θ_in, and its v_state
        for (int i = tid; 2 * i < N; i += THREADS) {
            const int col = 2 * i;
            const float x = t.k_state[o * N + col], y = col + 1 < N ? t.k_state[o * N + col + 1] : 0.f;
            const float cs = i < S ? cs_in[i] : 1.f, sn = i < S ? sn_in[i] : 0.f;
            kprev[col] = x * cs + y * sn, kprev[col + 1] = y * cs - x * sn;
        }
        for (int i = tid; i < P; i += THREADS) vprev[i] = t.v_state[o * P + i];
        __syncthreads();
    }
    const float entering = shift[0], decay = exp2_approx(cum_last);
    // (p, N) fp32: H_in (the sequence's ssm_state, or the ring), and where this chunk's end state goes
    const float *__restrict__ prev = first ? (t.ssm_state ? t.ssm_state + o * P * N : nullptr)
                                           : a.ring + in_slot * P * N;
    float *__restrict__ next = last ? t.final_ssm_state + o * P * N : a.ring + out_slot * P * N;
    const bool by_float2 = INFLIGHT && (FULL || N % 2 == 0);  // H_in and the end state by 8 bytes (FULL: N is 128)
    if (warp * 16 < Pp) {
        /* Half of this thread's elements of H_in at a time: all their loads in
         * flight together, one trip to L2 a half, not one an element. */
#pragma unroll
        for (int k0 = 0; k0 < NT; k0 += NT / 2) {
            float hin[NT / 2][4];  // H_in at this thread's places of st[k0 ..]
            if (by_float2) {  // columns ni, ni + 1: one 8-byte load
#pragma unroll
                for (int kk = 0; kk < NT / 2; kk++)
#pragma unroll
                    for (int e = 0; e < 4; e += 2) {
                        const int pi = warp * 16 + lane / 4 + (e / 2) * 8, ni = (k0 + kk) * 8 + (lane % 4) * 2;
                        const float2 v = prev && pi < P && ni < N
                                             ? __ldcg(reinterpret_cast<const float2 *>(prev + pi * N + ni))
                                             : make_float2(0.f, 0.f);
                        hin[kk][e] = v.x, hin[kk][e + 1] = v.y;
                    }
            } else {
#pragma unroll
                for (int kk = 0; kk < NT / 2; kk++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const int pi = warp * 16 + lane / 4 + (e / 2) * 8, ni = (k0 + kk) * 8 + (lane % 4) * 2 + e % 2;
                        hin[kk][e] = prev && pi < P && ni < N ? __ldcg(prev + pi * N + ni) : 0.f;
                    }
            }
#pragma unroll
            for (int kk = 0; kk < NT / 2; kk++) {
                const int k = k0 + kk, ni = k * 8 + (lane % 4) * 2, pair = ni / 2;  // columns ni, ni + 1: one pair
                if (!FULL && ni >= Np) continue;
                const float cs = pair < S ? cs_in[pair] : 1.f, sn = pair < S ? sn_in[pair] : 0.f;
#pragma unroll
                for (int half = 0; half < 2; half++) {
                    const int pi = warp * 16 + lane / 4 + half * 8;
                    const float h0 = hin[kk][2 * half], h1 = hin[kk][2 * half + 1];
                    // acc_states = Initial_SSM_State_curr + Initial_V_State_curr[:, :, None] * Initial_K_State_curr[:, None, :] * scalar
                    // (here in the chunk's frame: H_in R(θ_in) plus the entering term)
                    const float e = entering * vprev[pi];
                    const float l0 = h0 * cs + h1 * sn + e * kprev[ni], l1 = h1 * cs - h0 * sn + e * kprev[ni + 1];
                    *reinterpret_cast<F2 *>(Hs + pi * NS + ni) = Pair<F>::narrow(l0, l1);
                    // final_acc_states = acc_states * da_cs_last + torch.einsum("thd,thD->hDd", K_curr_scaled, V_curr_scaled)
                    const float o0 = decay * l0 + st[k][2 * half], o1 = decay * l1 + st[k][2 * half + 1];
                    if (pi < P && ni < N) {  // back to the absolute frame: · R(θ_in)ᵀ
                        if (by_float2) {
                            *reinterpret_cast<float2 *>(next + pi * N + ni) = make_float2(o0 * cs - o1 * sn, o0 * sn + o1 * cs);
                        } else {
                            next[pi * N + ni] = o0 * cs - o1 * sn;
                            if (ni + 1 < N) next[pi * N + ni + 1] = o0 * sn + o1 * cs;
                        }
                    }
                }
            }
        }
    }
    if constexpr (INFLIGHT) asm volatile("cp.async.wait_all;");  // z (the barrier shows it to every warp)
    __syncthreads();  // the block's ring writes happen before thread 0's release below
    if (tid == 0 && !last) store_release(a.published + o, (int)ci + 1);
    if (last) {  // the last step's rotated key and its v are the sequence's final k and v states
        const F *klast = kg + (int64_t)(m - 1) * G * N;  // (N,) F: the last step's k
        for (int i = tid; i < (N + 1) / 2; i += THREADS) {
            const int col = 2 * i;
            const float x = to_float(klast[col]) + t.k_bias[h * N + col];
            const float y = col + 1 < N ? to_float(klast[col + 1]) + t.k_bias[h * N + col + 1] : 0.f;
            float sn = 0.f, cs = 1.f;
            if (i < S) sincosf((float)theta_out[i], &sn, &cs);
            t.final_k_state[o * N + col] = x * cs - y * sn;
            if (col + 1 < N) t.final_k_state[o * N + col + 1] = x * sn + y * cs;
        }
        for (int i = tid; i < P; i += THREADS) t.final_v_state[o * P + i] = to_float(vg[(int64_t)(m - 1) * H * P + i]);
    }

    /* ---- 3. Outputs: warp w the row tiles w, w + 4, ... */
    const int ra_off = lane / 4;  // this thread's rows in a tile: ra_off and ra_off + 8
    for (int mt = warp; mt * 16 < m; mt += WARPS) {
        uint32_t cf[NMAX / 16][4];  // q̃ rows of the tile as A operands, all of N
#pragma unroll
        for (int kk = 0; kk < NMAX / 16; kk++)
            if (FULL || kk * 16 < Np) ldsm_x4(cf[kk], qs_a + (mt * 16 * NS + kk * 16) * 2);
        float yacc[PMAX / 8][4] = {};  // (16 x Pp) fp32: the tile's y, as mma accumulators
        // out = out + torch.einsum("hDd,thd,ht->thD", acc_states, Q_curr, exp_da_cs)
#pragma unroll
        for (int kk = 0; kk < NMAX / 16; kk++) {
            if (!FULL && kk * 16 >= Np) continue;
#pragma unroll
            for (int np = 0; np < PMAX / 16; np++) {
                if (!FULL && np * 16 >= Pp) continue;
                uint32_t hb[4];  // H' rows p (mma n) x n (mma k)
                ldsm_x4(hb, hs_b + (np * 16 * NS + kk * 16) * 2);
                mma_16816_of<F>(yacc[2 * np], cf[kk], hb[0], hb[1]);
                mma_16816_of<F>(yacc[2 * np + 1], cf[kk], hb[2], hb[3]);
            }
        }
        const int ra = mt * 16 + ra_off, rb = ra + 8;
        const float ca = cum2[ra], cb = cum2[rb], ea = exp2_approx(ca), eb = exp2_approx(cb);
#pragma unroll
        for (int nt = 0; nt < PMAX / 8; nt++) yacc[nt][0] *= ea, yacc[nt][1] *= ea, yacc[nt][2] *= eb, yacc[nt][3] *= eb;
        /* QK_causal = (torch.tril(QK) * torch.exp(_segsum(ADT_curr))); out = einsum("hts,shd->thd", QK_causal, V_curr)
         * Below the diagonal tile the decay factors through the tile's last step e (vdt). */
        for (int jt = 0; jt <= mt; jt++) {
            const int j0 = jt * 16, jc = j0 + (lane % 4) * 2;  // this thread's columns jc, jc+1, jc+8, jc+9
            float p[8];  // q̃·k̃: columns j0..7 then j0+8..15; entries: row a (0,1), row b (2,3)
            cb_tile<FULL, F>(p, cf, ks_b, j0, NS, Np);
            if (jt < mt) {
                const float ce = cum2[j0 + 15], ua = exp2_approx(ca - ce), ub = exp2_approx(cb - ce);
                const float2 v0 = *reinterpret_cast<const float2 *>(vdt + jc);
                const float2 v1 = *reinterpret_cast<const float2 *>(vdt + jc + 8);
                p[0] *= ua * v0.x, p[1] *= ua * v0.y, p[2] *= ub * v0.x, p[3] *= ub * v0.y;
                p[4] *= ua * v1.x, p[5] *= ua * v1.y, p[6] *= ub * v1.x, p[7] *= ub * v1.y;
            } else {
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    const int j = jc + (e >= 4 ? 8 : 0) + (e & 1), i = (e & 2) ? rb : ra;
                    // the diagonal: scale_t minus the shifted part, γ_t (out = out - V_curr * QK_dot)
                    p[e] = j < i ? p[e] * exp2_approx(((e & 2) ? cb : ca) - cum2[j]) * wj[j]
                                 : j == i ? p[e] * gam[i] : 0.f;
                }
            }
            px_tile<FULL, F>(yacc, p, vs_a, j0, PS, Pp);
        }
        // out = out + D[None, :, None] * V_curr;  out = out * Z_curr * torch.sigmoid(Z_curr)
        store_y_tile<FULL, F>(yacc, ra, m, static_cast<F *>(t.y), static_cast<const F *>(t.z),
                              ((r * L + c0) * H + h) * P, H * P, Vs, PS, t.D, false, h, P,
                              INFLIGHT && t.z ? Zs : nullptr);
    }
}

static size_t fused_smem_bytes(const Mamba3Shape *s, bool inflight) {
    const size_t Q = (size_t)s->chunk, NS = (size_t)round16(s->dstate) + 8, PS = (size_t)round16(s->headdim) + 8;
    size_t angles = Q * (size_t)angle_pitch((int)s->angles, inflight) * sizeof(float);  // φ's rows
    if (inflight) {  // and the segments' sums, or z's rows in the same place later
        angles += THREADS * (sizeof(double) + sizeof(float));
        if (Q * PS * 2 > angles) angles = Q * PS * 2;
    }
    return (2 * Q * NS + Q * PS + (PS - 8) * NS + Q) * 2 + 6 * Q * sizeof(float) + angles;
}

static size_t counter_bytes(const Mamba3Shape *s) {
    const int64_t n = s->nseq ? s->nseq : s->batch;
    return align256((size_t)(n * s->heads + 1) * sizeof(int));
}

extern "C" size_t mamba3_fused_mma_workspace(const Mamba3Shape *s) {
    const size_t nh = (size_t)((s->nseq ? s->nseq : s->batch) * s->heads);
    return counter_bytes(s) + (chunk_map_words(s) + max_chunks(s)) * sizeof(int64_t) +
           nh * 2 * s->angles * sizeof(double) +
           nh * 2 * (size_t)(s->headdim * s->dstate) * sizeof(float);
}

static const char *fused_unsupported(const Mamba3Shape *s, bool inflight) {
    if (s->dstate > NMAX) return "register tiles hold N <= 128";
    if (s->headdim > PMAX) return "register tiles hold p <= 64";
    if (s->chunk > QMAX) return "chunks over 128 steps (a thread a step in the chunk's scans)";
    if (inflight && s->angles < 1) return "no angle pairs (the angles' pass gives each pair threads)";
    if (fused_smem_bytes(s, inflight) > smem_optin_bytes()) return "a chunk's q, k, v and state do not fit in shared memory";
    if (max_chunks(s) * s->heads > INT_MAX) return "more than 2^31 - 1 (chunk, head) work items";
    return NULL;
}

extern "C" const char *mamba3_fused_mma_unsupported(const Mamba3Shape *s) { return fused_unsupported(s, false); }
extern "C" const char *mamba3_fused_prefetch_unsupported(const Mamba3Shape *s) { return fused_unsupported(s, true); }

template <typename F, bool INFLIGHT>
static void launch_fused(const Mamba3Tensors *t, void *workspace) {
    const Mamba3Shape *s = &t->s;
    const int64_t nh = (s->nseq ? s->nseq : s->batch) * s->heads;
    char *w = static_cast<char *>(workspace);
    FusedArgs a;
    a.t = *t;
    a.published = reinterpret_cast<int *>(w);
    a.ticket = a.published + nh;
    a.map = chunk_map_at(s, reinterpret_cast<int64_t *>(w + counter_bytes(s)));
    a.rounds = a.map.map + chunk_map_words(s);
    a.ring_theta = reinterpret_cast<double *>(a.rounds + max_chunks(s));
    a.ring = reinterpret_cast<float *>(a.ring_theta + nh * 2 * s->angles);
    a.Np = round16(s->dstate), a.Pp = round16(s->headdim);
    const size_t smem = fused_smem_bytes(s, INFLIGHT);
    const bool full = s->dstate == NMAX && s->headdim == PMAX;
    void (*kernel)(FusedArgs) = full ? mamba3_fused_kernel<F, true, INFLIGHT> : mamba3_fused_kernel<F, false, INFLIGHT>;
    static size_t allowed[2] = {0, 0};  // the opt-in already asked for the FULL and the general kernel
    allow_smem(kernel, smem, &allowed[full ? 1 : 0]);
    cuda_check(cudaMemsetAsync(workspace, 0, counter_bytes(s)));
    chunk_map_kernel<<<1, 1>>>(*t, a.map);
    cuda_check_launch();
    chunk_rounds_kernel<<<1, 1024>>>(*t, a.map, a.rounds);
    cuda_check_launch();
    kernel<<<(unsigned)(max_chunks(s) * s->heads), THREADS, smem>>>(a);
    cuda_check_launch();
}

extern "C" void mamba3_fused_mma(const Mamba3Tensors *t, void *workspace) { launch_fused<__half, false>(t, workspace); }
extern "C" void mamba3_fused_mma_bf16(const Mamba3Tensors *t, void *workspace) {
    launch_fused<__nv_bfloat16, false>(t, workspace);
}
extern "C" void mamba3_fused_prefetch(const Mamba3Tensors *t, void *workspace) {
    launch_fused<__half, true>(t, workspace);
}
extern "C" void mamba3_fused_prefetch_bf16(const Mamba3Tensors *t, void *workspace) {
    launch_fused<__nv_bfloat16, true>(t, workspace);
}
