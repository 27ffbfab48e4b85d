# 03 checks its GPU versions against 02's.
LINKS_03_fused_cuda := build/obj/02_parallel_scan/kernels.o
