/* 06_bidirectional: bidirectional Mamba-2 in both published forms, the
 * default y = SS(x) + flip(SS(flip(x))) + D·x and Hydra's shifted form with
 * its own backward dt, B, C. First in C: 05's chunked form run twice, the
 * way users run it today, then the chunked form where one C·Bᵀ product per
 * chunk serves both directions.
 *   build/06_bidirectional            check lines (both forms)
 *   build/06_bidirectional --list     the numbered versions
 *   build/06_bidirectional --check --hydra --batch 2 --seqlen 300 --heads 4 --headdim 8 --groups 2 --chunk 64 --h0 */
#include "driver.h"
#include "op_bidir.h"

#include "cpu.h"
#include "kernels.h"

static const BidirVersion versions[] = {
    {CPU_VERSION(bidir_twice_cpu, DT_FP32,
                 "05's chunked form forward, then again on flipped copies, summed (with Hydra's shifts): the 1x"),
     .workspace_bytes = bidir_twice_cpu_workspace},
    {CPU_VERSION(bidir_chunked_cpu, DT_FP32,
                 "per chunk one C B^T for both triangles, chunk states passed forward and backward"),
     .workspace_bytes = bidir_chunked_cpu_workspace},
    {GPU_VERSION(bidir_twice_steps_fp32, DT_FP32,
                 "05's four-step kernels forward, then on flipped copies, outputs summed: the GPU 1x in fp32"),
     .workspace_bytes = bidir_twice_steps_workspace},
    {GPU_VERSION(bidir_twice_fused_mma, DT_FP16,
                 "05's fused tensor-core kernel twice on flipped copies, fp16: the 1x this chapter beats"),
     .workspace_bytes = bidir_twice_fused_workspace,
     .unsupported = bidir_twice_fused_unsupported},
    {GPU_VERSION(bidir_fused_mma, DT_FP16,
                 "no flips: both chains of chunk states in one kernel, then y in one pass, one C B^T for both triangles"),
     .workspace_bytes = bidir_fused_mma_workspace,
     .unsupported = bidir_fused_mma_unsupported},
    {GPU_VERSION(bidir_fused_mma_chain, DT_FP16,
                 "one block per chain walks its chunks, the state in registers: no ring in L2, no block waits"),
     .workspace_bytes = bidir_fused_chain_workspace,
     .unsupported = bidir_fused_mma_unsupported},
    {GPU_VERSION(bidir_wgmma, DT_FP16,
                 "version 6 on wgmma: tiles by bulk tensor copies (TMA), chunks of 128, two warpgroups a block"),
     .workspace_bytes = bidir_wgmma_workspace,
     .unsupported = bidir_wgmma_unsupported},
    {GPU_VERSION(bidir_wgmma_bf16, DT_BF16,
                 "version 7 with bf16 inputs and outputs"),
     .workspace_bytes = bidir_wgmma_workspace,
     .unsupported = bidir_wgmma_unsupported},
    {GPU_VERSION(bidir_wgmma_ws, DT_FP16,
                 "each direction a walk of 05's version 18, the state in registers: backward y_b, then forward adds it"),
     .workspace_bytes = bidir_wgmma_ws_workspace,
     .unsupported = bidir_wgmma_ws_unsupported},
    {GPU_VERSION(bidir_wgmma_ws_bf16, DT_BF16,
                 "version 9 with bf16 inputs and outputs"),
     .workspace_bytes = bidir_wgmma_ws_workspace,
     .unsupported = bidir_wgmma_ws_unsupported},
};

int main(int argc, char **argv) {
    const Chapter chapter = {
        .name = "06_bidirectional", .title = "bidirectional Mamba-2, the default and the Hydra form",
        .op = &OP_BIDIR, .versions = versions, .nversions = COUNT(versions), .check_fixtures = true,
        .bench_sets = BENCH_S3_DEFAULT | BENCH_S3_HYDRA,
        .prev_cpu = &versions[0].info,  // the chunked form against 05 run twice
        /* the GPU versions also against the C chunked form and 05's kernels run twice */
        .prev_gpu = {&versions[1].info, &versions[2].info},
    };
    return chapter_main(&chapter, argc, argv);
}
