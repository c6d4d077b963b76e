# gputap build.  make [O=dir] [DEBUG=1] [SAN=1] [TSAN=1]; make check; make lint; make fuzz
#
# Sources are found by folder, so adding a file needs no edit here:
#   src/core/*.c      compiled into both the CLI and libgputap.so (which links libz.so.1)
#   BOTH_SRC          files of other folders compiled into both, too: in gpu/, where libcuda
#                     and CUPTI are found (probe.c) and CUPTI's profiler API (cuprof.c); in
#                     trace/, the formats the tap writes and the CLI reads: the binary trace,
#                     its blocks and the launch-hold words it carries, the alnair interposer's logs;
#                     in metrics/, range metrics without CUPTI (rmagg.c) and the config-image cache
#                     (rmcache.c)
#   src/tap/*.c       libgputap.so only; files listed in TAP_PURE have no
#                     constructors or CUDA globals and are unit-tested too
#   src/{analyze,run,export,report,liblog,libperf,gpu,trace,metrics,cli}/*.c   the gputap CLI
#   tests/unit/*.c    one unit-test binary; tests/fuzz/fuzz_<name>.c one fuzz target each

O ?= build
CC ?= gcc
CUDA_HOME ?= $(firstword $(wildcard /usr/local/cuda /usr/local/cuda-13.0 /usr/local/cuda-12))
PYTHON ?= python3

WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wcast-qual -Wundef -Wvla -Wno-unused-parameter -Wno-format-truncation
CFLAGS ?= -O2 -g
ifeq ($(DEBUG),1)
CFLAGS := -O0 -g3
WARN += -Werror
endif
# SANFLAGS, not CFLAGS: a CFLAGS given on the command line (as `check` does) must not
# drop the instrumentation.
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined,float-cast-overflow
LDSAN := -fsanitize=address,undefined,float-cast-overflow
endif
ifeq ($(TSAN),1)
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
LDSAN := -fsanitize=thread
endif
ifeq ($(WERROR),1)
WARN += -Werror
endif
CPPFLAGS := -D_GNU_SOURCE -Iinclude -Isrc -Isrc/compat/cxx -I$(CUDA_HOME)/include -DGT_CUDA_HOME='"$(CUDA_HOME)"'
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(SANFLAGS) $(CPPFLAGS) -MMD -MP
LIBS := -lyajl -lsqlite3 -lz -ldl -lpthread -lm
# STATIC_DEPS=1: link yajl, sqlite and zlib statically, for machines without those
# packages (e.g. a GPU box with only the CUDA image): `make gpu-bundle`.
ifeq ($(STATIC_DEPS),1)
LIBS := -Wl,-Bstatic -lyajl_s -lsqlite3 -lz -Wl,-Bdynamic -ldl -lpthread -lm
endif

BOTH_SRC := src/gpu/probe.c src/gpu/cuprof.c $(addprefix src/trace/,trace_io.c blockz.c holdnames.c alnair_log.c) \
	$(addprefix src/metrics/,rmagg.c rmcache.c)
CORE_SRC := $(wildcard src/core/*.c) $(BOTH_SRC)
TAP_SRC := $(wildcard src/tap/*.c)
TAP_PURE := $(wildcard $(addprefix src/tap/,ring.c ptrtab.c strtab.c env.c apis.c openrange.c dlsym_find.c hold.c holdtab.c holdstub.c))
TAP_PURE += src/tap/rangeagg.c
TAP_PURE += src/tap/ticks.c
TAP_PURE += src/tap/pcsamp_agg.c
CLI_SRC := $(wildcard src/analyze/*.c src/fleet/*.c src/run/*.c src/export/*.c src/report/*.c src/liblog/*.c src/libperf/*.c \
	$(filter-out $(BOTH_SRC),$(wildcard src/gpu/*.c src/trace/*.c src/metrics/*.c)) src/cli/*.c)
# the tap's reading of its environment: gputap run refuses (usage) what the library would only warn about
CLI_SRC += src/tap/env.c
UNIT_SRC := $(wildcard tests/unit/*.c)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRC))

obj = $(patsubst %.c,$(O)/obj/%.o,$(1))
pic = $(patsubst %.c,$(O)/pic/%.o,$(1))

GPUTAP := $(O)/gputap
LIBTAP := $(O)/libgputap.so
UNIT := $(O)/unit-tests
FUZZ_BINS := $(addprefix $(O)/fuzz/,$(FUZZ_NAMES))

all: $(GPUTAP) $(LIBTAP)

# Objects are rebuilt when the compiler or its flags change, so a build folder made
# before (say, without instrumentation) never leaks old objects into this build.
FLAGS_STAMP := $(O)/.flags
ifneq ($(file <$(FLAGS_STAMP)),$(CC) $(ALL_CFLAGS) $(LDSAN))
$(shell mkdir -p $(O))
$(file >$(FLAGS_STAMP),$(CC) $(ALL_CFLAGS) $(LDSAN))
endif

$(O)/obj/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The library: hidden by default, exports only what src/tap/exports.map lists.
$(O)/pic/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -DGT_IN_LIBRARY=1 -c $< -o $@

$(GPUTAP): $(call obj,$(CORE_SRC) $(CLI_SRC))
	$(CC) $(LDSAN) -o $@ $^ $(LIBS)

LIB_LDFLAGS := -shared -Wl,--no-undefined -Wl,-z,nodelete -Wl,-z,now
ifneq ($(wildcard src/tap/exports.map),)
LIB_LDFLAGS += -Wl,--version-script=src/tap/exports.map
endif
$(LIBTAP): $(call pic,$(CORE_SRC) $(TAP_SRC))
	$(CC) $(filter-out -fsanitize=%,$(LDSAN)) -o $@ $^ $(LIB_LDFLAGS) -lz -ldl -lpthread -lm

UNIT_OBJ := $(call obj,$(sort $(UNIT_SRC) $(CORE_SRC) $(filter-out src/cli/main.c,$(CLI_SRC)) $(TAP_PURE)))
$(UNIT): $(UNIT_OBJ)
	$(CC) $(LDSAN) -o $@ $^ $(LIBS)

# The tap's lock-free parts under ThreadSanitizer (make check builds it in $(O)/tsan).
TAP_UNIT_SRC := tests/unit/main.c $(wildcard tests/unit/test_tap_*.c)
$(O)/tap-unit-tests: $(call obj,$(TAP_UNIT_SRC) $(CORE_SRC) $(TAP_PURE))
	$(CC) $(LDSAN) -o $@ $^ $(LIBS)

$(O)/fuzz/%: $(O)/obj/tests/fuzz/fuzz_%.o $(O)/obj/tests/fuzz/regress_main.o $(call obj,$(CORE_SRC) $(filter-out src/cli/main.c,$(CLI_SRC)))
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -o $@ $^ $(LIBS)

# libFuzzer builds (clang): make fuzz [FUZZ=name] (every target by default), then run
# build/libfuzzer/lf-name CORPUS_DIR; tests/fuzz/run-libfuzzer.sh runs them all for a fixed time.
$(O)/lf-%: $(O)/obj/tests/fuzz/fuzz_%.o $(call obj,$(CORE_SRC) $(filter-out src/cli/main.c,$(CLI_SRC)))
	$(CC) $(LDSAN) -o $@ $^ $(LIBS)

LF_CFLAGS := -O1 -g -Wno-unknown-warning-option -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
fuzz:
	@$(MAKE) --no-print-directory O=$(O)/libfuzzer CC=clang CFLAGS="$(LF_CFLAGS)" \
		LDSAN="-fsanitize=fuzzer,address,undefined" $(addprefix $(O)/libfuzzer/lf-,$(or $(FUZZ),$(FUZZ_NAMES)))

tests-bin: $(GPUTAP) $(LIBTAP) $(UNIT) $(FUZZ_BINS)

# The Python package's C extension (the range object), built in place for the package's
# tests, which import it from the source tree; pip install ./python builds its own copy.
PY_INC := $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
PYEXT := python/gputap/_speedups$(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
$(PYEXT): python/gputap/_speedups.c
	$(CC) -std=gnu11 $(WARN) -O2 -g -fPIC -shared -isystem $(PY_INC) $< -o $@

# All CPU tests: the normal build, then unit and fuzz regressions under ASan+UBSan, and each
# libFuzzer target for GT_FUZZ_SECONDS (10) on its corpus.
check: tests-bin $(PYEXT)
	@$(MAKE) --no-print-directory O=$(O)/san SAN=1 CFLAGS="-O1 -g" $(O)/san/unit-tests $(O)/san/gputap $(addprefix $(O)/san/fuzz/,$(FUZZ_NAMES)) >/dev/null
	@! command -v clang >/dev/null || $(MAKE) --no-print-directory fuzz >/dev/null
	@$(MAKE) --no-print-directory O=$(O)/tsan TSAN=1 CFLAGS="-O1 -g" $(O)/tsan/tap-unit-tests >/dev/null
	@O=$(O) PYTHON=$(PYTHON) tests/run-tests.sh

lint:
	@$(MAKE) --no-print-directory O=$(O)/lint WERROR=1 $(O)/lint/gputap $(O)/lint/libgputap.so $(O)/lint/unit-tests
	cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability,performance \
		--inline-suppr --suppress=missingIncludeSystem -D_GNU_SOURCE -Iinclude -Isrc src
	tests/lint/banned-in-tap.sh
	tests/lint/banned-in-src.sh
	tests/lint/architecture.sh
	$(CC) -std=gnu11 $(WARN) -Werror -fsyntax-only -isystem $(PY_INC) python/gputap/_speedups.c
	@echo "lint: clean"

# A self-contained build to carry to a GPU machine: .carry/build/{gputap,libgputap.so}
gpu-bundle:
	$(MAKE) O=.carry/build STATIC_DEPS=1 .carry/build/gputap .carry/build/libgputap.so

# a headline, then the build without its command lines (make -s), then the demo
demo:
	@echo "gputap demo: gputap's analyses on real GPU work (building gputap first: make -s)"
	@$(MAKE) -s --no-print-directory all
	@GPUTAP=$(abspath $(GPUTAP)) tools/demo.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(O)

.PHONY: all check lint fuzz format clean tests-bin demo gpu-bundle
.SECONDARY:
-include $(shell find $(O) -name '*.d' 2>/dev/null)
