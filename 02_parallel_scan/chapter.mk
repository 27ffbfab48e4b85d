# 02 checks its GPU versions against 01's.
LINKS_02_parallel_scan := build/obj/01_naive_scan/cpu.o build/obj/01_naive_scan/kernels.o
