"""Shared parts of torch_mlp.py and torch_cnn.py (the PyTorch peers of pstrain's benchmarks).

Both scripts fix their thread count in the environment, then import this module (which imports torch), with
their own folder on sys.path so that it is found from any working directory. What is here: the common
command-line flags, pstrain's HDF5 shards (h5py, or libhdf5 through ctypes), the pstrain initialisation and
MLP, evaluation, the timed training loop (single process or DistributedDataParallel), the JSON result line and
the DDP launcher (file rendezvous; gloo over 127.0.0.1, or nccl on cuda). Error messages start with the running
script's name.
"""

import contextlib
import glob
import json
import math
import os
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

NUM_CLASSES = 10
CPU = torch.device("cpu")


def prog():
    """The running script's name (torch_mlp.py, torch_cnn.py), as argparse names it."""
    return os.path.basename(sys.argv[0])


def fail(message):
    raise SystemExit(f"{prog()}: {message}")


def add_sgd_args(p):
    """--passes, --lr, --momentum, --seed."""
    p.add_argument("--passes", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=1)


def widths(text):
    return [int(w) for w in text.split(",") if w]


def set_threads(threads):
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass


# ---- shards ---------------------------------------------------------------------------------------------------

def train_shards(data_dir):
    shards = sorted(glob.glob(os.path.join(data_dir, "train-[0-9][0-9][0-9][0-9][0-9].h5")))
    if not shards:
        fail(f"no train-NNNNN.h5 shards in {data_dir}")
    return shards


def rank_shards(data_dir, rank, world):
    """The training shards of RANK: those whose index % WORLD == RANK."""
    shards = train_shards(data_dir)
    mine = [s for i, s in enumerate(shards) if i % world == rank]
    if not mine:
        fail(f"rank {rank} has no shard ({len(shards)} shards for {world} processes)")
    return mine


def read_shard_h5py(path):
    import h5py
    import numpy as np
    with h5py.File(path, "r") as f:
        shape = tuple(int(d) for d in f.attrs["sample_shape"])
        x = torch.from_numpy(np.asarray(f["features"], dtype=np.float32))
        y = torch.from_numpy(np.asarray(f["labels"], dtype=np.int64))
    return x, y, shape


class _LibHdf5:
    """The few HDF5 C calls a shard needs, through ctypes (HDF5 >= 1.10: hid_t is int64). Reads straight into
    torch tensors, so neither h5py nor numpy is needed."""

    NAMES = ("libhdf5_serial.so.103", "libhdf5.so.103", "libhdf5_serial.so", "libhdf5.so", "libhdf5.so.310",
             "libhdf5.so.200")

    def __init__(self):
        import ctypes
        names = [os.environ["TORCH_CNN_HDF5_LIB"]] if os.environ.get("TORCH_CNN_HDF5_LIB") else self.NAMES
        self.lib = None
        for name in names:
            try:
                self.lib = ctypes.CDLL(name)
                break
            except OSError:
                continue
        if self.lib is None:
            fail(f"no h5py and no libhdf5 found (tried {', '.join(names)}; set TORCH_CNN_HDF5_LIB or LD_LIBRARY_PATH)")
        self.c = ctypes
        hid, herr = ctypes.c_int64, ctypes.c_int
        for fn, restype, argtypes in (
                ("H5open", herr, []),
                ("H5Fopen", hid, [ctypes.c_char_p, ctypes.c_uint, hid]),
                ("H5Fclose", herr, [hid]),
                ("H5Dopen2", hid, [hid, ctypes.c_char_p, hid]),
                ("H5Dget_space", hid, [hid]),
                ("H5Dread", herr, [hid, hid, hid, hid, hid, ctypes.c_void_p]),
                ("H5Dclose", herr, [hid]),
                ("H5Aopen", hid, [hid, ctypes.c_char_p, hid]),
                ("H5Aget_space", hid, [hid]),
                ("H5Aread", herr, [hid, hid, ctypes.c_void_p]),
                ("H5Aclose", herr, [hid]),
                ("H5Sget_simple_extent_ndims", ctypes.c_int, [hid]),
                ("H5Sget_simple_extent_dims", ctypes.c_int, [hid, ctypes.POINTER(ctypes.c_uint64), ctypes.c_void_p]),
                ("H5Sclose", herr, [hid])):
            getattr(self.lib, fn).restype = restype
            getattr(self.lib, fn).argtypes = argtypes
        self._check(self.lib.H5open(), "H5open")
        self.native = {dtype: hid.in_dll(self.lib, symbol).value for dtype, symbol in (
            (torch.float32, "H5T_NATIVE_FLOAT_g"), (torch.int32, "H5T_NATIVE_INT32_g"),
            (torch.int64, "H5T_NATIVE_UINT64_g"))}  # sample_shape is uint64; its values fit int64

    @staticmethod
    def _check(value, what):
        if value < 0:
            fail(f"libhdf5 {what} failed")
        return value

    def _dims(self, space):
        ndims = self._check(self.lib.H5Sget_simple_extent_ndims(space), "H5Sget_simple_extent_ndims")
        dims = (self.c.c_uint64 * max(ndims, 1))()
        self._check(self.lib.H5Sget_simple_extent_dims(space, dims, None), "H5Sget_simple_extent_dims")
        self.lib.H5Sclose(space)
        return [int(d) for d in dims[:ndims]] or [1]

    def read_shard(self, path):
        f = self._check(self.lib.H5Fopen(path.encode(), 0, 0), f"H5Fopen({path})")  # H5F_ACC_RDONLY, H5P_DEFAULT
        try:
            out = {}
            for name, dtype in (("features", torch.float32), ("labels", torch.int32)):
                d = self._check(self.lib.H5Dopen2(f, f"/{name}".encode(), 0), f"H5Dopen2({path}:/{name})")
                tensor = torch.empty(self._dims(self.lib.H5Dget_space(d)), dtype=dtype)
                self._check(self.lib.H5Dread(d, self.native[dtype], 0, 0, 0, tensor.data_ptr()),
                            f"H5Dread({path}:/{name})")  # H5S_ALL, H5S_ALL, H5P_DEFAULT
                self.lib.H5Dclose(d)
                out[name] = tensor
            a = self._check(self.lib.H5Aopen(f, b"sample_shape", 0), f"H5Aopen({path}:sample_shape)")
            shape = torch.empty(self._dims(self.lib.H5Aget_space(a)), dtype=torch.int64)
            self._check(self.lib.H5Aread(a, self.native[torch.int64], shape.data_ptr()), "H5Aread(sample_shape)")
            self.lib.H5Aclose(a)
        finally:
            self.lib.H5Fclose(f)
        return out["features"], out["labels"].long(), tuple(int(d) for d in shape.tolist())


_READER = None


def shard_reader(kind):
    global _READER
    if _READER is None:
        if kind == "auto":
            try:
                import h5py  # noqa: F401
                kind = "h5py"
            except ImportError:
                kind = "ctypes"
        _READER = read_shard_h5py if kind == "h5py" else _LibHdf5().read_shard
    return _READER


def load(paths, reader_kind="auto"):
    """Features as [N, H*W*C] float32 and the sample shape (H, W, C); labels int64."""
    read = shard_reader(reader_kind)
    features, labels, shape = [], [], None
    for path in paths:
        x, y, this = read(path)
        this = this + (1,) if len(this) == 2 else this  # {H, W}: one channel
        if shape is not None and this != shape:
            fail(f"{path} has sample_shape {this}, earlier shards {shape}")
        shape = this
        features.append(x.reshape(len(y), -1))
        labels.append(y)
    if len(shape) != 3:
        fail(f"sample_shape {shape} is neither {{H, W}} nor {{H, W, C}}")
    return torch.cat(features).contiguous(), torch.cat(labels).contiguous(), shape


# ---- model, evaluation ----------------------------------------------------------------------------------------

def uniform_init_(layer, limit):
    """Weights U(-limit, limit), the bias (when the layer has one) zero: pstrain's rule for dense and conv."""
    with torch.no_grad():
        layer.weight.uniform_(-limit, limit)
        if layer.bias is not None:
            layer.bias.zero_()
    return layer


def kaiming_uniform_(layer, fan_in):
    return uniform_init_(layer, math.sqrt(6.0 / fan_in))  # pstrain's init=kaiming, for ReLU


def glorot_uniform_(layer, fan_in, fan_out):
    return uniform_init_(layer, math.sqrt(6.0 / (fan_in + fan_out)))  # pstrain's init=glorot


def build_mlp(in_features, hidden, classes):
    layers, fan_in = [], in_features
    for width in hidden + [classes]:
        layers += [kaiming_uniform_(nn.Linear(fan_in, width), fan_in), nn.ReLU()]
        fan_in = width
    return nn.Sequential(*layers[:-1])  # no activation after the output layer


def _same(x):
    return x


@torch.no_grad()
def evaluate(model, x, y, batch, device=CPU, prepare=_same):
    """Mean test loss and accuracy; PREPARE turns a batch of features into the model's input."""
    model.eval()
    loss_sum, correct = 0.0, 0
    for i in range(0, len(y), batch):
        xb = x[i:i + batch].to(device, non_blocking=True)
        yb = y[i:i + batch].to(device, non_blocking=True)
        logits = model(prepare(xb))
        loss_sum += nn.functional.cross_entropy(logits, yb, reduction="sum").item()
        correct += (logits.argmax(1) == yb).sum().item()
    model.train()
    return loss_sum / len(y), correct / len(y)


# ---- training -------------------------------------------------------------------------------------------------

def distributed(model, device=CPU):
    """MODEL under DistributedDataParallel (which broadcasts rank 0's parameters), on DEVICE's GPU for cuda."""
    return nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train(args, rank, world, model, x, y, test, label, device=CPU, prepare=_same, host_batches=False):
    """The timed passes over (x, y) of this rank; MODEL is DistributedDataParallel when WORLD > 1. TEST(plain
    model) gives rank 0's (test loss, test accuracy) after each pass, outside the clock. HOST_BATCHES: x and y
    are in pinned host memory and each batch is copied to DEVICE. Returns the per-pass records (rank 0; empty
    elsewhere) and the number of training samples of all ranks."""
    ddp = world > 1
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    shuffle_gen = torch.Generator().manual_seed(args.seed * 1000 + rank)
    n, b = len(y), args.batch_size

    per_pass = []
    for pass_index in range(args.passes):
        if ddp:
            dist.barrier()  # everybody starts the pass's clock together
        sync(device)
        start = time.perf_counter()
        order = torch.randperm(n, generator=shuffle_gen)
        if device.type == "cuda" and not host_batches:
            order = order.to(device)
        loss_sum = torch.zeros((), device=device)
        # join() lets a rank with fewer batches shadow the collectives of the others.
        with model.join() if ddp else contextlib.nullcontext():
            for first in range(0, n, b):
                idx = order[first:first + b]
                xb, yb = x[idx], y[idx]
                if host_batches:
                    xb, yb = xb.pin_memory().to(device, non_blocking=True), yb.pin_memory().to(device, non_blocking=True)
                optimizer.zero_grad(set_to_none=True)
                loss = loss_fn(model(prepare(xb)), yb)
                loss.backward()
                optimizer.step()
                loss_sum += loss.detach() * len(idx)
        sync(device)
        seconds = time.perf_counter() - start

        stats = torch.tensor([float(n), loss_sum.item()], dtype=torch.float64)
        slowest = torch.tensor([seconds], dtype=torch.float64)
        if ddp:
            # nccl reduces device tensors only; gloo host tensors.
            stats, slowest = stats.to(device), slowest.to(device)
            dist.all_reduce(stats, op=dist.ReduceOp.SUM)
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
            stats, slowest = stats.cpu(), slowest.cpu()
        if rank == 0:
            # The plain module: a DDP forward may run collectives that the other ranks would never join.
            test_loss, test_acc = test(model.module if ddp else model)
            per_pass.append({
                "pass": pass_index,
                "train_loss": stats[1].item() / stats[0].item(),
                "test_loss": test_loss,
                "test_accuracy": test_acc,
                "samples_per_sec": stats[0].item() / slowest.item(),
                "pass_seconds": slowest.item(),
            })
            print(f"[{label} {'ddp' if ddp else 'single'}] pass {pass_index}: "
                  f"{per_pass[-1]['samples_per_sec']:.0f} samples/s, test acc {test_acc:.4f}", file=sys.stderr)
        if ddp:
            dist.barrier()  # rank 0's evaluation is outside every rank's clock

    if ddp:
        total = torch.tensor([float(n)], dtype=torch.float64).to(device)
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        n = int(total.item())
    return per_pass, n


def summarise(args, world, per_pass, train_samples, model_fields=None, settings=None):
    """The result: MODEL_FIELDS go before "mode", SETTINGS after "momentum"."""
    timed = per_pass[1:] if len(per_pass) > 1 else per_pass
    return {
        "framework": "pytorch",
        "torch_version": torch.__version__,
        **(model_fields or {}),
        "mode": "ddp" if world > 1 else "single",
        "processes": world,
        "threads_per_process": torch.get_num_threads(),
        "batch_size": args.batch_size,
        "passes": args.passes,
        "lr": args.lr,
        "momentum": args.momentum,
        **(settings or {}),
        "train_samples": train_samples,
        "samples_per_sec": sum(p["samples_per_sec"] for p in timed) / len(timed),
        "final_test_accuracy": per_pass[-1]["test_accuracy"],
        "final_test_loss": per_pass[-1]["test_loss"],
        "per_pass": per_pass,
    }


def emit(result, result_queue=None):
    """Rank 0's JSON line: printed, or handed to the launching process."""
    if result_queue is not None:
        result_queue.put(json.dumps(result))
    else:
        print(json.dumps(result), flush=True)


# ---- launching ------------------------------------------------------------------------------------------------

def _ddp_worker(rank, run, args, world, device_type, store_path, result_queue):
    # Rendezvous through a file (no TCP store listening on a wildcard address, no port races on a shared
    # machine); gloo's own connections go over the loopback interface, i.e. 127.0.0.1 only.
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    if device_type == "cuda":
        torch.cuda.set_device(rank % torch.cuda.device_count())
    backend = "nccl" if device_type == "cuda" else "gloo"
    dist.init_process_group(backend, rank=rank, world_size=world, init_method=f"file://{store_path}")
    try:
        run(args, rank, world, result_queue)
    finally:
        dist.destroy_process_group()


def launch(run, args, world, device_type="cpu"):
    """--mode single: RUN(args, 0, 1) here. --mode ddp: WORLD processes, RUN(args, rank, WORLD, queue) in each
    (RUN must be a module-level function), and rank 0's JSON line printed here."""
    if args.mode == "single":
        run(args, 0, 1)
        return
    queue = mp.get_context("spawn").SimpleQueue()
    with tempfile.TemporaryDirectory(prefix=f"{os.path.splitext(prog())[0]}_ddp.") as scratch:
        mp.spawn(_ddp_worker, args=(run, args, world, device_type, os.path.join(scratch, "store"), queue),
                 nprocs=world, join=True)
    print(queue.get(), flush=True)
