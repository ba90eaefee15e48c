#!/usr/bin/env bash
# The data-parallel benchmark: a ResNet training step on a total batch, as
# one process with all the cores and as N processes of one thread each,
# MSL (msl launch, MPI) and PyTorch (DistributedDataParallel over gloo,
# NCHW and channels_last) in the same run. Prints each line and the ratios.
#   tests/bench/train/run_dp.sh [resnet18|resnet50] [BATCH] [STEPS] [N]
set -euo pipefail
cd "$(dirname "$0")/../../.."
arch=${1:-resnet18}
batch=${2:-32}
steps=${3:-10}
n=${4:-2}
msl=build/interp/msl
cores=$(nproc)
one=$($msl --threads "$cores" run tests/bench/train/msl_resnet.msl "$arch" "$batch" "$steps" graph | head -n 1)
dp=$($msl launch -n "$n" tests/bench/train/msl_resnet_dp.msl "$arch" "$batch" "$steps" | tail -n 1)
t_one=$(OPENBLAS_NUM_THREADS=1 /usr/bin/python3 tests/bench/train/torch_resnet.py "$arch" "$batch" "$steps" "$cores" | tail -n 1)
t_one_cl=$(/usr/bin/python3 tests/bench/train/torch_resnet.py "$arch" "$batch" "$steps" "$cores" channels_last | tail -n 1)
t_dp=$(/usr/bin/python3 tests/bench/train/torch_resnet_ddp.py "$arch" "$batch" "$steps" "$n" | tail -n 1)
t_dp_cl=$(/usr/bin/python3 tests/bench/train/torch_resnet_ddp.py "$arch" "$batch" "$steps" "$n" channels_last | tail -n 1)
printf '%s\n' "$one" "$dp" "$t_one" "$t_one_cl" "$t_dp" "$t_dp_cl"
ms() { sed -E 's/.*[:,] ([0-9.]+) ms per training step.*/\1/'; }
m1=$(echo "$one" | ms)
md=$(echo "$dp" | sed -E 's/.*dp step ([0-9.]+) ms.*/\1/')
tbest1=$(printf '%s\n%s\n' "$(echo "$t_one" | ms)" "$(echo "$t_one_cl" | ms)" | sort -g | head -n 1)
tbestd=$(printf '%s\n%s\n' "$(echo "$t_dp" | ms)" "$(echo "$t_dp_cl" | ms)" | sort -g | head -n 1)
awk -v m1="$m1" -v md="$md" -v t1="$tbest1" -v td="$tbestd" -v n="$n" 'BEGIN {
  printf "MSL: %d processes / 1 process = %.2fx; PyTorch (best layout): %.2fx\n", n, md / m1, td / t1
  printf "MSL / PyTorch: 1 process %.2fx, %d processes %.2fx\n", m1 / t1, n, md / td }'
