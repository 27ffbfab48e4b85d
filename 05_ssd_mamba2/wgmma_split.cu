/* 05_ssd_mamba2, GPU, versions 16-17 and 20-21: fp32 inputs and outputs on
 * 16-bit tensor cores with fp32-grade accuracy (sm_90a).
 *  16 ssd_wgmma_split_fp32         every operand split in the block (below)
 *  17 ssd_wgmma_split_bc_fp32      B and C split once, before the kernel
 *  20 ssd_wgmma_ws_split_fp32      version 18's walk on 17's split operands
 *                                  (at "Version 20" below)
 *  21 ssd_wgmma_ws_split_2wg_fp32  version 20 with two computing warpgroups
 *                                  (at "Version 21" below)
 *
 * Version 16 is version 12 with fp32 x, dt, z, B, C, y and every product
 * split: an fp32 operand a becomes a_hi = bf16(a) and a_lo = bf16(a − a_hi),
 * 17 of fp32's 24 bits and all of its range, and a·b is taken as
 * a_hi·b_hi + a_hi·b_lo + a_lo·b_hi (a_lo·b_lo, at most 2^-16 of a·b, is
 * dropped), three bf16 wgmmas accumulating in fp32. What it
 * should buy: the fp32 tolerance the CUDA-core versions 4 and 5 pass, at the
 * tensor cores' rate instead of the CUDA cores'. One TF32 product (the
 * official fp32 path) or one fp16 product keeps 11 bits and misses that
 * tolerance; the lesson a plain run prints measures all of them in C.
 *
 * What changes against version 12:
 *   - chunks of 64, one warpgroup a block: x, B, C of a chunk and the state
 *     each take twice their 16-bit bytes as hi and lo tiles, 96 KiB at N 128,
 *     so two blocks an SM fit where version 12's chunk of 128 would need
 *     192 KiB and leave one; a chunk of 64 also does fewer causal FLOPs a step
 *     (one 64 x 64 tile a chunk, against three per 128 steps);
 *   - x, B, C come in by bulk tensor copies as fp32 rows (no swizzle) into the
 *     bytes their hi and lo tiles take, and are split there: each thread reads
 *     its fp32 values, the block waits, each thread writes them back as
 *     swizzled bf16 hi and lo;
 *   - the chunk's end state is published as soon as it is in the ring, before
 *     the entering state goes to shared memory (64 columns of N at a time, its
 *     hi and lo tiles, 16 KiB) for its products: a chunk adds one ring read,
 *     one write and a barrier to its (b, h)'s chain;
 *   - y leaves from the accumulators by 8-byte stores (fp32 pairs).
 *
 * Per (b, h, chunk of 64), N 128, p 64: 84 wgmmas of 64 x 64 x 16, three
 * times version 12's products at this chunk: 24 for the chunk's state, 24 for
 * C·S_in, 24 for C·Bᵀ, 12 for P·x; 11 MFLOP, 3.5·10^11 at S3 b 8 L 8192
 * (0.35 ms at the dense bf16 rate). Splitting costs each thread 40 float4
 * reads and 80 8-byte writes of shared memory a chunk and six instructions a
 * pair, and the state product's B fragments are rebuilt (hi + lo, times w_j)
 * and split again. Bytes: x, B, C, z read once and y written once in fp32,
 * twice version 12's; 0.24 ms at 4.8 TB/s at S3 b 8 L 8192.
 * Measured (Nsight Compute, H100 at 1.44 GHz, S3 b 8 L 8192, 80dcc79665e7,
 * 2.08 ms there, 1.66 timed): tensor pipe 19%, issue slots 39%, 5.0 cycles
 * between a warp's instructions, 8 warps an SM (two blocks: shared memory),
 * 18,800 warp instructions a (b, h, chunk): bound by issue and latency, the
 * split's scalar work and too few warps to hide it.
 *
 * Version 17: with g groups of h/g heads, version 16 splits each B and C
 * tile h/g times (32 at S3), once in each head's block, 32 of the 40 float4 a
 * thread splits. A first kernel (split_bc_kernel) splits B and C once into
 * bf16 hi and lo planes in the workspace, rows padded to 64·SLABS columns,
 * and the blocks bring those slabs by swizzled bulk copies straight into
 * their tiles, as version 12 brings its fp16 ones. It costs the planes'
 * write and read, 4 bytes an element of B and C (134 MB at S3 b 8 L 8192,
 * about 0.04 ms), and their memory: 4·b·L·g·64·SLABS·2 bytes.
 * Measured (Nsight Compute, H100 at 1.44 GHz, S3 b 8 L 8192, 89d5ee6cfebb,
 * 1.99 ms there, 1.65 timed against version 16's 1.62): 14,200 warp
 * instructions a (b, h, chunk), tensor pipe 21%, issue slots 31%, 6.4
 * cycles between a warp's instructions, barrier waits 1.4 per issued
 * instruction: fewer instructions, the same latency, so no faster; slower by
 * the first kernel's pass except where L is long at batch 1 or N small. */
#include "kernels.h"

#include <limits.h>
#include <string.h>

#include "cuda_check.h"
#include "launch.cuh"
#include "ssd_wgmma_ws.cuh"

using bf16 = __nv_bfloat16;

/* Four floats as bf16 hi and lo pairs (split_pair): hi at tile + at, lo
 * at tile + lo + at. */
static __device__ __forceinline__ void store_split4(unsigned char *tile, uint32_t at, uint32_t lo, float4 v) {
    uint2 hi_pairs, lo_pairs;
    split_pair(v.x, v.y, &hi_pairs.x, &lo_pairs.x);
    split_pair(v.z, v.w, &hi_pairs.y, &lo_pairs.y);
    *reinterpret_cast<uint2 *>(tile + at) = hi_pairs;
    *reinterpret_cast<uint2 *>(tile + lo + at) = lo_pairs;
}

/* The fp32 pair at byte offset `at` of a split tile, read back as its hi
 * pair (at tile + at) plus its lo pair (WS_TILE further). */
static __device__ __forceinline__ float2 load_split2(const unsigned char *tile, uint32_t at) {
    const float2 hi = unpack_bf16(*reinterpret_cast<const uint32_t *>(tile + at));
    const float2 lo = unpack_bf16(*reinterpret_cast<const uint32_t *>(tile + WS_TILE + at));
    return make_float2(hi.x + lo.x, hi.y + lo.y);
}

/* A (64, COLS) fp32 tile, as a bulk copy lands it (rows of COLS floats), is
 * rewritten in the same bytes as COLS/64 swizzled bf16 hi slabs of 64
 * columns, then as many lo slabs: each thread reads its float4s, the block
 * waits, each thread writes their halves. */
template <int COLS>
static __device__ __forceinline__ void split_tile(unsigned char *tile) {
    constexpr int C4 = COLS / 4, V = 64 * C4 / 128;  // float4s a row, and a thread's
    float4 v[V];
#pragma unroll
    for (int k = 0; k < V; k++) v[k] = reinterpret_cast<const float4 *>(tile)[threadIdx.x + 128 * k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < V; k++) {
        const int i = threadIdx.x + 128 * k, r = i / C4, col = (i % C4) * 4;
        store_split4(tile, (col / 64) * WS_TILE + sw128_offset(r, col % 64), (COLS / 64) * WS_TILE, v[k]);
    }
}

/* Phase 1, S_localᵀ (n x p) = Σ_j (w_j B_j)ᵀ x_j, n-tile mt into st[mt], as
 * version 12's state_product, with the A fragments rebuilt in fp32 from B's
 * hi and lo, scaled by w_j in fp32 and split again. */
template <int SLABS>
static __device__ __forceinline__ void state_product_split(float (&st)[SLABS][32], uint32_t bs, uint32_t xs,
                                                           const float *wts) {
    const int wq = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int t4 = lane % 4, q = lane / 8, r8 = lane % 8;  // ldmatrix: lane gives row r8 of matrix q
#pragma unroll
    for (int mt = 0; mt < SLABS; mt++) {
#pragma unroll
        for (int half = 0; half < 2; half++) {
            uint32_t ah[2][4], al[2][4];  // (w ∘ B)ᵀ fragments, hi and lo: rows n, columns j
#pragma unroll
            for (int k2 = 0; k2 < 2; k2++) {
                const int kk = half * 2 + k2;
                const uint32_t at = mt * WS_TILE + sw128_offset(kk * 16 + (q >> 1) * 8 + r8, 16 * wq + (q & 1) * 8);
                uint32_t bh[4], bl[4];
                ldsm_x4_trans(bh, bs + at);
                ldsm_x4_trans(bl, bs + SLABS * WS_TILE + at);
                /* Registers 0, 1 hold columns j = 16kk + 2t4 (+1); 2, 3 the same + 8. */
                const float2 w_lo = *reinterpret_cast<const float2 *>(wts + kk * 16 + t4 * 2);
                const float2 w_hi = *reinterpret_cast<const float2 *>(wts + kk * 16 + 8 + t4 * 2);
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    const float2 h = unpack_bf16(bh[r]), l = unpack_bf16(bl[r]), w = r < 2 ? w_lo : w_hi;
                    split_pair((h.x + l.x) * w.x, (h.y + l.y) * w.y, &ah[k2][r], &al[k2][r]);
                }
            }
            wgmma_fence();
#pragma unroll
            for (int k2 = 0; k2 < 2; k2++) {
                const int kk = half * 2 + k2;
                const uint64_t x_hi = sw128_desc(xs + kk * 2048), x_lo = sw128_desc(xs + WS_TILE + kk * 2048);
                wgmma_64x64_rs<bf16, 1>(st[mt], ah[k2], x_hi, kk > 0);
                wgmma_64x64_rs<bf16, 1>(st[mt], ah[k2], x_lo, 1);
                wgmma_64x64_rs<bf16, 1>(st[mt], al[k2], x_hi, 1);
            }
            wgmma_commit();
            wgmma_wait<0>();
            wgmma_touch(st[mt]);
        }
    }
}

/* One n-tile of the entering state (NE accumulator-order values: 32 for a
 * block's one warpgroup, or 16 for the 32 rows of p from p_first of one of
 * version 21's two) to shared memory as its bf16 hi tile
 * at ss and lo tile at ss_lo, (p, n) rows by stmatrix, as frag_to_smem does. */
template <int NE>
static __device__ __forceinline__ void state_to_smem_split(uint32_t ss, uint32_t ss_lo, const float (&s)[NE],
                                                           int p_first = 0) {
    const int lane = threadIdx.x % 32, wq = ws_frag_warp<NE>(threadIdx.x), q = lane / 8, r8 = lane % 8;
#pragma unroll
    for (int i = 0; i < NE / 4; i += 2) {
        uint32_t hi[4], lo[4];
#pragma unroll
        for (int m = 0; m < 4; m++) split_pair(s[4 * i + 2 * m], s[4 * i + 2 * m + 1], &hi[m], &lo[m]);
        const uint32_t at = sw128_offset(p_first + 8 * (i + (q >> 1)) + r8, 16 * wq + 8 * (q & 1));
        stsm_x4_trans(ss + at, hi);
        stsm_x4_trans(ss_lo + at, lo);
    }
}

/* The three products of a K-major pair of split tiles: d (+)= A·Bᵀ over 16 of
 * k, A's hi tile at a (lo a_lo bytes on), B's at b (lo b_lo bytes on). */
static __device__ __forceinline__ void wgmma_split_ss(float (&d)[32], uint32_t a, uint32_t a_lo, uint32_t b,
                                                      uint32_t b_lo, int accumulate) {
    wgmma_64x64_ss<bf16>(d, sw128_desc(a), sw128_desc(b), accumulate);
    wgmma_64x64_ss<bf16>(d, sw128_desc(a), sw128_desc(b + b_lo), 1);
    wgmma_64x64_ss<bf16>(d, sw128_desc(a + a_lo), sw128_desc(b), 1);
}

/* The tensor maps of versions 16, 17 and 20 (version 20 uses B and C). */
struct SplitMaps {
    CUtensorMap x;           // (b, L, h, p) fp32, boxes of 64 steps x 64, dense rows
    CUtensorMap B[2], C[2];  // 16: [0] (b, L, g, N) fp32, boxes of 64 steps x 64·SLABS, dense rows;
                             // 17: hi [0] and lo [1] (b, L, g, 64·SLABS) bf16, boxes 64 x 64 swizzled
};

/* SLABS: N rounded up to 64, over 64. One block of one warpgroup per
 * (b, h, chunk of 64), chunk-major, as version 12 (wgmma_kernel.cuh).
 * PRESPLIT (version 17): B and C come in split already (split_bc_kernel),
 * their hi and lo slabs by bulk copies straight into the swizzled tiles. */
template <int SLABS, bool PRESPLIT>
__global__ void __launch_bounds__(128, SLABS == 2 ? 2 : 3)
    ssd_wgmma_split_kernel(WgmmaArgs a, const __grid_constant__ SplitMaps maps) {
    constexpr int Q = 64;
    extern __shared__ unsigned char smem_raw[];
    /* Swizzled tiles need 1024-byte alignment: the launcher asks for 1 KiB more. */
    unsigned char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    unsigned char *Cs = smem;                          // (Q, 64·SLABS) bf16 hi slabs, then lo: C (first fp32 rows)
    unsigned char *Bs = Cs + 2 * SLABS * WS_TILE;   // the same for B
    unsigned char *Xs = Bs + 2 * SLABS * WS_TILE;   // (Q, 64) bf16 hi, then lo: x (first fp32 rows)
    unsigned char *Ss = Xs + 2 * WS_TILE;           // (64, 64) bf16 hi, then lo: 64 columns n of S_in, rows p
    float *cum2 = reinterpret_cast<float *>(Ss + 2 * WS_TILE);  // (Q,) log2e · cumsum(dt·A)
    float *dts = cum2 + Q;                                          // (Q,) dt after bias and softplus
    float *vdt = dts + Q;                                           // (Q,) unused here (tiles of 64: the diagonal only)
    float *wts = vdt + Q;                                           // (Q,) dt_j·exp(cum_last − cum_j) fp32
    __shared__ int item;
    __shared__ alignas(8) uint64_t tiles_landed;  // x, B, C of the chunk are in

    const int tid = threadIdx.x, wq = tid / 32, lane = tid % 32, t4 = lane % 4;
    if (tid == 0) {
        item = atomicAdd(a.ticket, 1);
        mbar_init(&tiles_landed, 1);
    }
    __syncthreads();
    /* Work item (chunk, b, h), chunk-major; under 2^31 (the launcher's check). */
    const unsigned BH = (unsigned)(a.batch * a.H), it = (unsigned)item;
    const int c = (int)(it / BH);
    const int64_t bh = it % BH, b = bh / a.H, h = bh % a.H, g = h / (a.H / a.G);
    const int64_t t0 = (int64_t)c * Q;
    const int len = (int)min((int64_t)Q, a.L - t0);  // the last chunk may be shorter

    /* Copies from one thread: x (Q x 64 fp32), then B and C: version 16 as
     * (Q x 64·SLABS) fp32 rows, version 17 as their hi and lo slabs; steps
     * past L and columns past p, N arrive as zeros. Either way the bytes are
     * those of the tiles. */
    if (tid == 0) {
        mbar_arrive_expect_tx(&tiles_landed, (2 + 4 * SLABS) * WS_TILE);
        tma_load_4d(Xs, &maps.x, &tiles_landed, 0, (int)h, (int)t0, (int)b);
        if (PRESPLIT) {
#pragma unroll
            for (int part = 0; part < 2; part++)
#pragma unroll
                for (int sl = 0; sl < SLABS; sl++) {
                    const int at = (part * SLABS + sl) * WS_TILE;
                    tma_load_4d(Bs + at, &maps.B[part], &tiles_landed, 64 * sl, (int)g, (int)t0, (int)b);
                    tma_load_4d(Cs + at, &maps.C[part], &tiles_landed, 64 * sl, (int)g, (int)t0, (int)b);
                }
        } else {
            tma_load_4d(Bs, &maps.B[0], &tiles_landed, 0, (int)g, (int)t0, (int)b);
            tma_load_4d(Cs, &maps.C[0], &tiles_landed, 0, (int)g, (int)t0, (int)b);
        }
    }
    const float *dt = static_cast<const float *>(a.dt) + (b * a.L + t0) * a.H + h;  // dt[b, t0, h]
    /* dt and the within-chunk cumsum of dt·A (log2 units), while the copies fly. */
    const float cum_last = chunk_decays<float, Q>(tid < len ? dt[(int64_t)tid * a.H] : 0.f, len,
                                                  a.dt_bias ? a.dt_bias[h] : 0.f, a.A[h], a.softplus, dts, cum2,
                                                  vdt, wts);
    mbar_wait(&tiles_landed, 0);
    if (!PRESPLIT) {
        split_tile<64 * SLABS>(Cs);
        split_tile<64 * SLABS>(Bs);
    }
    split_tile<64>(Xs);
    fence_async_smem();  // the tiles' generic writes, before the tensor cores read them
    __syncthreads();

    /* ---- 1. S_localᵀ (n x p) = Σ_j (w_j B_j)ᵀ x_j.
     * states = tl.dot(x, b) with x scaled by dt * exp(dA_cs_last - dA_cs) (_chunk_state_fwd_kernel) */
    const uint32_t xs = smem_addr(Xs), bs = smem_addr(Bs), cs = smem_addr(Cs), ss = smem_addr(Ss);
    float st[SLABS][32] = {};
    state_product_split<SLABS>(st, bs, xs, wts);

    /* ---- 2. State passing: wait for chunk c - 1, S_out = exp(cum_last) S_in +
     * S_local into the ring, published before anything else is done: the
     * wait, one read and one write of the ring and a barrier are all a chunk
     * adds to the chain of its (b, h).
     * states = scale * states + new_states (_state_passing_fwd_kernel) */
    const RingStep ring = ring_wait(a, bh, c);
    const float chunk_decay = exp2_approx(cum_last);
    float s_in[SLABS][32];  // the state entering the chunk, accumulator order
#pragma unroll
    for (int mt = 0; mt < SLABS; mt++) frag_load(s_in[mt], ring.in, mt, c == 0 && !ring.h0);
#pragma unroll
    for (int mt = 0; mt < SLABS; mt++) frag_pass(st[mt], s_in[mt], chunk_decay, ring, mt, a.P, a.N);
    __syncthreads();  // the block's ring writes, before thread 0's release
    if (tid == 0 && !ring.last) store_release(a.published + bh, c + 1);

    /* ---- 3. acc = C·S_inᵀ, 64 columns of N at a time: S_in's columns to
     * shared memory as hi and lo, their products issued before the next
     * columns are written. */
    float yacc[32] = {};
#pragma unroll
    for (int mt = 0; mt < SLABS; mt++) {
        if (mt > 0) {
            wgmma_wait<0>();  // the previous columns' products have read Ss
            __syncthreads();
        }
        state_to_smem_split(ss, ss + WS_TILE, s_in[mt]);
        fence_async_smem();  // the generic writes, before the tensor cores read them
        __syncthreads();
        /* acc = tl.dot(C, prev_states) (_chunk_scan_fwd_kernel) */
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
            wgmma_split_ss(yacc, cs + mt * WS_TILE + kk * 32, SLABS * WS_TILE, ss + kk * 32, WS_TILE,
                           mt > 0 || kk > 0);
        wgmma_commit();
    }
    wgmma_wait<0>();
    wgmma_touch(yacc);

    /* ---- 4. The chunk's own term: acc *= exp(cum_i), CB = C·Bᵀ, P = CB ∘
     * exp(cum_i − cum_j)·dt_j on and below the diagonal, acc += P·x. */
    const int row0 = wq * 16 + lane / 4;  // this thread's rows: row0 and row0 + 8
    const float ca = cum2[row0], cb = cum2[row0 + 8];
    {
        // acc = acc * scale_m[:, None] with scale_m = tl.exp(dA_cs_m)
        const float ea = exp2_approx(ca), eb = exp2_approx(cb);
#pragma unroll
        for (int e = 0; e < 32; e++) yacc[e] *= (e & 2) ? eb : ea;
    }
    float s[32] = {};  // C·Bᵀ, this thread's rows and columns
    /* cb = tl.dot(C, B) */
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4 * SLABS; kk++) {
        const uint32_t at = (kk / 4) * WS_TILE + (kk % 4) * 32;
        wgmma_split_ss(s, cs + at, SLABS * WS_TILE, bs + at, SLABS * WS_TILE, kk > 0);
    }
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_touch(s);
    /* cb *= tl.exp(dA_cs_m[:, None] - dA_cs_k[None, :]) * dt_k, zero above the diagonal. */
    uint32_t ph[4][4], pl[4][4];  // P as bf16 A fragments, hi and lo, k-steps of 16 columns
#pragma unroll
    for (int e = 0; e < 32; e += 2) {
        const int j = (e / 4) * 8 + t4 * 2, i = row0 + (e & 2) * 4;
        const float ci = (e & 2) ? cb : ca;
        const float p0 = j <= i ? s[e] * exp2_approx(ci - cum2[j]) * dts[j] : 0.f;
        const float p1 = j + 1 <= i ? s[e + 1] * exp2_approx(ci - cum2[j + 1]) * dts[j + 1] : 0.f;
        split_pair(p0, p1, &ph[e / 8][(e % 8) / 2], &pl[e / 8][(e % 8) / 2]);
    }
    /* acc += tl.dot(cb, x) */
    wgmma_fence();
#pragma unroll
    for (int kj = 0; kj < 4; kj++) {
        const uint64_t x_hi = sw128_desc(xs + kj * 2048), x_lo = sw128_desc(xs + WS_TILE + kj * 2048);
        wgmma_64x64_rs<bf16, 1>(yacc, ph[kj], x_hi, 1);
        wgmma_64x64_rs<bf16, 1>(yacc, ph[kj], x_lo, 1);
        wgmma_64x64_rs<bf16, 1>(yacc, pl[kj], x_hi, 1);
    }
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_touch(yacc);

    /* ---- 5. y = acc + D x (x as hi + lo), then y *= silu(z), fp32 pairs:
     * columns pi, pi + 1 of rows row0, row0 + 8 (p is a multiple of 4). */
    const float D_head = a.D && !a.D_per_channel ? a.D[h] : 0.f;
    const float *z = static_cast<const float *>(a.z);
    float *y = static_cast<float *>(a.y);
    for_each_y_pair(yacc, row0, len, a.P, [&](int i, int pi, float acc0, float acc1) {
        const int64_t row = ((b * a.L + t0 + i) * a.H + h) * a.P;  // offset of y[b, t0+i, h, 0]
        const uint32_t at = sw128_offset(i, pi);
        const float2 xv = load_split2(Xs, at);
        // out = acc + x * D
        float2 v = make_float2(fmaf(D_of_column(a, h, D_head, pi), xv.x, acc0),
                               fmaf(D_of_column(a, h, D_head, pi + 1), xv.y, acc1));
        if (z) {
            // out = out * F.silu(z)
            const float2 zv = *reinterpret_cast<const float2 *>(z + row + pi);
            v.x *= silu_div(zv.x);
            v.y *= silu_div(zv.y);
        }
        *reinterpret_cast<float2 *>(y + row + pi) = v;
    });
}

/* The first kernel of versions 17, 20 and 21: B and C, (b, L, g, N) fp32, as bf16 hi and lo,
 * each row padded with zeros to cols = 64·SLABS columns: out holds four
 * (b, L, g, cols) bf16 planes, B hi, B lo, C hi, C lo. Done once per group
 * of heads instead of once per head and chunk in version 16's blocks. */
__global__ void split_bc_kernel(const float *B, const float *C, bf16 *out, int64_t rows, int64_t N, int cols) {
    const int64_t pairs = rows * cols / 2, plane = rows * cols;
    for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < pairs; k += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = k / (cols / 2), col = 2 * (k % (cols / 2));
#pragma unroll
        for (int m = 0; m < 2; m++) {
            const float *src = (m == 0 ? B : C) + r * N;
            uint32_t hi, lo;
            split_pair(col < N ? src[col] : 0.f, col + 1 < N ? src[col + 1] : 0.f, &hi, &lo);
            uint32_t *dst = reinterpret_cast<uint32_t *>(out + 2 * m * plane + r * cols + col);
            dst[0] = hi;
            dst[plane / 2] = lo;
        }
    }
}

/* ---- Version 20: version 18's walk on version 17's split operands ----
 *
 * What changed from versions 16-17: the state stays in the registers of a
 * walking warpgroup and the split work moves to warps of their own. What it
 * should buy: fp32 I/O at fp32 accuracy nearer version 18's time.
 * The walk, the roles and the ring of stages are version 18's
 * (ops/ssd/ssd_wgmma_ws.cuh); the operands are version 17's: B and C come
 * split by split_bc_kernel, their hi and lo slabs by bulk copies, and every
 * product is three bf16 products. What changes against version 18:
 *   - three warps of the producer warpgroup (version 18's storer warp and
 *     its two idle ones), the splitters, read each chunk's x from device memory in fp32, the first
 *     of them forms the chunk's decays, and they write x and w ∘ x (x_j
 *     times the state product's weight w_j) as swizzled hi and lo tiles into
 *     the stage, while the consumers compute the chunk before. With w on x
 *     instead of on B, the state product S_localᵀ = Σ_j B_jᵀ (w_j x_j) takes
 *     both operands from shared memory (Bᵀ as an MN-major A), so the
 *     consumers form no fragment for it: version 17's consumers rebuilt and
 *     split (w ∘ B)ᵀ in registers, 40% of their instructions;
 *   - a stage holds x, w ∘ x, B and C twice (hi and lo), 96 KiB at N 128, and
 *     the entering state takes 32 KiB: 227 KiB with the decays, one block an
 *     SM, so the segments are cut for one walk an SM and no register budget
 *     is split (no setmaxnreg);
 *   - a chunk issues the state product, C·Bᵀ and C·S_in together and waits
 *     for the first two while C·S_in runs, forming P then, and writes the
 *     next entering state to shared memory while P·x runs;
 *   - y leaves from the accumulators by 8-byte stores (fp32 pairs), and z
 *     comes the same way, loaded before the chunk's products: no Ys tile
 *     and no storer warp.
 * Per (b, h, chunk of 64), N 128, p 64: 84 products of 64 x 64 x 16, three
 * times version 18's 28; each wgmma's descriptors come from one base a
 * stage by one add (sw128_desc_lo, sw128_desc_of), and D of the head joins
 * P's diagonal, so that y is the accumulators alone without D per channel.
 * Measured (H100, S3 b 8 L 8192, commit b7cb29fb5a27): 1.28 ms against
 * version 16's 1.64 in the same call. Nsight Compute (clocks as found, 1.26
 * ms there): 8,000 warp instructions a (b, h, chunk) (version 17: 14,200),
 * tensor pipe 32%, issue slots 24%, 8.3 cycles between a warp's
 * instructions, DRAM 27%, 8 warps an SM: bound by the latency of one
 * warpgroup's chain an SM (tuning.md has each step, and a pipelined build
 * that was slower). */

/* ---- Version 21: version 20 with two computing warpgroups ----
 *
 * What changed: the block's one computing warpgroup becomes two (WGS 2),
 * each taking 32 of p's 64 columns, and 32 of P's, which they share through
 * shared memory. What it should buy: two chains of a chunk an SM where
 * shared memory allows one block, each half as long for the state, C·S_in,
 * P·x and y, with the tensor pipe doing version 20's work.
 * Registers allow it: version 20 holds 208 a thread at 256 threads; at 384
 * (two computing warpgroups and the producer warpgroup) each has 168, and
 * a warpgroup's half of the state is 16 accumulators an n-tile. Each
 * warpgroup forms C·Bᵀ and P for its 32 columns j and writes P as bf16 hi
 * and lo over the stage's w ∘ x tiles, once both state products have read
 * them; both then take all of P from there (wss_consume). The 32-column
 * products read x's and w ∘ x's MN-major tiles 64 bytes into their
 * 128-byte swizzled rows, S_in's K-major tile 32 rows down.
 * Measured (H100, S3 b 8 L 8192, commit 7ff6045db2e6): 1.14 ms against
 * version 20's 1.28 in the same call; a first build that formed all of P
 * in each warpgroup took 1.28 against 1.25 (tuning.md). Nsight Compute
 * (1.10 ms there): tensor pipe 35%, issue slots 40%, 7.5 cycles between a
 * warp's instructions, 3 warps a scheduler: each warpgroup's chain. */

#define WSS_SPLITTERS 96       // the producer warpgroup's last three warps split x, the first of them forms the decays
#define WSS_SPLIT_BARRIER 4    // the splitters' named barrier (1: the consumers; 2, 3: version 21's warpgroups)
#define WSS_DECAYS (64 * 12)  // a stage's decays: cum2, dts, wts (64,) fp32

/* WGS computing warpgroups (version 20: 1, version 21: 2), each the chunk's
 * 64 rows and 64 / WGS of p's columns, then the producer warpgroup. */
template <int WGS>
static __host__ __device__ constexpr int wss_threads() { return 128 * WGS + 128; }

/* A computing warpgroup's own barrier: with one, the consumers' (named
 * barrier 1); with two, named barrier 2 + its index, its 128 threads. */
template <int WGS>
static __device__ __forceinline__ void wss_wg_sync() {
    if (WGS == 1) consumers_sync();
    else named_barrier_sync<128>(2 + (int)threadIdx.x / 128);
}

/* One bf16 product of 64 x 16 by 16 x 2·NE columns into d, both operands
 * in shared memory: NE 32, 64 columns; NE 16, 32 (a warpgroup's half of p). */
template <int TRANS_B, int TRANS_A, int NE>
static __device__ __forceinline__ void wss_mma(float (&d)[NE], uint64_t a, uint64_t b, int accumulate) {
    if constexpr (NE == 32) wgmma_64x64_ss<bf16, TRANS_B, TRANS_A>(d, a, b, accumulate);
    else wgmma_64x32_ss<bf16, TRANS_B, TRANS_A>(d, a, b, accumulate);
}

/* A stage: x hi, x lo, (w ∘ x) hi, (w ∘ x) lo (64, 64), then B hi, B lo,
 * C hi, C lo (64, 64·SLABS) each, bf16, swizzled. */
template <int SLABS>
static __host__ __device__ constexpr int wss_stage_bytes() { return (4 + 4 * SLABS) * WS_TILE; }
/* The stages, the entering state (hi, lo), the stages' decays (at
 * ws_decays_of's stride), and 1024 bytes to align the swizzled tiles:
 * 232,064 bytes at N 128, with the kernel's 304 static bytes just under
 * the 232,448 a block may have. */
template <int SLABS>
static __host__ __device__ constexpr size_t wss_smem_bytes() {
    return 1024 + (size_t)WS_STAGES * wss_stage_bytes<SLABS>() + 2 * SLABS * WS_TILE + (WS_STAGES - 1) * WS_DECAYS +
           WSS_DECAYS;
}

/* The copying thread: for each chunk, once its stage is free, B's (and with
 * the outputs C's) hi and lo slabs into it, on `full`. */
template <int SLABS>
static __device__ void wss_produce(const SplitMaps &maps, const WsWalk &w) {
    uint32_t k = 0;  // chunks issued: stage k % WS_STAGES, its use k / WS_STAGES
    for (int pass = w.last_seg ? 1 : 0; pass < 2; pass++)
        for (int c = w.c_first; c < w.c_end; c++, k++) {
            const int s = (int)(k % WS_STAGES), t0 = c * 64;
            if (k >= WS_STAGES) mbar_wait(&w.empty[s], ((k / WS_STAGES) & 1) ^ 1);
            unsigned char *st = w.stages + s * wss_stage_bytes<SLABS>();
            mbar_arrive_expect_tx(&w.full[s], (pass == 1 ? 4 : 2) * SLABS * WS_TILE);
#pragma unroll
            for (int part = 0; part < 2; part++)
#pragma unroll
                for (int sl = 0; sl < SLABS; sl++) {
                    tma_load_4d(st + (4 + part * SLABS + sl) * WS_TILE, &maps.B[part], &w.full[s], 64 * sl, w.g, t0, w.b);
                    if (pass == 1)
                        tma_load_4d(st + (4 + (2 + part) * SLABS + sl) * WS_TILE, &maps.C[part], &w.full[s], 64 * sl,
                                    w.g, t0, w.b);
                }
        }
}

/* The splitters: for each chunk, each thread loads its float4s of x (rows
 * past L and columns past p as zeros) and the first splitter warp its dt
 * before the stage is free; then that warp forms the decays into the stage,
 * the splitters meet (named barrier WSS_SPLIT_BARRIER), and each writes its
 * x and w ∘ x as hi and lo pairs into the stage's tiles and arrives on `full`. */
template <int SLABS, int THREADS>
static __device__ void wss_split_x(const WgmmaArgs &a, const WsWalk &w) {
    constexpr int F4 = 64 * 16, PER = (F4 + WSS_SPLITTERS - 1) / WSS_SPLITTERS;  // float4s of x: a chunk's, a thread's
    const int u = threadIdx.x - (THREADS - WSS_SPLITTERS);
    const bool decayer = u < 32;
    uint32_t k = 0;
    for (int pass = w.last_seg ? 1 : 0; pass < 2; pass++)
        for (int c = w.c_first; c < w.c_end; c++, k++) {
            const int s = (int)(k % WS_STAGES);
            const int64_t t0 = (int64_t)c * 64, len = min((int64_t)64, a.L - t0);
            const float *x = static_cast<const float *>(a.x) + ((w.b * a.L + t0) * a.H + w.h) * a.P;  // x[b, t0, h, 0]
            float4 v[PER];
#pragma unroll
            for (int m = 0; m < PER; m++) {
                const int i = u + WSS_SPLITTERS * m, r = i / 16, col = (i % 16) * 4;  // p is a multiple of 4
                v[m] = i < F4 && r < len && col < a.P ? *reinterpret_cast<const float4 *>(x + r * a.H * a.P + col)
                                                      : make_float4(0.f, 0.f, 0.f, 0.f);
            }
            const float2 dt_raw = decayer ? ws_dt_load<float, false>(a, w, c, pass == 0) : make_float2(0.f, 0.f);
            if (k >= WS_STAGES) mbar_wait(&w.empty[s], ((k / WS_STAGES) & 1) ^ 1);
            const WsDecays d = ws_decays_of(w, s);
            if (decayer) ws_form_decays<false, 0, float>(a, w, c, d, dt_raw);
            named_barrier_sync<WSS_SPLITTERS>(WSS_SPLIT_BARRIER);  // the chunk's weights are in
            unsigned char *xs = w.stages + s * wss_stage_bytes<SLABS>();
#pragma unroll
            for (int m = 0; m < PER; m++) {
                const int i = u + WSS_SPLITTERS * m, r = i / 16;
                if (i >= F4) continue;
                const float wr = static_cast<const float *>(d.wts)[r];
                const uint32_t at = sw128_offset(r, (i % 16) * 4);
                store_split4(xs, at, WS_TILE, v[m]);
                // scale = tl.exp(tl.minimum((dA_cs_last - dA_cs_k), 0.0)) * dt_k; b *= scale[:, None]
                // (_chunk_state_fwd_kernel; here w = scale goes on x: Σ_j b_jᵀ (w_j x_j))
                store_split4(xs + 2 * WS_TILE, at, WS_TILE,
                             make_float4(wr * v[m].x, wr * v[m].y, wr * v[m].z, wr * v[m].w));
            }
            fence_async_smem();  // the tiles' generic writes, before the tensor cores read them
            mbar_arrive(&w.full[s]);
        }
}

/* d (+)= A·Bᵀ over N, both K-major and split, issued and committed: a and b
 * the low words of the hi slabs' descriptors (sw128_desc_lo), the lo slabs
 * sl bytes on; B's rows 2·NE (64, or a warpgroup's 32). */
template <int SLABS, int NE>
static __device__ __forceinline__ void wss_nt_issue(float (&d)[NE], uint32_t a, uint32_t b, uint32_t sl) {
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < SLABS * 4; kk++) {
        const uint32_t at = ((kk / 4) * WS_TILE + (kk % 4) * 32) / 16;
        wss_mma<0, 0>(d, sw128_desc_of(a + at), sw128_desc_of(b + at), kk > 0);
        wss_mma<0, 0>(d, sw128_desc_of(a + at), sw128_desc_of(b + at + sl / 16), 1);
        wss_mma<0, 0>(d, sw128_desc_of(a + at + sl / 16), sw128_desc_of(b + at), 1);
    }
    wgmma_commit();
}

/* Version 21: this warpgroup's 32 columns of P, from j_first (s: its C·Bᵀ
 * columns there, 16 values a thread), D of the head on the diagonal, as
 * bf16 hi and lo pairs into the swizzled tiles at ph and ph + WS_TILE;
 * column groups on the masked side of both of a warp's rows as zeros.
 * cb *= tl.exp(dA_cs_m[:, None] - dA_cs_k[None, :]) * dt_k, zero above the diagonal */
static __device__ __forceinline__ void wss_causal_half(const float (&s)[16], const WsDecays &d, int row0, int j_first,
                                                       unsigned char *ph, float diag) {
    const int t4 = thread_index() % 4, wq = (thread_index() / 32) % 4;
    const float cum_a = d.cum2[row0], cum_b = d.cum2[row0 + 8];
    const float r = exp2_approx(cum_b - cum_a);  // <= 1: row0 + 8's decay from row0's
#pragma unroll
    for (int c4 = 0; c4 < 4; c4++) {
        const int cg = j_first / 8 + c4, j = cg * 8 + t4 * 2;
        float pa[2] = {0.f, 0.f}, pb[2] = {0.f, 0.f};
        if (cg <= 2 * wq + 1) {
            ws_causal_pair<false, 0>(s + c4 * 4, d, row0, j, cum_a, cum_b, r, pa, pb);
            ws_diag_add(pa, pb, j, row0, diag);
        }
        uint32_t hi, lo;
        split_pair(pa[0], pa[1], &hi, &lo);
        *reinterpret_cast<uint32_t *>(ph + sw128_offset(row0, j)) = hi;
        *reinterpret_cast<uint32_t *>(ph + WS_TILE + sw128_offset(row0, j)) = lo;
        split_pair(pb[0], pb[1], &hi, &lo);
        *reinterpret_cast<uint32_t *>(ph + sw128_offset(row0 + 8, j)) = hi;
        *reinterpret_cast<uint32_t *>(ph + WS_TILE + sw128_offset(row0 + 8, j)) = lo;
    }
}

/* The consumers' pass over the walk's chunks, as version 18's ws_consume
 * (OUTPUTS: pass 1, else pass 0); returns the segment's decay in log2 units.
 * With WGS 2 (version 21) each warpgroup takes NP = 32 of p's columns: its
 * n-tiles of the state, its rows of S_in, its half of x and w ∘ x and of y;
 * and 32 of P's columns, C·Bᵀ there, formed into the tiles where w ∘ x was
 * (once both warpgroups' state products have read them), from which both
 * take all of P. */
template <int SLABS, int WGS, bool OUTPUTS>
static __device__ __forceinline__ float wss_consume(const WgmmaArgs &a, const WsWalk &w, float (&st)[2][32 / WGS],
                                                    uint32_t &k) {
    constexpr int NE = 32 / WGS, NP = 64 / WGS;  // accumulators a thread an n-tile; the warpgroup's columns of p
    constexpr uint32_t SL = SLABS * WS_TILE;     // from a hi slab of B, C or S_in to its lo slab
    const int tid = thread_index(), lane = tid % 32, row0 = ((tid / 32) % 4) * 16 + lane / 4;
    const int p_first = WGS > 1 ? NP * (tid / 128) : 0;  // the warpgroup's first column of p
    /* S_in's rows p_first .. (128 bytes a row); x's and w ∘ x's columns p_first .. (2 bytes a column) */
    const uint32_t ss = smem_addr(w.Ss), sd = sw128_desc_lo(ss) + p_first * 128 / 16, pcol = p_first * 2 / 16;
    /* D of the head joins P's diagonal; D per channel is added to y. */
    const float D_head = a.D && !a.D_per_channel ? a.D[w.h] : 0.f;
    /* C·Bᵀ (64 x 64; WGS 2: 64 x 32, P's columns j from p_first, the same offset as p's);
     * y rows of the chunk (each chunk's first product overwrites) */
    float cbt[NE] = {}, yacc[NE] = {};
    float seg_log2 = 0.f;
    for (int c = w.c_first; c < w.c_end; c++, k++) {
        const int64_t t0 = (int64_t)c * 64;
        const int len = (int)min((int64_t)64, a.L - t0), s = (int)(k % WS_STAGES);
        unsigned char *stage = w.stages + s * wss_stage_bytes<SLABS>();
        /* The low words of the tiles' descriptors (sw128_desc_lo): x hi, then
         * x lo, w ∘ x hi and lo, B hi and lo, C hi and lo at their offsets. */
        const uint32_t xd = sw128_desc_lo(smem_addr(stage)), wxd = xd + 2 * WS_TILE / 16, bd = xd + 4 * WS_TILE / 16,
                       cd = bd + 2 * SL / 16;
        const WsDecays d = ws_decays_of(w, s);
        /* z of this thread's pairs of y, rows row0 + 8hr, columns p_first + 8nt + 2(lane % 4),
         * loaded now so that the loads' latency runs under the chunk's products. */
        float2 zr[2][NP / 8];
        if (OUTPUTS && a.z) {
            const float *zt = static_cast<const float *>(a.z) + ((w.b * a.L + t0 + row0) * a.H + w.h) * a.P + p_first +
                              2 * (lane % 4);
#pragma unroll
            for (int hr = 0; hr < 2; hr++)
#pragma unroll
                for (int nt = 0; nt < NP / 8; nt++)
                    zr[hr][nt] = row0 + 8 * hr < len && p_first + 8 * nt + 2 * (lane % 4) < a.P
                                     ? *reinterpret_cast<const float2 *>(zt + 8 * hr * a.H * a.P + 8 * nt)
                                     : make_float2(0.f, 0.f);
        }
        mbar_wait(&w.full[s], (k / WS_STAGES) & 1);
        const float cum_last = d.cum2[len - 1];
        seg_log2 += cum_last;

        /* S_out = exp(cum_last)·S_in + Σ_j B_jᵀ (w_j x_j), n-tile mt from B's
         * slab mt read as an MN-major A; with the outputs, C·Bᵀ and C·S_in are
         * issued after it and all three run together.
         * acc += tl.dot(x, b) (_chunk_state_fwd_kernel, b scaled by w there, x here) */
        ws_decay_state(st, cum_last);
        wgmma_fence();
#pragma unroll
        for (int mt = 0; mt < SLABS; mt++)
#pragma unroll
            for (int kk = 0; kk < 4; kk++) {
                const uint32_t b_hi = bd + (mt * WS_TILE + kk * 2048) / 16, wx_hi = wxd + pcol + kk * 2048 / 16;
                wss_mma<1, 1>(st[mt], sw128_desc_of(b_hi), sw128_desc_of(wx_hi), 1);
                wss_mma<1, 1>(st[mt], sw128_desc_of(b_hi), sw128_desc_of(wx_hi + WS_TILE / 16), 1);
                wss_mma<1, 1>(st[mt], sw128_desc_of(b_hi + SL / 16), sw128_desc_of(wx_hi), 1);
            }
        wgmma_commit();
        if (!OUTPUTS) {
            wgmma_wait<0>();
            wgmma_touch(st[0]);
            wgmma_touch(st[1]);
            mbar_arrive(&w.empty[s]);  // this thread's reads of the stage are done
            continue;
        }
        /* cb = tl.dot(C, B) (WGS 2: B's rows p_first .., this warpgroup's columns of P) */
        wss_nt_issue<SLABS>(cbt, cd, bd + p_first * 128 / 16, SL);
        /* acc = tl.dot(C, prev_states) (_chunk_scan_fwd_kernel) */
        wss_nt_issue<SLABS>(yacc, cd, sd, SL);
        wgmma_wait<1>();  // the state product and C·Bᵀ are in; C·S_in may still run
        wgmma_touch(st[0]);
        wgmma_touch(st[1]);
        wgmma_touch(cbt);
        uint32_t ph[4][4], pl[4][4];  // WGS 1: P as bf16 A fragments, hi and lo
        if constexpr (WGS > 1) {
            /* Both warpgroups' state products have read w ∘ x: its tiles take P,
             * each warpgroup writing its 32 columns. */
            consumers_sync<WGS>();
            wss_causal_half(cbt, d, row0, p_first, stage + 2 * WS_TILE, D_head);
            fence_async_smem();  // P's generic stores, before the tensor cores read them
            consumers_sync<WGS>();
        } else {
            ws_causal_frags<bf16, false, 0, true>(cbt, d, row0, ph, pl, D_head);
        }
        wgmma_wait<0>();
        wgmma_touch(yacc);
        {
            // acc = acc * scale_m[:, None] with scale_m = tl.exp(dA_cs_m)
            const float ea = exp2_approx(d.cum2[row0]), eb = exp2_approx(d.cum2[row0 + 8]);
#pragma unroll
            for (int e = 0; e < NE; e++) yacc[e] *= (e & 2) ? eb : ea;
        }
        /* acc += tl.dot(cb, x) */
        wgmma_fence();
#pragma unroll
        for (int kj = 0; kj < 4; kj++) {
            const uint64_t x_hi = sw128_desc_of(xd + pcol + kj * 2048 / 16),
                           x_lo = sw128_desc_of(xd + pcol + (WS_TILE + kj * 2048) / 16);
            if constexpr (WGS > 1) {
                const uint32_t p_hi = wxd + kj * 32 / 16;  // P's tiles (K-major) where w ∘ x was
                wss_mma<1, 0>(yacc, sw128_desc_of(p_hi), x_hi, 1);
                wss_mma<1, 0>(yacc, sw128_desc_of(p_hi), x_lo, 1);
                wss_mma<1, 0>(yacc, sw128_desc_of(p_hi + WS_TILE / 16), x_hi, 1);
            } else {
                wgmma_64x64_rs<bf16, 1>(yacc, ph[kj], x_hi, 1);
                wgmma_64x64_rs<bf16, 1>(yacc, ph[kj], x_lo, 1);
                wgmma_64x64_rs<bf16, 1>(yacc, pl[kj], x_hi, 1);
            }
        }
        wgmma_commit();
        /* Every warp's C·S_in is done (with WGS 2 each warpgroup reads only its
         * own rows of S_in): the next chunk's entering state to Ss, while P·x runs. */
        wss_wg_sync<WGS>();
#pragma unroll
        for (int mt = 0; mt < SLABS; mt++)
            state_to_smem_split(ss + mt * WS_TILE, ss + SL + mt * WS_TILE, st[mt], p_first);
        wgmma_wait<0>();
        wgmma_touch(yacc);
        /* y = acc (+ D x per channel, x as hi + lo), then y *= silu(z), fp32 pairs. */
        float *y = static_cast<float *>(a.y) + ((w.b * a.L + t0 + row0) * a.H + w.h) * a.P + p_first + 2 * (lane % 4);
#pragma unroll
        for (int hr = 0; hr < 2; hr++)
#pragma unroll
            for (int nt = 0; nt < NP / 8; nt++) {
                const int i = row0 + 8 * hr, pi = p_first + 8 * nt + 2 * (lane % 4);
                if (i >= len || pi >= a.P) continue;
                float2 v = make_float2(yacc[nt * 4 + hr * 2], yacc[nt * 4 + hr * 2 + 1]);
                if (a.D_per_channel) {
                    const uint32_t at = sw128_offset(i, pi);
                    const float2 xv = load_split2(stage, at);
                    // out = acc + x * D
                    v.x = fmaf(w.Dcol[pi], xv.x, v.x);
                    v.y = fmaf(w.Dcol[pi + 1], xv.y, v.y);
                }
                if (a.z) {
                    // out = out * F.silu(z)
                    const float2 zv = zr[hr][nt];
                    v.x *= silu_div(zv.x);
                    v.y *= silu_div(zv.y);
                }
                *reinterpret_cast<float2 *>(y + 8 * hr * a.H * a.P + 8 * nt) = v;
            }
        fence_async_smem();  // the state's stores, before the next chunk's products read them
        wss_wg_sync<WGS>();
        mbar_arrive(&w.empty[s]);  // this thread's reads of the stage are done
    }
    return seg_log2;
}

/* SLABS: N rounded up to 64, over 64. One block walks one segment of one
 * (b, h): threads 0 .. 128·WGS − 1 compute (WGS warpgroups, each 64 / WGS
 * of p's columns), the producer warpgroup's first thread copies B and C, its
 * last three warps split x and form the decays. */
template <int SLABS, int WGS>
__global__ void __launch_bounds__(wss_threads<WGS>(), 1)
    ssd_wgmma_ws_split_kernel(WgmmaArgs a, const __grid_constant__ SplitMaps maps) {
    constexpr int NE = 32 / WGS;  // the state's accumulators a thread an n-tile
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
    __shared__ int item;
    __shared__ alignas(8) uint64_t full[WS_STAGES], empty[WS_STAGES];
    __shared__ alignas(8) float Dcol[64];  // (64,) fp32: D of each column of y (read with D per channel only)
    const int tid = threadIdx.x;
    if (tid == 0) {
        item = a.segments > 1 ? atomicAdd(a.ticket, 1) : (int)blockIdx.x;  // one segment: no order to keep
        for (int s = 0; s < WS_STAGES; s++) {
            mbar_init(&full[s], 1 + WSS_SPLITTERS);  // the copying thread with the copies' bytes, the splitters
            mbar_init(&empty[s], 128 * WGS);         // each consumer thread, after its last read of the stage
        }
    }
    __syncthreads();  // the block's last barrier of all its threads
    WsWalk w = ws_walk_of(a, item);
    w.stages = smem;
    w.Ss = w.stages + WS_STAGES * wss_stage_bytes<SLABS>();  // (64, 64·SLABS) bf16 hi, then lo: the entering state, rows p
    w.decays = w.Ss + 2 * SLABS * WS_TILE;                    // WS_STAGES x [cum2, dts, wts (64,) fp32], WS_DECAYS apart
    w.Ys = nullptr;  // no storer: Ys, ys_free and ys_written are version 18's
    w.Dcol = Dcol;
    w.full = full;
    w.empty = empty;
    w.ys_free = w.ys_written = nullptr;

    if (tid >= 128 * WGS) {
        if (tid == 128 * WGS) wss_produce<SLABS>(maps, w);
        else if (tid >= wss_threads<WGS>() - WSS_SPLITTERS) wss_split_x<SLABS, wss_threads<WGS>()>(a, w);
        return;
    }
    static_assert(WGS == 1 || WGS == 2, "barriers 2 + wg sit below WSS_SPLIT_BARRIER; p's 64 columns split in two");
    const int p_first = WGS > 1 ? (64 / WGS) * (tid / 128) : 0;  // this warpgroup's first column of p
    float st[2][NE] = {};  // the state, n-tiles 0 and 1 in fragment order (1 stays zero at SLABS 1)
    uint32_t k = 0;
    /* ---- Pass 0 (segments but the last): the segment's own state, published. */
    if (!w.last_seg)
        ws_publish<SLABS, WGS>(st, a, w, item, exp2_approx(wss_consume<SLABS, WGS, false>(a, w, st, k)));
    /* ---- Pass 1 from S_{seg−1} (h0 for the first segment), with the outputs. */
    if (tid < 64) Dcol[tid] = D_of_column(a, w.h, a.D && !a.D_per_channel ? a.D[w.h] : 0.f, tid);
    if (w.seg > 0) ws_sum_published<SLABS, WGS>(st, a, w);
    const uint32_t ss = smem_addr(w.Ss);
#pragma unroll
    for (int mt = 0; mt < SLABS; mt++) {
        if (w.seg == 0) ws_h0_tile(st[mt], a, w, mt, p_first);
        state_to_smem_split(ss + mt * WS_TILE, ss + SLABS * WS_TILE + mt * WS_TILE, st[mt], p_first);
    }
    fence_async_smem();  // the state's stmatrix stores, before wgmma reads them
    consumers_sync<WGS>();
    wss_consume<SLABS, WGS, true>(a, w, st, k);
    if (w.last_seg && a.final_state) ws_final_state(st, a, w, SLABS, p_first);
}

/* ---- launch ---- */

WgmmaArgs wgmma_split_args(const SsdTensors *t, void *workspace);  // wgmma.cu: arguments, ring started

static int64_t split_items(const SsdShape *s) { return ceil_div(s->seqlen, 64) * s->batch * s->heads; }

/* Versions 20 and 21 read x's fp32 rows 16 bytes at a time, and B and C as
 * the bf16 planes split_bc_kernel writes for any N: p a multiple of 4. Work
 * items (chunk, b, h) for version 16, (segment, b, h) for 20-21, segments
 * at most the chunks. */
extern "C" const char *ssd_wgmma_ws_split_unsupported(const SsdShape *s) {
    const char *why = wgmma_unsupported(s, false);
    if (why) return why;
    if (s->headdim % 4 != 0) return "x's fp32 rows are read 16 bytes at a time: p a multiple of 4";
    if (s->seqlen > INT_MAX || s->batch > INT_MAX) return "bulk tensor copy coordinates are 32-bit: L, b < 2^31";
    if (split_items(s) > INT_MAX) return "more than 2^31 (chunk, b, h) work items";
    return NULL;
}
/* Version 16 brings B's and C's fp32 rows by bulk copies too: N a multiple
 * of 4 as well (version 17, whose B and C come as bf16 planes, keeps that
 * limit: it was not checked at other N). */
extern "C" const char *ssd_wgmma_split_unsupported(const SsdShape *s) {
    const char *why = ssd_wgmma_ws_split_unsupported(s);
    if (why) return why;
    if (s->dstate % 4 != 0) return "bulk tensor copies step between fp32 rows in multiples of 16 bytes: N a multiple of 4";
    return NULL;
}

/* A map of an fp32 (b, L, k, cols) tensor (x: k = h, cols = p; B, C: k = g,
 * cols = N), boxes of 64 steps by box_cols columns, dense rows. */
static CUtensorMap split_map(const void *base, const SsdShape *s, int64_t k, int64_t cols, uint32_t box_cols) {
    const uint64_t dims[4] = {(uint64_t)cols, (uint64_t)k, (uint64_t)s->seqlen, (uint64_t)s->batch};
    const uint64_t strides[3] = {4 * (uint64_t)cols, 4 * (uint64_t)(cols * k), 4 * (uint64_t)(cols * k * s->seqlen)};
    const uint32_t box[4] = {box_cols, 1, 64, 1};
    return tma_map_4d(base, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, CU_TENSOR_MAP_SWIZZLE_NONE, dims, strides, box);
}

/* Version 17's split copies of B and C: four (b, L, g, 64·slabs) bf16
 * planes, after version 16's workspace (the ring, 256-byte aligned). */
static size_t split_bc_offset(const SsdShape *s) { return (ssd_fused_wgmma_workspace(s) + 255) / 256 * 256; }
static int64_t split_bc_plane(const SsdShape *s) { return s->batch * s->seqlen * s->groups * 64 * wgmma_slabs(s); }
extern "C" size_t ssd_wgmma_split_bc_workspace(const SsdShape *s) {
    return split_bc_offset(s) + 4 * (size_t)split_bc_plane(s) * sizeof(bf16);
}

/* A map of one bf16 (b, L, g, 64·slabs) plane, boxes of 64 steps x 64, swizzled. */
static CUtensorMap split_plane_map(const bf16 *plane, const SsdShape *s) {
    const uint64_t cols = 64 * (uint64_t)wgmma_slabs(s);
    const uint64_t dims[4] = {cols, (uint64_t)s->groups, (uint64_t)s->seqlen, (uint64_t)s->batch};
    const uint64_t strides[3] = {2 * cols, 2 * cols * s->groups, 2 * cols * s->groups * s->seqlen};
    const uint32_t box[4] = {64, 1, 64, 1};
    return tma_map_16bit_4d(plane, true, dims, strides, box);
}

/* The first kernel of versions 17, 20 and 21: B and C split into four bf16 planes
 * at `planes` (4·split_bc_plane elements), and maps.B, maps.C of them. */
static void split_bc(const SsdTensors *t, void *planes_at, SplitMaps *maps) {
    const SsdShape *s = &t->s;
    bf16 *planes = static_cast<bf16 *>(planes_at);
    const int64_t plane = split_bc_plane(s), pairs = plane / 2;
    const int64_t blocks = min(ceil_div(pairs, 256), 8 * (int64_t)sm_count());  // grid-stride beyond
    split_bc_kernel<<<(unsigned)blocks, 256>>>(static_cast<const float *>(t->B), static_cast<const float *>(t->C),
                                               planes, s->batch * s->seqlen * s->groups, s->dstate,
                                               64 * wgmma_slabs(s));
    cuda_check_launch();
    for (int part = 0; part < 2; part++) {
        maps->B[part] = split_plane_map(planes + part * plane, s);
        maps->C[part] = split_plane_map(planes + (2 + part) * plane, s);
    }
}

template <bool PRESPLIT>
static void launch_split(const SsdTensors *t, void *workspace) {
    const SsdShape *s = &t->s;
    const int slabs = wgmma_slabs(s);
    SplitMaps maps;
    memset(&maps, 0, sizeof maps);
    maps.x = split_map(t->x, s, s->heads, s->headdim, 64);
    if (PRESPLIT) {
        split_bc(t, static_cast<char *>(workspace) + split_bc_offset(s), &maps);
    } else {
        maps.B[0] = split_map(t->B, s, s->groups, s->dstate, 64 * slabs);
        maps.C[0] = split_map(t->C, s, s->groups, s->dstate, 64 * slabs);
    }
    const size_t smem = 1024 + (size_t)(4 * slabs + 4) * WS_TILE + 4 * 64 * sizeof(float);
    void (*kernel)(WgmmaArgs, SplitMaps) =
        slabs == 2 ? ssd_wgmma_split_kernel<2, PRESPLIT> : ssd_wgmma_split_kernel<1, PRESPLIT>;
    static size_t allowed[2];  // the shared memory each kernel is opted in to
    allow_smem(kernel, smem, &allowed[slabs - 1]);
    const WgmmaArgs a = wgmma_split_args(t, workspace);
    kernel<<<(unsigned)split_items(s), 128, smem>>>(a, maps);
    cuda_check_launch();
}

extern "C" void ssd_wgmma_split_fp32(const SsdTensors *t, void *workspace) { launch_split<false>(t, workspace); }
extern "C" void ssd_wgmma_split_bc_fp32(const SsdTensors *t, void *workspace) { launch_split<true>(t, workspace); }

/* ---- Versions 20 and 21's launch: the walks of ws_place at one block an SM, after
 * split_bc_kernel. Workspace: the walks' counters and slots
 * (ws_workspace_bytes), then version 17's four planes. ---- */

WgmmaArgs wgmma_ws_args(const SsdTensors *t, void *workspace);  // wgmma.cu: version 18's arguments

static size_t ws_split_planes_offset(const SsdShape *s) { return (ws_workspace_bytes(s, 1) + 255) / 256 * 256; }
extern "C" size_t ssd_wgmma_ws_split_workspace(const SsdShape *s) {
    return ws_split_planes_offset(s) + 4 * (size_t)split_bc_plane(s) * sizeof(bf16);
}

template <int WGS>
static void launch_ws_split(const SsdTensors *t, void *workspace) {
    const SsdShape *s = &t->s;
    const int slabs = wgmma_slabs(s);
    SplitMaps maps;  // B's and C's planes; x is read by the splitters, not copied
    memset(&maps, 0, sizeof maps);
    split_bc(t, static_cast<char *>(workspace) + ws_split_planes_offset(s), &maps);
    const size_t smem = slabs == 2 ? wss_smem_bytes<2>() : wss_smem_bytes<1>();
    void (*kernel)(WgmmaArgs, SplitMaps) =
        slabs == 2 ? ssd_wgmma_ws_split_kernel<2, WGS> : ssd_wgmma_ws_split_kernel<1, WGS>;
    static size_t allowed[2];  // the shared memory each kernel is opted in to
    allow_smem(kernel, smem, &allowed[slabs - 1]);
    WgmmaArgs a = wgmma_ws_args(t, workspace);
    const int64_t items = ws_place(&a, s, workspace, 1);
    kernel<<<(unsigned)items, wss_threads<WGS>(), smem>>>(a, maps);
    cuda_check_launch();
}

extern "C" void ssd_wgmma_ws_split_fp32(const SsdTensors *t, void *workspace) { launch_ws_split<1>(t, workspace); }
extern "C" void ssd_wgmma_ws_split_2wg_fp32(const SsdTensors *t, void *workspace) { launch_ws_split<2>(t, workspace); }
