/* 02_parallel_scan: the recurrence is a scan over pairs with an associative
 * operator: sequential, Hillis-Steele and Blelloch scans on the CPU and the
 * GPU over materialized pairs, and the log-space cumsum form.
 *   build/02_parallel_scan            check lines + a short timing/memory table
 *   build/02_parallel_scan --list     the numbered versions
 *   build/02_parallel_scan 6 --bench  time version 6 at the S1 shapes */
#include "driver.h"
#include "op_scan.h"

#include "cpu.h"
#include "kernels.h"
#include "../01_naive_scan/cpu.h"
#include "../01_naive_scan/kernels.h"

static const ScanVersion versions[] = {
    {.info = {.name = "scan_sequential_cpu",
              .what = "pairs (a,b) = (exp(dt A), dt B u) as (b,d,L,N) arrays, combined left to right",
              .gpu = false, .dtype = DT_FP32},
     .workspace_bytes = scan_sequential_cpu_workspace,
     .run = scan_sequential_cpu},
    {.info = {.name = "scan_hillis_steele_cpu",
              .what = "log2(L) rounds, each combining every element with the one 2^k back: L log L work",
              .gpu = false, .dtype = DT_FP32},
     .workspace_bytes = scan_hillis_steele_cpu_workspace,
     .run = scan_hillis_steele_cpu},
    {.info = {.name = "scan_blelloch_cpu",
              .what = "up-sweep and down-sweep over a tree of 2^ceil(log2 L) leaves: O(L) work",
              .gpu = false, .dtype = DT_FP32},
     .workspace_bytes = scan_blelloch_cpu_workspace,
     .run = scan_blelloch_cpu},
    {.info = {.name = "scan_logspace_cpu",
              .what = "h = exp(A cumsum dt) * cumsum(exp(-A cumsum dt) b), restarted before |A c| > 20",
              .gpu = false, .dtype = DT_FP32},
     .workspace_bytes = scan_logspace_cpu_workspace,
     .run = scan_logspace_cpu},
    {.info = {.name = "scan_sequential_gpu",
              .what = "pairs as (b,d,N,L) in device memory, one thread per (b,d,n) walks L",
              .gpu = true, .dtype = DT_FP32},
     .workspace_bytes = scan_pairs_gpu_workspace,
     .run = scan_sequential_gpu},
    {.info = {.name = "scan_hillis_steele_gpu",
              .what = "block per (b,d,n): warp shuffles, warp totals in shared memory, carry across chunks",
              .gpu = true, .dtype = DT_FP32},
     .workspace_bytes = scan_pairs_gpu_workspace,
     .run = scan_hillis_steele_gpu},
    {.info = {.name = "scan_blelloch_gpu",
              .what = "block per (b,d,n): Blelloch tree of 512 pairs in padded shared memory, carry across chunks",
              .gpu = true, .dtype = DT_FP32},
     .workspace_bytes = scan_pairs_gpu_workspace,
     .run = scan_blelloch_gpu},
};

/* The previous stage, 01_naive_scan: its streaming CPU scan and eager GPU scan. */
static const ScanVersion streaming_cpu = {
    .info = {.name = "scan_streaming_cpu", .what = "01_naive_scan's streaming CPU scan",
             .gpu = false, .dtype = DT_FP32},
    .run = scan_streaming_cpu};
static const ScanVersion eager_gpu = {
    .info = {.name = "scan_eager_gpu", .what = "01_naive_scan's eager GPU scan",
             .gpu = true, .dtype = DT_FP32},
    .workspace_bytes = scan_eager_workspace,
    .run = scan_eager_gpu};

int main(int argc, char **argv) {
    const Chapter chapter = {
        .name = "02_parallel_scan", .title = "the scan over pairs (a, b) with an associative operator",
        .op = &OP_SCAN, .versions = versions, .nversions = COUNT(versions), .bench_sets = BENCH_S1,
        .prev_cpu = &streaming_cpu.info, .prev_gpu = {&eager_gpu.info},  // 01's scans
    };
    return chapter_main(&chapter, argc, argv);
}
