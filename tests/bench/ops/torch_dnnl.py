#!/usr/bin/python3
"""PyTorch timings of the problems bench_dnnl.cpp times, for run_dnnl.sh.

Same shapes, thread count and statistics (best and median of `reps` calls
after warm-up, fewer for slow problems as in bench_dnnl); prints `RESULT <name> <best GFLOP/s> <median GFLOP/s>`
lines. Convolutions are timed in NCHW (the layout MSL uses) and in
channels_last (suffix _cl), usually PyTorch's faster CPU layout. The
gradients use aten's convolution_backward / native_batch_norm_backward, the
kernels autograd calls, so no graph bookkeeping is timed.

Needs Debian's torch (/usr/bin/python3). Matmul goes to whatever BLAS
libblas.so.3 resolves to; run_dnnl.sh also runs this under
OPENBLAS_CORETYPE and, if given, a private OpenBLAS.
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F


def bench(name, flops, reps, fn):
    for _ in range(2):
        fn()
    t0 = time.perf_counter()
    fn()
    # Slow problems (the reference BLAS) get fewer repetitions, at least 3.
    reps = max(3, min(reps, int(3.0 / max(time.perf_counter() - t0, 1e-9))))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    best, median = min(times), statistics.median(times)
    print(f"{name:<28} best {best * 1e3:9.3f} ms  median {median * 1e3:9.3f} ms  {flops / best / 1e9:8.1f} GFLOP/s")
    print(f"RESULT {name} {flops / best / 1e9:.2f} {flops / median / 1e9:.2f}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    reps = args.reps
    blas = [line.strip() for line in torch.__config__.show().splitlines() if "BLAS_INFO" in line]
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, {blas[0][:60] if blas else ''}")
    torch.manual_seed(0)

    with torch.no_grad():
        n = 1024
        a, b = torch.rand(n, n) * 2 - 1, torch.rand(n, n) * 2 - 1
        bench("matmul_f32_1024", 2.0 * n**3, reps, lambda: a @ b)
        ab, bb = a.bfloat16(), b.bfloat16()
        bench("matmul_bf16_1024", 2.0 * n**3, reps, lambda: ab @ bb)
        at, bt = a.t(), b.t()
        bench("matmul_f32_1024_tt", 2.0 * n**3, reps, lambda: at @ bt)
        ad, bd = a.double(), b.double()
        bench("matmul_f64_1024", 2.0 * n**3, max(3, reps // 3), lambda: ad @ bd)

    N, C, O, H, W, K = 32, 64, 64, 56, 56, 3
    flops = 2.0 * N * C * O * K * K * H * W
    x = torch.rand(N, C, H, W) * 2 - 1
    w = torch.rand(O, C, K, K) * 2 - 1
    dy = torch.rand(N, O, H, W) * 2 - 1
    for suffix, fmt in (("", torch.contiguous_format), ("_cl", torch.channels_last)):
        xs, ws, dys = (t.contiguous(memory_format=fmt) for t in (x, w, dy))

        def grads(mask):
            return torch.ops.aten.convolution_backward(dys, xs, ws, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                                       mask)

        with torch.no_grad():
            bench("conv2d_fwd" + suffix, flops, reps, lambda: F.conv2d(xs, ws, padding=1))
            bench("conv2d_bwd_input" + suffix, flops, reps, lambda: grads([True, False, False]))
            bench("conv2d_bwd_filter" + suffix, flops, reps, lambda: grads([False, True, False]))

            def fwd_bwd():
                F.conv2d(xs, ws, padding=1)
                grads([True, True, False])

            bench("conv2d_fwd_bwd" + suffix, 3 * flops, reps, fwd_bwd)
            xb, wb = xs.bfloat16(), ws.bfloat16()
            bench("conv2d_fwd_bf16" + suffix, flops, reps, lambda: F.conv2d(xb, wb, padding=1))

    with torch.no_grad():
        bench("max_pool2d_3x3s2", float(x.numel()), reps, lambda: F.max_pool2d(x, 3, 2, 1))
        c, v = torch.rand(C) * 2 - 1, torch.rand(C) + 0.5
        rm, rv = torch.zeros(C), torch.ones(C)
        bench("batch_norm_train", float(x.numel()), reps, lambda: F.batch_norm(x, rm, rv, c, c, True, 0.1, 1e-5))
        mean, invstd = x.mean((0, 2, 3)), 1 / (x.var((0, 2, 3), unbiased=False) + 1e-5).sqrt()
        bench("batch_norm_grad", float(x.numel()), reps,
              lambda: torch.ops.aten.native_batch_norm_backward(dy, x, c, rm, rv, mean, invstd, True, 1e-5,
                                                                [True, True, True]))
        x2, c2 = torch.rand(256, 1024), torch.rand(1024)
        rm2, rv2 = torch.zeros(1024), torch.ones(1024)
        bench("batch_norm_train_2d", float(x2.numel()), reps,
              lambda: F.batch_norm(x2, rm2, rv2, c2, c2, True, 0.1, 1e-5))


if __name__ == "__main__":
    main()
