#!/usr/bin/python3
"""PyTorch peer of pstrain's N-gram language model benchmark (nplm_vs_pytorch.sh).

The network of `pstrain --model nplm --embedding-dim M --hidden H [--direct]` (Bengio et al. 2003): the N-1
context ids through one shared table nn.Embedding(V, M, sparse=True), concatenated, a tanh layer of H, a linear
layer to the V words, plus (--direct) a bias-free linear layer from the concatenated embeddings to the words;
mean softmax cross-entropy. Optimiser: sgd (torch.optim.SGD takes the table's sparse gradient) or adam (Adam for
the dense layers, SparseAdam for the table: PyTorch's lazy Adam, as pstrain's row tables do). One thread, the
training windows of pstrain's token shards in memory as tensors, a plain loop with no DataLoader.

Prints one JSON line: words/s of each timed pass (the training loop only: shuffle, batch gather, forward,
backward, step), and the test perplexity after the last pass (outside the clock) as a sanity figure.
Use Debian's interpreter (/usr/bin/python3) with python3-torch and python3-h5py.
"""

import argparse
import glob
import json
import math
import os
import sys
import time

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"  # one thread, before torch is imported

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", required=True, help="pstrain-data brown|text output (train-NNNNN.h5, test.h5)")
    p.add_argument("--shards", type=int, default=0, help="train on the first N shards only (0: all)")
    p.add_argument("--embedding-dim", type=int, default=60)
    p.add_argument("--hidden", type=int, default=50)
    p.add_argument("--direct", action="store_true")
    p.add_argument("--optimizer", choices=("sgd", "adam"), default="adam")
    p.add_argument("--lr", type=float, default=0.002)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--passes", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    return p.parse_args()


def read(path):
    with h5py.File(path, "r") as f:
        ids = torch.from_numpy(np.asarray(f["features"], dtype=np.float32)).long()  # ids stored as int32 or float
        labels = torch.from_numpy(np.asarray(f["labels"], dtype=np.int64))
        vocab = int(f.attrs["vocab_size"])
    return ids, labels, vocab


class Nplm(nn.Module):
    def __init__(self, vocab, context, m, h, direct):
        super().__init__()
        self.embed = nn.Embedding(vocab, m, sparse=True)
        self.hidden = nn.Linear(context * m, h)
        self.logits = nn.Linear(h, vocab)
        self.direct = nn.Linear(context * m, vocab, bias=False) if direct else None

    def forward(self, ids):
        x = self.embed(ids).flatten(1)
        out = self.logits(torch.tanh(self.hidden(x)))
        return out + self.direct(x) if self.direct is not None else out


def optimisers(model, kind, lr):
    table = [model.embed.weight]
    dense = [p for n, p in model.named_parameters() if not n.startswith("embed.")]
    if kind == "sgd":
        return [torch.optim.SGD(table + dense, lr=lr)]
    return [torch.optim.SparseAdam(table, lr=lr), torch.optim.Adam(dense, lr=lr)]


@torch.no_grad()
def perplexity(model, ids, labels, batch=1000):
    model.eval()
    total = 0.0
    for i in range(0, len(labels), batch):
        total += nn.functional.cross_entropy(model(ids[i:i + batch]), labels[i:i + batch], reduction="sum").item()
    model.train()
    return math.exp(total / len(labels))


def main():
    args = parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    shards = sorted(glob.glob(os.path.join(args.data_dir, "train-[0-9][0-9][0-9][0-9][0-9].h5")))
    if args.shards:
        shards = shards[:args.shards]
    if not shards:
        raise SystemExit(f"torch_nplm.py: no train-NNNNN.h5 in {args.data_dir}")
    parts = [read(s) for s in shards]
    ids, labels, vocab = torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts]), parts[0][2]
    model = Nplm(vocab, ids.shape[1], args.embedding_dim, args.hidden, args.direct)
    opts = optimisers(model, args.optimizer, args.lr)
    loss_fn = nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(args.seed)
    per_pass = []
    for _ in range(args.passes):
        start = time.perf_counter()
        order = torch.randperm(len(labels), generator=generator)
        for first in range(0, len(labels), args.batch_size):
            idx = order[first:first + args.batch_size]
            for o in opts:
                o.zero_grad(set_to_none=True)
            loss = loss_fn(model(ids[idx]), labels[idx])
            loss.backward()
            for o in opts:
                o.step()
        per_pass.append(len(labels) / (time.perf_counter() - start))
    result = {"framework": "pytorch", "torch_version": torch.__version__, "threads": torch.get_num_threads(),
              "optimizer": args.optimizer, "batch_size": args.batch_size, "train_words": len(labels),
              "words_per_sec": per_pass[-1], "words_per_sec_per_pass": per_pass}
    test_ids, test_labels, _ = read(os.path.join(args.data_dir, "test.h5"))
    result["test_perplexity"] = perplexity(model, test_ids, test_labels)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
