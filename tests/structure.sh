#!/bin/sh
# The repository's shape, checked on every `make check` (docs/design.md §1):
#   1. the harness (common/) names no operation in its code (comments may);
#   2. no module of common/ calls, through others, back into itself (the
#      graph of who calls whom, read from the objects' symbols with nm);
#   3. no hand-written source file is over 600 lines;
#   4. no source file holds a commit id (measurements live in the CSVs);
#   5. no header includes, through others, itself (#include "..." resolved as
#      the compilers do: the including file's folder, then common/,
#      common/cuda/ and ops/*/).
# Prints one line a finding and "structure: N problems" last; exit 1 on any.
BIN=${BIN:-build}
problems=0
say() { echo "structure: $*"; problems=$((problems + 1)); }

# The nodes on a circle of a graph given as "from to" lines on stdin, on one line.
on_circles() {
    awk 'NF == 2 { adj[$1] = adj[$1] " " $2; nodes[$1] }
        function reach(from, to, seen,   n, list, i) {
            n = split(adj[from], list, " ")
            for (i = 1; i <= n; i++) {
                if (list[i] == to) return 1
                if (!(list[i] in seen)) { seen[list[i]]; if (reach(list[i], to, seen)) return 1 }
            }
            return 0 }
        END { for (m in nodes) { delete s; if (reach(m, m, s)) print m } }' | sort | tr '\n' ' '
}

# 1. Operation words in code lines of common/: comments stripped first.
WORDS='decode|bidir|hydra|ssd|slots|tokens|heads|headdim|chunk|mamba1|mamba2|mamba3|scan'
for f in common/*.c common/*.h common/*.cu common/cuda/*; do
    [ -f "$f" ] || continue
    sed -e 's://.*$::' "$f" | awk '
        { line = $0; out = "" }
        { while (line != "") {
              if (incomment) { i = index(line, "*/"); if (!i) { line = ""; break } line = substr(line, i + 2); incomment = 0 }
              i = index(line, "/*"); if (!i) { out = out line; line = ""; break }
              out = out substr(line, 1, i - 1); line = substr(line, i + 2); incomment = 1 } }
        { print FNR ": " out }' | grep -i -E "$WORDS" | grep -v -E '^[0-9]+: *$' |
        while IFS= read -r hit; do echo "structure: $f:$hit names an operation"; done
done >"${TMPDIR:-/tmp}/structure.$$"
n=$(wc -l <"${TMPDIR:-/tmp}/structure.$$")
cat "${TMPDIR:-/tmp}/structure.$$"; rm -f "${TMPDIR:-/tmp}/structure.$$"
problems=$((problems + n))

# 2. Calls between the modules of common/: an edge a -> b when a's object
# needs a symbol b's defines; a circle is a module that reaches itself.
if command -v nm >/dev/null 2>&1 && ls "$BIN"/obj/common/*.o >/dev/null 2>&1; then
    edges=$(for o in "$BIN"/obj/common/*.o; do
        m=$(basename "$o" .o)
        nm "$o" | awk -v m="$m" '$1 ~ /^[0-9a-f]+$/ && $2 ~ /^[TDBR]$/ { print "def", m, $3 } $1 == "U" { print "use", m, $2 }'
    done | awk '$1 == "def" { owner[$3] = $2 } $1 == "use" { use[NR] = $2 " " $3 }
        END { for (k in use) { split(use[k], u, " "); if ((u[2] in owner) && owner[u[2]] != u[1]) print u[1], owner[u[2]] } }' | sort -u)
    circle=$(echo "$edges" | on_circles)
    if [ -n "$circle" ]; then say "common/ modules that call back into themselves: $circle"; fi
else
    echo "structure: nm or $BIN/obj/common/*.o missing: the call graph is not checked"
fi

# 3. Long files: every hand-written source file at most 600 lines.
for f in $(git ls-files '*.c' '*.h' '*.cu' '*.cuh' '*.py' '*.sh' 2>/dev/null); do
    n=$(wc -l <"$f")
    if [ "$n" -gt 600 ]; then say "$f has $n lines (at most 600)"; fi
done

# 4. Commit ids in source: 7 to 40 hex digits with a letter and a digit,
# outside a 0x literal and a float's digits.
git grep -n -I -E '(^|[^0-9A-Za-z_.x])[0-9a-f]{7,40}([^0-9A-Za-z_]|$)' -- '*.c' '*.h' '*.cu' '*.cuh' '*.py' '*.sh' 2>/dev/null |
    grep -E ':.*[^0-9a-f.x][0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*|:.*[^0-9a-f.x][0-9a-f]*[0-9][0-9a-f]*[a-f]' |
    grep -v -E 'e[-+][0-9]|[0-9]e[0-9]' |
    while IFS= read -r hit; do
        id=$(echo "$hit" | grep -o -E '(^|[^0-9A-Za-z_.x])[0-9a-f]{7,40}([^0-9A-Za-z_]|$)' | grep -E '[a-f]' | grep -E '[0-9]' | head -n 1)
        [ -n "$id" ] && echo "structure: ${hit%%:*}: a commit id ($(echo "$id" | tr -dc '0-9a-f'))"
    done >"${TMPDIR:-/tmp}/structure.$$"
n=$(wc -l <"${TMPDIR:-/tmp}/structure.$$")
cat "${TMPDIR:-/tmp}/structure.$$"; rm -f "${TMPDIR:-/tmp}/structure.$$"
problems=$((problems + n))

# 5. Include circles: an edge file -> header for each #include "header",
# resolved in the including file's folder first, then the -I folders.
files=$(git ls-files '*.c' '*.h' '*.cu' '*.cuh' 2>/dev/null)
circle=$(for f in $files; do
        sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$f" | while IFS= read -r inc; do
            for d in "$(dirname "$f")" common common/cuda ops/*; do
                if [ -f "$d/$inc" ]; then echo "$f ${d#./}/$inc"; break; fi
            done
        done
    done | sed 's:^\./::; s: \./: :' | on_circles)
if [ -n "$circle" ]; then say "headers that include themselves through others: $circle"; fi

echo "structure: $problems problems"
[ "$problems" -eq 0 ]
