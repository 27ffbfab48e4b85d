# 05's bad inputs (tests/bad_input.sh runs them with P = build/05_ssd_mamba2), on the
# round trips' folders $tmp/ssd (b 2, L 37, h 4, p 3, g 2, N 5, chunk 16, h0) and
# $tmp/ssd_packed (sequences 5, 1, 40, 30).
bad "$c: --chunk 48" "chunk" "$P" --check --chunk 48
bad "$c: --heads 6 --groups 4" "groups" "$P" --check --heads 6 --groups 4
bad "$c: --heads 3 with the default --groups" "the default --groups" "$P" --check --heads 3
bad "$c: a flag of another op" "--dim" "$P" --dim 8
bad "$c: --hydra, a flag of another op" "--hydra" "$P" --hydra
bad "$c: --slots, a flag of another op" "--slots" "$P" --check --slots 8
bad_lean "$c: 2^31 - 1 packed tokens of 64 heads, refused before it allocates" "host memory|device memory" \
    timeout 20 "$P" --check --seqlens 2147483647 --heads 64 --headdim 1 --dstate 1 --groups 1 --chunk 16
cp -r "$tmp/ssd" "$tmp/g0" && npy_empty "$tmp/g0/B.npy" "2, 37, 0, 5"
bad "$c: --load B.npy with 0 groups" "at least 1" "$P" 3 --load "$tmp/g0"
cp -r "$tmp/ssd" "$tmp/ainf_ssd" && npy_set_f32 "$tmp/ainf_ssd/A.npy" 1 -inf
bad "$c: --load -inf in A" "A.npy element 1 is -inf" "$P" 3 --load "$tmp/ainf_ssd"
# meta.json, read as JSON
for m in 'dir' 'dt_softplus: yes' '{"dt_softplus": true, "chunk_size": 16abc}' '{"dt_softplus": true, "chunk_size": 16.9}' \
         '{"note": {"dt_softplus": false}, "dt_softplus": true, "chunk_size": 16}' \
         '{"dt_softplus": true, "dt_softplus": false, "chunk_size": 16}'; do
    rm -rf "$tmp/meta" && cp -r "$tmp/ssd" "$tmp/meta" && rm "$tmp/meta/meta.json"
    if [ "$m" = dir ]; then mkdir "$tmp/meta/meta.json"; else echo "$m" >"$tmp/meta/meta.json"; fi
    bad "$c: --load meta.json $m" "meta.json" "$P" 3 --load "$tmp/meta"
done
rm -rf "$tmp/meta" && cp -r "$tmp/ssd" "$tmp/meta" &&
    echo '{"comment": "dt_softplus", "x": false, "dt_softplus": true, "chunk_size": 16}' >"$tmp/meta/meta.json"
ok "$c: meta.json: a key named in a string value is not the key" "vs loaded y, final_state.*PASS" "$P" 3 --load "$tmp/meta"
grep -q '"comment" is not read' "$tmp/stderr"; count "input: ... and the unknown keys are named" $?
rm "$tmp/meta/meta.json"
"$P" 3 --load "$tmp/meta" >"$tmp/stdout" 2>"$tmp/stderr"
grep -q "has no meta.json: every flag takes the official function's default" "$tmp/stderr"
count "input: $c: a folder without meta.json is named" $?
# --dump and --load's folder
fingerprint "$tmp/ssd"
bad "$c: --dump into --load's folder" "--load's folder" "$P" 3 --load "$tmp/ssd" --dump "$tmp/ssd/"
unchanged "$c: --load's folder as it was" "$tmp/ssd"
bad "$c: --dump, --no-z, into the older dump's folder" "not empty" \
    "$P" 3 --check --dump "$tmp/ssd" --no-z --batch 1 --seqlen 9 --heads 2 --headdim 4 --dstate 4 --chunk 16
unchanged "$c: the older dump, z.npy and all" "$tmp/ssd"
mkdir "$tmp/empty" && ok "$c: --dump into an empty folder" "wrote" \
    "$P" 3 --check --dump "$tmp/empty/" --batch 1 --seqlen 9 --heads 2 --headdim 4 --dstate 4 --chunk 16
[ -f "$tmp/empty/meta.json" ] && ! ls -d "$tmp"/empty.part* >/dev/null 2>&1
count "on disk: $c: the dump whole, nothing beside it" $?
# A dump whose write fails (a file size limit of 4 KiB) leaves nothing at all.
bad "$c: --dump whose x.npy cannot be written" "nothing written" sh -c 'ulimit -f 8; trap "" XFSZ; exec "$@"' sh \
    "$P" 3 --check --dump "$tmp/cut" --batch 2 --seqlen 300 --heads 4 --headdim 8 --dstate 16 --chunk 16
! ls -d "$tmp"/cut "$tmp"/cut.part* >/dev/null 2>&1; count "on disk: $c: no part of the failed dump" $?
# --csv's own table, named in --help, replaced with a line that says so
grep -q "FILE_precision.csv" "$tmp/help"; count "input: $c: --help names the table beside --csv FILE" $?
mkdir "$tmp/rows" && echo old >"$tmp/rows/r_precision.csv"
ok "$c: --csv's table replaced, with a line" "r_precision.csv: replaced" "$P" 3 --bench --csv "$tmp/rows/r.csv"
bad "$c: --csv inside --dump's folder" "inside --dump's folder" \
    "$P" 3 --check --bench --dump "$tmp/rows/dd" --csv "$tmp/rows/dd/rows.csv"
touch "$tmp/rows/l.csv" && ln -s l.csv "$tmp/rows/l_precision.csv"
bad "$c: --csv whose table is a link to FILE" "is FILE itself" "$P" 3 --bench --csv "$tmp/rows/l.csv"
bad "$c: --csv whose table is --dump's path" "--dump's path" \
    "$P" 3 --check --bench --csv "$tmp/rows/s.csv" --dump "$tmp/rows/s_precision.csv"
# packed folders: the headers checked against the other files before any data is read
cp -r "$tmp/ssd_packed" "$tmp/cs_bad" && npy_i32 "$tmp/cs_bad/cu_seqlens.npy" "0 1 2 3 76"
bad "$c: --load chunk_states whose count cu_seqlens contradicts" "chunk_states" "$P" 3 --load "$tmp/cs_bad"
cp -r "$tmp/ssd_packed" "$tmp/cs_huge" && npy_empty "$tmp/cs_huge/chunk_states.npy" "4194304, 4, 3, 5" &&
    truncate -s $((128 + 4194304 * 4 * 3 * 5 * 4)) "$tmp/cs_huge/chunk_states.npy"
bad_lean "$c: --load chunk_states.npy claiming 4194304 chunks for 76 tokens" "at most" timeout 10 "$P" 3 --load "$tmp/cs_huge"
cp -r "$tmp/ssd_packed" "$tmp/cu_huge" && npy_empty "$tmp/cu_huge/cu_seqlens.npy" "134217729," "<i4" &&
    truncate -s $((128 + 134217729 * 4)) "$tmp/cu_huge/cu_seqlens.npy"
bad_lean "$c: --load cu_seqlens.npy claiming 2^27 sequences for 76 tokens" "cu_seqlens" timeout 10 "$P" 3 --load "$tmp/cu_huge"
cp -r "$tmp/ssd_packed" "$tmp/cs_scalar" && npy_empty "$tmp/cs_scalar/chunk_states.npy" "" && truncate -s 132 "$tmp/cs_scalar/chunk_states.npy"
bad "$c: --load a scalar chunk_states.npy" "0 dimensions" "$P" 3 --load "$tmp/cs_scalar"
cp -r "$tmp/ssd" "$tmp/cs_alone" && cp "$tmp/ssd_packed/chunk_states.npy" "$tmp/cs_alone/"
bad "$c: --load chunk_states.npy without cu_seqlens.npy" "cu_seqlens.npy is missing" "$P" 3 --load "$tmp/cs_alone"
