#!/bin/sh
# Chapter 08 on a GPU machine, in one call, each step optional:
#   check     08's checks with the GPU required, the 1000 packed sequences, and the
#             GPU versions at S6-like shapes with tails (N 128, p 64, L 1, 37, 4097) and a pool
#   sanitize  make sanitize for 08 (compute-sanitizer's four tools)
#   ncu       Nsight Compute on the GPU versions at S6 b 1 L 8192, one forward each
#   bench     make bench for 08 (S6, its step, the serving mix), COMMIT required
#   official  the official Mamba-3 kernels (tests/official_bench.py; MAMBA_SRC names
#             the official sources), into plots/data/official_<gpu>_mamba3_<COMMIT>.csv
#   long      make check-long for 08 (L 2^20)
# Logs go to OUTDIR/logs.tgz; the CSVs the run wrote to OUTDIR/data.tgz.
# Usage: COMMIT=<hash> tests/gpu_08.sh OUTDIR [check] [sanitize] [ncu] [bench] [official] [long]
out=$1; shift
logs=$out/logs
mkdir -p "$logs"
steps=${*:-check sanitize}
bin=build/08_mamba3
status=0
nvidia-smi --query-gpu=name,compute_cap,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/gpu.txt" 2>&1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 | grep -oE 'H[0-9]+' | tr 'H' 'h')
make -j"$(nproc)" "$bin" >"$logs/build.log" 2>&1 || { tail -n 30 "$logs/build.log"; exit 1; }
gpu_versions=$($bin --list | awk '$2 == "gpu" { print $1 }')
for step in $steps; do
    case $step in
    check)
        { $bin --check
          $bin --check --seqlens "$(sh tests/seqlens.sh 1000 80 19)" --heads 2 --headdim 4 --dstate 8 --angles 2 \
              --chunk 16 --h0
          for v in $gpu_versions; do
              $bin "$v" --check --batch 2 --seqlen 1,37,4097 --heads 4 --groups 1 --headdim 64 --dstate 128 \
                  --angles 32 --h0
              $bin "$v" --check --seqlens 1,37,300,129,1000,64 --heads 4 --groups 2 --headdim 64 --dstate 128 \
                  --angles 16 --h0
              $bin "$v" --check --batch 6 --seqlen 1 --slots 9 --heads 4 --headdim 64 --dstate 128 --angles 32 --h0
          done; } >"$logs/check.log" 2>&1
        grep -E "FAIL|checks:" "$logs/check.log" | tail -n 12
        grep -q FAIL "$logs/check.log" && status=1 ;;
    sanitize)
        make sanitize SANITIZE_CHAPTERS=08_mamba3 SANITIZE_JOBS="${SANITIZE_JOBS:-8}" >"$logs/sanitize.log" 2>&1 || status=1
        grep -E "^FAIL|^sanitize:" "$logs/sanitize.log" ;;
    ncu)
        for v in $gpu_versions; do
            # the versions' kernels only (not the floors' probes), one forward: at most five launches
            timeout 300 ncu -k regex:"step_kernel|chunk_map|angles|chunk_state|state_pass|chunk_output|mamba3_fused|mamba3_step_stream|mamba3_step_bulk" \
                --launch-count 5 --section SpeedOfLight --section Occupancy \
                --section MemoryWorkloadAnalysis --csv "$bin" "$v" --bench --batch 1 --seqlen 8192 --reps 20 \
                >"$logs/ncu_v$v.csv" 2>&1 || status=1
        done
        ls "$logs"/ncu_v*.csv ;;
    bench)
        if [ -z "$COMMIT" ]; then echo "bench: set COMMIT=<hash of the tree being timed>"; status=1; continue; fi
        make bench BENCH_CHAPTERS=08_mamba3 COMMIT="$COMMIT" >"$logs/bench.log" 2>&1 || status=1
        grep -E "^ +[0-9]+ mamba3_" "$logs/bench.log" | tail -n 24 ;;
    official)
        if [ -z "$COMMIT" ]; then echo "official: set COMMIT=<hash of the tree being timed>"; status=1; continue; fi
        OFFICIAL_OPS=d2d_copy,mamba3_siso_fwd,mamba3_siso_step COMMIT="$COMMIT" python3 tests/official_bench.py \
            "plots/data/official_${gpu:-gpu}_mamba3_${COMMIT}.csv" >"$logs/official.log" 2>&1 || status=1
        tail -n 14 "$logs/official.log" ;;
    long)
        make check-long LONG_CHAPTERS=08_mamba3 >"$logs/check_long.log" 2>&1 || status=1
        grep -E "^FAIL|^PASS|^check-long:" "$logs/check_long.log" ;;
    *) echo "gpu_08: unknown step $step"; status=2 ;;
    esac
done
case " $steps " in *" bench "*|*" official "*) tar czf "$out/data.tgz" plots/data/08_mamba3*.csv plots/data/official_*mamba3*.csv ;; esac
tar czf "$out/logs.tgz" -C "$out" logs && rm -rf "$logs"
exit $status
