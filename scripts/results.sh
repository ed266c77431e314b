#!/usr/bin/env bash
# Regenerates docs/results/: every `mrgen sim` scenario at its full size, as JSON and SVG.
# Usage: scripts/results.sh [mrgen binary]   (make results)
set -euo pipefail
MRGEN=${1:-bin/mrgen}
OUT=docs/results
mkdir -p "$OUT"
run() {
	local name=$1
	shift
	echo "== mrgen sim $* --json --plot $OUT/$name.svg" >&2
	/usr/bin/time -f "   %e s wall, %M KB max RSS" "$MRGEN" sim "$@" --json --plot "$OUT/$name.svg" >"$OUT/$name.json"
}
run loss --scenario loss
run reorder --scenario reorder
run incast --scenario incast
run failure-spine --scenario failure --fail spine
run failure-plane --scenario failure --fail plane
run planes --scenario planes
