/* 07_decode_kernel, GPU: the decode step (selective_state_update), both
 * forms, T tokens per launch, from one thread per state row to the
 * bandwidth-bound kernel, and the previous stage (03's and 05's scans run as
 * T decode steps) that every version is checked against. Version 1 is the
 * CPU form (cpu.h). Launchers only enqueue work on the default stream;
 * scratch memory is the `workspace` the caller allocates, of the size the
 * *_workspace function gives (none where there is no such function). */
#ifndef DECODE_KERNEL_KERNELS_H
#define DECODE_KERNEL_KERNELS_H

#include <stddef.h>

#include "c_decls.h"
#include "decode.h"

BEGIN_C_DECLS

/* 3: one thread per state row (M1 (b, c), M2 (b, h, p)), 16 of its states in
 * registers at a time, the T tokens looped inside: the state is read once
 * and written once. Neighbouring threads are N floats apart in the state, so
 * a warp's load touches 32 sectors for 128 useful bytes. fp32 I/O. */
void decode_thread_per_row(const DecodeTensors *t, void *workspace);

/* 4, 5: coalesced: a state row split over 1..32 lanes, consecutive lanes on
 * consecutive 16 bytes (float4; scalar when N % 4 != 0 or a pointer is
 * misaligned), y summed by warp shuffles, 4 rows per thread in flight, B/C
 * and the per-head scalars loaded once per thread and used for its 4 rows.
 * What it should buy: the state near the copy bandwidth. */
void decode_coalesced(const DecodeTensors *t, void *workspace);       // x, dt, z, B, C, y fp32
void decode_coalesced_fp16(const DecodeTensors *t, void *workspace);  // x, dt, z, B, C, y fp16 bits

/* 6, 7: lean: fewer instructions per byte (Δ and dA by MUFU ex2 once per head
 * or row and token), 16 floats of a row per lane (M2 N 128: 8 lanes, 3
 * shuffle rounds), 8 state loads of 16 bytes in flight per thread, the state
 * streamed (.cs), M1 at 64 registers (4 blocks per SM). What it should buy:
 * the issue slots freed for loads, M1's latency hidden by twice the warps. */
void decode_lean(const DecodeTensors *t, void *workspace);       // x, dt, z, B, C, y fp32
void decode_lean_fp16(const DecodeTensors *t, void *workspace);  // x, dt, z, B, C, y fp16 bits

/* 8: 7 with the state stored in fp16 too: half the state's bytes. */
void decode_lean_state16(const DecodeTensors *t, void *workspace);  // x, dt, z, B, C, y, state fp16 bits

/* 9: 8 in bf16 (x, dt, z, B, C, y and the state): 8's bytes for a bf16
 * model, each rounding of the state 8 times coarser than fp16's. */
void decode_lean_state_bf16(const DecodeTensors *t, void *workspace);  // x, dt, z, B, C, y, state bf16 bits

/* 10, 11, 12: staged: units of state rows (Mamba-2: 16 rows of a head, 8
 * threads a row; Mamba-1: 32 channels in fp32, 64 in 16 bits, N 16)
 * brought into shared memory by one bulk copy each (cp.async.bulk on an
 * mbarrier), 2 units in flight per block, persistent blocks; the state back
 * by streaming 16-byte stores. What it should buy: the state's loads in
 * flight no longer capped by registers. 12 is 11 in bf16. */
const char *decode_staged_unsupported(const DecodeShape *s);
void decode_staged(const DecodeTensors *t, void *workspace);  // x, dt, z, B, C, y, state fp32
const char *decode_staged_state16_unsupported(const DecodeShape *s);  // 11 and 12
void decode_staged_state16(const DecodeTensors *t, void *workspace);     // x, dt, z, B, C, y, state fp16 bits
void decode_staged_state_bf16(const DecodeTensors *t, void *workspace);  // x, dt, z, B, C, y, state bf16 bits

/* 6-12 as a server runs them (DecodeServing, decode.h): each batch entry on
 * its slot of the pool, padding entries (a negative slot) skipped, the state
 * after every token stored when intermediate_states is given. In place when
 * state_out == state; otherwise a pool is copied to state_out first. */
void decode_lean_serving(const DecodeServing *sv, void *workspace);
void decode_lean_fp16_serving(const DecodeServing *sv, void *workspace);
void decode_lean_state16_serving(const DecodeServing *sv, void *workspace);
void decode_lean_state_bf16_serving(const DecodeServing *sv, void *workspace);
void decode_staged_serving(const DecodeServing *sv, void *workspace);
void decode_staged_state16_serving(const DecodeServing *sv, void *workspace);
void decode_staged_state_bf16_serving(const DecodeServing *sv, void *workspace);

/* The previous stage: the T tokens as a scan of L = T steps from h0 = state.
 * M2: 05's ssd_steps_fp32 (chunk 64) on the same layouts. M1: 03's
 * scan_fused_tuned after transposes to its time-last layouts, y transposed
 * back. fp32 only. Workspace: a copy of the state (used when state_out ==
 * state), plus for M1 the transposed tensors, plus the scan's own workspace. */
size_t decode_via_scan_workspace(const DecodeShape *s);
const char *decode_via_scan_unsupported(const DecodeShape *s);
void decode_via_scan(const DecodeTensors *t, void *workspace);

/* 17-20: the step with the state in 8-bit codes and an fp32 scale a row
 * (common/codes8.h; 13-16 in C): a lane's 16 values one 16-byte load of
 * codes, a thread's 4 rows sharing B and C, each row decoded into fp32,
 * updated, y written, its new scale from a max over its lanes, rounded to
 * codes every token; int8 or fp8 e4m3, to the nearest or stochastically.
 * x, dt, z, B, C, y fp32. SKIPs N not a multiple of 16 or above 512. What it
 * should buy: a quarter of version 6's state bytes for a few instructions
 * an element. */
const char *decode_codes8_unsupported(const DecodeShape *s);
void decode_lean_state_int8(const DecodeTensors *t, void *workspace);
void decode_lean_state_int8_serving(const DecodeServing *sv, void *workspace);
void decode_lean_state_int8_sr(const DecodeTensors *t, void *workspace);
void decode_lean_state_int8_sr_serving(const DecodeServing *sv, void *workspace);
void decode_lean_state_fp8(const DecodeTensors *t, void *workspace);
void decode_lean_state_fp8_serving(const DecodeServing *sv, void *workspace);
void decode_lean_state_fp8_sr(const DecodeTensors *t, void *workspace);
void decode_lean_state_fp8_sr_serving(const DecodeServing *sv, void *workspace);

END_C_DECLS

#endif
