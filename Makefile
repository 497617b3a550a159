# Atoll top-level build.
#
# Everything is found by wildcard so that adding a file never needs a Makefile
# edit: library code lives in util/ isa/ sim/ firmware/ compiler/, the front
# end is tools/atoll.c plus one tools/cmd_NAME.c per subcommand (the command
# table is generated from those file names), tests are test/*/test_*.c (one
# binary each) and test/cli/*.sh, benchmarks bench/bench_*.c, fuzzers
# fuzz/fuzz_*.c.
#
#   make            build/atoll, build/libatoll.a and build/libatoll.so (soname libatoll.so.0)
#   make test       every test, then again under ASan+UBSan built by gcc and by clang;
#                   ends "N passed, N failed" (installs the Debian packages the
#                   tests need when missing: tools/deps.sh)
#   make bench      benchmark table
#   make fuzz       libFuzzer harnesses, FUZZ_SECONDS each (explore), or
#                   FUZZ_RUNS inputs each from seed 1 (reproducible, as CI runs it)
#   make conformance  ONNX backend tests per op; regenerates docs/conformance.md
#   make conformance-chip  the same on the simulated chip; regenerates docs/conformance-chip.md
#   make demo       digits CNN on the simulated chip (accuracy, speed), ResNet-50 timing
#   make install PREFIX=/usr/local   binary, libraries, header, pkg-config, configs,
#                   bundled models, Python module; make uninstall removes them

CC      ?= cc
BUILD   ?= build
PREFIX  ?= /usr/local
SAN     ?= 0
FUZZ_SECONDS ?= 20
FUZZ_RUNS ?=
VERSION := 0.1.0
SOMAJOR := 0

WARN    := -Wall -Wextra -Werror -Wno-unused-parameter -Wno-format-truncation -Wno-unknown-warning-option
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
# The sanitizer builds are optimised as the plain one is (-O2): ASan still
# instruments every memory access the optimiser keeps and UBSan adds its
# checks before optimising, so they check what -O1 checked, and make
# test's two sanitizer passes take about a tenth less CPU (a resnet20_cifar
# compile on a1 under gcc ASan+UBSan: 16.9 -> 14.5 CPU-s; test_backend_e2e
# 88.5 -> 79.9; docs/conventions.md).
ifeq ($(SAN),1)
OPT     := -O2 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
else
OPT     := -O2 -g
endif
CFLAGS_ALL := $(CSTD) $(OPT) -fPIC $(WARN) -Iinclude -I. -I$(BUILD)/gen -DATOLL_VERSION='"$(VERSION)"' -DATOLL_DATADIR='"$(PREFIX)/share/atoll"' $(CFLAGS)
LDLIBS_ALL := -lz -lm $(LDLIBS)

LIB_DIRS  := util isa sim firmware $(sort $(wildcard compiler/*)) host
LIB_SRCS  := $(sort $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)))
# tools/: the front end (atoll.c and one cmd_NAME.c per subcommand) and the
# tool code beside it (runners, file conversion), which tests link too.
TOOL_SRCS := $(sort $(wildcard tools/atoll.c tools/cmd_*.c))
TLIB_SRCS := $(sort $(filter-out $(TOOL_SRCS),$(wildcard tools/*.c)))
CMD_SRCS  := $(sort $(wildcard tools/cmd_*.c))
TEST_SRCS := $(sort $(wildcard test/*/test_*.c))
BENCH_SRCS:= $(sort $(wildcard bench/bench_*.c))
FUZZ_SRCS := $(sort $(wildcard fuzz/fuzz_*.c))

LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
TOOL_OBJS := $(TOOL_SRCS:%.c=$(BUILD)/obj/%.o)
TLIB_OBJS := $(TLIB_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_BINS := $(patsubst test/%.c,$(BUILD)/test/%,$(TEST_SRCS))
BENCH_BINS:= $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))
LIB       := $(BUILD)/libatoll.a
TLIB      := $(BUILD)/libatoll_tools.a
SONAME    := libatoll.so.$(SOMAJOR)
SOLIB     := $(BUILD)/libatoll.so.$(VERSION)
ATOLL     := $(BUILD)/atoll
# The Python module goes where $(PYTHON) searches PREFIX (tools/pysite.py),
# else to PREFIX/lib/python3/dist-packages (install then names the
# PYTHONPATH to set); evaluated only by the targets that use it.
PYTHON    ?= $(firstword $(wildcard /usr/bin/python3) python3)
PYSITE     = $(shell $(PYTHON) tools/pysite.py "$(PREFIX)" 2>/dev/null || echo "$(PREFIX)/lib/python3/dist-packages")
PYDIR      = $(PYSITE)/atoll
DEPS      := sh tools/deps.sh

.PHONY: all test check bench staged-full fuzz fuzz-deps install uninstall pydir clean conformance conformance-chip demo
all: $(ATOLL) $(LIB) $(SOLIB)

$(BUILD)/gen/commands.h: $(CMD_SRCS) Makefile
	@mkdir -p $(dir $@)
	@{ for f in $(CMD_SRCS); do n=$${f#tools/cmd_}; echo "COMMAND($${n%.c})"; done; } > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/%.o: %.c $(BUILD)/gen/commands.h
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@echo "  AR      $@"
	@rm -f $@ && ar rcs $@ $^

$(TLIB): $(TLIB_OBJS)
	@mkdir -p $(dir $@)
	@echo "  AR      $@"
	@rm -f $@ && ar rcs $@ $^

# The shared library exports the public API only (the functions include/atoll.h
# declares); everything else stays inside.
$(BUILD)/gen/atoll.map: include/atoll.h Makefile
	@mkdir -p $(dir $@)
	@{ echo '{ global:'; sed -n 's/^[A-Za-z].*[ *]\(atl_[a-z0-9_]*\)(.*/  \1;/p' include/atoll.h; echo 'local: *; };'; } > $@.tmp && mv $@.tmp $@

$(SOLIB): $(LIB_OBJS) $(BUILD)/gen/atoll.map
	@echo "  LINK    $@"
	@$(CC) $(CFLAGS_ALL) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=$(BUILD)/gen/atoll.map $(LIB_OBJS) $(LDLIBS_ALL) -o $@
	@ln -sf libatoll.so.$(VERSION) $(BUILD)/$(SONAME) && ln -sf $(SONAME) $(BUILD)/libatoll.so

$(ATOLL): $(TOOL_OBJS) $(TLIB) $(LIB)
	@echo "  LINK    $@"
	@$(CC) $(CFLAGS_ALL) $(TOOL_OBJS) $(TLIB) $(LIB) $(LDLIBS_ALL) -o $@

# Test binaries may also use the command implementations (for in-process CLI tests).
$(BUILD)/test/%: test/%.c test/test.h $(TLIB) $(LIB)
	@mkdir -p $(dir $@)
	@echo "  LINK    $@"
	@$(CC) $(CFLAGS_ALL) -MMD -MP -MF $@.d $< $(TLIB) $(LIB) $(LDLIBS_ALL) -o $@

$(BUILD)/bench/%: bench/%.c $(TLIB) $(LIB)
	@mkdir -p $(dir $@)
	@echo "  LINK    $@"
	@$(CC) $(CFLAGS_ALL) -MMD -MP -MF $@.d $< $(TLIB) $(LIB) $(LDLIBS_ALL) -o $@

# One pass of the suite for the current BUILD/SAN; writes $(BUILD)/results.txt.
# The benchmarks are built too: test/cli/bench.sh runs them on small inputs.
check: $(ATOLL) $(SOLIB) $(TEST_BINS) $(BENCH_BINS)
	@sh test/run.sh $(BUILD) $(TEST_BINS)

# The README's test command: what the tests need, installed when missing
# (a compiler and zlib to build, clang for the freestanding checks and the
# third pass, ONNX's test data for conformance, numpy for the Python
# module's tests, GNU parallel and Slurm for the scale-out sweeps, chromium
# for the HTML report), then three passes: plain (gcc), ASan+UBSan with gcc,
# ASan+UBSan with clang (whose UBSan checks more, e.g. pointer arithmetic
# on NULL). Before the closing line, each pass's wall and summed CPU time
# and its 15 tests with the most CPU time (from BUILD/test-times.txt).
test:
	@$(DEPS) "to build atoll and run its tests" build-essential zlib1g-dev clang libonnx-testdata python3-numpy parallel slurmctld slurmd slurm-client chromium
	@$(MAKE) --no-print-directory -j2 all BUILD=build SAN=0
	@$(MAKE) --no-print-directory -j2 check BUILD=build SAN=0
	@$(MAKE) --no-print-directory -j2 check BUILD=build/san SAN=1
	@$(MAKE) --no-print-directory -j2 check BUILD=build/csan SAN=1 CC=clang
	@sh test/slowest.sh build build/san build/csan
	@sh test/total.sh --readme README.md build/results.txt build/san/results.txt build/csan/results.txt

bench: $(ATOLL) $(BENCH_BINS)
	@for b in $(BENCH_BINS); do $$b || exit 1; done

# Issue #13's "done when" on the full-size models: staged against uniform
# schedules bit for bit at batch 4 and 8 on a1 and tiny (test/full/staged_full.sh;
# about an hour; MODELS=, CHIPS=, BATCHES= narrow it).
staged-full: $(ATOLL) $(BUILD)/test/host/test_run_gen
	@d=$$(mktemp -d) && ATOLL=$(ATOLL) BUILD=$(BUILD) TMPD=$$d sh test/full/staged_full.sh; rc=$$?; rm -rf $$d; exit $$rc

# Fuzzers: the library is compiled once with coverage instrumentation
# (fuzzer-no-link), then each harness links against it. Each runs for
# FUZZ_SECONDS, or with FUZZ_RUNS set for that many inputs from a fixed seed,
# so that a run (CI's) gives the same verdict on every machine and can be
# replayed before pushing. $(BUILD)/fuzz/results.txt gets "passed failed"
# like run.sh.
# A reproducible run is still capped at FUZZ_CAP seconds per harness so a
# harness that turns slow cannot stall CI (the cap is reported when hit).
FUZZ_CAP    ?= 240
FUZZ_BUDGET := $(if $(FUZZ_RUNS),-seed=1 -runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_CAP),-max_total_time=$(FUZZ_SECONDS))
FUZZ_WHAT   := $(if $(FUZZ_RUNS),$(FUZZ_RUNS) runs,$(FUZZ_SECONDS) s)
FUZZ_BINS  := $(patsubst fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
FUZZ_FLAGS := $(CSTD) -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
              -DATOLL_VERSION='"$(VERSION)"' -Iinclude -I. -I$(BUILD)/gen
FUZZ_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/fuzzobj/%.o)
.SECONDARY: $(FUZZ_OBJS)
$(BUILD)/fuzzobj/%.o: %.c $(BUILD)/gen/commands.h
	@mkdir -p $(dir $@)
	@echo "  CC/FUZZ $<"
	@clang $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(FUZZ_OBJS) $(FUZZ_BINS): | fuzz-deps
$(BUILD)/fuzz/%: fuzz/%.c $(FUZZ_OBJS)
	@mkdir -p $(dir $@)
	@echo "  LINK    $@"
	@clang $(FUZZ_FLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) $(LDLIBS_ALL) -o $@
fuzz-deps:
	@$(DEPS) "to build the libFuzzer harnesses" build-essential zlib1g-dev clang
# Each harness writes its verdict line into $(BUILD)/fuzz/NAME.verdict, so
# `make -j2 fuzz` runs two at once (each run alone is as reproducible as
# before); the lines are printed in harness order at the end.
FUZZ_VERDICTS := $(FUZZ_BINS:%=%.verdict)
.PHONY: $(FUZZ_VERDICTS)
$(FUZZ_VERDICTS): $(BUILD)/fuzz/%.verdict: $(BUILD)/fuzz/%
	@n=$*; mkdir -p $(BUILD)/fuzz/corpus-$$n; seeds=fuzz/seeds/$$n; [ -d $$seeds ] || seeds=; \
	  if $< $(FUZZ_BUDGET) -rss_limit_mb=2048 $(BUILD)/fuzz/corpus-$$n $$seeds >$(BUILD)/fuzz/$$n.log 2>&1; \
	  then echo "ok fuzz $$n ($(FUZZ_WHAT)$(if $(FUZZ_RUNS),$$(awk '/^Done [0-9]+ runs in/ && $$5 >= $(FUZZ_CAP) { print ", stopped by FUZZ_CAP" }' $(BUILD)/fuzz/$$n.log)))" > $@; \
	  else echo "not ok fuzz $$n" > $@; fi
fuzz: fuzz-deps $(BUILD)/gen/commands.h $(FUZZ_BINS) $(FUZZ_VERDICTS)
	@ok=0; bad=0; for f in $(FUZZ_BINS); do n=$$(basename $$f); \
	  if grep -q '^ok ' $$f.verdict; then ok=$$((ok + 1)); else tail -40 $(BUILD)/fuzz/$$n.log; bad=$$((bad + 1)); fi; \
	  cat $$f.verdict; done; \
	  echo "$$ok $$bad" > $(BUILD)/fuzz/results.txt; echo "fuzz: $$ok passed, $$bad failed"; [ $$bad -eq 0 ]

# The README's first command: the digits CNN over its test set on the simulated
# chip (accuracy against PyTorch, speed, trace), then ResNet-50 timing-only.
demo:
	@$(DEPS) "to build atoll" build-essential zlib1g-dev
	@$(MAKE) --no-print-directory -j2 $(ATOLL)
	@$(ATOLL) demo

# ONNX backend tests on the reference interpreter: per-op table, regenerates docs/conformance.md.
ONNX_TESTDATA ?= /usr/share/libonnx-testdata/data
conformance: $(ATOLL)
	$(ATOLL) conformance $(ONNX_TESTDATA) --markdown docs/conformance.md

# The same tests compiled by the backend and run on the simulated configs/tiny.ini;
# regenerates docs/conformance-chip.md (exit 1 while any supported test fails).
conformance-chip: $(ATOLL)
	$(ATOLL) conformance $(ONNX_TESTDATA) --chip configs/tiny.ini --markdown docs/conformance-chip.md

# Installed files: the binary finds the configs and models under share/atoll
# beside it (`atoll demo`, `--chip a1` work from any directory); the Python
# module finds libatoll.so.0 under lib/ beside it.
MODEL_FILES := $(wildcard models/*.onnx models/*.npz models/*.json)
install: $(ATOLL) $(LIB) $(SOLIB)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/share/atoll/configs $(DESTDIR)$(PREFIX)/share/atoll/models/full $(DESTDIR)$(PYDIR)
	install -m 755 $(ATOLL) $(DESTDIR)$(PREFIX)/bin/atoll
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/libatoll.a
	install -m 755 $(SOLIB) $(DESTDIR)$(PREFIX)/lib/libatoll.so.$(VERSION)
	ln -sf libatoll.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libatoll.so
	install -m 644 include/*.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' tools/atoll.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/atoll.pc
	install -m 644 configs/*.ini $(DESTDIR)$(PREFIX)/share/atoll/configs/
	install -m 644 $(MODEL_FILES) $(DESTDIR)$(PREFIX)/share/atoll/models/
	install -m 644 models/full/*.onnx $(DESTDIR)$(PREFIX)/share/atoll/models/full/
	install -m 644 python/atoll/*.py $(DESTDIR)$(PYDIR)/
	@$(PYTHON) tools/pysite.py "$(PREFIX)" > /dev/null 2>&1 || \
	    echo "note: $(PYTHON) does not search $(PREFIX) for modules: import atoll with PYTHONPATH=$(PYSITE)"

# Where `make install` puts the Python module (its parent directory).
pydir:
	@echo $(PYSITE)

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/atoll $(DESTDIR)$(PREFIX)/lib/libatoll.a $(DESTDIR)$(PREFIX)/lib/libatoll.so \
	    $(DESTDIR)$(PREFIX)/lib/$(SONAME) $(DESTDIR)$(PREFIX)/lib/libatoll.so.$(VERSION) \
	    $(DESTDIR)$(PREFIX)/lib/pkgconfig/atoll.pc $(addprefix $(DESTDIR)$(PREFIX)/,$(wildcard include/*.h))
	rm -rf $(DESTDIR)$(PREFIX)/share/atoll $(DESTDIR)$(PYDIR)

clean:
	rm -rf build

# header dependencies of objects, tests and benchmarks (a test helper such
# as test/compiler/bk_e2e.h rebuilds the tests that include it)
-include $(shell find $(BUILD)/obj $(BUILD)/test $(BUILD)/bench -name '*.d' 2>/dev/null)
