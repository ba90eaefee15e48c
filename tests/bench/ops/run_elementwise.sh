#!/bin/sh
# Runs PyTorch's and MSL's elementwise benchmarks back to back (2 threads on
# both sides) and prints MSL's table with PyTorch's times beside it.
# Usage: tests/bench/ops/run_elementwise.sh [build-dir] [threads]
set -e
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-$root/build}
threads=${2:-2}
bench=$build/tests/bench/ops/bench_elementwise
if [ ! -x "$bench" ]; then
  echo "missing $bench; build it with: cmake --build $build --target bench_elementwise" >&2
  exit 1
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
/usr/bin/python3 "$root/tests/bench/ops/torch_elementwise.py" "$threads" > "$tmp"
"$bench" --torch "$tmp" --threads "$threads"
