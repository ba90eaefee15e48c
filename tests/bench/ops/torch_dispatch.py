# PyTorch eager counterpart of dispatch.msl: the same chain of 10 elementwise
# operations on shape [4] float32 tensors, 2 threads. Prints microseconds per
# operation (best of 5 rounds). Run with /usr/bin/python3 (Debian's torch).
# `torch_dispatch.py N best` measures PyTorch at its best setting for tiny
# ops: one thread and inference mode (no autograd bookkeeping).
import sys
import time

import torch

best_setting = len(sys.argv) > 2 and sys.argv[2] == "best"
torch.set_num_threads(1 if best_setting else 2)
if best_setting:
    torch.inference_mode().__enter__()
x = torch.tensor([1.0, -2.0, 3.0, -4.0])
a = torch.tensor([0.5, 0.25, 2.0, 1.5])
b = torch.tensor([1.0, 1.0, -1.0, 0.5])
OPS = 10


def chain(n):
    y = x
    for i in range(n):
        y = x * a + b
        y = y - x
        y = torch.relu(y)
        y = y * 0.5
        y = torch.exp(y)
        y = y / b
        y = -y
        y = torch.maximum(y, a)
        y = y + 1.0
    return y


n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
chain(1000)
best = None
for r in range(5):
    t0 = time.perf_counter()
    chain(n)
    t = time.perf_counter() - t0
    if best is None or t < best:
        best = t
print(f"{best / (n * OPS) * 1e6:.4f}")
