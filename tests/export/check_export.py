#!/usr/bin/python3
"""Checks an exported model against pstrain: onnx.checker accepts the file, the graph evaluated outside pstrain
(onnx_numpy.py, float64) gives pstrain's logits on the data within 1e-5 relative, and the same accuracy (and
perplexity) as `pstrain evaluate` reported.

    check_export.py MODEL.onnx SHARD.h5 PSTRAIN_LOGITS.npy EVALUATION.json NAME

The relative difference of a logit is |onnx - pstrain| / max(|pstrain|, s), s the largest |logit| of its
sample's row: logits near 0 are measured against the scale of their row rather than against themselves.
Prints one line of figures; exits 1 naming what differs.
"""
import json
import os
import sys

import h5py
import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_numpy  # noqa: E402

TOLERANCE = 1e-5
BATCH = 250


def graph_inputs(model, shard):
    """The shard's samples as the graph's input wants them (NCHW images, int64 ids, or vectors)."""
    with h5py.File(shard, "r") as f:
        features = f["features"][()]
        labels = f["labels"][()].astype(np.int64)
        shape = [int(e) for e in f.attrs["sample_shape"]]
    tensor = model.graph.input[0].type.tensor_type
    dims = [d.dim_value for d in tensor.shape.dim[1:]]
    if tensor.elem_type == onnx.TensorProto.INT64:
        return features.astype(np.int64).reshape([-1] + dims), labels
    x = features.astype(np.float64).reshape([-1] + shape)
    if len(dims) == 3:  # the shard's channels-last samples, NCHW for the graph
        x = x.reshape(x.shape[0], shape[0], shape[1], -1).transpose(0, 3, 1, 2)
    if list(x.shape[1:]) != dims:
        raise SystemExit(f"FAIL: samples of shape {x.shape[1:]} for a graph input of {dims}")
    return np.ascontiguousarray(x), labels


def main():
    path, shard, logits_path, evaluation_path, name = sys.argv[1:6]
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    x, labels = graph_inputs(model, shard)
    # pstrain's logits as a memory map, compared a batch at a time: a language model's (samples x vocabulary)
    # need not fit in memory.
    expected_all = np.load(logits_path, mmap_mode="r")
    if expected_all.shape[0] != len(labels):
        raise SystemExit(f"FAIL {name}: pstrain's logits {expected_all.shape}, {len(labels)} samples")
    worst, correct, loss_sum = 0.0, 0, 0.0
    for i in range(0, len(x), BATCH):
        out = onnx_numpy.run(model, {"input": x[i:i + BATCH]})
        logits, probabilities = out["logits"], out["probabilities"]
        expected = np.asarray(expected_all[i:i + BATCH], dtype=np.float64)
        if expected.shape != logits.shape:
            raise SystemExit(f"FAIL {name}: pstrain's logits {expected.shape}, the graph's {logits.shape}")
        scale = np.abs(expected).max(axis=1, keepdims=True)
        worst = max(worst, float((np.abs(logits - expected) / np.maximum(np.abs(expected), scale)).max()))
        batch_labels = labels[i:i + BATCH]
        correct += int((logits.argmax(axis=1) == batch_labels).sum())
        loss_sum += float(-np.log(probabilities[np.arange(len(batch_labels)), batch_labels]).sum())
    accuracy = correct / len(labels)
    loss = loss_sum / len(labels)
    with open(evaluation_path) as f:
        evaluation = json.load(f)
    line = (f"{name}: samples {len(labels)}  accuracy pstrain {evaluation['accuracy']:.4f} onnx {accuracy:.4f}  "
            f"loss pstrain {evaluation['loss']:.6f} onnx {loss:.6f}  max relative logit difference {worst:.2e}")
    if "perplexity" in evaluation:
        line += f"  perplexity pstrain {evaluation['perplexity']:.4f} onnx {np.exp(loss):.4f}"
    print(line)
    problems = []
    if worst > TOLERANCE:
        problems.append(f"logits differ by {worst:.2e} relative (tolerance {TOLERANCE})")
    if f"{accuracy:.4f}" != f"{evaluation['accuracy']:.4f}":
        problems.append(f"accuracy {accuracy:.4f} != pstrain's {evaluation['accuracy']:.4f}")
    if "perplexity" in evaluation and abs(np.exp(loss) / evaluation["perplexity"] - 1) > 1e-4:
        problems.append(f"perplexity {np.exp(loss):.4f} != pstrain's {evaluation['perplexity']:.4f}")
    if problems:
        raise SystemExit(f"FAIL {name}: " + "; ".join(problems))


if __name__ == "__main__":
    main()
