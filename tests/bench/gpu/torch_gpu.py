# PyTorch (CUDA, eager) counterparts of dispatch.msl and bandwidth.msl, in
# the same precision and with the same synchronization points.
#   python3 torch_gpu.py dispatch [iterations]   microseconds per operation
#   python3 torch_gpu.py bandwidth               GB/s
#   python3 torch_gpu.py fused                   ms per call of fused.msl's expression (eager)
#   python3 torch_gpu.py copy                    ms per device copy of its 16M floats
import sys
import time

import torch

dev = torch.device("cuda")


def dispatch(n):
    x = torch.tensor([1.0, -2.0, 3.0, -4.0], device=dev)
    a = torch.tensor([0.5, 0.25, 2.0, 1.5], device=dev)
    b = torch.tensor([1.0, 1.0, -1.0, 0.5], device=dev)

    def chain(k):
        y = x
        for i in range(k):
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

    chain(100).cpu()
    best = None
    for r in range(5):
        t0 = time.perf_counter()
        chain(n).cpu()
        t = time.perf_counter() - t0
        best = t if best is None or t < best else best
    print(f"{best / (n * 10) * 1e6:.4f}")


def bandwidth():
    n = 1 << 26
    x = torch.arange(0, n, device=dev, dtype=torch.float32) * (1.0 / n)
    y = torch.ones(n, device=dev) * 0.5
    z = x * y + x
    z[0:1].cpu()
    best = None
    for r in range(5):
        t0 = time.perf_counter()
        for i in range(20):
            z = x * y + x
        z[0:1].cpu()
        t = (time.perf_counter() - t0) / 20
        best = t if best is None or t < best else best
    print(f"{6 * 4 * n / best / 1e9:.1f}")


def best_ms(fn, x):
    y = fn(x)
    y[0:1].cpu()
    best = None
    for r in range(5):
        t0 = time.perf_counter()
        for i in range(20):
            y = fn(x)
        y[0:1].cpu()
        t = (time.perf_counter() - t0) / 20
        best = t if best is None or t < best else best
    print(f"{best * 1e3:.4f}")


def fused_input():
    n = 1 << 24
    return torch.arange(n, device=dev, dtype=torch.float32) * (2.0 / n) - 1.0


if sys.argv[1] == "fused":
    best_ms(lambda x: torch.relu(x * 1.5 + 0.25) * torch.sigmoid(x) - torch.tanh(x) / 2, fused_input())
elif sys.argv[1] == "copy":
    best_ms(lambda x: x.clone(), fused_input())
elif sys.argv[1] == "dispatch":
    dispatch(int(sys.argv[2]) if len(sys.argv) > 2 else 20000)
else:
    bandwidth()
