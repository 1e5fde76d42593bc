#!/usr/bin/python3
"""PyTorch peer of pstrain's CNN (and MLP) benchmark, on CPU or CUDA.

--model cnn (default) trains the same network as
`pstrain --model cnn --conv-filters 32,64 --kernel-size 3 --hidden 128`:
  conv KxK pad K//2, 32 filters -> ReLU -> 2x2 max-pool -> conv KxK pad K//2, 64 filters -> ReLU -> 2x2 max-pool
  -> flatten -> fully connected 128 -> ReLU -> fully connected 10,
--model mlp the MLP of `pstrain --model mlp --hidden 256,128` (the same model as torch_mlp.py).
Weights Kaiming-uniform with limit sqrt(6/fan_in) (fan_in = K*K*C_in for a conv), zero biases; mean softmax
cross-entropy; SGD with PyTorch momentum. Input: pstrain's HDF5 shards (/features float32 [N, H*W*C], channels
last as the sample_shape attribute says: {H, W} for grey images, {H, W, C} for CIFAR), reshaped to NHWC and
permuted to NCHW for torch. Prints one JSON line shaped like torch_mlp.py's (plus model and device fields).

Modes:
  single  one process, all training shards.
  ddp     torch.distributed, --world-size processes (default 2) spawned with torch.multiprocessing, file
          rendezvous; gloo over 127.0.0.1 on cpu, nccl on cuda (process r on GPU r, so one GPU per process);
          rank r trains on the shards whose index % world == r, batch B per process, DistributedDataParallel.

Timing covers the training loop of each pass only (shuffle, batch gather, forward, backward, all-reduce,
optimizer step); data loading and evaluation are excluded. On cuda the clock is read after
torch.cuda.synchronize() at both pass boundaries, and the training data sits on the GPU (--host-data keeps
it in host memory and copies every batch, as a trainer that stages batches through the host does).
TF32 is off by default (pstrain computes in FP32); --tf32 turns it on for convolutions and matmuls.
Batches go to the cnn as contiguous NCHW; --channels-last uses torch.channels_last for the model and batches.
For ddp a pass's samples/s is the samples of all processes divided by the wall time of the slowest. The
reported samples_per_sec is the mean over passes 1..N-1 (pass 0 is warm-up) when N > 1, else pass 0.

Use Debian's interpreter (/usr/bin/python3) on the CPU machine: it has python3-torch and python3-h5py. Where
h5py is missing, the shards are read with libhdf5 through ctypes (--hdf5; TORCH_CNN_HDF5_LIB names the library).
"""

import argparse
import glob
import json
import math
import os
import sys
import tempfile
import time
import warnings

# Threads per process must be fixed before torch is imported (spawned DDP workers inherit the environment).
_pre = argparse.ArgumentParser(add_help=False)
_pre.add_argument("--threads", type=int, default=1)
_THREADS = max(1, _pre.parse_known_args()[0].threads)
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = str(_THREADS)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn as nn  # noqa: E402

NUM_CLASSES = 10


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=("cnn", "mlp"), default="cnn")
    p.add_argument("--mode", choices=("single", "ddp"), default="single")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--data-dir", required=True, help="folder with train-NNNNN.h5 and test.h5 (pstrain-data)")
    p.add_argument("--hidden", default=None,
                   help="fully connected widths, comma separated (default: 128 for cnn, 256,128 for mlp)")
    p.add_argument("--conv-filters", default="32,64", help="cnn: filters of each conv layer, comma separated")
    p.add_argument("--kernel-size", type=int, default=3, help="cnn: odd square kernel")
    p.add_argument("--batch-size", "--batch", dest="batch_size", type=int, default=64,
                   help="samples per step, per process")
    p.add_argument("--passes", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="intra-op CPU threads per process")
    p.add_argument("--world-size", type=int, default=2, help="ddp: number of processes")
    p.add_argument("--eval-batch-size", type=int, default=1000)
    p.add_argument("--host-data", action="store_true",
                   help="cuda: keep the training data in (pinned) host memory and copy each batch")
    p.add_argument("--tf32", action="store_true", help="cuda: allow TF32 in convolutions and matmuls")
    p.add_argument("--hdf5", choices=("auto", "h5py", "ctypes"), default="auto",
                   help="shard reader: h5py, or libhdf5 through ctypes (for machines without h5py, e.g. with the"
                        " libraries of benchmarks/gpu/package.sh's bundle); auto: h5py when importable")
    p.add_argument("--channels-last", action="store_true",
                   help="cnn: model and batches in torch.channels_last memory format (NHWC kernels)")
    args = p.parse_args(argv)
    if args.hidden is None:
        args.hidden = "128" if args.model == "cnn" else "256,128"
    if args.kernel_size < 1 or args.kernel_size % 2 == 0:
        p.error(f"--kernel-size must be odd and positive (got {args.kernel_size})")
    for name in ("batch_size", "passes", "world_size", "eval_batch_size"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: torch sees no CUDA device")
    if args.mode == "ddp" and args.device == "cuda" and args.world_size > torch.cuda.device_count():
        p.error(f"ddp on cuda needs one GPU per process: --world-size {args.world_size} but "
                f"{torch.cuda.device_count()} GPU(s)")
    return args


def widths(text):
    return [int(w) for w in text.split(",") if w]


def train_shards(data_dir):
    shards = sorted(glob.glob(os.path.join(data_dir, "train-[0-9][0-9][0-9][0-9][0-9].h5")))
    if not shards:
        raise SystemExit(f"torch_cnn.py: no train-NNNNN.h5 shards in {data_dir}")
    return shards


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
            raise SystemExit(f"torch_cnn.py: no h5py and no libhdf5 found (tried {', '.join(names)}; "
                             "set TORCH_CNN_HDF5_LIB or LD_LIBRARY_PATH)")
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
            raise SystemExit(f"torch_cnn.py: libhdf5 {what} failed")
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
            raise SystemExit(f"torch_cnn.py: {path} has sample_shape {this}, earlier shards {shape}")
        shape = this
        features.append(x.reshape(len(y), -1))
        labels.append(y)
    if len(shape) != 3:
        raise SystemExit(f"torch_cnn.py: sample_shape {shape} is neither {{H, W}} nor {{H, W, C}}")
    return torch.cat(features).contiguous(), torch.cat(labels).contiguous(), shape


def to_model_input(x, shape, args):
    """[B, H*W*C] channels last -> what the model takes: NCHW for the cnn (contiguous, as a DataLoader would
    give it, or in channels_last memory format with --channels-last), flat for the mlp."""
    if args.model == "mlp":
        return x
    h, w, c = shape
    nchw = x.view(-1, h, w, c).permute(0, 3, 1, 2)
    return nchw.contiguous(memory_format=torch.channels_last if args.channels_last else torch.contiguous_format)


def kaiming_uniform_(layer, fan_in):
    limit = math.sqrt(6.0 / fan_in)  # pstrain: Kaiming-uniform for ReLU, zero biases
    with torch.no_grad():
        layer.weight.uniform_(-limit, limit)
        layer.bias.zero_()
    return layer


def build_mlp(in_features, hidden, classes):
    layers, fan_in = [], in_features
    for width in hidden + [classes]:
        layers += [kaiming_uniform_(nn.Linear(fan_in, width), fan_in), nn.ReLU()]
        fan_in = width
    return nn.Sequential(*layers[:-1])  # no activation after the output layer


def build_cnn(shape, filters, kernel, hidden, classes):
    h, w, channels = shape
    layers = []
    for f in filters:
        conv = nn.Conv2d(channels, f, kernel, padding=kernel // 2)
        layers += [kaiming_uniform_(conv, kernel * kernel * channels), nn.ReLU(), nn.MaxPool2d(2)]
        channels, h, w = f, h // 2, w // 2
    layers.append(nn.Flatten())
    fan_in = channels * h * w
    for width in hidden:
        layers += [kaiming_uniform_(nn.Linear(fan_in, width), fan_in), nn.ReLU()]
        fan_in = width
    layers.append(kaiming_uniform_(nn.Linear(fan_in, classes), fan_in))
    return nn.Sequential(*layers)


@torch.no_grad()
def evaluate(model, x, y, shape, args, device):
    model.eval()
    loss_sum, correct = 0.0, 0
    for i in range(0, len(y), args.eval_batch_size):
        xb = x[i:i + args.eval_batch_size].to(device, non_blocking=True)
        yb = y[i:i + args.eval_batch_size].to(device, non_blocking=True)
        logits = model(to_model_input(xb, shape, args))
        loss_sum += nn.functional.cross_entropy(logits, yb, reduction="sum").item()
        correct += (logits.argmax(1) == yb).sum().item()
    model.train()
    return loss_sum / len(y), correct / len(y)


def summarise(args, mode, world, per_pass, train_samples, device):
    timed = per_pass[1:] if len(per_pass) > 1 else per_pass
    return {
        "framework": "pytorch",
        "torch_version": torch.__version__,
        "model": args.model,
        "device": args.device,
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "mode": mode,
        "processes": world,
        "threads_per_process": torch.get_num_threads(),
        "batch_size": args.batch_size,
        "passes": args.passes,
        "lr": args.lr,
        "momentum": args.momentum,
        "hidden": args.hidden,
        "conv_filters": args.conv_filters if args.model == "cnn" else None,
        "kernel_size": args.kernel_size if args.model == "cnn" else None,
        "tf32": bool(args.tf32) if device.type == "cuda" else None,
        "channels_last": bool(args.channels_last) if args.model == "cnn" else None,
        "data_on": ("host" if args.host_data else "device") if device.type == "cuda" else "host",
        "train_samples": train_samples,
        "samples_per_sec": sum(p["samples_per_sec"] for p in timed) / len(timed),
        "final_test_accuracy": per_pass[-1]["test_accuracy"],
        "final_test_loss": per_pass[-1]["test_loss"],
        "per_pass": per_pass,
    }


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def run(args, rank, world, result_queue=None):
    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    if args.device == "cuda":
        device = torch.device("cuda", rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
        torch.backends.cudnn.benchmark = True  # fixed shapes: let cuDNN pick its fastest algorithms
        torch.backends.cudnn.allow_tf32 = args.tf32
        torch.backends.cuda.matmul.allow_tf32 = args.tf32
    else:
        device = torch.device("cpu")

    shards = train_shards(args.data_dir)
    mine = [s for i, s in enumerate(shards) if i % world == rank]
    if not mine:
        raise SystemExit(f"torch_cnn.py: rank {rank} has no shard ({len(shards)} shards for {world} processes)")
    x, y, shape = load(mine, args.hdf5)
    test_x, test_y, _ = load([os.path.join(args.data_dir, "test.h5")], args.hdf5) if rank == 0 else (None, None, None)
    if device.type == "cuda":
        if args.host_data:
            x, y = x.pin_memory(), y.pin_memory()
        else:
            x, y = x.to(device), y.to(device)

    torch.manual_seed(args.seed)
    if args.model == "cnn":
        model = build_cnn(shape, widths(args.conv_filters), args.kernel_size, widths(args.hidden), NUM_CLASSES)
    else:
        model = build_mlp(x.shape[1], widths(args.hidden), NUM_CLASSES)
    model = model.to(device)
    if args.channels_last and args.model == "cnn":
        model = model.to(memory_format=torch.channels_last)
    ddp = world > 1
    if ddp:  # broadcasts rank 0's parameters
        # With one input channel (Fashion-MNIST) NCHW and NHWC strides coincide, so the first conv's weight
        # gradient may come back NHWC-strided: DDP copies that tiny tensor and warns once per process.
        warnings.filterwarnings("ignore", message="Grad strides do not match bucket view strides")
        model = nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
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
        if device.type == "cuda" and not args.host_data:
            order = order.to(device)
        loss_sum = torch.zeros((), device=device)
        # join() lets a rank with fewer batches shadow the collectives of the others.
        context = model.join() if ddp else _NullContext()
        with context:
            for first in range(0, n, b):
                idx = order[first:first + b]
                xb, yb = x[idx], y[idx]
                if device.type == "cuda" and args.host_data:
                    xb, yb = xb.pin_memory().to(device, non_blocking=True), yb.pin_memory().to(device, non_blocking=True)
                optimizer.zero_grad(set_to_none=True)
                loss = loss_fn(model(to_model_input(xb, shape, args)), yb)
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
            plain = model.module if ddp else model
            test_loss, test_acc = evaluate(plain, test_x, test_y, shape, args, device)
            per_pass.append({
                "pass": pass_index,
                "train_loss": stats[1].item() / stats[0].item(),
                "test_loss": test_loss,
                "test_accuracy": test_acc,
                "samples_per_sec": stats[0].item() / slowest.item(),
                "pass_seconds": slowest.item(),
            })
            print(f"[torch {args.model} {args.device} {'ddp' if ddp else 'single'}] pass {pass_index}: "
                  f"{per_pass[-1]['samples_per_sec']:.0f} samples/s, test acc {test_acc:.4f}", file=sys.stderr)
        if ddp:
            dist.barrier()  # rank 0's evaluation is outside every rank's clock

    if ddp:
        total = torch.tensor([float(n)], dtype=torch.float64).to(device)
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        n = int(total.item())
    if rank == 0:
        result = summarise(args, "ddp" if ddp else "single", world, per_pass, n, device)
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
    backend = "nccl" if args.device == "cuda" else "gloo"
    if args.device == "cuda":
        torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group(backend, rank=rank, world_size=args.world_size, init_method=f"file://{store_path}")
    try:
        run(args, rank, args.world_size, result_queue)
    finally:
        dist.destroy_process_group()


def main():
    args = parse_args()
    if args.mode == "single":
        run(args, 0, 1)
        return
    queue = mp.get_context("spawn").SimpleQueue()
    with tempfile.TemporaryDirectory(prefix="torch_cnn_ddp.") as scratch:
        mp.spawn(ddp_worker, args=(args, os.path.join(scratch, "store"), queue), nprocs=args.world_size, join=True)
    print(queue.get(), flush=True)


if __name__ == "__main__":
    main()
