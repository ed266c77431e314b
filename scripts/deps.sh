#!/usr/bin/env bash
# Installs, idempotently and only what is missing, the EDA tools mrgen's flows and tests need on
# Debian 12. Runs apt-get update at most once, and only when something must be installed.
set -euo pipefail

# opensta, qflow (blifFanout), qflow-tech-osu018 (the OSU 0.18 um cells) and berkeley-abc are the
# ASIC timing flow of mrgen qor; ccache shares compiled C++ between the Verilated models of one
# module (fault tests build one per mutant).
packages=(verilator yosys iverilog nextpnr-ice40 fpga-icestorm z3 boolector g++ make ccache tshark
  opensta qflow qflow-tech-osu018 berkeley-abc)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all present (${packages[*]})"
  exit 0
fi

echo "deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "deps: need root (or sudo) to apt-get install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "deps: installed ${missing[*]}"
