/* 05_ssd_mamba2, GPU: Mamba-2's SSD (mamba_chunk_scan_combined), from the
 * official four chunked steps on CUDA cores to the previous stage, 03's fused
 * Mamba-1 scan, run on the same problem through the official Mamba-2 ->
 * Mamba-1 mapping. The CPU forms (recurrent, quadratic, chunked) are in cpu.h.
 * Launchers only enqueue work on the default stream; scratch memory is the
 * `workspace` the caller allocates, of the size the *_workspace function gives. */
#ifndef SSD_MAMBA2_KERNELS_H
#define SSD_MAMBA2_KERNELS_H

#include <stddef.h>

#include "c_decls.h"
#include "ssd.h"

BEGIN_C_DECLS

/* ---- The official four steps, one kernel each, CUDA cores ---- */

/* chunk_cumsum, chunk_state, state_passing, chunk_scan as the official Triton
 * kernels split the work, fp32 arithmetic on 64 x 64 shared-memory tiles.
 * What it costs: every chunk's state goes through DRAM at full precision.
 * Workspace: dA_cumsum and Δ, 2 x (b, h, chunks, Q) fp32, and the chunk
 * states (b, chunks, h, p, N) fp32, 4·b·chunks·h·(2Q + p·N) bytes in all. */
size_t ssd_steps_workspace(const SsdShape *s);
void ssd_steps_fp32(const SsdTensors *t, void *workspace);  // x, dt, z, B, C, y fp32
void ssd_steps_fp16(const SsdTensors *t, void *workspace);  // x, dt, z, B, C, y fp16 bits

/* ---- Fused on tensor cores ---- */

/* One block per (b, h, chunk): chunk state, state passing through a flag per
 * (b, h) and a two-slot ring in L2, and the output, every product on
 * mma.sync with fp16 operands and fp32 accumulation. N <= 128, p <= 64, and
 * x, B, C of a chunk must fit in shared memory. Workspace: the ring
 * (b, h, 2, p, N) fp32 and one flag per (b, h). */
const char *ssd_fused_mma_unsupported(const SsdShape *s);
size_t ssd_fused_mma_workspace(const SsdShape *s);
void ssd_fused_mma(const SsdTensors *t, void *workspace);  // x, dt, z, B, C, y fp16 bits

/* Version 7's plan on Hopper's warpgroup products (wgmma.cu, sm_90a): chunks
 * of 128 steps (64 where the problem's chunk is 64 or less), every product a
 * 64 x 64 x 16 wgmma with its B operand in swizzled shared memory. N <= 128,
 * p <= 64. Workspace: version 7's flags, and its ring with slots of
 * 64 x 64·ceil(N/64) floats. */
const char *ssd_fused_wgmma_unsupported(const SsdShape *s);
size_t ssd_fused_wgmma_workspace(const SsdShape *s);
void ssd_fused_wgmma(const SsdTensors *t, void *workspace);  // x, dt, z, B, C, y fp16 bits
/* Version 8 with the state handed over in the accumulators' own order: each
 * thread's 32 values as 16-byte loads and stores, S_in into shared memory by
 * stmatrix (the same unsupported shapes and workspace). */
void ssd_wgmma_frag_ring(const SsdTensors *t, void *workspace);  // x, dt, z, B, C, y fp16 bits
/* Version 9 with several heads of a group a block: B and C of the chunk loaded
 * once for all of them, x of the next head loaded while this one's outputs
 * are computed (the same unsupported shapes and workspace). */
void ssd_wgmma_heads(const SsdTensors *t, void *workspace);  // x, dt, z, B, C, y fp16 bits
/* Version 9 with bf16 x, dt, z, B, C, y and bf16 tensor-core operands. */
void ssd_wgmma_frag_ring_bf16(const SsdTensors *t, void *workspace);  // x, dt, z, B, C, y bf16 bits
/* Version 9 with its data moved by the bulk tensor copy engine (TMA): x, B,
 * C of the chunk by five copies one thread issues, y staged in x's place and
 * stored by one copy a warpgroup. p and N multiples of 8 (the copies' 16-byte
 * row strides); the same workspace. */
const char *ssd_wgmma_tma_unsupported(const SsdShape *s);
void ssd_wgmma_tma(const SsdTensors *t, void *workspace);       // x, dt, z, B, C, y fp16 bits
void ssd_wgmma_tma_bf16(const SsdTensors *t, void *workspace);  // x, dt, z, B, C, y bf16 bits
/* Version 12 walking: a block takes consecutive chunks of one (b, h) in
 * order, the state kept by the block between them and the next chunk's
 * copies issued during this one; the sequence cut into segments when there
 * are fewer (b, h) than places for blocks. Workspace: the flags, and two
 * states a (segment, b, h). */
const char *ssd_wgmma_walk_unsupported(const SsdShape *s);
size_t ssd_wgmma_walk_workspace(const SsdShape *s);
void ssd_wgmma_walk(const SsdTensors *t, void *workspace);       // x, dt, z, B, C, y fp16 bits
void ssd_wgmma_walk_bf16(const SsdTensors *t, void *workspace);  // x, dt, z, B, C, y bf16 bits
/* Versions 14-15 on a packed row (SsdPacked): a block walks one sequence of
 * one head from its own h0 row, writing chunk_states after every chunk of
 * the problem's size and the sequence's final state. */
void ssd_wgmma_walk_packed(const SsdPacked *pk, void *workspace);
void ssd_wgmma_walk_bf16_packed(const SsdPacked *pk, void *workspace);

/* Version 12 with fp32 x, dt, z, B, C, y on bf16 tensor cores at fp32-grade
 * accuracy (wgmma_split.cu, sm_90a): each operand split into bf16 hi and lo,
 * three products a multiply-add, chunks of 64. N <= 128, p <= 64, p and N
 * multiples of 4 (the fp32 copies' 16-byte row steps); version 12's
 * workspace. */
const char *ssd_wgmma_split_unsupported(const SsdShape *s);
void ssd_wgmma_split_fp32(const SsdTensors *t, void *workspace);  // x, dt, z, B, C, y fp32
/* Version 16 with B and C split once by a first kernel, for all heads of a
 * group, into bf16 hi and lo planes the blocks copy in. Workspace: version
 * 16's, then four (b, L, g, 64·ceil(N/64)) bf16 planes. */
size_t ssd_wgmma_split_bc_workspace(const SsdShape *s);
void ssd_wgmma_split_bc_fp32(const SsdTensors *t, void *workspace);  // x, dt, z, B, C, y fp32

/* Version 14's walk with its roles split (ops/ssd/ssd_wgmma_ws.cuh, sm_90a): one
 * warpgroup computes chunks of 64 with the state in its registers, one warp
 * copies the tiles into a ring of two stages, another copies y out and z
 * in. p and N multiples of 8, N <= 128, p <= 64. Workspace: a flag, and a
 * state with its decay, a (segment, b, h). */
const char *ssd_wgmma_ws_unsupported(const SsdShape *s);
size_t ssd_wgmma_ws_workspace(const SsdShape *s);
void ssd_wgmma_ws(const SsdTensors *t, void *workspace);       // x, dt, z, B, C, y fp16 bits
void ssd_wgmma_ws_bf16(const SsdTensors *t, void *workspace);  // x, dt, z, B, C, y bf16 bits

/* Version 18's walk over a row of sequences (wgmma_ws_varlen.cu, sm_90a): a
 * plan cuts each sequence into segments by its own length, longest first; a
 * rectangle is b sequences of L. Packed rows: chunk_states every chunk
 * steps (64 divides the chunk). Workspace: the segments' flags and states,
 * the plan's groups. */
const char *ssd_wgmma_ws_varlen_unsupported(const SsdShape *s);
size_t ssd_wgmma_ws_varlen_workspace(const SsdShape *s);
void ssd_wgmma_ws_varlen(const SsdTensors *t, void *workspace);             // fp16 bits
void ssd_wgmma_ws_varlen_bf16(const SsdTensors *t, void *workspace);        // bf16 bits
void ssd_wgmma_ws_varlen_packed(const SsdPacked *pk, void *workspace);      // fp16 bits
void ssd_wgmma_ws_varlen_bf16_packed(const SsdPacked *pk, void *workspace); // bf16 bits

/* Version 18's walk on version 17's split operands (wgmma_ws_split.cuh, launched by wgmma_split.cu, sm_90a):
 * B and C split by a first kernel, x read and split (x and w ∘ x) by three
 * warps of the block, three bf16 products a multiply-add; one block an SM.
 * p a multiple of 4 (any N: B and C come as bf16 planes). Workspace: version 18's counters and slots, then
 * version 17's four planes. */
const char *ssd_wgmma_ws_split_unsupported(const SsdShape *s);
size_t ssd_wgmma_ws_split_workspace(const SsdShape *s);
void ssd_wgmma_ws_split_fp32(const SsdTensors *t, void *workspace);  // x, dt, z, B, C, y fp32
/* Version 20 with two computing warpgroups, each 32 of p's columns (its
 * state, its rows of S_in, its half of y) and half of P's columns, which
 * both then read from shared memory. Version 20's limits and workspace. */
void ssd_wgmma_ws_split_2wg_fp32(const SsdTensors *t, void *workspace);  // x, dt, z, B, C, y fp32

/* ---- The previous stage: 03 through the Mamba-2 -> Mamba-1 mapping ---- */

/* ssd_selective_scan's rearranges done on the device (x, z, B, C transposed
 * to time-last; dt, A, D, dt_bias repeated over p), 03's scan_fused_tuned on
 * b x (h·p) channels, y transposed back. What it buys: the check against the
 * previous stage, and the time the chunked form has to beat. fp32 only.
 * Workspace: the rearranged tensors, 4·(b·h·p·L·(3 + z) + 2·b·g·N·L +
 * h·p·N + 2·h·p) bytes at most, plus 03's own workspace. */
size_t ssd_via_scan_fused_tuned_workspace(const SsdShape *s);
const char *ssd_via_scan_fused_tuned_unsupported(const SsdShape *s);
void ssd_via_scan_fused_tuned(const SsdTensors *t, void *workspace);

END_C_DECLS

#endif
