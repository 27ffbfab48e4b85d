/* 03_fused_cuda: the selective scan fused into one pass (FP32), from one
 * thread per state to the tuned kernel; nothing of size (b,d,L,N) is written.
 *   build/03_fused_cuda            check lines + a short timing/memory table
 *   build/03_fused_cuda --list     the numbered versions
 *   build/03_fused_cuda 7 --bench  time version 7 at the S1 and S2 shapes */
#include "driver.h"
#include "op_scan.h"

#include "../02_parallel_scan/kernels.h"
#include "cpu.h"
#include "kernels.h"

static const ScanVersion versions[] = {
    {CPU_VERSION(scan_chunked_cpu, DT_FP32,
                 "the chunked algorithm in C: chunk end states from 0, carries via exp(A sum dt), rescan"),
     .workspace_bytes = scan_chunked_cpu_workspace,
     .run_packed = scan_chunked_cpu_packed},
    {GPU_VERSION(scan_fused_naive, DT_FP32,
                 "thread per state (b,d,n) walks L; y_t by a block-wide shuffle sum every step"),
     .unsupported = scan_fused_naive_unsupported},
    {GPU_VERSION(scan_fused_regs, DT_FP32,
                 "thread per (b,d) row, its N states in registers: y summed in-thread, softplus once"),
     .unsupported = scan_fused_regs_unsupported,
     .run_packed = scan_fused_regs_packed},
    {GPU_VERSION(scan_fused_exp2, DT_FP32,
                 "exp(dt A) = ex2.approx(dt A log2e): one MUFU op per element; dt*u once per step"),
     .unsupported = scan_fused_regs_unsupported,
     .run_packed = scan_fused_exp2_packed},
    {GPU_VERSION(scan_fused_tiled, DT_FP32,
                 "time tiles in shared memory: B/C once per block, float4 I/O, N over lanes"),
     .unsupported = scan_fused_tiled_unsupported},
    {GPU_VERSION(scan_fused_chunked, DT_FP32,
                 "L cut into chunks when b*d*S threads cannot fill the GPU: up to 2x the exps, many more threads"),
     .workspace_bytes = scan_fused_chunked_workspace,
     .unsupported = scan_fused_tiled_unsupported},
    {GPU_VERSION(scan_fused_tuned, DT_FP32,
                 "N over more lanes before L is chunked; tiles copied one ahead (cp.async); polynomial softplus"),
     .workspace_bytes = scan_fused_tuned_workspace,
     .unsupported = scan_fused_tiled_unsupported,
     .run_packed = scan_fused_tuned_packed},
};

/* The previous stage, 02_parallel_scan: its fastest GPU scan over materialized
 * pairs (Hillis-Steele; 02's README times it against Blelloch's). */
static const ScanVersion hillis_steele_gpu = {
    GPU_VERSION(scan_hillis_steele_gpu, DT_FP32, "02_parallel_scan's Hillis-Steele GPU scan"),
    .workspace_bytes = scan_pairs_gpu_workspace};

int main(int argc, char **argv) {
    const Chapter chapter = {
        .name = "03_fused_cuda", .title = "the selective scan fused into one pass, FP32",
        .op = &OP_SCAN, .versions = versions, .nversions = COUNT(versions),
        .bench_sets = BENCH_S1 | BENCH_S2 | BENCH_SERVING_S1,
        .prev_gpu = {&hillis_steele_gpu.info},  // the GPU versions also against 02's scan
    };
    return chapter_main(&chapter, argc, argv);
}
