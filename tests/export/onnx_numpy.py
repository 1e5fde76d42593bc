#!/usr/bin/python3
"""An evaluator of ONNX graphs over numpy, written for pstrain's export tests: it knows the operators pstrain
exports (lib/export/onnx_export.h) and nothing else, reads the weights from the model's initializers, and
computes in float64, so that the comparison with pstrain's float32 outputs measures pstrain's error, not its own.
An operator it does not know, or an attribute it does not expect, is an error: nothing is silently approximated.

    run(model, {"input": array, ...}) -> {"logits": array, "probabilities": array}

Float tensors are float64 here, int64 ones (ids, a click model's hashed rows, axes and indices) stay int64.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper


def attributes(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def expect(node, attrs, allowed):
    unknown = set(attrs) - set(allowed)
    if unknown:
        raise ValueError(f"{node.op_type} {node.name}: unexpected attributes {sorted(unknown)}")


def windows(x, kernel, strides):
    """x [N, C, H, W] -> [N, C, OH, OW, kh, kw] views of every window (no padding)."""
    n, c, h, w = x.shape
    kh, kw = kernel
    sh, sw = strides
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    s = x.strides
    return np.lib.stride_tricks.as_strided(x, (n, c, oh, ow, kh, kw),
                                           (s[0], s[1], s[2] * sh, s[3] * sw, s[2], s[3]), writeable=False)


def conv(x, weight, bias, attrs):
    pads = attrs.get("pads", [0, 0, 0, 0])
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    kernel = attrs.get("kernel_shape", weight.shape[2:])
    if list(kernel) != list(weight.shape[2:]):
        raise ValueError("Conv: kernel_shape does not match the weight")
    if attrs.get("group", 1) != 1 or any(d != 1 for d in attrs.get("dilations", [1, 1])):
        raise ValueError("Conv: groups and dilations are not pstrain's")
    patches = windows(np.ascontiguousarray(x), kernel, attrs.get("strides", [1, 1]))
    y = np.einsum("nchwij,ocij->nohw", patches, weight, optimize=True)
    return y if bias is None else y + bias[None, :, None, None]


def label_encoder(node, x, a):
    """ai.onnx.ml LabelEncoder-2 over int64 (a keyed table's raw ids -> its rows): each element of x found among
    keys_int64s becomes the value at the same place in values_int64s, any other default_int64."""
    expect(node, a, ["keys_int64s", "values_int64s", "default_int64"])
    keys = np.asarray(a["keys_int64s"], dtype=np.int64)
    values = np.asarray(a["values_int64s"], dtype=np.int64)
    if x.dtype != np.int64 or len(keys) != len(values) or len(np.unique(keys)) != len(keys):
        raise ValueError(f"LabelEncoder {node.name}: int64 input and distinct keys, one value each, expected")
    order = np.argsort(keys)
    at = np.clip(np.searchsorted(keys[order], x), 0, max(len(keys) - 1, 0))
    found = keys[order][at] == x if len(keys) else np.zeros(x.shape, dtype=bool)
    return np.where(found, values[order][at] if len(keys) else 0, a.get("default_int64", -1)).astype(np.int64)


def run_node(node, values):
    ins = [values[name] if name else None for name in node.input]
    a = attributes(node)
    op = node.op_type
    if node.domain not in ("", "ai.onnx"):
        if (node.domain, op) != ("ai.onnx.ml", "LabelEncoder"):
            raise ValueError(f"operator {node.domain}.{op} ({node.name}) is not one the evaluator knows")
        return label_encoder(node, ins[0], a)
    if op == "Identity":
        return ins[0]
    if op == "Relu":
        return np.maximum(ins[0], 0)
    if op == "Tanh":
        return np.tanh(ins[0])
    if op == "Sigmoid":
        return 1 / (1 + np.exp(-ins[0]))
    if op == "Transpose":
        expect(node, a, ["perm"])
        return np.transpose(ins[0], a["perm"])
    if op == "Flatten":
        expect(node, a, ["axis"])
        axis = a.get("axis", 1)
        return ins[0].reshape(int(np.prod(ins[0].shape[:axis])), -1)
    if op == "Gemm":
        expect(node, a, ["transB", "transA", "alpha", "beta"])
        if a.get("transA", 0) or a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0:
            raise ValueError("Gemm: only transB is pstrain's")
        w = ins[1].T if a.get("transB", 0) else ins[1]
        y = ins[0] @ w
        return y if len(ins) < 3 or ins[2] is None else y + ins[2]
    if op == "Conv":
        expect(node, a, ["kernel_shape", "strides", "pads", "group", "dilations"])
        return conv(ins[0], ins[1], ins[2] if len(ins) > 2 else None, a)
    if op in ("MaxPool", "AveragePool"):
        expect(node, a, ["kernel_shape", "strides"])
        w = windows(np.ascontiguousarray(ins[0]), a["kernel_shape"], a.get("strides", [1, 1]))
        return w.max(axis=(4, 5)) if op == "MaxPool" else w.mean(axis=(4, 5))
    if op == "GlobalAveragePool":
        return ins[0].mean(axis=(2, 3), keepdims=True)
    if op == "BatchNormalization":
        expect(node, a, ["epsilon", "momentum"])
        x, scale, bias, mean, var = ins
        shape = (1, -1) + (1,) * (x.ndim - 2)
        inv = scale / np.sqrt(var + a.get("epsilon", 1e-5))
        return (x - mean.reshape(shape)) * inv.reshape(shape) + bias.reshape(shape)
    if op == "Add":
        return ins[0] + ins[1]
    if op == "Mul":
        return ins[0] * ins[1]
    if op == "Concat":
        return np.concatenate(ins, axis=a["axis"])
    if op == "Cast":
        expect(node, a, ["to"])
        types = {TensorProto.INT64: np.int64, TensorProto.FLOAT: np.float64}
        if a["to"] not in types:
            raise ValueError(f"Cast to {a['to']} is not pstrain's")
        return ins[0].astype(types[a["to"]])
    if op == "Gather":
        expect(node, a, ["axis"])
        indices = ins[1]
        if indices.dtype != np.int64 or (indices < 0).any() or (indices >= ins[0].shape[a.get("axis", 0)]).any():
            raise ValueError(f"Gather {node.name}: indices outside [0, {ins[0].shape[a.get('axis', 0)]})")
        return np.take(ins[0], indices, axis=a.get("axis", 0))
    if op == "ReduceSum":
        expect(node, a, ["keepdims"])
        if len(ins) < 2 or ins[1] is None:
            raise ValueError("ReduceSum: pstrain always names its axes")
        return ins[0].sum(axis=tuple(int(i) for i in ins[1]), keepdims=bool(a.get("keepdims", 1)))
    if op == "Unsqueeze":
        return np.expand_dims(ins[0], tuple(int(i) for i in ins[1]))
    if op == "MatMul":
        return np.matmul(ins[0], ins[1])
    if op == "Sub":
        return ins[0] - ins[1]
    if op == "Div":
        return ins[0] / ins[1]
    if op == "Max":
        return np.maximum(ins[0], ins[1])
    if op == "Less":
        return ins[0] < ins[1]
    if op == "Softmax":
        axis = a.get("axis", -1)
        shifted = ins[0] - ins[0].max(axis=axis, keepdims=True)
        e = np.exp(shifted)
        return e / e.sum(axis=axis, keepdims=True)
    raise ValueError(f"operator {op} ({node.name}) is not one the evaluator knows")


def run(model, feeds):
    values = {}
    for t in model.graph.initializer:
        array = numpy_helper.to_array(t)
        values[t.name] = array if array.dtype == np.int64 else array.astype(np.float64)
    values.update(feeds)
    for node in model.graph.node:  # ONNX requires topological order
        values[node.output[0]] = run_node(node, values)
    return {o.name: values[o.name] for o in model.graph.output}
