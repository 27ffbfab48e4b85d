#!/bin/sh
# make check: every program's checks, then the bad-input cases.
# Usage: tests/run_checks.sh [--runs CHAPTER "NAME" "ARGS"...] [--roundtrips CHAPTER
#   "KEY" "VERSION" "ARGS" "EXPECT" "DROP"...]...: the extra runs and dump/load round trips
#   each chapter's chapter.mk declares (CHECKS_<chapter>, ROUNDTRIPS_<chapter>; the
#   Makefile passes them). In ARGS, SEQS1000 stands for 1000 packed sequences of 1 to 80
#   tokens. A round trip runs VERSION --check --dump DIR ARGS (DIR: $tmp/KEY, which the
#   bad-input cases below start from), removes DROP from DIR ("-": nothing), runs VERSION
#   --load DIR, and wants EXPECT (a grep pattern) in its output.
# A program passes with exit 0, is skipped with exit 3 (no usable GPU); with
# REQUIRE_GPU=1 a skip counts as a failure. Ends with two summary lines: the
# programs and cases, then the checks (every program's check lines, and each
# case of this script as one check).
BIN=${BIN:-build}
pass=0; fail=0; skip=0; failed=""
cpass=0; cfail=0; cskip=0  # the programs' own check lines
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

count() {  # name exit-code
    case $2 in
    0) pass=$((pass + 1)); echo "PASS  $1" ;;
    3) if [ "$REQUIRE_GPU" = 1 ]; then fail=$((fail + 1)); failed="$failed $1"; echo "FAIL  $1 (GPU parts skipped, REQUIRE_GPU=1)";
       else skip=$((skip + 1)); echo "SKIP  $1 (GPU parts need a CUDA device; CPU parts passed)"; fi ;;
    *) fail=$((fail + 1)); failed="$failed $1"; echo "FAIL  $1 (exit $2)" ;;
    esac
}

run_program() {  # name command...
    name=$1; shift
    echo "=== $name: $*"
    "$@" >"$tmp/program" 2>&1
    rc=$?
    cat "$tmp/program"
    line=$(grep -E "checks: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped" "$tmp/program" | tail -n 1)
    if [ -n "$line" ]; then
        set -- $(echo "$line" | sed -E 's/.*checks: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/')
        cpass=$((cpass + $1)); cfail=$((cfail + $2)); cskip=$((cskip + $3))
        case $rc in  # the program itself is then not one more check
        0) ppass=$((ppass + 1)) ;;
        3) if [ "$REQUIRE_GPU" = 1 ]; then pfail=$((pfail + 1)); else pskip=$((pskip + 1)); fi ;;
        *) pfail=$((pfail + 1)) ;;
        esac
    fi
    count "$name" $rc
}
ppass=0; pfail=0; pskip=0  # programs counted by their check lines, by outcome

run_program test_oracle "$BIN/test_oracle"
# The repository's shape: common/ names no operation, no call circle in it,
# no source file over 600 lines, no commit id in source (tests/structure.sh).
echo "=== structure"
BIN="$BIN" sh tests/structure.sh
count "structure: harness names no op, no call circle, files <= 600 lines, no commit ids" $?
# Every chapter folder (NN_name), in order.
CHAPTERS=$(for d in [0-9][0-9]_*/; do printf '%s ' "${d%/}"; done)
for c in $CHAPTERS; do
    run_program "$c" "$BIN/$c" --check
done
# The extra runs and round trips the chapters declare, kept for after the generic checks.
runs_file=$tmp/runs
roundtrips_file=$tmp/roundtrips
: >"$runs_file"
: >"$roundtrips_file"
mode=''; chapter=''
while [ $# -gt 0 ]; do
    case $1 in
    --runs|--roundtrips) mode=$1; chapter=$2; shift 2; continue ;;
    esac
    if [ "$mode" = --runs ]; then
        printf '%s\t%s\t%s\n' "$chapter" "$1" "$2" >>"$runs_file"; shift 2
    elif [ "$mode" = --roundtrips ]; then
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$chapter" "$1" "$2" "$3" "$4" "$5" >>"$roundtrips_file"; shift 5
    else
        echo "run_checks: $1: expected --runs or --roundtrips"; exit 2
    fi
done
seqs=$(sh tests/seqlens.sh 1000 80 19)
tab=$(printf '\t')
while IFS=$tab read -r c name args; do
    # shellcheck disable=SC2086  # ARGS is the run's flags, split on purpose
    run_program "$c $name" "$BIN/$c" $(echo "$args" | sed "s/SEQS1000/$seqs/")
done <"$runs_file"

# Each chapter's kept --list (plots/data/<chapter>_list.txt, the README ladder's
# versions and descriptions) is the program's --list, verbatim.
for c in $CHAPTERS; do
    "$BIN/$c" --list >"$tmp/list" 2>&1
    if cmp -s "plots/data/${c}_list.txt" "$tmp/list"; then
        count "$c ladder versions = --list" 0
    else
        echo "      plots/data/${c}_list.txt differs from the program's --list (make plots rewrites it):"
        diff "plots/data/${c}_list.txt" "$tmp/list" 2>&1 | head -n 6 | sed 's/^/      /'
        count "$c ladder versions = --list" 1
    fi
done
# Every generated block and RESULTS.md is what make plots writes from the
# committed CSVs; every README reads as a lesson (tests/readmes.sh).
echo "=== generated blocks"
python3 plots/tables.py --check
count "README blocks and RESULTS.md = make plots from plots/data" $?
echo "=== README shape"
sh tests/readmes.sh
count "READMEs: lesson order, <= 200 prose lines, no commit ids, a Next line" $?

# --dump writes what NumPy reads back through --load: each round trip must check out.
# A version that needs a GPU (exit 3 without one) counts as skipped.
echo "=== dump/load round trips"
while IFS=$tab read -r c name version args expect drop; do
    dir=$tmp/$name
    # shellcheck disable=SC2086  # ARGS is the run's flags, split on purpose
    "$BIN/$c" "$version" --check --dump "$dir" $args >"$tmp/out" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        [ "$drop" = - ] || rm -f "$dir/$drop"
        "$BIN/$c" "$version" --load "$dir" >"$tmp/out" 2>&1 && grep -q -- "$expect" "$tmp/out"
        rc=$?
    fi
    [ $rc -eq 0 ] || [ $rc -eq 3 ] || tail -n 3 "$tmp/out" | sed 's/^/      /'
    count "$c $name dump/load round trip" $rc
done <"$roundtrips_file"

# A program finds the fixtures from any folder it is run in.
echo "=== run from another folder"
abs_bin=$(cd "$BIN" && pwd)
(cd "$tmp" && "$abs_bin/01_naive_scan" 2 --check >"$tmp/out" 2>&1) && grep -q "fixture mamba1: y .*PASS" "$tmp/out"
count "01_naive_scan run from another folder finds the fixtures" $?

# The repository stands on its own: no file cites notes that live outside it.
echo "=== self-contained"
# (each name written with one letter in brackets, so that this line does not match itself)
outside=$(grep -rlE --exclude-dir=".?*" --exclude-dir=build "[D]ESIGN(\.md| §| section)|[P]ERF_NOTES|\.\./[s]hared/" . 2>/dev/null)
[ -z "$outside" ] || echo "      cite files outside the repository: $outside"
count "no reference to files outside the repository" "$([ -z "$outside" ] && echo 0 || echo 1)"

# Every link and every repository path a Markdown file names exists.
missing=""
for md in $(find . -name '*.md' -not -path './build/*' -not -path './.*' | sort); do
    dir=$(dirname "$md")
    for ref in $( { grep -oE '\]\([^)#[:space:]]+' "$md" | sed 's/^](//'
                    grep -oE '`(common|ops|tests|plots|docs|[0-9][0-9]_[a-z0-9_]+)/[A-Za-z0-9_./-]+`' "$md" | tr -d '`'
                  } | grep -v '://' | sort -u); do
        [ -e "$dir/$ref" ] || [ -e "$ref" ] || missing="$missing ${md#./}:$ref"
    done
done
[ -z "$missing" ] || echo "      names missing files:$missing"
count "every path a Markdown file names exists" "$([ -z "$missing" ] && echo 0 || echo 1)"

# Bad input: one clear line on stderr and exit 2 (docs/design.md §5).
bad() {  # name expected-codes command...
    name=$1; codes=$2; shift 2
    "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    lines=$(wc -l <"$tmp/stderr")
    msg=$(head -n1 "$tmp/stderr")
    if [ $rc -eq 3 ] && [ "$codes" = "2|3" ]; then
        count "bad input: $name" 3
    elif [ $rc -eq 2 ] && [ "$lines" -eq 1 ]; then
        echo "      $msg"; count "bad input: $name" 0
    else
        echo "      expected exit 2 and one line on stderr, got exit $rc and $lines lines:"
        sed 's/^/      | /' "$tmp/stderr" | head -n5
        count "bad input: $name" 1
    fi
}
echo "=== bad input"
cp -r "$tmp/ok" "$tmp/trunc" && head -c 200 "$tmp/ok/u.npy" >"$tmp/trunc/u.npy"
cp -r "$tmp/ok" "$tmp/f8" && LC_ALL=C sed -i '1s/<f4/<f8/' "$tmp/f8/u.npy"
cp -r "$tmp/ok" "$tmp/shape" && cp "$tmp/ok/A.npy" "$tmp/shape/h0.npy"
bad "unknown flag" 2 "$BIN/01_naive_scan" --frobnicate
bad "--seqlen 0" 2 "$BIN/01_naive_scan" --seqlen 0
bad "--dstate 0" 2 "$BIN/02_parallel_scan" --dstate 0
bad "--batch abc" 2 "$BIN/03_fused_cuda" --batch abc
bad "--dim 10 --groups 4" 2 "$BIN/01_naive_scan" --check --dim 10 --groups 4
bad "flag the chapter does not use" 2 "$BIN/03_fused_cuda" --heads 4
bad "version out of range" 2 "$BIN/02_parallel_scan" 99
bad "--load missing folder" 2 "$BIN/01_naive_scan" 2 --load "$tmp/nothing"
bad "--load truncated .npy" 2 "$BIN/01_naive_scan" 2 --load "$tmp/trunc"
bad "--load wrong-dtype .npy" 2 "$BIN/01_naive_scan" 2 --load "$tmp/f8"
bad "--load wrong-shape .npy" 2 "$BIN/01_naive_scan" 2 --load "$tmp/shape"
bad "a problem over the machine's memory, refused before it allocates" 2 timeout 20 "$BIN/03_fused_cuda" 1 --check --seqlens 2147483647 --dim 1 --dstate 1
bad "host allocation too large" 2 "$BIN/01_naive_scan" 2 --check --batch 100000 --dim 100000 --seqlen 100000 --dstate 1
bad "SSD --chunk 48" 2 "$BIN/05_ssd_mamba2" --check --chunk 48
bad "SSD --heads 6 --groups 4" 2 "$BIN/05_ssd_mamba2" --check --heads 6 --groups 4
bad "SSD flag the chapter does not use" 2 "$BIN/05_ssd_mamba2" --dim 8
bad "bidirectional --chunk 48" 2 "$BIN/06_bidirectional" --check --chunk 48
bad "bidirectional: initial_states without initial_states_bwd" 2 sh -c 'rm "$1/initial_states_bwd.npy" && "$2" 2 --load "$1"' sh "$tmp/bidir" "$BIN/06_bidirectional"
bad "--hydra outside 06" 2 "$BIN/05_ssd_mamba2" --hydra
bad "decode --form m1 --heads 4" 2 "$BIN/07_decode_kernel" --check --form m1 --heads 4
bad "decode --heads 6 --groups 4" 2 "$BIN/07_decode_kernel" --check --heads 6 --groups 4
bad "decode --form m3" 2 "$BIN/07_decode_kernel" --form m3
bad "decode flag the chapter does not use" 2 "$BIN/07_decode_kernel" --chunk 64
# An .npy with the shape in $2 ("2, 37, 0, 5") and no data: a header padded to 128 bytes,
# fp32 ('<f4') unless $3 names another descr ('<i4').
npy_empty() {
    h="{'descr': '${3:-<f4}', 'fortran_order': False, 'shape': ($2), }"
    pad=$((117 - ${#h}))
    { printf '\223NUMPY\001\000\166\000%s' "$h"; printf '%*s\n' "$pad" ''; } >"$1"
}
cp -r "$tmp/ssd" "$tmp/g0" && npy_empty "$tmp/g0/B.npy" "2, 37, 0, 5"
cp -r "$tmp/ok" "$tmp/l0" && npy_empty "$tmp/l0/u.npy" "2, 6, 0"
cp -r "$tmp/ok" "$tmp/fifo" && rm "$tmp/fifo/u.npy" && mkfifo "$tmp/fifo/u.npy"
cp -r "$tmp/ssd" "$tmp/metadir" && rm "$tmp/metadir/meta.json" && mkdir "$tmp/metadir/meta.json"
cp -r "$tmp/ssd" "$tmp/metabad" && echo 'dt_softplus: yes' >"$tmp/metabad/meta.json"
cp -r "$tmp/ssd" "$tmp/metaint" && echo '{"dt_softplus": true, "chunk_size": 16abc}' >"$tmp/metaint/meta.json"
cp -r "$tmp/ssd" "$tmp/metafrac" && echo '{"dt_softplus": true, "chunk_size": 16.9}' >"$tmp/metafrac/meta.json"
cp -r "$tmp/ssd" "$tmp/metanest" && echo '{"note": {"dt_softplus": false}, "dt_softplus": true, "chunk_size": 16}' >"$tmp/metanest/meta.json"
cp -r "$tmp/ssd" "$tmp/metatwice" && echo '{"dt_softplus": true, "dt_softplus": false, "chunk_size": 16}' >"$tmp/metatwice/meta.json"
# A 1 GiB D.npy (sparse) where (6,) is expected: refused from its header, before any data is read.
cp -r "$tmp/ok" "$tmp/bigD" && npy_empty "$tmp/bigD/D.npy" "268435456," && truncate -s $((128 + 1073741824)) "$tmp/bigD/D.npy"
bad "--load a 1 GiB D.npy where (6) is expected" 2 timeout 5 "$BIN/01_naive_scan" 2 --load "$tmp/bigD"
grep -q "expected (6)" "$tmp/stderr"; count "bad input: ... and the line names the expected shape" $?
bad "--heads 3 with the default --groups" 2 "$BIN/05_ssd_mamba2" --check --heads 3
grep -q "the default --groups" "$tmp/stderr"; count "bad input: ... and the line says the groups are the default" $?
bad "VERSION 2^31" 2 "$BIN/05_ssd_mamba2" 2147483648 --check
bad "VERSION 2^32 + 1" 2 "$BIN/06_bidirectional" 4294967297 --check
bad "VERSION 2^40" 2 "$BIN/07_decode_kernel" 1099511627776 --check
bad "--reps 2^32 + 20" 2 "$BIN/05_ssd_mamba2" 3 --bench --reps 4294967316
bad "--sampled without --bench" 2 "$BIN/05_ssd_mamba2" 3 --check --sampled
bad "--sampled with --csv" 2 "$BIN/03_fused_cuda" 3 --bench --sampled --csv "$tmp/sampled.csv"
bad "--sampled with --reps" 2 "$BIN/07_decode_kernel" 6 --bench --sampled --reps 20
bad "--batch 1,,2" 2 "$BIN/05_ssd_mamba2" --check --batch 1,,2
bad "--seqlen ,64," 2 "$BIN/01_naive_scan" --check --seqlen ,64,
bad "--dim given twice" 2 "$BIN/01_naive_scan" --check --dim 4 --dim 8
bad "--form given twice" 2 "$BIN/07_decode_kernel" --check --form m1 --form m2
bad "--load B.npy with 0 groups" 2 "$BIN/05_ssd_mamba2" 3 --load "$tmp/g0"
bad "--load u.npy with L 0" 2 "$BIN/01_naive_scan" 2 --load "$tmp/l0"
bad "--load a FIFO named u.npy" 2 timeout 20 "$BIN/01_naive_scan" 2 --load "$tmp/fifo"
bad "--load meta.json a folder" 2 "$BIN/05_ssd_mamba2" 3 --load "$tmp/metadir"
bad "--load meta.json not JSON" 2 "$BIN/05_ssd_mamba2" 3 --load "$tmp/metabad"
bad "--load chunk_size 16abc" 2 "$BIN/05_ssd_mamba2" 3 --load "$tmp/metaint"
bad "--load chunk_size 16.9" 2 "$BIN/05_ssd_mamba2" 3 --load "$tmp/metafrac"
bad "--dump into a folder that holds an older dump" 2 "$BIN/05_ssd_mamba2" 3 --check --dump "$tmp/ssd" --batch 1 --seqlen 9 --heads 2 --headdim 4 --dstate 4 --chunk 16
bad "--dump into --load's folder" 2 "$BIN/05_ssd_mamba2" 3 --load "$tmp/ssd" --dump "$tmp/ssd/"
mkdir "$tmp/empty" && "$BIN/05_ssd_mamba2" 3 --check --dump "$tmp/empty/" --batch 1 --seqlen 9 --heads 2 --headdim 4 --dstate 4 --chunk 16 >"$tmp/out" 2>&1 &&
    [ -f "$tmp/empty/meta.json" ] && ! ls -d "$tmp"/empty.part* >/dev/null 2>&1
count "--dump into an empty folder: written whole, nothing left beside it" $?
bad "--load meta.json with a nested value" 2 "$BIN/05_ssd_mamba2" 3 --load "$tmp/metanest"
bad "--load meta.json with a key twice" 2 "$BIN/05_ssd_mamba2" 3 --load "$tmp/metatwice"
# meta.json is read as JSON: a key's name inside a string value is not the key.
cp -r "$tmp/ssd" "$tmp/metaword" &&
    echo '{"comment": "dt_softplus", "x": false, "dt_softplus": true, "chunk_size": 16}' >"$tmp/metaword/meta.json" &&
    "$BIN/05_ssd_mamba2" 3 --load "$tmp/metaword" >"$tmp/out" 2>"$tmp/stderr" && grep -q "vs loaded y, final_state.*PASS" "$tmp/out" &&
    grep -q '"comment" is not read' "$tmp/stderr"
count "meta.json: a key named in a string value is not the key; unknown keys named" $?
cp -r "$tmp/ssd" "$tmp/meta48" && echo '{"dt_softplus": true, "chunk_size": 48}' >"$tmp/meta48/meta.json"
bad "--load chunk_size 48" 2 "$BIN/06_bidirectional" 2 --load "$tmp/meta48"
grep -q "meta.json: chunk_size 48" "$tmp/stderr"; count "bad input: ... and the line names meta.json, not --chunk" $?
bad "--seed with --load" 2 "$BIN/05_ssd_mamba2" 3 --load "$tmp/ssd" --seed 7
bad "--csv into a missing folder" 2 "$BIN/01_naive_scan" 2 --bench --csv "$tmp/nothing/rows.csv"
bad "--csv without --bench" 2 "$BIN/01_naive_scan" 2 --check --csv "$tmp/rows.csv"
bad "--dump with --bench alone" 2 "$BIN/01_naive_scan" 2 --bench --dump "$tmp/benchdump"
bad "--csv and --dump the same path" 2 "$BIN/01_naive_scan" 2 --check --bench --csv "$tmp/same" --dump "$tmp/same"
bad "--seqlens with --batch 2" 2 "$BIN/03_fused_cuda" --check --seqlens 5,7 --batch 2
bad "--seqlens with --seqlen" 2 "$BIN/03_fused_cuda" --check --seqlens 5,7 --seqlen 12
bad "--seqlens 5,0" 2 "$BIN/03_fused_cuda" --check --seqlens 5,0
bad "--seqlens 5,,7" 2 "$BIN/03_fused_cuda" --check --seqlens 5,,7
bad "--seqlens in a chapter without packed problems" 2 "$BIN/06_bidirectional" --check --seqlens 5,7
# An int32 .npy of the values in $2 ("0 5 5 100"), shape (n,).
npy_i32() {
    set -- "$1" $2
    out=$1; shift
    h="{'descr': '<i4', 'fortran_order': False, 'shape': ($#,), }"
    pad=$((117 - ${#h}))
    { printf '\223NUMPY\001\000\166\000%s' "$h"; printf '%*s\n' "$pad" ''
      for v in "$@"; do
          printf "\\$(printf %03o $((v & 255)))\\$(printf %03o $((v >> 8 & 255)))\\$(printf %03o $((v >> 16 & 255)))\\$(printf %03o $((v >> 24 & 255)))"
      done; } >"$out"
}
cp -r "$tmp/packed" "$tmp/cu_flat" && npy_i32 "$tmp/cu_flat/cu_seqlens.npy" "0 5 5 70 100"
bad "--load cu_seqlens with an empty sequence" 2 "$BIN/03_fused_cuda" 1 --load "$tmp/cu_flat"
cp -r "$tmp/packed" "$tmp/cu_start" && npy_i32 "$tmp/cu_start/cu_seqlens.npy" "1 5 6 70 100"
bad "--load cu_seqlens not from 0" 2 "$BIN/03_fused_cuda" 1 --load "$tmp/cu_start"
cp -r "$tmp/packed" "$tmp/cu_end" && npy_i32 "$tmp/cu_end/cu_seqlens.npy" "0 5 6 70 99"
bad "--load cu_seqlens not ending at L" 2 "$BIN/03_fused_cuda" 1 --load "$tmp/cu_end"
cp -r "$tmp/packed" "$tmp/cu_f4" && npy_empty "$tmp/cu_f4/cu_seqlens.npy" "0,"
bad "--load cu_seqlens as float32" 2 "$BIN/03_fused_cuda" 1 --load "$tmp/cu_f4"
cp -r "$tmp/packed" "$tmp/cu_ok" && npy_i32 "$tmp/cu_ok/cu_seqlens.npy" "0 5 6 70 100"
"$BIN/03_fused_cuda" 1 --load "$tmp/cu_ok" >"$tmp/out" 2>&1 && grep -q "vs loaded y, last_state.*PASS" "$tmp/out"
count "packed --load reads a cu_seqlens written by the test's own writer" $?
cp -r "$tmp/ssd_packed" "$tmp/ssd_chunks_bad" && npy_i32 "$tmp/ssd_chunks_bad/cu_seqlens.npy" "0 1 2 3 76"
bad "--load chunk_states whose count cu_seqlens contradicts" 2 "$BIN/05_ssd_mamba2" 3 --load "$tmp/ssd_chunks_bad"
# Headers that claim more than the other files allow are refused from the header,
# before any data is read (the files below are sparse: a header, then zeros never written).
cp -r "$tmp/ssd_packed" "$tmp/ssd_chunks_huge" && npy_empty "$tmp/ssd_chunks_huge/chunk_states.npy" "4194304, 4, 3, 5" &&
    truncate -s $((128 + 4194304 * 4 * 3 * 5 * 4)) "$tmp/ssd_chunks_huge/chunk_states.npy"
bad "--load chunk_states.npy claiming 4194304 chunks for 76 tokens" 2 timeout 10 "$BIN/05_ssd_mamba2" 3 --load "$tmp/ssd_chunks_huge"
cp -r "$tmp/ssd_packed" "$tmp/ssd_cu_huge" && npy_empty "$tmp/ssd_cu_huge/cu_seqlens.npy" "134217729," "<i4" &&
    truncate -s $((128 + 134217729 * 4)) "$tmp/ssd_cu_huge/cu_seqlens.npy"
bad "--load cu_seqlens.npy claiming 2^27 sequences for 76 tokens" 2 timeout 10 "$BIN/05_ssd_mamba2" 3 --load "$tmp/ssd_cu_huge"
cp -r "$tmp/ssd" "$tmp/ssd_chunks_alone" && cp "$tmp/ssd_packed/chunk_states.npy" "$tmp/ssd_chunks_alone/"
bad "--load chunk_states.npy without cu_seqlens.npy" 2 "$BIN/05_ssd_mamba2" 3 --load "$tmp/ssd_chunks_alone"
bad "--slots below --batch" 2 "$BIN/07_decode_kernel" --check --batch 5 --slots 3
bad "--slots in a chapter without a state pool" 2 "$BIN/05_ssd_mamba2" --check --slots 8
bad "--intermediate in a chapter without decode" 2 "$BIN/03_fused_cuda" --check --intermediate
cp -r "$tmp/decode_pool" "$tmp/pool_far" && npy_i32 "$tmp/pool_far/state_batch_indices.npy" "0 7 -1 2"
bad "--load state_batch_indices past the pool" 2 "$BIN/07_decode_kernel" 1 --load "$tmp/pool_far"
cp -r "$tmp/decode_pool" "$tmp/pool_twice" && npy_i32 "$tmp/pool_twice/state_batch_indices.npy" "3 1 -1 3"
bad "--load state_batch_indices naming a slot twice" 2 "$BIN/07_decode_kernel" 1 --load "$tmp/pool_twice"
cp -r "$tmp/decode_pool" "$tmp/pool_ok" && npy_i32 "$tmp/pool_ok/state_batch_indices.npy" "6 -1 -5 0"
"$BIN/07_decode_kernel" 1 --load "$tmp/pool_ok" >"$tmp/out" 2>&1; grep -q "vs oracle .*PASS" "$tmp/out" &&
    grep -q "vs loaded y, state_out, intermediate_states.*FAIL" "$tmp/out"
count "decode --load with other slots: the oracle agrees, the stale outputs do not" $?
bad "device allocation too large" "2|3" "$BIN/01_naive_scan" 3 --bench --batch 16 --dim 2048 --dstate 256 --seqlen 65536

echo
[ -n "$failed" ] && echo "failed:$failed"
# Each program that printed its check lines is counted by them, not as a case.
# A check line's SKIP is a version that does not take a shape (it says why);
# a program with no usable GPU exits 3, which REQUIRE_GPU=1 already failed.
echo "programs and cases: $pass passed, $fail failed, $skip skipped"
echo "check: $((cpass + pass - ppass)) passed, $((cfail + fail - pfail)) failed, $((cskip + skip - pskip)) skipped"
[ $fail -eq 0 ]
