/* 05_ssd_mamba2, GPU, versions 8-13: the fused SSD on Hopper's warpgroup
 * matrix product (sm_90a), the kernel; its launchers are in wgmma.cu.
 *   8 ssd_fused_wgmma      version 7's plan on wgmma, chunks of 128 (below)
 *   9 ssd_wgmma_frag_ring  the state handed over in the accumulators' order
 *  10 ssd_wgmma_heads      several heads of a group a block
 *  11 ssd_wgmma_frag_ring_bf16  version 9 in bf16
 *  12 ssd_wgmma_tma        version 9 with x, B, C in and y out by bulk tensor
 *                          copies (TMA): a thread's load and store loops
 *                          become five copies issued by one thread and one
 *                          store a warpgroup; y = acc + D·x staged in x's place
 *  13 ssd_wgmma_tma_bf16   version 12 in bf16
 *
 * What bounds them: latency. A block's phases (copies in, the chunk's state,
 * the wait for chunk c − 1, the hand-off, the outputs) run one after
 * another, and two blocks an SM cover too little of it; most of a chunk's
 * instructions are the scalar work around the products. Version 8 is held
 * by that scalar work, and at batch 1 by the chained hand-offs of each
 * (b, h) state (each 32 scattered 4-byte loads and stores a thread);
 * version 12's copies halve version 9's instructions, but the phases stay
 * in series. versions.md and tuning.md have the profiles.
 *
 * Version 8. Version 7 (kernels.cu) gives each warp 16 rows and feeds mma.sync from
 * registers: every 16x8x16 product needs its B fragment fetched by ldmatrix,
 * so shared-memory traffic, not the tensor cores, sets its pace (tuning.md,
 * "Version 7, profiled"), and it computes
 * C·Bᵀ over a chunk of 256 (most of its FLOPs). This version changes two
 * things:
 *   - every product is a wgmma of 64 rows by 64 columns by 16, issued by a
 *     warpgroup (128 threads) with its B operand read by the tensor cores
 *     straight from shared memory (128-byte-swizzled tiles, wgmma_sm90.cuh),
 *     once for all 64 rows;
 *   - chunks of 128 steps (64 when the problem's chunk is 64 or less): the
 *     causal C·Bᵀ and P·x products grow as Q² per chunk, the state products
 *     stay Q·p·N, so a chunk of 128 does 30% fewer FLOPs per step than one of
 *     256 at S3. The outputs do not depend on the chunk (only the rounding of
 *     sums does), so the kernel picks its own, whatever the problem's is.
 *
 * One block per (b, h, chunk), Q/64 warpgroups, warpgroup w owning rows
 * 64w..64w+63 of the chunk; x, B, C of the chunk in shared memory as fp16:
 *   1 S_localᵀ (N x p) = (B ∘ w)ᵀ·x, w_j = dt_j·exp(cum_last − cum_j):
 *     warpgroup w takes the 64-row n-tiles w, w + Q/64, ...; its A operand
 *     is Bᵀ from ldmatrix.trans, scaled by w_j in registers; x is read
 *     MN-major (its rows are the k of the product)
 *   2 the state handshake of version 7: wait for chunk c − 1's flag, read
 *     S_in from the ring (fp32, L2), write S_out = exp(cum_last)·S_in +
 *     S_local, raise the flag; S_in goes to shared memory as fp16
 *   3 y rows of warpgroup w: acc = C·S_inᵀ (both operands K-major in shared
 *     memory), scaled per row by exp(cum_i); then for each 64-column tile
 *     t <= w: CB = C·Bᵀ (64 x 64), P = CB ∘ exp(cum_i − cum_j)·dt_j (causal
 *     on the diagonal tile), converted in registers to fp16 A fragments (the
 *     accumulator layout is the A layout), acc += P·x
 *   4 y = acc + D·x, times silu(z), stored as fp16
 *
 * FLOPs per (b, h, chunk of Q), counting each 64 x 64 tile computed:
 * 2QpN (state) + 2QpN (C·S_in) + T(T+1)/2·2·64²·(N + p) for the T = Q/64
 * row tiles' causal column tiles: 8.9 MFLOP at Q 128, N 128, p 64 (against
 * version 7's 22 at Q 256), 1.5·10^11 at S3 b 8 L 8192. Exps: Q·64 a
 * diagonal tile, 2 per row and off-diagonal tile, 2Q per chunk.
 * Bytes: as version 7 (x, dt, B, C, z read once, y written once, the ring
 * 2·4·b·h·p·N in L2). */
#ifndef SSD_WGMMA_KERNEL_CUH
#define SSD_WGMMA_KERNEL_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

#include "mamba2_io.cuh"
#include "mma_sm80.cuh"
#include "mufu.cuh"
#include "pair16.cuh"
#include "ssd.h"
#include "tma_sm90.cuh"
#include "ssd_wgmma.cuh"
#include "wgmma_sm90.cuh"

/* Rows [0, Q) of a chunk's (len x cols) fp16 rows into 128-byte-swizzled
 * slabs of 64 columns (slab s at dst + s·Q·128 bytes); rows past len and
 * columns past cols are zero. Rows whose length is a multiple of 8 go by
 * 16-byte cp.async. */
template <int Q, int SLABS, typename T>
static __device__ void load_swizzled(unsigned char *dst, const T *src, int64_t stride, int len, int cols,
                                     bool vec16) {
    constexpr int groups = SLABS * 8;  // 8-column groups a row
    for (int i = threadIdx.x; i < Q * groups; i += blockDim.x) {
        const int r = i / groups, g = i % groups, col = g * 8;
        unsigned char *d = dst + (g / 8) * Q * 128 + sw128_offset(r, col % 64);
        if (vec16) {
            if (r < len && col < cols) cp_async16(d, src + r * stride + col);
            else *reinterpret_cast<uint4 *>(d) = make_uint4(0, 0, 0, 0);
        } else {
            T v[8];
#pragma unroll
            for (int e = 0; e < 8; e++) v[e] = r < len && col + e < cols ? src[r * stride + col + e] : from_float<T>(0.f);
            *reinterpret_cast<uint4 *>(d) = *reinterpret_cast<const uint4 *>(v);
        }
    }
}

/* NWG warpgroups, chunk Q = 64·NWG; SLABS: N rounded up to 64, over 64.
 * FRAG_RING (versions 9, 10): the ring holds each thread's accumulators in
 * their own order, so the handoff is 16-byte loads and stores (h0 too, put
 * there by ring_from_h0), and S_in reaches shared memory by stmatrix;
 * version 8 indexes every element as (p, N).
 * HEAD_LOOP (version 10): the block runs heads_per_block heads of one group
 * in turn; without it the loop runs once and compiles away.
 * TMA (versions 12, 13): x, B, C come in by bulk tensor copies and y leaves
 * by one, staged in x's place (y_out_tma); without it the maps go unused. */
template <typename T, int NWG, int SLABS, bool FRAG_RING, bool HEAD_LOOP, bool TMA>
__global__ void __launch_bounds__(NWG * 128, NWG == 2 ? 2 : 3)
    ssd_fused_wgmma_kernel(WgmmaArgs a, const __grid_constant__ TmaMaps maps) {
    static_assert(!(TMA && HEAD_LOOP), "the bulk copies bring one head's x a block");
    constexpr int Q = 64 * NWG;
    extern __shared__ unsigned char smem_raw[];
    /* Swizzled tiles need 1024-byte alignment: the launcher asks for 1 KiB more. */
    unsigned char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    constexpr int slabs = SLABS;
    unsigned char *Cs = smem;                   // (Q, 64·slabs) fp16, swizzled slabs: C of the chunk
    unsigned char *Bs = Cs + slabs * Q * 128;   // (Q, 64·slabs) fp16: B of the chunk
    /* Two 16 KB regions take turns holding x of the chunk, (Q, 64) fp16, and
     * the state entering it, (64, 64·slabs) fp16 with rows p (slabs <= 2,
     * Q = 128; at Q = 64 with two slabs the state's region is the larger). */
    constexpr int kRegion = (Q * 128 > slabs * 64 * 128 ? Q : slabs * 64) * 128;
    unsigned char *regions = Bs + slabs * Q * 128;                 // 2 x kRegion bytes
    float *cum2 = reinterpret_cast<float *>(regions + 2 * kRegion);  // (Q,) log2e · cumsum(dt·A)
    float *dts = cum2 + Q;                                           // (Q,) dt after bias and softplus
    float *vdt = dts + Q;                                            // (Q,) dt_j·exp(cum_e − cum_j), e: j's tile end
    T *wts = reinterpret_cast<T *>(vdt + Q);                         // (Q,) dt_j·exp(cum_last − cum_j)
    __shared__ int item;
    __shared__ alignas(8) uint64_t tiles_landed;  // TMA: x, B, C of the chunk are in

    const int tid = threadIdx.x, wg = tid / 128, wq = (tid / 32) % 4, lane = tid % 32;
    const int g8 = lane / 4, t4 = lane % 4;  // accumulator row and column pair of this lane
    if (tid == 0) {
        item = atomicAdd(a.ticket, 1);
        if (TMA) mbar_init(&tiles_landed, 1);
    }
    __syncthreads();
    /* Work item: (chunk, b, group of heads_per_block heads), chunk-major; the
     * items number under 2^31 (the launcher's check), so 32-bit division. */
    const unsigned HG = (unsigned)(a.H / a.heads_per_block), BHG = (unsigned)a.batch * HG, it = (unsigned)item;
    const int c = (int)(it / BHG);
    const int64_t b = (it % BHG) / HG, h_first = (int64_t)(it % HG) * a.heads_per_block,
                  g = h_first / (a.H / a.G);
    const int64_t t0 = (int64_t)c * Q;
    const int len = (int)min((int64_t)Q, a.L - t0);  // the last chunk may be shorter
    const int64_t x_row = a.H * a.P;                // x's stride between steps
    const T *x0 = static_cast<const T *>(a.x) + ((b * a.L + t0) * a.H + h_first) * a.P;
    const T *dt0 = static_cast<const T *>(a.dt) + (b * a.L + t0) * a.H + h_first;

    if (TMA) {
        /* Five copies from one thread: x (Q x 64), B and C (Q x 64 a slab);
         * steps past L arrive as zeros. */
        if (tid == 0) {
            mbar_arrive_expect_tx(&tiles_landed, (1 + 2 * slabs) * Q * 128);
            tma_load_4d(regions, &maps.x, &tiles_landed, 0, (int)h_first, (int)t0, (int)b);
#pragma unroll
            for (int sl = 0; sl < slabs; sl++) {
                tma_load_4d(Bs + sl * Q * 128, &maps.B, &tiles_landed, 64 * sl, (int)g, (int)t0, (int)b);
                tma_load_4d(Cs + sl * Q * 128, &maps.C, &tiles_landed, 64 * sl, (int)g, (int)t0, (int)b);
            }
        }
    } else {
        load_swizzled<Q, 1>(regions, x0, x_row, len, (int)a.P, a.P % 8 == 0);
        load_swizzled<Q, SLABS>(Bs, static_cast<const T *>(a.B) + ((b * a.L + t0) * a.G + g) * a.N, a.G * a.N,
                                len, (int)a.N, a.N % 8 == 0);
        load_swizzled<Q, SLABS>(Cs, static_cast<const T *>(a.C) + ((b * a.L + t0) * a.G + g) * a.N, a.G * a.N,
                                len, (int)a.N, a.N % 8 == 0);
        asm volatile("cp.async.commit_group;");
    }
    float dt_next = tid < len ? to_float(dt0[(int64_t)tid * a.H]) : 0.f;  // dt of the head to come

    const int heads = HEAD_LOOP ? a.heads_per_block : 1;
    for (int hh = 0; hh < heads; hh++) {
        const int64_t h = h_first + hh, bh = b * a.H + h;
        unsigned char *Xs = regions + (hh & 1) * kRegion, *Ss = regions + ((hh + 1) & 1) * kRegion;

        /* dt and the within-chunk cumsum of dt·A (log2 units), while the copies fly. */
        const float cum_last = chunk_decays<T, Q>(dt_next, len, a.dt_bias ? a.dt_bias[h] : 0.f, a.A[h], a.softplus,
                                                  dts, cum2, vdt, wts);
        if (hh + 1 < heads && tid < len) dt_next = to_float(dt0[(int64_t)tid * a.H + hh + 1]);
        if (TMA) {
            mbar_wait(&tiles_landed, 0);
        } else {
            asm volatile("cp.async.wait_all;");
            fence_async_smem();
        }
        __syncthreads();

        /* ---- 1. S_localᵀ (n x p) = Σ_j (w_j B_j)ᵀ x_j.
         * states = tl.dot(x, b) with x scaled by dt * exp(dA_cs_last - dA_cs) (_chunk_state_fwd_kernel) */
        constexpr int kTiles = state_tiles(NWG);
        float st[kTiles][32] = {};
        const uint32_t xs = smem_addr(Xs), bs = smem_addr(Bs), cs = smem_addr(Cs), ss = smem_addr(Ss);
        state_product<T, NWG, SLABS>(st, bs, xs, wts);

        /* ---- 2. State passing: wait for chunk c - 1, S_out = exp(cum_last) S_in + S_local.
         * states = scale * states + new_states (_state_passing_fwd_kernel) */
        const RingStep ring = ring_wait(a, bh, c);
        const float chunk_decay = exp2_approx(cum_last);
#pragma unroll
        for (int k = 0; k < kTiles; k++) {
            const int mt = wg + k * NWG;
            if (mt >= slabs) continue;
            if (FRAG_RING) {
                float s_in[32];
                frag_load(s_in, ring.in, mt, c == 0 && !ring.h0);
                frag_to_smem<T>(ss, s_in, mt);
                /* Before the ring stores: the proxy fence then has no global
                 * store of this thread to wait for. */
                fence_async_smem();
                frag_pass(st[k], s_in, chunk_decay, ring, mt, a.P, a.N);
                continue;
            }
            const float *prev = c == 0 ? ring.h0 : ring.in;
            float *next = ring.last ? ring.final_state : ring.out;
#pragma unroll
            for (int e = 0; e < 32; e++) {
                const int ni = mt * 64 + wq * 16 + g8 + (e & 2) * 4, pi = (e / 4) * 8 + t4 * 2 + (e & 1);
                const bool real = pi < a.P && ni < a.N;
                const float s_in = real && prev ? __ldcg(prev + pi * a.N + ni) : 0.f;
                *reinterpret_cast<T *>(Ss + mt * 64 * 128 + sw128_offset(pi, ni % 64)) = from_float<T>(s_in);
                if (real) next[pi * a.N + ni] = chunk_decay * s_in + st[k][e];
            }
        }
        if (!FRAG_RING) fence_async_smem();
        __syncthreads();  // the block's ring writes happen before thread 0's release below

        /* ---- 3. Outputs of rows 64·wg..: the state term, then the causal tiles. */
        float yacc[32] = {};
        state_term_issue<T, NWG, SLABS>(yacc, cs, ss);
        /* Chunk c's end state is in the ring: thread 0 publishes it while its
         * warpgroup's product runs (the release waits for the block's writes,
         * ordered before it by the barrier above). */
        if (tid == 0 && !ring.last) store_release(a.published + bh, c + 1);
        __syncwarp();
        wgmma_wait<0>();
        wgmma_touch(yacc);
        if (hh + 1 < heads) {
            /* The state's region is read: x of the next head goes there. */
            __syncthreads();
            load_swizzled<Q, 1>(Ss, x0 + (hh + 1) * a.P, x_row, len, (int)a.P, a.P % 8 == 0);
            asm volatile("cp.async.commit_group;");
        }
        causal_terms<T, NWG, SLABS>(yacc, cs, bs, xs, cum2, dts, vdt);

        /* ---- 4. y = acc + D x, then y *= silu(z): columns pi, pi + 1 of rows row0, row0 + 8. */
        if constexpr (TMA) {
            __syncthreads();  // every warpgroup's P·x has read x: y goes in its place
            y_out_tma<T, true>(yacc, Xs, Xs, a, &maps.y, b, h, t0, len);
        } else {
            const int row0 = wg * 64 + wq * 16 + g8;  // this thread's rows: row0 and row0 + 8
            const float D_head = a.D && !a.D_per_channel ? a.D[h] : 0.f;
            const T *zt = static_cast<const T *>(a.z);
            T *y = static_cast<T *>(a.y);
            const bool pairs = a.P % 2 == 0;  // y rows then start at even offsets: 4-byte pair stores
            for_each_y_pair(yacc, row0, len, a.P, [&](int i, int pi, float acc0, float acc1) {
                const int64_t row = ((b * a.L + t0 + i) * a.H + h) * a.P;  // offset of y[b, t0+i, h, 0]
                const int ncol = pairs ? 2 : min(2, (int)a.P - pi);
                const typename Pair<T>::type xv = *reinterpret_cast<const typename Pair<T>::type *>(Xs + sw128_offset(i, pi));
                float v[2] = {acc0, acc1};
                const float xf[2] = {Pair<T>::lo(xv), Pair<T>::hi(xv)};
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    if (e >= ncol) continue;
                    // out = acc + x * D
                    if (a.D) v[e] += (a.D_per_channel ? a.D[h * a.P + pi + e] : D_head) * xf[e];
                    if (zt) {
                        // out = out * F.silu(z)
                        const float zv = to_float(zt[row + pi + e]);
                        v[e] *= silu_div(zv);
                    }
                }
                if (pairs) {
                    *reinterpret_cast<typename Pair<T>::type *>(y + row + pi) = Pair<T>::narrow(v[0], v[1]);
                } else {
                    y[row + pi] = from_float<T>(v[0]);
                    if (ncol > 1) y[row + pi + 1] = from_float<T>(v[1]);
                }
            });
        }
        __syncthreads();  // x's region becomes the next head's state region; dt, cum rewritten
    }
}

/* h0 (b, h, p, N) into slot 1 of each (b, h) of the ring, where chunk 0 of
 * versions 9 and 10 reads its entering state, in their fragment order: float
 * i of a slot is element e = 4·((i / 4) % 1024 / 128) + i % 4 of thread
 * t = (i / 4) % 128 of the warpgroup holding n-tile i / 4096; zero past p, N. */
__global__ void ring_from_h0(float *ring, const float *h0, int64_t BH, int64_t P, int64_t N, int64_t slot) {
    const int64_t total = BH * slot;
    for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < total; k += (int64_t)gridDim.x * blockDim.x) {
        const int64_t bh = k / slot;
        const int i = (int)(k % slot), mt = i / 4096, t = (i / 4) % 128, e = 4 * ((i % 4096) / 512) + i % 4;
        const int lane = t % 32, ni = mt * 64 + (t / 32) * 16 + lane / 4 + (e & 2) * 4,
                  pi = (e / 4) * 8 + (lane % 4) * 2 + (e & 1);
        ring[(bh * 2 + 1) * slot + i] = pi < P && ni < N ? h0[(bh * P + pi) * N + ni] : 0.f;
    }
}

#endif
