# Reference numbers for tests/ops/nn/resampling.msl (PyTorch, float64):
# /usr/bin/python3 tests/ops/nn/reference/resampling.py
import math
import torch
import torch.nn.functional as F
from torch_ref import r


def make(*shape):
    # the test's inputs: x[i] = 2 sin(0.7 i) + 0.1 i over the flat index i
    n = math.prod(shape)
    return torch.tensor([2 * math.sin(0.7 * i) + 0.1 * i for i in range(n)], dtype=torch.float64).reshape(shape)


seq = make(2, 3, 9)
img = make(2, 2, 5, 7)
small = make(1, 2, 3, 4)
chan = make(1, 8, 2, 3)
cases = [
    ("maxpool1d", seq, lambda t: F.max_pool1d(t, 3, 2)),
    ("avgpool1d", seq, lambda t: F.avg_pool1d(t, 2, 2)),
    ("avgpool1d_pad", seq, lambda t: F.avg_pool1d(t, 3, 1, padding=1, count_include_pad=True)),
    ("avgpool1d_pad_excl", seq, lambda t: F.avg_pool1d(t, 3, 2, padding=1, count_include_pad=False)),
    ("adaptive_avg_3x4", img, lambda t: F.adaptive_avg_pool2d(t, (3, 4))),
    ("adaptive_max_3x4", img, lambda t: F.adaptive_max_pool2d(t, (3, 4))),
    ("adaptive_avg_1x7", img, lambda t: F.adaptive_avg_pool2d(t, (1, 7))),
    ("adaptive_max_5x1", img, lambda t: F.adaptive_max_pool2d(t, (5, 1))),
    ("adaptive_avg_2", img[0], lambda t: F.adaptive_avg_pool2d(t, 2)),
    ("nearest_x2", small, lambda t: F.interpolate(t, scale_factor=2, mode="nearest")),
    ("nearest_5x5", small, lambda t: F.interpolate(t, size=(5, 5), mode="nearest")),
    ("nearest_x1.5", small, lambda t: F.interpolate(t, scale_factor=1.5, mode="nearest")),
    ("bilinear_x2", small, lambda t: F.interpolate(t, scale_factor=2, mode="bilinear", align_corners=False)),
    ("bilinear_5x7_corners", small, lambda t: F.interpolate(t, size=(5, 7), mode="bilinear", align_corners=True)),
    ("bilinear_2x3", small, lambda t: F.interpolate(t, size=(2, 3), mode="bilinear", align_corners=False)),
    ("pixel_shuffle", chan, lambda t: F.pixel_shuffle(t, 2)),
    ("pixel_unshuffle", img[:, :, :4, :6], lambda t: F.pixel_unshuffle(t, 2)),
]
for name, inp, f in cases:
    inp = inp.clone().requires_grad_(True)
    y = f(inp)
    coeff = torch.cos(torch.arange(y.numel(), dtype=torch.float64)).reshape(y.shape)
    (g,) = torch.autograd.grad((y * coeff).sum(), inp)
    print(name.replace(".", "_"), "=", (list(y.shape), r(y), r(g)))
