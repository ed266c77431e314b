#!/usr/bin/env bash
# The main job on one configuration: generate the NIC top (nic_top: nic_rx, nic_tx), lint it with
# Verilator/Yosys/Icarus, and run it in the closed loop with 1% loss (the RTL as one host of the
# golden transport, compared frame for frame with its golden shadow); then the SACK unit's
# lockstep cosim, the critical path of every block (QoR), and a summary table.
set -euo pipefail
MRGEN=${1:?mrgen binary}
CONFIG=${2:?config file}
OUT=${3:?output directory}
PACKETS=${DEMO_PACKETS:-200000}

echo "== configuration"
"$MRGEN" --config "$CONFIG" config check
echo
echo "== generate: the NIC top nic_top (nic_rx, nic_tx, egress merge) and every block in it"
"$MRGEN" --config "$CONFIG" generate --block nic --out "$OUT/nic"
echo
echo "== lint: verilator -Wall, yosys latch/loop checks, iverilog -g2012"
"$MRGEN" --config "$CONFIG" lint --block nic --out "$OUT/nic"
echo
echo "== closed loop: nic_top as host 0 of the golden transport (receiving and sending), 1% loss"
echo "   (the first run builds the Verilated model, a few minutes; later runs reuse it)"
"$MRGEN" --config "$CONFIG" --json cosim --scenario loss --loss 0.01 --packets "${DEMO_LOOP_PACKETS:-3000}" --seed 1 \
  --vcd "$OUT/loop-mismatch.vcd" --pcap "$OUT/loop-mismatch.pcap" > "$OUT/loop.json"
echo
echo "== generate and lint the SACK unit"
"$MRGEN" --config "$CONFIG" generate --out "$OUT"
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
NAME=$(basename "$CONFIG" .yaml)
QOR=out/qor/$NAME.json
if [ ! -s "$QOR" ]; then
  QOR=$OUT/qor.json
  if [ "${DEMO_QOR:-1}" = 1 ]; then
    echo "== QoR: every block's critical path, ASIC (osu018, FO4) and UltraScale+ (LUT6 levels)"
    echo "   (depth only, about 5 minutes on 2 cores; make qor measures everything; DEMO_QOR=0 skips)"
    if "$MRGEN" --config "$CONFIG" qor --target asic,xcup --depth-only --json --out "$OUT/qor" > "$QOR.tmp"; then
      mv "$QOR.tmp" "$QOR"
    else
      rm -f "$QOR.tmp"
    fi
    echo
  fi
fi
echo "== summary"
"$MRGEN" summary --cosim "$OUT/loop.json" --synth out/synth.json --qor "$QOR"
echo
echo "RTL, filelist, FuseSoC core and manifest are in $OUT (the NIC top in $OUT/nic)."
echo "FPGA numbers: make synth (iCE40 HX8K; a few minutes), recorded in BENCHMARKS.md."
