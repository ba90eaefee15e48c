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
t_best=$(/usr/bin/python3 "$root/tests/bench/ops/torch_dispatch.py" "$n" best)
printf "msl                          %8s us/op\n" "$t_msl"
printf "torch as installed (2 thr)   %8s us/op   ratio %s\n" "$t_torch" "$(echo "$t_msl $t_torch" | awk '{printf "%.3f", $1/$2}')"
printf "torch best (1 thr, inference)%8s us/op   ratio %s\n" "$t_best" "$(echo "$t_msl $t_best" | awk '{printf "%.3f", $1/$2}')"
