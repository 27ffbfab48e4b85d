#!/bin/sh
# Chapter 05 on a GPU machine, the steps a kernel change needs, each optional:
#   check     make check REQUIRE_GPU=1 for 05 alone, and the fused versions at
#             S3-like shapes with tails (p 64, N 128, L not a multiple of any chunk)
#   time      versions 7 and up at S3 b 8 L 8192 and b 1 L 512, and the chunk sweep
#   ncu       Nsight Compute on versions 7 and up at S3 b 8 L 8192 (one launch each)
#   sanitize  compute-sanitizer's four tools on versions 7 and up, chunks 64 and 128
#   bench     make bench for 05 into OUTDIR/05_ssd_mamba2.csv (COMMIT required)
#   official  the official mamba_chunk_scan_combined at S3 (tests/official_bench.py), OUTDIR/official_05.csv
#   bracket   the fused versions at S3 once more, OUTDIR/bracket.csv
# Logs go to OUTDIR; the last lines of each step are printed.
# FUSED="7 8" picks the versions (default: 7 and up).
# Usage: COMMIT=<hash> tests/gpu_05.sh OUTDIR [check] [time] [ncu] [sanitize] [bench]
out=$1; shift
mkdir -p "$out"
steps=${*:-check time}
bin=build/05_ssd_mamba2
status=0
nvidia-smi --query-gpu=name,compute_cap,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/gpu.txt" 2>&1
make -j"$(nproc)" "$bin" build/test_oracle >"$out/build.log" 2>&1 || { tail -n 30 "$out/build.log"; exit 1; }
fused=${FUSED:-$($bin --list | awk '$2 == "gpu" && $1 >= 7 { print $1 }')}
for step in $steps; do
    case $step in
    check)
        # a NaN in a sequence's first step must stay out of the sequence before it, whose last
        # chunk's copies read that step (its rows past the sequence are zeroed): inputs dumped by
        # version 3, x[0, 100] set to NaN with numpy, the outputs dropped so the oracle recomputes them
        rm -rf "$out/nan_row" && $bin 3 --check --seqlens 100,20 --heads 4 --headdim 64 --dstate 128 \
            --chunk 64 --h0 --dump "$out/nan_row" >/dev/null &&
            python3 -c "import numpy as n, sys; f=sys.argv[1]+'/x.npy'; x=n.load(f); x[0,100]=n.nan; n.save(f,x)" "$out/nan_row" &&
            rm -f "$out/nan_row/y.npy" "$out/nan_row/final_state.npy" "$out/nan_row/chunk_states.npy"
        { build/test_oracle; $bin --check
          for v in $fused; do
              $bin "$v" --check --batch 2 --seqlen 1,129,1000,2100 --heads 4 --headdim 64 --dstate 128 --groups 2 --h0
              $bin "$v" --check --batch 3 --seqlen 700 --heads 2 --headdim 40 --dstate 72 --chunk 64 --no-softplus
              # packed rows (versions 14-15 and 22-23; the others SKIP): chunk_states every 64, 128 and 256 steps,
              # sequences ending on and off the kernel's and the problem's chunks, with and without h0,
              # p and N below 64, and 300 random lengths (more sequences than a block has threads)
              for q in 64 128 256; do
                  $bin "$v" --check --seqlens 1,37,300,129,1000,64,2100,256,384 --heads 4 --headdim 64 --dstate 128 \
                      --groups 2 --chunk $q --h0
              done
              $bin "$v" --check --seqlens 5,128,1,700,256 --heads 2 --headdim 40 --dstate 72 --chunk 128 --no-softplus
              $bin "$v" --check --seqlens "$(sh tests/seqlens.sh 300 400 7)" \
                  --heads 2 --headdim 64 --dstate 128 --chunk 256 --h0
              [ -d "$out/nan_row" ] && $bin "$v" --check --load "$out/nan_row"
              # enough work that version 10 puts several heads in a block (2 and 4)
              for q in 64 128; do
                  $bin "$v" --check --batch 2 --seqlen 4224 --heads 32 --headdim 64 --dstate 128 --chunk $q --h0 --no-z
              done
          done; } >"$out/check.log" 2>&1 || status=1
        grep -cE "PASS" "$out/check.log" | sed 's/^/check: PASS lines /'
        grep -E "FAIL|Error|error" "$out/check.log" | head -n 20 ;;
    time)
        for v in $fused; do
            for shape in "--batch 8 --seqlen 8192" "--batch 1 --seqlen 8192" "--batch 8 --seqlen 512" \
                         "--batch 1 --seqlen 512" "--batch 8 --seqlen 8192 --chunk 64"; do
                # shellcheck disable=SC2086
                $bin "$v" --bench $shape --heads 32 --headdim 64 --dstate 128 --no-z
            done
        done >"$out/time.log" 2>&1 || status=1
        grep -E "^ *[0-9]+ ssd|FAIL" "$out/time.log" ;;
    ncu)
        for v in $fused; do
            ncu --clock-control none --kernel-name regex:ssd_fused --launch-skip 3 --launch-count 1 \
                --section SpeedOfLight --section Occupancy --section SourceCounters --section InstructionStats --section LaunchStats --section WarpStateStats \
                --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
                $bin "$v" --bench --batch 8 --seqlen 8192 --heads 32 --headdim 64 --dstate 128 --no-z --reps 20 \
                >"$out/ncu_v$v.log" 2>&1 || status=1
            grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc A|L1/TEX Hit|DRAM Throughput|Block Limit" "$out/ncu_v$v.log" | head -n 16
        done ;;
    sanitize)
        for v in $fused; do
            for q in 64 128; do
                # a batch of rows, then one packed row (versions that take none SKIP it)
                for rows in "--batch 2 --seqlen 1,37,300" "--seqlens 1,37,300,129,64"; do
                    for tool in memcheck racecheck initcheck synccheck; do
                        # shellcheck disable=SC2086
                        compute-sanitizer --tool $tool --error-exitcode 9 $bin "$v" --check $rows \
                            --heads 4 --headdim 64 --dstate 128 --groups 2 --chunk $q --h0 >"$out/san.tmp" 2>&1
                        rc=$?
                        echo "v$v Q$q ${rows%% *} $tool exit $rc" | tee -a "$out/sanitize.log"
                        [ $rc -eq 0 ] || { status=1; grep -E "=====" "$out/san.tmp" | head -n 8 | tee -a "$out/sanitize.log"; }
                    done
                done
            done
        done ;;
    official)
        # the official mamba_chunk_scan_combined in the same call (mamba_ssm or MAMBA_SRC)
        OFFICIAL_OPS=ssd_fwd COMMIT="$COMMIT" python3 tests/official_bench.py "$out/official_05.csv" >"$out/official.log" 2>&1 || status=1
        grep -E "ssd_fwd" "$out/official_05.csv" ;;
    bracket)
        # the fused versions at S3 again, after the official run, for the spread between runs
        for v in $fused; do
            $bin "$v" --bench --heads 32 --headdim 64 --dstate 128 --no-z --batch 1,8 --seqlen 512,2048,8192 \
                --csv "$out/bracket.csv" >>"$out/bench.log" 2>&1 || status=1
        done
        grep -E "^ *[0-9]+ ssd_(fused|wgmma)" "$out/bench.log" | tail -n 24 ;;
    bench)
        if [ -z "$COMMIT" ]; then echo "bench: set COMMIT=<hash of the tree being timed>"; status=1; continue; fi
        make bench BENCH_CHAPTERS=05_ssd_mamba2 COMMIT="$COMMIT" >"$out/bench.log" 2>&1 || status=1
        grep -E "^bench:|FAIL" "$out/bench.log"
        cp plots/data/05_ssd_mamba2.csv plots/data/05_crossover_03.csv "$out/" ;;
    esac
done
exit $status
