/* 07_decode_kernel, GPU: versions 10, 11 and 12, decode_staged (fp32, 6's
 * dtypes), decode_staged_state16 (fp16 x, dt, z, B, C, y and state, 8's
 * dtypes) and decode_staged_state_bf16 (the same in bf16, 9's dtypes): the
 * state staged through shared memory by bulk asynchronous copies, two units
 * in flight per block (Mamba-2: 16 rows of a head; Mamba-1: 2 KiB of rows,
 * decode_staged_m1_kernel); as a server runs them, on a pool of state slots
 * with the state after every token. Mamba-1's kernel is in staged_m1.cuh,
 * the persistent grid and its ring in staged_ring.cuh. */
#include "kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_check.h"
#include "lanes.cuh"
#include "staged_m1.cuh"
#include "staged_ring.cuh"
#include "tma_sm90.cuh"

/* ========================================================================
 * Versions 10 and 11: staged
 *
 * What changed from versions 6 and 8, whose profile at M2 b 64 showed 2
 * blocks of 256 threads per SM (the registers that hold a thread's state
 * loads are the cap), few warps active, long-scoreboard stalls leading and
 * DRAM under half its peak (profile.md): a thread issues its state loads,
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
 *  - Units and stages: 2 units of 16 rows, the most blocks an SM. The
 *    first build's 4 units of 32 rows held 3 blocks an SM (fp32: shared
 *    memory was the cap); 2 of 16 was the fastest of the 8 layouts swept,
 *    at every batch from 64 up in both dtypes (versions.md).
 *  - Token 0's Δ, x, B and C are loaded before the wait for the unit's copy
 *    (EARLY), so that their loads run under it, where a block's units
 *    started with the copy's latency and then the inputs'. It pays where a
 *    block has few units; B's and C's vectors held through the wait cost
 *    registers, and so blocks, where it has many (launch_staged says when
 *    it is used). Bringing B's and C's lines into L1 instead
 *    (prefetch.global.L1, no registers held) bought nothing (versions.md).
 *  - Two rows a thread (kStagedRowsAThread), which share the thread's Δ,
 *    dA, B and C: with one row a thread the 16-bit step was bound by its
 *    instructions (Δ, dA and the widening repeated for each row). Where the
 *    bytes, not the instructions, set the step's time, it buys nothing
 *    (versions.md). 16-bit N 256 (K 4) takes 165 registers a thread with
 *    two rows, about 6 blocks an SM: checked, not timed.
 * Its specialization: Mamba-2 (Mamba-1's rows, N = 16 states with A per
 * state, have their own kernel in staged_m1.cuh), N a multiple of 8 vectors of 16 bytes (fp32: N =
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

/* Token 0's inputs loaded early hold B's and C's vectors in registers
 * through the wait. In 16 bits that pays at every batch. In fp32, with two
 * rows a thread, the kernels with and without it fit as many blocks an SM,
 * and the early kernel is faster up to a few units a block and slower with
 * more (versions.md). So fp32 loads early where the units number at most
 * kEarlyUnitsABlock for each block the kernel without it fits (batch 41
 * and below at S4). */
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
    const DecodeTensors t = pool_in_place(sv, (size_t)decode_pool_values(sv) * sizeof(F));
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
