#!/usr/bin/python3
"""PyTorch peer of pstrain's MLP benchmark.

Trains the same 784-256-128-10 ReLU MLP as `pstrain --model mlp --hidden 256,128`
(Kaiming-uniform weights with limit sqrt(6/fan_in), zero biases, mean softmax
cross-entropy, SGD with PyTorch momentum) on pstrain's HDF5 shards, and prints one
JSON line with the training throughput and the final test accuracy.

Modes:
  single  one process, all training shards.
  ddp     torch.distributed (gloo), world size 2, spawned with
          torch.multiprocessing (file rendezvous, gloo over the loopback
          interface 127.0.0.1); rank r trains on the shards whose index % 2 == r,
          batch B per process, DistributedDataParallel.

Timing covers the training loop of each pass only (shuffle, batch gather, forward,
backward, all-reduce, optimizer step); data loading and evaluation are excluded.
For ddp a pass's samples/s is the samples of both processes divided by the wall time
of the slower one. The reported samples_per_sec is the mean over passes 1..N-1
(pass 0 is warm-up) when N > 1, else pass 0 -- the same rule the shell driver applies
to pstrain's metrics.jsonl.

Use Debian's interpreter (/usr/bin/python3): it has python3-torch and python3-h5py.
"""

import argparse
import glob
import json
import math
import os
import sys
import tempfile
import time

# One thread per process, set before torch is imported.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn as nn  # noqa: E402

WORLD_SIZE = 2


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=("single", "ddp"), required=True)
    p.add_argument("--data-dir", required=True, help="folder with train-NNNNN.h5 and test.h5 (pstrain-data)")
    p.add_argument("--hidden", default="256,128", help="hidden layer widths, comma separated")
    p.add_argument("--batch-size", type=int, default=64, help="samples per step, per process")
    p.add_argument("--passes", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--eval-batch-size", type=int, default=1000)
    return p.parse_args(argv)


def train_shards(data_dir):
    shards = sorted(glob.glob(os.path.join(data_dir, "train-[0-9][0-9][0-9][0-9][0-9].h5")))
    if not shards:
        raise SystemExit(f"torch_mlp.py: no train-NNNNN.h5 shards in {data_dir}")
    return shards


def load(paths):
    features, labels = [], []
    for path in paths:
        with h5py.File(path, "r") as f:
            features.append(np.asarray(f["features"], dtype=np.float32))
            labels.append(np.asarray(f["labels"], dtype=np.int64))
    x = torch.from_numpy(np.concatenate(features).reshape(sum(len(l) for l in labels), -1))
    y = torch.from_numpy(np.concatenate(labels))
    return x.contiguous(), y.contiguous()


def build_model(in_features, hidden, classes):
    layers, fan_in = [], in_features
    for width in hidden + [classes]:
        linear = nn.Linear(fan_in, width)
        limit = math.sqrt(6.0 / fan_in)  # pstrain: Kaiming-uniform for ReLU, zero biases
        with torch.no_grad():
            linear.weight.uniform_(-limit, limit)
            linear.bias.zero_()
        layers += [linear, nn.ReLU()]
        fan_in = width
    return nn.Sequential(*layers[:-1])  # no activation after the output layer


@torch.no_grad()
def evaluate(model, x, y, batch):
    model.eval()
    loss_sum, correct = 0.0, 0
    for i in range(0, len(y), batch):
        logits = model(x[i:i + batch])
        loss_sum += nn.functional.cross_entropy(logits, y[i:i + batch], reduction="sum").item()
        correct += (logits.argmax(1) == y[i:i + batch]).sum().item()
    model.train()
    return loss_sum / len(y), correct / len(y)


def summarise(args, mode, world, per_pass, train_samples):
    timed = per_pass[1:] if len(per_pass) > 1 else per_pass
    return {
        "framework": "pytorch",
        "torch_version": torch.__version__,
        "mode": mode,
        "processes": world,
        "threads_per_process": torch.get_num_threads(),
        "batch_size": args.batch_size,
        "passes": args.passes,
        "lr": args.lr,
        "momentum": args.momentum,
        "train_samples": train_samples,
        "samples_per_sec": sum(p["samples_per_sec"] for p in timed) / len(timed),
        "final_test_accuracy": per_pass[-1]["test_accuracy"],
        "final_test_loss": per_pass[-1]["test_loss"],
        "per_pass": per_pass,
    }


def run(args, rank, world, result_queue=None):
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    shards = train_shards(args.data_dir)
    mine = [s for i, s in enumerate(shards) if i % world == rank]
    if not mine:
        raise SystemExit(f"torch_mlp.py: rank {rank} has no shard ({len(shards)} shards for {world} processes)")
    x, y = load(mine)
    test_x, test_y = load([os.path.join(args.data_dir, "test.h5")]) if rank == 0 else (None, None)
    hidden = [int(h) for h in args.hidden.split(",") if h]

    torch.manual_seed(args.seed)
    model = build_model(x.shape[1], hidden, 10)
    ddp = world > 1
    if ddp:
        model = nn.parallel.DistributedDataParallel(model)  # broadcasts rank 0's parameters
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    shuffle_gen = torch.Generator().manual_seed(args.seed * 1000 + rank)
    n, b = len(y), args.batch_size

    per_pass = []
    for pass_index in range(args.passes):
        if ddp:
            dist.barrier()  # everybody starts the pass's clock together
        start = time.perf_counter()
        order = torch.randperm(n, generator=shuffle_gen)
        loss_sum = torch.zeros(())
        # join() lets a rank with fewer batches shadow the collectives of the others.
        context = model.join() if ddp else _NullContext()
        with context:
            for first in range(0, n, b):
                idx = order[first:first + b]
                xb, yb = x[idx], y[idx]
                optimizer.zero_grad(set_to_none=True)
                loss = loss_fn(model(xb), yb)
                loss.backward()
                optimizer.step()
                loss_sum += loss.detach() * len(idx)
        seconds = time.perf_counter() - start

        stats = torch.tensor([float(n), loss_sum.item()], dtype=torch.float64)
        slowest = torch.tensor([seconds], dtype=torch.float64)
        if ddp:
            dist.all_reduce(stats, op=dist.ReduceOp.SUM)
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        if rank == 0:
            # The plain module: a DDP forward may run collectives that rank 1 would never join.
            plain = model.module if ddp else model
            test_loss, test_acc = evaluate(plain, test_x, test_y, args.eval_batch_size)
            per_pass.append({
                "pass": pass_index,
                "train_loss": stats[1].item() / stats[0].item(),
                "test_loss": test_loss,
                "test_accuracy": test_acc,
                "samples_per_sec": stats[0].item() / slowest.item(),
                "pass_seconds": slowest.item(),
            })
            print(f"[torch {'ddp' if ddp else 'single'}] pass {pass_index}: "
                  f"{per_pass[-1]['samples_per_sec']:.0f} samples/s, test acc {test_acc:.4f}", file=sys.stderr)

    if ddp:
        total = torch.tensor([float(n)], dtype=torch.float64)
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        n = int(total.item())
    if rank == 0:
        result = summarise(args, "ddp" if ddp else "single", world, per_pass, n)
        if result_queue is not None:
            result_queue.put(json.dumps(result))
        else:
            print(json.dumps(result), flush=True)


class _NullContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def ddp_worker(rank, args, store_path, result_queue):
    # Rendezvous through a file (no TCP store listening on a wildcard address, no port races on a shared
    # machine); gloo's own connections go over the loopback interface, i.e. 127.0.0.1 only.
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, init_method=f"file://{store_path}")
    try:
        run(args, rank, WORLD_SIZE, result_queue)
    finally:
        dist.destroy_process_group()


def main():
    args = parse_args()
    if args.mode == "single":
        run(args, 0, 1)
        return
    queue = mp.get_context("spawn").SimpleQueue()
    with tempfile.TemporaryDirectory(prefix="torch_mlp_ddp.") as scratch:
        mp.spawn(ddp_worker, args=(args, os.path.join(scratch, "store"), queue), nprocs=WORLD_SIZE, join=True)
    print(queue.get(), flush=True)


if __name__ == "__main__":
    main()
