# 04 checks its GPU versions against 03's.
LINKS_04_fp16_half2 := build/obj/03_fused_cuda/tiled.o
# make sanitize: the generic shapes, then one packed row (the versions that take none SKIP it).
SANITIZE_04_fp16_half2 = "04_fp16_half2" "$(SANITIZE_SHAPES)" "$(SANITIZE_DSTATES)" "04_fp16_half2" "$(SANITIZE_PACKED_SHAPES)" "$(SANITIZE_DSTATES)"

# make check-long: "CHAPTER" "NAME" "FLAGS" triples, each one --bench --sampled run
# (tests/check_long.sh): a million tokens, and a shape where one tensor holds more than
# 2^31 elements. make front: the front page's shapes of this chapter (tests/front.sh).
LONG_04_fp16_half2 = \
    "04_fp16_half2" "b1 L 2^20" "--batch 1 --dim 2048 --dstate 16 --seqlen 1048576" \
    "04_fp16_half2" "b8 L 131080 (> 2^31 elements: u, delta, z, y) (L % 8 == 0 for versions 14-15)" "--batch 8 --dim 2048 --dstate 16 --seqlen 131080"
FRONT_04_fp16_half2 = --batch 1,2,4,8,16 --seqlen 512
# make check: extra runs ("NAME" "ARGS") and dump/load round trips ("NAME" "VERSION" "ARGS"
# "EXPECT" "DROP"), tests/run_checks.sh says how.
# Versions 14-15 copy by running pointers only where L % 8 == 0, which of the driver's check
# shapes only a full one has: rows past a group's end, padded states and a last tile past L.
# Version 15 plans apart from 14 only where the rows alone fill the GPU: 32769 rows take more
# lanes on an H100 or H200, with the same gaps.
CHECKS_04_fp16_half2 = \
    "14, L % 8 == 0 with gaps" "14 --check --batch 2 --dim 6 --dstate 5 --seqlen 40 --groups 3" \
    "15, 32769 rows" "15 --check --batch 1 --dim 32769 --groups 3 --dstate 29 --seqlen 40" \
    "1000 packed sequences" "--check --seqlens SEQS1000 --dim 2 --dstate 3 --h0"
