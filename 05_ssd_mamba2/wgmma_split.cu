/* 05_ssd_mamba2, GPU, versions 16-17 and 20-21: fp32 inputs and outputs on
 * 16-bit tensor cores with fp32-grade accuracy (sm_90a).
 *  16 ssd_wgmma_split_fp32         every operand split in the block (below)
 *  17 ssd_wgmma_split_bc_fp32      B and C split once, before the kernel
 *  20 ssd_wgmma_ws_split_fp32      version 18's walk on 17's split operands
 *  21 ssd_wgmma_ws_split_2wg_fp32  version 20 with two computing warpgroups
 * This file holds versions 16 and 17, split_bc_kernel and the launchers of
 * all four; the split tiles they share are in wgmma_split_tiles.cuh, the
 * device code of versions 20 and 21 in wgmma_ws_split.cuh.
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
 * C·S_in, 24 for C·Bᵀ, 12 for P·x; 11 MFLOP, 3.5·10^11 at S3 b 8 L 8192.
 * Splitting costs each thread 40 float4 reads and 80 8-byte writes of
 * shared memory a chunk and six instructions a pair, and the state
 * product's B fragments are rebuilt (hi + lo, times w_j) and split again. Bytes: x, B, C, z read once and y written once in fp32,
 * twice version 12's. The split's scalar work, with two blocks of one
 * warpgroup an SM (shared memory allows no more), leaves too few warps to
 * hide its issue and latency: that, not the tensor cores, bounds it
 * (versions.md, tuning.md).
 *
 * Version 17: with g groups of h/g heads, version 16 splits each B and C
 * tile h/g times (32 at S3), once in each head's block, 32 of the 40 float4 a
 * thread splits. A first kernel (split_bc_kernel) splits B and C once into
 * bf16 hi and lo planes in the workspace, rows padded to 64·SLABS columns,
 * and the blocks bring those slabs by swizzled bulk copies straight into
 * their tiles, as version 12 brings its fp16 ones. It costs the planes'
 * write and read, 4 bytes an element of B and C (134 MB at S3 b 8 L 8192),
 * and their memory: 4·b·L·g·64·SLABS·2 bytes. What it should buy: fewer
 * instructions a chunk. It keeps version 16's chain of phases in one
 * warpgroup, so the latency that bounds 16 bounds it too: it should gain
 * only where the split, not the chain, sets the time, and it pays the first
 * kernel's pass everywhere (long L at batch 1, or N small, is where it can
 * win). */
#include "kernels.h"

#include <limits.h>
#include <string.h>

#include "cuda_check.h"
#include "launch.cuh"
#include "wgmma_split_tiles.cuh"
#include "wgmma_ws_split.cuh"

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
