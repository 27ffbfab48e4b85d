# 03 checks its GPU versions against 02's.
LINKS_03_fused_cuda := build/obj/02_parallel_scan/kernels.o
# make sanitize: the generic shapes, then one packed row (the versions that take none SKIP it).
SANITIZE_03_fused_cuda = "03_fused_cuda" "$(SANITIZE_SHAPES)" "$(SANITIZE_DSTATES)" "03_fused_cuda" "$(SANITIZE_PACKED_SHAPES)" "$(SANITIZE_DSTATES)"

# make check-long: "CHAPTER" "NAME" "FLAGS" triples, each one --bench --sampled run
# (tests/check_long.sh): a million tokens, and a shape where one tensor holds more than
# 2^31 elements. make front: the front page's shapes of this chapter (tests/front.sh).
LONG_03_fused_cuda = \
    "03_fused_cuda" "b1 L 2^20" "--batch 1 --dim 2048 --dstate 16 --seqlen 1048576" \
    "03_fused_cuda" "b8 L 131080 (> 2^31 elements: u, delta, z, y)" "--batch 8 --dim 2048 --dstate 16 --seqlen 131080"
FRONT_03_fused_cuda = --batch 1,2,4,8,16 --seqlen 512
# make check: extra runs ("NAME" "ARGS") and dump/load round trips ("KEY" "VERSION" "ARGS"
# "EXPECT" "DROP"), tests/run_checks.sh says how.
CHECKS_03_fused_cuda = "1000 packed sequences" "--check --seqlens SEQS1000 --dim 2 --dstate 3 --h0"
ROUNDTRIPS_03_fused_cuda = "packed" "1" \
    "--seqlens 5,1,64,30 --dim 3 --dstate 4 --groups 3 --h0" "vs loaded y, last_state.*PASS" "-"
