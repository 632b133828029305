# muster: `make run` starts musterd and an agent for this machine, `make test` runs every
# suite (normal build, then AddressSanitizer + UndefinedBehaviorSanitizer).
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)
CTEST_ARGS ?= --output-on-failure
FUZZ_SECONDS ?= 1200
FUZZ_RUNS  ?= 10000000
FUZZ_JOBS  ?= 1

.PHONY: all deps build build-asan build-fuzz iso deb run test test-unit test-fuzz fuzz bench clean help

all: build

help:
	@echo "make run    - install build dependencies, build, start musterd and a local agent, show the pool"
	@echo "make iso    - build the discovery ISO template into $(BUILD)/iso/ (from Debian packages)"
	@echo "make deb    - build the Debian packages muster and muster-discovery-iso into $(BUILD)/deb/ (from this build tree)"
	@echo "make test   - build and run every suite, plain and under ASan+UBSan (builds the ISO and the packages too), then each fuzz target briefly"
	@echo "make test-fuzz - only the libFuzzer targets (clang), each for 10 s over its corpus"
	@echo "make fuzz   - the long run: each target to FUZZ_RUNS executions (10000000) or FUZZ_SECONDS (1200)"
	@echo "make bench  - run the benchmarks under bench/ (prints figures)"
	@echo "make clean  - remove build trees"

deps:
	@scripts/install-deps.sh build

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DMUSTER_SANITIZE=ON \
		-DMUSTER_ISO_TEMPLATE=$(CURDIR)/$(BUILD)/iso/muster-discovery.iso >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS)

# The libFuzzer targets (tests/fuzz), built with clang: the libraries
# instrumented, no programs or suites.
build-fuzz: deps
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMUSTER_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j$(JOBS) --target fuzzers

ISO := $(BUILD)/iso/muster-discovery.iso
ISO_INPUTS := $(BUILD)/agent/muster-agent iso/build.sh systemd/muster-agent.service systemd/run-muster-boot.mount \
	iso/muster-boot-setup.service iso/muster-ssh.service

iso: build
	@scripts/install-deps.sh iso
	@$(MAKE) --no-print-directory $(ISO)

# Rebuilt only when the agent, the script or the units changed.
$(ISO): $(ISO_INPUTS)
	@iso/build.sh $(BUILD)/iso $(BUILD)/agent/muster-agent

# The Debian packages, from this build tree and its ISO (scripts/make-deb:
# dpkg-buildpackage over debian/, no second compile), into $(BUILD)/deb/.
deb: iso
	@scripts/install-deps.sh deb
	@scripts/make-deb $(BUILD)

run: build
	@$(BUILD)/agent/muster-agent inventory --summary -o $(BUILD)/inventory.json
	@BUILD=$(BUILD) scripts/run-local.sh

# After each Criterion run, every suite's own summary and their sum
# (scripts/criterion-summary: a suite that ran no test fails the run).
test: build build-asan iso deb build-fuzz
	cd $(BUILD) && ctest $(CTEST_ARGS)
	@scripts/criterion-summary $(BUILD)
	cd $(ASAN_BUILD) && ctest $(CTEST_ARGS)
	@scripts/criterion-summary $(ASAN_BUILD)
	cd $(FUZZ_BUILD) && ctest -L fuzz $(CTEST_ARGS)

test-fuzz: build-fuzz
	cd $(FUZZ_BUILD) && ctest -L fuzz $(CTEST_ARGS)

fuzz: build-fuzz
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_JOBS=$(FUZZ_JOBS) scripts/fuzz-long $(FUZZ_BUILD)

test-unit: build
	cd $(BUILD) && ctest -L unit $(CTEST_ARGS)
	@scripts/criterion-summary $(BUILD)

bench: build iso
	@scripts/install-deps.sh bench
	@MUSTER_AGENT=$(BUILD)/agent/muster-agent BENCH_RUNSTAT=$(BUILD)/bench/bench-runstat bench/probe
	@BUILD_DIR=$(BUILD) bench/coordinator/run
	@$(BUILD)/bench/bench-payload
	@$(BUILD)/bench/bench-netsteps
	@$(BUILD)/bench/bench-resolve
	@$(BUILD)/bench/bench-addons
	@BUILD_DIR=$(BUILD) bench/bodies
	@BUILD_DIR=$(BUILD) bench/iso

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
