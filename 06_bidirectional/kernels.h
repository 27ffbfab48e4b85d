/* 06_bidirectional, GPU: bidirectional Mamba-2 in both forms (ops/bidir/bidir.h),
 * first as users run it today, 05's kernels twice on flipped copies, then in
 * one fused pair of kernels that never flips anything. Launchers only enqueue
 * work on the default stream; scratch memory is the `workspace` the caller
 * allocates, of the size the *_workspace function gives. */
#ifndef BIDIR_KERNELS_H
#define BIDIR_KERNELS_H

#include <stddef.h>

#include "bidir.h"
#include "c_decls.h"

BEGIN_C_DECLS

/* ---- The 1x: 05 twice ----
 * Flipped copies of x, dt, B, C (Hydra: of dt_bwd, B_bwd, C_bwd), 05's kernel
 * forward on the inputs and again on the copies (without D and z, each from
 * its own initial state), then one elementwise kernel that sums the two
 * outputs (reading the backward one in reverse, Hydra: each one step
 * later), adds D·x and gates with silu(z). Workspace: the flipped copies, both
 * outputs and a final state, then 05's own workspace. */
size_t bidir_twice_steps_workspace(const BidirShape *s);
void bidir_twice_steps_fp32(const BidirTensors *t, void *workspace);  // 05's ssd_steps_fp32; fp32 I/O

const char *bidir_twice_fused_unsupported(const BidirShape *s);
size_t bidir_twice_fused_workspace(const BidirShape *s);
void bidir_twice_fused_mma(const BidirTensors *t, void *workspace);   // 05's ssd_fused_mma; fp16 I/O

/* ---- Fused: both directions, no flips ----
 * Kernel 1: the chunk states of both directions, forward chunks in
 * increasing and backward chunks in decreasing order from one ticket
 * counter, each handed to the next chunk of its direction through L2 (as
 * 05's fused kernel does); the state entering each chunk is stored in fp16.
 * Kernel 2: per (b, chunk, h), y = both state terms + the Q×Q block of both
 * triangles (default: one C·Bᵀ for both) + D·x, silu(z), written once.
 * N <= 128, p <= 64. Workspace: the entering states (2, b, h, chunks, p, N)
 * fp16, the ring (2, b, h, 2, p, N) fp32 and one flag per direction and
 * (b, h). fp16 I/O. */
const char *bidir_fused_mma_unsupported(const BidirShape *s);
size_t bidir_fused_mma_workspace(const BidirShape *s);
void bidir_fused_mma(const BidirTensors *t, void *workspace);
/* The same with kernel 1 as one block per chain (direction, b, h) that
 * walks its chunks in order, the running state kept in registers: no ring,
 * no flags, no block waiting on another. Workspace: the entering states. */
size_t bidir_fused_chain_workspace(const BidirShape *s);
void bidir_fused_mma_chain(const BidirTensors *t, void *workspace);

/* ---- Fused on Hopper's warpgroup matrix product (sm_90a, wgmma.cu) ----
 * Version 6's pair with every product a wgmma and the tiles brought by bulk
 * tensor copies (TMA): kernel 1 one block per chain, two warpgroups on N;
 * kernel 2 per (b, chunk of 128, h). N <= 128, p <= 64, both multiples of 8.
 * Workspace: the entering states (2, b, h, chunks, N, p), 16-bit. */
const char *bidir_wgmma_unsupported(const BidirShape *s);
size_t bidir_wgmma_workspace(const BidirShape *s);
void bidir_wgmma(const BidirTensors *t, void *workspace);       // fp16 I/O
void bidir_wgmma_bf16(const BidirTensors *t, void *workspace);  // bf16 I/O

/* ---- Each direction a walk of 05's version 18 (sm_90a, wgmma_ws.cu) ----
 * The backward walk writes y_b + D·x to y (16-bit), then the forward walk
 * adds y_f and gates with silu(z). N <= 128, p <= 64, both multiples of 8.
 * Workspace: the walks' flags, ticket and segment states
 * (ws_workspace_bytes of ops/ssd/ssd_wgmma_ws.cuh, as 05's version 18),
 * used by one launch after the other. */
const char *bidir_wgmma_ws_unsupported(const BidirShape *s);
size_t bidir_wgmma_ws_workspace(const BidirShape *s);
void bidir_wgmma_ws(const BidirTensors *t, void *workspace);       // fp16 I/O
void bidir_wgmma_ws_bf16(const BidirTensors *t, void *workspace);  // bf16 I/O

END_C_DECLS

#endif
