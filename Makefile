# mamba-kernels-from-scratch: every chapter builds into build/.
#   make            build everything           make check    all checks, summary line last
#   make bench      plots/data/*.csv (GPU)      make plots    figures + README tables
#   make run        every chapter as a reader   make sanitize compute-sanitizer on GPU checks
#   make asan       CPU parts under ASan/UBSan  make clean    remove build/
# CUDA_ARCH defaults to the present GPU's (e.g. sm_90), else sm_90.

CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc))
NVCC      ?= $(CUDA_HOME)/bin/nvcc
CC        ?= gcc
GPU_CC    := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d '. ')
CUDA_ARCH ?= $(if $(GPU_CC),sm_$(GPU_CC),sm_90)
COMMIT    ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo -dirty)

CFLAGS   := -MMD -MP -std=c11 -O2 -g -Wall -Wextra -Werror -Icommon -Ibuild -I$(CUDA_HOME)/include
NVFLAGS  := -MMD -MP -arch=$(CUDA_ARCH) -O3 -g -lineinfo -std=c++17 -Icommon -Werror all-warnings \
            -Xcompiler -Wall,-Wextra,-Werror
LDFLAGS  := -arch=$(CUDA_ARCH)
LDLIBS   := -lm

CHAPTERS := 00_ssm_basics 01_naive_scan 02_parallel_scan 03_fused_cuda 04_fp16_half2 05_ssd_mamba2 \
            06_bidirectional 07_decode_kernel
GPU_CHAPTERS := 01_naive_scan 02_parallel_scan 03_fused_cuda 04_fp16_half2 05_ssd_mamba2 06_bidirectional \
                07_decode_kernel

COMMON_C  := args check csv driver fixtures folder gpu half npy op_bidir op_decode op_scan op_ssd oracle rng
COMMON_CU := floors transpose
COMMON_OBJ := $(COMMON_C:%=build/obj/common/%.o) $(COMMON_CU:%=build/obj/common/%.o)

# What each program links: its own files, then the previous stage it checks against.
OBJS_test_oracle    := build/obj/common/test_oracle.o
OBJS_00_ssm_basics  := build/obj/00_ssm_basics/main.o build/obj/00_ssm_basics/cpu.o
OBJS_01_naive_scan  := build/obj/01_naive_scan/main.o build/obj/01_naive_scan/cpu.o \
                       build/obj/01_naive_scan/kernels.o
OBJS_02_parallel_scan := build/obj/02_parallel_scan/main.o build/obj/02_parallel_scan/cpu.o \
                       build/obj/02_parallel_scan/kernels.o build/obj/01_naive_scan/cpu.o \
                       build/obj/01_naive_scan/kernels.o
OBJS_03_fused_cuda  := build/obj/03_fused_cuda/main.o build/obj/03_fused_cuda/cpu.o \
                       build/obj/03_fused_cuda/kernels.o build/obj/02_parallel_scan/kernels.o
OBJS_04_fp16_half2  := build/obj/04_fp16_half2/main.o build/obj/04_fp16_half2/cpu.o \
                       build/obj/04_fp16_half2/kernels.o build/obj/04_fp16_half2/tiles16.o \
                       build/obj/03_fused_cuda/kernels.o
OBJS_05_ssd_mamba2  := build/obj/05_ssd_mamba2/main.o build/obj/05_ssd_mamba2/cpu.o \
                       build/obj/05_ssd_mamba2/kernels.o build/obj/05_ssd_mamba2/wgmma.o \
                       build/obj/03_fused_cuda/kernels.o
OBJS_06_bidirectional := build/obj/06_bidirectional/main.o build/obj/06_bidirectional/cpu.o \
                       build/obj/06_bidirectional/kernels.o build/obj/05_ssd_mamba2/cpu.o \
                       build/obj/05_ssd_mamba2/kernels.o build/obj/03_fused_cuda/kernels.o
OBJS_07_decode_kernel := build/obj/07_decode_kernel/main.o build/obj/07_decode_kernel/cpu.o \
                       build/obj/07_decode_kernel/lessons.o \
                       build/obj/07_decode_kernel/kernels.o build/obj/05_ssd_mamba2/kernels.o \
                       build/obj/03_fused_cuda/kernels.o

PROGRAMS := test_oracle $(CHAPTERS)
BINS := $(PROGRAMS:%=build/%)

.PHONY: all programs check bench plots run sanitize asan clean help FORCE
# Every .cu file is compiled, linked or not, so a kernel that does not build fails.
ALL_CU_OBJ := $(patsubst %.cu,build/obj/%.o,$(wildcard */*.cu))
# `make` builds in parallel, one job a core, unless the caller already gave -j.
NPROC := $(shell nproc 2>/dev/null || echo 2)
all:
	@$(MAKE) --no-print-directory $(if $(findstring j,$(filter-out --%,$(MAKEFLAGS))),,-j$(NPROC)) programs
programs: $(BINS) $(ALL_CU_OBJ)

help:
	@sed -n '2,6p' Makefile | sed 's/^# //'

# The commit goes into the CSV rows; rewritten only when it changes.
build/commit.h: FORCE
	@mkdir -p build
	@echo '#define GIT_COMMIT "$(COMMIT)"' > build/commit.h.tmp
	@cmp -s build/commit.h.tmp build/commit.h || mv build/commit.h.tmp build/commit.h
	@rm -f build/commit.h.tmp

build/obj/common/csv.o build/asan/obj/common/csv.o: build/commit.h

build/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

build/obj/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -c $< -o $@

# Kernels on wgmma need sm_90a code, which runs on compute capability 9.0 alone: where the
# target is sm_90 they are built for sm_90a (SSD_SM90A tells their launchers), elsewhere
# their launchers refuse.
comma := ,
build/obj/05_ssd_mamba2/wgmma.o: NVFLAGS := $(if $(filter sm_90 sm_90a,$(CUDA_ARCH)),$(filter-out \
    -arch=%,$(NVFLAGS)) -gencode=arch=compute_90a$(comma)code=sm_90a -DSSD_SM90A,$(NVFLAGS))

# 07's kernels go to the per-thread default stream, so its token loop can be captured in a CUDA graph.
build/obj/07_decode_kernel/%.o: NVFLAGS += --default-stream per-thread

# The ASan build recompiles the C files; CUDA objects are linked as they are.
asan_objs = $(foreach o,$(1),$(if $(filter %/kernels.o %/tiles16.o %/wgmma.o %/floors.o %/transpose.o,$(o)),$(o),$(o:build/obj/%=build/asan/obj/%)))

define link_rules
build/$(1): $$(OBJS_$(1)) $$(COMMON_OBJ)
	$$(NVCC) $$(LDFLAGS) $$^ -o $$@ $$(LDLIBS)
build/asan/$(1): $$(call asan_objs,$$(OBJS_$(1)) $$(COMMON_OBJ))
	$$(CC) $$(ASAN_FLAGS) $$^ -o $$@ -L$$(CUDA_HOME)/lib64 -lcudart_static -ldl -lpthread -lrt -lstdc++ -lm
endef
$(foreach p,$(PROGRAMS),$(eval $(call link_rules,$(p))))

# Every program's checks, then the bad-input cases; REQUIRE_GPU=1 counts a skip as a failure.
check: all
	@REQUIRE_GPU=$(REQUIRE_GPU) sh tests/run_checks.sh

# Benchmarks (GPU only): rows go to build/bench/ first, and replace plots/data/<chapter>.csv
# only when the run produced rows, so committed data is never overwritten by an empty run.
# BENCH_CHAPTERS picks chapters (default: all). With 05, 03's tuned scan also runs at
# 05's crossover shapes (d = h·p = 2048, N 16/64/128, L 4096, b 8, no z) into
# plots/data/05_crossover_03.csv: the Mamba-1 scan on the same problem, no layout change.
# A chapter's own tables written beside its CSV (build/bench/<chapter>_*.csv: 07's state against
# a KV cache and its 16-bit-state accuracy, computed, not timed) go to plots/data/ with it.
BENCH_CHAPTERS ?= $(GPU_CHAPTERS)
bench: all
	@mkdir -p build/bench plots/data
	@for c in $(BENCH_CHAPTERS); do \
	  rm -f build/bench/$$c.csv build/bench/$${c}_*.csv; \
	  COMMIT=$(COMMIT) build/$$c all --bench --csv build/bench/$$c.csv; rc=$$?; \
	  if [ $$rc -ne 0 ] && [ $$rc -ne 3 ]; then echo "bench: $$c failed (exit $$rc)"; exit 1; fi; \
	  if [ -s build/bench/$$c.csv ]; then \
	    for f in build/bench/$$c.csv build/bench/$${c}_*.csv; do [ -s "$$f" ] || continue; \
	      cp "$$f" plots/data/; echo "bench: wrote plots/data/$${f##*/}"; done; \
	  else echo "bench: $$c: no GPU rows (needs a CUDA device); plots/data/$$c.csv left as it was"; fi; \
	done
	@case " $(BENCH_CHAPTERS) " in *" 05_ssd_mamba2 "*) \
	  rm -f build/bench/05_crossover_03.csv; [ -s build/bench/05_ssd_mamba2.csv ] || exit 0; \
	  for n in 16 64 128; do \
	    COMMIT=$(COMMIT) build/03_fused_cuda 7 --bench --batch 8 --dim 2048 --dstate $$n --seqlen 4096 \
	      --no-z --csv build/bench/05_crossover_03.csv || exit 1; \
	  done; \
	  if [ -s build/bench/05_crossover_03.csv ]; then cp build/bench/05_crossover_03.csv plots/data/; \
	    echo "bench: wrote plots/data/05_crossover_03.csv"; fi ;; \
	esac

plots:
	@sh plots/draw.sh

run: all
	@for c in $(CHAPTERS); do echo; echo "=== $$c ==="; build/$$c; rc=$$?; \
	  if [ $$rc -ne 0 ] && [ $$rc -ne 3 ]; then exit $$rc; fi; done

# compute-sanitizer on every GPU version's check at small awkward shapes.
SANITIZE_SHAPES := --batch 2 --dim 8 --seqlen 1,37,1100 --groups 2 --h0
SANITIZE_DSTATES := 7 32
# SSD (05, 06 in both forms): p 64 with N 128 is the fused kernels' compiled-in tile, N 7 their generic path.
SANITIZE_SSD_SHAPES := --batch 2 --seqlen 1,37,300 --heads 4 --headdim 64 --groups 2 --chunk 64 --h0
SANITIZE_SSD_DSTATES := 7 128
# Decode: both forms, one token and five, N 7 (no 16-byte rows) and each form's S4 N.
SANITIZE_M2_SHAPES := --form m2 --batch 2 --tokens 1,5 --heads 6 --headdim 24 --groups 3
SANITIZE_M1_SHAPES := --form m1 --batch 2 --tokens 1,5 --dim 40
sanitize: all
	@sh tests/sanitize.sh "$(filter-out 05_ssd_mamba2 06_bidirectional 07_decode_kernel,$(GPU_CHAPTERS))" \
	  "$(SANITIZE_SHAPES)" "$(SANITIZE_DSTATES)" "05_ssd_mamba2 06_bidirectional" "$(SANITIZE_SSD_SHAPES)" \
	  "$(SANITIZE_SSD_DSTATES)" "06_bidirectional" "$(SANITIZE_SSD_SHAPES) --hydra" "$(SANITIZE_SSD_DSTATES)" \
	  "07_decode_kernel" "$(SANITIZE_M2_SHAPES)" "7 128" "07_decode_kernel" "$(SANITIZE_M1_SHAPES)" "7 16"

# The CPU parts under AddressSanitizer and UndefinedBehaviorSanitizer (no GPU used).
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
asan: $(PROGRAMS:%=build/asan/%)
	@ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  CUDA_VISIBLE_DEVICES= BIN=build/asan sh tests/run_checks.sh

build/asan/obj/%.o: %.c build/commit.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -c $< -o $@

# Header dependencies written by the compilers (-MMD).
-include $(shell find build -name '*.d' 2>/dev/null)

clean:
	rm -rf build
