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
# no include circle, no source file over 600 lines, no commit id in source (tests/structure.sh).
echo "=== structure"
BIN="$BIN" sh tests/structure.sh
count "structure: harness names no op, no call or include circle, files <= 600 lines, no commit ids" $?
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

# Bad input: one clear line on stderr and exit 2, before any large allocation, the disk
# as it was (tests/bad_input.sh, with each chapter's own cases from its folder).
. tests/bad_input.sh

echo
[ -n "$failed" ] && echo "failed:$failed"
# Each program that printed its check lines is counted by them, not as a case.
# A check line's SKIP is a version that does not take a shape (it says why);
# a program with no usable GPU exits 3, which REQUIRE_GPU=1 already failed.
echo "programs and cases: $pass passed, $fail failed, $skip skipped"
echo "check: $((cpass + pass - ppass)) passed, $((cfail + fail - pfail)) failed, $((cskip + skip - pskip)) skipped"
[ $fail -eq 0 ]
