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
