/* Floor probes: the device's copy bandwidth and exp2 rate, measured once per
 * run with buffers far larger than L2, its tensor-core rates (fp16 mma.sync,
 * and dense fp16 and bf16 wgmma where the device has it; fp32 accumulate),
 * and the floor of a row:
 *   floor_ms = max(bytes / bandwidth, exps / exp_rate, flops / matrix_rate)
 * The matrix rate is wgmma's fp16 rate on compute capability 9.0 with this
 * build's sm_90a code (CUDA_ARCH=sm_90), else mma.sync's. */
#ifndef FLOORS_H
#define FLOORS_H

#include "c_decls.h"

BEGIN_C_DECLS

typedef struct {
    double bw_gbps;        // copy bandwidth, bytes read + written, GB/s
    double exp_rate;       // ex2.approx.f32 results per second
    double matrix_tflops;  // the floor's matrix rate, TFLOP/s (rows with flops = 0 ignore it):
                           // wgmma_fp16_tflops where it is probed, else mma_sync_tflops
    double mma_sync_tflops;    // fp16 mma.sync m16n8k16, fp32 accumulate
    double wgmma_fp16_tflops;  // dense fp16 wgmma m64n256k16, fp32 accumulate; 0 where not available
    double wgmma_bf16_tflops;  // the same with bf16 operands; 0 where not available
} Floors;

/* Probes on first call (about a second), then returns the cached values. */
const Floors *floors_get(void);
double floor_ms(const Floors *f, double bytes, double exps, double flops);

END_C_DECLS

#endif
