#!/usr/bin/env bash
# All op benchmarks of issue "Tensors and the primitive ops on CPU", each
# against PyTorch measured in the same run with 2 threads:
#   1. per-op eager dispatch on tiny tensors (MSL loop vs PyTorch eager loop)
#   2. large elementwise ops (16M float32) vs PyTorch and the memory-copy floor
#   3. matmul 1024^3 and conv2d 64->64 3x3 (forward, forward+backward) in GFLOP/s
# Usage: tests/bench/ops/run_all.sh [build-dir]   (run on a quiet machine)
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-$root/build}
"$root/scripts/install_bench_deps.sh"
cmake --build "$build" --target msl bench_elementwise bench_dnnl >/dev/null
echo "== dispatch (shape [4] float32, chain of 10 ops)"
"$root/tests/bench/ops/run_dispatch.sh" "$build/interp/msl"
echo "== elementwise (16M float32)"
"$root/tests/bench/ops/run_elementwise.sh" "$build"
echo "== matmul and conv2d"
ROUNDS=${ROUNDS:-3} "$root/tests/bench/ops/run_dnnl.sh" "$build"
