#!/usr/bin/env python3
"""LUT4 depth of every flip-flop input of a unit in an iCE40 netlist (Yosys synth_ice40 JSON,
the synth.json that `mrgen qor --target ice40` leaves under its work directory).

Usage: python3 scripts/ice40_depth.py WORK/synth.json MODULE

For each SB_DFF* or SB_RAM40_4K input pin of MODULE it walks back to a register, RAM or port,
counting SB_LUT4 levels and SB_CARRY cells on the deepest way. It prints the histogram of LUT4
levels, and the registers whose estimated delay (1.5 ns per LUT4 level with its routing, 0.15 ns
per carry, 0.5 ns clock to out: nextpnr's figures on the HX8K at 75-85% of the device) is
longest. A side measurement for BENCHMARKS.md, not part of any flow.
"""
import collections
import json
import re
import sys


def main():
    netlist, module = sys.argv[1], sys.argv[2]
    cells = json.load(open(netlist))["modules"][module]["cells"]
    driver = {}
    for name, c in cells.items():
        for port, direction in c["port_directions"].items():
            if direction == "output":
                for bit in c["connections"][port]:
                    driver[bit] = name
    sequential = lambda t: t.startswith("SB_DFF") or t.startswith("SB_RAM")
    memo = {}

    def depth(bit):
        name = driver.get(bit)
        if name is None or sequential(cells[name]["type"]):
            return (0, 0)
        if name in memo:
            return memo[name]
        memo[name] = (0, 0)
        c = cells[name]
        best = (0, 0)
        for port, direction in c["port_directions"].items():
            if direction == "input":
                for b in c["connections"][port]:
                    if not isinstance(b, str):
                        best = max(best, depth(b))
        if c["type"] == "SB_LUT4":
            best = (best[0] + 1, best[1])
        elif c["type"] == "SB_CARRY":
            best = (best[0], best[1] + 1)
        memo[name] = best
        return best

    sys.setrecursionlimit(1000000)
    levels = collections.Counter()
    over8 = 0
    worst = collections.defaultdict(float)
    for name, c in cells.items():
        if not sequential(c["type"]):
            continue
        for port in ("D", "E", "R", "S"):
            for b in c["connections"].get(port, []):
                if isinstance(b, str):
                    continue
                lut, carry = depth(b)
                levels[lut] += 1
                reg = re.sub(r"_SB_.*", "", name)
                ns = 1.5 * lut + 0.15 * carry + 0.5
                over8 += ns >= 8
                worst[reg] = max(worst[reg], ns)
    print("LUT4 levels: endpoints", sorted(levels.items()))
    print("endpoints estimated at 8 ns or more:", over8)
    for reg, ns in sorted(worst.items(), key=lambda x: -x[1])[:25]:
        print("%5.1f ns  %s" % (ns, reg))


if __name__ == "__main__":
    main()
