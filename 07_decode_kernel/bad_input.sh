# 07's bad inputs (tests/bad_input.sh runs them with P = build/07_decode_kernel), on the
# round trip's pool $tmp/decode_pool (Mamba-2, batch 4, 3 tokens, 7 slots, states).
bad "$c: --form m1 --heads 4" "--form m2" "$P" --check --form m1 --heads 4
bad "$c: --heads 6 --groups 4" "groups" "$P" --check --heads 6 --groups 4
bad "$c: --form m3" "m3" "$P" --form m3
bad "$c: --form given twice" "--form" "$P" --check --form m1 --form m2
bad "$c: --chunk, a flag of another op" "--chunk" "$P" --chunk 64
bad "$c: --slots below --batch" "--slots 3" "$P" --check --batch 5 --slots 3
bad_lean "$c: 10^9 tokens of 64 heads, refused before it allocates" "host memory.*--tokens|device memory" \
    "$P" --check --form m2 --batch 1 --heads 64 --headdim 16 --dstate 1 --groups 1 --tokens 1000000000
cp -r "$tmp/decode_pool" "$tmp/pool_far" && npy_i32 "$tmp/pool_far/state_batch_indices.npy" "0 7 -1 2"
bad "$c: --load state_batch_indices past the pool" "past the pool" "$P" 1 --load "$tmp/pool_far"
cp -r "$tmp/decode_pool" "$tmp/pool_twice" && npy_i32 "$tmp/pool_twice/state_batch_indices.npy" "3 1 -1 3"
bad "$c: --load state_batch_indices naming a slot twice" "twice|slot 3" "$P" 1 --load "$tmp/pool_twice"
cp -r "$tmp/decode_pool" "$tmp/pool_small" && npy_empty "$tmp/pool_small/state.npy" "3, 4, 24, 40" &&
    truncate -s $((128 + 3 * 4 * 24 * 40 * 4)) "$tmp/pool_small/state.npy"
bad "$c: --load a pool smaller than the batch, named by its files" "state.npy holds 3 slots" "$P" 1 --load "$tmp/pool_small"
cp -r "$tmp/decode_pool" "$tmp/pool_ok" && npy_i32 "$tmp/pool_ok/state_batch_indices.npy" "6 -1 -5 0"
"$P" 1 --load "$tmp/pool_ok" >"$tmp/out" 2>&1; grep -q "vs oracle .*PASS" "$tmp/out" &&
    grep -q "vs loaded y, state_out, intermediate_states.*FAIL" "$tmp/out"
count "input: $c: --load with other slots: the oracle agrees, the stale outputs do not" $?
# NaN in slot 5, which no batch entry names: it passes through, NaN to NaN.
cp -r "$tmp/decode_pool" "$tmp/pool_nan" && npy_set_f32 "$tmp/pool_nan/state.npy" $((5 * 4 * 24 * 40)) nan &&
    npy_set_f32 "$tmp/pool_nan/state_out.npy" $((5 * 4 * 24 * 40)) nan
ok "$c: NaN in a slot no batch entry names passes through" "vs loaded y, state_out, intermediate_states.*PASS \(NaN" \
    "$P" 1 --load "$tmp/pool_nan"
grep -q "FAIL" "$tmp/stdout"; [ $? -eq 1 ]; count "input: ... and no check fails" $?
grep -q "FILE_state_vs_kv.csv FILE_state_precision.csv" "$tmp/help"; count "input: $c: --help names the tables beside --csv FILE" $?
