/* 01_naive_scan: the selective scan as the reference writes it, the streaming
 * CPU scan, and the GPU eager baseline (the 1x of every speedup plot).
 *   build/01_naive_scan            check lines + a short timing/memory table
 *   build/01_naive_scan --list     the numbered versions
 *   build/01_naive_scan 3 --bench  time version 3 at the S1 shapes */
#include "driver.h"
#include "op_scan.h"

#include "cpu.h"
#include "kernels.h"

static const ScanVersion versions[] = {
    {CPU_VERSION(scan_materialized_cpu, DT_FP32,
                 "selective_scan_ref in C: deltaA, deltaB_u as (b,d,L,N) arrays, then a step loop"),
     .workspace_bytes = scan_materialized_cpu_workspace},
    {CPU_VERSION(scan_streaming_cpu, DT_FP32,
                 "one pass over time per (b,d) row, h[N] in a small array: nothing of size (b,d,L,N)")},
    {GPU_VERSION(scan_eager_gpu, DT_FP32,
                 "PyTorch eager on the GPU: (b,d,L,N) tensors in device memory, one launch per step"),
     .workspace_bytes = scan_eager_workspace},
};

int main(int argc, char **argv) {
    const Chapter chapter = {
        .name = "01_naive_scan", .title = "the scan as selective_scan_ref writes it",
        .op = &OP_SCAN, .versions = versions, .nversions = COUNT(versions), .bench_sets = BENCH_S1,
        .prev_gpu = {&versions[1].info},  // the eager GPU scan against the streaming CPU scan
        .check_fixtures = true,
    };
    return chapter_main(&chapter, argc, argv);
}
