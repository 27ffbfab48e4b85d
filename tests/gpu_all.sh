#!/bin/sh
# Everything a GPU machine runs for a change: build, make check with the GPU
# required, compute-sanitizer, and optionally make check-long (LONG_CHAPTERS
# picks chapters: minutes each) and the benchmarks. Logs and CSVs are copied
# to OUTDIR. Usage: COMMIT=<hash> tests/gpu_all.sh OUTDIR [check] [sanitize] [long] [bench]
# COMMIT names the commit the rows are timed at: a copy of the working tree
# on another machine may carry a .git whose HEAD is not the tree's commit, so
# bench takes it from the caller, never from git there.
out=$1; shift
mkdir -p "$out"
steps=${*:-check sanitize bench}
status=0
nvidia-smi --query-gpu=name,compute_cap,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/gpu.txt" 2>&1
make -j"$(nproc)" all >"$out/build.log" 2>&1 || { tail -n 30 "$out/build.log"; exit 1; }
for step in $steps; do
    case $step in
    check) make check REQUIRE_GPU=1 >"$out/check.log" 2>&1 || status=1; tail -n 4 "$out/check.log" ;;
    sanitize) make sanitize >"$out/sanitize.log" 2>&1 || status=1; grep -E "^FAIL|^sanitize:" "$out/sanitize.log" ;;
    long) make check-long >"$out/check_long.log" 2>&1 || status=1; grep -E "^FAIL|^check-long:" "$out/check_long.log" ;;
    bench) if [ -z "$COMMIT" ]; then echo "bench: set COMMIT=<hash of the tree being timed>"; status=1; continue; fi
           make bench COMMIT="$COMMIT" >"$out/bench.log" 2>&1 || status=1; grep -E "^bench:|FAIL" "$out/bench.log"
           cp plots/data/*.csv "$out/" ;;
    esac
done
exit $status
