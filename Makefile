# mrgen: generate, co-simulate and build the MetaRoCE NIC datapath.
# Quick start (README): `make demo`, then `make test`.

SHELL   := /bin/bash
GO      ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
GOFMT   ?= $(shell command -v gofmt 2>/dev/null || echo /usr/local/go/bin/gofmt)
CONFIG  ?= configs/default.yaml
OUT     ?= out/default
MRGEN   := bin/mrgen
# Stamp the commit into the binary (banners carry it) wherever git can read the tree; the machine's
# GOFLAGS may say -buildvcs=false, which the command line overrides.
BUILDVCS := $(shell git rev-parse HEAD >/dev/null 2>&1 && echo -buildvcs=true || echo -buildvcs=false)
# Tests that load Verilated models must not be served from Go's test cache: the cache does not
# see a rebuilt model library (docs/toolchain.md), so every run is -count=1. The package timeout
# guards against hangs: on a loaded 2-core machine with a cold model cache the cosim package took
# more than 45 minutes beside the handoff package (session 32), so it is 75 (CI stops at 90).
TESTFLAGS ?= -count=1 -timeout 75m

.PHONY: all deps build demo test test-short lint fmt vet bench fuzz handoff-tiny formal synth qor cosim cosim-parser regress results clean

all: build

deps:
	@bash scripts/deps.sh

build:
	$(GO) build $(BUILDVCS) -o $(MRGEN) ./cmd/mrgen

# The main job on the default configuration, with a readable summary.
demo: deps build
	@bash scripts/demo.sh "$(MRGEN)" "$(CONFIG)" "$(OUT)"

# Every test: unit, golden, fuzz seeds, lint matrix, co-simulation, synthesis smoke.
test: deps vet
	@gofmt_out=$$($(GOFMT) -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$gofmt_out" ]; then echo "gofmt needed:"; echo "$$gofmt_out"; exit 1; fi
	$(GO) test $(TESTFLAGS) ./...

test-short:
	$(GO) test -short ./...

# Lint the generated RTL of the configuration (Verilator -Wall, Yosys latch/loop, Icarus).
lint: deps build
	$(MRGEN) --config $(CONFIG) generate --out $(OUT)
	$(MRGEN) --config $(CONFIG) lint --out $(OUT)

# One million packets through the SACK unit (the acceptance run), seed from SEED.
SEED ?= 1
cosim: deps build
	$(MRGEN) --config $(CONFIG) cosim --block sack --scenario random --packets 1000000 --seed $(SEED)

# One million frames through the header parser at each datapath width (the acceptance runs).
cosim-parser: deps build
	for w in 64 128 256 512; do \
	  $(MRGEN) --config configs/matrix/parser-w$$w.yaml cosim --block parser --packets 1000000 --seed $(SEED) --json || exit 1; \
	done

# A short regression: every block's every scenario on the default configuration, seeds 1..2
# (docs/regress.md has the full matrix, sharding and merging). Report in out/regress.json.
REGRESS_SEEDS ?= 1..2
REGRESS_PACKETS ?= 2000
regress: deps build
	@mkdir -p out
	$(MRGEN) regress --seeds $(REGRESS_SEEDS) --configs $(CONFIG) --packets $(REGRESS_PACKETS) --out out/regress.json

# Yosys + nextpnr-ice40 for the HX8K; writes out/synth.json (the demo summary reads it).
BOARD ?= ice40-hx8k
# The silicon handoff bundle at nic-tiny with nic_top's netlist (make test's leaves it out), then
# its verify.sh: hashes, every testbench under Icarus and Verilator, every netlist (well over an
# hour with the synthesis reports; not yet timed end to end, BENCHMARKS.md).
handoff-tiny: deps build
	$(MRGEN) --config configs/synth/nic-tiny.yaml handoff --out out/handoff-tiny --force
	sh out/handoff-tiny/verify.sh

# Every formal property at its small configurations (sack_rx with forwarding, entry II 2; and
# holding instead, entry II 3), 5 minutes per engine (make test gives 30 s).
formal: deps build
	$(MRGEN) --config configs/formal/sack-small.yaml formal --limit 300 --out out/formal
	$(MRGEN) --config configs/formal/sack-small-hold.yaml formal --limit 300 --out out/formal-hold

synth: deps build
	@mkdir -p out
	$(MRGEN) --config $(CONFIG) synth --board $(BOARD) --json > out/synth.json

# Timing and area of every block and the NIC top on three targets (ASIC osu018 + OpenSTA,
# UltraScale+ LUT depth and resources, iCE40 HX8K) at the default configuration and three matrix
# configurations, checked against qor/budgets.json; writes docs/qor.md and docs/qor-fo4.svg
# (docs/qor-flow.md explains the flow). The default configuration also searches configs/matrix/
# for the largest configuration of each unit that fits the HX8K. QOR_FLAGS narrows the run (e.g.
# QOR_FLAGS='--target asic,xcup --depth-only': about 10 minutes a configuration instead of about
# an hour); the page says per configuration what was measured.
QOR_FLAGS ?=
QOR_CONFIGS ?= configs/default.yaml configs/matrix/w128-small.yaml configs/matrix/nic-w256-2ports.yaml configs/matrix/w64-4paths-asic.yaml
qor: deps build
	@mkdir -p out/qor
	@status=0; reports=""; \
	for c in $(QOR_CONFIGS); do \
	  n=$$(basename $$c .yaml); fit=""; [ "$$c" = "configs/default.yaml" ] || fit="--fit-configs="; \
	  echo "qor: $$c"; \
	  $(MRGEN) --config $$c qor $(QOR_FLAGS) --json --out out/qor/$$n --budgets qor/budgets.json $$fit > out/qor/$$n.json || status=1; \
	  reports="$$reports,out/qor/$$n.json"; \
	done; \
	$(MRGEN) qor-doc --reports $${reports#,} --out docs/qor.md --svg docs/qor-fo4.svg || status=1; \
	exit $$status

# Every protocol experiment at full size, 5 seeds per point (docs/results.md): 13 minutes on 2 cores.
results: build
	@bash scripts/results.sh $(MRGEN)

fmt:
	$(GOFMT) -w $$(find . -name '*.go' -not -path './out/*')

vet:
	$(GO) vet ./...

bench: deps
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...

# Long fuzzing of every decoder of untrusted bytes (not part of `make test`).
FUZZTIME ?= 60s
fuzz:
	$(GO) test ./golden/wire -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME)
	$(GO) test ./golden/wire -run '^$$' -fuzz '^FuzzRoundTrip$$' -fuzztime $(FUZZTIME)
	$(GO) test ./golden/wire -run '^$$' -fuzz '^FuzzEncode$$' -fuzztime $(FUZZTIME)
	$(GO) test ./golden/parser -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)

clean:
	rm -rf bin out
