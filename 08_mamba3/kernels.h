/* 08_mamba3, GPU: Mamba-3 SISO's forward (mamba3_siso_combined). Versions 1
 * and 2 are the C forms (cpu.h). Launchers only enqueue work on the default
 * stream. */
#ifndef MAMBA3_KERNELS_H
#define MAMBA3_KERNELS_H

#include "c_decls.h"
#include "mamba3.h"

BEGIN_C_DECLS

/* 3: the step form on the GPU, a block per (sequence, head), its state in
 * shared memory, fp32 I/O. SKIPs (the reason returned) a state too large for
 * one SM's shared memory or more than 65,535 heads. */
const char *mamba3_step_gpu_unsupported(const Mamba3Shape *s);
void mamba3_step_gpu(const Mamba3Tensors *t, void *workspace);

/* 4: the chunked form on the GPU: a map of the chunks, then four steps
 * (angles, chunk states, the states passed along, the chunk outputs), fp32
 * I/O. SKIPs a chunk whose rotated q and k and scores (or keys and values)
 * pass 200 KiB of shared memory, more than 65,535 heads, or more than
 * 2^31 - 1 chunks. */
size_t mamba3_chunked_gpu_workspace(const Mamba3Shape *s);
const char *mamba3_chunked_gpu_unsupported(const Mamba3Shape *s);
void mamba3_chunked_gpu(const Mamba3Tensors *t, void *workspace);

/* 5, 6: the chunked form fused into one kernel on mma.sync tensor cores, a
 * block per (chunk, head), the state handed from chunk to chunk in L2; fp16
 * (5) and bf16 (6) I/O, fp32 states. SKIPs N > 128, p > 64, chunks over 128
 * steps, shared memory past the device's opt-in, or more than 2^31 - 1
 * (chunk, head) items. */
size_t mamba3_fused_mma_workspace(const Mamba3Shape *s);
const char *mamba3_fused_mma_unsupported(const Mamba3Shape *s);
void mamba3_fused_mma(const Mamba3Tensors *t, void *workspace);
void mamba3_fused_mma_bf16(const Mamba3Tensors *t, void *workspace);

/* 13, 14: versions 5 and 6 with every input of a chunk asked for before the
 * block computes (the angles with q, k and v, z while it computes), the
 * angles' running sum in one pass, and the state in and out by 8 bytes where
 * N is even. Workspace as 5's; SKIPs as 5 and 6 do (with a little more shared
 * memory: the angles' rows padded to 16 bytes, the segments' sums), and S < 1. */
const char *mamba3_fused_prefetch_unsupported(const Mamba3Shape *s);
void mamba3_fused_prefetch(const Mamba3Tensors *t, void *workspace);
void mamba3_fused_prefetch_bf16(const Mamba3Tensors *t, void *workspace);

/* 7, 8, 9: the decode step (L = 1) as a stream: a block per (sequence, head)
 * and 16 rows of its state, four values a lane where N is a multiple of 128;
 * fp32 I/O and state (7), fp16 I/O and state (8), bf16 (9). The _pool forms
 * step a Mamba3Pool in place. SKIPs L > 1 (it is the step), and what its
 * grid or 48 KiB of shared memory cannot hold. */
const char *mamba3_step_stream_unsupported(const Mamba3Shape *s);
void mamba3_step_stream(const Mamba3Tensors *t, void *workspace);
void mamba3_step_stream_pool(const Mamba3Pool *pool, void *workspace);
void mamba3_step_state16(const Mamba3Tensors *t, void *workspace);
void mamba3_step_state16_pool(const Mamba3Pool *pool, void *workspace);
void mamba3_step_state_bf16(const Mamba3Tensors *t, void *workspace);
void mamba3_step_state_bf16_pool(const Mamba3Pool *pool, void *workspace);

/* 10, 11, 12: the step with a block's rows of H staged in shared memory by
 * one bulk copy (sm_90) and stored back by one, 7-9's dtypes. SKIPs L > 1, N
 * not a multiple of 8, and a head's state past one block's shared memory. */
const char *mamba3_step_bulk_unsupported(const Mamba3Shape *s);
const char *mamba3_step_bulk_state16_unsupported(const Mamba3Shape *s);
void mamba3_step_bulk(const Mamba3Tensors *t, void *workspace);
void mamba3_step_bulk_pool(const Mamba3Pool *pool, void *workspace);
void mamba3_step_bulk_state16(const Mamba3Tensors *t, void *workspace);
void mamba3_step_bulk_state16_pool(const Mamba3Pool *pool, void *workspace);
void mamba3_step_bulk_state_bf16(const Mamba3Tensors *t, void *workspace);
void mamba3_step_bulk_state_bf16_pool(const Mamba3Pool *pool, void *workspace);

END_C_DECLS

#endif
