#!/bin/sh
# make sanitize: compute-sanitizer's four tools on every GPU version's check,
# at small awkward shapes, once per state size (a generic N and the N = 32
# that specialized versions need).
# Usage: tests/sanitize.sh "CHAPTERS" "SHAPE FLAGS" "N..." [CHAPTERS SHAPE-FLAGS N... ...]
# (one triple per family of chapters: the Mamba-1 scans and SSD take different shape flags)
# SANITIZE_JOBS=J sanitizes J (version, N) pairs at once (default 1; each is
# a small check, so several share the GPU; their lines then come in the
# order they finish).
# SANITIZE_VERSIONS="V ..." takes only those versions (to share a chapter
# between machines or GPUs).
if ! command -v compute-sanitizer >/dev/null 2>&1; then
    echo "sanitize: compute-sanitizer not found (it ships with the CUDA toolkit: add its bin/ to PATH)"
    exit 1
fi

# One (chapter, version, N, shapes): its four tools, one line each, printed
# together once all four have run.
if [ "$1" = "--one" ]; then
    c=$2; v=$3; n=$4; shapes=$5
    # A version specialized for other N (or that takes no packed row)
    # skips every check and never touches the GPU: nothing to sanitize.
    # shellcheck disable=SC2086
    if ! build/$c $v --check $shapes --dstate $n | grep "vs oracle" | grep -qv SKIP; then
        echo "SKIP  $c $v N=$n $shapes (the version does not run these shapes)"; exit 0
    fi
    report=""
    for tool in memcheck racecheck initcheck synccheck; do
        extra=""
        [ $tool = memcheck ] && extra="--leak-check full"
        # shellcheck disable=SC2086
        out=$(compute-sanitizer --tool $tool $extra --error-exitcode 9 build/$c $v --check $shapes --dstate $n 2>&1)
        rc=$?
        if [ $rc -eq 0 ]; then report="${report}PASS  $c $v N=$n $tool
"
        else report="${report}FAIL  $c $v N=$n $tool (exit $rc) [$shapes]
$(echo "$out" | grep -E "=========|FAIL" | head -n 20)
"; fi
    done
    printf '%s' "$report"
    exit 0
fi

# The (chapter, version, N, shapes) quadruples, NUL-separated, then run J at a time.
list=$(mktemp) && log=$(mktemp) && status=$(mktemp) || exit 1
pairs=0
while [ $# -ge 3 ]; do
    chapters=$1; shapes=$2; dstates=$3; shift 3
    for c in $chapters; do
        for v in $(build/$c --list | awk '$2 == "gpu" { print $1 }'); do
            case " ${SANITIZE_VERSIONS:-$v} " in *" $v "*) ;; *) continue ;; esac
            for n in $dstates; do printf '%s\0%s\0%s\0%s\0' "$c" "$v" "$n" "$shapes" >>"$list"; pairs=$((pairs + 1)); done
        done
    done
done
{ xargs -0 -r -n 4 -P "${SANITIZE_JOBS:-1}" sh "$0" --one <"$list"; echo $? >"$status"; } | tee "$log"
pass=$(grep -c '^PASS' "$log"); fail=$(grep -c '^FAIL' "$log"); skip=$(grep -c '^SKIP' "$log")
# Every pair ends as one SKIP or four tool lines: fewer means a run that did not finish.
finished=$((skip + (pass + fail) / 4)); ok=1
if [ "$(cat "$status")" != 0 ] || [ "$finished" -ne "$pairs" ]; then
    echo "sanitize: $finished of $pairs (version, N) pairs finished (xargs exit $(cat "$status"))"; ok=0
fi
[ "$fail" -gt 0 ] && echo "failed:" && grep '^FAIL' "$log" | sed 's/^FAIL  /  /'
rm -f "$list" "$log" "$status"
echo "sanitize: $pass passed, $fail failed"
[ "$ok" -eq 1 ] && [ "$pass" -gt 0 ] && [ "$fail" -eq 0 ]
