# Reference numbers for tests/ops/nn/normalization_more.msl (PyTorch, float64):
# /usr/bin/python3 tests/ops/nn/reference/normalization_more.py
import math
import torch
import torch.nn.functional as F
from torch_ref import r

# the test's inputs: x[i] = 2 sin(0.7 i) + 0.1 i (flat index i), gamma/beta by formula
x = torch.tensor([2 * math.sin(0.7 * i) + 0.1 * i for i in range(2 * 6 * 3 * 2)], dtype=torch.float64)
x = x.reshape(2, 6, 3, 2).requires_grad_(True)
gamma = torch.tensor([1 + 0.1 * c for c in range(6)], dtype=torch.float64, requires_grad=True)
beta = torch.tensor([0.05 * c - 0.1 for c in range(6)], dtype=torch.float64, requires_grad=True)
for name, f in [("group3", lambda t: F.group_norm(t, 3, gamma, beta, 1e-5)),
                ("group1", lambda t: F.group_norm(t, 1, gamma, beta, 1e-5)),
                ("instance", lambda t: F.instance_norm(t, weight=gamma, bias=beta, eps=1e-5))]:
    y = f(x)
    coeff = torch.cos(torch.arange(y.numel(), dtype=torch.float64)).reshape(y.shape)
    gx, gg, gb = torch.autograd.grad((y * coeff).sum(), [x, gamma, beta])
    print(name, "=", r(y))
    print(name + "_dx", "=", r(gx))
    print(name + "_dgamma", "=", r(gg))
    print(name + "_dbeta", "=", r(gb))
