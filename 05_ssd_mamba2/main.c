/* 05_ssd_mamba2: Mamba-2's SSD (mamba_chunk_scan_combined), first in C (the
 * recurrence, the quadratic "attention" form, the chunked algorithm), then on
 * the GPU from 03's scan through the Mamba-2 -> Mamba-1 mapping to a fused
 * tensor-core kernel.
 *   build/05_ssd_mamba2            check lines + a short timing/memory table
 *   build/05_ssd_mamba2 --list     the numbered versions
 *   build/05_ssd_mamba2 7 --bench  time version 7 at the S3 shapes */
#include "driver.h"
#include "op_ssd.h"

#include "cpu.h"
#include "kernels.h"
#include "precision.h"

static const SsdVersion versions[] = {
    {CPU_VERSION(ssd_recurrent_cpu, DT_FP32,
                 "H_t = exp(dt A) H_{t-1} + dt x_t B_t^T, y_t = H_t C_t: one step at a time"),
     .workspace_bytes = ssd_recurrent_cpu_workspace},
    {CPU_VERSION(ssd_quadratic_cpu, DT_FP32,
                 "y = (L o C B^T) X with the (L x L) decay mask: the attention form, O(L^2)"),
     .workspace_bytes = ssd_quadratic_cpu_workspace,
     .unsupported = ssd_quadratic_cpu_unsupported},
    {CPU_VERSION(ssd_chunked_cpu, DT_FP32,
                 "per chunk: diagonal block, chunk states, states passed between chunks, off-diagonal output"),
     .workspace_bytes = ssd_chunked_cpu_workspace,
     .run_packed = ssd_chunked_cpu_packed},
    {GPU_VERSION(ssd_via_scan_fused_tuned, DT_FP32,
                 "no SSD: 03's fused scan on h*p channels through the Mamba-2 -> Mamba-1 mapping"),
     .workspace_bytes = ssd_via_scan_fused_tuned_workspace,
     .unsupported = ssd_via_scan_fused_tuned_unsupported},
    {GPU_VERSION(ssd_steps_fp32, DT_FP32,
                 "the official four steps, a kernel each, CUDA cores: chunk states through DRAM"),
     .workspace_bytes = ssd_steps_workspace},
    {GPU_VERSION(ssd_steps_fp16, DT_FP16,
                 "the same with fp16 x, dt, z, B, C, y: half the input bytes, the same FLOPs"),
     .workspace_bytes = ssd_steps_workspace},
    {GPU_VERSION(ssd_fused_mma, DT_FP16,
                 "one block per (b, h, chunk), products on mma.sync (fp16 in, fp32 acc), states via L2"),
     .workspace_bytes = ssd_fused_mma_workspace,
     .unsupported = ssd_fused_mma_unsupported},
    {GPU_VERSION(ssd_fused_wgmma, DT_FP16,
                 "version 7 on wgmma (sm_90a): 64x64 warpgroup products, B from swizzled smem, chunks of 128"),
     .workspace_bytes = ssd_fused_wgmma_workspace,
     .unsupported = ssd_fused_wgmma_unsupported},
    {GPU_VERSION(ssd_wgmma_frag_ring, DT_FP16,
                 "version 8 with the state handed over in accumulator order: 16-byte ring traffic, stmatrix"),
     .workspace_bytes = ssd_fused_wgmma_workspace,
     .unsupported = ssd_fused_wgmma_unsupported},
    {GPU_VERSION(ssd_wgmma_heads, DT_FP16,
                 "version 9 with several heads a block: B, C loaded once, the next head's x during this one's y"),
     .workspace_bytes = ssd_fused_wgmma_workspace,
     .unsupported = ssd_fused_wgmma_unsupported},
    {GPU_VERSION(ssd_wgmma_frag_ring_bf16, DT_BF16,
                 "version 9 with bf16 inputs, outputs and tensor-core operands (Mamba-2 checkpoints' dtype)"),
     .workspace_bytes = ssd_fused_wgmma_workspace,
     .unsupported = ssd_fused_wgmma_unsupported},
    {GPU_VERSION(ssd_wgmma_tma, DT_FP16,
                 "version 9 with bulk tensor copies (TMA): x, B, C in and y out by a few copies a block"),
     .workspace_bytes = ssd_fused_wgmma_workspace,
     .unsupported = ssd_wgmma_tma_unsupported},
    {GPU_VERSION(ssd_wgmma_tma_bf16, DT_BF16,
                 "version 12 with bf16 inputs, outputs and tensor-core operands"),
     .workspace_bytes = ssd_fused_wgmma_workspace,
     .unsupported = ssd_wgmma_tma_unsupported},
    {GPU_VERSION(ssd_wgmma_walk, DT_FP16,
                 "version 12 walking a (b, h)'s chunks in a block: no waiting between blocks, copies a chunk ahead"),
     .workspace_bytes = ssd_wgmma_walk_workspace,
     .unsupported = ssd_wgmma_walk_unsupported,
     .run_packed = ssd_wgmma_walk_packed},
    {GPU_VERSION(ssd_wgmma_walk_bf16, DT_BF16,
                 "version 14 with bf16 inputs, outputs and tensor-core operands"),
     .workspace_bytes = ssd_wgmma_walk_workspace,
     .unsupported = ssd_wgmma_walk_unsupported,
     .run_packed = ssd_wgmma_walk_bf16_packed},
    {GPU_VERSION(ssd_wgmma_split_fp32, DT_FP32,
                 "version 12 with fp32 I/O, each operand split into bf16 hi + lo: three products, fp32 accuracy"),
     .workspace_bytes = ssd_fused_wgmma_workspace,
     .unsupported = ssd_wgmma_split_unsupported},
    {GPU_VERSION(ssd_wgmma_split_bc_fp32, DT_FP32,
                 "version 16 with B and C split once, before the kernel, for all heads of a group"),
     .workspace_bytes = ssd_wgmma_split_bc_workspace,
     .unsupported = ssd_wgmma_split_unsupported},
    {GPU_VERSION(ssd_wgmma_ws, DT_FP16,
                 "version 14 split by role: warps copy tiles in and y out, a warpgroup computes chunks of 64"),
     .workspace_bytes = ssd_wgmma_ws_workspace,
     .unsupported = ssd_wgmma_ws_unsupported},
    {GPU_VERSION(ssd_wgmma_ws_bf16, DT_BF16,
                 "version 18 with bf16 inputs, outputs and tensor-core operands"),
     .workspace_bytes = ssd_wgmma_ws_workspace,
     .unsupported = ssd_wgmma_ws_unsupported},
    {GPU_VERSION(ssd_wgmma_ws_split_fp32, DT_FP32,
                 "version 18's walk on 17's split operands: B, C split before, x by three warps of the block"),
     .workspace_bytes = ssd_wgmma_ws_split_workspace,
     .unsupported = ssd_wgmma_ws_split_unsupported},
    {GPU_VERSION(ssd_wgmma_ws_split_2wg_fp32, DT_FP32,
                 "version 20 with two computing warpgroups, each 32 of p's columns and of P's, P shared in smem"),
     .workspace_bytes = ssd_wgmma_ws_split_workspace,
     .unsupported = ssd_wgmma_ws_split_unsupported},
};

int main(int argc, char **argv) {
    const Chapter chapter = {
        .name = "05_ssd_mamba2", .title = "Mamba-2's SSD, the chunked state-space dual form",
        .op = &OP_SSD, .versions = versions, .nversions = COUNT(versions), .check_fixtures = true,
        .bench_sets = BENCH_S3 | BENCH_S3_Z | BENCH_CROSSOVER | BENCH_SERVING_S3,
        /* the GPU versions also against the C chunked form and 03 through the mapping */
        .prev_gpu = {&versions[2].info, &versions[3].info},
        .lesson = ssd_precision_lesson, .csv_tables = {"precision"},
    };
    return chapter_main(&chapter, argc, argv);
}
