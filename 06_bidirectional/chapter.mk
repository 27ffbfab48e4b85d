# 06 reuses 05's CPU SSD and its kernels: its *_twice_* versions run them on flipped copies.
LINKS_06_bidirectional := build/obj/05_ssd_mamba2/cpu.o build/obj/05_ssd_mamba2/kernels.o \
                          build/obj/05_ssd_mamba2/fused_mma.o
# Versions 7-10 on wgmma: sm_90a code, as 05's wgmma.o (05_ssd_mamba2/chapter.mk).
build/obj/06_bidirectional/wgmma.o build/obj/06_bidirectional/wgmma_ws.o: NVFLAGS := $(if $(filter sm_90 sm_90a,$(CUDA_ARCH)),$(filter-out \
    -arch=%,$(NVFLAGS)) -gencode=arch=compute_90a$(comma)code=sm_90a -DSSD_SM90A,$(NVFLAGS))

# make sanitize: 05's SSD shapes (05_ssd_mamba2/chapter.mk), in both forms, and its walks'
# set (walks of one segment each, for versions 9-10) in the default form.
SANITIZE_06_bidirectional = "06_bidirectional" "$(SANITIZE_SSD_SHAPES)" "$(SANITIZE_SSD_DSTATES)" \
                            "06_bidirectional" "$(SANITIZE_SSD_SHAPES) --hydra" "$(SANITIZE_SSD_DSTATES)" \
                            "06_bidirectional" "$(SANITIZE_SSD_WALKS)" "128"

# make check-long: "CHAPTER" "NAME" "FLAGS" triples, each one --bench --sampled run
# (tests/check_long.sh): a million tokens, and a shape where one tensor holds more than
# 2^31 elements. make front: the front page's shapes of this chapter (tests/front.sh).
LONG_06_bidirectional = \
    "06_bidirectional" "b1 L 2^20" "--batch 1 --seqlen 1048576" \
    "06_bidirectional" "b2 L 2^20 (> 2^31 elements)" "--batch 2 --seqlen 1048576" \
    "06_bidirectional" "b1 L 2^20 --hydra" "--batch 1 --seqlen 1048576 --hydra" \
    "06_bidirectional" "b2 L 2^20 --hydra (> 2^31 elements)" "--batch 2 --seqlen 1048576 --hydra"
FRONT_06_bidirectional = --batch 8 --seqlen 512,2048,8192
# make check: extra runs ("NAME" "ARGS") and dump/load round trips ("KEY" "VERSION" "ARGS"
# "EXPECT" "DROP"), tests/run_checks.sh says how.
CHECKS_06_bidirectional = "N 127, p 50: tiles padded to 128 and 64" "--check --batch 2 --seqlen 37,300 --heads 4 --groups 2 --headdim 50 --dstate 127 --chunk 64 --h0"
ROUNDTRIPS_06_bidirectional = \
    "bidir" "2" "--batch 2 --seqlen 37 --heads 4 --headdim 3 --groups 2 --dstate 5 --chunk 16 --h0" "vs loaded y.*PASS" "-" \
    "bidir_hydra" "2" "--hydra --batch 2 --seqlen 37 --heads 4 --headdim 3 --groups 2 --dstate 5 --chunk 16 --h0" \
        "vs loaded y.*PASS" "-"
