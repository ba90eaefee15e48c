#!/usr/bin/env bash
# Graph-mode benchmark 2: relu(x + bias) with a broadcast bias on a Dense
# output [64, 256] and a conv output [32, 64, 32, 32], 2 threads: MSL's
# fused loop (jit/codegen), a copy of x, MSL op by op, and PyTorch 1.13
# eager in the same run (microseconds).
#   tests/bench/graph/run_bias_relu.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
build="${1:-$root/build}"
"$root/scripts/install_bench_deps.sh"
cmake --build "$build" --target msl_bench_bias_relu >/dev/null
"$build/tests/bench/graph/msl_bench_bias_relu"
/usr/bin/python3 - <<'PY'
import time, torch
torch.set_num_threads(2)
def us(f):
    f()
    s = time.perf_counter(); calls = 0
    while time.perf_counter() - s < 0.02:
        f(); calls += 1
    t = []
    for _ in range(9):
        s = time.perf_counter()
        for _ in range(calls):
            f()
        t.append((time.perf_counter() - s) / calls * 1e6)
    t.sort()
    return t[4]
for what, xs, bs in [("[64, 256] + [256]", (64, 256), (256,)),
                     ("[32, 64, 32, 32] + [1, 64, 1, 1]", (32, 64, 32, 32), (1, 64, 1, 1))]:
    x, b = torch.rand(xs) * 6 - 3, torch.rand(bs) * 6 - 3
    print("%-32s torch eager relu(x + b) %8.1f us" % (what, us(lambda: torch.relu(x + b))))
PY
