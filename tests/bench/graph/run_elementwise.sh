#!/usr/bin/env bash
# Graph-mode benchmark 1: relu(x*a + b) * sigmoid(x) - tanh(x)/2 on 16M
# float32, 2 threads: MSL's fused loop called directly (jit/codegen), a
# copy of the same data, MSL op by op, the forward and gradient through
# GRAPH_MODE and PYNATIVE_MODE programs, and PyTorch 1.13 eager (forward;
# forward + gradient) in the same run.
#   tests/bench/graph/run_elementwise.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
build="${1:-$root/build}"
"$root/scripts/install_bench_deps.sh"
cmake --build "$build" --target msl_bench_elementwise >/dev/null
"$build/tests/bench/graph/msl_bench_elementwise"
"$build/interp/msl" --threads 2 run "$root/tests/bench/graph/chain_graph_mode.msl"
/usr/bin/python3 - <<'PY'
import time, torch
torch.set_num_threads(2)
n = 1 << 24
x, a, b = torch.rand(n) * 6 - 3, torch.rand(n) * 6 - 3, torch.rand(n) * 6 - 3
def chain():
    return torch.relu(x * a + b) * torch.sigmoid(x) - torch.tanh(x) / 2
chain()
t = []
for _ in range(7):
    s = time.perf_counter(); chain(); t.append((time.perf_counter() - s) * 1e3)
t.sort()
print("torch eager chain:   %.2f ms" % t[3])
xg, ag, bg = (v.clone().requires_grad_() for v in (x, a, b))
def grad():
    l = (torch.relu(xg * ag + bg) * torch.sigmoid(xg) - torch.tanh(xg) / 2).sum()
    return torch.autograd.grad(l, [xg, ag, bg])
grad()
t = []
for _ in range(7):
    s = time.perf_counter(); grad(); t.append((time.perf_counter() - s) * 1e3)
t.sort()
print("torch eager forward + gradient: %.2f ms" % t[3])
PY
