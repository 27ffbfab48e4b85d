# The bad-input matrix (docs/design.md §5), sourced by tests/run_checks.sh after the
# round trips, whose folders ($tmp/KEY) the cases start from. A bad input exits 2 with
# one line on stderr that says what is wrong, before any large allocation, and leaves
# the disk as it was. The cases every program shares run on each chapter that takes
# the flags (its --help says); a chapter's own are in its folder's bad_input.sh,
# sourced with P set to its program.

# bad NAME PATTERN command...: exit 2, one stderr line, and the line matches PATTERN
# (grep -E). bad_gpu: the same for a case only a GPU can refuse (a device budget): on a
# machine without one its exit 3 is a SKIP; in every other case exit 3 fails.
bad() {
    name=$1; pattern=$2; shift 2
    "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    verdict "$name" "$pattern" $? no
}
bad_gpu() {
    name=$1; pattern=$2; shift 2
    "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    verdict "$name" "$pattern" $? yes
}
# bad_lean NAME PATTERN command...: bad, and the command's peak resident memory under
# 200 MiB: the refusal comes before the problem is allocated. bad_lean_gpu: the same
# for a case only a GPU can refuse (SKIP without one, its memory then not held).
bad_lean() { gpu_case=no; lean "$@"; }
bad_lean_gpu() { gpu_case=yes; lean "$@"; }
lean() {
    name=$1; pattern=$2; shift 2
    rm -f "$tmp/rss"
    PEAK_RSS_FILE=$tmp/rss python3 tests/peak_rss.py "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    rss=$(cat "$tmp/rss" 2>/dev/null || echo 999)
    if [ "$rss" -ge 200 ] && ! { [ $rc -eq 3 ] && [ "$gpu_case" = yes ]; }; then
        echo "      peak RSS $rss MiB (at most 199): it allocated before refusing"
        count "bad input: $name" 1
        return
    fi
    verdict "$name (peak RSS $rss MiB)" "$pattern" $rc "$gpu_case"
}
verdict() {  # name pattern exit-code gpu-case(yes|no)
    lines=$(wc -l <"$tmp/stderr")
    if [ "$3" -eq 3 ] && [ "$4" = yes ] && grep -q "no usable\|CUDA device\|no CUDA" "$tmp/stderr" "$tmp/stdout"; then
        count "bad input: $1" 3
    elif [ "$3" -eq 2 ] && [ "$lines" -eq 1 ] && grep -qE -- "$2" "$tmp/stderr"; then
        echo "      $(cat "$tmp/stderr")"; count "bad input: $1" 0
    else
        echo "      expected exit 2 and one line on stderr matching /$2/, got exit $3 and $lines lines:"
        sed 's/^/      | /' "$tmp/stderr" | head -n5
        count "bad input: $1" 1
    fi
}
# ok NAME PATTERN command...: a case that must run (exit 0, or 3 without a GPU) with
# PATTERN in its stdout and stderr.
ok() {
    name=$1; pattern=$2; shift 2
    "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    if { [ $rc -eq 0 ] || [ $rc -eq 3 ]; } && cat "$tmp/stdout" "$tmp/stderr" | grep -qE -- "$pattern"; then
        count "input: $name" 0
    else
        echo "      expected exit 0 or 3 and /$pattern/ in the output, got exit $rc:"
        tail -n 3 "$tmp/stderr" "$tmp/stdout" | sed 's/^/      | /'
        count "input: $name" 1
    fi
}
# unchanged NAME DIR: DIR holds what the fingerprint taken by `fingerprint DIR` saw,
# and no DIR.part* folder is left beside it.
fingerprint() { (cd "$1" && ls -la --time-style=+%s . && cat ./*) 2>/dev/null | cksum >"$tmp/fp"; }
unchanged() {
    now=$( (cd "$2" && ls -la --time-style=+%s . && cat ./*) 2>/dev/null | cksum)
    if [ "$now" = "$(cat "$tmp/fp")" ] && ! ls -d "${2%/}".part* >/dev/null 2>&1; then
        count "on disk: $1" 0
    else
        echo "      $2 changed, or a partial dump is left beside it"; count "on disk: $1" 1
    fi
}
# An .npy with the shape in $2 ("2, 37, 0, 5") and no data: a header padded to 128
# bytes, fp32 ('<f4') unless $3 names another descr ('<i4').
npy_empty() {
    h="{'descr': '${3:-<f4}', 'fortran_order': False, 'shape': ($2), }"
    pad=$((117 - ${#h}))
    { printf '\223NUMPY\001\000\166\000%s' "$h"; printf '%*s\n' "$pad" ''; } >"$1"
}
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
# Element $2 of the fp32 .npy $1 set to $3 ("-inf", "nan", "0.5"), in place.
npy_set_f32() {
    python3 -c '
import struct, sys
path, index, value = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
with open(path, "r+b") as f:
    head = f.read(10)
    f.seek(10 + struct.unpack("<H", head[8:10])[0] + 4 * index)
    f.write(struct.pack("<f", value))' "$1" "$2" "$3"
}
takes() { grep -q -- "^  $1 " "$tmp/help"; }  # the program's --help lists flag $1

echo "=== bad input"
mkdir -p "$tmp/outdir" "$tmp/older" && echo keep >"$tmp/older/x.npy" && mkfifo "$tmp/fifo.csv"
for c in $CHAPTERS; do
    P=$BIN/$c
    "$P" --help >"$tmp/help" 2>&1
    bad "$c: unknown flag" "frobnicate" "$P" --frobnicate
    bad "$c: version out of range" "99" "$P" 99
    bad "$c: VERSION 2^31" "2147483648" "$P" 2147483648 --check
    bad "$c: VERSION 2^40" "1099511627776" "$P" 1099511627776 --check
    bad "$c: --seed past 2^40" "--seed" "$P" --check --seed 1099511627777
    ok "$c: --seed 0 is a seed" "^ +1 " "$P" --list --seed 0
    if takes --batch; then
        bad "$c: --batch abc" "not an integer" "$P" --check --batch abc
        bad "$c: --batch 0" "out of range" "$P" --check --batch 0
        bad "$c: --batch 1,,2" "empty item" "$P" --check --batch 1,,2
        bad "$c: --batch given twice" "--batch" "$P" --check --batch 2 --batch 3
    fi
    takes --dstate && bad "$c: --dstate 0" "out of range" "$P" --check --dstate 0
    if takes --batch; then grep -q "^memory: before anything is allocated" "$tmp/help"; count "input: $c: --help states the memory budget" $?; fi
    if takes --reps; then
        bad "$c: --reps 2^32 + 20" "--reps" "$P" --bench --reps 4294967316
        bad "$c: --sampled without --bench" "--bench" "$P" --check --sampled
        bad "$c: --sampled with --reps" "--reps" "$P" --bench --sampled --reps 20
    fi
    if takes --csv; then
        bad "$c: --csv without --bench" "--bench" "$P" --check --csv "$tmp/outdir/rows.csv"
        bad "$c: --sampled with --csv" "--csv" "$P" --bench --sampled --csv "$tmp/outdir/rows.csv"
        bad "$c: --csv into a missing folder" "cannot create" "$P" --bench --csv "$tmp/nothing/rows.csv"
        bad "$c: --csv a folder" "not a regular file" "$P" --bench --csv "$tmp/outdir"
        bad "$c: --csv a FIFO" "not a regular file" timeout 10 "$P" --bench --csv "$tmp/fifo.csv"
        bad "$c: --csv /dev/full" "not a regular file" "$P" --bench --csv /dev/full
        bad "$c: --csv in /proc" "cannot create" "$P" --bench --csv /proc/rows.csv
        bad "$c: --csv and --dump one path spelled two ways" "same path" \
            "$P" --check --bench --csv "$tmp/outdir/same" --dump "$tmp/outdir/./same/"
        ! ls "$tmp/outdir" | grep -q . ; count "on disk: $c: the refused --csv runs wrote nothing" $?
    fi
    if takes --dump; then
        bad "$c: --dump with --bench alone" "--check or --load" "$P" --bench --dump "$tmp/outdir/d"
        fingerprint "$tmp/older"
        bad "$c: --dump into a folder that holds an older dump" "not empty" "$P" --check --dump "$tmp/older"
        unchanged "$c: the older dump as it was" "$tmp/older"
        echo keep >"$tmp/outdir/file"
        bad "$c: --dump onto a file, refused before the checks" "not a folder" "$P" --check --dump "$tmp/outdir/file"
        ! grep -q "PASS\|FAIL" "$tmp/stdout"; count "bad input: ... and nothing was checked first" $?
        rm "$tmp/outdir/file"
    fi
    if takes --load; then
        bad "$c: --load a missing folder" "not a folder" "$P" 1 --load "$tmp/nothing"
        bad "$c: --load with --seed" "--seed" "$P" 1 --load "$tmp/outdir" --seed 7
        bad "$c: --load with --reps" "--reps" "$P" 1 --load "$tmp/outdir" --reps 30
    fi
    if [ -f "$c/bad_input.sh" ]; then
        # shellcheck disable=SC1090  # the chapter's own cases
        . "./$c/bad_input.sh"
    fi
done
