/* 08_mamba3: Mamba-3 SISO (mamba3_siso_combined), first in C. Its recurrence
 * adds three things to Mamba-2's: a trapezoid rule (two rank-1 terms a step),
 * rotated q and k (data-dependent angles), and a qk head shared by several v
 * heads. The step form, then the chunked form, in C and on the GPU, then the
 * chunked form fused into one tensor-core kernel (16-bit I/O), and the
 * decode step streamed, its state in fp32 or 16 bits.
 *   build/08_mamba3            check lines + a short timing table
 *   build/08_mamba3 --list     the numbered versions
 *   build/08_mamba3 1 --check  check version 1 */
#include "driver.h"
#include "op_mamba3.h"

#include "cpu.h"
#include "kernels.h"
#include "lessons.h"

static const Mamba3Version versions[] = {
    {CPU_VERSION(mamba3_step_cpu, DT_FP32,
                 "each (sequence, head) walks its steps: angles, rotated q and k, two rank-1 terms, y = H q"),
     .workspace_bytes = mamba3_step_cpu_workspace,
     .run_pool = mamba3_step_cpu_pool},
    {CPU_VERSION(mamba3_chunked_cpu, DT_FP32,
                 "per chunk: Mamba-2's SSD with a per-key scale and its own diagonal; q.k per head, not per group"),
     .workspace_bytes = mamba3_chunked_cpu_workspace,
     .run_pool = mamba3_chunked_cpu_pool},
    {GPU_VERSION(mamba3_step_gpu, DT_FP32,
                 "version 1 on the GPU: a block per (sequence, head), H in shared memory, a warp per row of H"),
     .unsupported = mamba3_step_gpu_unsupported},
    {GPU_VERSION(mamba3_chunked_gpu, DT_FP32,
                 "version 2 on the GPU in 05's four steps: but for the angles, a chain of L/Q chunk steps, not L"),
     .workspace_bytes = mamba3_chunked_gpu_workspace,
     .unsupported = mamba3_chunked_gpu_unsupported},
    {GPU_VERSION(mamba3_fused_mma, DT_FP16,
                 "one kernel on tensor cores, a block per (chunk, head); products in the chunk's own frame"),
     .workspace_bytes = mamba3_fused_mma_workspace,
     .unsupported = mamba3_fused_mma_unsupported},
    {GPU_VERSION(mamba3_fused_mma_bf16, DT_BF16,
                 "version 5 with bf16 I/O (the official kernel's dtype)"),
     .workspace_bytes = mamba3_fused_mma_workspace,
     .unsupported = mamba3_fused_mma_unsupported},
    {GPU_VERSION(mamba3_step_stream, DT_FP32,
                 "the decode step (L 1) as a stream: a head a block (split at small batch), two rows a warp, the next rows of H loading"),
     .unsupported = mamba3_step_stream_unsupported,
     .graph = true,
     .run_pool = mamba3_step_stream_pool},
    {GPU_VERSION(mamba3_step_state16, DT_FP16_STATE16,
                 "version 7 with H in fp16 (fp16 I/O too): half the state's bytes, an 8-byte access a lane"),
     .unsupported = mamba3_step_stream_unsupported,
     .graph = true,
     .run_pool = mamba3_step_state16_pool},
    {GPU_VERSION(mamba3_step_state_bf16, DT_BF16_STATE16,
                 "version 8 with bf16 H and I/O (the official kernel's input dtype)"),
     .unsupported = mamba3_step_stream_unsupported,
     .graph = true,
     .run_pool = mamba3_step_state_bf16_pool},
    {GPU_VERSION(mamba3_step_bulk, DT_FP32,
                 "version 7 with a block's rows of H brought in by one bulk copy and stored by one (sm_90)"),
     .unsupported = mamba3_step_bulk_unsupported,
     .graph = true,
     .run_pool = mamba3_step_bulk_pool},
    {GPU_VERSION(mamba3_step_bulk_state16, DT_FP16_STATE16,
                 "version 10 with H in fp16 (fp16 I/O too), as version 8"),
     .unsupported = mamba3_step_bulk_state16_unsupported,
     .graph = true,
     .run_pool = mamba3_step_bulk_state16_pool},
    {GPU_VERSION(mamba3_step_bulk_state_bf16, DT_BF16_STATE16,
                 "version 10 with bf16 H and I/O, as version 9"),
     .unsupported = mamba3_step_bulk_state16_unsupported,
     .graph = true,
     .run_pool = mamba3_step_bulk_state_bf16_pool},
    {GPU_VERSION(mamba3_fused_prefetch, DT_FP16,
                 "version 5 with the chunk's inputs asked for before it computes: angles with q, k, v; z meanwhile"),
     .workspace_bytes = mamba3_fused_mma_workspace,
     .unsupported = mamba3_fused_prefetch_unsupported},
    {GPU_VERSION(mamba3_fused_prefetch_bf16, DT_BF16,
                 "version 13 with bf16 I/O, as version 6"),
     .workspace_bytes = mamba3_fused_mma_workspace,
     .unsupported = mamba3_fused_prefetch_unsupported},
};

int main(int argc, char **argv) {
    const Chapter chapter = {
        .name = "08_mamba3", .title = "Mamba-3 SISO, the trapezoid rule and rotated q and k",
        .op = &OP_MAMBA3, .versions = versions, .nversions = COUNT(versions),
        .bench_sets = BENCH_S6 | BENCH_S6_STEP | BENCH_SERVING_S6,
        .prev_cpu = &versions[0].info,    // the chunked form also against the step form
        .prev_gpu = {&versions[0].info, &versions[1].info},  // the GPU versions also against both C forms
        .check_fixtures = true,
        .lesson = mamba3_lessons, .csv_tables = {"angle_drift"},
    };
    return chapter_main(&chapter, argc, argv);
}
