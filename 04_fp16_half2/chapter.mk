# 04 checks its GPU versions against 03's.
LINKS_04_fp16_half2 := build/obj/03_fused_cuda/tiled.o
# make sanitize: the generic shapes, then one packed row (the versions that take none SKIP it).
SANITIZE_04_fp16_half2 = "04_fp16_half2" "$(SANITIZE_SHAPES)" "$(SANITIZE_DSTATES)" "04_fp16_half2" "$(SANITIZE_PACKED_SHAPES)" "$(SANITIZE_DSTATES)"
