# make sanitize: awkward shapes (L 1, 37, 300; qk heads shared; N 8 and 16 with S = N/4), the
# four states in, then packed sequences.
SANITIZE_08_mamba3 = \
    "08_mamba3" "--batch 2 --seqlen 1,37,300 --heads 4 --groups 2 --headdim 8 --angles 2 --chunk 16 --h0" "8 16" \
    "08_mamba3" "--seqlens 5,1,40,17 --heads 2 --headdim 4 --angles 2 --chunk 16 --h0" "8"
# make check-long: a million tokens (a few heads: the oracle walks every sampled row).
LONG_08_mamba3 = "08_mamba3" "b1 L 2^20" "--batch 1 --seqlen 1048576 --heads 4 --headdim 16 --dstate 32 --angles 8"
