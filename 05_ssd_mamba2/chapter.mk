# 05 runs 03's tuned scan on the SSD through the Mamba-2 -> Mamba-1 mapping (version 4).
LINKS_05_ssd_mamba2 := build/obj/03_fused_cuda/tiled.o

# Kernels on wgmma need sm_90a code, which runs on compute capability 9.0 alone: where the
# target is sm_90 they are built for sm_90a (SSD_SM90A tells their launchers), elsewhere
# their launchers refuse.
comma := ,
build/obj/05_ssd_mamba2/wgmma.o build/obj/05_ssd_mamba2/wgmma_split.o build/obj/05_ssd_mamba2/wgmma_ws_varlen.o: NVFLAGS := $(if $(filter sm_90 sm_90a,$(CUDA_ARCH)),$(filter-out \
    -arch=%,$(NVFLAGS)) -gencode=arch=compute_90a$(comma)code=sm_90a -DSSD_SM90A,$(NVFLAGS))

# make sanitize: p 64 with N 128 is the fused kernels' compiled-in tile, N 7 their generic path.
# The second set has enough (b, h) walks (256) that the walking versions cut none into
# segments, so each walk reuses its stages of tiles (the small set's segments are one chunk).
SANITIZE_SSD_SHAPES = --batch 2 --seqlen 1,37,300 --heads 4 --headdim 64 --groups 2 --chunk 64 --h0
SANITIZE_SSD_DSTATES = 7 128
SANITIZE_SSD_WALKS = --batch 8 --seqlen 200 --heads 32 --headdim 64 --chunk 64 --h0
# The packed set: at h 4 the row's 11 chunks of 64 are cut into segments of one chunk (versions 22-23).
SANITIZE_SSD_PACKED = --seqlens 300,1,37,129,64 --heads 4 --headdim 64 --groups 2 --chunk 64 --h0
SANITIZE_05_ssd_mamba2 = "05_ssd_mamba2" "$(SANITIZE_SSD_SHAPES)" "$(SANITIZE_SSD_DSTATES)" \
    "05_ssd_mamba2" "$(SANITIZE_SSD_WALKS)" "128" "05_ssd_mamba2" "$(SANITIZE_SSD_PACKED)" "128 16"

# make check-long: "CHAPTER" "NAME" "FLAGS" triples, each one --bench --sampled run
# (tests/check_long.sh): a million tokens, and a shape where one tensor holds more than
# 2^31 elements. make front: the front page's shapes of this chapter (tests/front.sh).
LONG_05_ssd_mamba2 = \
    "05_ssd_mamba2" "b1 L 2^20" "--batch 1 --seqlen 1048576" \
    "05_ssd_mamba2" "b2 L 2^20 (> 2^31 elements: x, y)" "--batch 2 --seqlen 1048576" \
    "05_ssd_mamba2" "2^20 tokens packed in three sequences" "--seqlens 700001,300000,48575 --h0"
FRONT_05_ssd_mamba2 = --batch 8 --seqlen 512,2048,8192
# make check: extra runs ("NAME" "ARGS") and dump/load round trips ("KEY" "VERSION" "ARGS"
# "EXPECT" "DROP"), tests/run_checks.sh says how.
# (05's packed runs at p 8, N 16 and chunk 64, the smallest its walk takes.)
CHECKS_05_ssd_mamba2 = "1000 packed sequences" "--check --seqlens SEQS1000 --heads 2 --headdim 8 --dstate 16 --chunk 64 --h0" \
    "packed, long sequences cut into segments (versions 22-23), chunk states every 256 steps" \
        "--check --seqlens 5000,64,1,200,129,4097 --heads 4 --headdim 64 --dstate 128 --chunk 256 --h0" \
    "N 127, p 50: tiles padded to 128 and 64" "--check --batch 2 --seqlen 37,300 --heads 4 --groups 2 --headdim 50 --dstate 127 --chunk 64 --h0"
ROUNDTRIPS_05_ssd_mamba2 = \
    "ssd" "3" "--batch 2 --seqlen 37 --heads 4 --headdim 3 --groups 2 --dstate 5 --chunk 16 --h0" \
        "vs loaded y, final_state.*PASS" "-" \
    "ssd_packed" "3" "--seqlens 5,1,40,30 --heads 4 --headdim 3 --groups 2 --dstate 5 --chunk 16 --h0" \
        "vs loaded y, final_state, chunk_states.*PASS" "-" \
    "ssd_packed_nochunks" "3" "--seqlens 5,1,40,30 --heads 4 --headdim 3 --groups 2 --dstate 5 --chunk 16 --h0" \
        "vs loaded y, final_state .*PASS" "chunk_states.npy"
