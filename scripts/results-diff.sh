#!/usr/bin/env bash
# Compares docs/results/*.json of the working tree with those of a git revision, field by field,
# leaving out what may change between runs without the protocol changing: wall_seconds and the
# send engine's table occupancy. Prints the differing fields per file; exit 1 if there are any.
# Usage: scripts/results-diff.sh REV   (needs jq)
set -euo pipefail
REV=${1:?usage: scripts/results-diff.sh REV}
command -v jq >/dev/null || { echo "results-diff: jq is not installed (apt-get install -y jq)" >&2; exit 2; }
# Every leaf as "path = value", without the fields that are not the protocol's.
leaves='[paths(scalars) as $p | select(($p | map(tostring) | index("wall_seconds") or index("occupancy")) | not)
         | "\($p | map(tostring) | join("/")) = \(getpath($p))"] | .[]'
status=0
for f in docs/results/*.json; do
	if ! old=$(git show "$REV:$f" 2>/dev/null); then
		echo "$f: not in $REV"
		status=1
		continue
	fi
	d=$(diff <(jq -r "$leaves" <<<"$old") <(jq -r "$leaves" "$f") || true)
	n=$(grep -c '^[<>]' <<<"$d" || true)
	echo "$f: $n differing lines"
	[ "$n" = 0 ] || { echo "$d" | head -20; status=1; }
done
exit $status
