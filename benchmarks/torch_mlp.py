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
import os
import sys

# One thread per process, set before torch is imported.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # torch_common.py, from any working directory
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import torch  # noqa: E402
import torch_common as tc  # noqa: E402

WORLD_SIZE = 2


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=("single", "ddp"), required=True)
    p.add_argument("--data-dir", required=True, help="folder with train-NNNNN.h5 and test.h5 (pstrain-data)")
    p.add_argument("--hidden", default="256,128", help="hidden layer widths, comma separated")
    p.add_argument("--batch-size", type=int, default=64, help="samples per step, per process")
    tc.add_sgd_args(p)
    p.add_argument("--eval-batch-size", type=int, default=1000)
    return p.parse_args(argv)


def run(args, rank, world, result_queue=None):
    tc.set_threads(1)
    x, y, _ = tc.load(tc.rank_shards(args.data_dir, rank, world), "h5py")
    test_x, test_y, _ = tc.load([os.path.join(args.data_dir, "test.h5")], "h5py") if rank == 0 else (None, None, None)

    torch.manual_seed(args.seed)
    model = tc.build_mlp(x.shape[1], tc.widths(args.hidden), tc.NUM_CLASSES)
    if world > 1:
        model = tc.distributed(model)
    per_pass, n = tc.train(args, rank, world, model, x, y,
                           lambda plain: tc.evaluate(plain, test_x, test_y, args.eval_batch_size), "torch")
    if rank == 0:
        tc.emit(tc.summarise(args, world, per_pass, n), result_queue)


def main():
    tc.launch(run, parse_args(), WORLD_SIZE)


if __name__ == "__main__":
    main()
