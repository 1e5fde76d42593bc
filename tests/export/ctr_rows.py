#!/usr/bin/python3
"""The inputs of an exported click model (docs/using-a-model.md, "Click models"): each embedding_bag layer L reads
"L.rows", int64 [samples, fields of L, bag length], the rows its ids hash to, each bag padded with the table's row
count R. hashed_row is pstrain's lib/nn/id_hash.h in Python, as the documentation gives it; the seed, R and the
fields of each layer are in the model's metadata ("pstrain.embedding_bag.L").
"""
import numpy as np

MASK = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def hashed_row(raw_id, seed, rows):
    """The row of a raw 64-bit id in a table of `rows` rows hashed with `seed`."""
    return splitmix64((raw_id + splitmix64(seed)) & MASK) % rows


def embedding_bags(model):
    """{input name: {"fields": [...], "seed": S, "rows": R, "pad": R, "pooling": ...}} from the model's metadata;
    a table keyed by the raw id: {"fields": [...], "keyed": True, "pad": the pad id, "pooling": ...}."""
    layers = {}
    for prop in model.metadata_props:
        if prop.key.startswith("pstrain.embedding_bag."):
            entries = dict(item.split("=", 1) for item in prop.value.split())
            layer = {"fields": [int(f) for f in entries["fields"].split(",")], "pad": int(entries["pad"]),
                     "pooling": entries["pooling"], "keyed": entries.get("keys") == "exact"}
            if not layer["keyed"]:
                layer.update(seed=int(entries["seed"]), rows=int(entries["rows"]))
            layers[entries["input"]] = layer
    return layers


def signed(raw_id):
    """A raw 64-bit id as the int64 of the same bits (what a keyed table's input holds)."""
    return raw_id - (1 << 64) if raw_id >= 1 << 63 else raw_id


def bag_rows(bags, layer):
    """bags[sample][i]: the raw ids of the layer's i-th field for a sample -> int64 [samples, fields, L], L the
    longest bag (at least 1), padded with the layer's pad: the hashed rows, or a keyed table's raw ids."""
    length = max([1] + [len(bag) for sample in bags for bag in sample])
    rows = np.full((len(bags), len(layer["fields"]), length), layer["pad"], dtype=np.int64)
    for s, sample in enumerate(bags):
        for i, bag in enumerate(sample):
            if layer["keyed"]:
                rows[s, i, :len(bag)] = [signed(raw_id) for raw_id in bag]
            else:
                rows[s, i, :len(bag)] = [hashed_row(raw_id, layer["seed"], layer["rows"]) for raw_id in bag]
    return rows
