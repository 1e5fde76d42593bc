#!/usr/bin/python3
"""PyTorch peer of pstrain's click-through-rate benchmark (dlrm_vs_pytorch.sh, issue 41's bar).

A plain PyTorch DLRM loop as a competent user writes it, the same network as the model file that
dlrm_vs_pytorch.sh gives `pstrain --model-file` (the `--model dlrm` preset's shape, every table ROWS rows):
  bottom MLP  13 dense features -> --bottom-hidden (64) -> --embedding-dim (16), ReLU after every layer
  tables      one nn.EmbeddingBag(ROWS, D, mode="sum", sparse=True) per categorical field (26 for
              synthetic-ctr and Criteo): each sample's bag of ids -> the sum of the rows they hash to (an empty
              bag -> zeros)
  interaction DLRM's dot interaction: the bottom vector and the 26 field vectors (27 vectors), their pairwise
              dot products (strict upper triangle, row by row: 351), after the bottom vector (16 + 351 = 367)
  top MLP     367 -> --hidden (512,256), ReLU, -> 1 logit
Loss: binary cross-entropy with logits, the mean over the batch. Optimiser: torch.optim.Adagrad (PyTorch's
defaults: accumulator from 0, eps 1e-10, no lr decay; pstrain's adagrad is the same rule), one over the tables
(their sparse gradients: only the touched rows move) and one over the dense layers, both at --lr (0.05, pstrain's
default for its click models). Each pass reshuffles the training samples (torch.randperm) and steps through them
in batches of --batch-size (512), the last one partial, as pstrain does.

Matching pstrain (besides the shapes):
  - hashing: id -> row splitmix64(id + splitmix64(seed)) mod ROWS with seed = the field's index, exactly
    pstrain's lib/nn/id_hash.h for the tables `tableF embedding_bag field=F rows=ROWS seed=F` (the same rows
    collide on both sides). The ids are hashed into rows once, when the data are loaded, before any clock runs:
    what a PyTorch user does in preprocessing (pstrain hashes inside its step, in the timed loop).
  - initialisation: the rules, not the bits (different generators): dense weights U(-a, a) with
    a = sqrt(6 / fan_in) (pstrain's kaiming, every layer including the logit), zero biases, tables
    U(-limit, limit) with --table-limit 0.01 (the dlrm preset's limit=0.01).
  - metrics: test AUC exact (the rank-sum form over the sorted float32 logits, ties counting half, as pstrain's
    report/ctr_metrics.h), test logloss (mean BCE), NE (logloss over the entropy of the training click rate) and
    calibration (mean predicted probability over the actual click rate), computed outside the clock.
Differences: the order of samples (each side's own shuffle) and the initial bits. Both update only the rows a
step touched (pstrain locally since Adagrad leaves a zero gradient's rows as they are: modes/local.cc).

Input: a folder that `pstrain-data synthetic-ctr | criteo | movielens` wrote (docs/data.md, lib/data/ctr/
ctr_shard.h): train-NNNNN.h5 and test.h5, each with /dense float32 [N, 13], /labels int32 [N] and per field name
(root attribute field_names, in that order: field F is its F-th name) /ids/<name>/values uint64 (the bags one after
another) and /ids/<name>/offsets uint64 [N + 1]. All of it is read with h5py into tensors before the clock starts.

Timed: the training loop of each pass only (shuffle, batch gather of the dense rows and the bags, forward,
backward, both optimizer steps); loading, hashing and the test evaluation are not. One thread
(torch.set_num_threads(1), and OMP/MKL/OpenBLAS set to 1 before torch is imported), no DataLoader.

Output: one JSON line per pass on stdout (pass, samples_per_sec, pass_seconds, train_loss, test_auc,
test_logloss, test_ne, test_calibration, and the settings); progress on stderr. Pass 0 includes warm-up (first
touches of the tables' pages, allocator growth): dlrm_vs_pytorch.sh takes the mean over passes 1..N-1 when N > 1,
else pass 0, the rule it applies to pstrain's metrics.jsonl too.

--model deepfm: pstrain's `--model deepfm` preset instead (lib/nn/click_presets.cc, deepfm_text; written out in
examples/models/deepfm-criteo.model), every table ROWS rows (dlrm_vs_pytorch.sh's PSTRAIN_MODEL=deepfm):
  linear      per field a dim-1 nn.EmbeddingBag(ROWS, 1, sum, sparse=True), ids hashed with seed 1000 + the field
              (pstrain's `weightF embedding_bag dim=1 seed=1000+F`), the 26 weights summed (`linear add`); no wide
              part over the dense features, no global bias (the preset has neither)
  vectors     per field nn.EmbeddingBag(ROWS, D, sum, sparse=True), seed = the field (`vectorF ... seed=F`)
  fm          FM's second-order term over the 26 field vectors: sum over pairs i<j of <v_i, v_j>, computed as
              0.5 * sum_k ((sum_i v_ik)^2 - sum_i v_ik^2) (pstrain's fm layer)
  deep        concat(the 13 dense features, v_0 .. v_25) (13 + 26 D = 429) -> --hidden (here 400,400: the
              preset's default), ReLU, -> 1 (with its bias)
  logit       linear + fm + deep (`logit add inputs=linear,fm_term,deep loss=bce`)
Tables U(-limit, limit) at --table-limit 0.01 (the preset's limit=0.01, dim-1 tables included), dense layers
kaiming U(+-sqrt(6/fan_in)) with zero biases; Adagrad over the 52 tables' sparse gradients and over the deep MLP,
as for DLRM. --bottom-hidden does not apply. 26 x ROWS x 17 + the MLP's parameters, pstrain's count.

Use Debian's interpreter (/usr/bin/python3) with python3-torch and python3-h5py.
"""

import argparse
import glob
import json
import math
import os
import sys
import time

# Threads per process must be fixed before torch is imported.
_pre = argparse.ArgumentParser(add_help=False)
_pre.add_argument("--threads", type=int, default=1)
_THREADS = max(1, _pre.parse_known_args()[0].threads)
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = str(_THREADS)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # torch_common.py, from any working directory
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch_common as tc  # noqa: E402

MASK64 = (1 << 64) - 1


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", required=True, help="CTR folder (pstrain-data synthetic-ctr | criteo | movielens)")
    p.add_argument("--model", choices=("dlrm", "deepfm"), default="dlrm",
                   help="dlrm (default) or deepfm: pstrain's --model deepfm preset (see above)")
    p.add_argument("--passes", type=int, default=1)
    p.add_argument("--batch-size", "--batch", dest="batch_size", type=int, default=512)
    p.add_argument("--lr", type=float, default=0.05, help="Adagrad's learning rate, tables and dense layers")
    p.add_argument("--embedding-dim", type=int, default=16, help="D: every table's width and the bottom MLP's output")
    p.add_argument("--rows", type=int, default=2 ** 18, help="rows of every table (the ids are hashed into them)")
    p.add_argument("--bottom-hidden", default="64",
                   help="the bottom MLP's hidden widths, comma separated (its last layer is --embedding-dim)")
    p.add_argument("--hidden", default=None,
                   help="dlrm: the top MLP's hidden widths, comma separated (default 512,256); deepfm: the deep "
                        "MLP's (default 400,400, the preset's)")
    p.add_argument("--table-limit", type=float, default=0.01, help="tables start U(-limit, limit)")
    p.add_argument("--seed", type=int, default=1, help="torch's seed (initialisation) and the shuffle's")
    p.add_argument("--limit", type=int, default=0, help="train on the first N training samples only (0: all)")
    p.add_argument("--test-limit", type=int, default=0, help="evaluate on the first N test samples only (0: all)")
    p.add_argument("--eval-batch-size", type=int, default=4096)
    p.add_argument("--threads", type=int, default=1, help="intra-op CPU threads")
    args = p.parse_args(argv)
    if args.hidden is None:
        args.hidden = "512,256" if args.model == "dlrm" else "400,400"
    for name in ("passes", "batch_size", "embedding_dim", "rows", "eval_batch_size", "threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    for name in ("limit", "test_limit"):
        if getattr(args, name) < 0:
            p.error(f"--{name.replace('_', '-')} must be >= 0")
    if not (args.lr > 0 and math.isfinite(args.lr)):
        p.error("--lr must be positive")
    if not args.table_limit >= 0:
        p.error("--table-limit must be >= 0")
    try:
        args.bottom_widths, args.top_widths = tc.widths(args.bottom_hidden), tc.widths(args.hidden)
    except ValueError:
        p.error("--bottom-hidden and --hidden are comma-separated positive integers")
    if any(w < 1 for w in args.bottom_widths + args.top_widths):
        p.error("every hidden layer needs at least one unit")
    return args


# ---- data -------------------------------------------------------------------------------------------------------

def splitmix64_int(x):
    """pstrain's nn::splitmix64 on one Python integer."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def hashed_rows(ids, seed, rows):
    """nn::hashed_row of lib/nn/id_hash.h over a uint64 array: splitmix64(id + splitmix64(seed)) mod rows
    (numpy's uint64 arithmetic wraps modulo 2^64, as C++'s does), as int64 row indices."""
    with np.errstate(over="ignore"):
        x = ids.astype(np.uint64, copy=False) + np.uint64((splitmix64_int(seed) + 0x9E3779B97F4A7C15) & MASK64)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
        return (x % np.uint64(rows)).astype(np.int64)


def text_attr(f, name):
    value = f.attrs[name]
    return value.decode() if isinstance(value, bytes) else str(value)


def read_ctr(paths, rows, limit=0, seed_bases=(0,)):
    """The shards' samples (the first LIMIT when > 0), their ids hashed into table rows. Returns dense [N, F_dense]
    float32, labels [N] float32, rows: a tuple with, per seed base B of SEED_BASES, [all ids] int64 (field after
    field, field f hashed with seed B + f), and bounds [fields, N + 1] int64: sample s's bag of field f is
    rows[k][bounds[f, s]:bounds[f, s + 1]]. Field f's name is the f-th of field_names."""
    dense, labels, per_field, names, taken = [], [], None, None, 0
    for path in paths:
        if limit and taken >= limit:
            break
        with h5py.File(path, "r") as f:
            if "ctr_format_version" not in f.attrs:
                tc.fail(f"{path} is not a CTR shard (pstrain-data synthetic-ctr | criteo | movielens writes them)")
            these = text_attr(f, "field_names").split(",")
            if names is not None and these != names:
                tc.fail(f"{path} has fields {these}, earlier shards {names}")
            names = these
            n = int(f["labels"].shape[0])
            take = min(n, limit - taken) if limit else n
            taken += take
            dense.append(np.asarray(f["dense"][:take], dtype=np.float32))
            labels.append(np.asarray(f["labels"][:take], dtype=np.float32))
            if per_field is None:
                per_field = [([], []) for _ in names]
            for field, name in enumerate(names):
                offsets = np.asarray(f[f"ids/{name}/offsets"][:take + 1], dtype=np.int64)
                values = np.asarray(f[f"ids/{name}/values"][offsets[0]:offsets[-1]], dtype=np.uint64)
                per_field[field][0].append([hashed_rows(values, base + field, rows) for base in seed_bases])
                per_field[field][1].append(np.diff(offsets))
    if not dense:
        tc.fail(f"no samples in {', '.join(paths)}")
    labels = np.concatenate(labels)
    if labels.size and (labels.min() < 0 or labels.max() > 1):
        tc.fail("labels must be 0 or 1 (an unlabeled test.h5 cannot be evaluated)")
    all_rows, bounds, base = [[] for _ in seed_bases], [], 0
    for field_rows, lengths in per_field:
        lengths = np.concatenate(lengths)
        bounds.append(base + np.concatenate(([0], np.cumsum(lengths))))
        for k in range(len(seed_bases)):
            all_rows[k].append(np.concatenate([shard[k] for shard in field_rows]))
        base += int(lengths.sum())
    return (torch.from_numpy(np.concatenate(dense)), torch.from_numpy(labels),
            tuple(torch.from_numpy(np.concatenate(r)) for r in all_rows), torch.from_numpy(np.stack(bounds)), names)


def gather_bags(row_sets, bounds, idx):
    """The bags of samples IDX, field after field, as EmbeddingBag takes them: per set of rows of ROW_SETS (one per
    seed base, read_ctr), per field (its row indices, its offsets into them). One repeat_interleave for all."""
    starts, ends = bounds[:, idx], bounds[:, idx + 1]  # [fields, B]
    lengths = (ends - starts).reshape(-1)
    first = torch.cumsum(lengths, 0) - lengths  # where each bag starts in the batch's ids
    positions = torch.repeat_interleave(starts.reshape(-1) - first, lengths)
    positions += torch.arange(positions.numel())
    fields, b = starts.shape
    per_field_ids = lengths.view(fields, b).sum(1).tolist()
    first = first.view(fields, b)
    return [[(ids, first[f] - first[f, 0]) for f, ids in enumerate(torch.split(rows[positions], per_field_ids))]
            for rows in row_sets]


# ---- model ------------------------------------------------------------------------------------------------------

def relu_mlp(in_width, widths, relu_last):
    layers = []
    for i, width in enumerate(widths):
        layers.append(tc.kaiming_uniform_(nn.Linear(in_width, width), in_width))
        if relu_last or i + 1 < len(widths):
            layers.append(nn.ReLU())
        in_width = width
    return nn.Sequential(*layers)


class Dlrm(nn.Module):
    def __init__(self, dense_features, fields, rows, dim, bottom, top, table_limit):
        super().__init__()
        self.bottom = relu_mlp(dense_features, bottom + [dim], relu_last=True)
        self.tables = nn.ModuleList(nn.EmbeddingBag(rows, dim, mode="sum", sparse=True) for _ in range(fields))
        with torch.no_grad():
            for table in self.tables:
                table.weight.uniform_(-table_limit, table_limit)
        vectors = fields + 1
        upper = torch.triu_indices(vectors, vectors, offset=1)  # strict upper triangle, row by row
        self.register_buffer("upper_i", upper[0], persistent=False)
        self.register_buffer("upper_j", upper[1], persistent=False)
        self.top = relu_mlp(dim + vectors * (vectors - 1) // 2, top + [1], relu_last=False)

    seed_bases = (0,)  # table F hashes with seed F

    def forward(self, dense, bag_sets):
        bags = bag_sets[0]
        x = self.bottom(dense)
        vectors = torch.stack([x] + [table(ids, offsets) for table, (ids, offsets) in zip(self.tables, bags)], 1)
        dots = torch.bmm(vectors, vectors.transpose(1, 2))[:, self.upper_i, self.upper_j]
        return self.top(torch.cat([x, dots], 1)).squeeze(1)


class DeepFm(nn.Module):
    """pstrain's --model deepfm preset (lib/nn/click_presets.cc), every table ROWS rows."""

    seed_bases = (0, 1000)  # vector table F hashes with seed F, weight table F with 1000 + F

    def __init__(self, dense_features, fields, rows, dim, hidden, table_limit):
        super().__init__()
        self.weights = nn.ModuleList(nn.EmbeddingBag(rows, 1, mode="sum", sparse=True) for _ in range(fields))
        self.vectors = nn.ModuleList(nn.EmbeddingBag(rows, dim, mode="sum", sparse=True) for _ in range(fields))
        with torch.no_grad():
            for table in list(self.weights) + list(self.vectors):
                table.weight.uniform_(-table_limit, table_limit)
        self.deep = relu_mlp(dense_features + fields * dim, hidden + [1], relu_last=False)

    def forward(self, dense, bag_sets):
        vector_bags, weight_bags = bag_sets
        linear = torch.cat([table(ids, offsets) for table, (ids, offsets) in zip(self.weights, weight_bags)], 1)
        v = torch.stack([table(ids, offsets) for table, (ids, offsets) in zip(self.vectors, vector_bags)], 1)
        s = v.sum(1)
        fm = 0.5 * (s * s - (v * v).sum(1)).sum(1)
        deep = self.deep(torch.cat([dense, v.flatten(1)], 1)).squeeze(1)
        return linear.sum(1) + fm + deep


# ---- metrics ----------------------------------------------------------------------------------------------------

def exact_auc(logits, labels):
    """ROC AUC, ties counting half: (sum of the clicks' mid-ranks - P(P+1)/2) / (P N) over the sorted logits."""
    scores = logits.double().numpy()
    y = labels.numpy() > 0.5
    clicks = int(y.sum())
    others = len(y) - clicks
    if clicks == 0 or others == 0:
        return float("nan")
    order = np.argsort(scores, kind="stable")
    sorted_scores = scores[order]
    # Tied runs: every member gets the mean of the run's 1-based ranks.
    starts = np.flatnonzero(np.concatenate(([True], sorted_scores[1:] != sorted_scores[:-1])))
    run_lengths = np.diff(np.concatenate((starts, [len(scores)])))
    mid_ranks = np.repeat(starts + (run_lengths + 1) / 2.0, run_lengths)
    rank_sum = mid_ranks[y[order]].sum()
    return float((rank_sum - clicks * (clicks + 1) / 2.0) / (clicks * others))


@torch.no_grad()
def evaluate(model, data, batch, train_click_rate):
    dense, labels, rows, bounds = data
    model.eval()
    logits = []
    for first in range(0, len(labels), batch):
        idx = torch.arange(first, min(first + batch, len(labels)))
        logits.append(model(dense[idx], gather_bags(rows, bounds, idx)))
    model.train()
    logits = torch.cat(logits)
    logloss = nn.functional.binary_cross_entropy_with_logits(logits.double(), labels.double()).item()
    p = train_click_rate
    entropy = -(p * math.log(p) + (1 - p) * math.log(1 - p)) if 0 < p < 1 else float("nan")
    click_rate = labels.double().mean().item()
    return {
        "test_auc": exact_auc(logits, labels),
        "test_logloss": logloss,
        "test_ne": logloss / entropy,
        "test_calibration": torch.sigmoid(logits.double()).mean().item() / click_rate if click_rate > 0 else None,
    }


def finite_or_none(value):
    return value if value is None or math.isfinite(value) else None


# ---- main -------------------------------------------------------------------------------------------------------

def main():
    args = parse_args()
    tc.set_threads(args.threads)
    shards = tc.train_shards(args.data_dir)
    test_path = os.path.join(args.data_dir, "test.h5")
    if not os.path.isfile(test_path):
        tc.fail(f"no test.h5 in {args.data_dir}")
    load_start = time.perf_counter()
    seed_bases = DeepFm.seed_bases if args.model == "deepfm" else Dlrm.seed_bases
    dense, labels, rows, bounds, names = read_ctr(shards, args.rows, args.limit, seed_bases)
    test = read_ctr([test_path], args.rows, args.test_limit, seed_bases)
    if test[4] != names:
        tc.fail(f"test.h5 has fields {test[4]}, the training shards {names}")
    test = test[:4]
    load_seconds = time.perf_counter() - load_start
    n, fields = len(labels), len(names)
    train_click_rate = labels.double().mean().item()

    torch.manual_seed(args.seed)
    if args.model == "deepfm":
        model = DeepFm(dense.shape[1], fields, args.rows, args.embedding_dim, args.top_widths, args.table_limit)
    else:
        model = Dlrm(dense.shape[1], fields, args.rows, args.embedding_dim, args.bottom_widths, args.top_widths,
                     args.table_limit)
    # The tables (sparse gradients) apart from the dense layers, each in the model's own order.
    table_params = [p for m in model.modules() if isinstance(m, nn.EmbeddingBag) for p in m.parameters()]
    table_ids = {id(p) for p in table_params}
    dense_params = [p for p in model.parameters() if id(p) not in table_ids]
    optimizers = [torch.optim.Adagrad(table_params, lr=args.lr),  # sparse gradients: the touched rows only
                  torch.optim.Adagrad(dense_params, lr=args.lr)]
    loss_fn = nn.BCEWithLogitsLoss()
    generator = torch.Generator().manual_seed(args.seed)
    tag = f"[torch {args.model}]"
    print(f"{tag} {n} training samples, {len(test[1])} test, {fields} fields x {args.rows} rows x "
          f"{args.embedding_dim}, {sum(p.numel() for p in model.parameters())} parameters; loaded and hashed in "
          f"{load_seconds:.1f} s", file=sys.stderr)

    settings = {
        "framework": "pytorch", "model": args.model, "torch_version": torch.__version__,
        "threads": torch.get_num_threads(), "batch_size": args.batch_size, "lr": args.lr,
        "optimizer": "adagrad (sparse tables + dense)", "embedding_dim": args.embedding_dim, "rows": args.rows,
        "fields": fields, "bottom_hidden": args.bottom_hidden if args.model == "dlrm" else None,
        "hidden": args.hidden, "table_limit": args.table_limit,
        "seed": args.seed, "train_samples": n, "test_samples": len(test[1]), "load_seconds": load_seconds,
    }
    for pass_index in range(args.passes):
        start = time.perf_counter()
        order = torch.randperm(n, generator=generator)
        loss_sum = torch.zeros((), dtype=torch.float64)
        for first in range(0, n, args.batch_size):
            idx = order[first:first + args.batch_size]
            for optimizer in optimizers:
                optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(dense[idx], gather_bags(rows, bounds, idx)), labels[idx])
            loss.backward()
            for optimizer in optimizers:
                optimizer.step()
            loss_sum += loss.detach() * len(idx)
        seconds = time.perf_counter() - start
        metrics = evaluate(model, test, args.eval_batch_size, train_click_rate)
        record = {"pass": pass_index, "samples_per_sec": n / seconds, "pass_seconds": seconds,
                  "train_loss": loss_sum.item() / n, **{k: finite_or_none(v) for k, v in metrics.items()},
                  **settings}
        print(json.dumps(record), flush=True)
        print(f"{tag} pass {pass_index}: {record['samples_per_sec']:.0f} samples/s, "
              f"test AUC {metrics['test_auc']:.4f}, logloss {metrics['test_logloss']:.4f}", file=sys.stderr)


if __name__ == "__main__":
    main()
