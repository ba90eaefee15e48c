#!/usr/bin/env bash
# Runs bench_dnnl (MSL's oneDNN-backed primitives) and torch_dnnl.py (the
# same problems in PyTorch) with the same thread count, then prints a table
# of GFLOP/s and MSL / PyTorch ratios.
#
# PyTorch is run as installed and with OPENBLAS_CORETYPE=SkylakeX (matmul
# goes to the system BLAS); with OPENBLAS_DIR set to a directory holding an
# OpenBLAS libblas.so.3, also against that library (LD_LIBRARY_PATH), so that
# matmul is compared with a tuned BLAS even where the system has the
# reference one. The ratio column divides by the best PyTorch variant
# (for convolutions, the better of NCHW and channels_last).
#
# The sides alternate for ROUNDS rounds and each problem keeps its best
# round: on a shared machine, the least disturbed run is the one that says
# most about the code.
#
# Usage: tests/bench/ops/run_dnnl.sh [build-dir]
#   env: THREADS (2), REPS (15), ROUNDS (2), OPENBLAS_DIR (unset), PYTHON (/usr/bin/python3)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../../build}
bin=$build/tests/bench/ops/bench_dnnl
threads=${THREADS:-2}
reps=${REPS:-15}
rounds=${ROUNDS:-2}
py=${PYTHON:-/usr/bin/python3}
if [[ ! -x $bin ]]; then
  echo "run_dnnl.sh: $bin not found; build the bench_dnnl target first" >&2
  exit 1
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

variants=(torch torch_skx)
[[ -n ${OPENBLAS_DIR:-} ]] && variants+=(torch_openblas)

for ((r = 1; r <= rounds; r++)); do
  echo "== round $r/$rounds" >&2
  OMP_NUM_THREADS=$threads "$bin" "$threads" "$reps" >>"$out/msl.txt"
  for v in "${variants[@]}"; do
    case $v in
      torch) env OMP_NUM_THREADS="$threads" "$py" "$here/torch_dnnl.py" --threads "$threads" --reps "$reps" ;;
      torch_skx) env OMP_NUM_THREADS="$threads" OPENBLAS_CORETYPE=SkylakeX \
        "$py" "$here/torch_dnnl.py" --threads "$threads" --reps "$reps" ;;
      torch_openblas) env OMP_NUM_THREADS="$threads" OPENBLAS_NUM_THREADS="$threads" OPENBLAS_CORETYPE=SkylakeX \
        LD_LIBRARY_PATH="$OPENBLAS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$py" "$here/torch_dnnl.py" --threads "$threads" --reps "$reps" ;;
    esac >>"$out/$v.txt"
  done
done

"$py" - "$out" "$threads" "${variants[@]}" <<'EOF'
import sys
out, threads, variants = sys.argv[1], sys.argv[2], sys.argv[3:]

def load(name):
    best = {}
    for line in open(f"{out}/{name}.txt"):
        if line.startswith("RESULT"):
            _, key, b, _m = line.split()
            best[key] = max(best.get(key, 0.0), float(b))
    return best

msl = load("msl")
torch = {v: load(v) for v in variants}
heads = {"torch": "torch", "torch_skx": "torch SKX", "torch_openblas": "torch+OpenBLAS"}
print(f"\nGFLOP/s, {threads} threads, best of all rounds (pooling/batch norm: elements/ns)")
cols = ["MSL"] + [heads[v] for v in variants] + ["torch CL", "best torch", "MSL/best"]
print(f"{'problem':<22}" + "".join(f"{c:>15}" for c in cols))
for key, value in msl.items():
    row = [value] + [torch[v].get(key, float("nan")) for v in variants]
    cl = max((torch[v].get(key + "_cl", 0.0) for v in variants), default=0.0)
    candidates = [x for x in row[1:] if x == x] + ([cl] if cl else [])
    best = max(candidates) if candidates else float("nan")
    ratio = value / best if best == best and best > 0 else float("nan")
    cells = row + [cl if cl else float("nan"), best, ratio]
    print(f"{key:<22}" + "".join(f"{c:>15.2f}" for c in cells))
EOF
