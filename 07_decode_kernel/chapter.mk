# 07 runs 03's scan_fused_tuned (Mamba-1) and 05's ssd_steps_fp32 (Mamba-2) on T tokens as its prefill-form versions.
LINKS_07_decode_kernel := build/obj/05_ssd_mamba2/kernels.o build/obj/03_fused_cuda/tiled.o

# 07's kernels go to the per-thread default stream, so its token loop can be captured in a CUDA graph.
build/obj/07_decode_kernel/%.o: NVFLAGS += --default-stream per-thread

# make sanitize: both forms, one token and five, N 7 (no 16-byte rows) and each form's S4 N;
# then a server's pool (shuffled slots, padding) with the state after every token.
SANITIZE_07_decode_kernel = \
    "07_decode_kernel" "--form m2 --batch 2 --tokens 1,5 --heads 6 --headdim 24 --groups 3" "7 128" \
    "07_decode_kernel" "--form m1 --batch 2 --tokens 1,5 --dim 40" "7 16" \
    "07_decode_kernel" "--form m2 --batch 5 --slots 9 --intermediate --tokens 1,5 --heads 6 --headdim 24 --groups 3" "7 128" \
    "07_decode_kernel" "--form m1 --batch 5 --slots 9 --intermediate --tokens 1,5 --dim 40" "7 16" \
    "07_decode_kernel" "--form m1 --batch 64 --tokens 1,2 --dim 2048" "16"

# make check-long: "CHAPTER" "NAME" "FLAGS" triples, each one --bench --sampled run
# (tests/check_long.sh): a million tokens, and a shape where one tensor holds more than
# 2^31 elements. make front: the front page's shapes of this chapter (tests/front.sh).
LONG_07_decode_kernel = \
    "07_decode_kernel" "m1 b1 T 2^20" "--form m1 --batch 1 --tokens 1048576" \
    "07_decode_kernel" "m2 b1 T 2^20" "--form m2 --batch 1 --tokens 1048576" \
    "07_decode_kernel" "m2 b8200 T 1 (the state > 2^31 elements)" "--form m2 --batch 8200 --tokens 1" \
    "07_decode_kernel" "m1 b65600 T 1 (the state > 2^31 elements)" "--form m1 --batch 65600 --tokens 1"
FRONT_07_decode_kernel = --form m2 --batch 1,4,8,16,32,64,128,256
# make check: extra runs ("NAME" "ARGS") and dump/load round trips ("KEY" "VERSION" "ARGS"
# "EXPECT" "DROP"), tests/run_checks.sh says how.
# (Version 9's bf16 state needs a GPU; --dump writes it as fp32 of its bf16 values.)
ROUNDTRIPS_07_decode_kernel = \
    "decode_pool" "1" "--form m2 --batch 4 --tokens 3 --slots 7 --intermediate" \
        "vs loaded y, state_out, intermediate_states.*PASS" "-" \
    "decode_m1" "1" "--form m1 --batch 2 --tokens 1 --dstate 5" "vs loaded y, state_out.*PASS" "-" \
    "decode_m2" "1" "--form m2 --batch 2 --tokens 1 --dstate 5" "vs loaded y, state_out.*PASS" "-" \
    "decode_bf16" "9" "--form m2 --batch 2 --tokens 3 --dstate 8" "vs loaded y, state_out.*PASS" "-"
