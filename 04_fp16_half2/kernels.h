/* 04_fp16_half2, GPU: the fused scan with fp16 (7: bf16) u, delta, z, B, C, y
 * (fp32 A, D, delta_bias, h0, last_state and state), from 03's design with fp16 loads
 * to a path for N = 16 and 32 that runs part of its exponentials on the FMA
 * pipe. Workspace (all versions): (b, d, chunks - 1, N + 1) fp32 when L is
 * cut into chunks, which happens only when b·d alone cannot fill the GPU. */
#ifndef FP16_HALF2_KERNELS_H
#define FP16_HALF2_KERNELS_H

#include <stddef.h>

#include "c_decls.h"
#include "scan.h"

BEGIN_C_DECLS

/* 2: 03's fused scan with fp16 in and out, one 2-byte load per element; any N <= 256. */
const char *scan_fp16_tiled_unsupported(const ScanShape *s);
size_t scan_fp16_tiled_workspace(const ScanShape *s);
void scan_fp16_tiled(const ScanTensors *t, void *workspace);

/* 3: as 2, 16-byte loads and stores (8 halves, widened as 4 half2).
 * Unsupported and workspace as 2. */
void scan_fp16_half2(const ScanTensors *t, void *workspace);

/* 4: N = 16 or 32 a compile-time constant, one thread holds a whole row
 * (2 or 4 lanes when b·d is small). */
const char *scan_fp16_row_state_unsupported(const ScanShape *s);
size_t scan_fp16_row_state_workspace(const ScanShape *s);
void scan_fp16_row_state(const ScanTensors *t, void *workspace);

/* 5, 6: as 4, one state in eight (EXP2_POLY_STATE) on the polynomial exp2
 * of exp2_poly.h (degree 3, degree 5). Unsupported and workspace as 4. */
void scan_fp16_poly3(const ScanTensors *t, void *workspace);
void scan_fp16_poly5(const ScanTensors *t, void *workspace);

/* 7: version 5 with bf16 u, delta, z, B, C, y (the dtype Mamba checkpoints
 * run in): unsupported and workspace as 4. */
void scan_bf16_poly3(const ScanTensors *t, void *workspace);

/* 8 (tiles16.cu): 03's tuned kernel (its version 7) with fp16 rows staged by
 * cp.async and widened in shared memory, 32-step tiles, at least 4 states a
 * thread. Any N <= 256. */
const char *scan_fp16_tuned_unsupported(const ScanShape *s);
size_t scan_fp16_tuned_workspace(const ScanShape *s);
void scan_fp16_tuned(const ScanTensors *t, void *workspace);

/* 9: version 8 with bf16 u, delta, z, B, C, y. Unsupported and workspace as 8. */
void scan_bf16_tuned(const ScanTensors *t, void *workspace);

/* 10: version 8 with its second pass launched as a programmatic dependent of
 * the first (sm_90): it starts while the first ends. Unsupported and
 * workspace as 8. */
void scan_fp16_pdl(const ScanTensors *t, void *workspace);

/* 11: version 10 with chunk 0's y moved from pass 1 to pass 2, which is
 * launched at once: its chunk-0 blocks need nothing of pass 1 and run beside
 * it. Unsupported and workspace as 8. */
void scan_fp16_pdl_chunk0(const ScanTensors *t, void *workspace);

/* 12, 13: versions 10 and 11 with bf16 u, delta, z, B, C, y. Unsupported and
 * workspace as 8. */
void scan_bf16_pdl(const ScanTensors *t, void *workspace);
void scan_bf16_pdl_chunk0(const ScanTensors *t, void *workspace);

/* 14: version 10 with the copies of a tile addressed by a pointer stepped
 * from row to row, not from each row's index (~10 instructions a cp.async,
 * not ~40), in kernels bounded to the blocks an SM held before. Unsupported
 * and workspace as 8. */
void scan_fp16_running(const ScanTensors *t, void *workspace);

/* 15: version 14, and where L is not cut, twice the lanes a row when that
 * spreads the blocks over the SMs in fewer, fuller rounds. Unsupported and
 * workspace as 8. */
void scan_fp16_rounds(const ScanTensors *t, void *workspace);

/* 8, 9, 14, 15 on a packed row (ScanPacked): the chunks of the version's plan
 * laid over the sequences, each sequence from its h0 row to its last_state
 * row (ops/scan/scan_tiles.cuh, packed rows). Workspace as 8. */
void scan_fp16_tuned_packed(const ScanPacked *pk, void *workspace);
void scan_bf16_tuned_packed(const ScanPacked *pk, void *workspace);
void scan_fp16_running_packed(const ScanPacked *pk, void *workspace);
void scan_fp16_rounds_packed(const ScanPacked *pk, void *workspace);

END_C_DECLS

#endif
