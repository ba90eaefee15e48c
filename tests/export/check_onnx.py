"""Checks an ONNX model MSL exported, independently of MSL:
  1. onnx.checker.check_model(full_check=True) (the schema, every node's
     attributes and types, and ONNX's own shape inference);
  2. onnx.shape_inference (strict) gives every output and every
     intermediate the shape and type the model declares;
  3. evaluated by the small NumPy interpreter below (float64, written from
     the ONNX operator specifications), the model maps INPUT.npy to
     EXPECTED.npy (MSL's own forward pass) within float32 rounding.

Usage: /usr/bin/python3 check_onnx.py MODEL.onnx INPUT.npy EXPECTED.npy [OPSET]
Prints one line per check; exits non-zero on the first failure."""
import sys

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference


def attrs_of(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def conv(x, w, a):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    g = a.get("group", 1)
    sh, sw = a.get("strides", [1, 1])
    dh, dw = a.get("dilations", [1, 1])
    pt, pl, pb, pr = a.get("pads", [0, 0, 0, 0])
    x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    ho = (x.shape[2] - (dh * (kh - 1) + 1)) // sh + 1
    wo = (x.shape[3] - (dw * (kw - 1) + 1)) // sw + 1
    y = np.zeros((n, m, ho, wo))
    mg = m // g
    for gi in range(g):
        xs = x[:, gi * cg:(gi + 1) * cg]
        ws = w[gi * mg:(gi + 1) * mg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh:i * dh + sh * (ho - 1) + 1:sh, j * dw:j * dw + sw * (wo - 1) + 1:sw]
                y[:, gi * mg:(gi + 1) * mg] += np.einsum("nchw,mc->nmhw", patch, ws[:, :, i, j])
    return y


def pool(x, a, kind):
    kh, kw = a["kernel_shape"]
    sh, sw = a.get("strides", [1, 1])
    pt, pl, pb, pr = a.get("pads", [0, 0, 0, 0])
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=fill)
    ones = np.pad(np.ones(x.shape[2:]), ((pt, pb), (pl, pr)))
    ho = (xp.shape[2] - kh) // sh + 1
    wo = (xp.shape[3] - kw) // sw + 1
    windows = np.stack([xp[:, :, i:i + sh * (ho - 1) + 1:sh, j:j + sw * (wo - 1) + 1:sw]
                        for i in range(kh) for j in range(kw)])
    if kind == "max":
        return windows.max(axis=0)
    if a.get("count_include_pad", 0):
        return windows.sum(axis=0) / (kh * kw)
    counts = np.stack([ones[i:i + sh * (ho - 1) + 1:sh, j:j + sw * (wo - 1) + 1:sw]
                       for i in range(kh) for j in range(kw)]).sum(axis=0)
    return windows.sum(axis=0) / counts


def run_node(op, a, ins):
    x = ins[0] if ins else None
    if op == "Identity":
        return x
    if op in ("Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Equal", "Less", "Greater", "LessOrEqual",
              "GreaterOrEqual", "And", "Or"):
        f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide, "Pow": np.power,
             "Max": np.maximum, "Min": np.minimum, "Equal": np.equal, "Less": np.less, "Greater": np.greater,
             "LessOrEqual": np.less_equal, "GreaterOrEqual": np.greater_equal, "And": np.logical_and,
             "Or": np.logical_or}[op]
        return f(ins[0], ins[1])
    unary = {"Relu": lambda v: np.maximum(v, 0), "Neg": np.negative, "Abs": np.abs, "Exp": np.exp, "Log": np.log,
             "Sqrt": np.sqrt, "Reciprocal": lambda v: 1 / v, "Sin": np.sin, "Cos": np.cos, "Tanh": np.tanh,
             "Sigmoid": lambda v: 1 / (1 + np.exp(-v)), "Floor": np.floor, "Sign": np.sign, "Not": np.logical_not}
    if op in unary:
        return unary[op](x)
    if op == "Where":
        return np.where(ins[0], ins[1], ins[2])
    if op == "MatMul":
        return np.matmul(ins[0], ins[1])
    if op == "Transpose":
        return np.transpose(x, a.get("perm"))
    if op == "Reshape":
        return np.reshape(x, [int(d) for d in ins[1]])
    if op == "Expand":
        return np.broadcast_to(x, [int(d) for d in ins[1]])
    if op == "Conv":
        return conv(x, ins[1], a) + (ins[2].reshape(1, -1, 1, 1) if len(ins) > 2 else 0)
    if op == "MaxPool":
        return pool(x, a, "max")
    if op == "AveragePool":
        return pool(x, a, "avg")
    if op == "BatchNormalization":
        shape = (1, -1) + (1,) * (x.ndim - 2)
        scale, bias, mean, var = [v.reshape(shape) for v in ins[1:5]]
        return (x - mean) / np.sqrt(var + a.get("epsilon", 1e-5)) * scale + bias
    if op in ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean"):
        axes = tuple(int(v) for v in ins[1]) if op == "ReduceSum" else tuple(a["axes"])
        f = {"ReduceSum": np.sum, "ReduceMax": np.max, "ReduceMin": np.min, "ReduceMean": np.mean}[op]
        return f(x, axis=axes, keepdims=bool(a.get("keepdims", 1)))
    if op in ("Softmax", "LogSoftmax"):
        e = np.exp(x - x.max(axis=a.get("axis", -1), keepdims=True))
        s = e / e.sum(axis=a.get("axis", -1), keepdims=True)
        return s if op == "Softmax" else np.log(s)
    if op == "Concat":
        return np.concatenate(ins, axis=a["axis"])
    if op == "Cast":
        return x.astype(onnx.helper.tensor_dtype_to_np_dtype(a["to"]))
    if op == "Slice":
        starts, ends, axes, steps = [list(map(int, v)) for v in ins[1:5]]
        index = [slice(None)] * x.ndim
        for st, en, ax, sp in zip(starts, ends, axes, steps):
            index[ax] = slice(st, en, sp)
        return x[tuple(index)]
    if op == "Pad":
        r = x.ndim
        pads = [int(v) for v in ins[1]]
        value = float(ins[2]) if len(ins) > 2 else 0.0
        return np.pad(x, [(pads[d], pads[r + d]) for d in range(r)], constant_values=value)
    if op == "Erf":
        import math
        return np.vectorize(math.erf)(x)
    if op == "Gather":
        return np.take(x, ins[1].astype(np.int64), axis=a.get("axis", 0))
    raise NotImplementedError("the checker's NumPy interpreter has no " + op)


def evaluate(model, inputs):
    values = {t.name: numpy_helper.to_array(t).astype(np.float64) if numpy_helper.to_array(t).dtype.kind == "f"
              else numpy_helper.to_array(t) for t in model.graph.initializer}
    values.update(inputs)
    for node in model.graph.node:
        out = run_node(node.op_type, attrs_of(node), [values[i] for i in node.input])
        values[node.output[0]] = out
    return [values[o.name] for o in model.graph.output]


def declared_shape(info):
    return [d.dim_value for d in info.type.tensor_type.shape.dim]


def main():
    path, input_path, expected_path = sys.argv[1], sys.argv[2], sys.argv[3]
    opset = int(sys.argv[4]) if len(sys.argv) > 4 else 13
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    assert model.opset_import[0].version == opset, model.opset_import
    print("onnx.checker: ok (opset %d, %d nodes, %d initializers)" %
          (opset, len(model.graph.node), len(model.graph.initializer)))
    # ONNX's inference from the inputs alone, compared with what MSL declared.
    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    del bare.graph.value_info[:]
    inferred = shape_inference.infer_shapes(bare, check_type=True, strict_mode=True)
    got = {v.name: declared_shape(v) for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    want = {v.name: declared_shape(v) for v in list(model.graph.value_info) + list(model.graph.output)}
    for name, shape in want.items():
        assert got.get(name) == shape, "%s: ONNX infers %s, the model declares %s" % (name, got.get(name), shape)
    print("shape inference: all %d declared shapes agree (output %s)" %
          (len(want), [declared_shape(o) for o in model.graph.output]))
    x = np.load(input_path)
    if x.dtype.kind == "f":
        x = x.astype(np.float64)
    expected = np.load(expected_path)
    (y,) = evaluate(model, {model.graph.input[0].name: x})
    err = np.max(np.abs(y - expected) / (1e-3 + np.abs(expected)))
    assert y.shape == expected.shape, "output shape %s, MSL's %s" % (y.shape, expected.shape)
    assert err < 1e-3, "NumPy evaluation differs from MSL's output by %g (relative)" % err
    print("NumPy evaluation: equals MSL's output %s (max relative error %.1e)" % (list(y.shape), err))


if __name__ == "__main__":
    main()
