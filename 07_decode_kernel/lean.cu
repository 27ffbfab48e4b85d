/* 07_decode_kernel, GPU: versions 6-9, decode_lean (fp32 I/O), decode_lean_fp16
 * (fp16 I/O), decode_lean_state16 (7 with the state stored in fp16) and
 * decode_lean_state_bf16 (8 in bf16): fewer instructions per byte and the
 * state streamed, on the lanes of versions 4-5. */
#include "kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "cuda_check.h"
#include "lanes.cuh"
#include "mamba2_io.cuh"

/* ========================================================================
 * Versions 6 and 7: lean (decode_lean fp32 I/O, decode_lean_fp16 fp16 I/O)
 *
 * What changed from version 4, whose profile at M2 b 64 showed the issue
 * slots busy while DRAM ran under half its peak (every thread redid the head's
 * libm softplus and expf per token; 32 lanes per row, 5 shuffle rounds per
 * row), and at M1 b 64 124 registers, 2 blocks per SM, latency-bound
 * (profile.md):
 *  - Fewer instructions per byte. Δ by one MUFU ex2 and a polynomial log1p
 *    (03's version 7), dA by ex2 on Δ·log2 e (M2: once per thread and
 *    token; M1: per element, Δ·log2 e once per row), Δ·x once per row: an
 *    element costs a multiply and two FMAs (M1: plus a multiply and an ex2).
 *    Offsets are formed once per block, a thread's row j is row 0's plus j
 *    steps: about a third of version 4's warp instructions (profile.md).
 *  - Longer pieces per lane: K = 4 vectors (16 floats) of a row above 16
 *    vectors per row, so M2 N 128 takes 8 lanes per row, not 32 (3 shuffle
 *    rounds, not 5), and R = 2 rows per thread: 8 state loads of 16 bytes
 *    in flight per thread, issued with B, C, x, dt before any arithmetic.
 *    z is loaded with x, not after the shuffles.
 *  - M1 N 16 (K = 1): R = 2 rows per thread held to 64 registers, 4 blocks
 *    of 256 per SM instead of 2: twice the warps waiting on DRAM.
 *  - The state streamed: read with ld.global.cs and written with
 *    st.global.cs (evict first), touched once; B, C, A, x stay cached.
 * What bounds it: 128 registers, 2 blocks per SM, so at most 64 KB of
 * state loads in flight per SM, too few to cover the DRAM latency; warps
 * wait on their loads and DRAM runs under half its peak (profile.md). The
 * registers that hold the loads are the cap.
 * Bytes: as version 4. Exps: M1 b·T·d·(N + 1) ex2, M2 2 per thread and token.
 * ====================================================================== */

constexpr int kLeanThreads = 256;  // threads per block at most

/* R: rows per thread: 4 at K = 2, else 2; at most 32 state floats per lane
 * (M2 N 128: 2 rows x 16 floats, 8 loads of 16 bytes in flight; M1 N 16:
 * 2 rows x 4 floats, plus 2 of A). */
static __host__ __device__ constexpr int lean_rows(int K) { return K == 2 ? 4 : 2; }
/* Blocks of 256 threads per SM that the registers are held to: 4 (64
 * registers) at K = 1, 2 (128) beyond (M2 N 128 at 80 registers spills). */
static __host__ __device__ constexpr int lean_min_blocks(int K) { return K == 1 ? 4 : 2; }

/* The lane's K vectors of each of its R rows, row j at row0 + j·step, from
 * element e0: the state (Stream: with the streaming hint) or A (M1). 0
 * outside the row or for invalid rows. */
template <bool Stream, int W, int K, int R, typename P>
static __device__ __forceinline__ void load_lean_rows(const P *row0, int64_t step, const bool (&valid)[R],
                                                      int64_t e0, int S, int64_t N, float (&v)[R][K][W]) {
#pragma unroll
    for (int j = 0; j < R; j++)
#pragma unroll
        for (int k = 0; k < K; k++) {
            const int64_t e = e0 + (int64_t)k * S * W;
            if (valid[j] && e < N) {
                if constexpr (Stream) load_stream(row0 + j * step + e, v[j][k]);
                else load_vec(row0 + j * step + e, v[j][k]);
            } else {
#pragma unroll
                for (int w = 0; w < W; w++) v[j][k][w] = 0.f;
            }
        }
}

template <int W, int K, int R, typename P>
static __device__ __forceinline__ void store_lean_rows(P *row0, int64_t step, const bool (&valid)[R], int64_t e0,
                                                       int S, int64_t N, const float (&v)[R][K][W]) {
#pragma unroll
    for (int j = 0; j < R; j++)
#pragma unroll
        for (int k = 0; k < K; k++) {
            const int64_t e = e0 + (int64_t)k * S * W;
            if (valid[j] && e < N) store_stream(row0 + j * step + e, v[j][k]);
        }
}

/* The block's rows and tiles as in version 4 (CoalescedPlan), with R =
 * lean_rows(K) rows per thread, row j of a thread j·(32/S) rows after its
 * row 0. In: x, dt, z, B, C, y, float (6), __half (7, 8) or __nv_bfloat16
 * (9); St: how the state is stored, float (6, 7), __half (8) or
 * __nv_bfloat16 (9).
 * Serve (run_serving): the state rows of the batch entry's slot (in place,
 * t.state == t.state_out), padding entries skipped, and the state after
 * every token also stored to pool.inter when asked. */
template <typename In, int W, int K, bool M2, typename St = float, bool Serve = false>
__global__ void __launch_bounds__(kLeanThreads, lean_min_blocks(K))
    decode_lean_kernel(DecodeTensors t, CoalescedPlan plan, DecodePool pool) {
    constexpr int R = lean_rows(K);
    constexpr int kDeltas = M2 ? 1 : R;  // Δ held per head (M2) or per row (M1)
    const DecodeShape s = t.s;
    const int64_t N = s.dstate, T = s.tokens;
    const int64_t width = M2 ? s.headdim : s.dim;           // rows per group
    const int64_t x_tok = M2 ? s.heads * s.headdim : s.dim;  // x, z, y elements per token
    const int64_t dt_tok = M2 ? s.heads : s.dim;             // dt elements per token
    const int64_t bc_tok = M2 ? s.groups * N : N;            // B, C elements per token
    const In *x = static_cast<const In *>(t.x);    // M1 (b, T, d)  M2 (b, T, h, p)
    const In *dt = static_cast<const In *>(t.dt);  // M1 (b, T, d)  M2 (b, T, h)
    const In *B = static_cast<const In *>(t.B);    // M1 (b, T, N)  M2 (b, T, g, N)
    const In *C = static_cast<const In *>(t.C);    // like B
    const In *z = static_cast<const In *>(t.z);    // like x, NULL without z
    In *y = static_cast<In *>(t.y);                // like x, written
    const St *state = reinterpret_cast<const St *>(t.state);  // M1 (b, d, N)  M2 (b, h, p, N)  fp32 | fp16 (8) | bf16 (9)
    St *state_out = reinterpret_cast<St *>(t.state_out);      // like state, written
    const int S = plan.lanes, slots = 32 / S;
    const int lane = threadIdx.x % 32, sub = lane % S, slot = lane / S;
    const int64_t span_len = (int64_t)S * K * W;
    const int64_t step = (int64_t)slots * N;  // from a thread's row j to row j + 1, in the state and (M1) in A

    for (int64_t blk = blockIdx.x; blk < plan.blocks; blk += gridDim.x) {
        const int64_t group = blk / plan.tiles, tile = blk % plan.tiles;
        const int64_t bi = M2 ? group / s.heads : group;
        const int64_t hi = M2 ? group % s.heads : 0;
        // B = repeat(B, "b g n -> b (g h) n", h=nheads // ngroups)
        const int64_t bc_group = M2 ? hi / (s.heads / s.groups) : 0;
        const int64_t first = tile * plan.rows_per_block + (int64_t)(threadIdx.x / 32) * slots * R + slot;
        /* Offsets of the thread's row 0 (index `first` in its group) at token
         * 0. Its row j is j·slots further in x, z, y and (M1) dt, D, dt_bias,
         * j·step further in the state and (M1) A; M2's are the head's. */
        const int64_t xrow = bi * T * x_tok + (M2 ? hi * s.headdim : 0) + first;  // x, z, y
        const int64_t prow = M2 ? hi : first;                                      // D, dt_bias, A
        const int64_t dtrow = M2 ? bi * T * s.heads + hi : xrow;                  // dt
        const int64_t bcrow = bi * T * bc_tok + bc_group * N;                      // B, C
        /* The state's rows: the batch entry's, or (Serve) its slot's. */
        int64_t state_group = group;
        bool padding = false;
        if constexpr (Serve) {
            if (pool.slot_of) {
                const int64_t pool_slot = pool.slot_of[bi];
                padding = pool_slot < 0;
                state_group = M2 ? pool_slot * s.heads + hi : pool_slot;
            }
        }
        const int64_t srow = (state_group * width + first) * N;  // state, state_out
        /* Serve: the intermediate states (b, T, entry rows, N), token 0's offset of row 0, and a token's step. */
        St *inter = Serve ? static_cast<St *>(pool.inter) : nullptr;
        const int64_t inter_tok = x_tok * N;
        const int64_t irow = (bi * T * x_tok + (M2 ? hi * s.headdim : 0) + first) * N;

        bool valid[R];  // row j exists: first + j·slots < width
#pragma unroll
        for (int j = 0; j < R; j++) valid[j] = first + (int64_t)j * slots < width;

        float h[R][K][W];   // the lane's states of its rows, current span
        float Av[R][K][W];  // M1: A of the same elements
        float Bv[K][W], Cv[K][W];
        float xD[R], zv[R], dx[R], acc[R];  // per row: x·D, z, Δ·x, the lane's share of y
        float d2[kDeltas];                  // Δ·log2 e of the head (M2) or of row j (M1)
        float dA_head = 1.f;                // M2: the head's dA

        /* Token tok's inputs: Δ per head or row, then per row x·D, z, Δ·x; the head's dA (M2). */
        auto token_inputs = [&](int64_t tok) {
            float delta[kDeltas];
#pragma unroll
            for (int j = 0; j < kDeltas; j++) {
                const bool ok = M2 || valid[j];
                const int64_t p = prow + j * slots;
                const float bias = ok && t.dt_bias ? t.dt_bias[p] : 0.f;
                delta[j] = ok ? delta_poly(to_float(dt[dtrow + tok * dt_tok + j * slots]), bias, s.softplus) : 0.f;
                d2[j] = delta[j] * LOG2E_F;
            }
#pragma unroll
            for (int j = 0; j < R; j++) {
                const int64_t at = xrow + tok * x_tok + j * slots;
                const float xv = valid[j] ? to_float(x[at]) : 0.f;
                // if D is not None: out += (x * D).to(out.dtype)
                xD[j] = valid[j] && t.D ? xv * t.D[prow + (M2 ? 0 : j * slots)] : 0.f;
                zv[j] = valid[j] && z ? to_float(z[at]) : 0.f;
                dx[j] = delta[M2 ? 0 : j] * xv;
                acc[j] = 0.f;
            }
            // dA = torch.exp(rearrange(dt, "b h d -> b h d 1") * A)
            if constexpr (M2) dA_head = exp2_approx(d2[0] * t.A[prow]);
        };
        /* One token on the lane's elements of the span: h updated, acc[j] +=
         * the lane's share of Σ_n h·C. Outside a row h, B, C are 0 and stay. */
        auto step_rows = [&]() {
#pragma unroll
            for (int j = 0; j < R; j++)
#pragma unroll
                for (int k = 0; k < K; k++)
#pragma unroll
                    for (int w = 0; w < W; w++) {
                        float dA = dA_head;
                        // dA = torch.exp(rearrange(dt, "b d -> b d 1") * A)
                        if constexpr (!M2) dA = exp2_approx(d2[j] * Av[j][k][w]);
                        // state.copy_(state * dA + dB * rearrange(x, "b d -> b d 1")), dB = dt·B: as B·(dt·x)
                        h[j][k][w] = fmaf(Bv[k][w], dx[j], h[j][k][w] * dA);
                        // out = torch.einsum("bdn,bn->bd", state.to(C.dtype), C)
                        acc[j] = fmaf(h[j][k][w], Cv[k][w], acc[j]);
                    }
        };
        /* Token tok's y: the S lanes' shares summed, x·D and z applied by lane 0. */
        auto token_output = [&](int64_t tok) {
#pragma unroll
            for (int j = 0; j < R; j++) {
                for (int off = S / 2; off > 0; off /= 2) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off);
                if (sub != 0 || !valid[j]) continue;
                float out = acc[j] + xD[j];
                // return (out if z is None else out * F.silu(z)).to(x.dtype)
                if (z) out *= silu(zv[j]);
                y[xrow + tok * x_tok + j * slots] = from_float<In>(out);
            }
        };

        if (Serve && padding) {
            /* A padding entry: no state read or written, y and the intermediate states zeros. */
            float zero[R][K][W] = {};
            for (int64_t tok = 0; tok < T; tok++) {
#pragma unroll
                for (int j = 0; j < R; j++)
                    if (valid[j] && sub == 0) y[xrow + tok * x_tok + j * slots] = from_float<In>(0.f);
                if (inter)
                    for (int64_t sp = 0; sp < plan.spans; sp++)
                        store_lean_rows(inter + irow + tok * inter_tok, step, valid, sp * span_len + (int64_t)sub * W,
                                        S, N, zero);
            }
            continue;
        }
        if (plan.spans == 1) {
            /* The whole row in registers: state read once, T tokens, written once. */
            const int64_t e0 = (int64_t)sub * W;
            load_lean_rows<true>(state + srow, step, valid, e0, S, N, h);
            if constexpr (!M2) load_lean_rows<false>(t.A + prow * N, step, valid, e0, S, N, Av);
            for (int64_t tok = 0; tok < T; tok++) {
                token_inputs(tok);
                load_lane<In, W, K>(B + bcrow + tok * bc_tok, e0, S, N, Bv);
                load_lane<In, W, K>(C + bcrow + tok * bc_tok, e0, S, N, Cv);
                step_rows();
                if (Serve && inter) store_lean_rows(inter + irow + tok * inter_tok, step, valid, e0, S, N, h);
                token_output(tok);
            }
            store_lean_rows(state_out + srow, step, valid, e0, S, N, h);
        } else {
            /* Long rows: per token, span after span through state_out. */
            for (int64_t tok = 0; tok < T; tok++) {
                token_inputs(tok);
                for (int64_t sp = 0; sp < plan.spans; sp++) {
                    const int64_t e0 = sp * span_len + (int64_t)sub * W;
                    load_lean_rows<true>((tok == 0 ? state : state_out) + srow, step, valid, e0, S, N, h);
                    if constexpr (!M2) load_lean_rows<false>(t.A + prow * N, step, valid, e0, S, N, Av);
                    load_lane<In, W, K>(B + bcrow + tok * bc_tok, e0, S, N, Bv);
                    load_lane<In, W, K>(C + bcrow + tok * bc_tok, e0, S, N, Cv);
                    step_rows();
                    store_lean_rows(state_out + srow, step, valid, e0, S, N, h);
                    if (Serve && inter) store_lean_rows(inter + irow + tok * inter_tok, step, valid, e0, S, N, h);
                }
                token_output(tok);
            }
        }
    }
}

/* ---- Host side of versions 6-9 ---- */

/* W as in version 4. K: 4 vectors per lane above 16 vectors per row, 2
 * from 8, else 1; S: the fewest lanes (<= 32) that take the row in K
 * vectors each; the rest by plan_blocks, as in version 4. */
static CoalescedLaunch plan_lean(const DecodeTensors *t, size_t in_bytes, const void *inter = nullptr) {
    const DecodeShape *s = &t->s;
    CoalescedLaunch c;
    c.W = aligned(inter, 16) ? access_width(t, in_bytes) : 1;  // inter: the intermediate states, written like the state
    const int64_t vectors = ceil_div(s->dstate, c.W);  // per row
    c.K = vectors > 16 ? 4 : vectors >= 8 ? 2 : 1;
    int S = 1;
    while ((int64_t)S * c.K < vectors && S < 32) S *= 2;
    plan_blocks(s, S, kLeanThreads, lean_rows(c.K), &c);
    return c;
}

/* St: how the state is stored, float (6, 7), __half (8) or __nv_bfloat16
 * (9); Serve: with a server's pool (run_serving). */
template <typename St, bool Serve = false>
struct LeanKernel {
    template <typename In, int W, int K, bool M2>
    static void launch(const DecodeTensors *t, const CoalescedLaunch &c) {
        decode_lean_kernel<In, W, K, M2, St, Serve><<<c.grid, c.threads>>>(*t, c.plan, c.pool);
    }
};

/* Versions 6-9 as a server runs them (DecodeServing): in place on the pool
 * (pool_in_place, lanes.cuh: a server passes one pool as both state and
 * state_out and copies nothing). */
template <typename St, typename In>
static void lean_serving(const DecodeServing *sv) {
    DecodeTensors t = pool_in_place(sv, (size_t)decode_pool_values(sv) * sizeof(St));
    CoalescedLaunch c = plan_lean(&t, sizeof(In), sv->intermediate_states);
    c.pool = DecodePool{sv->state_batch_indices, sv->intermediate_states};
    launch_planned<LeanKernel<St, true>, In>(&t, c);
}

extern "C" void decode_lean(const DecodeTensors *t, void *workspace) {
    (void)workspace;
    launch_planned<LeanKernel<float>, float>(t, plan_lean(t, sizeof(float)));
}

extern "C" void decode_lean_fp16(const DecodeTensors *t, void *workspace) {
    (void)workspace;
    launch_planned<LeanKernel<float>, __half>(t, plan_lean(t, sizeof(__half)));
}

/* ---- Version 8: version 7 with the state stored in fp16 ----
 *
 * The state is the step's bytes: stored in fp16 (as the official fp16 runs
 * keep it) a step moves half of them, 8-byte state accesses where 7 makes
 * 16-byte ones, the same plan, registers and arithmetic (the state is
 * widened to fp32 on load and rounded on store). What it costs in accuracy
 * over 1,000 tokens is computed by the program (lessons.c) and in the
 * README; the check runs it against the oracle on the unrounded fp32 state,
 * so it counts the state's rounding on the way in and out. With T tokens a
 * row that fits one pass of its lanes stays in fp32 registers from the first
 * token to the last (rounded once, on the store); a longer row (N > 512, or
 * N > 128 when N is not a multiple of 4) goes through state_out after every
 * token, rounded each time.
 * Bytes: 2·2·b·(d or h·p)·N for the state, plus version 7's per-token
 * tensors. Exps: as version 6. */
extern "C" void decode_lean_state16(const DecodeTensors *t, void *workspace) {
    (void)workspace;
    launch_planned<LeanKernel<__half>, __half>(t, plan_lean(t, sizeof(__half)));
}

/* ---- Version 9: version 8 in bf16 ----
 *
 * What changed: x, dt, z, B, C, y and the state stored in bf16, not fp16:
 * the same kernel, its loads and stores widened and rounded (to nearest
 * even) by the pair trait, the same bytes as 8. What it should buy: a bf16
 * model's step (the dtype Mamba-2 is trained in) at version 8's time, with
 * no conversion around it. The cost is accuracy: bf16 keeps 8 significant
 * bits to fp16's 11, so each rounding of the state is 8 times coarser; over
 * 1,000 tokens of the C step (lessons.c) y is off by 4.5e-3 (relative L2)
 * against fp16's 5.5e-4. Its check: the bf16 decode tolerance, rtol of y's
 * terms' magnitude (decode_oracle_terms, ops/decode/op_decode.c says why).
 * Bytes and exps: as version 8. */
extern "C" void decode_lean_state_bf16(const DecodeTensors *t, void *workspace) {
    (void)workspace;
    launch_planned<LeanKernel<__nv_bfloat16>, __nv_bfloat16>(t, plan_lean(t, sizeof(__nv_bfloat16)));
}

extern "C" void decode_lean_serving(const DecodeServing *sv, void *workspace) {
    (void)workspace;
    lean_serving<float, float>(sv);
}
extern "C" void decode_lean_fp16_serving(const DecodeServing *sv, void *workspace) {
    (void)workspace;
    lean_serving<float, __half>(sv);
}
extern "C" void decode_lean_state16_serving(const DecodeServing *sv, void *workspace) {
    (void)workspace;
    lean_serving<__half, __half>(sv);
}
extern "C" void decode_lean_state_bf16_serving(const DecodeServing *sv, void *workspace) {
    (void)workspace;
    lean_serving<__nv_bfloat16, __nv_bfloat16>(sv);
}
