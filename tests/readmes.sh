#!/bin/sh
# Each chapter README reads as a lesson (make check runs this):
#   - the idea first, then the ladder (its generated block), then the lessons, the
#     targets block, and a last "Next:" line;
#   - at most 200 lines of prose outside generated blocks (<!-- x:begin --> .. <!-- x:end -->);
#   - no commit id (7 to 40 hex digits with a digit and a letter) outside a generated
#     block's "Source:" line.
# Prints one line per problem; exit 1 when there is any.
status=0
for readme in [0-9][0-9]_*/README.md; do
    awk -v f="$readme" '
        /^<!-- [a-z]+:begin -->/ { inside = 1; block = $2; sub(/:begin$/, "", block); seen[block] = ++order; next }
        /^<!-- [a-z]+:end -->/ { inside = 0; next }
        /^<!-- (slower [0-9]+|landmarks):/ { next }
        {
            last = $0
            if (!inside && $0 !~ /^[ \t]*$/) prose++
            line = $0
            if (!(inside && line ~ /^Source:/))
                while (match(line, /[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]+/)) {
                    id = substr(line, RSTART, RLENGTH)
                    before = RSTART == 1 ? "" : substr(line, RSTART - 1, 1)
                    after = substr(line, RSTART + RLENGTH, 1)
                    if (id ~ /[0-9]/ && id ~ /[a-f]/ && before !~ /[0-9A-Za-z_]/ && after !~ /[0-9A-Za-z_]/) {
                        printf "%s:%d: a commit id (%s) outside a generated source line\n", f, NR, id; bad = 1
                    }
                    line = substr(line, RSTART + RLENGTH)
                }
        }
        END {
            if (prose > 200) { printf "%s: %d prose lines outside generated blocks (at most 200)\n", f, prose; bad = 1 }
            if (!("ladder" in seen)) { printf "%s: no ladder block\n", f; bad = 1 }
            if (!("targets" in seen)) { printf "%s: no targets block\n", f; bad = 1 }
            if (("ladder" in seen) && ("targets" in seen) && seen["ladder"] > seen["targets"]) {
                printf "%s: the ladder comes after the targets\n", f; bad = 1 }
            if (last !~ /^Next:/) { printf "%s: the last line is not a \"Next:\" line\n", f; bad = 1 }
            exit bad
        }' "$readme" || status=1
done
[ $status -eq 0 ] && echo "readmes: every chapter README has its ladder, targets and Next line, <= 200 prose lines, no commit id"
exit $status
