/* The dense rate of Hopper's warpgroup matrix product (wgmma, sm_90a), fp16
 * or bf16 operands with fp32 accumulators: the tensor cores' peak, above
 * what mma.sync reaches (common/floors.cu probes both). */
#ifndef WGMMA_PROBE_H
#define WGMMA_PROBE_H

#include "c_decls.h"

BEGIN_C_DECLS

/* A timer the caller lends: the median time in ms of launch(ctx) over
 * several launches (floors.cu's). Passed in, so this module calls no other. */
typedef double (*ProbeTimer)(void (*launch)(void *ctx), void *ctx);

/* TFLOP/s of back-to-back m64n256k16 wgmmas over one full wave of blocks,
 * bf16 operands when bf16 is nonzero, else fp16; 0 where wgmma cannot run:
 * this object built without sm_90a code (CUDA_ARCH other than sm_90), or a
 * device that is not compute capability 9.0. */
double wgmma_probe_tflops(int bf16, ProbeTimer time_ms);

END_C_DECLS

#endif
