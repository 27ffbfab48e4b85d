# mamba-kernels-from-scratch: every chapter builds into build/.
#   make            build everything           make check    all checks, summary line last
#   make check-long every GPU version at 2^20 tokens and past 2^31 elements (GPU, not in CI)
#   make bench      plots/data/*.csv (GPU)      make plots    figures + README tables
#   make front      the front page's own run: plots/data/front.csv (GPU, minutes)
#   make probe      the device's copy, exp2 and wgmma rates: plots/data/probe_<gpu>.csv (GPU)
#   make official   the official kernels timed: plots/data/official_<gpu>_<commit>.csv (GPU + mamba_ssm)
#   make run        every chapter as a reader   make sanitize compute-sanitizer on GPU checks
#   make asan       CPU parts under ASan/UBSan  make clean    remove build/
# CUDA_ARCH defaults to the present GPU's (e.g. sm_90), else sm_90.

CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc))
NVCC      ?= $(CUDA_HOME)/bin/nvcc
CC        ?= gcc
GPU_CC    := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d '. ')
CUDA_ARCH ?= $(if $(GPU_CC),sm_$(GPU_CC),sm_90)
COMMIT    ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo -dirty)

# The tree: chapters (NN_name/) over operations (ops/<op>/: descriptor, oracle,
# fixtures) over the harness (common/, its shared device headers in common/cuda/).
# Every folder is found by pattern: a new chapter or operation needs no line here.
CHAPTERS := $(patsubst %/,%,$(sort $(wildcard [0-9][0-9]_*/)))
GPU_CHAPTERS := $(patsubst %/,%,$(dir $(wildcard [0-9][0-9]_*/kernels.cu)))
OPS      := $(patsubst %/,%,$(sort $(wildcard ops/*/)))
INCLUDES := -Icommon -Icommon/cuda $(OPS:%=-I%)

# OpenMP where the C compiler has it: the benchmarks' oracle checks their sampled rows in
# parallel (common/bench.c); without it they run one after another, with the same results.
OPENMP   := $(shell printf 'int main(void){return 0;}' | $(CC) -fopenmp -x c - -o /dev/null 2>/dev/null && echo -fopenmp)
CFLAGS   := -MMD -MP -std=c11 -O2 -g -Wall -Wextra -Werror $(OPENMP) $(INCLUDES) -Ibuild -I$(CUDA_HOME)/include
NVFLAGS  := -MMD -MP -arch=$(CUDA_ARCH) -O3 -g -lineinfo -std=c++17 $(INCLUDES) -Werror all-warnings \
            -Xcompiler -Wall,-Wextra,-Werror
LDFLAGS  := -arch=$(CUDA_ARCH) $(if $(OPENMP),-Xcompiler -fopenmp)
LDLIBS   := -lm

# What every program links: the harness and every operation.
COMMON_OBJ := $(patsubst %.c,build/obj/%.o,$(wildcard common/*.c $(OPS:%=%/*.c))) \
              $(patsubst %.cu,build/obj/%.o,$(wildcard common/*.cu common/cuda/*.cu))

# What a chapter links: its own files, then what its <chapter>/chapter.mk names
# of earlier chapters (the previous stage it checks against): LINKS_<chapter>.
-include $(CHAPTERS:%=%/chapter.mk)
OBJS_test_oracle := build/obj/tests/test_oracle.o
$(foreach c,$(CHAPTERS),$(eval OBJS_$(c) := $(patsubst %,build/obj/%.o,$(basename \
    $(wildcard $(c)/*.c $(c)/*.cu))) $(LINKS_$(c))))

PROGRAMS := test_oracle $(CHAPTERS)
BINS := $(PROGRAMS:%=build/%)

.PHONY: all programs check check-long bench front plots run sanitize asan clean help FORCE
# Every .cu file is compiled, linked or not, so a kernel that does not build fails.
ALL_CU_OBJ := $(patsubst %.cu,build/obj/%.o,$(wildcard */*.cu common/cuda/*.cu))
# `make` builds in parallel, one job a core, unless the caller already gave -j.
NPROC := $(shell nproc 2>/dev/null || echo 2)
all:
	@$(MAKE) --no-print-directory $(if $(findstring j,$(filter-out --%,$(MAKEFLAGS))),,-j$(NPROC)) programs
programs: $(BINS) $(ALL_CU_OBJ)

help:
	@sed -n '2,7p' Makefile | sed 's/^# //'

# The commit goes into the CSV rows; rewritten only when it changes (a temporary file a
# shell, so that makes run side by side do not race).
build/commit.h: FORCE
	@mkdir -p build
	@echo '#define GIT_COMMIT "$(COMMIT)"' > build/commit.h.$$$$ && \
	    { cmp -s build/commit.h.$$$$ build/commit.h || mv build/commit.h.$$$$ build/commit.h; }; rm -f build/commit.h.$$$$

build/obj/common/csv.o build/asan/obj/common/csv.o: build/commit.h

build/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

build/obj/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -c $< -o $@

# The ASan build recompiles the C files; CUDA objects are linked as they are.
asan_objs = $(foreach o,$(1),$(if $(filter $(ALL_CU_OBJ),$(o)),$(o),$(o:build/obj/%=build/asan/obj/%)))

define link_rules
build/$(1): $$(OBJS_$(1)) $$(COMMON_OBJ)
	$$(NVCC) $$(LDFLAGS) $$^ -o $$@ $$(LDLIBS)
build/asan/$(1): $$(call asan_objs,$$(OBJS_$(1)) $$(COMMON_OBJ))
	$$(CC) $$(ASAN_FLAGS) $$(OPENMP) $$^ -o $$@ -L$$(CUDA_HOME)/lib64 -lcudart_static -ldl -lpthread -lrt -lstdc++ -lm
endef
$(foreach p,$(PROGRAMS),$(eval $(call link_rules,$(p))))

# Every program's checks, then the bad-input cases; REQUIRE_GPU=1 counts a skip as a failure.
# Each chapter's extra runs and round trips (CHECKS_, ROUNDTRIPS_<chapter> in its chapter.mk).
CHECK_ARGS = $(foreach c,$(CHAPTERS),$(if $(CHECKS_$(c)),--runs $(c) $(CHECKS_$(c))) \
    $(if $(ROUNDTRIPS_$(c)),--roundtrips $(c) $(ROUNDTRIPS_$(c))))
check: all
	@REQUIRE_GPU=$(REQUIRE_GPU) sh tests/run_checks.sh $(CHECK_ARGS)

# Every GPU version at a million tokens and past 2^31 elements in one tensor (GPU only,
# minutes a chapter; not in CI): the runs each chapter's chapter.mk names (LONG_<chapter>).
# LONG_CHAPTERS picks chapters.
LONG_CHAPTERS ?= $(CHAPTERS)
check-long: all
	@sh tests/check_long.sh $(foreach c,$(LONG_CHAPTERS),$(LONG_$(c)))

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

# The front page's own run (GPU only, minutes): every chapter at only the shapes README's
# headline table and plots/summary_*.png, roofline.png draw, into plots/data/front.csv
# (replaced only when every chapter ran), and where tests/official_bench.py can run the
# official kernels in the same call; `make plots` draws the front page from that run alone
# (tests/front.sh). Each chapter's shapes: FRONT_<chapter> in its chapter.mk.
front: all
	@COMMIT=$(COMMIT) sh tests/front.sh $(foreach c,$(CHAPTERS),$(if $(FRONT_$(c)),"$(c)" "$(FRONT_$(c))"))

# The official kernels at the benchmark sets (GPU, PyTorch, Triton and mamba_ssm installed,
# or MAMBA_SRC=<its source tree>): plots/data/official_<gpu>_<commit>.csv. Without them the
# script says what to install. OFFICIAL_OPS=, DTYPES=, BATCHES=, REPS= restrict it.
.PHONY: official
official:
	@COMMIT=$(COMMIT) python3 tests/official_bench.py; rc=$$?; \
	  if [ $$rc -eq 2 ]; then echo "official: nothing timed (what to install is above); plots/data left as it was"; \
	  elif [ $$rc -ne 0 ]; then exit $$rc; fi

# ---- the device's rates: build/probe and `make probe` (GPU only, seconds) ----
# build/probe (tests/probe.c) appends one row to plots/data/probe_<gpu>.csv: the copy,
# exp2, mma.sync and dense wgmma rates every benchmark run probes (common/floors.cu,
# common/cuda/wgmma_probe.cu), the roofs plots/roofline.py draws. wgmma needs sm_90a code:
# where the target is sm_90 the probe kernel is built for sm_90a (WGMMA_PROBE_SM90A tells
# its launcher), elsewhere its launcher reports 0 and the floors keep mma.sync's rate.
WGMMA_PROBE_FLAGS := -gencode=arch=compute_90a,code=sm_90a -DWGMMA_PROBE_SM90A
build/obj/common/cuda/wgmma_probe.o: NVFLAGS := $(if $(filter sm_90 sm_90a,$(CUDA_ARCH)),$(filter-out \
    -arch=%,$(NVFLAGS)) $(WGMMA_PROBE_FLAGS),$(NVFLAGS))
build/probe: build/obj/tests/probe.o $(COMMON_OBJ)
	$(NVCC) $(LDFLAGS) $^ -o $@ $(LDLIBS)
programs: build/probe
.PHONY: probe
probe: build/probe
	@mkdir -p plots/data
	@COMMIT=$(COMMIT) build/probe --dir plots/data; rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 3 ]
# ---- end of the probe's block ----

plots:
	@sh plots/draw.sh

run: all
	@for c in $(CHAPTERS); do echo "=== $$c ==="; build/$$c; rc=$$?; \
	  if [ $$rc -ne 0 ] && [ $$rc -ne 3 ]; then exit $$rc; fi; done

# compute-sanitizer on every GPU version's check at small awkward shapes. A chapter's
# SANITIZE_<chapter> (in its chapter.mk) lists its runs as "CHAPTER" "SHAPE FLAGS" "N..."
# triples; without one, the Mamba-1 shapes below, at a generic N and the N = 32 of
# specialized versions.
SANITIZE_SHAPES := --batch 2 --dim 8 --seqlen 1,37,1100 --groups 2 --h0
SANITIZE_DSTATES := 7 32
# the Mamba-1 versions that take packed rows (03, 04): one packed row, each sequence from its h0
SANITIZE_PACKED_SHAPES := --seqlens 1,37,300,129,1000,64 --dim 8 --groups 2 --h0
# SANITIZE_CHAPTERS=... picks chapters, SANITIZE_VERSIONS=... versions; SANITIZE_JOBS=J runs
# J checks at once on the one GPU.
SANITIZE_CHAPTERS ?= $(GPU_CHAPTERS)
SANITIZE_JOBS ?= 1
sanitize: all
	@SANITIZE_JOBS=$(SANITIZE_JOBS) SANITIZE_VERSIONS="$(SANITIZE_VERSIONS)" sh tests/sanitize.sh $(foreach c,$(SANITIZE_CHAPTERS),$(if $(SANITIZE_$(c)),$(SANITIZE_$(c)),\
	  "$(c)" "$(SANITIZE_SHAPES)" "$(SANITIZE_DSTATES)"))

# The CPU parts under AddressSanitizer and UndefinedBehaviorSanitizer (no GPU used).
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
asan: $(PROGRAMS:%=build/asan/%)
	@ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  CUDA_VISIBLE_DEVICES= BIN=build/asan sh tests/run_checks.sh $(CHECK_ARGS)

build/asan/obj/%.o: %.c build/commit.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -c $< -o $@

# Header dependencies written by the compilers (-MMD).
-include $(shell find build -name '*.d' 2>/dev/null)

clean:
	rm -rf build
