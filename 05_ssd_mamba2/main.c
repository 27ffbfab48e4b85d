/* 05_ssd_mamba2: Mamba-2's SSD (mamba_chunk_scan_combined), first in C (the
 * recurrence, the quadratic "attention" form, the chunked algorithm), then on
 * the GPU from 03's scan through the Mamba-2 -> Mamba-1 mapping to a fused
 * tensor-core kernel.
 *   build/05_ssd_mamba2            check lines + a short timing/memory table
 *   build/05_ssd_mamba2 --list     the numbered versions
 *   build/05_ssd_mamba2 7 --bench  time version 7 at the S3 shapes */
#include "op_ssd.h"

#include "cpu.h"
#include "kernels.h"
#include "precision.h"

static const SsdVersion versions[] = {
    {.info = {.name = "ssd_recurrent_cpu",
              .what = "H_t = exp(dt A) H_{t-1} + dt x_t B_t^T, y_t = H_t C_t: one step at a time",
              .gpu = false, .dtype = DT_FP32},
     .workspace_bytes = ssd_recurrent_cpu_workspace,
     .run = ssd_recurrent_cpu},
    {.info = {.name = "ssd_quadratic_cpu",
              .what = "y = (L o C B^T) X with the (L x L) decay mask: the attention form, O(L^2)",
              .gpu = false, .dtype = DT_FP32},
     .workspace_bytes = ssd_quadratic_cpu_workspace,
     .unsupported = ssd_quadratic_cpu_unsupported,
     .run = ssd_quadratic_cpu},
    {.info = {.name = "ssd_chunked_cpu",
              .what = "per chunk: diagonal block, chunk states, states passed between chunks, off-diagonal output",
              .gpu = false, .dtype = DT_FP32},
     .workspace_bytes = ssd_chunked_cpu_workspace,
     .run = ssd_chunked_cpu,
     .run_packed = ssd_chunked_cpu_packed},
    {.info = {.name = "ssd_via_scan_fused_tuned",
              .what = "no SSD: 03's fused scan on h*p channels through the Mamba-2 -> Mamba-1 mapping",
              .gpu = true, .dtype = DT_FP32},
     .workspace_bytes = ssd_via_scan_fused_tuned_workspace,
     .unsupported = ssd_via_scan_fused_tuned_unsupported,
     .run = ssd_via_scan_fused_tuned},
    {.info = {.name = "ssd_steps_fp32",
              .what = "the official four steps, a kernel each, CUDA cores: chunk states through DRAM",
              .gpu = true, .dtype = DT_FP32},
     .workspace_bytes = ssd_steps_workspace,
     .run = ssd_steps_fp32},
    {.info = {.name = "ssd_steps_fp16",
              .what = "the same with fp16 x, dt, z, B, C, y: half the input bytes, the same FLOPs",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = ssd_steps_workspace,
     .run = ssd_steps_fp16},
    {.info = {.name = "ssd_fused_mma",
              .what = "one block per (b, h, chunk), products on mma.sync (fp16 in, fp32 acc), states via L2",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = ssd_fused_mma_workspace,
     .unsupported = ssd_fused_mma_unsupported,
     .run = ssd_fused_mma},
    {.info = {.name = "ssd_fused_wgmma",
              .what = "version 7 on wgmma (sm_90a): 64x64 warpgroup products, B from swizzled smem, chunks of 128",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = ssd_fused_wgmma_workspace,
     .unsupported = ssd_fused_wgmma_unsupported,
     .run = ssd_fused_wgmma},
    {.info = {.name = "ssd_wgmma_frag_ring",
              .what = "version 8 with the state handed over in accumulator order: 16-byte ring traffic, stmatrix",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = ssd_fused_wgmma_workspace,
     .unsupported = ssd_fused_wgmma_unsupported,
     .run = ssd_wgmma_frag_ring},
    {.info = {.name = "ssd_wgmma_heads",
              .what = "version 9 with several heads a block: B, C loaded once, the next head's x during this one's y",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = ssd_fused_wgmma_workspace,
     .unsupported = ssd_fused_wgmma_unsupported,
     .run = ssd_wgmma_heads},
    {.info = {.name = "ssd_wgmma_frag_ring_bf16",
              .what = "version 9 with bf16 inputs, outputs and tensor-core operands (Mamba-2 checkpoints' dtype)",
              .gpu = true, .dtype = DT_BF16},
     .workspace_bytes = ssd_fused_wgmma_workspace,
     .unsupported = ssd_fused_wgmma_unsupported,
     .run = ssd_wgmma_frag_ring_bf16},
    {.info = {.name = "ssd_wgmma_tma",
              .what = "version 9 with bulk tensor copies (TMA): x, B, C in and y out by a few copies a block",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = ssd_fused_wgmma_workspace,
     .unsupported = ssd_wgmma_tma_unsupported,
     .run = ssd_wgmma_tma},
    {.info = {.name = "ssd_wgmma_tma_bf16",
              .what = "version 12 with bf16 inputs, outputs and tensor-core operands",
              .gpu = true, .dtype = DT_BF16},
     .workspace_bytes = ssd_fused_wgmma_workspace,
     .unsupported = ssd_wgmma_tma_unsupported,
     .run = ssd_wgmma_tma_bf16},
    {.info = {.name = "ssd_wgmma_walk",
              .what = "version 12 walking a (b, h)'s chunks in a block: no waiting between blocks, copies a chunk ahead",
              .gpu = true, .dtype = DT_FP16},
     .workspace_bytes = ssd_wgmma_walk_workspace,
     .unsupported = ssd_wgmma_walk_unsupported,
     .run = ssd_wgmma_walk},
    {.info = {.name = "ssd_wgmma_walk_bf16",
              .what = "version 14 with bf16 inputs, outputs and tensor-core operands",
              .gpu = true, .dtype = DT_BF16},
     .workspace_bytes = ssd_wgmma_walk_workspace,
     .unsupported = ssd_wgmma_walk_unsupported,
     .run = ssd_wgmma_walk_bf16},
};

int main(int argc, char **argv) {
    const Chapter chapter = {
        .name = "05_ssd_mamba2",
        .title = "05_ssd_mamba2: Mamba-2's SSD, the chunked state-space dual form",
        .op = &OP_SSD,
        .versions = versions,
        .nversions = sizeof(versions) / sizeof(versions[0]),
        .prev_cpu = NULL,  // the CPU versions are checked against the oracle
        /* the GPU versions also against the C chunked form and 03 through the mapping */
        .prev_gpu = {&versions[2].info, &versions[3].info},
        .check_fixtures = true,
        .bench_sets = BENCH_S3 | BENCH_S3_Z | BENCH_CROSSOVER | BENCH_SERVING_S3,
        .lesson = ssd_precision_lesson,
    };
    return chapter_main(&chapter, argc, argv);
}
