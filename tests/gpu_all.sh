#!/bin/sh
# Everything a GPU machine runs for a change, in one call: build, make check
# with the GPU required, compute-sanitizer, optionally make check-long
# (LONG_CHAPTERS picks chapters: minutes each), the front page's own run
# (make front: its rows and the official kernels in the same call; a few
# minutes), the device's rates (make probe), the benchmarks (BENCH_CHAPTERS
# picks chapters), the official kernels in the same call (tests/official_bench.py:
# mamba_ssm installed or MAMBA_SRC given; OFFICIAL_OPS= picks ops), and our benchmarks
# once more after them (bracket).
# Usage: COMMIT=<hash> tests/gpu_all.sh OUTDIR [check] [sanitize] [long] [probe] [front] [bench] [official] [bracket]
# OUTDIR ends with few files: gpu.txt, logs.tgz (every log) and, after bench,
# data.tgz (plots/data/*.csv as the run left them, and the official CSV named
# official_<gpu>_run_<commit>.csv), since a device call returns at most 8.
# COMMIT names the commit the rows are timed at: a copy of the working tree
# on another machine may carry a .git whose HEAD is not the tree's commit, so
# bench takes it from the caller, never from git there.
out=$1; shift
mkdir -p "$out/logs"
logs=$out/logs
steps=${*:-check sanitize bench}
status=0
nvidia-smi --query-gpu=name,compute_cap,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/gpu.txt" 2>&1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 | grep -oE 'H[0-9]+' | tr 'H' 'h')
make -j"$(nproc)" all >"$logs/build.log" 2>&1 || { tail -n 30 "$logs/build.log"; exit 1; }
for step in $steps; do
    case $step in
    check) make check REQUIRE_GPU=1 >"$logs/check.log" 2>&1 || status=1; tail -n 4 "$logs/check.log" ;;
    sanitize) make sanitize SANITIZE_JOBS="${SANITIZE_JOBS:-12}" >"$logs/sanitize.log" 2>&1 || status=1; grep -E "^FAIL|^sanitize:" "$logs/sanitize.log" ;;
    long) make check-long >"$logs/check_long.log" 2>&1 || status=1; grep -E "^FAIL|^PASS|^check-long:" "$logs/check_long.log" ;;
    front)
        if [ -z "$COMMIT" ]; then echo "front: set COMMIT=<hash of the tree being timed>"; status=1; continue; fi
        make front COMMIT="$COMMIT" >"$logs/front.log" 2>&1 || status=1; grep -E "^front:" "$logs/front.log" ;;
    bench|bracket)
        if [ -z "$COMMIT" ]; then echo "$step: set COMMIT=<hash of the tree being timed>"; status=1; continue; fi
        make bench COMMIT="$COMMIT" >>"$logs/bench.log" 2>&1 || status=1; grep -E "^bench:|FAIL" "$logs/bench.log" | tail -n 20 ;;
    probe)
        make probe COMMIT="$COMMIT" >"$logs/probe.log" 2>&1 || status=1; tail -n 2 "$logs/probe.log" ;;
    official)
        PYTHONUNBUFFERED=1 COMMIT="$COMMIT" python3 tests/official_bench.py \
            "plots/data/official_${gpu:-gpu}_run_${COMMIT:-unknown}.csv" >"$logs/official.log" 2>&1 || status=1
        tail -n 3 "$logs/official.log" ;;
    esac
done
case " $steps " in *" bench "*|*" front "*|*" probe "*|*" official "*|*" bracket "*) tar czf "$out/data.tgz" plots/data/*.csv ;; esac
tar czf "$out/logs.tgz" -C "$out" logs && rm -rf "$logs"
exit $status
