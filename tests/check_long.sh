#!/bin/sh
# make check-long (GPU only, not in CI): every GPU version of 03-08 checked at
# a million tokens (b 1, L = 2^20) and (03-07) at a shape where one tensor holds
# more than 2^31 elements, so that a 32-bit offset anywhere would show. Each run is
# the chapter's --bench --sampled at that shape: each GPU version runs once into
# poisoned outputs, nothing timed, and 64 rows spread from the first to the
# last are checked against the fp64 oracle (the last row's elements sit at the
# largest offsets); a version that cannot take the shape or does not fit in
# device memory is skipped, saying why. Each chapter names its runs in its
# chapter.mk (LONG_<chapter>); LONG_CHAPTERS picks chapters, LONG_MATCH (an
# extended regex) runs by name; a chapter's runs take minutes (host inputs of
# tens of GB, the oracle on rows of 2^20 steps).
# Usage: tests/check_long.sh "CHAPTER" "NAME" "FLAGS" [CHAPTER NAME FLAGS ...]
BIN=${BIN:-build}
pass=0; fail=0; skip=0; failed=""
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.rc"' EXIT
run() {  # name command...
    name=$1; shift
    if [ -n "$LONG_MATCH" ] && ! echo "$name" | grep -qE "$LONG_MATCH"; then return; fi
    echo "=== $name: $*"
    t0=$(date +%s)
    # the lines that matter are printed as they come (a run takes minutes)
    { "$@" 2>&1; echo $? >"$tmp.rc"; } | tee "$tmp" | grep --line-buffered -E "vs oracle|SKIP|checks:|needs|GPU rows"
    rc=$(cat "$tmp.rc")
    secs=$(($(date +%s) - t0))
    if [ "$rc" -eq 3 ]; then skip=$((skip + 1)); echo "SKIP  $name (no usable GPU, $secs s)"
    elif [ "$rc" -eq 0 ] && ! grep -q "FAIL" "$tmp"; then pass=$((pass + 1)); echo "PASS  $name ($secs s)"
    else fail=$((fail + 1)); failed="$failed [$name]"; echo "FAIL  $name (exit $rc, $secs s)"; fi
}
while [ $# -ge 3 ]; do
    # shellcheck disable=SC2086  # $3 is the run's flags, split on purpose
    run "$1 $2" "$BIN/$1" all --bench --sampled $3
    shift 3
done
[ -n "$failed" ] && echo "failed:$failed"
echo "check-long: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] || exit 1
[ $pass -gt 0 ] || exit 3
