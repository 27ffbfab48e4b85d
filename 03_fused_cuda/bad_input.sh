# 03's bad inputs (tests/bad_input.sh runs them with P = build/03_fused_cuda), on the
# round trip's packed folder $tmp/packed: four sequences, 100 tokens.
bad "$c: a flag of another op" "--heads" "$P" --heads 4
bad_lean "$c: 2^31 - 1 packed tokens of 64 channels, refused before it allocates" "host memory|device memory" \
    timeout 20 "$P" --check --seqlens 2147483647 --dim 64 --dstate 1
bad "$c: --seqlens with --batch 2" "--batch" "$P" --check --seqlens 5,7 --batch 2
bad "$c: --seqlens with --seqlen" "--seqlen" "$P" --check --seqlens 5,7 --seqlen 12
bad "$c: --seqlens 5,0" "out of range" "$P" --check --seqlens 5,0
bad "$c: --seqlens 5,,7" "empty item" "$P" --check --seqlens 5,,7
bad "$c: --intermediate, a flag of another op" "--intermediate" "$P" --check --intermediate
cp -r "$tmp/packed" "$tmp/cu_flat" && npy_i32 "$tmp/cu_flat/cu_seqlens.npy" "0 5 5 70 100"
bad "$c: --load cu_seqlens with an empty sequence" "cu_seqlens" "$P" 1 --load "$tmp/cu_flat"
cp -r "$tmp/packed" "$tmp/cu_start" && npy_i32 "$tmp/cu_start/cu_seqlens.npy" "1 5 6 70 100"
bad "$c: --load cu_seqlens not from 0" "cu_seqlens" "$P" 1 --load "$tmp/cu_start"
cp -r "$tmp/packed" "$tmp/cu_end" && npy_i32 "$tmp/cu_end/cu_seqlens.npy" "0 5 6 70 99"
bad "$c: --load cu_seqlens not ending at L" "cu_seqlens" "$P" 1 --load "$tmp/cu_end"
cp -r "$tmp/packed" "$tmp/cu_f4" && npy_empty "$tmp/cu_f4/cu_seqlens.npy" "0,"
bad "$c: --load cu_seqlens as float32" "cu_seqlens" "$P" 1 --load "$tmp/cu_f4"
cp -r "$tmp/packed" "$tmp/cu_ok" && npy_i32 "$tmp/cu_ok/cu_seqlens.npy" "0 5 6 70 100"
ok "$c: --load a cu_seqlens written by the test's own writer" "vs loaded y, last_state.*PASS" "$P" 1 --load "$tmp/cu_ok"
