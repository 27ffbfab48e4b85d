#!/bin/sh
# make check-long (GPU only, not in CI): every GPU version of 03-07 checked at
# a million tokens (b 1, L = 2^20) and at a shape where one tensor holds more
# than 2^31 elements, so that a 32-bit offset anywhere would show. Each run is
# the chapter's --bench --sampled at that shape: each GPU version runs once into
# poisoned outputs, nothing timed, and 64 rows spread from the first to the
# last are checked against the fp64 oracle (the last row's elements sit at the
# largest offsets); a version that cannot take the shape or does not fit in
# device memory is skipped, saying why. LONG_CHAPTERS picks chapters (default:
# 03-07), LONG_MATCH (an extended regex) runs by name; a chapter's runs take
# minutes (host inputs of tens of GB, the oracle on rows of 2^20 steps).
BIN=${BIN:-build}
chapters=${LONG_CHAPTERS:-03_fused_cuda 04_fp16_half2 05_ssd_mamba2 06_bidirectional 07_decode_kernel}
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
for c in $chapters; do
    b="$BIN/$c all --bench --sampled"
    case $c in
    03_fused_cuda|04_fp16_half2)
        run "$c b1 L 2^20" $b --batch 1 --dim 2048 --dstate 16 --seqlen 1048576
        # u, delta, z, y: 8 x 2048 x 131080 = 2^31 + 131072 elements each (L % 8 == 0 for 04's versions 14-15)
        run "$c b8 L 131080 (> 2^31 elements)" $b --batch 8 --dim 2048 --dstate 16 --seqlen 131080 ;;
    05_ssd_mamba2)
        run "$c b1 L 2^20" $b --batch 1 --seqlen 1048576
        # x, y: 2 x 2^20 x 32 x 64 = 2^32 elements each
        run "$c b2 L 2^20 (> 2^31 elements)" $b --batch 2 --seqlen 1048576 ;;
    06_bidirectional)
        for form in "" "--hydra"; do
            run "$c b1 L 2^20 $form" $b --batch 1 --seqlen 1048576 $form
            run "$c b2 L 2^20 $form (> 2^31 elements)" $b --batch 2 --seqlen 1048576 $form
        done ;;
    07_decode_kernel)
        for form in m1 m2; do
            run "$c $form b1 T 2^20" $b --form $form --batch 1 --tokens 1048576
        done
        # the state: 8200 x 32 x 64 x 128 (M2), 65600 x 2048 x 16 (M1) > 2^31 elements
        run "$c m2 b8200 T 1 (> 2^31 elements)" $b --form m2 --batch 8200 --tokens 1
        run "$c m1 b65600 T 1 (> 2^31 elements)" $b --form m1 --batch 65600 --tokens 1 ;;
    *) echo "check-long: no long shapes for $c" ;;
    esac
done
[ -n "$failed" ] && echo "failed:$failed"
echo "check-long: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] || exit 1
[ $pass -gt 0 ] || exit 3
