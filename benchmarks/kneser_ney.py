#!/usr/bin/python3
"""A calibration baseline for the language-model figures: interpolated Kneser-Ney (absolute discount 0.75) of
order N on pstrain's token shards, the same split and vocabulary as pstrain trains on.

    /usr/bin/python3 benchmarks/kneser_ney.py data/brown [N]      # N = 3 by default (N <= the data's n-gram)

Prints the validation and test perplexity. The figures of Bengio et al. 2003 are relative to their corpus
edition; on another edition (pstrain's Brown has a smaller vocabulary) compare a network's gain over this
baseline instead. A plain-Python counter model: a minute or two on Brown.
"""
import collections
import glob
import math
import os
import sys

import h5py
import numpy as np


def windows(paths):
    parts = []
    for path in paths:
        with h5py.File(path, "r") as f:
            ids = np.asarray(f["features"]).astype(np.int64)
            parts.append(np.hstack([ids, np.asarray(f["labels"]).astype(np.int64)[:, None]]))
    return np.vstack(parts)


def main():
    data, order = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
    train = windows(sorted(glob.glob(os.path.join(data, "train-[0-9][0-9][0-9][0-9][0-9].h5"))))
    width = train.shape[1]
    if not 1 <= order <= width:
        raise SystemExit(f"kneser_ney.py: order {order} outside 1..{width} (the data's n-gram)")
    vocab = sum(1 for _ in open(os.path.join(data, "vocab.txt"), encoding="utf-8"))
    discount = 0.75
    # counts[k]: n-grams of order k (the highest order counts tokens, the lower ones continuation types).
    counts = [None] + [collections.Counter() for _ in range(order)]
    for row in train.tolist():
        counts[order][tuple(row[width - order:])] += 1
    for k in range(order, 1, -1):
        for gram in counts[k]:
            counts[k - 1][gram[1:]] += 1
    totals = [None] + [collections.Counter() for _ in range(order)]
    types = [None] + [collections.Counter() for _ in range(order)]
    for k in range(1, order + 1):
        for gram, c in counts[k].items():
            totals[k][gram[:-1]] += c
            types[k][gram[:-1]] += 1

    def probability(context, word, k):
        if k == 0:
            return 1.0 / vocab
        history = tuple(context[len(context) - (k - 1):]) if k > 1 else ()
        lower = probability(context, word, k - 1)
        total = totals[k].get(history, 0)
        if total == 0:
            return lower
        seen = counts[k].get(history + (word,), 0)
        return max(seen - discount, 0) / total + discount * types[k][history] / total * lower

    for split in ("valid", "test"):
        path = os.path.join(data, f"{split}.h5")
        if not os.path.exists(path):
            continue
        rows = windows([path]).tolist()
        log_sum = sum(math.log(probability(row[:-1], row[-1], order)) for row in rows)
        print(f"Kneser-Ney order {order}: {split} perplexity {math.exp(-log_sum / len(rows)):.1f}")


if __name__ == "__main__":
    main()
