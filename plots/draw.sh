#!/bin/sh
# Draws every figure from plots/data/*.csv and rewrites the README result
# tables (`make plots` runs it from the repository root; no GPU needed).
# `sh plots/draw.sh --figures-only` draws the figures and leaves the tables.
# The front page (README's headline table, summary_*.png, roofline.png) comes
# from plots/data/front.csv alone, one `make front` run; without that file it
# is left as it is. Everything else comes from the chapter CSVs.
#   gnuplot  -> plots/<chapter>_time.png, _memory.png, _seqlen.png (and
#               _all_time.png, ... where a figure keeps to the landmarks)
#   python3 plots/summary.py (matplotlib) -> plots/summary_speedup.png, summary_memory.png
#   python3 plots/roofline.py (matplotlib) -> plots/roofline.png
#   python3 plots/ssd.py (matplotlib)     -> plots/05_ssd_mamba2_seqlen.png, _memory.png, _crossover.png
#   python3 plots/bidir.py (matplotlib)   -> plots/06_bidirectional_seqlen.png, _memory.png
#   python3 plots/decode.py (matplotlib)  -> plots/07_decode_kernel_bandwidth.png, _loop.png, _tokens.png, _slots_drafts.png, _state_vs_kv.png, _state_precision.png
#   python3 plots/mamba3.py (matplotlib)  -> plots/08_mamba3_prefill.png, _step.png, _angle_drift.png
#   python3 plots/serving.py (matplotlib) -> plots/<chapter>_serving.png for 03, 04, 05 where the serving mix was timed
#   python3 plots/tables.py (stdlib)      -> <chapter>/RESULTS.md, tables between markers in the READMEs
# A figure draws at most 8 versions: where it has more, the chapter's landmark
# versions (a line of the chapter's README, read here by sed), and an appendix,
# plots/<chapter>_all_<what>.png, draws them all. A version keeps its color
# and marker in every figure of its chapter.
# A missing tool is reported and its part skipped; the exit status is non-zero
# only when a missing tool had data to draw.
set -u
cd "$(dirname "$0")/.." || exit 2

tables=1
case "${1:-}" in
    --figures-only) tables=0 ;;
    '') ;;
    *) echo "usage: sh plots/draw.sh [--figures-only]" >&2; exit 2 ;;
esac

data=plots/data
front=$data/front.csv  # the front page's run (make front): summary.py, roofline.py, tables.py
header_chapter='chapter,version,name,dtype,batch,dim,'
header_official='op,impl,'

chapters=''     # chapter CSVs (the harness's schema)
official=''     # official reference timings (tests/official_bench.py's schema), every such file
for f in "$data"/*.csv; do
    [ -f "$f" ] && [ "$f" != "$front" ] || continue
    case "$(head -n 1 "$f")" in
        "$header_chapter"*) chapters="$chapters $f" ;;
        "$header_official"*) official="$official $f" ;;
        "seqlen,width,kv_cache_mib,"*) ;;  # 07's state-vs-KV-cache table: plots/decode.py
        "state,bytes_per_value,"*) ;;      # 07's 16- and 8-bit-state accuracy: plots/tables.py, plots/decode.py
        "way,steps,angle_error_rad"*) ;;   # 08's angle drift: plots/tables.py, plots/mamba3.py
        "sweep,version,tile,"*) ;;         # 04's plan and tile sweeps: read in 04's README, not drawn
        "sweep,version,rows_per_unit,"*) ;;  # 07's staged units and early-load sweeps: read in 07's README, not drawn
        "operand,products_per_mac,"*) ;;   # 05's operand precisions: quoted in 05's README, not drawn
        "device,copy_gbps,"*) ;;            # a device's probed rates (make probe): plots/roofline.py, tables
        *) echo "plots: $f: unknown header, skipped" ;;
    esac
done
if [ -z "$chapters" ]; then
    echo "no benchmark data in $data (run \`make bench\` on a machine with a GPU)"
    exit 0
fi

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# An awk function: a GPU's short name in its full name ("NVIDIA H100 80GB HBM3"
# -> "H100"), as official file names give it (official_h100_...csv).
awk_short='function short(d) {
    if (match(d, /[A-Z][A-Z]?[0-9][0-9][0-9]?[0-9]?[A-Z]?/)) return substr(d, RSTART, RLENGTH)
    sub(/^NVIDIA /, "", d)
    return d
}'

# main_device CSV: the short name of the device most of the chapter's rows
# were timed on (the first on a tie): the one its figures draw.
main_device() {
    awk -F, "$awk_short"'
        NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { d = short($c["device"]); if (!(d in n)) order[++k] = d; n[d]++ }
        END { for (i = 1; i <= k; i++) if (n[order[i]] > most) { most = n[order[i]]; m = order[i] }
              print m }
    ' "$1"
}

# blocks CSV SET GROUP X Y...: the rows of benchmark set SET as gnuplot data
# blocks (separated by two blank lines), each headed by its quoted title.
# Each block holds the rows of one device: the chapter's main device (see
# main_device) where the block has rows on it, else its own, named in its
# title ("v3 name (H100) fp32").
#   SET    s1 (d 2048, N 32, L 512), s2b1 / s2b8 (d 2048, N 16, batch 1 / 8),
#          both with G 1 and the default flags z+D+bias+softplus
#   GROUP  version: one block per (version, dtype), titled "v3 name fp32";
#          anything else: one block per dtype, titled "GROUP fp32"
#   X, Y   column names, or bdln (b·d·L·N) and io (peak minus workspace MiB)
# Rows whose first Y is not positive (nothing to put on a log axis) are left
# out; when a (version, dtype, X) of one device appears twice the last row wins.
blocks() {
    csv=$1 set=$2 group=$3 x=$4
    shift 4
    awk -F, -v set="$set" -v group="$group" -v x="$x" -v ys="$*" -v main="$(main_device "$csv")" "$awk_short"'
        function val(name) {
            if (name == "bdln")
                return $c["batch"] * $c["dim"] * $c["seqlen"] * $c["dstate"]
            if (name == "io")
                return $c["peak_mib"] - $c["workspace_mib"]
            return $c[name]
        }
        function in_set() {
            if ($c["dim"] != 2048 || $c["groups"] != 1 || $c["flags"] != "z+D+bias+softplus")
                return 0
            if ($c["seqlen"] < 512)  # decode rows (T tokens) are no scan set
                return 0
            if (set == "s1")
                return $c["dstate"] == 32 && $c["seqlen"] == 512
            if (set == "s2b1")
                return $c["dstate"] == 16 && $c["batch"] == 1
            if (set == "s2b8")
                return $c["dstate"] == 16 && $c["batch"] == 8
            return 0
        }
        NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; ny = split(ys, y, " "); next }
        in_set() && val(y[1]) + 0 > 0 {
            dev = short($c["device"])
            title = group == "version" ? "v" $c["version"] " " $c["name"] : group
            order = group == "version" ? $c["version"] : 0
            block = order SUBSEP $c["dtype"]
            if (!(block in first)) first[block] = dev
            if (dev == main) on_main[block] = 1
            line = order "\t" title (dev == main ? "" : " (" dev ")") " " $c["dtype"] "\t" val(x)
            for (i = 1; i <= ny; i++) line = line "\t" val(y[i])
            rows[dev, block, val(x)] = line
        }
        END {
            for (k in rows) {
                split(k, p, SUBSEP)  # device, order, dtype, x
                block = p[2] SUBSEP p[3]
                if (p[1] == (block in on_main ? main : first[block])) print rows[k]
            }
        }
    ' "$csv" | sort -t "$(printf '\t')" -k1,1n -k2,2 -k3,3g | awk -F '\t' '
        $2 != title { if (NR > 1) printf "\n\n"; title = $2; printf "\"%s\"\n", title }
        { line = $3; for (i = 4; i <= NF; i++) line = line " " $i; print line }
    '
}

# official_blocks SET DTYPES DEVICE: official selective_scan_fn times (ms) for
# the set on DEVICE (a short name, from the file names official_<device>_...),
# one block per dtype in DTYPES, x = batch for s1 and L for s2b1/s2b8; where
# several files time a point, their best time (as the tables take it).
official_blocks() {
    [ -n "$official" ] || return 0
    awk -F, -v set="$1" -v dtypes=" $2 " -v device="$3" '
        FNR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
                   dev = FILENAME; sub(/.*\//, "", dev); sub(/^official_/, "", dev); sub(/[_.].*/, "", dev)
                   dev = toupper(dev); next }
        dev != device { next }
        $c["op"] != "mamba1_scan_fwd" || $c["impl"] != "official_cuda_fwd" { next }
        $c["dim_or_heads"] != 2048 || index(dtypes, " " $c["dtype"] " ") == 0 { next }
        set == "s1" && $c["N"] == 32 && $c["L"] == 512 { x = $c["batch"] }
        set == "s2b1" && $c["N"] == 16 && $c["batch"] == 1 { x = $c["L"] }
        set == "s2b8" && $c["N"] == 16 && $c["batch"] == 8 { x = $c["L"] }
        x != "" && $c["ms_median"] + 0 > 0 {
            k = $c["dtype"] "\t" x
            if (!(k in ms) || $c["ms_median"] + 0 < ms[k]) ms[k] = $c["ms_median"] + 0
        }
        { x = "" }
        END { for (k in ms) print k "\t" ms[k] }
    ' $official | sort -t "$(printf '\t')" -k1,1 -k2,2g | awk -F '\t' -v device="$3" '
        $1 != dtype { if (NR > 1) printf "\n\n"; dtype = $1
                      printf "\"official selective_scan_fn %s (%s)\"\n", dtype, device }
        { print $2, $3 }
    '
}

# count FILE: the number of data blocks in FILE (one title line each).
count() { grep -c '^"' "$1"; }

# landmarks CHAPTER: the chapter's landmark versions, space-separated, from its
# README's line "<!-- landmarks: 4 5 7 (why) -->" (empty without one).
landmarks() {
    [ -f "$1/README.md" ] || return 0
    sed -n 's/^<!-- landmarks: \([0-9 ]*[0-9]\).*/\1/p' "$1/README.md" | head -n 1
}

# versions FILE...: the versions of the blocks in FILEs, one a line.
versions() { sed -n 's/^"v\([0-9][0-9]*\) .*/\1/p' "$@" | sort -un; }

# keeps CHAPTER FILE...: whether a figure of FILEs' blocks keeps to the
# chapter's landmarks: they hold more than 8 versions and the chapter has
# landmarks (plots/landmarks.py's pick).
keeps() {
    _chapter=$1
    shift
    [ -n "$(landmarks "$_chapter")" ] && [ "$(versions "$@" | wc -l)" -gt 8 ]
}

# only VERSIONS < FILE: the blocks of FILE of the versions listed (space-separated).
only() {
    awk -v keep=" $1 " '
        /^"/ { v = $1; sub(/^"v/, "", v); on = index(keep, " " v " ") > 0; if (on && n++) printf "\n\n" }
        on && NF { print }
    '
}

# styles FILE CHAPTER [SUFFIX]: gnuplot assignments of colors<SUFFIX>,
# points<SUFFIX>, widths<SUFFIX> and dashes<SUFFIX>: the look of each block of
# FILE, in its order, as plots/landmarks.py's slot() and style() give it (the
# landmarks from the chapter's README, see landmarks). A
# landmark takes the color and filled point of its place in the chapter's
# list, any other version a pair no landmark takes, hollow and thinner; a
# block of another device than the chapter's main one is dashed.
styles() {
    awk -v marks_line="$(landmarks "$2")" -v sfx="${3:-}" '
        function tuple(s) { sub(/^[^(]*\(/, "", s); sub(/\).*/, "", s); gsub(/[",]/, " ", s); return s }
        function listed(v,  k) { for (k = 1; k <= n; k++) if (marks[k] + 0 == v) return k; return 0 }
        BEGIN { n = split(marks_line, marks, " ") }  # the landmarks line of the chapter README
        FNR == NR {
            if ($1 == "PALETTE") split(tuple($0), palette, " ")
            else if ($1 == "GNUPLOT_POINTS") split(tuple($0), filled, " ")
            else if ($1 == "GNUPLOT_OPEN_POINTS") split(tuple($0), open, " ")
            next
        }
        /^"/ {
            v = $1; sub(/^"v/, "", v); v += 0
            if (n == 0) { landmark = 1; i = v - 1 }  # no landmarks: every version in version order
            else if (listed(v)) { landmark = 1; i = listed(v) - 1 }
            else {
                landmark = 0; j = 0  # its place among the versions not listed
                for (u = 1; u < v; u++) if (!listed(u)) j++
            }
            c = landmark ? i % 8 : j % 8
            m = landmark ? i % 8 : (j + 1 + int(j / 8)) % 8
            colors = colors " " palette[c + 1]
            points = points " " (landmark ? filled[m + 1] : open[m + 1])
            widths = widths " " (landmark ? 2.5 : 1.5)
            dashes = dashes " " ($0 ~ /\([^()]*\) [^ ]*"$/ ? 2 : 1)  # "v3 name (H100) fp32"
        }
        END {
            printf "colors%s = \"%s\"; points%s = \"%s\"; ", sfx, substr(colors, 2), sfx, substr(points, 2)
            printf "widths%s = \"%s\"; dashes%s = \"%s\"\n", sfx, substr(widths, 2), sfx, substr(dashes, 2)
        }
    ' plots/landmarks.py "$1"
}

# figure, pick and out_note read keeps_now: 1 where keeps said that the
# figure in hand keeps to the landmarks, else 0.

# figure CHAPTER WHAT: how the figure WHAT of the chapter is drawn: "main"
# (every version in plots/<chapter>_<what>.png; an appendix left from an
# earlier run removed) or "main all" (the landmarks, then the appendix
# plots/<chapter>_all_<what>.png of every version).
figure() {
    if [ "$keeps_now" = 1 ]; then
        echo "main all"
    else
        rm -f "plots/$1_all_$2.png"
        echo main
    fi
}

# pick WHICH CHAPTER < FILE: the blocks a figure draws: main keeps to the
# chapter's landmarks where keeps said so, all draws every version.
pick() {
    if [ "$1" = main ] && [ "$keeps_now" = 1 ]; then only "$(landmarks "$2")"; else cat; fi
}

# out_note WHICH CHAPTER WHAT: the figure's file and the note under its title,
# as OUT and NOTE.
out_note() {
    if [ "$1" = all ]; then
        OUT="plots/$2_all_$3.png" NOTE="every version"
    elif [ "$keeps_now" = 1 ]; then
        OUT="plots/$2_$3.png" NOTE="landmark versions (every version: plots/$2_all_$3.png)"
    else
        OUT="plots/$2_$3.png" NOTE=""
    fi
}

# dtypes FILE: the dtypes of the blocks in FILE, space-separated.
dtypes() { sed -n 's/^".* \([^ ]*\)"$/\1/p' "$1" | sort -u | tr '\n' ' '; }

need_gnuplot=0
for f in $chapters; do
    blocks "$f" s1 version batch ms_median > "$tmp/has_s1"
    blocks "$f" s2b1 version seqlen ms_median > "$tmp/has_s2b1"
    blocks "$f" s2b8 version seqlen ms_median > "$tmp/has_s2b8"
    [ -s "$tmp/has_s1" ] || [ -s "$tmp/has_s2b1" ] || [ -s "$tmp/has_s2b8" ] && need_gnuplot=1
done

status=0

if ! command -v gnuplot > /dev/null 2>&1; then
    echo "gnuplot not found: install it with \`sudo apt-get install gnuplot-nox\` (Debian/Ubuntu); per-chapter figures skipped"
    [ "$need_gnuplot" = 1 ] && status=1
else
    for f in $chapters; do
        chapter=$(basename "$f" .csv)
        drew=''
        # Time and memory vs batch at S1.
        t=$tmp/$chapter
        blocks "$f" s1 version batch ms_median > "$t.time_every"
        if [ -s "$t.time_every" ]; then
            blocks "$f" s1 floor batch floor_ms > "$t.floor"
            official_blocks s1 "$(dtypes "$t.time_every")" "$(main_device "$f")" > "$t.official"
            blocks "$f" s1 version bdln peak_mib workspace_mib > "$t.memory_every"
            blocks "$f" s1 "inputs + outputs" bdln io > "$t.io"
            keeps_now=0
            keeps "$chapter" "$t.time_every" && keeps_now=1
            for which in $(figure "$chapter" time); do
                pick "$which" "$chapter" < "$t.time_every" > "$t.time"
                pick "$which" "$chapter" < "$t.memory_every" > "$t.memory"
                out_note "$which" "$chapter" time
                gnuplot -e "chapter='$chapter'; out='$OUT'; note='$NOTE'" \
                    -e "versions='$t.time'; nversions=$(count "$t.time"); $(styles "$t.time" "$chapter")" \
                    -e "floors='$t.floor'; nfloors=$(count "$t.floor")" \
                    -e "official='$t.official'; nofficial=$(count "$t.official")" \
                    plots/time.gp || status=1
                drew="$drew $OUT"
                out_note "$which" "$chapter" memory
                gnuplot -e "chapter='$chapter'; out='$OUT'; note='$NOTE'" \
                    -e "versions='$t.memory'; nversions=$(count "$t.memory"); $(styles "$t.memory" "$chapter")" \
                    -e "workspace_max=$(awk '!/^"/ && $3 + 0 > m { m = $3 + 0 } END { print m + 0 }' "$t.memory")" \
                    -e "io='$t.io'; nio=$(count "$t.io")" \
                    plots/memory.gp || status=1
                drew="$drew $OUT"
            done
            [ "$keeps_now" = 1 ] || rm -f "plots/${chapter}_all_memory.png"
        fi
        # Time vs sequence length at S2, batch 1 and 8.
        blocks "$f" s2b1 version seqlen ms_median > "$t.b1_every"
        blocks "$f" s2b8 version seqlen ms_median > "$t.b8_every"
        if [ -s "$t.b1_every" ] || [ -s "$t.b8_every" ]; then
            blocks "$f" s2b1 floor seqlen floor_ms > "$t.floor1"
            blocks "$f" s2b8 floor seqlen floor_ms > "$t.floor8"
            official_blocks s2b1 "$(dtypes "$t.b1_every")" "$(main_device "$f")" > "$t.official1"
            official_blocks s2b8 "$(dtypes "$t.b8_every")" "$(main_device "$f")" > "$t.official8"
            keeps_now=0
            keeps "$chapter" "$t.b1_every" "$t.b8_every" && keeps_now=1
            for which in $(figure "$chapter" seqlen); do
                pick "$which" "$chapter" < "$t.b1_every" > "$t.b1"
                pick "$which" "$chapter" < "$t.b8_every" > "$t.b8"
                out_note "$which" "$chapter" seqlen
                gnuplot -e "chapter='$chapter'; out='$OUT'; note='$NOTE'" \
                    -e "b1='$t.b1'; nb1=$(count "$t.b1"); b8='$t.b8'; nb8=$(count "$t.b8")" \
                    -e "$(styles "$t.b1" "$chapter" 1); $(styles "$t.b8" "$chapter" 8)" \
                    -e "floor1='$t.floor1'; nfloor1=$(count "$t.floor1")" \
                    -e "floor8='$t.floor8'; nfloor8=$(count "$t.floor8")" \
                    -e "official1='$t.official1'; nofficial1=$(count "$t.official1")" \
                    -e "official8='$t.official8'; nofficial8=$(count "$t.official8")" \
                    plots/seqlen.gp || status=1
                drew="$drew $OUT"
            done
        fi
        if [ -n "$drew" ]; then
            echo "$chapter:$drew"
        else
            echo "$chapter: no S1 or S2 rows, no per-chapter figure"
        fi
    done
fi

if ! command -v python3 > /dev/null 2>&1; then
    echo "python3 not found: install it with \`sudo apt-get install python3\` (Debian/Ubuntu); summary figures and README tables skipped"
    exit 1
fi

if ! python3 -c 'import matplotlib' > /dev/null 2>&1; then
    echo "matplotlib not importable by python3: install it with \`python3 -m pip install matplotlib\` or Debian's \`sudo apt-get install python3-matplotlib\`; summary, roofline, SSD, bidirectional, decode, Mamba-3 and serving figures skipped"
    status=1
else
    if [ -f "$front" ]; then
        python3 plots/summary.py || status=1
        python3 plots/roofline.py || status=1
    fi
    python3 plots/ssd.py || status=1
    python3 plots/bidir.py || status=1
    python3 plots/decode.py || status=1
    python3 plots/mamba3.py || status=1
    python3 plots/serving.py || status=1
fi

if [ "$tables" = 1 ]; then
    python3 plots/tables.py || status=1
    [ -f "$front" ] || echo "front page: no $front (make front on a GPU); front page left as it is"
fi
exit $status
