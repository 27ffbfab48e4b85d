/* 07_decode_kernel: one token at a time. The decode step
 * (selective_state_update) reads and writes the whole recurrent state once
 * per token, in both forms (Mamba-1 and Mamba-2), first in C, then on the
 * GPU from one thread per state row toward the copy bandwidth, and
 * with T tokens per launch (--tokens) the state's bytes paid once.
 *   build/07_decode_kernel                  check lines + a short timing table
 *   build/07_decode_kernel --list           the numbered versions
 *   build/07_decode_kernel 4 --bench        time version 4 at the S4 shapes
 *   build/07_decode_kernel --form m1 --check --batch 3 --dim 100 --dstate 9 --tokens 1,7 */
#include <stdio.h>
#include <string.h>

#include "ops.h"

#include "cpu.h"
#include "kernels.h"

static const DecodeVersion versions[] = {
    {{"decode_step_cpu",
      "state = state exp(dt A) + dt B x, y = state C + D x: each token, each state row, in C",
      false, DT_FP32}, NULL, NULL, decode_step_cpu, false},
    {{"decode_via_scan",
      "the T tokens as a scan from h0 = state: 05's ssd_steps_fp32 (m2), 03's scan_fused_tuned (m1)",
      true, DT_FP32}, decode_via_scan_workspace, decode_via_scan_unsupported, decode_via_scan, false},
    {{"decode_thread_per_row",
      "one thread per state row, N values strided by N between neighbouring threads",
      true, DT_FP32}, NULL, NULL, decode_thread_per_row, true},
    {{"decode_coalesced",
      "a row split over lanes, 16-byte state loads, 4 rows per thread in flight sharing B/C",
      true, DT_FP32}, NULL, NULL, decode_coalesced, true},
    {{"decode_coalesced_fp16",
      "the same with fp16 x, dt, z, B, C, y (fp32 state): the per-token bytes halved",
      true, DT_FP16}, NULL, NULL, decode_coalesced_fp16, true},
    {{"decode_lean",
      "fewer instructions per byte: softplus and exp on the MUFU, 16 floats per lane, streamed state",
      true, DT_FP32}, NULL, NULL, decode_lean, true},
    {{"decode_lean_fp16",
      "the same with fp16 x, dt, z, B, C, y (fp32 state)",
      true, DT_FP16}, NULL, NULL, decode_lean_fp16, true},
};

/* The memory lesson: what one sequence keeps per layer between tokens. A
 * Mamba layer keeps its recurrent state, the same size at any L; a
 * transformer layer of the same width keeps K and V of every token so far,
 * fp16: 2 x width x 2 bytes a token. Shapes: S4's layers (Mamba-2 h 32, p 64,
 * N 128; Mamba-1 d 2048, N 16), fp32 state, width 2048. With --csv FILE the
 * table also goes to FILE's name with _state_vs_kv before .csv. */
static void state_vs_kv_cache(const Args *a) {
    const double mib = 1024.0 * 1024.0, width = 2048.0;
    const double m2_state = 32.0 * 64 * 128 * 4 / mib, m1_state = 2048.0 * 16 * 4 / mib;
    const long long seqlens[] = {1024, 4096, 16384, 65536, 131072};
    FILE *f = NULL;
    char path[512];
    if (a->csv) {
        const char *dot = strrchr(a->csv, '.');
        int stem = dot ? (int)(dot - a->csv) : (int)strlen(a->csv);
        snprintf(path, sizeof(path), "%.*s_state_vs_kv.csv", stem, a->csv);
        f = fopen(path, "w");
        if (!f) die_usage("cannot write %s", path);
        fprintf(f, "seqlen,width,kv_cache_mib,mamba2_state_mib,mamba1_state_mib\n");
    }
    printf("\nper sequence and layer: recurrent state (fp32) vs a KV cache of width %.0f (fp16 K and V)\n", width);
    printf("  %8s %14s %18s %18s\n", "L", "KV cache MiB", "Mamba-2 state MiB", "Mamba-1 state MiB");
    for (int i = 0; i < (int)(sizeof(seqlens) / sizeof(seqlens[0])); i++) {
        double kv = 2.0 * width * 2.0 * (double)seqlens[i] / mib;
        printf("  %8lld %14.1f %10.3f (%5.0fx) %10.3f (%5.0fx)\n", seqlens[i], kv, m2_state, kv / m2_state, m1_state,
               kv / m1_state);
        if (f) fprintf(f, "%lld,%.0f,%.4f,%.4f,%.4f\n", seqlens[i], width, kv, m2_state, m1_state);
    }
    if (f) {
        fclose(f);
        printf("  (written to %s)\n", path);
    }
}

int main(int argc, char **argv) {
    const Chapter chapter = {
        .name = "07_decode_kernel",
        .title = "07_decode_kernel: the decode step (selective_state_update), both forms, T tokens per launch",
        .op = &OP_DECODE,
        .versions = versions,
        .nversions = sizeof(versions) / sizeof(versions[0]),
        .prev_cpu = NULL,  // the C step is checked against the oracle and the fixtures
        /* the GPU versions also against the C step and the scan of 03 / 05 on the same tokens */
        .prev_gpu = {&versions[0].info, &versions[1].info},
        .check_fixtures = true,
        .bench_sets = BENCH_S4_M2 | BENCH_S4_M1 | BENCH_TOKENS_M2 | BENCH_TOKENS_M1,
        .lesson = state_vs_kv_cache,
    };
    return chapter_main(&chapter, argc, argv);
}
