# Reference numbers for tests/ops/nn/conv1d_transpose.msl (PyTorch, float64):
# /usr/bin/python3 tests/ops/nn/reference/conv1d_transpose.py
import math
import torch
import torch.nn.functional as F
from torch_ref import r, make


def data(i):
    return 2 * math.sin(0.7 * i) + 0.1 * i


def weight(i):
    return 0.5 * math.cos(0.3 * i)


def bias(i):
    return 0.1 * i - 0.2


seq = make((2, 4, 9), data)
img = make((2, 4, 3, 5), data)
# (name, input, weight shape, has bias, function of (x, w, b))
cases = [
    ("conv1d_same", seq, (6, 4, 3), False, lambda x, w, b: F.conv1d(x, w, padding=1)),
    # MindSpore's 'same' with k=4, stride 2 on length 9: output 5, padding 1 before and 2 after
    ("conv1d_same_s2", seq, (6, 4, 4), True, lambda x, w, b: F.conv1d(F.pad(x, (1, 2)), w, b, stride=2)),
    ("conv1d_valid_d2", seq, (6, 4, 3), False, lambda x, w, b: F.conv1d(x, w, dilation=2)),
    ("conv1d_pad_g2", seq, (6, 2, 3), True, lambda x, w, b: F.conv1d(x, w, b, padding=2, groups=2)),
    ("convT_pad", img, (4, 3, 3, 3), True,
     lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2)),
    ("convT_valid", img, (4, 6, 3, 3), False, lambda x, w, b: F.conv_transpose2d(x, w, stride=2)),
    # 'same' with k=3, stride 2: the forward convolution pads 0 before and 1 after
    ("convT_same", img, (4, 6, 3, 3), True, lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2)[:, :, :6, :10]),
    # 'valid' with stride 3 beyond the kernel's extent 2: one more output row and column
    ("convT_valid_s3", img, (4, 2, 2, 2), True,
     lambda x, w, b: F.conv_transpose2d(x, w, b, stride=3, output_padding=1)),
    ("convT_pad_d2", img, (4, 2, 3, 2), False,
     lambda x, w, b: F.conv_transpose2d(x, w, padding=(1, 0), dilation=(2, 1))),
]
for name, x, wshape, has_bias, f in cases:
    x = x.clone().requires_grad_(True)
    w = make(wshape, weight).requires_grad_(True)
    b = make((wshape[0] if name.startswith("conv1d") else wshape[1] * (2 if name == "convT_pad" else 1),), bias)
    b = b.requires_grad_(True) if has_bias else None
    y = f(x, w, b)
    coeff = torch.cos(torch.arange(y.numel(), dtype=torch.float64)).reshape(y.shape)
    grads = torch.autograd.grad((y * coeff).sum(), [x, w] + ([b] if has_bias else []))
    print(name, "=", (list(y.shape), r(y), [r(g) for g in grads]))
