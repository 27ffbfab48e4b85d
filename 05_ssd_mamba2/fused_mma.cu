/* 05_ssd_mamba2, GPU: version 7, ssd_fused_mma, the SSD fused into one
 * kernel on mma.sync tensor cores (the per-element budget and the four steps
 * it fuses: kernels.cu's header). */
#include "kernels.h"

#include <cuda_fp16.h>
#include <stdint.h>

#include "cuda_check.h"
#include "mamba2_io.cuh"
#include "mma_sm80.cuh"
#include "mufu.cuh"
#include "ssd_mma.cuh"

/* ========================================================================
 * Fused on tensor cores (ssd_fused_mma): one block per (b, h, chunk), every
 * matrix product on mma.sync (fp16 operands, fp32 accumulate), the chunk
 * state handed from chunk to chunk through L2.
 *
 * What it removes: the four passes of the (b, chunks, h, p, N) fp32 chunk
 * states through DRAM (ssd_steps' 1.07 GB at S3) and three launches. Each
 * block (ticket order: chunk-major, so chunk c - 1 of the same (b, h) always
 * started earlier) does, with x, B, C of its chunk in shared memory (fp16):
 *   1 S_local = x^T diag(w) B on tensor cores, w_j = dt_j exp(cum_last - cum_j)
 *   2 waits for chunk c - 1's end state S_in (a flag per (b, h)), writes its
 *     own S_out = exp(cum_last) S_in + S_local to a two-slot ring in L2 and
 *     raises the flag: only this step is serial along L
 *   3 y = exp(cum_i) C S_in^T + (causal decay o C B^T) x + D x, then silu(z),
 *     16 rows per warp, C B^T recomputed per head (no stored (Q x Q) matrix)
 * Bytes: x, dt, B, C, z read once (B, C shared by the heads of a group come
 * from L2), y written once, states 2·4·b·h·p·N in the ring (L2-resident).
 * FLOPs per (b, chunk, head): 2QpN (state) + 2QpN (C S_in) + about
 * (Q²/2)(2N + 2p) for the causal tiles of C B^T and its product with x.
 * fp16 operands: x, B, C as given; the decay-weighted C B^T and S_in rounded
 * to fp16 before their products (relative 2^-11 each), sums in fp32.
 * ====================================================================== */

/* ---- the fused kernel ---- */

/* Limits of the register tiles (ops/ssd/ssd_mma.cuh): N <= 128, p <= 64. */
#define FUSED_NMAX SSD_MMA_NMAX
#define FUSED_PMAX SSD_MMA_PMAX
#define FUSED_WARPS 16

struct FusedArgs {
    const void *x, *dt, *B, *C, *z;  // (b,L,h,p), (b,L,h), (b,L,g,N) x2, (b,L,h,p): fp16
    const float *A, *D, *dt_bias;    // (h,), (h,) | (h,p), (h,) fp32
    const float *h0;                 // (b, h, p, N) fp32, NULL without
    void *y;                         // (b, L, h, p) fp16
    float *final_state;              // (b, h, p, N) fp32
    float *ring;                     // (b, h, 2, p, N) fp32: chunk c's end state in slot c % 2
    int *published;                  // (b, h): how many chunks have their end state in the ring
    int *ticket;                     // next work item: items go out in chunk-major order
    int64_t batch, L, H, P, G, N;
    int Q, nchunks, Np, Pp;          // Np, Pp: N and p rounded up to 16
    bool softplus, D_per_channel;
};

/* FULL: N and p are exactly 128 and 64 (the S3 head), so every tile bound
 * below is a compile-time constant and no column of a tile is past p. */
template <bool FULL>
__global__ void __launch_bounds__(FUSED_WARPS * 32, 1) ssd_fused_mma_kernel(FusedArgs a) {
    extern __shared__ __align__(16) unsigned char smem[];
    const int Q = a.Q, Np = FULL ? FUSED_NMAX : a.Np, Pp = FULL ? FUSED_PMAX : a.Pp;
    const int NS = Np + 8, PS = Pp + 8;  // row pitches: +16 bytes keeps ldmatrix conflict-free
    __half *Cs = reinterpret_cast<__half *>(smem);  // (Q, Np) fp16: C of the chunk
    __half *Bs = Cs + Q * NS;                       // (Q, Np) fp16: B of the chunk
    __half *Xs = Bs + Q * NS;                       // (Q, Pp) fp16: x of the chunk
    __half *Ss = Xs + Q * PS;                       // (Pp, Np) fp16: state entering the chunk
    float *cum2 = reinterpret_cast<float *>(Ss + Pp * NS);  // (Q,) log2e * cumsum(dt*A)
    float *dts = cum2 + Q;                                  // (Q,) dt after bias and softplus
    float *vdt = dts + Q;                                   // (Q,) dt_j * exp(cum_e - cum_j), e = j's tile end
    __half *wts = reinterpret_cast<__half *>(vdt + Q);      // (Q,) dt_j * exp(cum_last - cum_j)
    float *partial = reinterpret_cast<float *>(wts + Q);    // (8, Pp/2, 32) fp32: helpers' sums, lane-major
    __shared__ int item;

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    /* ldmatrix row addresses: lane l points at row l % 8 of matrix l / 8. Pattern
     * A orders the four matrices (r0,c0) (r8,c0) (r0,c8) (r8,c8), pattern B
     * (r0,c0) (r0,c8) (r8,c0) (r8,c8); byte addresses of this lane's row in
     * each tile, plus the tile's origin below. */
    const int q = lane / 8, r = lane % 8;
    const int rowA = (q & 1) * 8 + r, colA = (q >> 1) * 8, rowB = (q >> 1) * 8 + r, colB = (q & 1) * 8;
    const uint32_t cs_a = smem_addr(Cs) + (rowA * NS + colA) * 2, bs_a = smem_addr(Bs) + (rowA * NS + colA) * 2;
    const uint32_t bs_b = smem_addr(Bs) + (rowB * NS + colB) * 2, ss_b = smem_addr(Ss) + (rowB * NS + colB) * 2;
    const uint32_t xs_a = smem_addr(Xs) + (rowA * PS + colA) * 2, xs_b = smem_addr(Xs) + (rowB * PS + colB) * 2;
    if (tid == 0) item = atomicAdd(a.ticket, 1);
    __syncthreads();
    const int64_t BH = a.batch * a.H;
    const int c = (int)(item / BH);
    const int64_t bh = item % BH, b = bh / a.H, h = bh % a.H, g = h / (a.H / a.G);
    const int64_t t0 = (int64_t)c * Q;
    const int len = (int)min((int64_t)Q, a.L - t0);  // the last chunk may be shorter

    /* Loads: x, B first (the chunk state needs them), then C. */
    const bool vec16 = a.P % 8 == 0 && a.N % 8 == 0;
    const __half *x = static_cast<const __half *>(a.x) + ((b * a.L + t0) * a.H + h) * a.P;
    const __half *Bg = static_cast<const __half *>(a.B) + ((b * a.L + t0) * a.G + g) * a.N;
    const __half *Cg = static_cast<const __half *>(a.C) + ((b * a.L + t0) * a.G + g) * a.N;
    load_tile<FULL ? FUSED_PMAX / 8 : 0>(Xs, PS, x, a.H * a.P, 0, len, Q, (int)a.P, Pp, vec16);
    load_tile<FULL ? FUSED_NMAX / 8 : 0>(Bs, NS, Bg, a.G * a.N, 0, len, Q, (int)a.N, Np, vec16);
    load_tile<FULL ? FUSED_NMAX / 8 : 0>(Cs, NS, Cg, a.G * a.N, 0, len, Q, (int)a.N, Np, vec16);
    asm volatile("cp.async.commit_group;");

    /* dt and the within-chunk cumsum of dt*A (log2 units), while the copies fly. */
    float dA = 0.f;
    if (tid < Q) {
        float d = 0.f;
        if (tid < len)
            d = delta_of(to_float(static_cast<const __half *>(a.dt)[(b * a.L + t0 + tid) * a.H + h]),
                         a.dt_bias ? a.dt_bias[h] : 0.f, a.softplus);
        dts[tid] = d;
        // dA_cs = tl.cumsum(dA, axis=0) with dA = dt * A
        dA = d * a.A[h] * LOG2E_F;
    }
    dA = block_inclusive_sum(dA);
    if (tid < Q) cum2[tid] = dA;
    __syncthreads();
    const float cum_last = cum2[len - 1];
    if (tid < Q) {
        wts[tid] = __float2half_rn(dts[tid] * exp2_approx(cum_last - cum2[tid]));
        vdt[tid] = dts[tid] * exp2_approx(cum2[tid | 15] - cum2[tid]);
    }
    asm volatile("cp.async.wait_all;");
    __syncthreads();

    /* ---- 1. The chunk's own state: S_local (p x N) = sum_j x_j^T * wts_j * B_j,
     * a (Pp x Q) x (Q x Np) product. Warp w owns p-tile w % 4 and the 16-wide
     * n-blocks w / 4, w / 4 + 4 (two n8-tiles each).
     * states = tl.dot(x, b) with x scaled by dt * exp(dA_cs_last - dA_cs) (_chunk_state_fwd_kernel) */
    const int mp = warp % 4;
    constexpr int NBLK = FUSED_NMAX / 16 / (FUSED_WARPS / 4);  // n16-blocks per warp
    float st[2 * NBLK][4] = {};  // this warp's n8-tiles of S_local: block k is tiles 2k, 2k+1
    const bool has_ptile = mp * 16 < Pp;
    accumulate_chunk_state<FULL, FUSED_WARPS>(st, xs_b, bs_a, wts, Q, NS, PS, Np, Pp);

    /* ---- 2. State passing: wait for chunk c-1, S_out = exp(cum_last) S_in + S_local.
     * states = scale * states + new_states (_state_passing_fwd_kernel) */
    if (tid == 0 && c > 0)
        while (load_acquire(a.published + bh) < c) __nanosleep(32);
    __syncthreads();
    const float chunk_decay = exp2_approx(cum_last);
    const float *prev = c == 0 ? (a.h0 ? a.h0 + bh * a.P * a.N : nullptr)
                               : a.ring + (bh * 2 + ((c - 1) & 1)) * a.P * a.N;
    const bool last_chunk = c == a.nchunks - 1;
    float *next = last_chunk ? a.final_state + bh * a.P * a.N : a.ring + (bh * 2 + (c & 1)) * a.P * a.N;
#pragma unroll
    for (int k = 0; k < 2 * NBLK; k++) {
        const int n0 = (warp / 4 + (FUSED_WARPS / 4) * (k / 2)) * 16 + (k % 2) * 8;
        if (!has_ptile || (!FULL && n0 >= Np)) continue;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int pi = mp * 16 + lane / 4 + (e >= 2 ? 8 : 0), ni = n0 + (lane % 4) * 2 + (e & 1);
            const bool real = pi < a.P && ni < a.N;
            const float s_in = (real && prev) ? __ldcg(prev + pi * a.N + ni) : 0.f;
            Ss[pi * NS + ni] = __float2half_rn(s_in);
            if (real) next[pi * a.N + ni] = chunk_decay * s_in + st[k][e];
        }
    }
    __syncthreads();  // the block's ring writes happen before thread 0's release below
    if (tid == 0 && !last_chunk) store_release(a.published + bh, c + 1);

    /* ---- 3. Outputs. Warp w owns the 16 rows of tile w. Row tile m needs m + 1
     * column tiles (causal), so the long tiles hand their first column tiles to
     * a helper warp, which adds them up (no decay from S_in) and passes the
     * partial sum through shared memory: every warp does about half the work
     * of the longest tile. With 16 tiles the pairs are (w, 15 - w); with 8 or
     * fewer, warp w + 8 helps tile w. A helper does its part first, so the
     * owner rarely waits, and never holds two accumulators at once. */
    const int ntiles = Q / 16;
    const bool paired = ntiles == FUSED_WARPS;
    int own = -1, own_from = 0, help = -1, help_to = 0, slot = 0;
    if (paired) {
        own = warp;
        if (warp >= FUSED_WARPS / 2) { own_from = warp - FUSED_WARPS / 2; slot = FUSED_WARPS - 1 - warp; }
        else { help = FUSED_WARPS - 1 - warp; help_to = FUSED_WARPS / 2 - 1 - warp; slot = warp; }
    } else if (warp < ntiles) {
        own = warp; own_from = (warp + 1) / 2; slot = warp;
    } else if (warp - FUSED_WARPS / 2 < ntiles && warp >= FUSED_WARPS / 2) {
        help = warp - FUSED_WARPS / 2; help_to = (help + 1) / 2; slot = help;
    }
    if (help_to == 0) help = -1;  // nothing to hand over: tile 0, and the middle pair
    const int ra_off = lane / 4;  // this thread's rows in a tile: ra_off and ra_off + 8

    /* acc += sum over column tiles [jb, je) of tile mt of P_ij x_j, with
     * P_ij = (C_i . B_j) exp(cum_i - cum_j) dt_j, zero above the diagonal.
     * cb = tl.dot(C, B) * tl.exp(dA_cs_m[:, None] - dA_cs_k[None, :]) * dt_k;
     * cb = tl.where(offs_m[:, None] >= k + offs_k[None, :], cb, 0.0); acc += tl.dot(cb, x)
     * Below the diagonal tile the decay factors through the tile's last step e:
     * exp(cum_i - cum_j) = exp(cum_i - cum_e) * exp(cum_e - cum_j), both <= 1,
     * the second (times dt_j) precomputed per column in vdt: 2 exps a tile, not 8. */
    auto diagonal = [&](float (&acc)[FUSED_PMAX / 8][4], const uint32_t (&cf)[FUSED_NMAX / 16][4], int mt,
                        int jb, int je) {
        const int ra = mt * 16 + ra_off, rb = ra + 8;
        const float ca = cum2[ra], cb = cum2[rb];
        for (int jt = jb; jt < je; jt++) {
            const int j0 = jt * 16;
            float p[8];  // C·Bᵀ, then P: columns j0..7 then j0+8..15; entries: row a (0,1), row b (2,3)
            cb_tile<FULL>(p, cf, bs_b, j0, NS, Np);
            const int jc = j0 + (lane % 4) * 2;  // this thread's columns jc, jc+1, jc+8, jc+9
            if (jt < mt) {
                const float ce = cum2[j0 + 15];
                const float ua = exp2_approx(ca - ce), ub = exp2_approx(cb - ce);
                const float2 v0 = *reinterpret_cast<const float2 *>(vdt + jc);
                const float2 v1 = *reinterpret_cast<const float2 *>(vdt + jc + 8);
                p[0] *= ua * v0.x; p[1] *= ua * v0.y; p[2] *= ub * v0.x; p[3] *= ub * v0.y;
                p[4] *= ua * v1.x; p[5] *= ua * v1.y; p[6] *= ub * v1.x; p[7] *= ub * v1.y;
            } else {
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    const int j = jc + (e >= 4 ? 8 : 0) + (e & 1), i = (e & 2) ? rb : ra;
                    p[e] = j <= i ? p[e] * exp2_approx(((e & 2) ? cb : ca) - cum2[j]) * dts[j] : 0.f;
                }
            }
            px_tile<FULL>(acc, p, xs_a, j0, PS, Pp);
        }
    };
    auto load_c = [&](uint32_t (&cf)[FUSED_NMAX / 16][4], int mt) {
#pragma unroll
        for (int kk = 0; kk < FUSED_NMAX / 16; kk++)
            if (FULL || kk * 16 < Np) ldsm_x4(cf[kk], cs_a + (mt * 16 * NS + kk * 16) * 2);
    };
    uint32_t cf[FUSED_NMAX / 16][4];  // C rows of one tile as A operands, all of N
    float yacc[FUSED_PMAX / 8][4];    // (16 x Pp) fp32 accumulator of one tile
    const bool helped = own >= 0 && own_from > 0;

    if (help >= 0 && help * 16 < len) {
        float part[FUSED_PMAX / 8][4] = {};
        load_c(cf, help);
        diagonal(part, cf, help, 0, help_to);
#pragma unroll
        for (int nt = 0; nt < FUSED_PMAX / 8; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) partial[(slot * (FUSED_PMAX / 2) + nt * 4 + e) * 32 + lane] = part[nt][e];
        asm volatile("bar.arrive %0, 64;" ::"r"(1 + slot) : "memory");
    }
    if (own >= 0 && own * 16 < len) {
        load_c(cf, own);
#pragma unroll
        for (int nt = 0; nt < FUSED_PMAX / 8; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) yacc[nt][e] = 0.f;
        /* Off-diagonal: exp(cum_i) * C_i S_in^T.
         * acc = tl.dot(C, prev_states) * scale_m[:, None] (_chunk_scan_fwd_kernel) */
#pragma unroll
        for (int kk = 0; kk < FUSED_NMAX / 16; kk++) {
            if (!FULL && kk * 16 >= Np) continue;
#pragma unroll
            for (int np = 0; np < FUSED_PMAX / 16; np++) {
                if (!FULL && np * 16 >= Pp) continue;
                uint32_t sb[4];  // S_in rows p (mma n) x n (mma k)
                ldsm_x4(sb, ss_b + (np * 16 * NS + kk * 16) * 2);
                mma_16816(yacc[2 * np], cf[kk], sb[0], sb[1]);
                mma_16816(yacc[2 * np + 1], cf[kk], sb[2], sb[3]);
            }
        }
        const float ea = exp2_approx(cum2[own * 16 + ra_off]), eb = exp2_approx(cum2[own * 16 + ra_off + 8]);
#pragma unroll
        for (int nt = 0; nt < FUSED_PMAX / 8; nt++) {
            yacc[nt][0] *= ea; yacc[nt][1] *= ea;
            yacc[nt][2] *= eb; yacc[nt][3] *= eb;
        }
        diagonal(yacc, cf, own, own_from, own + 1);
    }
    if (own < 0 || own * 16 >= len) return;
    if (helped) {
        named_barrier_sync<64>(1 + slot);
#pragma unroll
        for (int nt = 0; nt < FUSED_PMAX / 8; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) yacc[nt][e] += partial[(slot * (FUSED_PMAX / 2) + nt * 4 + e) * 32 + lane];
    }

    /* y = acc + D x, then y *= silu(z): columns pi, pi + 1 of rows ra, ra + 8. */
    store_y_tile<FULL>(yacc, own * 16 + ra_off, len, static_cast<__half *>(a.y), static_cast<const __half *>(a.z),
                       ((b * a.L + t0) * a.H + h) * a.P, a.H * a.P, Xs, PS, a.D, a.D_per_channel, h, a.P);
}

static size_t fused_smem_bytes(const SsdShape *s) {
    const int Q = (int)s->chunk, Np = round16(s->dstate), Pp = round16(s->headdim);
    return (size_t)(2 * Q * (Np + 8) + Q * (Pp + 8) + Pp * (Np + 8)) * 2 + (size_t)Q * 12 + (size_t)Q * 2 +
           (size_t)(FUSED_WARPS / 2) * (FUSED_PMAX / 2) * 32 * sizeof(float);
}

extern "C" const char *ssd_fused_mma_unsupported(const SsdShape *s) {
    if (s->dstate > FUSED_NMAX) return "register tiles hold N <= 128";
    if (s->headdim > FUSED_PMAX) return "register tiles hold p <= 64";
    if (fused_smem_bytes(s) > smem_optin_bytes()) return "chunk x (2N + p) does not fit in shared memory";
    if (ssd_n_chunks(s) * s->batch * s->heads > INT_MAX) return "more than 2^31 (chunk, b, h) work items";
    return NULL;
}

extern "C" size_t ssd_fused_mma_workspace(const SsdShape *s) {
    const size_t counters = (size_t)(s->batch * s->heads + 1) * sizeof(int);
    return (counters + 255) / 256 * 256 + (size_t)s->batch * s->heads * 2 * s->headdim * s->dstate * sizeof(float);
}

static void launch_fused(const SsdTensors *t, void *workspace) {
    const SsdShape *s = &t->s;
    FusedArgs a;
    a.x = t->x; a.dt = t->dt; a.B = t->B; a.C = t->C; a.z = t->z;
    a.A = t->A; a.D = t->D; a.dt_bias = t->dt_bias; a.h0 = t->initial_states;
    a.y = t->y; a.final_state = t->final_state;
    const size_t counters = (size_t)(s->batch * s->heads + 1) * sizeof(int);
    a.published = static_cast<int *>(workspace);
    a.ticket = a.published + s->batch * s->heads;
    a.ring = reinterpret_cast<float *>(static_cast<char *>(workspace) + (counters + 255) / 256 * 256);
    a.batch = s->batch; a.L = s->seqlen; a.H = s->heads; a.P = s->headdim; a.G = s->groups; a.N = s->dstate;
    a.Q = (int)s->chunk; a.nchunks = (int)ssd_n_chunks(s);
    a.Np = round16(s->dstate); a.Pp = round16(s->headdim);
    a.softplus = s->softplus; a.D_per_channel = s->D_per_channel;
    const size_t smem = fused_smem_bytes(s);
    const bool full = a.N == FUSED_NMAX && a.P == FUSED_PMAX;
    void (*kernel)(FusedArgs) = full ? ssd_fused_mma_kernel<true> : ssd_fused_mma_kernel<false>;
    static size_t allowed[2] = {0, 0};  // the opt-in already asked for the general and the FULL kernel
    allow_smem(kernel, smem, &allowed[full]);
    cuda_check(cudaMemsetAsync(workspace, 0, counters));
    const int64_t items = (int64_t)a.nchunks * s->batch * s->heads;
    kernel<<<(unsigned)items, FUSED_WARPS * 32, smem>>>(a);
    cuda_check_launch();
}

extern "C" void ssd_fused_mma(const SsdTensors *t, void *workspace) { launch_fused(t, workspace); }
