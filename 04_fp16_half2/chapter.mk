# 04 checks its GPU versions against 03's.
LINKS_04_fp16_half2 := build/obj/03_fused_cuda/tiled.o
