#!/usr/bin/env bash
# Installs the Debian packages MSL needs to build and test, only if missing.
# Used by scripts/setup.sh and scripts/test.sh; safe to run repeatedly.
# With arguments, installs those packages instead (scripts/install_bench_deps.sh).
set -euo pipefail

packages=(cmake ninja-build g++ ccache pkg-config antlr4 libantlr4-runtime-dev libedit-dev
          libfmt-dev doctest-dev libdnnl-dev python3
          libprotobuf-dev protobuf-compiler zlib1g-dev libjpeg62-turbo-dev libpng-dev
          dataset-fashion-mnist llvm-19-dev libzstd-dev libopenmpi-dev openmpi-bin libonnx-dev python3-onnx)
[ $# -gt 0 ] && packages=("$@")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing missing packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
