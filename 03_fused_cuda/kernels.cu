/* 03_fused_cuda, GPU: the selective scan in one fused pass.
 *
 * 01 and 02 write exp(ΔA) and ΔBu as (b, d, L, N) or (b, d, N, L) arrays:
 * 8 bytes per element, 8·b·d·L·N bytes in all, far more than the inputs. Here
 * each (b, d, n) state lives in a register and walks time; the pairs are made,
 * used and dropped in registers, and only y and last_state are written:
 *
 *     Δ_t   = softplus(delta_t + delta_bias[c])                 once per (b, d, t)
 *     h[n]  = exp2(Δ_t·A2[n])·h[n] + B_t[n]·(Δ_t·u_t)          per (b, d, t, n)
 *     y_t   = Σ_n C_t[n]·h[n] + D[c]·u_t,  y_t *= z_t·σ(z_t)    once per (b, d, t)
 *
 * (A2 = A·log2 e, so exp(ΔA) is one MUFU.EX2.) Per element that is one exp and
 * four FMA-pipe operations (FMUL Δ·A2, FMUL B·Δu, FFMA h, FFMA y). The MUFU
 * does 16 exps per clock per SM and an SM issues 128 instructions per clock,
 * so the kernel is exp-bound while everything else, per element, stays under
 * about 3 more instructions: the exp floor is b·d·L·N / (16 · SMs · clock).
 *
 * The versions (1 is the CPU form, cpu.c), each a step from the previous one:
 *   2 scan_fused_naive   thread per state, block-wide sum over n for every y_t
 *   3 scan_fused_regs    thread per (b, d) row, all N states in its registers
 *   4 scan_fused_exp2    every exp one ex2.approx, Δ·u formed once per step
 *   5 scan_fused_tiled   time tiles in shared memory: B/C loaded once per block,
 *                        float4 traffic, the (b, d, t) work done once per block
 *   6 scan_fused_chunked L cut into chunks when b·d cannot fill the GPU
 *   7 scan_fused_tuned   N split over lanes first, chunks only if still short,
 *                        cp.async double buffering so loads overlap the scan
 * This file holds versions 2-4; versions 5-7 are in tiled.cu. */
#include "kernels.h"

#include <limits.h>
#include <stdint.h>

#include "cuda_check.h"
#include "launch.cuh"
#include "scalars.cuh"

/* ========================================================================
 * Version 2: one thread per state
 * ====================================================================== */

/* Version 2. The fusion at its plainest: the pairs of 02 are never stored, so
 * memory no longer grows with N·L; but every y_t costs a block-wide sum.
 * One block per (b, d) row, thread n holds h[n] (blockDim = N rounded up to
 * 32) and every thread walks all L steps. y_t = Σ_n C_t[n]·h_t[n] needs the
 * whole block: a 5-step shuffle sum per warp, then the warp sums through
 * shared memory, every step. Every thread recomputes Δ_t (softplus) itself.
 * Bytes: u, delta, z read by every thread of the row (L1 broadcasts), B and C
 * by each of the d/G rows of a group: 8·b·d·N·L bytes from L2, DRAM about
 * 4·b·d·L·(3 + z) + 8·b·G·N·L. Exps: b·d·L·N expf, b·d·L·blockDim softplus. */
__global__ void scan_fused_naive_kernel(ScanTensors t) {
    __shared__ float warp_sums[2][32];  // (step parity, warp): one barrier per step
    const ScanShape s = t.s;
    const int64_t L = s.seqlen, N = s.dstate;
    const int64_t row = blockIdx.x;                      // b*d + c
    const int64_t bi = row / s.dim, c = row % s.dim;
    const int64_t g = c / (s.dim / s.groups);
    const int n = threadIdx.x, lane = n % 32, warp = n / 32, nwarps = blockDim.x / 32;
    const bool valid = n < N;
    const float *u = (const float *)t.u + row * L;          // (L,) of this row
    const float *delta = (const float *)t.delta + row * L;  // (L,)
    const float *z = t.z ? (const float *)t.z + row * L : NULL;
    const float *B_n = (const float *)t.B + ((bi * s.groups + g) * N + (valid ? n : 0)) * L;  // (L,)
    const float *C_n = (const float *)t.C + ((bi * s.groups + g) * N + (valid ? n : 0)) * L;  // (L,)
    float *y = (float *)t.y + row * L;                      // (L,)
    const float A_n = valid ? t.A[c * N + n] : 0.f;
    const float bias = t.delta_bias ? t.delta_bias[c] : 0.f;
    const float D = t.D ? t.D[c] : 0.f;
    float h = valid && t.h0 ? t.h0[row * N + n] : 0.f;

    for (int64_t l = 0; l < L; l++) {
        const float u_t = u[l];
        const float dt = dt_libm(delta[l], bias, s.softplus);
        float part = 0.f;
        if (valid) {
            // deltaA = torch.exp(torch.einsum('bdl,dn->bdln', delta, A))
            const float dA = expf(dt * A_n);
            // x = deltaA[:, :, i] * x + deltaB_u[:, :, i]    (deltaB_u = delta·B·u)
            h = dA * h + dt * B_n[l] * u_t;
            // y = torch.einsum('bdn,bdn->bd', x, C[:, :, :, i])
            part = C_n[l] * h;
        }
        for (int off = 16; off > 0; off /= 2) part += __shfl_xor_sync(0xffffffffu, part, off);
        if (nwarps > 1) {
            if (lane == 0) warp_sums[l & 1][warp] = part;
            __syncthreads();
            if (n == 0)
                for (int w = 1; w < nwarps; w++) part += warp_sums[l & 1][w];
        }
        if (n == 0) {
            // out = y if D is None else y + u * rearrange(D, "d -> d 1")
            float out = part + D * u_t;
            // out = out * F.silu(z)
            if (z) out *= silu_libm(z[l]);
            y[l] = out;
        }
    }
    if (valid) t.last_state[row * N + n] = h;
}

extern "C" const char *scan_fused_naive_unsupported(const ScanShape *s) {
    if (s->dstate > 1024) return "N > 1024: one thread per state exceeds a block";
    if (s->batch * s->dim > INT_MAX) return "b x d > 2^31 - 1: one block per row exceeds the grid";
    return NULL;
}

extern "C" void scan_fused_naive(const ScanTensors *t, void *workspace) {
    (void)workspace;
    const int threads = (int)ceil_div(t->s.dstate, 32) * 32;
    scan_fused_naive_kernel<<<(unsigned)(t->s.batch * t->s.dim), threads>>>(*t);
    cuda_check_launch();
}

/* ========================================================================
 * Versions 3 and 4: one thread per (b, d) row, the state in registers
 * ====================================================================== */

constexpr int kRowThreads = 128;  // threads per block, versions 3 and 4

/* Versions 3 and 4. Thread = (b, d) row: Δ_t once per step instead of once
 * per state, y_t summed in the thread (no shuffles, no barriers). h[NMAX]
 * stays in registers because every index is a compile-time constant after
 * unrolling; states n >= N are switched off. Neighbouring threads are
 * neighbouring channels of one group, so B_t[n] and C_t[n] are warp-wide
 * broadcasts; u, delta, z are one 4-byte load per thread per step from rows
 * L apart (L1 keeps the lines for the next steps).
 *
 * MUFU = false is version 3: libm's expf (about 8 instructions with one MUFU
 * op) for every element. MUFU = true is version 4: A2 = A·log2 e is formed
 * once, so exp(ΔA) = exp2(Δ·A2) is one MUFU.EX2 (no range reduction), and Δ·u
 * is formed once per step, leaving per element FMUL (Δ·A2), MUFU, FMUL (B·Δu),
 * FFMA (h), FFMA (y) and the two loads of B_t[n], C_t[n].
 * Bytes: DRAM about 4·b·d·L·(3 + z) + 8·b·G·N·L. Exps: b·d·L·N (expf or
 * ex2.approx), b·d·L softplus, b·d·L silu.
 * PACKED (run_packed): batch 1, sequences end to end on the row (cu_seqlens
 * cu); at each sequence's end the thread stores its state to that
 * sequence's last_state row and starts the next from its h0 row. */
template <int NMAX, bool MUFU, bool PACKED = false>
__global__ void __launch_bounds__(kRowThreads) scan_fused_row_kernel(ScanTensors t, const int32_t *cu) {
    const ScanShape s = t.s;
    const int64_t L = s.seqlen, N = s.dstate;
    const int64_t row = (int64_t)blockIdx.x * kRowThreads + threadIdx.x;
    if (row >= s.batch * s.dim) return;
    const int64_t bi = row / s.dim, c = row % s.dim;
    const int64_t g = c / (s.dim / s.groups);
    const float *u = (const float *)t.u + row * L;                          // (L,)
    const float *delta = (const float *)t.delta + row * L;                  // (L,)
    const float *z = t.z ? (const float *)t.z + row * L : NULL;             // (L,)
    const float *B = (const float *)t.B + (bi * s.groups + g) * N * L;      // (N, L)
    const float *C = (const float *)t.C + (bi * s.groups + g) * N * L;      // (N, L)
    float *y = (float *)t.y + row * L;                                      // (L,)
    const float bias = t.delta_bias ? t.delta_bias[c] : 0.f;
    const float D = t.D ? t.D[c] : 0.f;
    float h[NMAX], A_c[NMAX];  // A_c = A, or A·log2 e with MUFU
#pragma unroll
    for (int n = 0; n < NMAX; n++) {
        // A_val[r] *= kLog2e;   (the official kernel's pre-scaling, version 4)
        A_c[n] = n < N ? t.A[c * N + n] * (MUFU ? LOG2E_F : 1.f) : 0.f;
        h[n] = n < N && t.h0 ? t.h0[row * N + n] : 0.f;
    }
    int64_t seq = 0, seq_end = PACKED ? cu[1] : L;  // the sequence step l is in, and its end
    for (int64_t l = 0; l < L; l++) {
        if (PACKED && l == seq_end) {
            /* Sequence seq ends: its final state out, sequence seq + 1's initial state in. */
#pragma unroll
            for (int n = 0; n < NMAX; n++) {
                if (n < N) t.last_state[(seq * s.dim + c) * N + n] = h[n];
                h[n] = n < N && t.h0 ? t.h0[((seq + 1) * s.dim + c) * N + n] : 0.f;
            }
            seq++;
            seq_end = cu[seq + 1];
        }
        const float u_t = u[l];
        const float dt = MUFU ? dt_fast(delta[l], bias, s.softplus) : dt_libm(delta[l], bias, s.softplus);
        // delta_u_vals[r][i] = delta_vals[r][i] * u_val;   (version 4)
        const float du = dt * u_t;
        float acc = 0.f;
#pragma unroll
        for (int n = 0; n < NMAX; n++) {
            if (n < N) {
                if (MUFU) {
                    // thread_data[i] = make_float2(exp2f(delta_vals[r][i] * A_val[r]), B_vals[i] * delta_u_vals[r][i]);
                    h[n] = exp2_approx(dt * A_c[n]) * h[n] + B[n * L + l] * du;
                } else {
                    // deltaA = torch.exp(torch.einsum('bdl,dn->bdln', delta, A))
                    const float dA = expf(dt * A_c[n]);
                    // deltaB_u = torch.einsum('bdl,bdnl,bdl->bdln', delta, B, u); x = deltaA * x + deltaB_u
                    h[n] = dA * h[n] + dt * B[n * L + l] * u_t;
                }
                // y = torch.einsum('bdn,bdn->bd', x, C[:, :, :, i])
                acc += C[n * L + l] * h[n];
            }
        }
        float out = acc + D * u_t;
        if (z) out *= MUFU ? silu_fast(z[l]) : silu_libm(z[l]);
        y[l] = out;
    }
#pragma unroll
    for (int n = 0; n < NMAX; n++)
        if (n < N) t.last_state[(PACKED ? seq * s.dim + c : row) * N + n] = h[n];
}

extern "C" const char *scan_fused_regs_unsupported(const ScanShape *s) {
    return s->dstate > 32 ? "N > 32: one thread cannot hold the state in registers (versions 5-7 split N over lanes)"
                          : NULL;
}

/* cu: cu_seqlens of a packed row (PACKED), else unused. */
template <bool MUFU, bool PACKED = false>
static void launch_rows(const ScanTensors *t, const int32_t *cu = nullptr) {
    const unsigned blocks = (unsigned)ceil_div(t->s.batch * t->s.dim, kRowThreads);
    if (t->s.dstate <= 16) scan_fused_row_kernel<16, MUFU, PACKED><<<blocks, kRowThreads>>>(*t, cu);
    else scan_fused_row_kernel<32, MUFU, PACKED><<<blocks, kRowThreads>>>(*t, cu);
    cuda_check_launch();
}

extern "C" void scan_fused_regs(const ScanTensors *t, void *workspace) {
    (void)workspace;
    launch_rows<false>(t);
}

extern "C" void scan_fused_exp2(const ScanTensors *t, void *workspace) {
    (void)workspace;
    launch_rows<true>(t);
}

/* Versions 3 and 4 on a packed row (ScanPacked): the same thread per channel,
 * its state restarted at every sequence's first step. */
extern "C" void scan_fused_regs_packed(const ScanPacked *pk, void *workspace) {
    (void)workspace;
    launch_rows<false, true>(&pk->t, pk->cu_seqlens);
}

extern "C" void scan_fused_exp2_packed(const ScanPacked *pk, void *workspace) {
    (void)workspace;
    launch_rows<true, true>(&pk->t, pk->cu_seqlens);
}
