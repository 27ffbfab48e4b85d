/* 07_decode_kernel: one token at a time. The decode step
 * (selective_state_update) reads and writes the whole recurrent state once
 * per token, in both forms (Mamba-1 and Mamba-2), first in C, then on the
 * GPU from one thread per state row toward the copy bandwidth, and
 * with T tokens per launch (--tokens) the state's bytes paid once.
 *   build/07_decode_kernel                  check lines + a short timing table
 *   build/07_decode_kernel --list           the numbered versions
 *   build/07_decode_kernel 6 --bench        time version 6 at the S4 shapes
 *   build/07_decode_kernel --form m1 --check --batch 3 --dim 100 --dstate 9 --tokens 1,7 */
#include "driver.h"
#include "op_decode.h"

#include "cpu.h"
#include "kernels.h"
#include "lessons.h"

static const DecodeVersion versions[] = {
    {CPU_VERSION(decode_step_cpu, DT_FP32,
                 "state = state exp(dt A) + dt B x, y = state C + D x: each token, each state row, in C"),
     .run_serving = decode_step_cpu_serving},
    {GPU_VERSION(decode_via_scan, DT_FP32,
                 "the T tokens as a scan from h0 = state: 05's ssd_steps_fp32 (m2), 03's scan_fused_tuned (m1)"),
     .workspace_bytes = decode_via_scan_workspace,
     .unsupported = decode_via_scan_unsupported},
    {GPU_VERSION(decode_thread_per_row, DT_FP32,
                 "one thread per state row, N values strided by N between neighbouring threads"),
     .graph = true},
    {GPU_VERSION(decode_coalesced, DT_FP32,
                 "a row split over lanes, 16-byte state loads, 4 rows per thread in flight sharing B/C"),
     .graph = true},
    {GPU_VERSION(decode_coalesced_fp16, DT_FP16,
                 "the same with fp16 x, dt, z, B, C, y (fp32 state): the per-token bytes halved"),
     .graph = true},
    {GPU_VERSION(decode_lean, DT_FP32,
                 "fewer instructions per byte: softplus and exp on the MUFU, 16 floats per lane, streamed state"),
     .graph = true,
     .run_serving = decode_lean_serving},
    {GPU_VERSION(decode_lean_fp16, DT_FP16,
                 "the same with fp16 x, dt, z, B, C, y (fp32 state)"),
     .graph = true,
     .run_serving = decode_lean_fp16_serving},
    {GPU_VERSION(decode_lean_state16, DT_FP16_STATE16,
                 "the same with the state stored in fp16 too: half the bytes of a step"),
     .graph = true,
     .run_serving = decode_lean_state16_serving},
    {GPU_VERSION(decode_lean_state_bf16, DT_BF16_STATE16,
                 "8 in bf16: x, dt, z, B, C, y and the state, 8's bytes, each state rounding 8x coarser"),
     .graph = true,
     .run_serving = decode_lean_state_bf16_serving},
    {GPU_VERSION(decode_staged, DT_FP32,
                 "6's step, the state through shared memory: a bulk copy a unit (M2 16 rows, M1 32), 2 in flight a block"),
     .unsupported = decode_staged_unsupported,
     .graph = true,
     .run_serving = decode_staged_serving},
    {GPU_VERSION(decode_staged_state16, DT_FP16_STATE16,
                 "the same on 8's dtypes (x, dt, z, B, C, y and the state in fp16): half the bytes"),
     .unsupported = decode_staged_state16_unsupported,
     .graph = true,
     .run_serving = decode_staged_state16_serving},
    {GPU_VERSION(decode_staged_state_bf16, DT_BF16_STATE16,
                 "11 in bf16 (9's dtypes): x, dt, z, B, C, y and the state, 11's bytes"),
     .unsupported = decode_staged_state16_unsupported,
     .graph = true,
     .run_serving = decode_staged_state_bf16_serving},
    {CPU_VERSION(decode_step_cpu_state_int8, DT_FP32_STATE_INT8,
                 "1 with the state in int8 codes and an fp32 scale a row, rounded to the nearest after every token"),
     .workspace_bytes = decode_step_cpu_codes8_workspace,
     .run_serving = decode_step_cpu_state_int8_serving},
    {CPU_VERSION(decode_step_cpu_state_int8_sr, DT_FP32_STATE_INT8,
                 "13 rounded stochastically: up with the probability of the distance, keyed on (slot, token, element)"),
     .workspace_bytes = decode_step_cpu_codes8_workspace,
     .run_serving = decode_step_cpu_state_int8_sr_serving},
    {CPU_VERSION(decode_step_cpu_state_fp8, DT_FP32_STATE_E4M3,
                 "13 in fp8 e4m3 codes: 3 mantissa bits at every magnitude instead of int8's uniform grid"),
     .workspace_bytes = decode_step_cpu_codes8_workspace,
     .run_serving = decode_step_cpu_state_fp8_serving},
    {CPU_VERSION(decode_step_cpu_state_fp8_sr, DT_FP32_STATE_E4M3,
                 "15 rounded stochastically, 14's keys"),
     .workspace_bytes = decode_step_cpu_codes8_workspace,
     .run_serving = decode_step_cpu_state_fp8_sr_serving},
    {GPU_VERSION(decode_lean_state_int8, DT_FP32_STATE_INT8,
                 "13 on the GPU: 16 codes a lane (one 16-byte load), 4 rows a thread sharing B and C, a max for the scale"),
     .unsupported = decode_codes8_unsupported,
     .graph = true,
     .run_serving = decode_lean_state_int8_serving},
    {GPU_VERSION(decode_lean_state_int8_sr, DT_FP32_STATE_INT8,
                 "14 on the GPU: 17 with the stochastic rounding, a hash an element for its number"),
     .unsupported = decode_codes8_unsupported,
     .graph = true,
     .run_serving = decode_lean_state_int8_sr_serving},
    {GPU_VERSION(decode_lean_state_fp8, DT_FP32_STATE_E4M3,
                 "15 on the GPU: 17 with e4m3 codes, rounded by the converter (cvt.rn.satfinite.e4m3x2)"),
     .unsupported = decode_codes8_unsupported,
     .graph = true,
     .run_serving = decode_lean_state_fp8_serving},
    {GPU_VERSION(decode_lean_state_fp8_sr, DT_FP32_STATE_E4M3,
                 "16 on the GPU: 19 rounded stochastically on e4m3's grid in registers"),
     .unsupported = decode_codes8_unsupported,
     .graph = true,
     .run_serving = decode_lean_state_fp8_sr_serving},
};

int main(int argc, char **argv) {
    const Chapter chapter = {
        .name = "07_decode_kernel", .title = "the decode step (selective_state_update), both forms, T tokens per launch",
        .op = &OP_DECODE, .versions = versions, .nversions = COUNT(versions), .check_fixtures = true,
        .bench_sets = BENCH_S4_M2 | BENCH_S4_M1 | BENCH_TOKENS_M2 | BENCH_TOKENS_M1 | BENCH_SLOTS_M2 | BENCH_SLOTS_M1 |
                      BENCH_DRAFTS_M2 | BENCH_DRAFTS_M1,
        /* the GPU versions also against the C step and the scan of 03 / 05 on the same tokens */
        .prev_gpu = {&versions[0].info, &versions[1].info},
        .lesson = decode_lessons, .csv_tables = {"state_vs_kv", "state_precision"},
    };
    return chapter_main(&chapter, argc, argv);
}
