#!/usr/bin/env bash
# The main job on one configuration: generate the RTL, lint it with Verilator/Yosys/Icarus, and
# co-simulate the SACK unit against the golden model; then print a summary.
set -euo pipefail
MRGEN=${1:?mrgen binary}
CONFIG=${2:?config file}
OUT=${3:?output directory}
PACKETS=${DEMO_PACKETS:-200000}

echo "== configuration ($CONFIG)"
"$MRGEN" --config "$CONFIG" config check
echo
echo "== generate"
"$MRGEN" --config "$CONFIG" generate --out "$OUT"
echo
echo "== lint (verilator -Wall, yosys latch/loop checks, iverilog -g2012)"
"$MRGEN" --config "$CONFIG" lint --out "$OUT"
echo
echo "== co-simulation: RTL under Verilator against golden/sack, $PACKETS packets"
"$MRGEN" --config "$CONFIG" cosim --block sack --scenario random --packets "$PACKETS" --seed 1 \
  --vcd "$OUT/mismatch.vcd" --json > "$OUT/cosim.json"
"$MRGEN" --config "$CONFIG" cosim --block sack --scenario back-to-back --packets 100000 --seed 1 \
  --vcd "$OUT/mismatch.vcd" --json > "$OUT/cosim-b2b.json"
echo
echo "== summary"
python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
for name in ("cosim.json", "cosim-b2b.json"):
    r = json.load(open(os.path.join(out, name)))
    print(f"  scenario {r['scenario']:<13} packets {r['packets']:>8}  compared {r['compared']:>8}  "
          f"mismatches {r['mismatches']}  rtl_cycles {r['rtl_cycles']:>8}  "
          f"{r['packets_per_second']:>9.0f} pkt/s")
    drops = ", ".join(f"{k} {v}" for k, v in sorted(r["drops"].items()))
    print(f"    drops: {drops or 'none'}")
    print(f"    latency rx {r['min_latency'].get('rx')} (declared {r['declared_latency']['rx']}), "
          f"tx {r['min_latency'].get('tx')} (declared {r['declared_latency']['tx']})")
synth = os.path.join("out", "synth.json")
if os.path.exists(synth):
    s = json.load(open(synth))
    for b in s.get("blocks", []) + ([s["top"]] if s.get("top") else []):
        print(f"  synth {s['board']}: {b['top']:<10} LUTs {b['luts']:>5}  FFs {b['ffs']:>5}  "
              f"RAMs {b['rams']:>3}  Fmax {b['fmax_mhz']:.1f} MHz")
else:
    print("  (no synthesis report yet: `make synth` writes out/synth.json)")
PY
echo
echo "RTL, filelist, FuseSoC core and manifest: $OUT"
