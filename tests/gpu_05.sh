#!/bin/sh
# Chapter 05 on a GPU machine: build, make check with the GPU required, the
# 05 benchmarks and an Nsight Compute profile of the fused kernel at S3 b8
# L8192. Logs and the CSV go to OUTDIR. Usage: tests/gpu_05.sh OUTDIR COMMIT
out=$1; commit=$2
mkdir -p "$out"
nvidia-smi --query-gpu=name,compute_cap,clocks.sm,clocks.mem --format=csv >"$out/gpu.txt" 2>&1
make -j"$(nproc)" all COMMIT="$commit" >"$out/build.log" 2>&1 || { tail -n 30 "$out/build.log"; exit 1; }
make check REQUIRE_GPU=1 COMMIT="$commit" >"$out/check.log" 2>&1; tail -n 3 "$out/check.log"
COMMIT=$commit build/05_ssd_mamba2 all --bench --csv "$out/05_ssd_mamba2.csv" >"$out/bench05.log" 2>&1
grep -E "FAIL|SKIP|ms " "$out/bench05.log" | head -n 120
