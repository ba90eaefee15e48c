#!/usr/bin/env bash
# Training benchmark, MSL vs PyTorch 1.13 in the same run, 2 threads each:
# LeNet-5 and the MLP on Fashion-MNIST (seconds per epoch, test accuracy).
#   tests/bench/train/run_train.sh [BUILD_DIR] [EPOCHS]
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
build="${1:-$root/build}"
epochs="${2:-2}"
"$root/scripts/install_bench_deps.sh"
export OMP_NUM_THREADS=2
for arch in mlp lenet; do
  "$build/interp/msl" --threads 2 run "$root/tests/bench/train/msl_fashion.msl" "$arch" "$epochs" pynative
  "$build/interp/msl" --threads 2 run "$root/tests/bench/train/msl_fashion.msl" "$arch" "$epochs" graph
  echo "PyTorch as installed:"
  /usr/bin/python3 "$root/tests/bench/train/torch_fashion.py" "$arch" "$epochs" 2
  echo "PyTorch at its best for small models (OPENBLAS_NUM_THREADS=1):"
  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 "$root/tests/bench/train/torch_fashion.py" "$arch" "$epochs" 2
done
