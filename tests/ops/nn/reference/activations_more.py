# Reference numbers for tests/ops/nn/activations_more.msl (PyTorch, float64):
# /usr/bin/python3 tests/ops/nn/reference/activations_more.py
import torch
import torch.nn.functional as F

x = torch.tensor([[-2.0, -0.5, 0.0, 1.5], [2.75, -4.0, 0.25, -1.0]], dtype=torch.float64, requires_grad=True)
x3 = torch.tensor([[[-1.0, 2.0], [0.5, -3.0], [-0.25, 1.0]],
                   [[0.75, -0.5], [-2.0, 1.25], [3.0, -1.5]]], dtype=torch.float64, requires_grad=True)
w = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64, requires_grad=True)
cases = [("silu", F.silu, x), ("mish", F.mish, x), ("hardswish", F.hardswish, x), ("elu", F.elu, x),
         ("elu05", lambda t: F.elu(t, 0.5), x), ("prelu1", lambda t: F.prelu(t, torch.tensor([0.25], dtype=torch.float64)), x),
         ("prelu3", lambda t: F.prelu(t, w), x3)]
for name, f, inp in cases:
    y = f(inp)
    # the gradient of sum(y * y) / 2 w.r.t. the input
    (g,) = torch.autograd.grad((y * y).sum() / 2, inp)
    print(name, "=", [round(v, 12) for v in y.flatten().tolist()])
    print(name + "_dx", "=", [round(v, 12) for v in g.flatten().tolist()])
y = F.prelu(x3, w)
(gw,) = torch.autograd.grad((y * y).sum() / 2, w)
print("prelu3_dw", "=", [round(v, 12) for v in gw.tolist()])
