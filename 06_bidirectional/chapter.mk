# 06 reuses 05's CPU SSD and its kernels: its *_twice_* versions run them on flipped copies.
LINKS_06_bidirectional := build/obj/05_ssd_mamba2/cpu.o build/obj/05_ssd_mamba2/kernels.o \
                          build/obj/05_ssd_mamba2/fused_mma.o

# make sanitize: 05's SSD shapes (05_ssd_mamba2/chapter.mk), in both forms.
SANITIZE_06_bidirectional = "06_bidirectional" "$(SANITIZE_SSD_SHAPES)" "$(SANITIZE_SSD_DSTATES)" \
                            "06_bidirectional" "$(SANITIZE_SSD_SHAPES) --hydra" "$(SANITIZE_SSD_DSTATES)"
