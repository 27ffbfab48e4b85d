/* 06_bidirectional, GPU: bidirectional Mamba-2, default and Hydra form.
 *
 * The 1x (bidir_twice_*): what users run today. Flip x, dt, B, C in time
 * (copies), run 05's causal kernel on the inputs and on the copies, then sum
 * the outputs. Per (b, chunk, h) that is twice 05's work: two C·Bᵀ causal
 * halves, two masked products with x, two chunk states, two state terms; and
 * the bytes of two forwards plus the copies (x, dt, B, C read and written
 * once more) and the sum (both outputs and x read, y written).
 *
 * Fused: the two directions need each other's chunk states from opposite
 * ends of the sequence, so no single pass over the chunks can produce y
 * (chunk c needs every chunk after it and every chunk before it). Two
 * kernels, neither flips anything:
 *   1 states  per direction, b, h: the state entering each chunk, stored in
 *             fp16 (05's fused kernel rounds it to fp16 before its product
 *             too). A chunk's own state S_local = xᵀ·diag(w)·B on tensor
 *             cores (forward w_j = Δ_j·exp(cum_last − cum_j), backward
 *             w_j = Δ_j·exp(cum_{j−1}), the decay to the chunk's first step),
 *             and S_out = exp(cum_last)·S_in + S_local for the next chunk of
 *             its direction. Version 5 hands S_out from block to block
 *             through a ring in L2 (05's way); version 6 gives each chain
 *             one block that keeps it in registers.
 *   2 output  per (b, chunk, h), the chunk's x, B, C in shared memory (Hydra:
 *             C one row early for the forward, C' one row late for the
 *             backward direction, then B', C' replace B, C half way):
 *               y_i = exp(rowf_i)·C_i·S_fᵀ + exp(rowb_i)·C'_i·S_bᵀ
 *                   + Σ_j M_ij·x_j + D·x_i,  then × silu(z_i)
 *             with M the chunk's block of both triangles (06_bidirectional/
 *             cpu.c derives it). Warp w owns row tile w and walks column
 *             tiles 0..w−1 forward (lower triangle), w (the diagonal, both
 *             triangles at once in the default form) and w+1.. backward
 *             (upper triangle): every warp does Q/16 tiles, no helper warps
 *             needed as in 05's causal kernel.
 *
 * Budget per (b, chunk, h) at p 64, N 128, Q 256, in FLOPs:
 *   twice      2 × (Q·p·N·2 + Q·p·N·2 + f·Q²·N·2 + f·Q²·p·2), f = 5/8 the
 *              share of 05's 16×16 causal tiles: 2 × 24.1 = 48.2 MFLOP
 *   fused      states 2 × 4.2, state terms 2 × 4.2, C·Bᵀ Q²·N·2 = 16.8
 *              (default: one product, Hydra: the diagonal tile twice, one
 *              16th more), M·X Q²·p·2 = 8.4: 41.9 MFLOP, 0.87× of twice;
 *              the C·Bᵀ it shares is the half that 05's causal mask skips.
 * DRAM bytes (fp16, S3 b 8, L 8192; x and y 268 MB each, B, C 17 MB each):
 *   twice      x 4× (two passes, the flip's read and write), y 5× (two
 *              outputs written, read by the sum, y written), B, C, dt 4×:
 *              about 2.8 GB
 *   fused      x 3× (each direction's states, then y), B 3×, C once, the
 *              fp16 entering states (268 MB) written once and read once, y
 *              written once: about 1.7 GB, 0.60× of twice.
 * This file holds the fused versions (5, 6); the 1x is in twice.cu. */
#include "kernels.h"

#include <cuda_fp16.h>
#include <limits.h>
#include <stdint.h>

#include "../05_ssd_mamba2/kernels.h"
#include "cuda_check.h"
#include "mamba2_io.cuh"
#include "mma_sm80.cuh"
#include "ssd_mma.cuh"
#include "mufu.cuh"

/* ========================================================================
 * Fused: kernel 1, the chunk states of both directions
 * ====================================================================== */

/* Limits of the register tiles (ops/ssd/ssd_mma.cuh): N <= 128, p <= 64. */
#define BIDIR_NMAX SSD_MMA_NMAX
#define BIDIR_PMAX SSD_MMA_PMAX
#define STATE_WARPS 8    // kernel 1: 4 p-tiles x 2 halves of N
#define OUTPUT_WARPS 16  // kernel 2: one 16-row tile of the chunk each (Q <= 256)

struct BidirArgs {
    const __half *x, *z;               // (b, L, h, p) fp16; z NULL without
    const __half *dt, *B, *C;          // (b, L, h), (b, L, g, N) x2 fp16: the forward direction's
    const __half *dt_b, *B_b, *C_b;    // the backward direction's (default form: the same pointers)
    const float *A, *D, *dt_bias;      // (h,), (h,) | (h, p), (h,) fp32
    const float *h0, *h0_b;            // (b, h, p, N) fp32 each, NULL without
    __half *y;                         // (b, L, h, p) fp16
    __half *entering;                  // (2, b, h, chunks, p, N) fp16: state entering each chunk, per direction
    float *ring;                       // (2, b, h, 2, p, N) fp32: a chain's last end state in slot k % 2
    int *published;                    // (2, b, h): how many chunks of the chain have their end state in the ring
    int *ticket;                       // kernel 1's next work item
    int64_t batch, L, H, P, G, N;
    int Q, nchunks, Np, Pp;            // Np, Pp: N and p rounded up to 16
    bool softplus, D_per_channel, hydra;
};

/* Δ of step t0 + i of head h in one direction (0 past the chunk's end). */
static __device__ __forceinline__ float step_delta(const BidirArgs &a, const __half *dt, int64_t b, int64_t h,
                                                   int64_t t0, int i, int len) {
    return i < len ? delta_of(__half2float(dt[(b * a.L + t0 + i) * a.H + h]), a.dt_bias ? a.dt_bias[h] : 0.f,
                              a.softplus)
                   : 0.f;
}

/* Δ of this thread's step, the inclusive cumsum of Δ·A over the chunk (log2
 * units) and each step's weight in the chunk's own state, into wts (Q,) fp16:
 *   forward: the decay from step j to the chunk's last step,
 *     scale = tl.exp(dA_cs_last - dA_cs_k) * dt_k  (_chunk_state_fwd_kernel)
 *   backward: the decay from step j back to the chunk's first step, exp(cum_{j-1}).
 * Returns Σ Δ·A over the chunk (past the tail too: Δ = 0 there). */
static __device__ float chunk_weights(const BidirArgs &a, int dir, int64_t b, int64_t h, int64_t t0, int len,
                                      __half *wts, float *total) {
    const int tid = threadIdx.x;
    const float d = tid < a.Q ? step_delta(a, dir == 0 ? a.dt : a.dt_b, b, h, t0, tid, len) : 0.f;
    // dA_cs = tl.cumsum(dA, axis=0) with dA = dt * A
    const float dA = d * a.A[h] * LOG2E_F;
    const float cum = block_inclusive_sum(dA);
    if (tid == a.Q - 1) *total = cum;
    __syncthreads();
    const float cum_last = *total;
    if (tid < a.Q) wts[tid] = __float2half_rn(d * exp2_approx(dir == 0 ? cum_last - cum : cum - dA));
    return cum_last;
}

/* Kernel 1's shared memory: B and x of one chunk, fp16, and the step
 * weights; row pitches +16 bytes keep ldmatrix conflict-free. */
struct StateSmem {
    int Q, Np, Pp, NS, PS;   // chunk, N and p padded to 16, row pitches
    __half *Bs;              // (Q, Np) fp16: B of the chunk (this direction's)
    __half *Xs;              // (Q, Pp) fp16: x of the chunk
    __half *wts;             // (Q,) fp16: the weight of step j in the chunk state
    uint32_t bs_a, xs_b;     // this lane's ldmatrix row addresses in Bs and Xs
};

template <bool FULL>
static __device__ StateSmem state_smem(const BidirArgs &a, unsigned char *smem) {
    StateSmem m;
    m.Q = a.Q; m.Np = FULL ? BIDIR_NMAX : a.Np; m.Pp = FULL ? BIDIR_PMAX : a.Pp;
    m.NS = m.Np + 8; m.PS = m.Pp + 8;
    m.Bs = reinterpret_cast<__half *>(smem);
    m.Xs = m.Bs + m.Q * m.NS;
    m.wts = m.Xs + m.Q * m.PS;
    const int lane = threadIdx.x % 32, q = lane / 8, r = lane % 8;
    m.bs_a = smem_addr(m.Bs) + (((q & 1) * 8 + r) * m.NS + (q >> 1) * 8) * 2;
    m.xs_b = smem_addr(m.Xs) + (((q >> 1) * 8 + r) * m.PS + (q & 1) * 8) * 2;
    return m;
}

/* A chunk state (p x N) in registers, fp32 mma accumulators of kernel 1's
 * warps (ops/ssd/ssd_mma.cuh's layout): warp w owns p-tile w % 4 and the
 * n16-blocks w / 4 + 2k (two n8-tiles each). */
constexpr int STATE_NBLK = ChunkStateBlocks<STATE_WARPS>::n;
typedef float StateTile[2 * STATE_NBLK][4];

/* f(at, v) for every element this thread holds, at = pi·N + ni its offset in
 * a (p, N) state, v its value. */
template <bool FULL, typename F>
static __device__ __forceinline__ void for_each_state_element(StateTile &st, int P, int N, int Np, F f) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, mp = warp % 4;
#pragma unroll
    for (int kk = 0; kk < 2 * STATE_NBLK; kk++) {
        const int n0 = (warp / 4 + (STATE_WARPS / 4) * (kk / 2)) * 16 + (kk % 2) * 8;
        if (!FULL && n0 >= Np) continue;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int pi = mp * 16 + lane / 4 + (e >= 2 ? 8 : 0), ni = n0 + (lane % 4) * 2 + (e & 1);
            if (pi < P && ni < N) f(pi * N + ni, st[kk][e]);  // pi·N + ni < p·N <= 8192
        }
    }
}

/* st += xᵀ·diag(wts)·B over the chunk (ops/ssd/ssd_mma.cuh). */
template <bool FULL>
static __device__ __forceinline__ void accumulate_chunk_state(StateTile &st, const StateSmem &m) {
    accumulate_chunk_state<FULL, STATE_WARPS>(st, m.xs_b, m.bs_a, m.wts, m.Q, m.NS, m.PS, m.Np, m.Pp);
}

/* x and this direction's B of chunk c into Xs, Bs (cp.async, committed). */
template <bool FULL>
static __device__ __forceinline__ void load_chunk(const BidirArgs &a, const StateSmem &m, int dir, int64_t b,
                                                  int64_t h, int64_t t0, int len) {
    const bool vec16 = a.P % 8 == 0 && a.N % 8 == 0;
    const int64_t g = h / (a.H / a.G);
    load_tile<FULL ? BIDIR_PMAX / 8 : 0>(m.Xs, m.PS, a.x + ((b * a.L + t0) * a.H + h) * a.P, a.H * a.P, 0, len,
                                         m.Q, (int)a.P, m.Pp, vec16);
    load_tile<FULL ? BIDIR_NMAX / 8 : 0>(m.Bs, m.NS, (dir == 0 ? a.B : a.B_b) + ((b * a.L + t0) * a.G + g) * a.N,
                                         a.G * a.N, 0, len, m.Q, (int)a.N, m.Np, vec16);
    asm volatile("cp.async.commit_group;");
}

/* Version 5: one block per (direction, b, h, chunk), handing the state on
 * through L2. Items go out by one ticket counter, chain position k major:
 * forward chains visit chunk k, backward chains chunk nchunks-1-k, so an
 * item's predecessor (its chain's chunk k-1) has a ticket 2·b·h smaller and
 * started before it. FULL: N and p are exactly 128 and 64. */
template <bool FULL>
__global__ void __launch_bounds__(STATE_WARPS * 32, 2) bidir_chunk_states_kernel(BidirArgs a) {
    extern __shared__ __align__(16) unsigned char smem[];
    const StateSmem m = state_smem<FULL>(a, smem);
    __shared__ int item;
    __shared__ float chunk_total;
    if (threadIdx.x == 0) item = atomicAdd(a.ticket, 1);
    __syncthreads();
    const int64_t BH = a.batch * a.H;
    const int k = (int)(item / (2 * BH));
    const int dir = (int)(item / BH % 2);
    const int64_t bh = item % BH, b = bh / a.H, h = bh % a.H, chain = dir * BH + bh;
    const int c = dir == 0 ? k : a.nchunks - 1 - k;
    const int64_t t0 = (int64_t)c * a.Q;
    const int len = (int)min((int64_t)a.Q, a.L - t0);
    const int P = (int)a.P, N = (int)a.N, PN = P * N;

    load_chunk<FULL>(a, m, dir, b, h, t0, len);
    const float cum_last = chunk_weights(a, dir, b, h, t0, len, m.wts, &chunk_total);
    asm volatile("cp.async.wait_all;");
    __syncthreads();
    StateTile st = {};
    accumulate_chunk_state<FULL>(st, m);

    /* Wait for the chain's previous chunk, store the state entering this
     * chunk (fp16, for kernel 2), hand on S_out = exp(cum_last)·S_in + S_local.
     * states = scale * states + new_states (_state_passing_fwd_kernel) */
    if (threadIdx.x == 0 && k > 0)
        while (load_acquire(a.published + chain) < k) __nanosleep(32);
    __syncthreads();
    const float *h0 = dir == 0 ? a.h0 : a.h0_b;
    const float *prev = k == 0 ? (h0 ? h0 + bh * PN : nullptr) : a.ring + (chain * 2 + ((k - 1) & 1)) * PN;
    const bool last = k == a.nchunks - 1;
    float *next = a.ring + (chain * 2 + (k & 1)) * PN;
    __half *entering = a.entering + (chain * a.nchunks + c) * PN;
    const float chunk_decay = exp2_approx(cum_last);
    for_each_state_element<FULL>(st, P, N, m.Np, [&](int at, float &v) {
        const float s_in = prev ? __ldcg(prev + at) : 0.f;
        entering[at] = __float2half_rn(s_in);
        if (!last) next[at] = chunk_decay * s_in + v;
    });
    __syncthreads();  // the block's ring writes happen before thread 0's release below
    if (threadIdx.x == 0 && !last) store_release(a.published + chain, k + 1);
}

/* Version 6: one block per chain (direction, b, h) walks all its chunks in
 * order, the running state in its mma accumulators: no ring, no flags, no
 * waiting on another block, and the state never leaves the registers but
 * as the fp16 copy kernel 2 reads. Per chunk: S_in stored, then
 * S = exp(cum_last)·S + xᵀ·diag(w)·B accumulated in place. */
template <bool FULL>
__global__ void __launch_bounds__(STATE_WARPS * 32, 2) bidir_chain_states_kernel(BidirArgs a) {
    extern __shared__ __align__(16) unsigned char smem[];
    const StateSmem m = state_smem<FULL>(a, smem);
    __shared__ float chunk_total;
    const int64_t BH = a.batch * a.H, chain = blockIdx.x;  // dir·b·h + bh
    const int dir = (int)(chain / BH);
    const int64_t bh = chain % BH, b = bh / a.H, h = bh % a.H;
    const int P = (int)a.P, N = (int)a.N, PN = P * N;
    const float *h0 = dir == 0 ? a.h0 : a.h0_b;

    StateTile st = {};  // the state entering the next chunk of this direction, fp32
    for_each_state_element<FULL>(st, P, N, m.Np, [&](int at, float &v) { v = h0 ? h0[bh * PN + at] : 0.f; });
    for (int k = 0; k < a.nchunks; k++) {
        const int c = dir == 0 ? k : a.nchunks - 1 - k;
        const int64_t t0 = (int64_t)c * a.Q;
        const int len = (int)min((int64_t)a.Q, a.L - t0);
        load_chunk<FULL>(a, m, dir, b, h, t0, len);
        const float cum_last = chunk_weights(a, dir, b, h, t0, len, m.wts, &chunk_total);
        // states = scale * states + new_states (_state_passing_fwd_kernel)
        const float chunk_decay = exp2_approx(cum_last);
        __half *entering = a.entering + (chain * a.nchunks + c) * PN;
        for_each_state_element<FULL>(st, P, N, m.Np, [&](int at, float &v) {
            entering[at] = __float2half_rn(v);
            v *= chunk_decay;
        });
        asm volatile("cp.async.wait_all;");
        __syncthreads();
        if (k + 1 < a.nchunks) accumulate_chunk_state<FULL>(st, m);
        __syncthreads();  // Xs, Bs, wts and chunk_total are free for the next chunk
    }
}

/* ========================================================================
 * Fused: kernel 2, the outputs
 * ====================================================================== */

template <bool FULL>
__global__ void __launch_bounds__(OUTPUT_WARPS * 32, 1) bidir_chunk_output_kernel(BidirArgs a) {
    extern __shared__ __align__(16) unsigned char smem[];
    const int Q = a.Q, Np = FULL ? BIDIR_NMAX : a.Np, Pp = FULL ? BIDIR_PMAX : a.Pp;
    const int NS = Np + 8, PS = Pp + 8;
    __half *Cs = reinterpret_cast<__half *>(smem);  // (Q, Np) fp16: the C rows of the direction at hand
    __half *Bs = Cs + Q * NS;                       // (Q, Np) fp16: its B
    __half *Xs = Bs + Q * NS;                       // (Q, Pp) fp16: x of the chunk
    __half *Ss = Xs + Q * PS;                       // (Pp, Np) fp16: its state entering the chunk
    float *cumf = reinterpret_cast<float *>(Ss + Pp * NS);  // (Q,) cum_j, log2 units
    float *rcum = cumf + Q;                                 // (Q,) rcum_j = Σ_{k>=j} Δ'_k·A, log2 units
    float *rowf = rcum + Q;                                 // (Q,) cum_{i-σ}: row i's forward decay end
    float *rowb = rowf + Q;                                 // (Q,) rcum_{i+σ}: row i's backward decay start
    float *dtf = rowb + Q;                                  // (Q,) Δ_j
    float *dtb = dtf + Q;                                   // (Q,) Δ'_j
    float *vdtf = dtb + Q;                                  // (Q,) Δ_j·exp(cum_e − cum_j), e = j's tile end
    float *vdtb = vdtf + Q;                                 // (Q,) Δ'_j·exp(rcum_s − rcum_j), s = j's tile start
    __shared__ float total_b;                               // Σ Δ'·A over the chunk, log2 units

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int q = lane / 8, r = lane % 8;
    const int rowA = (q & 1) * 8 + r, colA = (q >> 1) * 8, rowB = (q >> 1) * 8 + r, colB = (q & 1) * 8;
    const uint32_t cs_a = smem_addr(Cs) + (rowA * NS + colA) * 2, bs_b = smem_addr(Bs) + (rowB * NS + colB) * 2;
    const uint32_t ss_b = smem_addr(Ss) + (rowB * NS + colB) * 2, xs_a = smem_addr(Xs) + (rowA * PS + colA) * 2;
    /* Blocks (b, chunk, h), heads fastest: the heads of a group read the same B, C from L2. */
    const int64_t item = blockIdx.x;
    const int64_t h = item % a.H, c = item / a.H % a.nchunks, b = item / a.H / a.nchunks, g = h / (a.H / a.G);
    const int64_t bh = b * a.H + h, t0 = c * Q;
    const int len = (int)min((int64_t)Q, a.L - t0);
    const int hydra = a.hydra ? 1 : 0;  // σ, the shift
    const int64_t PN = a.P * a.N, BH = a.batch * a.H;

    const bool vec16 = a.P % 8 == 0 && a.N % 8 == 0;
    const int64_t ldbc = a.G * a.N;
    const __half *Bg = a.B + ((b * a.L + t0) * a.G + g) * a.N;
    /* Forward rows: row i holds C_{i-σ} (Hydra: row 0 the chunk before's last
     * row, none before t = 0, where the shifted output is 0). */
    const int cf_from = t0 == 0 ? hydra : 0;
    const __half *Cg = a.C + ((b * a.L + t0 - hydra + cf_from) * a.G + g) * a.N;
    load_tile<FULL ? BIDIR_PMAX / 8 : 0>(Xs, PS, a.x + ((b * a.L + t0) * a.H + h) * a.P, a.H * a.P, 0, len, Q,
                                         (int)a.P, Pp, vec16);
    load_tile<FULL ? BIDIR_NMAX / 8 : 0>(Bs, NS, Bg, ldbc, 0, len, Q, (int)a.N, Np, vec16);
    load_tile<FULL ? BIDIR_NMAX / 8 : 0>(Cs, NS, Cg, ldbc, cf_from, len, Q, (int)a.N, Np, vec16);
    load_tile<FULL ? BIDIR_NMAX / 8 : 0>(Ss, NS, a.entering + (bh * a.nchunks + c) * PN, a.N, 0, (int)a.P, Pp,
                                         (int)a.N, Np, vec16);
    asm volatile("cp.async.commit_group;");

    /* Δ, Δ' and their cumsums, then each row's decay ends and the per-column
     * factors of the off-diagonal tiles. */
    const float A2 = a.A[h] * LOG2E_F;
    const float df = tid < Q ? step_delta(a, a.dt, b, h, t0, tid, len) : 0.f;
    const float cf_incl = block_inclusive_sum(df * A2);
    __syncthreads();  // block_inclusive_sum's scratch is reused below
    const float db = hydra ? (tid < Q ? step_delta(a, a.dt_b, b, h, t0, tid, len) : 0.f) : df;
    const float cb_incl = hydra ? block_inclusive_sum(db * A2) : cf_incl;
    if (tid < Q) {
        cumf[tid] = cf_incl;
        dtf[tid] = df;
        dtb[tid] = db;
        if (tid == Q - 1) total_b = cb_incl;
    }
    __syncthreads();
    if (tid < Q) rcum[tid] = total_b - cb_incl + db * A2;  // Σ_{k>=j}: the total less the steps before j
    __syncthreads();
    if (tid < Q) {
        rowf[tid] = tid - hydra >= 0 ? cumf[tid - hydra] : 0.f;
        rowb[tid] = tid + hydra < Q ? rcum[tid + hydra] : 0.f;
        vdtf[tid] = df * exp2_approx(cumf[tid | 15] - cumf[tid]);
        vdtb[tid] = db * exp2_approx(rcum[tid & ~15] - rcum[tid]);
    }
    asm volatile("cp.async.wait_all;");
    __syncthreads();

    const int ntiles = Q / 16;
    const int mt = warp;                     // this warp's row tile
    const bool active = mt < ntiles && mt * 16 < len;
    const int ra = mt * 16 + lane / 4, rb = ra + 8;  // this thread's rows

    uint32_t cf[BIDIR_NMAX / 16][4];    // C rows of the row tile as A operands, all of N
    float yacc[BIDIR_PMAX / 8][4] = {};  // (16 x Pp) fp32 accumulator of the tile
    auto load_c = [&]() {
#pragma unroll
        for (int kk = 0; kk < BIDIR_NMAX / 16; kk++)
            if (FULL || kk * 16 < Np) ldsm_x4(cf[kk], cs_a + (mt * 16 * NS + kk * 16) * 2);
    };
    /* yacc += diag(exp(row_i))·C·Sᵀ, one 16-column slice of p at a time.
     * acc = tl.dot(C, prev_states) * scale_m[:, None] (_chunk_scan_fwd_kernel) */
    auto state_term = [&](const float *row) {
        const float ea = exp2_approx(row[ra]), eb = exp2_approx(row[rb]);
#pragma unroll
        for (int np = 0; np < BIDIR_PMAX / 16; np++) {
            if (!FULL && np * 16 >= Pp) continue;
            float t[2][4] = {};
#pragma unroll
            for (int kk = 0; kk < BIDIR_NMAX / 16; kk++) {
                if (!FULL && kk * 16 >= Np) continue;
                uint32_t sb[4];  // S rows p (mma n) x n (mma k)
                ldsm_x4(sb, ss_b + (np * 16 * NS + kk * 16) * 2);
                mma_16816(t[0], cf[kk], sb[0], sb[1]);
                mma_16816(t[1], cf[kk], sb[2], sb[3]);
            }
#pragma unroll
            for (int u = 0; u < 2; u++) {
                yacc[2 * np + u][0] += ea * t[u][0]; yacc[2 * np + u][1] += ea * t[u][1];
                yacc[2 * np + u][2] += eb * t[u][2]; yacc[2 * np + u][3] += eb * t[u][3];
            }
        }
    };
    /* yacc += M(row tile mt, column tile jt)·x_jt, M's entries from this tile
     * of C·Bᵀ: below the diagonal tile the forward decay, factored through
     * the column tile's last step e, exp(row_i − cum_e)·exp(cum_e − cum_j);
     * above it the backward one through the tile's first step s; on it each
     * entry as the mask says (fwd: j <= i−σ, bwd: j >= i+σ).
     * cb = tl.dot(C, B) * tl.exp(dA_cs_m[:, None] - dA_cs_k[None, :]) * dt_k
     * cb = tl.where(offs_m[:, None] >= k + offs_k[None, :], cb, 0.0); acc += tl.dot(cb, x) */
    auto tile = [&](int jt, bool fwd, bool bwd) {
        const int j0 = jt * 16;
        float p[8];  // C·Bᵀ, then M: columns j0..7 then j0+8..15; entries: row a (0,1), row b (2,3)
        cb_tile<FULL>(p, cf, bs_b, j0, NS, Np);
        const int jc = j0 + (lane % 4) * 2;  // this thread's columns jc, jc+1, jc+8, jc+9
        if (jt != mt) {
            const float *row = jt < mt ? rowf : rowb, *v = jt < mt ? vdtf : vdtb;
            const float end = jt < mt ? cumf[j0 + 15] : rcum[j0];
            const float ua = exp2_approx(row[ra] - end), ub = exp2_approx(row[rb] - end);
#pragma unroll
            for (int e = 0; e < 8; e++) p[e] *= ((e & 2) ? ub : ua) * v[jc + (e >= 4 ? 8 : 0) + (e & 1)];
        } else {
#pragma unroll
            for (int e = 0; e < 8; e++) {
                const int j = jc + (e >= 4 ? 8 : 0) + (e & 1), i = (e & 2) ? rb : ra;
                float m = 0.f;
                if (fwd && j <= i - hydra) m += exp2_approx(rowf[i] - cumf[j]) * dtf[j];
                if (bwd && j >= i + hydra) m += exp2_approx(rowb[i] - rcum[j]) * dtb[j];
                p[e] *= m;
            }
        }
        px_tile<FULL>(yacc, p, xs_a, j0, PS, Pp);
    };

    /* The forward direction: its state term, the tiles below the diagonal,
     * and the diagonal tile (default form: both triangles of it). */
    if (active) {
        load_c();
        state_term(rowf);
        for (int jt = 0; jt < mt; jt++) tile(jt, true, false);
        tile(mt, true, !hydra);
    }
    /* The backward direction's state (Hydra: and its own B', and C' one row
     * late, none at or past t = L) replace the forward ones. */
    __syncthreads();
    if (hydra) {
        const int cb_to = (int)min((int64_t)len, a.L - t0 - 1);
        load_tile<FULL ? BIDIR_NMAX / 8 : 0>(Bs, NS, a.B_b + ((b * a.L + t0) * a.G + g) * a.N, ldbc, 0, len, Q,
                                             (int)a.N, Np, vec16);
        load_tile<FULL ? BIDIR_NMAX / 8 : 0>(Cs, NS, a.C_b + ((b * a.L + t0 + 1) * a.G + g) * a.N, ldbc, 0, cb_to, Q,
                                             (int)a.N, Np, vec16);
    }
    load_tile<FULL ? BIDIR_NMAX / 8 : 0>(Ss, NS, a.entering + ((BH + bh) * a.nchunks + c) * PN, a.N, 0, (int)a.P, Pp,
                                         (int)a.N, Np, vec16);
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_all;");
    __syncthreads();
    if (!active) return;
    if (hydra) load_c();
    state_term(rowb);
    if (hydra) tile(mt, false, true);
    for (int jt = mt + 1; jt < ntiles; jt++) tile(jt, false, true);

    /* y = acc + D x, then y *= silu(z): columns pi, pi + 1 of rows ra, rb.
     * y = y_fw + y_bw + x_og * D */
    store_y_tile<FULL>(yacc, ra, len, a.y, a.z, ((b * a.L + t0) * a.H + h) * a.P, a.H * a.P, Xs, PS, a.D,
                       a.D_per_channel, h, a.P);
}

/* ---- host side of the fused pair ---- */

static size_t states_smem_bytes(const SsdShape *s) {
    const int Q = (int)s->chunk, Np = round16(s->dstate), Pp = round16(s->headdim);
    return (size_t)(Q * (Np + 8) + Q * (Pp + 8) + Q) * 2;
}

static size_t output_smem_bytes(const SsdShape *s) {
    const int Q = (int)s->chunk, Np = round16(s->dstate), Pp = round16(s->headdim);
    return (size_t)(2 * Q * (Np + 8) + Q * (Pp + 8) + Pp * (Np + 8)) * 2 + (size_t)8 * Q * sizeof(float);
}

extern "C" const char *bidir_fused_mma_unsupported(const BidirShape *bs) {
    const SsdShape *s = &bs->s;
    if (s->dstate > BIDIR_NMAX) return "register tiles hold N <= 128";
    if (s->headdim > BIDIR_PMAX) return "register tiles hold p <= 64";
    int dev = 0, optin = 227 * 1024;  // sm_90's opt-in limit, when no device answers
    if (cudaGetDevice(&dev) == cudaSuccess)
        cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    else
        (void)cudaGetLastError();
    if (output_smem_bytes(s) > (size_t)optin) return "chunk x (2N + p) does not fit in shared memory";
    if (2 * ssd_n_chunks(s) * s->batch * s->heads > INT_MAX) return "more than 2^31 (direction, chunk, b, h) items";
    return NULL;
}

/* The workspace: flags and ticket, the ring (version 5 only), the entering states. */
static size_t counters_bytes(const SsdShape *s) { return align256((size_t)(2 * s->batch * s->heads + 1) * sizeof(int)); }
static size_t ring_bytes(const SsdShape *s) { return align256((size_t)2 * s->batch * s->heads * 2 * s->headdim * s->dstate * sizeof(float)); }
static size_t entering_bytes(const SsdShape *s) { return (size_t)2 * ssd_n_state(s) * ssd_n_chunks(s) * sizeof(__half); }

extern "C" size_t bidir_fused_mma_workspace(const BidirShape *bs) {
    return counters_bytes(&bs->s) + ring_bytes(&bs->s) + entering_bytes(&bs->s);
}

extern "C" size_t bidir_fused_chain_workspace(const BidirShape *bs) { return entering_bytes(&bs->s); }

static BidirArgs fused_args(const BidirTensors *t) {
    const SsdShape *s = &t->s.s;
    const bool hydra = t->s.hydra;
    BidirArgs a = {};
    a.x = static_cast<const __half *>(t->x); a.z = static_cast<const __half *>(t->z);
    a.dt = static_cast<const __half *>(t->dt);
    a.B = static_cast<const __half *>(t->B); a.C = static_cast<const __half *>(t->C);
    a.dt_b = static_cast<const __half *>(hydra ? t->dt_bwd : t->dt);
    a.B_b = static_cast<const __half *>(hydra ? t->B_bwd : t->B);
    a.C_b = static_cast<const __half *>(hydra ? t->C_bwd : t->C);
    a.A = t->A; a.D = t->D; a.dt_bias = t->dt_bias; a.h0 = t->initial_states; a.h0_b = t->initial_states_bwd;
    a.y = static_cast<__half *>(t->y);
    a.batch = s->batch; a.L = s->seqlen; a.H = s->heads; a.P = s->headdim; a.G = s->groups; a.N = s->dstate;
    a.Q = (int)s->chunk; a.nchunks = (int)ssd_n_chunks(s);
    a.Np = round16(s->dstate); a.Pp = round16(s->headdim);
    a.softplus = s->softplus; a.D_per_channel = s->D_per_channel; a.hydra = hydra;
    return a;
}

/* The FULL kernels' shape: N and p exactly 128 and 64, so no tile column is past p. */
static bool full_tile(const BidirArgs &a) { return a.N == BIDIR_NMAX && a.P == BIDIR_PMAX; }

/* Kernel 2, after either kernel 1. */
static void launch_output(const BidirArgs &a, const SsdShape *s) {
    void (*output)(BidirArgs) = full_tile(a) ? bidir_chunk_output_kernel<true> : bidir_chunk_output_kernel<false>;
    const size_t smem = output_smem_bytes(s);
    static size_t allowed[2] = {0, 0};  // the opt-in already asked for the general and the FULL kernel
    allow_smem(output, smem, &allowed[full_tile(a)]);
    output<<<(unsigned)((int64_t)a.nchunks * s->batch * s->heads), OUTPUT_WARPS * 32, smem>>>(a);
    cuda_check_launch();
}

extern "C" void bidir_fused_mma(const BidirTensors *t, void *workspace) {
    const SsdShape *s = &t->s.s;
    BidirArgs a = fused_args(t);
    char *ws = static_cast<char *>(workspace);
    a.published = reinterpret_cast<int *>(ws);
    a.ticket = a.published + 2 * s->batch * s->heads;
    a.ring = reinterpret_cast<float *>(ws + counters_bytes(s));
    a.entering = reinterpret_cast<__half *>(ws + counters_bytes(s) + ring_bytes(s));
    void (*states)(BidirArgs) = full_tile(a) ? bidir_chunk_states_kernel<true> : bidir_chunk_states_kernel<false>;
    const size_t smem = states_smem_bytes(s);
    static size_t allowed[2] = {0, 0};  // as launch_output's, for the states kernels
    allow_smem(states, smem, &allowed[full_tile(a)]);
    cuda_check(cudaMemsetAsync(workspace, 0, counters_bytes(s)));
    states<<<(unsigned)(2 * (int64_t)a.nchunks * s->batch * s->heads), STATE_WARPS * 32, smem>>>(a);
    cuda_check_launch();
    launch_output(a, s);
}

extern "C" void bidir_fused_mma_chain(const BidirTensors *t, void *workspace) {
    const SsdShape *s = &t->s.s;
    BidirArgs a = fused_args(t);
    a.entering = static_cast<__half *>(workspace);
    void (*states)(BidirArgs) = full_tile(a) ? bidir_chain_states_kernel<true> : bidir_chain_states_kernel<false>;
    const size_t smem = states_smem_bytes(s);
    static size_t allowed[2] = {0, 0};  // as launch_output's, for the chain's states kernels
    allow_smem(states, smem, &allowed[full_tile(a)]);
    states<<<(unsigned)(2 * s->batch * s->heads), STATE_WARPS * 32, smem>>>(a);
    cuda_check_launch();
    launch_output(a, s);
}
