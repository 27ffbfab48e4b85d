/* build/probe [--dir DIR]: the device's rates, probed as every benchmark run
 * probes them (common/floors.cu), appended as one CSV row to
 * DIR/probe_<gpu>.csv (DIR defaults to plots/data; gpu is the device's short
 * name, lowercased: h100, h200), the header first when the file is new:
 *   device,copy_gbps,exp_rate,mma_sync_tflops,wgmma_fp16_tflops,wgmma_bf16_tflops,commit
 * copy in GB/s (bytes read plus written), exp2 results a second, the tensor
 * rates in TFLOP/s (wgmma's 0 where it cannot run: see wgmma_probe.h).
 * The commit is $COMMIT if set, else the build's (`make probe` sets it as
 * `make bench` does). Exit 0, 2 on a bad command line or an unwritable file,
 * 3 without a usable CUDA device. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "args.h"    // g_prog
#include "check.h"   // EXIT_*
#include "csv.h"     // commit_id
#include "floors.h"
#include "gpu.h"

#define PROBE_HEADER "device,copy_gbps,exp_rate,mma_sync_tflops,wgmma_fp16_tflops,wgmma_bf16_tflops,commit"

/* Does word (n characters) read as a GPU model: 1-2 capitals, 2-4 digits,
 * maybe one more capital ("H100", "A100", "L40S")? */
static int is_model(const char *word, size_t n) {
    size_t i = 0, letters = 0, digits = 0;
    while (i < n && isupper((unsigned char)word[i])) i++, letters++;
    while (i < n && isdigit((unsigned char)word[i])) i++, digits++;
    if (i < n && isupper((unsigned char)word[i])) i++;
    return i == n && letters >= 1 && letters <= 2 && digits >= 2 && digits <= 4;
}

/* The device's short name, lowercased, as the file name gives it: "h200" for
 * "NVIDIA H200", "h100" for "NVIDIA H100 80GB HBM3" (plots/tablelib/data.py's
 * short_device); else the name without "NVIDIA ", its other characters '_'. */
static void short_name(const char *name, char *out, size_t len) {
    for (const char *p = name; *p;) {
        size_t n = 0;
        while (isalnum((unsigned char)p[n])) n++;
        if (n && is_model(p, n) && n < len) {
            for (size_t i = 0; i < n; i++) out[i] = (char)tolower((unsigned char)p[i]);
            out[n] = '\0';
            return;
        }
        p += n ? n : 1;
    }
    if (strncmp(name, "NVIDIA ", 7) == 0) name += 7;
    size_t i = 0;
    for (; name[i] && i + 1 < len; i++)
        out[i] = isalnum((unsigned char)name[i]) ? (char)tolower((unsigned char)name[i]) : '_';
    out[i] = '\0';
}

int main(int argc, char **argv) {
    g_prog = "probe";
    const char *dir = "plots/data";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: build/probe [--dir DIR]\n"
                   "Probes the device's copy, exp2, mma.sync and dense wgmma rates and appends\n"
                   "them as one row to DIR/probe_<gpu>.csv (DIR: plots/data).\n");
            return EXIT_OK;
        } else {
            fprintf(stderr, "probe: unknown argument %s (usage: build/probe [--dir DIR])\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (!gpu_available()) {
        printf("probe: %s: nothing probed\n", gpu_unavailable_reason());
        return EXIT_GPU_SKIPPED;
    }

    const Floors *f = floors_get();
    char gpu[64], path[4096];
    short_name(gpu_name(), gpu, sizeof gpu);
    snprintf(path, sizeof path, "%s/probe_%s.csv", dir, gpu);
    char row[512];
    snprintf(row, sizeof row, "%s,%.1f,%.4g,%.1f,%.1f,%.1f,%s", gpu_name(), f->bw_gbps, f->exp_rate,
             f->mma_sync_tflops, f->wgmma_fp16_tflops, f->wgmma_bf16_tflops, commit_id());

    FILE *out = fopen(path, "a+");
    if (!out) {
        fprintf(stderr, "probe: cannot open %s for writing\n", path);
        return EXIT_USAGE;
    }
    fseek(out, 0, SEEK_END);
    if (ftell(out) == 0) fprintf(out, "%s\n", PROBE_HEADER);
    fprintf(out, "%s\n", row);
    if (fclose(out) != 0) {
        fprintf(stderr, "probe: cannot write %s\n", path);
        return EXIT_USAGE;
    }
    printf("%s\n%s\nprobe: wrote %s (the floors' matrix rate: %s)\n", PROBE_HEADER, row, path,
           f->wgmma_fp16_tflops > 0.0 ? "dense fp16 wgmma" : "fp16 mma.sync");
    return EXIT_OK;
}
