# Reference numbers for tests/ops/nn/attention.msl (PyTorch, float64):
# /usr/bin/python3 tests/ops/nn/reference/attention.py
import torch
import torch.nn as nn
from torch_ref import r, make, data, fill


def run(name, module, inputs, f):
    module = module.double()
    fill(module)
    module.eval()
    inputs = [t.clone().requires_grad_(True) for t in inputs]
    out = f(module, *inputs)
    y = out[0] if isinstance(out, tuple) else out
    coeff = torch.cos(torch.arange(y.numel(), dtype=torch.float64)).reshape(y.shape)
    params = [p for _, p in module.named_parameters()]
    grads = torch.autograd.grad((y * coeff).sum(), inputs + params)
    # each parameter's gradient projected on cos(0.1 j + 1) over its flat index j
    names = [n for n, _ in module.named_parameters()]
    projections = {names[j]: round(float((g * torch.cos(0.1 * torch.arange(g.numel(), dtype=torch.float64) + 1)
                                          .reshape(g.shape)).sum()), 10)
                   for j, g in enumerate(grads[len(inputs):])}
    print(name, "=", (list(y.shape), r(y), [r(g) for g in grads[:len(inputs)]], projections))
    if isinstance(out, tuple) and out[1] is not None:
        print(name + "_weights", "=", (list(out[1].shape), r(out[1])))


L, S, N, E = 4, 5, 2, 8
causal = torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)
padding = torch.tensor([[False, False, False, True], [False, False, False, False]])
x = make((L, N, E), data)
run("mha", nn.MultiheadAttention(E, 2), [x],
    lambda m, t: m(t, t, t, key_padding_mask=padding, attn_mask=causal))
q = make((N, L, E), data)
k = make((N, S, 6), lambda i: data(i + 3))
v = make((N, S, 5), lambda i: data(i + 5))
float_mask = make((L, S), lambda i: -0.2 * (i % 3))
run("mha_kv", nn.MultiheadAttention(E, 4, kdim=6, vdim=5, add_bias_kv=True, add_zero_attn=True, batch_first=True),
    [q, k, v], lambda m, a, b, c: m(a, b, c, attn_mask=float_mask, average_attn_weights=False))
run("encoder", nn.TransformerEncoder(nn.TransformerEncoderLayer(E, 2, 16, dropout=0.0), 2, nn.LayerNorm(E)), [x],
    lambda m, t: m(t, mask=causal, src_key_padding_mask=padding))
mem = make((N, S, E), lambda i: data(i + 11))
mem_padding = torch.tensor([[False, False, True, True, False], [False, False, False, False, False]])
run("decoder", nn.TransformerDecoderLayer(E, 2, 16, dropout=0.0, activation="gelu", batch_first=True,
                                          norm_first=True),
    [q, mem], lambda m, t, s: m(t, s, tgt_mask=causal, memory_key_padding_mask=mem_padding))
src_padding = mem_padding
run("transformer", nn.Transformer(E, 2, 2, 2, 16, dropout=0.0, batch_first=True), [mem, q],
    lambda m, s, t: m(s, t, tgt_mask=causal, src_key_padding_mask=src_padding, memory_key_padding_mask=src_padding))
