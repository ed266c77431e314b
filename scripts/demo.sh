#!/usr/bin/env bash
# The main job on one configuration: generate the RTL, lint it with Verilator/Yosys/Icarus, and
# co-simulate the SACK unit against the golden model; each step prints its own summary.
set -euo pipefail
MRGEN=${1:?mrgen binary}
CONFIG=${2:?config file}
OUT=${3:?output directory}
PACKETS=${DEMO_PACKETS:-200000}

echo "== configuration"
"$MRGEN" --config "$CONFIG" config check
echo
echo "== generate"
"$MRGEN" --config "$CONFIG" generate --out "$OUT"
echo
echo "== lint: verilator -Wall, yosys latch/loop checks, iverilog -g2012"
"$MRGEN" --config "$CONFIG" lint --out "$OUT"
echo
echo "== co-simulation: sack_unit under Verilator in lockstep with golden/sack"
echo "   (the first run builds the Verilated model, about a minute; later runs reuse it)"
"$MRGEN" --config "$CONFIG" cosim --block sack --scenario random --packets "$PACKETS" --seed 1 \
  --vcd "$OUT/mismatch.vcd"
echo
echo "== initiation interval: 100000 back-to-back packets to one (connection, path)"
"$MRGEN" --config "$CONFIG" cosim --block sack --scenario back-to-back --packets 100000 --seed 1 \
  --vcd "$OUT/mismatch.vcd"
echo
echo "RTL, filelist, FuseSoC core and manifest are in $OUT."
echo "FPGA numbers: make synth (iCE40 HX8K; a few minutes), recorded in BENCHMARKS.md."
