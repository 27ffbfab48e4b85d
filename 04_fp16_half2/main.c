/* 04_fp16_half2: the fused scan with fp16 u, delta, z, B, C, y (fp32 A, D,
 * bias and state), then part of the exponentials moved off the MUFU onto the
 * FMA pipe with a polynomial exp2, and the accuracy that costs, measured;
 * last the same kernel with bf16 u, delta, z, B, C, y.
 *   build/04_fp16_half2            check lines + a short timing/memory table
 *   build/04_fp16_half2 --list     the numbered versions
 *   build/04_fp16_half2 5 --bench  time version 5 at the S1 and S2 shapes */
#include "driver.h"
#include "op_scan.h"

#include "../03_fused_cuda/kernels.h"
#include "cpu.h"
#include "kernels.h"

static const ScanVersion versions[] = {
    {.info = {.name = "scan_fp16_poly3_cpu",
              .what = "version 5 in C: fp16 I/O, fp32 state, states n % 8 == 7 on the degree-3 exp2",
              .gpu = false, .dtype = DT_FP16},
     .workspace_bytes = scan_fp16_poly3_cpu_workspace,
     .run = scan_fp16_poly3_cpu},
    {.info = {.name = "scan_fp16_tiled",
              .what = "03's plan (lanes, then chunks; <= 16 states a lane), fp16 in and out by 2-byte loads",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = scan_fp16_tiled_workspace,
     .unsupported = scan_fp16_tiled_unsupported,
     .run = scan_fp16_tiled},
    {.info = {.name = "scan_fp16_half2",
              .what = "16-byte loads and stores, 8 halves widened as 4 half2: 8x fewer memory instructions",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = scan_fp16_tiled_workspace,
     .unsupported = scan_fp16_tiled_unsupported,
     .run = scan_fp16_half2},
    {.info = {.name = "scan_fp16_row_state",
              .what = "N = 16 or 32 compiled in, one thread per row: no shuffles, step costs over N states",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = scan_fp16_row_state_workspace,
     .unsupported = scan_fp16_row_state_unsupported,
     .run = scan_fp16_row_state},
    {.info = {.name = "scan_fp16_poly3",
              .what = "exps of states n % 8 == 7 on the FMA pipe (degree 3): MUFU and issue balanced",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = scan_fp16_row_state_workspace,
     .unsupported = scan_fp16_row_state_unsupported,
     .run = scan_fp16_poly3},
    {.info = {.name = "scan_fp16_poly5",
              .what = "as 5 with degree 5: exps as exact as ex2.approx, 2 more FFMA each",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = scan_fp16_row_state_workspace,
     .unsupported = scan_fp16_row_state_unsupported,
     .run = scan_fp16_poly5},
    {.info = {.name = "scan_bf16_poly3",
              .what = "version 5 with bf16 u, delta, z, B, C, y: the dtype Mamba checkpoints run in, 8 bits of mantissa",
              .gpu = true, .dtype = DT_BF16},
     .workspace_bytes = scan_fp16_row_state_workspace,
     .unsupported = scan_fp16_row_state_unsupported,
     .run = scan_bf16_poly3},
    {.info = {.name = "scan_fp16_tuned",
              .what = "03's version 7 with fp16 rows: lanes before chunks, tiles staged by cp.async and widened once",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported,
     .run = scan_fp16_tuned,
     .run_packed = scan_fp16_tuned_packed},
    {.info = {.name = "scan_bf16_tuned",
              .what = "version 8 with bf16 u, delta, z, B, C, y: the same bytes and instructions",
              .gpu = true, .dtype = DT_BF16},
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported,
     .run = scan_bf16_tuned,
     .run_packed = scan_bf16_tuned_packed},
    {.info = {.name = "scan_fp16_pdl",
              .what = "version 8, pass 2 launched while pass 1 runs (programmatic dependent launch): no gap between them",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported,
     .run = scan_fp16_pdl},
    {.info = {.name = "scan_fp16_pdl_chunk0",
              .what = "as 10, chunk 0's y in pass 2, launched at once: its chunk-0 blocks run beside pass 1",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported,
     .run = scan_fp16_pdl_chunk0},
    {.info = {.name = "scan_bf16_pdl",
              .what = "version 10 with bf16 u, delta, z, B, C, y: the passes of bf16's tuned kernel overlapped",
              .gpu = true, .dtype = DT_BF16},
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported,
     .run = scan_bf16_pdl},
    {.info = {.name = "scan_bf16_pdl_chunk0",
              .what = "version 11 with bf16 u, delta, z, B, C, y",
              .gpu = true, .dtype = DT_BF16},
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported,
     .run = scan_bf16_pdl_chunk0},
    {.info = {.name = "scan_fp16_running",
              .what = "version 10, a tile's copies by a pointer stepped row to row: ~10 instructions a cp.async, not ~40",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported,
     .run = scan_fp16_running,
     .run_packed = scan_fp16_running_packed},
    {.info = {.name = "scan_fp16_rounds",
              .what = "version 14, twice the lanes a row where that spreads the blocks over the SMs in fewer, fuller rounds",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported,
     .run = scan_fp16_rounds,
     .run_packed = scan_fp16_rounds_packed},
};

/* The previous stage, 03_fused_cuda: its tuned fp32 kernel, run on the same
 * fp16-rounded (bf16-rounded for versions 7, 9, 12 and 13) inputs. */
static const ScanVersion fused_tuned = {
    .info = {.name = "scan_fused_tuned", .what = "03_fused_cuda's tuned fp32 kernel",
             .gpu = true, .dtype = DT_FP32},
    .workspace_bytes = scan_fused_tuned_workspace,
    .unsupported = scan_fused_tiled_unsupported,
    .run = scan_fused_tuned};

int main(int argc, char **argv) {
    const Chapter chapter = {
        .name = "04_fp16_half2", .title = "fp16 inputs and outputs, exponentials split between MUFU and FMA pipe",
        .op = &OP_SCAN, .versions = versions, .nversions = COUNT(versions),
        .bench_sets = BENCH_S1 | BENCH_S2 | BENCH_SERVING_S1,
        .prev_gpu = {&fused_tuned.info},  // the GPU versions also against 03's tuned kernel
        .fp16_inputs = true,              // inputs rounded to fp16: the oracle sees what the kernels see
    };
    return chapter_main(&chapter, argc, argv);
}
