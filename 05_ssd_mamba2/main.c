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

static const SsdVersion versions[] = {
    {{"ssd_recurrent_cpu",
      "H_t = exp(dt A) H_{t-1} + dt x_t B_t^T, y_t = H_t C_t: one step at a time",
      false, DT_FP32}, ssd_recurrent_cpu_workspace, NULL, ssd_recurrent_cpu},
    {{"ssd_quadratic_cpu",
      "y = (L o C B^T) X with the (L x L) decay mask: the attention form, O(L^2)",
      false, DT_FP32}, ssd_quadratic_cpu_workspace, ssd_quadratic_cpu_unsupported, ssd_quadratic_cpu},
    {{"ssd_chunked_cpu",
      "per chunk: diagonal block, chunk states, states passed between chunks, off-diagonal output",
      false, DT_FP32}, ssd_chunked_cpu_workspace, NULL, ssd_chunked_cpu},
    {{"ssd_via_scan_fused_tuned",
      "no SSD: 03's fused scan on h*p channels through the Mamba-2 -> Mamba-1 mapping",
      true, DT_FP32}, ssd_via_scan_fused_tuned_workspace, ssd_via_scan_fused_tuned_unsupported,
     ssd_via_scan_fused_tuned},
    {{"ssd_steps_fp32",
      "the official four steps, a kernel each, CUDA cores: chunk states through DRAM",
      true, DT_FP32}, ssd_steps_workspace, NULL, ssd_steps_fp32},
    {{"ssd_steps_fp16",
      "the same with fp16 x, dt, z, B, C, y: half the input bytes, the same FLOPs",
      true, DT_FP16}, ssd_steps_workspace, NULL, ssd_steps_fp16},
    {{"ssd_fused_mma",
      "one block per (b, h, chunk), products on mma.sync (fp16 in, fp32 acc), states via L2",
      true, DT_FP16}, ssd_fused_mma_workspace, ssd_fused_mma_unsupported, ssd_fused_mma},
    {{"ssd_fused_wgmma",
      "version 7 on wgmma (sm_90a): 64x64 warpgroup products, B from swizzled smem, chunks of 128",
      true, DT_FP16}, ssd_fused_wgmma_workspace, ssd_fused_wgmma_unsupported, ssd_fused_wgmma},
    {{"ssd_wgmma_frag_ring",
      "version 8 with the state handed over in accumulator order: 16-byte ring traffic, stmatrix",
      true, DT_FP16}, ssd_fused_wgmma_workspace, ssd_fused_wgmma_unsupported, ssd_wgmma_frag_ring},
    {{"ssd_wgmma_heads",
      "version 9 with several heads a block: B, C loaded once, the next head's x during this one's y",
      true, DT_FP16}, ssd_fused_wgmma_workspace, ssd_fused_wgmma_unsupported, ssd_wgmma_heads},
    {{"ssd_wgmma_frag_ring_bf16",
      "version 9 with bf16 inputs, outputs and tensor-core operands (Mamba-2 checkpoints' dtype)",
      true, DT_BF16}, ssd_fused_wgmma_workspace, ssd_fused_wgmma_unsupported, ssd_wgmma_frag_ring_bf16},
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
        .bench_sets = BENCH_S3 | BENCH_S3_Z | BENCH_CROSSOVER,
    };
    return chapter_main(&chapter, argc, argv);
}
