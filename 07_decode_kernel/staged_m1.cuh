/* 07_decode_kernel, GPU: versions 10-12 on Mamba-1 rows,
 * decode_staged_m1_kernel; staged.cu launches it.
 *
 * What changed from versions 6-9 on Mamba-1, whose profile at batch 256
 * (version 6) showed DRAM under half its peak with half of a warp's cycles
 * between instructions spent waiting on its loads (64 registers, 4 blocks
 * an SM: too few bytes in flight; profile.md): the state through shared
 * memory, as version 10 brings Mamba-2's.
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
 * Its choices (versions.md times each build):
 *  - S = 2 lanes a row. With 4 (one vector a lane) every lane redid its
 *    row's Δ, its loads of dt, x, z and two shuffle rounds: bound by its
 *    instructions. With 1 (the whole row in one thread's registers) few
 *    warps fit an SM and each store is half a sector: bound by latency.
 *    2 sits between, with about half the warps active. In 16 bits S = 2 is
 *    one vector a lane.
 *  - Units of 2 KiB and 2 stages: larger units were slower in 16 bits and
 *    more stages no faster.
 *  - A's rows by the unit's copy, where the threads loaded them from L2
 *    into registers: 8 registers fewer held through the wait, and 8
 *    multiplies by log2 e fewer a unit.
 *  - The fp32 state back by one bulk store a unit (whole lines). In 16 bits
 *    it was slower (a 16-bit unit is 4 warps for the second sync a unit to
 *    hold together, an fp32 one 2), so only fp32 takes it (m1_bulk_store).
 *  - Not kept: plain stores in place of the streaming ones; the state's
 *    copies marked to leave L2 first (evict_first); registers held to 48
 *    by __launch_bounds__; a unit's other inputs loaded one unit ahead (more
 *    registers, fewer blocks).
 * Its specialization: N = 16 (every Mamba-1 checkpoint), the state, A, B
 * and C 16-byte aligned. Serve: as version 10 (padding units copy nothing).
 * Bytes and exps: as versions 6 and 8.
 * ====================================================================== */
#ifndef STAGED_M1_CUH
#define STAGED_M1_CUH

#include <stdint.h>

#include "cuda_check.h"
#include "lanes.cuh"
#include "staged_ring.cuh"
#include "tma_sm90.cuh"

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

#endif  // STAGED_M1_CUH
