# 08's bad inputs (tests/bad_input.sh runs them with P = build/08_mamba3), on the
# round trips' folders $tmp/mamba3 and $tmp/mamba3_pool.
bad "$c: --angles past N / 2" "angles" "$P" --check --dstate 8 --angles 5
bad "$c: --heads 6 --groups 4" "groups" "$P" --check --heads 6 --groups 4
bad_lean "$c: 2^31 - 1 packed tokens of 64 heads, refused before it allocates" "host memory|device memory" \
    timeout 20 "$P" --check --seqlens 2147483647 --heads 64 --headdim 1 --dstate 2 --groups 1 --angles 1
cp -r "$tmp/mamba3" "$tmp/m3_adt" && npy_set_f32 "$tmp/m3_adt/ADT.npy" 3 -inf
bad "$c: --load -inf in ADT" "ADT.npy element 3 is -inf" "$P" 1 --load "$tmp/m3_adt"
bad "$c: --slots below --batch" "--slots 3" "$P" --check --batch 5 --slots 3 --h0
bad "$c: --slots without the states" "--slots 8" "$P" --check --batch 5 --slots 8
bad "$c: --slots with --seqlens" "not with --seqlens" "$P" --check --seqlens 5,6 --slots 4 --h0
cp -r "$tmp/mamba3_pool" "$tmp/m3_pool_nostate" && rm "$tmp/m3_pool_nostate"/*_state.npy
bad "$c: --load slots without their states" "state_batch_indices names slots" "$P" 1 --load "$tmp/m3_pool_nostate"
