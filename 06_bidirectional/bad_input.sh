# 06's bad inputs (tests/bad_input.sh runs them with P = build/06_bidirectional), on the
# round trip's folder $tmp/bidir (b 2, L 37, h 4, p 3, g 2, N 5, chunk 16, h0).
bad "$c: --chunk 48" "chunk" "$P" --check --chunk 48
bad "$c: --seqlens, a flag of another op" "--seqlens" "$P" --check --seqlens 5,7
cp -r "$tmp/bidir" "$tmp/bidir_fwd" && rm "$tmp/bidir_fwd/initial_states_bwd.npy"
bad "$c: --load initial_states without initial_states_bwd" "initial_states" "$P" 2 --load "$tmp/bidir_fwd"
cp -r "$tmp/bidir" "$tmp/bidir48" && echo '{"dt_softplus": true, "chunk_size": 48}' >"$tmp/bidir48/meta.json"
bad "$c: --load chunk_size 48, named as meta.json's" "meta.json: chunk_size 48" "$P" 2 --load "$tmp/bidir48"
cp -r "$tmp/bidir" "$tmp/bidir_cu" && npy_i32 "$tmp/bidir_cu/cu_seqlens.npy" "0 5 37"
ok "$c: --load names a cu_seqlens.npy it does not read" "cu_seqlens.npy is not a tensor of this program" \
    "$P" 2 --load "$tmp/bidir_cu"
