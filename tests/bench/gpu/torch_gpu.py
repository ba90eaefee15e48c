# PyTorch (CUDA, eager) counterparts of dispatch.msl and bandwidth.msl, in
# the same precision and with the same synchronization points.
#   python3 torch_gpu.py dispatch [iterations]   microseconds per operation
#   python3 torch_gpu.py bandwidth               GB/s
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


if sys.argv[1] == "dispatch":
    dispatch(int(sys.argv[2]) if len(sys.argv) > 2 else 20000)
else:
    bandwidth()
