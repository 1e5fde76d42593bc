#!/usr/bin/python3
"""Checks an exported model against pstrain: onnx.checker accepts the file, the graph evaluated outside pstrain
(onnx_numpy.py, float64) gives pstrain's logits on the data within 1e-5 relative, and the same accuracy (and
perplexity; for a click model the same AUC and log-loss) as `pstrain evaluate` reported.

    check_export.py MODEL.onnx SHARD.h5 PSTRAIN_LOGITS.npy EVALUATION.json NAME [--external-data]

A click model (a CTR shard) gets its dense features as "input" and, per embedding_bag layer, its bags as the
hashed, padded rows the documentation describes (ctr_rows.py), built here from the shard's raw ids.

The relative difference of a logit is |onnx - pstrain| / max(|pstrain|, s), s the largest |logit| of its
sample's row: logits near 0 are measured against the scale of their row rather than against themselves. A click
model's row is one logit, so there s is the largest |logit| of the batch of 250 samples it is evaluated in.

--external-data: the file must hold its largest weights as ONNX external data, in MODEL.onnx.data at offsets that
are multiples of 4096, no inline weight larger than an external one, and onnx.checker must accept the file by
path (it resolves the side file) and onnx.load read the side file back; without it, no weight may be external.
Prints one line of figures; exits 1 naming what differs.
"""
import json
import os
import sys

import h5py
import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ctr_rows  # noqa: E402
import onnx_numpy  # noqa: E402

TOLERANCE = 1e-5
# Two logits within float32 rounding of each other may tie or order either way: 1/(2 P N) per pair (P clicks and
# N non-clicks; 400 test samples: ~2e-5).
AUC_TOLERANCE = 1e-4
BATCH = 250


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def image_feeds(model, shard):
    """The shard's samples as the graph's input wants them (NCHW images, int64 ids, or vectors)."""
    with h5py.File(shard, "r") as f:
        features = f["features"][()]
        labels = f["labels"][()].astype(np.int64)
        shape = [int(e) for e in f.attrs["sample_shape"]]
    tensor = model.graph.input[0].type.tensor_type
    dims = [d.dim_value for d in tensor.shape.dim[1:]]
    if tensor.elem_type == onnx.TensorProto.INT64:
        x = features.astype(np.int64).reshape([-1] + dims)
    else:
        x = features.astype(np.float64).reshape([-1] + shape)
        if len(dims) == 3:  # the shard's channels-last samples, NCHW for the graph
            x = x.reshape(x.shape[0], shape[0], shape[1], -1).transpose(0, 3, 1, 2)
        if list(x.shape[1:]) != dims:
            raise SystemExit(f"FAIL: samples of shape {x.shape[1:]} for a graph input of {dims}")
    x = np.ascontiguousarray(x)
    return (lambda first, last: {"input": x[first:last]}), labels


def ctr_feeds(model, shard):
    """A CTR shard's samples as an exported click model's inputs: "input" (the dense features) where the graph
    reads it, and "<layer>.rows" per embedding_bag, hashed from the raw ids ("<layer>.ids" of a keyed table: the
    raw ids themselves)."""
    with h5py.File(shard, "r") as f:
        dense = f["dense"][()].astype(np.float64)
        labels = f["labels"][()].astype(np.int64)
        names = text(f.attrs["field_names"]).split(",")
        ids = [(f["ids"][name]["values"][()], f["ids"][name]["offsets"][()]) for name in names]
    layers = ctr_rows.embedding_bags(model)
    declared = {i.name for i in model.graph.input}
    if set(layers) != declared - {"input"}:
        raise SystemExit(f"FAIL: graph inputs {sorted(declared)}, metadata names {sorted(layers)}")

    def bags(field, sample):
        values, offsets = ids[field]
        return [int(v) for v in values[offsets[sample]:offsets[sample + 1]]]

    def feeds(first, last):
        out = {"input": dense[first:last]} if "input" in declared else {}
        for name, layer in layers.items():
            samples = [[bags(field, s) for field in layer["fields"]] for s in range(first, min(last, len(labels)))]
            out[name] = ctr_rows.bag_rows(samples, layer)
        return out
    return feeds, labels


def check_file(path, name, external):
    """The file as written: checked by path (a tensor's external data must be in the side file it names) and its
    shapes inferred strictly, as onnx.checker's full check does (on the file without its weights: a model past
    2 GB cannot be checked in memory); its external data where expected. Returns it loaded whole."""
    onnx.checker.check_model(path)
    bare = onnx.load(path, load_external_data=False)
    onnx.shape_inference.infer_shapes(bare, check_type=True, strict_mode=True)
    outside = [t for t in bare.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    if not external:
        if outside:
            raise SystemExit(f"FAIL {name}: {len(outside)} weight(s) as external data, none expected")
        model = onnx.load(path)
        onnx.checker.check_model(model, full_check=True)
        return model
    if not outside:
        raise SystemExit(f"FAIL {name}: no weight as external data")
    side = os.path.basename(path) + ".data"
    smallest_outside = None
    for tensor in outside:
        entries = {e.key: e.value for e in tensor.external_data}
        length = int(np.prod(tensor.dims)) * 4
        if entries.get("location") != side or int(entries["offset"]) % 4096 or int(entries["length"]) != length:
            raise SystemExit(f"FAIL {name}: {tensor.name}'s external data {entries} (expected {side}, {length} bytes)")
        smallest_outside = length if smallest_outside is None else min(smallest_outside, length)
    inline = [t for t in bare.graph.initializer if t.data_location != onnx.TensorProto.EXTERNAL
              and t.data_type == onnx.TensorProto.FLOAT]
    larger = [t.name for t in inline if len(t.raw_data) > smallest_outside]
    if larger:
        raise SystemExit(f"FAIL {name}: {larger} inline, larger than an external weight of {smallest_outside} bytes")
    if os.path.getsize(path) >= sum(int(np.prod(t.dims)) * 4 for t in outside):
        raise SystemExit(f"FAIL {name}: the .onnx is not smaller than its external weights")
    model = onnx.load(path)  # reads the side file
    print(f"{name}: {len(outside)} of {len(bare.graph.initializer)} weights as external data in {side} "
          f"({os.path.getsize(os.path.join(os.path.dirname(path), side))} bytes)")
    return model


def auc(scores, labels):
    """Exact ROC AUC, ties counted half (as pstrain's report/ctr_metrics.h)."""
    _, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    ranks = (np.cumsum(counts) - (counts - 1) / 2.0)[inverse]  # average 1-based rank of each score
    positives = int((labels == 1).sum())
    negatives = len(labels) - positives
    return (ranks[labels == 1].sum() - positives * (positives + 1) / 2.0) / (positives * negatives)


def compare(model, feeds, labels, expected_all, name):
    """Runs the graph a batch at a time: the worst relative logit difference, and the graph's outputs."""
    worst, outputs = 0.0, []
    for i in range(0, len(labels), BATCH):
        out = onnx_numpy.run(model, feeds(i, i + BATCH))
        logits = out["logits"]
        expected = np.asarray(expected_all[i:i + BATCH], dtype=np.float64).reshape(logits.shape[0], -1)
        if expected.shape != logits.shape:
            raise SystemExit(f"FAIL {name}: pstrain's logits {expected.shape}, the graph's {logits.shape}")
        scale = np.abs(expected).max(axis=1 if expected.shape[1] > 1 else None, keepdims=True)
        worst = max(worst, float((np.abs(logits - expected) / np.maximum(np.abs(expected), scale)).max()))
        outputs.append(out)
    return worst, outputs


def classifier_figures(outputs, labels):
    """Accuracy by arg-max of the logits, loss from the "probabilities" output (the softmax)."""
    correct, loss_sum, first = 0, 0.0, 0
    for out in outputs:
        logits, probabilities = out["logits"], out["probabilities"]
        batch_labels = labels[first:first + len(logits)]
        correct += int((logits.argmax(axis=1) == batch_labels).sum())
        loss_sum += float(-np.log(probabilities[np.arange(len(batch_labels)), batch_labels]).sum())
        first += len(logits)
    return {"accuracy": correct / len(labels), "loss": loss_sum / len(labels)}


def click_figures(outputs, labels):
    """A click predicted where the logit is positive (pstrain's rule), log-loss from the "probabilities" output
    (the sigmoid), AUC from the logits."""
    z = np.concatenate([out["logits"] for out in outputs])[:, 0]
    p = np.concatenate([out["probabilities"] for out in outputs])[:, 0]
    y = labels == 1
    logloss = float(-np.mean(np.where(y, np.log(p), np.log1p(-p))))
    return {"accuracy": float(np.mean((z > 0) == y)), "loss": logloss, "auc": auc(z, labels)}


def main():
    path, shard, logits_path, evaluation_path, name = sys.argv[1:6]
    model = check_file(path, name, "--external-data" in sys.argv[6:])
    with h5py.File(shard, "r") as f:
        click = "ctr_format_version" in f.attrs
    feeds, labels = (ctr_feeds if click else image_feeds)(model, shard)
    # pstrain's logits as a memory map, compared a batch at a time: a language model's (samples x vocabulary)
    # need not fit in memory.
    expected_all = np.load(logits_path, mmap_mode="r")
    if expected_all.shape[0] != len(labels):
        raise SystemExit(f"FAIL {name}: pstrain's logits {expected_all.shape}, {len(labels)} samples")
    worst, outputs = compare(model, feeds, labels, expected_all, name)
    ours = (click_figures if click else classifier_figures)(outputs, labels)
    with open(evaluation_path) as f:
        evaluation = json.load(f)
    line = (f"{name}: samples {len(labels)}  accuracy pstrain {evaluation['accuracy']:.4f} onnx {ours['accuracy']:.4f}"
            f"  loss pstrain {evaluation['loss']:.6f} onnx {ours['loss']:.6f}  max relative logit difference "
            f"{worst:.2e}")
    problems = []
    if "perplexity" in evaluation:
        line += f"  perplexity pstrain {evaluation['perplexity']:.4f} onnx {np.exp(ours['loss']):.4f}"
        if abs(np.exp(ours["loss"]) / evaluation["perplexity"] - 1) > 1e-4:
            problems.append(f"perplexity {np.exp(ours['loss']):.4f} != pstrain's {evaluation['perplexity']:.4f}")
    if click:
        # This script's AUC of predict's logits is evaluate's (evaluate's batches round a few logits otherwise).
        own = auc(np.asarray(expected_all, dtype=np.float64), labels)
        line += f"  auc pstrain {evaluation['auc']:.6f} (predict's logits {own:.6f}) onnx {ours['auc']:.6f}"
        if abs(own - evaluation["auc"]) > AUC_TOLERANCE:
            problems.append(f"the AUC of predict's logits here {own:.6f} != evaluate's {evaluation['auc']:.6f}")
        if abs(ours["auc"] - evaluation["auc"]) > AUC_TOLERANCE:
            problems.append(f"AUC {ours['auc']:.6f} != pstrain's {evaluation['auc']:.6f}")
        if abs(ours["loss"] / evaluation["logloss"] - 1) > TOLERANCE:
            problems.append(f"log-loss {ours['loss']:.6f} != pstrain's {evaluation['logloss']:.6f}")
    print(line)
    if worst > TOLERANCE:
        problems.append(f"logits differ by {worst:.2e} relative (tolerance {TOLERANCE})")
    if f"{ours['accuracy']:.4f}" != f"{evaluation['accuracy']:.4f}":
        problems.append(f"accuracy {ours['accuracy']:.4f} != pstrain's {evaluation['accuracy']:.4f}")
    if problems:
        raise SystemExit(f"FAIL {name}: " + "; ".join(problems))


if __name__ == "__main__":
    main()
