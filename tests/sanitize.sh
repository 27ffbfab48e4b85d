#!/bin/sh
# make sanitize: compute-sanitizer's four tools on every GPU version's check,
# at small awkward shapes, once per state size (a generic N and the N = 32
# that specialized versions need).
# Usage: tests/sanitize.sh "CHAPTERS" "SHAPE FLAGS" "N..." [CHAPTERS SHAPE-FLAGS N... ...]
# (one triple per family of chapters: the Mamba-1 scans and SSD take different shape flags)
if ! command -v compute-sanitizer >/dev/null 2>&1; then
    echo "sanitize: compute-sanitizer not found (it ships with the CUDA toolkit: add its bin/ to PATH)"
    exit 1
fi
pass=0; fail=0; failed=""
while [ $# -ge 3 ]; do
chapters=$1; shapes=$2; dstates=$3; shift 3
for c in $chapters; do
    for v in $(build/$c --list | awk '$2 == "gpu" { print $1 }'); do
        for n in $dstates; do
            # A version specialized for other N (or that takes no packed row)
            # skips every check and never touches the GPU: nothing to sanitize.
            if ! build/$c $v --check $shapes --dstate $n | grep "vs oracle" | grep -qv SKIP; then
                echo "SKIP  $c $v N=$n $shapes (the version does not run these shapes)"; continue
            fi
            for tool in memcheck racecheck initcheck synccheck; do
                extra=""
                [ $tool = memcheck ] && extra="--leak-check full"
                # shellcheck disable=SC2086
                out=$(compute-sanitizer --tool $tool $extra --error-exitcode 9 build/$c $v --check $shapes --dstate $n 2>&1)
                rc=$?
                if [ $rc -eq 0 ]; then pass=$((pass + 1)); echo "PASS  $c $v N=$n $tool"
                else fail=$((fail + 1)); failed="$failed $c:$v:N=$n:$tool"; echo "FAIL  $c $v N=$n $tool (exit $rc)"
                     echo "$out" | grep -E "=========|FAIL" | head -n 20; fi
            done
        done
    done
done
done
[ -n "$failed" ] && echo "failed:$failed"
echo "sanitize: $pass passed, $fail failed"
[ $pass -gt 0 ] && [ $fail -eq 0 ]
