#!/bin/sh
# The front page's own run (GPU only; `make front` builds, then runs this): every
# chapter at only the shapes the front page draws, into plots/data/front.csv, and,
# where tests/official_bench.py can run (mamba_ssm installed or MAMBA_SRC given), the
# official kernels in the same device call into plots/data/official_<gpu>_front_<commit>.csv. README's headline
# table, plots/summary_speedup.png, summary_memory.png and roofline.png are drawn
# from these two files alone (plots/tablelib/data.py: load_front): one device, one
# commit. Each row equals the chapter bench's row of the same shape (same flags).
# Each chapter's shapes come from its chapter.mk (FRONT_<chapter>), for example
#   01-04   S1: d 2048, N 32, L 512, z+D+bias+softplus, batch 1-16: the speed-up over
#           01's eager baseline, the memory panel, the headline at batch 16
#   05, 06  S3: h 32, p 64, N 128, chunk 256, D+bias+softplus, batch 8, L 512, 2048,
#           8192 (06 in its default form): the memory panel, the headline at L 8192
#   07      S4 Mamba-2, one token: batch 1-256: the memory panel, the headline at batch 64
#   official  every op of tests/official_bench.py at the benchmark sets: × official,
#           official peaks
# Rows go to build/bench/front.csv first and replace plots/data/front.csv only when
# every chapter ran; logs in build/bench/front_<chapter>.log, front_official.log.
# A few minutes; the official kernels a few more.
# COMMIT names the commit the rows are timed at (the Makefile passes it): a copy of
# the tree on another machine may carry a .git whose HEAD is not the tree's commit.
# Usage: COMMIT=<hash> sh tests/front.sh "CHAPTER" "FLAGS" [CHAPTER FLAGS ...]
# (from the repository root, after make all; the Makefile passes each chapter's
# FRONT_<chapter> from its chapter.mk)
set -u
if [ -z "${COMMIT:-}" ]; then echo "front: set COMMIT=<hash of the tree being timed>"; exit 2; fi
csv=build/bench/front.csv
mkdir -p build/bench plots/data
rm -f build/bench/front*.csv build/bench/front_*.log build/bench/official_front.csv

while [ $# -ge 2 ]; do
    chapter=$1 shape=$2
    shift 2
    log=build/bench/front_$chapter.log
    start=$(date +%s)
    # shellcheck disable=SC2086  # $shape is the chapter's flags, split on purpose
    COMMIT=$COMMIT "build/$chapter" all --bench $shape --csv "$csv" </dev/null >"$log" 2>&1
    rc=$?
    if [ $rc -eq 3 ]; then
        echo "front: $chapter: $(grep -m 1 'need a CUDA device' "$log" || echo 'GPU parts skipped')"
        echo "front: no GPU rows; plots/data/front.csv left as it was"
        exit 3
    fi
    if [ $rc -ne 0 ]; then
        tail -n 20 "$log"
        echo "front: $chapter failed (exit $rc, $log); plots/data/front.csv left as it was"
        exit 1
    fi
    rows=$(grep -c "^$chapter," "$csv")
    if [ "$rows" -eq 0 ]; then
        echo "front: $chapter wrote no rows ($log); plots/data/front.csv left as it was"
        exit 1
    fi
    echo "front: $chapter: $rows rows in $(($(date +%s) - start)) s"
done

# The device's short name (H100), as plots/tablelib/data.py reads it from the rows.
device=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "device") c = i; next } { print $c; exit }' "$csv")
gpu=$(echo "$device" | grep -oE '\b[A-Z]{1,2}[0-9]{2,4}[A-Z]?\b' | head -n 1 | tr '[:upper:]' '[:lower:]')
official=plots/data/official_${gpu:-gpu}_front_$COMMIT.csv
cp "$csv" plots/data/front.csv
rm -f "$official"  # an earlier run's at this commit: not of this call
echo "front: wrote plots/data/front.csv ($(($(wc -l <"$csv") - 1)) rows, $device, commit $COMMIT)"

# The official kernels in the same call (tests/official_bench.py: mamba_ssm installed, or its
# source tree in MAMBA_SRC); where they cannot be timed here, the script says what to install.
start=$(date +%s)
PYTHONUNBUFFERED=1 COMMIT=$COMMIT python3 tests/official_bench.py build/bench/official_front.csv \
    >build/bench/front_official.log 2>&1
rc=$?
if [ $rc -eq 2 ]; then
    cat build/bench/front_official.log
    echo "front: no official kernels timed in this call"
    exit 0
fi
if [ -f build/bench/official_front.csv ] && [ "$(wc -l <build/bench/official_front.csv)" -gt 1 ]; then
    cp build/bench/official_front.csv "$official"
    echo "front: wrote $official ($(($(date +%s) - start)) s)"
fi
if [ $rc -ne 0 ] || [ ! -f "$official" ]; then
    tail -n 5 build/bench/front_official.log
    echo "front: the official kernels failed (exit $rc, build/bench/front_official.log)"
    exit 1
fi
