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
    {CPU_VERSION(scan_sequential_cpu, DT_FP32,
                 "pairs (a,b) = (exp(dt A), dt B u) as (b,d,L,N) arrays, combined left to right"),
     .workspace_bytes = scan_sequential_cpu_workspace},
    {CPU_VERSION(scan_hillis_steele_cpu, DT_FP32,
                 "log2(L) rounds, each combining every element with the one 2^k back: L log L work"),
     .workspace_bytes = scan_hillis_steele_cpu_workspace},
    {CPU_VERSION(scan_blelloch_cpu, DT_FP32,
                 "up-sweep and down-sweep over a tree of 2^ceil(log2 L) leaves: O(L) work"),
     .workspace_bytes = scan_blelloch_cpu_workspace},
    {CPU_VERSION(scan_logspace_cpu, DT_FP32,
                 "h = exp(A cumsum dt) * cumsum(exp(-A cumsum dt) b), restarted before |A c| > 20"),
     .workspace_bytes = scan_logspace_cpu_workspace},
    {GPU_VERSION(scan_sequential_gpu, DT_FP32,
                 "pairs as (b,d,N,L) in device memory, one thread per (b,d,n) walks L"),
     .workspace_bytes = scan_pairs_gpu_workspace},
    {GPU_VERSION(scan_hillis_steele_gpu, DT_FP32,
                 "block per (b,d,n): warp shuffles, warp totals in shared memory, carry across chunks"),
     .workspace_bytes = scan_pairs_gpu_workspace},
    {GPU_VERSION(scan_blelloch_gpu, DT_FP32,
                 "block per (b,d,n): Blelloch tree of 512 pairs in padded shared memory, carry across chunks"),
     .workspace_bytes = scan_pairs_gpu_workspace},
};

/* The previous stage, 01_naive_scan: its streaming CPU scan and eager GPU scan. */
static const ScanVersion streaming_cpu = {
    CPU_VERSION(scan_streaming_cpu, DT_FP32, "01_naive_scan's streaming CPU scan")};
static const ScanVersion eager_gpu = {
    GPU_VERSION(scan_eager_gpu, DT_FP32, "01_naive_scan's eager GPU scan"),
    .workspace_bytes = scan_eager_workspace};

int main(int argc, char **argv) {
    const Chapter chapter = {
        .name = "02_parallel_scan", .title = "the scan over pairs (a, b) with an associative operator",
        .op = &OP_SCAN, .versions = versions, .nversions = COUNT(versions), .bench_sets = BENCH_S1,
        .prev_cpu = &streaming_cpu.info, .prev_gpu = {&eager_gpu.info},  // 01's scans
    };
    return chapter_main(&chapter, argc, argv);
}
