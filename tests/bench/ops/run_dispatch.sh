#!/bin/sh
# Per-op eager dispatch on tiny tensors, MSL against PyTorch (2 threads on
# both sides): prints microseconds per operation for each and the ratio
# MSL/PyTorch (target: at most 0.5).
# Usage: tests/bench/ops/run_dispatch.sh [path/to/msl] [iterations]
set -e
root=$(cd "$(dirname "$0")/../../.." && pwd)
msl=${1:-$root/build/interp/msl}
n=${2:-200000}
if [ ! -x "$msl" ]; then
  echo "missing $msl; build it with: cmake --build build --target msl" >&2
  exit 1
fi
t_msl=$("$msl" run "$root/tests/bench/ops/dispatch.msl" "$n")
t_torch=$(/usr/bin/python3 "$root/tests/bench/ops/torch_dispatch.py" "$n")
printf "msl     %8s us/op\ntorch   %8s us/op\nratio   %8s (msl/torch)\n" "$t_msl" "$t_torch" \
  "$(echo "$t_msl $t_torch" | awk '{printf "%.3f", $1/$2}')"
