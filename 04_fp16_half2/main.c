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
    {CPU_VERSION(scan_fp16_poly3_cpu, DT_FP16,
                 "version 5 in C: fp16 I/O, fp32 state, states n % 8 == 7 on the degree-3 exp2"),
     .workspace_bytes = scan_fp16_poly3_cpu_workspace},
    {GPU_VERSION(scan_fp16_tiled, DT_FP16,
                 "03's plan (lanes, then chunks; <= 16 states a lane), fp16 in and out by 2-byte loads"),
     .workspace_bytes = scan_fp16_tiled_workspace,
     .unsupported = scan_fp16_tiled_unsupported},
    {GPU_VERSION(scan_fp16_half2, DT_FP16,
                 "16-byte loads and stores, 8 halves widened as 4 half2: 8x fewer memory instructions"),
     .workspace_bytes = scan_fp16_tiled_workspace,
     .unsupported = scan_fp16_tiled_unsupported},
    {GPU_VERSION(scan_fp16_row_state, DT_FP16,
                 "N = 16 or 32 compiled in, a thread a row where rows fill the GPU: few shuffles, step costs over N states"),
     .workspace_bytes = scan_fp16_row_state_workspace,
     .unsupported = scan_fp16_row_state_unsupported},
    {GPU_VERSION(scan_fp16_poly3, DT_FP16,
                 "exps of states n % 8 == 7 on the FMA pipe (degree 3): MUFU and issue balanced"),
     .workspace_bytes = scan_fp16_row_state_workspace,
     .unsupported = scan_fp16_row_state_unsupported},
    {GPU_VERSION(scan_fp16_poly5, DT_FP16,
                 "as 5 with degree 5: exps as exact as ex2.approx, 2 more FFMA each"),
     .workspace_bytes = scan_fp16_row_state_workspace,
     .unsupported = scan_fp16_row_state_unsupported},
    {GPU_VERSION(scan_bf16_poly3, DT_BF16,
                 "version 5 with bf16 u, delta, z, B, C, y: the dtype Mamba checkpoints run in, 8 bits of mantissa"),
     .workspace_bytes = scan_fp16_row_state_workspace,
     .unsupported = scan_fp16_row_state_unsupported},
    {GPU_VERSION(scan_fp16_tuned, DT_FP16,
                 "03's version 7 with fp16 rows: lanes before chunks, tiles staged by cp.async and widened once"),
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported,
     .run_packed = scan_fp16_tuned_packed},
    {GPU_VERSION(scan_bf16_tuned, DT_BF16,
                 "version 8 with bf16 u, delta, z, B, C, y: the same bytes and instructions"),
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported,
     .run_packed = scan_bf16_tuned_packed},
    {GPU_VERSION(scan_fp16_pdl, DT_FP16,
                 "version 8, pass 2 launched while pass 1 runs (programmatic dependent launch): no gap between them"),
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported},
    {GPU_VERSION(scan_fp16_pdl_chunk0, DT_FP16,
                 "as 10, chunk 0's y in pass 2, launched at once: its chunk-0 blocks run beside pass 1"),
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported},
    {GPU_VERSION(scan_bf16_pdl, DT_BF16,
                 "version 10 with bf16 u, delta, z, B, C, y: the passes of bf16's tuned kernel overlapped"),
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported},
    {GPU_VERSION(scan_bf16_pdl_chunk0, DT_BF16,
                 "version 11 with bf16 u, delta, z, B, C, y"),
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported},
    {GPU_VERSION(scan_fp16_running, DT_FP16,
                 "version 10, a tile's copies by a pointer stepped row to row: a quarter of the instructions a cp.async"),
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported,
     .run_packed = scan_fp16_running_packed},
    {GPU_VERSION(scan_fp16_rounds, DT_FP16,
                 "version 14, twice the lanes a row where that spreads the blocks over the SMs in fewer, fuller rounds"),
     .workspace_bytes = scan_fp16_tuned_workspace,
     .unsupported = scan_fp16_tuned_unsupported,
     .run_packed = scan_fp16_rounds_packed},
};

/* The previous stage, 03_fused_cuda: its tuned fp32 kernel, run on the same
 * fp16-rounded (bf16-rounded for versions 7, 9, 12 and 13) inputs. */
static const ScanVersion fused_tuned = {
    GPU_VERSION(scan_fused_tuned, DT_FP32, "03_fused_cuda's tuned fp32 kernel"),
    .workspace_bytes = scan_fused_tuned_workspace,
    .unsupported = scan_fused_tiled_unsupported};

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
