# Helpers the reference scripts share: how a result is printed, how inputs
# and parameters are filled (the .msl tests fill theirs the same way).
import math
import torch


def r(t):
    return [round(v, 12) for v in t.flatten().tolist()]


def make(shape, f):
    # f(flat index), reshaped
    return torch.tensor([f(i) for i in range(math.prod(shape))], dtype=torch.float64).reshape(shape)


def data(i):
    return math.sin(0.7 * i) + 0.05 * (i % 7)


def param_value(name):
    # every parameter filled from its name: 0.3 sin(0.37 i + k), k from the characters
    k = sum(ord(c) for c in name) % 17
    return lambda i: 0.3 * math.sin(0.37 * i + 0.5 * k)


def fill(module):
    for name, p in module.named_parameters():
        with torch.no_grad():
            p.copy_(make(tuple(p.shape), param_value(name)))
