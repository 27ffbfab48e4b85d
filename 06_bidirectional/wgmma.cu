/* 06_bidirectional, GPU, versions 7-8: version 6's pair of kernels on
 * Hopper's warpgroup matrix product (sm_90a), built from the pieces of 05's
 * versions 12-15 (ops/ssd/ssd_wgmma.cuh).
 *   7 bidir_wgmma       fp16 I/O
 *   8 bidir_wgmma_bf16  version 7 in bf16 (the dtype Mamba-2 checkpoints run in)
 *
 * What changes from version 6 (kernels.cu), kernel by kernel:
 *   1 states  still one block per chain (direction, b, h) walking its chunks,
 *             the running state in accumulators; now two warpgroups, each
 *             owning 64 of N, add xᵀ·diag(w)·B with wgmma (x read by the
 *             tensor cores from shared memory), in steps of 64 whose x and B
 *             come by bulk tensor copies (TMA) into a ring of three stages,
 *             three steps ahead of their use, dt one step ahead. The state
 *             entering each chunk is stored transposed, (N, p) rows, as
 *             16-bit pairs straight from the accumulators, whose adjacent
 *             columns are adjacent p.
 *   2 output  per (b, chunk, h), chunks of 128 (64 where the problem's chunk
 *             is 64 or less: the outputs do not depend on the chunk), two
 *             warpgroups of 64 rows; x, B, C and the entering state come by
 *             TMA into 128-byte-swizzled tiles, and every product is a wgmma:
 *               y_i = exp(rowf_i)·C_i·S_fᵀ + exp(rowb_i)·C'_i·S_bᵀ
 *                   + Σ_j M_ij·x_j + D·x_i,  then × silu(z_i)
 *             Warpgroup w takes column tile 0..w−1 forward (lower triangle),
 *             w (the diagonal: both triangles in the default form) and
 *             w+1.. backward: at chunk 128 each warpgroup does two tiles.
 *             The forward state term is issued first; once both warpgroups
 *             have read S_f, S_b replaces it while the tiles run (Hydra:
 *             B', C' one row late and S_b replace B, C and S_f after the
 *             forward tiles, the backward ones then follow).
 *
 * FLOPs per (b, chunk of 128, h) at p 64, N 128: states 2 × 2QpN = 4.2 M
 * (kernel 1), state terms 2 × 2QpN = 4.2 M, C·Bᵀ whole 2Q²N = 4.2 M (Hydra:
 * the diagonal tiles twice, 5.2 M), P·x 2Q²p = 2.1 M: 14.7 M, 29.4 M per
 * 256 steps against version 6's 41.9 M at chunk 256 (the Q×Q products grow
 * as Q²).
 * Bytes (fp16, S3 b 8, L 8192): x 3× (kernel 1 per direction, kernel 2), B
 * 3×, C once, the entering states (2·b·h·chunks·N·p, 537 MB at chunk 128)
 * written once and read once, y once: about 2.2 GB (version 6: 1.7).
 *
 * What should bound them: latency. Kernel 1 is a chain a block, each 64-step
 * step a block scan, barriers and a product that waits for itself; kernel 2
 * runs two 8-warp blocks an SM whose products wait one after another. Each
 * entering state leaves kernel 1 by stmatrix into shared memory and one bulk
 * copy a warpgroup, whole rows: stores straight from the accumulators wrote
 * half of each sector. profile.md ("Where the time goes in version 7") has
 * the profiles.
 *
 * Limits: N <= 128 (two 64-column slabs), p <= 64 (one), p and N multiples
 * of 8 (the copies step between rows in 16 bytes), fewer than 2^31 work
 * items and steps. */
#include "kernels.h"

#include <limits.h>
#include <string.h>

#include <type_traits>

#include "cuda_check.h"
#include "launch.cuh"
#include "ssd_wgmma.cuh"

/* 05's arguments (x, dt, B, C, z, A, D, dt_bias, h0 and y: the forward
 * direction's inputs and the output) and what the backward direction adds. */
struct BidirWgmmaArgs {
    WgmmaArgs s;
    const void *dt_b;  // (b, L, h) 16-bit: the backward direction's dt (default form: dt)
    const float *h0_b; // (b, h, p, N) fp32: the backward direction's initial state, NULL without
    void *entering;    // (2, b, h, chunks, N, p) 16-bit: the state entering each chunk, per direction, transposed
    bool hydra;
};

/* The bulk tensor copies' maps, boxes 64 elements (128 bytes) wide. */
struct BidirMaps {
    CUtensorMap x;         // (b, L, h, p), box: Q steps of one head
    CUtensorMap B, C;      // (b, L, g, N), box: Q steps x 64 of N; the forward direction's
    CUtensorMap B_b, C_b;  // the backward direction's (default form: B and C again)
    CUtensorMap entering;  // (2·b·h, chunks, N, p), box: 64 rows of N of one chunk
    CUtensorMap x_step, B_step, B_b_step;  // kernel 1's: x, B and B' in boxes of one step of 64
    CUtensorMap y;         // (b, L, h, p), box: 64 steps of one head
};

/* ========================================================================
 * Kernel 1: the chunk states of both directions, one block per chain
 * ====================================================================== */

/* Kernel 1 walks its chain in steps of 64 (kernel 2's chunk is 1 or 2 of
 * them) and keeps kStages steps of x and B in flight. */
constexpr int kStep = 64, kStages = 3;

/* The state entering chunk c, from warpgroup wg's accumulators (rows n of
 * slab wg, columns p), to its (N, p) rows in device memory: stmatrix into a
 * swizzled 64 x 64 image in shared memory, then one bulk tensor copy out
 * (the map clips rows past N and columns past p). The image is written again
 * only once the last copy has read it. Every thread of the block calls it. */
template <typename T, int SLABS>
static __device__ __forceinline__ void store_entering(unsigned char *image, const float (&st)[32],
                                                      const CUtensorMap *map, int c, int chain) {
    const int wg = thread_index() / 128, wq = (thread_index() / 32) % 4, lane = thread_index() % 32;
    unsigned char *slab = image + wg * 64 * 128;
    const bool owner = wg < SLABS;  // this warpgroup holds rows of N (at SLABS 1 the second does not)
    if (owner && thread_index() % 128 == 0) tma_store_wait<true>();
    __syncthreads();  // the image is free
    if (owner) {
        /* Matrix m of store i: column block 2i + m / 2, rows 8·(m % 2).. of the warp's 16. */
#pragma unroll
        for (int i = 0; i < 4; i++) {
            uint32_t r[4];
#pragma unroll
            for (int m = 0; m < 4; m++) {
                const int e = 4 * (2 * i + m / 2) + 2 * (m % 2);
                r[m] = pack16<T>(st[e], st[e + 1]);
            }
            const int m = lane / 8;
            stsm_x4(smem_addr(slab + sw128_offset(wq * 16 + 8 * (m % 2) + lane % 8, 8 * (2 * i + m / 2))), r);
        }
        fence_async_smem();
    }
    __syncthreads();  // the image is written
    if (owner && thread_index() % 128 == 0) tma_store_4d(map, slab, 0, 64 * wg, c, chain);
}

/* st += S_localᵀ (n x p) = Σ_j (w_j B_j)ᵀ x_j over one step of 64, for
 * warpgroup wg's 64 rows of n: 05's state product (ssd_wgmma.cuh) with one
 * slab a warpgroup. A = Bᵀ by ldmatrix.trans, scaled by w_j in registers;
 * x read MN-major by the tensor cores. */
template <typename T>
static __device__ __forceinline__ void step_state_product(float (&st)[32], uint32_t bs, uint32_t xs, const T *wts) {
    const int wg = thread_index() / 128, wq = (thread_index() / 32) % 4, lane = thread_index() % 32;
    const int t4 = lane % 4, q = lane / 8, r8 = lane % 8;  // ldmatrix: lane gives row r8 of matrix q
    uint32_t af[kStep / 16][4];  // (w ∘ B)ᵀ fragments: rows n, columns j
#pragma unroll
    for (int kk = 0; kk < kStep / 16; kk++) {
        const int j = kk * 16 + (q >> 1) * 8 + r8, col = 16 * wq + (q & 1) * 8;
        ldsm_x4_trans(af[kk], bs + wg * kStep * 128 + sw128_offset(j, col));
        const uint32_t w_lo = *reinterpret_cast<const uint32_t *>(wts + kk * 16 + t4 * 2);
        const uint32_t w_hi = *reinterpret_cast<const uint32_t *>(wts + kk * 16 + 8 + t4 * 2);
        af[kk][0] = mul16<T>(af[kk][0], w_lo);
        af[kk][1] = mul16<T>(af[kk][1], w_lo);
        af[kk][2] = mul16<T>(af[kk][2], w_hi);
        af[kk][3] = mul16<T>(af[kk][3], w_hi);
    }
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kStep / 16; kk++) wgmma_64x64_rs<T, 1>(st, af[kk], sw128_desc(xs + kk * 2048), 1);
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_touch(st);
}

/* Two warpgroups, warpgroup wg owning rows 64·wg.. of N (SLABS: N rounded up
 * to 64, over 64; at 1 the second idles). R: steps a chunk of kernel 2.
 * Shared memory: kStages stages of x (64, 64) and B (64, 64·SLABS), the
 * image of the entering state (64·SLABS, 64), all swizzled, then the step
 * weights (64,) 16-bit. */
template <typename T, int SLABS, int R>
__global__ void __launch_bounds__(256, 2) bidir_wgmma_states_kernel(BidirWgmmaArgs a, const __grid_constant__ BidirMaps maps) {
    constexpr int kStage = (1 + SLABS) * kStep * 128;
    extern __shared__ unsigned char smem_raw[];
    /* Swizzled tiles need 1024-byte alignment: the launcher asks for 1 KiB more. */
    unsigned char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    unsigned char *image = smem + kStages * kStage;             // (64·SLABS, 64) 16-bit: an entering state, rows n
    T *wts = reinterpret_cast<T *>(image + SLABS * 64 * 128);  // (64,) the weight of step j in the step's own state
    __shared__ alignas(8) uint64_t landed[kStages];           // stage s's x and B are in
    __shared__ float step_total;                               // Σ Δ·A over the step, log2 units

    const int tid = threadIdx.x;
    const int64_t BH = a.s.batch * a.s.H, chain = blockIdx.x;  // direction·b·h + bh
    const int dir = (int)(chain / BH);
    const int64_t bh = chain % BH, b = bh / a.s.H, h = bh % a.s.H, g = h / (a.s.H / a.s.G);
    const int nchunks = a.s.nchunks, nsteps = (int)ceil_div(a.s.L, kStep), P = (int)a.s.P, N = (int)a.s.N;
    /* The steps outside the chain's last chunk (the forward chain's last, the
     * backward chain's first): the last chunk's own state is never needed. */
    const int nwork = dir == 0 ? (nchunks - 1) * R : nsteps - R;
    const CUtensorMap *Bmap = dir == 0 ? &maps.B_step : &maps.B_b_step;
    const T *dt = static_cast<const T *>(dir == 0 ? a.s.dt : a.dt_b);
    /* The forward chain visits steps 0, 1, ..; the backward one the last first. */
    auto step_of = [&](int k) { return dir == 0 ? k : nsteps - 1 - k; };
    /* Thread 0: x and B of the chain's k-th step into stage k % kStages. */
    auto issue = [&](int k) {
        unsigned char *stage = smem + (k % kStages) * kStage;
        uint64_t *bar = &landed[k % kStages];
        const int t0 = step_of(k) * kStep;
        mbar_arrive_expect_tx(bar, kStage);
        tma_load_4d(stage, &maps.x_step, bar, 0, (int)h, t0, (int)b);
#pragma unroll
        for (int sl = 0; sl < SLABS; sl++) tma_load_4d(stage + (1 + sl) * kStep * 128, Bmap, bar, 64 * sl, (int)g, t0, (int)b);
    };
    if (tid == 0) {
#pragma unroll
        for (int i = 0; i < kStages; i++) mbar_init(&landed[i], 1);
    }
    __syncthreads();
    if (tid == 0)
        for (int k = 0; k < kStages && k < nwork; k++) issue(k);

    float st[32];  // the chain's running state, fp32: rows n of this warpgroup's slab, columns p
    {
        const float *h0 = dir == 0 ? a.s.h0 : a.h0_b;
#pragma unroll
        for (int e = 0; e < 32; e++) {
            int pi, ni;
            frag_pn(tid / 128, e, &pi, &ni);
            st[e] = h0 && pi < P && ni < N ? h0[(bh * P + pi) * N + ni] : 0.f;
        }
    }
    const float A2 = a.s.A[h] * LOG2E_F, bias = a.s.dt_bias ? a.s.dt_bias[h] : 0.f;
    /* dt of this thread's step in the chain's k-th step, loaded a step ahead. */
    auto dt_raw = [&](int k) {
        const int64_t t = (int64_t)step_of(k) * kStep + tid;
        return k < nwork && tid < kStep && t < a.s.L ? to_float(dt[(b * a.s.L + t) * a.s.H + h]) : 0.f;
    };
    float dt_next = dt_raw(0);
    for (int k = 0; k < nwork; k++) {
        const int s = step_of(k);
        /* A chunk starts here in the chain's order: the forward chain at its
         * first step, the backward one at its last. */
        if (dir == 0 ? s % R == 0 : s % R == R - 1 || s == nsteps - 1)
            store_entering<T, SLABS>(image, st, &maps.entering, s / R, (int)chain);
        const int64_t t0 = (int64_t)s * kStep;
        const int len = (int)min((int64_t)kStep, a.s.L - t0);
        const float d = tid < len ? delta_of(dt_next, bias, a.s.softplus) : 0.f;
        dt_next = dt_raw(k + 1);
        // dA_cs = tl.cumsum(dA, axis=0) with dA = dt * A
        const float dA = d * A2, cum = block_inclusive_sum(dA);
        if (tid == kStep - 1) step_total = cum;
        __syncthreads();
        const float cum_last = step_total;
        /* forward: scale = tl.exp(dA_cs_last - dA_cs_k) * dt_k (_chunk_state_fwd_kernel);
         * backward: the decay from step j back to the step's first, exp(cum_{j-1}) */
        if (tid < kStep) wts[tid] = from_float<T>(d * exp2_approx(dir == 0 ? cum_last - cum : cum - dA));
        // states = scale * states + new_states (_state_passing_fwd_kernel)
        const float decay = exp2_approx(cum_last);
#pragma unroll
        for (int e = 0; e < 32; e++) st[e] *= decay;
        __syncthreads();  // the weights are in
        mbar_wait(&landed[k % kStages], (k / kStages) & 1);
        unsigned char *stage = smem + (k % kStages) * kStage;
        if (tid / 128 < SLABS) step_state_product<T>(st, smem_addr(stage + kStep * 128), smem_addr(stage), wts);
        __syncthreads();  // every product has read the stage and the weights
        if (tid == 0 && k + kStages < nwork) issue(k + kStages);
    }
    store_entering<T, SLABS>(image, st, &maps.entering, dir == 0 ? nchunks - 1 : 0, (int)chain);
    if (tid % 128 == 0 && tid / 128 < SLABS) tma_store_wait<false>();  // the copies are out before the block's memory goes
}

/* ========================================================================
 * Kernel 2: the outputs, per (b, chunk, h)
 * ====================================================================== */

/* acc = C·Sᵀ over this warpgroup's 64 rows, waited for: C K-major, the state
 * (rows n, columns p) MN-major.  acc = tl.dot(C, prev_states) (_chunk_scan_fwd_kernel) */
template <typename T, int NWG, int SLABS>
static __device__ __forceinline__ void state_term(float (&acc)[32], uint32_t cs, uint32_t ss) {
    constexpr int Q = 64 * NWG;
    const int wg = thread_index() / 128;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < SLABS * 4; kk++) {
        const uint32_t at = (kk / 4) * Q * 128 + wg * 64 * 128 + (kk % 4) * 32;
        wgmma_64x64_ss<T, 1>(acc, sw128_desc(cs + at), sw128_desc(ss + kk * 2048), kk > 0);
    }
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_touch(acc);
}

/* The chunk's decays, per step j (log2 units): Δ_j and Δ'_j (the backward
 * direction's: default form Δ), cumf_j = Σ_{k<=j} Δ_k·A, rcum_j = Σ_{k>=j} Δ'_k·A,
 * each row's decay ends rowf_i = cumf_{i−σ}, rowb_i = rcum_{i+σ} (σ: Hydra's
 * shift), and the column factors of the off-diagonal tiles, vdtf_j =
 * Δ_j·exp(cumf_e − cumf_j), vdtb_j = Δ'_j·exp(rcum_s − rcum_j) (e, s: the last and
 * first step of j's 64-step tile). Array k of them starts at k·Q floats. */
enum { DTF, DTB, CUMF, RCUM, ROWF, ROWB, VDTF, VDTB, NDECAYS };  // (Q,) fp32 each, in this order

/* One 64 x 64 tile of M (row tile wg, column tile ct) times x, in two
 * pieces of 32 columns (16 accumulators fewer live, as 05's version 14):
 * CB = C·Bᵀ, P = CB ∘ M's entries, acc += P·x. Below the diagonal tile the
 * forward decay, factored through the column tile's last step e,
 * exp(rowf_i − cumf_e)·exp(cumf_e − cumf_j); above it the backward one
 * through the tile's first step s; on it each entry as the masks say
 * (forward j <= i − σ, backward j >= i + σ).
 * cb = tl.dot(C, B) * tl.exp(dA_cs_m[:, None] - dA_cs_k[None, :]) * dt_k
 * cb = tl.where(offs_m[:, None] >= k + offs_k[None, :], cb, 0.0); acc += tl.dot(cb, x) */
template <typename T, int NWG, int SLABS>
static __device__ __forceinline__ void bidir_tile(float (&yacc)[32], uint32_t cs, uint32_t bs, uint32_t xs, int ct,
                                                  bool fwd, bool bwd, int sigma, const float *dec) {
    constexpr int Q = 64 * NWG;
    const float *rowf = dec + ROWF * Q, *rowb = dec + ROWB * Q, *cumf = dec + CUMF * Q, *rcum = dec + RCUM * Q;
    const int wg = thread_index() / 128, wq = (thread_index() / 32) % 4, lane = thread_index() % 32, t4 = lane % 4;
    const int row0 = wg * 64 + wq * 16 + lane / 4;  // this thread's rows: row0 and row0 + 8
#pragma unroll
    for (int piece = 0; piece < 2; piece++) {
        const int c0 = ct * 64 + piece * 32;  // the piece's first column
        float s[16];
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < SLABS * 4; kk++) {
            const uint32_t at = (kk / 4) * Q * 128 + wg * 64 * 128 + (kk % 4) * 32;
            const uint32_t bt = (kk / 4) * Q * 128 + c0 * 128 + (kk % 4) * 32;
            wgmma_64x32_ss<T>(s, sw128_desc(cs + at), sw128_desc(bs + bt), kk > 0);
        }
        wgmma_commit();
        wgmma_wait<0>();
        wgmma_touch(s);
        uint32_t pf[2][4];  // P as 16-bit A fragments, k-steps of 16 columns
        if (ct != wg) {
            const bool lower = ct < wg;
            const float *row = lower ? rowf : rowb, *v = dec + (lower ? VDTF : VDTB) * Q;
            const float end = lower ? cumf[ct * 64 + 63] : rcum[ct * 64];
            const float ua = exp2_approx(row[row0] - end), ub = exp2_approx(row[row0 + 8] - end);
#pragma unroll
            for (int e = 0; e < 16; e += 2) {
                const int j = c0 + (e / 4) * 8 + t4 * 2;
                const float u = (e & 2) ? ub : ua;
                pf[e / 8][(e % 8) / 2] = pack16<T>(s[e] * u * v[j], s[e + 1] * u * v[j + 1]);
            }
        } else {
#pragma unroll
            for (int e = 0; e < 16; e += 2) {
                const int i = row0 + (e & 2) * 4;
                float p[2];
#pragma unroll
                for (int u = 0; u < 2; u++) {
                    const int j = c0 + (e / 4) * 8 + t4 * 2 + u;
                    float m = 0.f;
                    if (fwd && j <= i - sigma) m += exp2_approx(rowf[i] - cumf[j]) * dec[DTF * Q + j];
                    if (bwd && j >= i + sigma) m += exp2_approx(rowb[i] - rcum[j]) * dec[DTB * Q + j];
                    p[u] = s[e + u] * m;
                }
                pf[e / 8][(e % 8) / 2] = pack16<T>(p[0], p[1]);
            }
        }
        wgmma_fence();
#pragma unroll
        for (int kj = 0; kj < 2; kj++) wgmma_64x64_rs<T, 1>(yacc, pf[kj], sw128_desc(xs + (c0 / 16 + kj) * 2048), 1);
        wgmma_commit();
        wgmma_wait<0>();
        wgmma_touch(yacc);
    }
}

/* yacc += exp(row_i)·t: a state term, rows row0 and row0 + 8. */
static __device__ __forceinline__ void add_scaled_rows(float (&yacc)[32], const float (&t)[32], const float *row) {
    const int row0 = (thread_index() / 128) * 64 + ((thread_index() / 32) % 4) * 16 + (thread_index() % 32) / 4;
    const float ea = exp2_approx(row[row0]), eb = exp2_approx(row[row0 + 8]);
#pragma unroll
    for (int e = 0; e < 32; e++) yacc[e] += ((e & 2) ? eb : ea) * t[e];
}

/* Shared memory: x (Q, 64), then y in its place; B and C (Q, 64·SLABS); the
 * entering state (64·SLABS, 64), rows n; all swizzled; then the decays. */
template <typename T, int NWG, int SLABS>
__global__ void __launch_bounds__(NWG * 128, NWG == 2 ? 2 : 3)
    bidir_wgmma_output_kernel(BidirWgmmaArgs a, const __grid_constant__ BidirMaps maps) {
    constexpr int Q = 64 * NWG, kTile = Q * 128, kState = SLABS * 64 * 128;
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    unsigned char *Xs = smem;                   // (Q, 64) 16-bit: x of the chunk, then y
    unsigned char *Bs = Xs + kTile;             // (Q, 64·SLABS): this direction's B
    unsigned char *Cs = Bs + SLABS * kTile;     // (Q, 64·SLABS): this direction's C rows (Hydra: shifted)
    unsigned char *Ss = Cs + SLABS * kTile;     // (64·SLABS, 64): this direction's entering state, rows n
    float *dec = reinterpret_cast<float *>(Ss + kState);  // (NDECAYS, Q) fp32: the chunk's decays
    __shared__ alignas(8) uint64_t landed;  // phase 0: x, B, C, S_f; phase 1: S_b (Hydra: and B', C')
    __shared__ float total_b;               // Σ Δ'·A over the chunk, log2 units

    const int tid = threadIdx.x, wg = tid / 128;
    /* Blocks (b, chunk, h), heads fastest: the heads of a group read the same
     * B, C from L2. Fewer than 2^31 items (the launcher's check). */
    const unsigned item = blockIdx.x, H = (unsigned)a.s.H;
    const int64_t h = item % H, c = item / H % (unsigned)a.s.nchunks, b = item / H / (unsigned)a.s.nchunks;
    const int64_t g = h / (a.s.H / a.s.G), bh = b * a.s.H + h, BH = a.s.batch * a.s.H;
    const int64_t t0 = c * Q;
    const int len = (int)min((int64_t)Q, a.s.L - t0);
    const int sigma = a.hydra ? 1 : 0;
    const uint32_t xs = smem_addr(Xs), bs = smem_addr(Bs), cs = smem_addr(Cs), ss = smem_addr(Ss);

    if (tid == 0) mbar_init(&landed, 1);
    __syncthreads();
    if (tid == 0) {
        /* Forward rows: row i holds C_{i−σ} (Hydra: row 0 the step before the
         * chunk, a zero row before t = 0, where the shifted output is 0). */
        mbar_arrive_expect_tx(&landed, (1 + 2 * SLABS) * kTile + kState);
        tma_load_4d(Xs, &maps.x, &landed, 0, (int)h, (int)t0, (int)b);
#pragma unroll
        for (int sl = 0; sl < SLABS; sl++) {
            tma_load_4d(Bs + sl * kTile, &maps.B, &landed, 64 * sl, (int)g, (int)t0, (int)b);
            tma_load_4d(Cs + sl * kTile, &maps.C, &landed, 64 * sl, (int)g, (int)(t0 - sigma), (int)b);
        }
#pragma unroll
        for (int sl = 0; sl < SLABS; sl++) tma_load_4d(Ss + sl * 64 * 128, &maps.entering, &landed, 0, 64 * sl, (int)c, (int)bh);
    }

    /* The decays, while the copies fly. */
    {
        const float A2 = a.s.A[h] * LOG2E_F, bias = a.s.dt_bias ? a.s.dt_bias[h] : 0.f;
        const int64_t at = (b * a.s.L + t0 + tid) * a.s.H + h;  // dt[b, t0 + tid, h]
        const float df = tid < len ? delta_of(to_float(static_cast<const T *>(a.s.dt)[at]), bias, a.s.softplus) : 0.f;
        const float cf_incl = block_inclusive_sum(df * A2);
        __syncthreads();  // block_inclusive_sum's scratch is reused below
        const float db = !a.hydra ? df
                         : tid < len ? delta_of(to_float(static_cast<const T *>(a.dt_b)[at]), bias, a.s.softplus)
                                     : 0.f;
        const float cb_incl = a.hydra ? block_inclusive_sum(db * A2) : cf_incl;
        if (tid < Q) {
            dec[CUMF * Q + tid] = cf_incl;
            dec[DTF * Q + tid] = df;
            dec[DTB * Q + tid] = db;
            if (tid == Q - 1) total_b = cb_incl;
        }
        __syncthreads();
        // Σ_{k>=j}: the total less the steps before j
        if (tid < Q) dec[RCUM * Q + tid] = total_b - cb_incl + db * A2;
        __syncthreads();
        if (tid < Q) {
            const float *cumf = dec + CUMF * Q, *rcum = dec + RCUM * Q;
            dec[ROWF * Q + tid] = tid - sigma >= 0 ? cumf[tid - sigma] : 0.f;
            dec[ROWB * Q + tid] = tid + sigma < Q ? rcum[tid + sigma] : 0.f;
            dec[VDTF * Q + tid] = df * exp2_approx(cumf[tid | 63] - cumf[tid]);
            dec[VDTB * Q + tid] = db * exp2_approx(rcum[tid & ~63] - rcum[tid]);
        }
        __syncthreads();
    }
    mbar_wait(&landed, 0);

    /* The forward direction: its state term, the tiles below the diagonal and
     * the diagonal tile (default form: both triangles of it). */
    float yacc[32] = {};
    {
        float t[32];
        state_term<T, NWG, SLABS>(t, cs, ss);
        add_scaled_rows(yacc, t, dec + ROWF * Q);
    }
    if (!a.hydra) {
        /* Both warpgroups have read S_f: S_b takes its place while the tiles run. */
        __syncthreads();
        if (tid == 0) {
            mbar_arrive_expect_tx(&landed, kState);
#pragma unroll
            for (int sl = 0; sl < SLABS; sl++)
                tma_load_4d(Ss + sl * 64 * 128, &maps.entering, &landed, 0, 64 * sl, (int)c, (int)(BH + bh));
        }
    }
    for (int ct = 0; ct < wg; ct++) bidir_tile<T, NWG, SLABS>(yacc, cs, bs, xs, ct, true, false, sigma, dec);
    bidir_tile<T, NWG, SLABS>(yacc, cs, bs, xs, wg, true, !a.hydra, sigma, dec);
    if (a.hydra) {
        /* The backward direction's own B', its C' one row late (a zero row at
         * t = L) and its state replace the forward ones. */
        __syncthreads();
        if (tid == 0) {
            mbar_arrive_expect_tx(&landed, 2 * SLABS * kTile + kState);
#pragma unroll
            for (int sl = 0; sl < SLABS; sl++) {
                tma_load_4d(Bs + sl * kTile, &maps.B_b, &landed, 64 * sl, (int)g, (int)t0, (int)b);
                tma_load_4d(Cs + sl * kTile, &maps.C_b, &landed, 64 * sl, (int)g, (int)(t0 + 1), (int)b);
            }
#pragma unroll
            for (int sl = 0; sl < SLABS; sl++)
                tma_load_4d(Ss + sl * 64 * 128, &maps.entering, &landed, 0, 64 * sl, (int)c, (int)(BH + bh));
        }
    }
    mbar_wait(&landed, 1);
    {
        float t[32];
        state_term<T, NWG, SLABS>(t, cs, ss);
        add_scaled_rows(yacc, t, dec + ROWB * Q);
    }
    if (a.hydra) bidir_tile<T, NWG, SLABS>(yacc, cs, bs, xs, wg, false, true, sigma, dec);
    for (int ct = wg + 1; ct < NWG; ct++) bidir_tile<T, NWG, SLABS>(yacc, cs, bs, xs, ct, false, true, sigma, dec);

    /* y = y_fw + y_bw + x_og * D, then y *= silu(z); staged in x's place. */
    __syncthreads();  // every warpgroup's P·x has read x
    y_out_tma<T, true>(yacc, Xs, Xs, a.s, &maps.y, b, h, t0, len);
}

/* ---- launch ---- */

static int64_t wgmma_nchunks(const SsdShape *s) { return ceil_div(s->seqlen, wgmma_chunk(s)); }

static size_t states_smem(const SsdShape *s) {
    return 1024 + (size_t)kStages * (1 + wgmma_slabs(s)) * kStep * 128 + (size_t)wgmma_slabs(s) * 64 * 128 + kStep * 2;
}
static size_t output_smem(const SsdShape *s) {
    const size_t Q = (size_t)wgmma_chunk(s), slabs = (size_t)wgmma_slabs(s);
    return 1024 + (1 + 2 * slabs) * Q * 128 + slabs * 64 * 128 + NDECAYS * Q * sizeof(float);
}

extern "C" const char *bidir_wgmma_unsupported(const BidirShape *bs) {
    const SsdShape *s = &bs->s;
    const char *why = wgmma_unsupported(s, true);
    if (why) return why;
    if (wgmma_nchunks(s) * s->batch * s->heads > INT_MAX || 2 * s->batch * s->heads > INT_MAX)
        return "more than 2^31 (b, chunk, h) work items or chunk states a chain";
    if (s->seqlen > INT_MAX - 128) return "bulk tensor copy coordinates are 32-bit: L < 2^31 - 128";
    return NULL;
}

static size_t entering_bytes(const SsdShape *s) {
    return (size_t)(2 * s->batch * s->heads * wgmma_nchunks(s) * s->dstate * s->headdim) * 2;
}
extern "C" size_t bidir_wgmma_workspace(const BidirShape *bs) { return entering_bytes(&bs->s); }

template <typename T>
static BidirMaps bidir_maps(const BidirTensors *t, const void *entering, int Q) {
    const SsdShape *s = &t->s.s;
    const bool bf16 = std::is_same<T, __nv_bfloat16>::value, hydra = t->s.hydra;
    const uint64_t e = 2;  // bytes an element
    const uint64_t st_dims[4] = {(uint64_t)s->headdim, (uint64_t)s->dstate, (uint64_t)wgmma_nchunks(s),
                                 (uint64_t)(2 * s->batch * s->heads)};
    const uint64_t st_strides[3] = {e * s->headdim, e * s->headdim * s->dstate,
                                    e * s->headdim * s->dstate * wgmma_nchunks(s)};
    const uint32_t box_state[4] = {64, 64, 1, 1};
    BidirMaps m;
    m.x = wgmma_map_bhp(t->x, s, bf16, Q);
    m.B = wgmma_map_bgn(t->B, s, bf16, Q);
    m.C = wgmma_map_bgn(t->C, s, bf16, Q);
    m.B_b = hydra ? wgmma_map_bgn(t->B_bwd, s, bf16, Q) : m.B;
    m.C_b = hydra ? wgmma_map_bgn(t->C_bwd, s, bf16, Q) : m.C;
    m.entering = tma_map_16bit_4d(entering, bf16, st_dims, st_strides, box_state);
    m.y = wgmma_map_bhp(t->y, s, bf16, 64);
    m.x_step = wgmma_map_bhp(t->x, s, bf16, kStep);
    m.B_step = wgmma_map_bgn(t->B, s, bf16, kStep);
    m.B_b_step = hydra ? wgmma_map_bgn(t->B_bwd, s, bf16, kStep) : m.B_step;
    return m;
}

template <typename T>
static void launch_bidir_wgmma(const BidirTensors *t, void *workspace) {
    const SsdShape *s = &t->s.s;
    const bool hydra = t->s.hydra;
    BidirWgmmaArgs a;
    memset(&a, 0, sizeof a);
    a.s.x = t->x; a.s.dt = t->dt; a.s.B = t->B; a.s.C = t->C; a.s.z = t->z;
    a.s.A = t->A; a.s.D = t->D; a.s.dt_bias = t->dt_bias; a.s.h0 = t->initial_states; a.s.y = t->y;
    a.s.batch = s->batch; a.s.L = s->seqlen; a.s.H = s->heads; a.s.P = s->headdim; a.s.G = s->groups; a.s.N = s->dstate;
    a.s.nchunks = (int)wgmma_nchunks(s);
    a.s.softplus = s->softplus; a.s.D_per_channel = s->D_per_channel;
    a.dt_b = hydra ? t->dt_bwd : t->dt;
    a.h0_b = t->initial_states_bwd;
    a.entering = workspace;
    a.hydra = hydra;
    const int Q = wgmma_chunk(s);
    const bool two = wgmma_slabs(s) == 2;
    const BidirMaps maps = bidir_maps<T>(t, workspace, Q);

    void (*states)(BidirWgmmaArgs, BidirMaps) =
        Q == 128 ? (two ? bidir_wgmma_states_kernel<T, 2, 2> : bidir_wgmma_states_kernel<T, 1, 2>)
                 : (two ? bidir_wgmma_states_kernel<T, 2, 1> : bidir_wgmma_states_kernel<T, 1, 1>);
    static size_t states_allowed[2][2];  // the shared memory each of the four kernels is opted in to
    allow_smem(states, states_smem(s), &states_allowed[Q == 128][two]);
    states<<<(unsigned)(2 * s->batch * s->heads), 256, states_smem(s)>>>(a, maps);
    cuda_check_launch();

    void (*output)(BidirWgmmaArgs, BidirMaps) =
        Q == 128 ? (two ? bidir_wgmma_output_kernel<T, 2, 2> : bidir_wgmma_output_kernel<T, 2, 1>)
                 : (two ? bidir_wgmma_output_kernel<T, 1, 2> : bidir_wgmma_output_kernel<T, 1, 1>);
    static size_t output_allowed[2][2];
    allow_smem(output, output_smem(s), &output_allowed[Q == 128][two]);
    output<<<(unsigned)(wgmma_nchunks(s) * s->batch * s->heads), Q * 2, output_smem(s)>>>(a, maps);
    cuda_check_launch();
}

extern "C" void bidir_wgmma(const BidirTensors *t, void *workspace) { launch_bidir_wgmma<__half>(t, workspace); }
extern "C" void bidir_wgmma_bf16(const BidirTensors *t, void *workspace) {
    launch_bidir_wgmma<__nv_bfloat16>(t, workspace);
}
