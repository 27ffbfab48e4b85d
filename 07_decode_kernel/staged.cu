/* 07_decode_kernel, GPU: versions 10, 11 and 12, decode_staged (fp32, 6's
 * dtypes), decode_staged_state16 (fp16 x, dt, z, B, C, y and state, 8's
 * dtypes) and decode_staged_state_bf16 (the same in bf16, 9's dtypes): the
 * state staged through shared memory by bulk asynchronous copies, two units
 * in flight per block (Mamba-2: 16 rows of a head; Mamba-1: 2 KiB of rows,
 * decode_staged_m1_kernel); as a server runs them, on a pool of state slots
 * with the state after every token. */
#include "kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_check.h"
#include "lanes.cuh"
#include "tma_sm90.cuh"

/* ========================================================================
 * Versions 10 and 11: staged
 *
 * What changed from versions 6 and 8, whose profile at M2 b 64 showed 2
 * blocks of 256 threads per SM (the registers that hold a thread's state
 * loads are the cap), warps active 23%, long-scoreboard stalls half of the
 * cycles and DRAM at 45% of its peak: a thread issues its state loads,
 * waits for all of them, computes and stores, and only then does the next
 * block's thread start to load, so each SM has its loads in flight in
 * bursts with gaps between them.
 *  - The loads no longer go through registers. A unit is 16 rows (p) of
 *    one head's state, contiguous in memory (M2 state (b, h, p, N)); one
 *    thread of the block brings a whole unit into shared memory with one
 *    bulk copy (cp.async.bulk, completing on an mbarrier), and keeps
 *    kStages = 2 units in flight while the block works on the oldest: a
 *    block walks the units blockIdx.x, blockIdx.x + gridDim.x, ...; the
 *    grid is as many blocks as fit on the SMs (persistent).
 *  - The block's 64 threads take a unit as 8 threads a row, each its K
 *    16-byte vectors of two rows, row and row + 8 (vector sub, sub + 8,
 *    ...: a warp reads 4 rows of 128 contiguous bytes, no bank conflicts),
 *    from shared memory into registers; the block then syncs, the buffer is
 *    refilled with the unit kStages ahead, and the tokens run on the
 *    registers as in 6-9 (dA once per head and token, h = h·dA + B·(Δ·x),
 *    y by 3 shuffle rounds over each row's 8 threads). The state goes back
 *    by streaming 16-byte stores (st.global.cs): stores do not wait on
 *    DRAM.
 *  - What it should buy: the state's bytes in flight per SM no longer
 *    capped by registers: 2 units of 8 KiB (fp32, N 128) or 4 KiB (fp16)
 *    per block, up to 14 blocks per SM (10 since a thread takes two rows:
 *    registers), the loads of later units running under the arithmetic
 *    and stores of the current one.
 *  - Units and stages, swept on an H200 (plots/data/07_decode_kernel_tuning.csv):
 *    the first build's 4 units of 32 rows held 3 blocks an SM (fp32; shared
 *    memory was the cap) with DRAM at 48% of its peak at batch 64. 2 units
 *    of 16 rows, the most blocks an SM, was the fastest of the 8 tried at
 *    every batch from 64 up in both dtypes: fp32 batch 64 0.0416 ms against
 *    0.0486, batch 256 0.1445 against 0.1726; fp16 batch 64 0.0264 against
 *    0.0298.
 *  - Measured bound of that build (Nsight Compute, H100, M2 b 64): fp32
 *    DRAM at 72% of peak, 54% of warps active (bytes); fp16 issue slots 63%
 *    busy (instructions: the widening, and Δ, dA once a thread).
 *  - Token 0's Δ, x, B and C are loaded before the wait for the unit's copy
 *    (EARLY), so that their loads run under it, where a block's units
 *    started with the copy's latency and then the inputs'. H100, one call
 *    (commit 29ccd37318cc, M2 S4, ms, before / after, the second of two
 *    runs each): fp32 batch 16 0.0186 / 0.0163, batch 1 0.0070 / 0.0057;
 *    fp16 batch 16 0.0127 / 0.0114, batch 64 0.0306 / 0.0295, batch 256
 *    0.1004 / 0.0993; but fp32 batch 64 and 256 2-3% slower (0.0510 /
 *    0.0521, 0.1887 / 0.1936; launch_staged says when it is used).
 *    Bringing B's and C's lines into L1 instead (prefetch.global.L1, no
 *    registers held) bought nothing at any batch in that call.
 *  - Two rows a thread (kStagedRowsAThread), which share the thread's Δ,
 *    dA, B and C: a thread held one row until Nsight Compute on the H200
 *    put the fp16 step at batch 64 at 70% of the issue slots with DRAM at
 *    39% of its peak. H200, one call (commit 2809ce501b99, M2 S4, ms, one
 *    row / two rows, the second of two runs): fp16 batch 64 0.0253 /
 *    0.0237, batch 256 0.0836 / 0.0756; fp32 batch 64 0.0407 / 0.0387,
 *    batch 256 0.1434 / 0.1465 (2% slower); batch 16 and Mamba-1 (its own
 *    kernel) unchanged. On the H100, against the one-row build in one call
 *    (commit 9096dcae35f2), it bought nothing as timed and was 2% slower at
 *    batch 256 in both dtypes: there the bytes, not the instructions, set
 *    the step's time. 16-bit N 256 (K 4) takes 165 registers a thread with
 *    two rows, about 6 blocks an SM: checked, not timed.
 * Its specialization: Mamba-2 (Mamba-1's rows, N = 16 states with A per
 * state, have their own kernel below), N a multiple of 8 vectors of 16 bytes (fp32: N =
 * 32, 64 or 128; 16-bit: 64, 128 or 256), the state, B and C 16-byte
 * aligned. Other shapes SKIP, saying why.
 * Serve (run_serving, a server's pool, decode.h): the thread that issues a
 * unit's copy looks up its batch entry's slot and copies that slot's rows;
 * a padding entry's unit (a negative slot) copies nothing and only arrives
 * on the stage's mbarrier, so the ring's phases stay in step; its y and
 * intermediate states are zeros, and no state is written. With
 * intermediate states, the registers are also stored there after every
 * token, with the same streaming stores as the final state.
 * Bytes and exps: as versions 6 and 8.
 * ====================================================================== */

constexpr int kStagedLanes = 8;                                  // threads per state row
constexpr int kStagedRows = 16;                                  // rows (p) per unit
constexpr int kStagedRowsAThread = 2;                            // rows row and row + 8 of a unit
constexpr int kStagedThreads = kStagedLanes * kStagedRows / kStagedRowsAThread;  // 64
constexpr int kStages = 2;                                       // units in flight per block

/* The ring of a persistent block, whose units are u = blockIdx.x,
 * blockIdx.x + gridDim.x, ...: thread 0 sets up the Stages barriers and,
 * the block synced, issues the block's first Stages units (issue(u, i):
 * unit u into buffer i, completing on full[i]); once every thread holds
 * unit u of buffer i, ring_refill issues the unit Stages ahead into it.
 * SPREAD (the Serve kernels, whose issue looks up a pool's slot of the unit
 * before its copy): thread i issues unit i, lanes of one warp, so that the
 * lookups are one load, not one after the other. H100, one call, commit
 * d8281457a380, batch 64 in a pool of 1024 slots, a step in a CUDA graph:
 * Mamba-2 fp16 0.0223 to 0.0203 ms, fp32 0.0317 to 0.0305-0.0308, Mamba-1
 * fp32 0.0070 to 0.0064; without a pool it was no faster, and Mamba-1 fp16
 * batch 64 slower (0.0051 to 0.0055), so only the Serve kernels spread. */
template <int Stages, bool SPREAD, typename Issue>
static __device__ __forceinline__ void ring_start(uint64_t *full, int64_t units, Issue issue) {
    if (threadIdx.x == 0)
        for (int i = 0; i < Stages; i++) mbar_init(&full[i], 1);
    __syncthreads();
    if (SPREAD) {
        const int i = (int)threadIdx.x;
        if (i < Stages && blockIdx.x + (int64_t)i * gridDim.x < units) issue(blockIdx.x + (int64_t)i * gridDim.x, i);
    } else if (threadIdx.x == 0)
        for (int i = 0; i < Stages; i++)
            if (blockIdx.x + (int64_t)i * gridDim.x < units) issue(blockIdx.x + (int64_t)i * gridDim.x, i);
}
template <int Stages, typename Issue>
static __device__ __forceinline__ void ring_refill(int64_t u, int i, int64_t units, Issue issue) {
    if (threadIdx.x == 0 && u + (int64_t)Stages * gridDim.x < units) issue(u + (int64_t)Stages * gridDim.x, i);
}

/* F: x, dt, z, B, C, y and the state, float (10), __half (11) or
 * __nv_bfloat16 (12). K: the thread's 16-byte vectors of a row,
 * N = 8·K·(16 / sizeof(F)). Serve: on pool's slots (in place, t.state ==
 * t.state_out), with pool.inter when asked. EARLY: token 0's inputs loaded
 * before the wait for the unit's copy (launch_staged says when). */
template <typename F, int K, bool Serve, bool EARLY>
__global__ void __launch_bounds__(kStagedThreads) decode_staged_kernel(DecodeTensors t, DecodePool pool, int64_t units) {
    constexpr int VE = 16 / (int)sizeof(F);  // values per 16-byte vector
    constexpr int R = kStagedRowsAThread, kRowStep = kStagedRows / R;  // the thread's rows: row + kRowStep·r
    const DecodeShape s = t.s;
    const int64_t N = (int64_t)kStagedLanes * K * VE, P = s.headdim, H = s.heads, T = s.tokens;
    const int64_t units_per_head = ceil_div(P, kStagedRows);
    const F *x = static_cast<const F *>(t.x);    // (b, T, h, p)
    const F *dt = static_cast<const F *>(t.dt);  // (b, T, h)
    const F *B = static_cast<const F *>(t.B);    // (b, T, g, N)
    const F *C = static_cast<const F *>(t.C);    // (b, T, g, N)
    const F *z = static_cast<const F *>(t.z);    // (b, T, h, p), NULL without z
    F *y = static_cast<F *>(t.y);                // (b, T, h, p), written
    const F *state = reinterpret_cast<const F *>(t.state);  // (b | slots, h, p, N)
    F *state_out = reinterpret_cast<F *>(t.state_out);     // (b | slots, h, p, N), written (may be state)
    F *inter = Serve ? static_cast<F *>(pool.inter) : nullptr;  // (b, T, h, p, N), written; NULL when not asked
    extern __shared__ __align__(128) unsigned char smem[];  // kStages x (16, N) F: units of the state
    F *stage = reinterpret_cast<F *>(smem);
    __shared__ uint64_t full[kStages];  // stage i's unit has landed
    const int64_t unit_elems = kStagedRows * N;
    const int row = threadIdx.x / kStagedLanes, sub = threadIdx.x % kStagedLanes;

    /* A unit's (b, h, p0) by 32-bit divisions (units < 2^31, the launcher's
     * limit): a 64-bit division is a call of ~70 instructions, and five of
     * them a unit cost more issue slots than the unit's arithmetic. */
    const uint32_t uph = (uint32_t)units_per_head, heads = (uint32_t)H, per_group = (uint32_t)(H / s.groups);
    /* The state head of (batch entry, head) head32 = bi·h + hi: its own, or
     * (Serve, a pool) slot_of[bi]·h + hi; -1 for a padding entry. */
    auto state_head = [&](uint32_t head32) -> int64_t {
        if (!Serve || !pool.slot_of) return head32;
        const uint32_t bi = head32 / heads;
        const int32_t slot = pool.slot_of[bi];
        return slot < 0 ? -1 : (int64_t)slot * H + (head32 - bi * heads);
    };

    /* The issuing thread (ring_start, ring_refill): unit u's rows into stage
     * buffer i (a head's last unit may be short). */
    auto issue = [&](int64_t u, int i) {
        const uint32_t head32 = (uint32_t)u / uph;
        const int64_t p0 = (int64_t)((uint32_t)u - head32 * uph) * kStagedRows;
        const int64_t rows = P - p0 < kStagedRows ? P - p0 : kStagedRows;
        const uint32_t bytes = (uint32_t)(rows * N * (int64_t)sizeof(F));
        const int64_t sh = state_head(head32);
        if (sh < 0) {  // padding: no copy; the arrival alone completes the phase
            mbar_arrive_expect_tx(&full[i], 0);
            return;
        }
        mbar_arrive_expect_tx(&full[i], bytes);
        bulk_load(stage + i * unit_elems, state + (sh * P + p0) * N, bytes, &full[i]);
    };
    ring_start<kStages, Serve>(full, units, issue);

    int64_t k = 0;
    for (int64_t u = blockIdx.x; u < units; u += gridDim.x, k++) {
        const int i = (int)(k % kStages);
        const uint32_t head32 = (uint32_t)u / uph, bi32 = head32 / heads, hi32 = head32 - bi32 * heads;
        const int64_t bi = bi32, hi = hi32, sh = state_head(head32);
        const int64_t p_row = (int64_t)((uint32_t)u - head32 * uph) * kStagedRows + row;
        auto p = [&](int r) { return p_row + kRowStep * r; };  // the thread's rows
        auto valid = [&](int r) { return p(r) < P; };
        // B = repeat(B, "b g n -> b (g h) n", h=nheads // ngroups)
        const int64_t gi = hi32 / per_group;
        const bool padding = sh < 0;
        const float A2 = t.A[hi] * LOG2E_F, D = t.D ? t.D[hi] : 0.f, bias = t.dt_bias ? t.dt_bias[hi] : 0.f;
        /* Token tok's Δ, x of the thread's rows and its vectors of B and C (sub, sub + 8, ...);
         * EARLY, token 0's are loaded before the wait for the unit's copy, so that their loads
         * run under it. */
        float delta = 0.f, xv[R] = {}, Bv[K][VE], Cv[K][VE];
        auto load_token = [&](int64_t tok) {
            delta = delta_poly(to_float(dt[(bi * T + tok) * H + hi]), bias, s.softplus);
#pragma unroll
            for (int r = 0; r < R; r++) xv[r] = valid(r) ? to_float(x[((bi * T + tok) * H + hi) * P + p(r)]) : 0.f;
            const F *Bt = B + ((bi * T + tok) * s.groups + gi) * N, *Ct = C + ((bi * T + tok) * s.groups + gi) * N;
#pragma unroll
            for (int v = 0; v < K; v++) {
                load_vec(Bt + (v * kStagedLanes + sub) * VE, Bv[v]);
                load_vec(Ct + (v * kStagedLanes + sub) * VE, Cv[v]);
            }
        };
        if (EARLY && T > 0) load_token(0);
        float h[R][K][VE];  // the thread's states of its rows: vectors sub, sub + 8, ...
        // row r's vectors to dst, the start of that row's (N) state in device memory
        auto store_row = [&](F *dst, int r) {
#pragma unroll
            for (int v = 0; v < K; v++) store_stream(dst + (v * kStagedLanes + sub) * VE, h[r][v]);
        };
        mbar_wait(&full[i], (uint32_t)((k / kStages) & 1));
#pragma unroll
        for (int r = 0; r < R; r++)
#pragma unroll
            for (int v = 0; v < K; v++) {
                if (valid(r) && !padding)
                    load_vec(stage + i * unit_elems + (row + kRowStep * r) * N + (v * kStagedLanes + sub) * VE, h[r][v]);
                else
#pragma unroll
                    for (int e = 0; e < VE; e++) h[r][v][e] = 0.f;
            }
        __syncthreads();  // every thread holds its rows: buffer i takes the unit kStages ahead
        ring_refill<kStages>(u, i, units, issue);

        for (int64_t tok = 0; tok < T; tok++) {
            const int64_t at0 = ((bi * T + tok) * H + hi) * P;  // x, z, y of row p: at0 + p
            if (Serve && padding) {  // y and the intermediate states zeros (h holds zeros)
#pragma unroll
                for (int r = 0; r < R; r++) {
                    if (sub == 0 && valid(r)) y[at0 + p(r)] = from_float<F>(0.f);
                    if (inter && valid(r)) store_row(inter + (at0 + p(r)) * N, r);
                }
                continue;
            }
            if (!EARLY || tok > 0) load_token(tok);
            // dA = torch.exp(rearrange(dt, "b h d -> b h d 1") * A)
            const float dA = exp2_approx(delta * A2);
#pragma unroll
            for (int r = 0; r < R; r++) {
                const float dx = delta * xv[r];
                float acc = 0.f;
#pragma unroll
                for (int v = 0; v < K; v++)
#pragma unroll
                    for (int e = 0; e < VE; e++) {
                        // state.copy_(state * dA + dB * rearrange(x, "b h d -> b h d 1")), dB = dt·B: as B·(dt·x)
                        h[r][v][e] = fmaf(Bv[v][e], dx, h[r][v][e] * dA);
                        // out = torch.einsum("bhdn,bhn->bhd", state.to(C.dtype), C)
                        acc = fmaf(h[r][v][e], Cv[v][e], acc);
                    }
#pragma unroll
                for (int off = kStagedLanes / 2; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
                if (sub == 0 && valid(r)) {
                    // out += (x * D).to(out.dtype)
                    float out = acc + xv[r] * D;
                    // return (out if z is None else out * F.silu(z)).to(x.dtype)
                    if (z) out *= silu(to_float(z[at0 + p(r)]));
                    y[at0 + p(r)] = from_float<F>(out);
                }
                if (Serve && inter && valid(r)) store_row(inter + (at0 + p(r)) * N, r);
            }
        }
        if (!padding)
#pragma unroll
            for (int r = 0; r < R; r++)
                if (valid(r)) store_row(state_out + (sh * P + p(r)) * N, r);
    }
}

/* ========================================================================
 * Versions 10-12 on Mamba-1 rows: decode_staged_m1_kernel
 *
 * What changed from versions 6-9 on Mamba-1, whose profile at batch 256
 * (H100, version 6) showed DRAM at 43% of its peak with 6.5 of a warp's
 * 12.8 cycles between instructions waiting on its loads (64 registers, 4
 * blocks an SM: too few bytes in flight): the state through shared memory,
 * as version 10 brings Mamba-2's.
 *  - A unit is 2 KiB of the state's rows (m1_unit_rows: 32 fp32 rows, 64
 *    16-bit) of one batch entry, contiguous in the state (M1 (b, d, N)),
 *    and the same rows of A ((d, N) fp32, contiguous too): two bulk copies
 *    on one mbarrier, kM1Stages in flight a block, version 10's ring.
 *  - S = 2 threads a row: a Mamba-1 row is N = 16 states, 4 16-byte
 *    vectors in fp32, 2 in 16 bits; lane sub takes vectors sub, sub + 2 in
 *    fp32, vector sub in 16 bits, so the two lanes of a row store whole
 *    32-byte sectors, and y is one shuffle round.
 *  - What a unit needs besides the state and A (dt_bias, D, and token 0's
 *    dt, x, z, B and C) is loaded before the thread waits for the unit's
 *    copy, so that the two are in flight together.
 *  - An fp32 state goes back the way it came: the threads write the
 *    unit's new state into shared memory (unit_out), the block syncs once
 *    more a unit, and one thread stores the unit with one bulk store
 *    (cp.async.bulk, whole lines) where each thread issued two 16-byte
 *    streaming stores to device memory; that thread waits until the store
 *    has read the buffer before the block writes the next unit's.
 * What it should buy: the state's loads no longer capped by registers, as
 * in version 10 for Mamba-2.
 * Lanes a row, each build in one device call (H100, commit 209fb8be3270,
 * fp32 state, batch 64 / 256, ms, second of two runs each):
 *  - S = 4 (one vector a lane, the first build: 40 registers, 12 blocks of
 *    128 an SM), 0.0123 / 0.0329. Every lane redid its row's Δ, loads of
 *    dt, x, z and two shuffle rounds: 17.2 M warp instructions at batch
 *    256, the schedulers issuing on 73% of cycles, DRAM at 53% of its
 *    peak.
 *  - S = 1 (the whole row in one thread's registers, 94 registers):
 *    0.0144 / 0.0355. 7.6 M instructions, but 20 warps an SM (29% active),
 *    each store a half sector, and DRAM at 52%: latency.
 *  - S = 2 (56 registers, 18 blocks of 64 an SM): 0.0122 / 0.0326. 11.6 M
 *    instructions, issue 66%, DRAM 64%, 51% of warps active. Units of 4
 *    KiB: 0.0122 / 0.0322 in fp32, but 16-bit batch 256 0.0221 against
 *    0.0209, so 2 KiB stays.
 *    In 16 bits S = 2 is the first build's layout (one vector a lane);
 *    S = 1 was 3% slower there (batch 256 0.0215).
 *  - A's rows by the unit's copy, where S = 2's threads loaded them from
 *    L2 into registers (8 more held through the wait, and 8 multiplies by
 *    log2 e a unit): fp16 batch 64 0.0098 to 0.0094; fp32 batch 256 the
 *    same within the noise, 0.0326 and 0.0325 (commit a2544fca735e, one
 *    call, second runs). 11.4 M instructions, issue 64%, DRAM 65%. With 3
 *    stages, fp32 batch 256 0.0336. Held to 48 registers (__launch_bounds__
 *    for 40 warps an SM, a few bytes spilled): fp32 batch 256 0.0336
 *    against 0.0324, fp16 batch 64 0.0098 against 0.0094 (commit
 *    01570017d1b1, one call).
 *  - The bulk store against the threads' streaming stores (H100, commits
 *    c5abfb509b84 and b342daa6e69a, second runs): fp32 batch 64 0.0119
 *    against 0.0120, batch 256 0.0321 against 0.0324 in one call, 0.0322
 *    against 0.0326 in the next. Nsight Compute in the first call (whose
 *    build put A's rows first in shared memory): 24.3 against 25.1 us,
 *    DRAM 68% against 64% of its peak, 11.2 M instructions against 11.4 M;
 *    the committed build in the next call 24.4 us, DRAM 67%. In 16 bits it was slower, batch
 *    64 0.0100 against 0.0095, batch 256 0.0216 against 0.0208 (not
 *    profiled; a 16-bit unit is 4 warps for the second sync a unit to hold
 *    together, an fp32 one 2), so only fp32 takes it (m1_bulk_store).
 *    Plain stores in place of the streaming ones: fp32 batch 256 0.0352.
 *    The state's copies marked to leave L2 first (an evict_first cache
 *    policy): fp32 unchanged (0.0323), fp16 batch 256 0.0203 against
 *    0.0208 (one call, commit b342daa6e69a); not kept: no change where a
 *    target is missed (fp32), and the 16-bit targets are met without it.
 * The Nsight Compute figures of S = 4 and S = 1 are from the call before,
 * at batch 256 (0.0316 and 0.0312 ms under the profiler).
 * Units and stages, swept with S = 4 (H100, batch 16, 64 and 256, fp32
 * and fp16 states, each sweep in one device call): units of 2 KiB with 2
 * stages, fp32 batch 256 0.0335 ms against 0.0359 (4 KiB) and 0.0420 (8
 * KiB; 3 or 4 stages no faster). Loading a unit's other inputs one unit
 * ahead, in registers while the unit before computes, was within 3% in
 * fp32 and up to 21% slower in 16 bits (87 registers a thread: 5 blocks
 * an SM): not kept.
 * Its specialization: N = 16 (every Mamba-1 checkpoint), the state, A, B
 * and C 16-byte aligned. Serve: as version 10 (padding units copy nothing).
 * Bytes and exps: as versions 6 and 8.
 * ====================================================================== */

constexpr int kM1State = 16;  // N of a Mamba-1 row
constexpr int kM1Lanes = 2;   // S: threads a row
constexpr int kM1Stages = 2;  // units in flight per block

/* Rows of a unit (2 KiB), for a state of value_bytes a value; a block is S threads a row. */
static __host__ __device__ constexpr int m1_unit_rows(int value_bytes) { return 2048 / (kM1State * value_bytes); }
/* An fp32 state goes back through shared memory by one bulk store a unit;
 * a 16-bit state by the threads' streaming stores (the kernel's comment says why). */
static __host__ __device__ constexpr bool m1_bulk_store(size_t value_bytes) { return value_bytes == 4; }
/* A block's shared memory: kM1Stages units of the state and of A, and (fp32) the bulk store's unit. */
static constexpr size_t m1_smem_bytes(size_t value_bytes) {
    return ((size_t)kM1Stages * (value_bytes + sizeof(float)) + (m1_bulk_store(value_bytes) ? value_bytes : 0)) *
           (size_t)m1_unit_rows((int)value_bytes) * kM1State;
}

/* What a thread needs of a unit besides its rows of the state and A: its
 * row's dt_bias and D; and of the current token its row's dt, x and z, and
 * B and C, in vectors of 16 bytes (VE values) in the thread's order
 * (rotated, see the kernel). */
template <int KV, int VE>
struct M1Inputs {
    bool valid;  // the row exists
    float bias, D, dt, x, z;
    float B[KV][VE], C[KV][VE];
};

template <typename F, bool Serve>
__global__ void __launch_bounds__(m1_unit_rows(sizeof(F)) * kM1Lanes) decode_staged_m1_kernel(DecodeTensors t, DecodePool pool, int64_t units) {
    constexpr int N = kM1State, VE = 16 / (int)sizeof(F), NV = N / VE;  // values per 16-byte vector, vectors per row
    constexpr int S = kM1Lanes, KV = NV / S;                             // threads a row, vectors a thread
    constexpr int kRows = m1_unit_rows((int)sizeof(F));                  // a unit's rows
    const DecodeShape s = t.s;
    const int64_t d = s.dim, T = s.tokens;
    const F *x = static_cast<const F *>(t.x);    // (b, T, d)
    const F *dt = static_cast<const F *>(t.dt);  // (b, T, d)
    const F *B = static_cast<const F *>(t.B);    // (b, T, N)
    const F *C = static_cast<const F *>(t.C);    // (b, T, N)
    const F *z = static_cast<const F *>(t.z);    // (b, T, d), NULL without z
    F *y = static_cast<F *>(t.y);                // (b, T, d), written
    const F *state = reinterpret_cast<const F *>(t.state);  // (b | slots, d, N)
    F *state_out = reinterpret_cast<F *>(t.state_out);     // (b | slots, d, N), written (may be state)
    F *inter = Serve ? static_cast<F *>(pool.inter) : nullptr;  // (b, T, d, N), written; NULL when not asked
    constexpr bool kBulkStore = m1_bulk_store(sizeof(F));  // the new state back by one bulk store a unit
    /* kM1Stages x (kRows, N) F, kM1Stages x (kRows, N) fp32, and with kBulkStore (kRows, N) F */
    extern __shared__ __align__(128) unsigned char smem[];
    F *stage = reinterpret_cast<F *>(smem);                                     // units of the state
    float *stage_A = reinterpret_cast<float *>(stage + kM1Stages * kRows * N);  // the same rows of A
    F *unit_out = reinterpret_cast<F *>(stage_A + kM1Stages * kRows * N);       // kBulkStore: the unit's new state
    __shared__ uint64_t full[kM1Stages];  // stage i's unit has landed
    const int row = threadIdx.x / S, sub = threadIdx.x % S;  // the thread's row in a unit, its lane of the row
    /* The thread's vectors of its row are sub, sub + S, ...: the S lanes of
     * a row store whole 32-byte sectors. It takes them in the order
     * q(v) = sub + S·((v + rot) % KV): the 8 threads of a quarter warp,
     * whose 16-byte reads share one pass of the banks, then read 8
     * different bank groups (rows of 64 bytes in fp32, 32 in 16 bits). */
    const int rot = (row * NV / 8) % KV;
    auto q_of = [&](int v) { return sub + S * ((v + rot) % KV); };
    const uint32_t upb = (uint32_t)ceil_div(d, (int64_t)kRows);  // units per batch entry

    /* The state entry of batch entry bi: its own, or (Serve, a pool) its slot; -1 for padding. */
    auto state_entry = [&](uint32_t bi) -> int64_t {
        if (!Serve || !pool.slot_of) return bi;
        const int32_t slot = pool.slot_of[bi];
        return slot < 0 ? -1 : slot;
    };
    /* The issuing thread (ring_start, ring_refill): unit u's rows into stage
     * buffer i (a batch entry's last unit may be short). */
    auto issue = [&](int64_t u, int i) {
        const uint32_t bi = (uint32_t)u / upb;
        const int64_t c0 = (int64_t)((uint32_t)u - bi * upb) * kRows;
        const int64_t rows = d - c0 < kRows ? d - c0 : kRows;
        const int64_t se = state_entry(bi);
        if (se < 0) {  // padding: no copy; the arrival alone completes the phase
            mbar_arrive_expect_tx(&full[i], 0);
            return;
        }
        const uint32_t bytes = (uint32_t)(rows * N * (int64_t)sizeof(F)), bytes_A = (uint32_t)(rows * N * 4);
        mbar_arrive_expect_tx(&full[i], bytes + bytes_A);
        bulk_load(stage + i * kRows * N, state + (se * d + c0) * N, bytes, &full[i]);
        bulk_load(stage_A + i * kRows * N, t.A + c0 * N, bytes_A, &full[i]);
    };
    /* Token tok's inputs of batch entry bi's row c (0 for a row past d). */
    auto load_token = [&](int64_t bi, int64_t c, int64_t tok, M1Inputs<KV, VE> &in) {
        const int64_t at = (bi * T + tok) * d + c;  // x, dt, z
        in.dt = in.valid ? to_float(dt[at]) : 0.f;
        in.x = in.valid ? to_float(x[at]) : 0.f;
        in.z = in.valid && z ? to_float(z[at]) : 0.f;
#pragma unroll
        for (int v = 0; v < KV; v++) {
            load_vec(B + (bi * T + tok) * N + q_of(v) * VE, in.B[v]);
            load_vec(C + (bi * T + tok) * N + q_of(v) * VE, in.C[v]);
        }
    };
    /* The thread's inputs of batch entry bi's row c, and token 0's. */
    auto load_inputs = [&](int64_t bi, int64_t c, M1Inputs<KV, VE> &in) {
        const bool ok = in.valid = c < d;
        in.bias = ok && t.dt_bias ? t.dt_bias[c] : 0.f;
        in.D = ok && t.D ? t.D[c] : 0.f;
        load_token(bi, c, 0, in);
    };

    ring_start<kM1Stages, Serve>(full, units, issue);

    int64_t k = 0;
    for (int64_t u = blockIdx.x; u < units; u += gridDim.x, k++) {
        const int i = (int)(k % kM1Stages);
        const uint32_t bi32 = (uint32_t)u / upb;
        const int64_t bi = bi32, se = state_entry(bi32);
        const int64_t c = (int64_t)((uint32_t)u - bi32 * upb) * kRows + row;  // the thread's row (channel)
        const bool padding = se < 0;
        M1Inputs<KV, VE> in;  // loaded before the wait: these loads and the unit's copy are in flight together
        load_inputs(bi, c, in);
        float h[KV][VE], Av[KV][VE];  // the thread's vectors of its row of the state and of A: [v] holds vector q_of(v)
        mbar_wait(&full[i], (uint32_t)((k / kM1Stages) & 1));
#pragma unroll
        for (int v = 0; v < KV; v++) {
            if (in.valid && !padding) {
                load_vec(stage + i * kRows * N + row * N + q_of(v) * VE, h[v]);
#pragma unroll
                for (int e = 0; e < VE; e += 4) {
                    float a4[4];
                    load_vec(stage_A + i * kRows * N + row * N + q_of(v) * VE + e, a4);
#pragma unroll
                    for (int w = 0; w < 4; w++) Av[v][e + w] = a4[w];
                }
            } else
#pragma unroll
                for (int e = 0; e < VE; e++) h[v][e] = Av[v][e] = 0.f;
        }
        if (kBulkStore && threadIdx.x == 0) tma_store_wait<true>();  // the unit before's store has read unit_out
        __syncthreads();  // every thread holds its row: buffer i takes the unit kM1Stages ahead, unit_out is free
        ring_refill<kM1Stages>(u, i, units, issue);

        for (int64_t tok = 0; tok < T; tok++) {
            const int64_t at = (bi * T + tok) * d + c;  // x, dt, z, y
            F *inter_row = Serve && inter && in.valid ? inter + at * N : nullptr;
            if (Serve && padding) {  // y and the intermediate states zeros (h holds zeros)
                if (sub == 0 && in.valid) y[at] = from_float<F>(0.f);
                if (inter_row)
#pragma unroll
                    for (int v = 0; v < KV; v++) store_stream(inter_row + q_of(v) * VE, h[v]);
                continue;
            }
            if (tok > 0) load_token(bi, c, tok, in);  // token 0's came with the unit's
            const float delta = in.valid ? delta_poly(in.dt, in.bias, s.softplus) : 0.f;
            const float dx = delta * in.x, d2 = delta * LOG2E_F;
            float acc = 0.f;  // the lane's share of y
#pragma unroll
            for (int v = 0; v < KV; v++)
#pragma unroll
                for (int e = 0; e < VE; e++) {
                    // dA = torch.exp(rearrange(dt, "b d -> b d 1") * A)
                    const float dA = exp2_approx(d2 * Av[v][e]);
                    // state.copy_(state * dA + dB * rearrange(x, "b d -> b d 1")), dB = dt·B: as B·(dt·x)
                    h[v][e] = fmaf(in.B[v][e], dx, h[v][e] * dA);
                    // out = torch.einsum("bdn,bn->bd", state.to(C.dtype), C)
                    acc = fmaf(h[v][e], in.C[v][e], acc);
                }
#pragma unroll
            for (int off = S / 2; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
            if (sub == 0 && in.valid) {
                // out += (x * D).to(out.dtype)
                float out = acc + in.x * in.D;
                // return (out if z is None else out * F.silu(z)).to(x.dtype)
                if (z) out *= silu(in.z);
                y[at] = from_float<F>(out);
            }
            if (inter_row)
#pragma unroll
                for (int v = 0; v < KV; v++) store_stream(inter_row + q_of(v) * VE, h[v]);
        }
        if (padding) continue;  // uniform over the block: a unit is one batch entry's
        if constexpr (kBulkStore) {
            if (in.valid)
#pragma unroll
                for (int v = 0; v < KV; v++) store_vec(unit_out + row * N + q_of(v) * VE, h[v]);
            fence_async_smem();
            __syncthreads();  // the unit's new state is in unit_out
            if (threadIdx.x == 0) {
                const int64_t c0 = c - row, rows = d - c0 < kRows ? d - c0 : kRows;
                bulk_store(state_out + (se * d + c0) * N, unit_out, (uint32_t)(rows * N * (int64_t)sizeof(F)));
            }
        } else if (in.valid)
#pragma unroll
            for (int v = 0; v < KV; v++) store_stream(state_out + (se * d + c) * N + q_of(v) * VE, h[v]);
    }
    if (kBulkStore && threadIdx.x == 0) tma_store_wait<false>();  // the last store is done before the block exits
}

/* ---- Host side of versions 10, 11 and 12 ---- */

/* K for N, or 0 where the kernel is not built for it. */
static int staged_k(int64_t N, size_t value_bytes) {
    const int64_t per_k = kStagedLanes * (16 / (int64_t)value_bytes);  // N of one vector per thread
    if (N % per_k != 0) return 0;
    const int64_t k = N / per_k;
    return k == 1 || k == 2 || k == 4 ? (int)k : 0;
}

static const char *staged_unsupported(const DecodeShape *s, size_t value_bytes) {
    if (s->form == DECODE_M1) {
        if (s->dstate != kM1State) return "Mamba-1 rows are built for N = 16 (every Mamba-1 checkpoint; versions 6-9 take any N)";
        if (s->batch * ceil_div(s->dim, (int64_t)m1_unit_rows((int)value_bytes)) > INT32_MAX)
            return "more than 2^31 - 1 units of rows (their indices are 32-bit)";
        return NULL;
    }
    if (!staged_k(s->dstate, value_bytes))
        return value_bytes == 4 ? "N must be 32, 64 or 128 (8 threads a row, 1, 2 or 4 vectors of 4 floats each)"
                                : "N must be 64, 128 or 256 (8 threads a row, 1, 2 or 4 vectors of 8 16-bit values each)";
    if (s->batch * s->heads * ceil_div(s->headdim, kStagedRows) > INT32_MAX)
        return "more than 2^31 - 1 units of 16 rows (their indices are 32-bit)";
    return NULL;
}

extern "C" const char *decode_staged_unsupported(const DecodeShape *s) { return staged_unsupported(s, 4); }
extern "C" const char *decode_staged_state16_unsupported(const DecodeShape *s) { return staged_unsupported(s, 2); }

/* The state, the intermediate states, B, C (and Mamba-1's A) 16-byte aligned, or exit 2. */
static void check_staged_alignment(const DecodeTensors *t, const void *inter) {
    if (!aligned(t->state, 16) || !aligned(t->state_out, 16) || !aligned(t->B, 16) || !aligned(t->C, 16) ||
        !aligned(inter, 16) || (t->s.form == DECODE_M1 && !aligned(t->A, 16))) {
        fprintf(stderr, "decode_staged: the state, the intermediate states, B, C and (Mamba-1) A must be 16-byte "
                        "aligned (bulk copies, 16-byte loads and stores)\n");
        exit(2);
    }
}

/* A kernel's launch facts, found at its first launch: each kernel's shared
 * memory is fixed by its template arguments (N by K, the unit by F). */
struct PersistentFit {
    size_t allowed;  // the shared memory it is opted in to
    int64_t fit;     // its blocks that fit on the SMs at once; 0 until found
};

/* Blocks of kernel k (`threads` each, smem bytes of shared memory, opted
 * in) that fit on the SMs at once, asked once a kernel (c). */
template <typename Kernel>
static int64_t persistent_fit(Kernel k, int threads, size_t smem, PersistentFit *c) {
    if (c->fit == 0) {
        allow_smem(k, smem, &c->allowed);
        int per_sm = 0;
        cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, smem));
        c->fit = (int64_t)(per_sm > 0 ? per_sm : 1) * sm_count();
    }
    return c->fit;
}

/* Kernel k over `units` units: blocks of `threads`, as many as fit on the
 * SMs with smem bytes of shared memory each (persistent). */
template <typename Kernel>
static void launch_persistent(Kernel k, int threads, const DecodeTensors *t, DecodePool pool, int64_t units,
                              size_t smem, PersistentFit *c) {
    check_staged_alignment(t, pool.inter);
    const int64_t fit = persistent_fit(k, threads, smem, c);
    const unsigned grid = (unsigned)(units < fit ? units : fit);
    k<<<grid, threads, smem>>>(*t, pool, units);
    cuda_check_launch();
}

/* Token 0's inputs loaded early hold B's and C's vectors in registers
 * through the wait. Measured with one row a thread (72 registers a thread
 * against 56 at N 128: 7 blocks an SM against 9): in 16 bits that was
 * faster at every batch timed (H100, batch 1 to 256); in fp32 only where
 * the units are few, and with more the blocks it cost slowed batch 64 and
 * 256 by 2-3%. With two rows a thread both fp32 kernels fit 10 blocks an
 * SM (94 and 96 registers at N 128), and the early kernel is faster up to
 * a few units a block (H200, one call, M2 S4, ms, three runs each, without
 * / with, medians: batch 24, 2.3 units a block, 0.01813 / 0.01765;
 * batch 32, 3.1, 0.02218 / 0.02194) and slower at 6.2 (batch 64: 0.0384 /
 * 0.03878); at batch 128 and 256 they are within 0.5%. So fp32 loads early
 * where the units number at most kEarlyUnitsABlock for each block the
 * kernel without it fits (batch 41 and below at S4). */
constexpr int64_t kEarlyUnitsABlock = 4;

template <typename F, int K, bool Serve>
static void launch_staged(const DecodeTensors *t, DecodePool pool) {
    const DecodeShape *s = &t->s;
    const int64_t units = s->batch * s->heads * ceil_div(s->headdim, kStagedRows);
    const size_t smem = (size_t)kStages * kStagedRows * s->dstate * sizeof(F);
    static PersistentFit plain, early;  // the kernels without and with EARLY
    if constexpr (sizeof(F) == 4) {
        if (units > kEarlyUnitsABlock * persistent_fit(decode_staged_kernel<F, K, Serve, false>, kStagedThreads, smem, &plain)) {
            launch_persistent(decode_staged_kernel<F, K, Serve, false>, kStagedThreads, t, pool, units, smem, &plain);
            return;
        }
    }
    launch_persistent(decode_staged_kernel<F, K, Serve, true>, kStagedThreads, t, pool, units, smem, &early);
}

template <typename F, bool Serve>
static void launch_staged_m1(const DecodeTensors *t, DecodePool pool) {
    constexpr int64_t rows = m1_unit_rows((int)sizeof(F));
    static PersistentFit c;
    launch_persistent(decode_staged_m1_kernel<F, Serve>, (int)rows * kM1Lanes, t, pool, t->s.batch * ceil_div(t->s.dim, rows),
                      m1_smem_bytes(sizeof(F)), &c);
}

template <typename F, bool Serve>
static void run_staged(const DecodeTensors *t, DecodePool pool) {
    if (t->s.form == DECODE_M1) {
        launch_staged_m1<F, Serve>(t, pool);
        return;
    }
    switch (staged_k(t->s.dstate, sizeof(F))) {
    case 1: launch_staged<F, 1, Serve>(t, pool); break;
    case 2: launch_staged<F, 2, Serve>(t, pool); break;
    case 4: launch_staged<F, 4, Serve>(t, pool); break;
    default: fprintf(stderr, "decode_staged: N = %lld is not built\n", (long long)t->s.dstate); exit(2);
    }
}

/* As a server runs them: in place on the pool (pool_in_place, lanes.cuh). */
template <typename F>
static void staged_serving(const DecodeServing *sv) {
    const DecodeTensors t = pool_in_place(sv, sizeof(F));
    run_staged<F, true>(&t, DecodePool{sv->state_batch_indices, sv->intermediate_states});
}

extern "C" void decode_staged(const DecodeTensors *t, void *workspace) {
    (void)workspace;
    run_staged<float, false>(t, DecodePool{});
}

extern "C" void decode_staged_state16(const DecodeTensors *t, void *workspace) {
    (void)workspace;
    run_staged<__half, false>(t, DecodePool{});
}

/* ---- Version 12: version 11 in bf16 ----
 *
 * What changed: x, dt, z, B, C, y and the state in bf16, widened and
 * rounded (to nearest even) by the pair trait, as version 9 does to 8.
 * What it should buy: a bf16 model's step at version 11's time (the same
 * bytes), where version 9 is the bf16 step without staging. Its check: the
 * bf16 decode tolerance (version 9's). */
extern "C" void decode_staged_state_bf16(const DecodeTensors *t, void *workspace) {
    (void)workspace;
    run_staged<__nv_bfloat16, false>(t, DecodePool{});
}

extern "C" void decode_staged_serving(const DecodeServing *sv, void *workspace) {
    (void)workspace;
    staged_serving<float>(sv);
}
extern "C" void decode_staged_state16_serving(const DecodeServing *sv, void *workspace) {
    (void)workspace;
    staged_serving<__half>(sv);
}
extern "C" void decode_staged_state_bf16_serving(const DecodeServing *sv, void *workspace) {
    (void)workspace;
    staged_serving<__nv_bfloat16>(sv);
}
