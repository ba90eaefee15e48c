# Reference numbers for tests/ops/nn/recurrent.msl (PyTorch, float64):
# /usr/bin/python3 tests/ops/nn/reference/recurrent.py
import math
import torch
import torch.nn as nn
from torch_ref import r, make, data, fill


def run(name, module, inputs, f):
    module = module.double()
    fill(module)
    inputs = [t.clone().requires_grad_(True) for t in inputs]
    y, state = f(module, *inputs)
    h = state[0] if isinstance(state, tuple) else state
    cy = torch.cos(torch.arange(y.numel(), dtype=torch.float64)).reshape(y.shape)
    ch = torch.sin(torch.arange(h.numel(), dtype=torch.float64)).reshape(h.shape)
    loss = (y * cy).sum() + (h * ch).sum()
    if isinstance(state, tuple):
        loss = loss + (state[1] * ch).sum() * 0.5
    names = [n for n, _ in module.named_parameters()]
    grads = torch.autograd.grad(loss, inputs + [p for _, p in module.named_parameters()])
    projections = {names[j]: round(float((g * torch.cos(0.1 * torch.arange(g.numel(), dtype=torch.float64) + 1)
                                          .reshape(g.shape)).sum()), 10)
                   for j, g in enumerate(grads[len(inputs):])}
    extra = r(state[1]) if isinstance(state, tuple) else []
    print(name, "=", (list(y.shape), r(y), r(h), extra, [r(g) for g in grads[:len(inputs)]], projections))


T, N, I, H = 5, 2, 3, 4
x = make((T, N, I), data)
xb = make((N, T, I), data)
h2 = make((2, N, H), lambda i: 0.1 * math.cos(i))
h4 = make((4, N, H), lambda i: 0.1 * math.cos(i))
c4 = make((4, N, H), lambda i: 0.2 * math.sin(i))
run("rnn_tanh", nn.RNN(I, H, 2), [x, h2], lambda m, a, h: m(a, h))
run("rnn_relu_bi", nn.RNN(I, H, nonlinearity="relu", batch_first=True, bidirectional=True), [xb], lambda m, a: m(a))
run("lstm_bi", nn.LSTM(I, H, 2, bidirectional=True), [x, h4, c4], lambda m, a, h, c: m(a, (h, c)))
run("gru", nn.GRU(I, H, 2, bias=False, batch_first=True), [xb, h2], lambda m, a, h: m(a, h))
run("gru_bi", nn.GRU(I, H, bidirectional=True), [x], lambda m, a: m(a))
