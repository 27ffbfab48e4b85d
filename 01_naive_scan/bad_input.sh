# 01's bad inputs (tests/bad_input.sh runs them with P = build/01_naive_scan), on the
# round trip's folder $tmp/ok: b 2, d 6, N 5, L 9, groups 3.
bad "$c: --seqlen 0" "out of range" "$P" --seqlen 0
bad "$c: --seqlen ,64," "empty item" "$P" --check --seqlen ,64,
bad "$c: --dim 10 --groups 4" "groups" "$P" --check --dim 10 --groups 4
bad "$c: a flag of another op" "--heads" "$P" --heads 4
bad_lean "$c: host memory past the machine's, refused before it allocates" "host memory" \
    "$P" 2 --check --batch 100000 --dim 100000 --seqlen 100000 --dstate 1
bad_gpu "$c: --bench past the GPU's memory" "device memory" "$P" 3 --bench --batch 16 --dim 2048 --dstate 256 --seqlen 65536
# 275 GB of workspace for under 0.5 GB of inputs: the device's budget refuses it before the host allocates.
bad_lean_gpu "$c: --check past the GPU's memory, refused before the host allocates" "device memory" \
    "$P" 3 --check --batch 1 --dim 4096 --seqlen 2048 --dstate 4096
# A reference that overflows from finite inputs (A > 0) fails, whatever the version gives there.
cp -r "$tmp/ok" "$tmp/apos" && for i in $(seq 0 29); do npy_set_f32 "$tmp/apos/A.npy" "$i" 90; done  # A (6, 5)
"$P" 2 --load "$tmp/apos" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "reference itself is not finite" "$tmp/out"
count "input: $c: a reference that overflows from finite inputs fails" $?
cp -r "$tmp/ok" "$tmp/trunc" && head -c 200 "$tmp/ok/u.npy" >"$tmp/trunc/u.npy"
bad "$c: --load a truncated .npy" "u.npy" "$P" 2 --load "$tmp/trunc"
cp -r "$tmp/ok" "$tmp/f8" && LC_ALL=C sed -i '1s/<f4/<f8/' "$tmp/f8/u.npy"
bad "$c: --load a float64 .npy" "u.npy" "$P" 2 --load "$tmp/f8"
cp -r "$tmp/ok" "$tmp/shape" && cp "$tmp/ok/A.npy" "$tmp/shape/h0.npy"
bad "$c: --load h0.npy of A's shape" "h0.npy has shape" "$P" 2 --load "$tmp/shape"
cp -r "$tmp/ok" "$tmp/l0" && npy_empty "$tmp/l0/u.npy" "2, 6, 0"
bad "$c: --load u.npy with L 0" "at least 1" "$P" 2 --load "$tmp/l0"
cp -r "$tmp/ok" "$tmp/fifo" && rm "$tmp/fifo/u.npy" && mkfifo "$tmp/fifo/u.npy"
bad "$c: --load a FIFO named u.npy" "u.npy" timeout 20 "$P" 2 --load "$tmp/fifo"
# A 1 GiB D.npy (sparse) where (6,) is expected: refused from its header, before any data is read.
cp -r "$tmp/ok" "$tmp/bigD" && npy_empty "$tmp/bigD/D.npy" "268435456," && truncate -s $((128 + 1073741824)) "$tmp/bigD/D.npy"
bad_lean "$c: --load a 1 GiB D.npy where (6) is expected" "expected \(6\)" timeout 5 "$P" 2 --load "$tmp/bigD"
cp -r "$tmp/ok" "$tmp/ainf" && npy_set_f32 "$tmp/ainf/A.npy" 7 -inf
bad "$c: --load -inf in A" "A.npy element 7 is -inf" "$P" 2 --load "$tmp/ainf"
cp -r "$tmp/ok" "$tmp/uodd" && npy_empty "$tmp/uodd/u.npy" "2, 6, 8" && truncate -s $((128 + 2 * 6 * 8 * 4)) "$tmp/uodd/u.npy"
bad "$c: --load u.npy one step short: the file the sizes came from named" "read from u.npy" "$P" 2 --load "$tmp/uodd"
bad "$c: --dump where no folder can be made (/proc), before the checks" "cannot create" "$P" 2 --check --dump /proc/dump
# A program finds the fixtures from any folder it is run in.
abs_bin=$(cd "$BIN" && pwd)
(cd "$tmp" && "$abs_bin/$c" 2 --check >"$tmp/out" 2>&1) && grep -q "fixture mamba1: y .*PASS" "$tmp/out"
count "$c run from another folder finds the fixtures" $?
