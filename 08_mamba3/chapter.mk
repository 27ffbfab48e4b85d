# Versions 7-12 (the step) go to the per-thread default stream, so their token loops can be captured in CUDA graphs.
build/obj/08_mamba3/step.o build/obj/08_mamba3/step_bulk.o: NVFLAGS += --default-stream per-thread
# make sanitize: awkward shapes (L 1, 37, 300; qk heads shared; N 8, 16 and 40, whose 20 pairs do
# not divide a block of 128 threads; S 2), the four states in, then packed sequences, then a
# pool of state slots stepped (N 16 and 128: both of the step's row loops), then p 50 with N 127
# and 128 (tiles padded to 64 and 128; the angles' rows by 16-byte copies, S 12).
SANITIZE_08_mamba3 = \
    "08_mamba3" "--batch 2 --seqlen 1,37,300 --heads 4 --groups 2 --headdim 8 --angles 2 --chunk 16 --h0" "8 16 40" \
    "08_mamba3" "--seqlens 5,1,40,17 --heads 2 --headdim 4 --angles 2 --chunk 16 --h0" "8" \
    "08_mamba3" "--batch 5 --seqlen 1 --slots 8 --heads 4 --headdim 20 --angles 8 --h0" "16 128" \
    "08_mamba3" "--batch 2 --seqlen 37,130 --heads 4 --groups 2 --headdim 50 --angles 12 --chunk 64 --h0" "127 128"
# make check-long: a million tokens (a few heads: the oracle walks every sampled row).
LONG_08_mamba3 = "08_mamba3" "b1 L 2^20" "--batch 1 --seqlen 1048576 --heads 4 --headdim 16 --dstate 32 --angles 8"
# make check: extra runs ("NAME" "ARGS") and dump/load round trips ("KEY" "VERSION" "ARGS"
# "EXPECT" "DROP"), tests/run_checks.sh says how.
CHECKS_08_mamba3 = \
    "1000 packed sequences" "--check --seqlens SEQS1000 --heads 2 --headdim 4 --dstate 8 --angles 2 --chunk 16 --h0" \
    "S6's head: N 128, p 64, tails" "--check --batch 2 --seqlen 1,37,300 --heads 4 --groups 2 --headdim 64 --dstate 128 --angles 32 --h0" \
    "the step at N 128, p 20" "--check --batch 3 --seqlen 1 --heads 4 --headdim 20 --dstate 128 --angles 16 --h0 --no-z" \
    "a pool's step at N 128" "--check --batch 6 --seqlen 1 --slots 9 --heads 4 --headdim 64 --dstate 128 --angles 32 --h0" \
    "N 127, p 50: tiles padded to 128 and 64" "--check --batch 2 --seqlen 37,300 --heads 4 --groups 2 --headdim 50 --dstate 127 --angles 12 --chunk 64 --h0"
ROUNDTRIPS_08_mamba3 = \
    "mamba3" "2" "--batch 2 --seqlen 37 --heads 4 --groups 2 --headdim 4 --dstate 8 --angles 2 --chunk 16 --h0" \
        "vs loaded out, final_angle_state, final_ssm_state, final_k_state, final_v_state.*PASS" "-" \
    "mamba3_packed" "1" "--seqlens 5,1,40,17 --heads 2 --headdim 4 --dstate 8 --angles 2 --chunk 16 --h0" \
        "vs loaded out, .*PASS" "-" \
    "mamba3_pool" "2" "--batch 4 --seqlen 3 --slots 6 --heads 2 --headdim 4 --dstate 8 --angles 2 --chunk 16 --h0" \
        "vs loaded out, final_angle_state, final_ssm_state, final_k_state, final_v_state.*PASS" "-"
