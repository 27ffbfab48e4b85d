# 02 checks its GPU versions against 01's.
LINKS_02_parallel_scan := build/obj/01_naive_scan/cpu.o build/obj/01_naive_scan/kernels.o

# make front: the front page's shapes of this chapter (tests/front.sh): S1, batch 1-16.
FRONT_02_parallel_scan = --batch 1,2,4,8,16 --seqlen 512
