"""PyTorch's side of bench_elementwise: the same ops on the same sizes.

Prints one "name milliseconds" line per op (best of N after warm-up, each
result freed before the next call), the format bench_elementwise --torch
reads. Run with /usr/bin/python3 (Debian's torch).
"""
import sys
import time

import torch


def best_of(f, iters):
    for _ in range(3):
        f()
    best = float("inf")
    for _ in range(iters):
        t0 = time.perf_counter()
        r = f()
        best = min(best, time.perf_counter() - t0)
        del r
    return best


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    torch.set_num_threads(threads)
    n = 16 << 20
    g = torch.Generator().manual_seed(7)
    a = torch.rand(n, generator=g) * 8 - 4
    b = torch.rand(n, generator=g) * 8 - 4
    pos = a.abs()
    ops = [
        ("add", lambda: a + b),
        ("mul", lambda: a * b),
        ("exp", lambda: torch.exp(a)),
        ("tanh", lambda: torch.tanh(a)),
        ("sigmoid", lambda: torch.sigmoid(a)),
        ("relu", lambda: torch.relu(a)),
        ("log", lambda: torch.log(pos)),
        ("sin", lambda: torch.sin(a)),
        ("erf", lambda: torch.erf(a)),
    ]
    for name, f in ops:
        print(f"{name} {best_of(f, iters) * 1e3:.3f}", flush=True)


if __name__ == "__main__":
    main()
