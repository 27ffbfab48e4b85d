# 03 checks its GPU versions against 02's.
LINKS_03_fused_cuda := build/obj/02_parallel_scan/kernels.o
# make sanitize: the generic shapes, then one packed row (the versions that take none SKIP it).
SANITIZE_03_fused_cuda = "03_fused_cuda" "$(SANITIZE_SHAPES)" "$(SANITIZE_DSTATES)" "03_fused_cuda" "$(SANITIZE_PACKED_SHAPES)" "$(SANITIZE_DSTATES)"
