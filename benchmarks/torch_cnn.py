#!/usr/bin/python3
"""PyTorch peer of pstrain's CNN (and MLP) benchmark, on CPU or CUDA.

--model cnn (default) trains the same network as
`pstrain --model cnn --conv-filters 32,64 --kernel-size 3 --hidden 128`:
  conv KxK pad K//2, 32 filters -> ReLU -> 2x2 max-pool -> conv KxK pad K//2, 64 filters -> ReLU -> 2x2 max-pool
  -> flatten -> fully connected 128 -> ReLU -> fully connected 10,
--model mlp the MLP of `pstrain --model mlp --hidden 256,128` (the same model as torch_mlp.py),
--model resnet the preset of `pstrain --model resnet --width W --batch-norm true|false` (lib/nn/presets.cc, the
DAWNBench ResNet-9 shape), with C(n) = max(1, round(n * W)) channels and a "unit" = conv 3x3 pad 1 (no bias with
batch norm) -> batch norm (eps 1e-5, momentum 0.1) -> ReLU:
  prep unit C(64) -> layer1 unit C(128) -> 2x2 max-pool -> x + (unit C(128) -> unit C(128))(x)
  -> layer2 unit C(256) -> 2x2 max-pool -> layer3 unit C(512) -> 2x2 max-pool -> x + (unit -> unit)(x)
  -> global average pool -> linear 10 without bias (Glorot-uniform) -> times 0.125.
Weights Kaiming-uniform with limit sqrt(6/fan_in) (fan_in = K*K*C_in for a conv), zero biases, batch norm
gamma 1 and beta 0; mean softmax cross-entropy; SGD with PyTorch momentum. Input: pstrain's HDF5 shards
(/features float32 [N, H*W*C], channels last as the sample_shape attribute says: {H, W} for grey images,
{H, W, C} for CIFAR), reshaped to NHWC and permuted to NCHW for torch. Prints one JSON line shaped like
torch_mlp.py's (plus model and device fields).

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
import functools
import math
import os
import sys
import warnings

# Threads per process must be fixed before torch is imported (spawned DDP workers inherit the environment).
_pre = argparse.ArgumentParser(add_help=False)
_pre.add_argument("--threads", type=int, default=1)
_THREADS = max(1, _pre.parse_known_args()[0].threads)
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = str(_THREADS)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # torch_common.py, from any working directory
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch_common as tc  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=("cnn", "mlp", "resnet"), default="cnn")
    p.add_argument("--mode", choices=("single", "ddp"), default="single")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--data-dir", required=True, help="folder with train-NNNNN.h5 and test.h5 (pstrain-data)")
    p.add_argument("--hidden", default=None,
                   help="fully connected widths, comma separated (default: 128 for cnn, 256,128 for mlp)")
    p.add_argument("--conv-filters", default="32,64", help="cnn: filters of each conv layer, comma separated")
    p.add_argument("--kernel-size", type=int, default=3, help="cnn: odd square kernel")
    p.add_argument("--width", type=float, default=1.0, help="resnet: channel multiplier (64, 128, 256, 512 times it)")
    p.add_argument("--batch-norm", choices=("true", "false"), default="true",
                   help="resnet: batch norm after every conv (false: conv biases instead)")
    p.add_argument("--batch-size", "--batch", dest="batch_size", type=int, default=64,
                   help="samples per step, per process")
    tc.add_sgd_args(p)
    p.add_argument("--threads", type=int, default=1, help="intra-op CPU threads per process")
    p.add_argument("--world-size", type=int, default=2, help="ddp: number of processes")
    p.add_argument("--eval-batch-size", type=int, default=1000)
    p.add_argument("--host-data", action="store_true",
                   help="cuda: keep the training data in (pinned) host memory and copy each batch")
    p.add_argument("--tf32", action="store_true", help="cuda: allow TF32 in convolutions and matmuls")
    p.add_argument("--cudnn-benchmark", choices=("on", "off"), default="on",
                   help="cuda: torch.backends.cudnn.benchmark (on: cuDNN times its algorithms for each shape; off:"
                        " PyTorch's own default, what a plain training loop runs with)")
    p.add_argument("--hdf5", choices=("auto", "h5py", "ctypes"), default="auto",
                   help="shard reader: h5py, or libhdf5 through ctypes (for machines without h5py, e.g. with the"
                        " libraries of benchmarks/gpu/package.sh's bundle); auto: h5py when importable")
    p.add_argument("--channels-last", action="store_true",
                   help="cnn, resnet: model and batches in torch.channels_last memory format (NHWC kernels)")
    args = p.parse_args(argv)
    if args.hidden is None:
        args.hidden = "128" if args.model == "cnn" else "256,128"
    if not 0 < args.width <= 64:
        p.error(f"--width must be in (0, 64] (got {args.width})")
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


def to_model_input(x, shape, args):
    """[B, H*W*C] channels last -> what the model takes: NCHW for the cnn and the resnet (contiguous, as a
    DataLoader would give it, or in channels_last memory format with --channels-last), flat for the mlp."""
    if args.model == "mlp":
        return x
    h, w, c = shape
    nchw = x.view(-1, h, w, c).permute(0, 3, 1, 2)
    return nchw.contiguous(memory_format=torch.channels_last if args.channels_last else torch.contiguous_format)


def build_cnn(shape, filters, kernel, hidden, classes):
    h, w, channels = shape
    layers = []
    for f in filters:
        conv = nn.Conv2d(channels, f, kernel, padding=kernel // 2)
        layers += [tc.kaiming_uniform_(conv, kernel * kernel * channels), nn.ReLU(), nn.MaxPool2d(2)]
        channels, h, w = f, h // 2, w // 2
    layers.append(nn.Flatten())
    fan_in = channels * h * w
    for width in hidden:
        layers += [tc.kaiming_uniform_(nn.Linear(fan_in, width), fan_in), nn.ReLU()]
        fan_in = width
    layers.append(tc.kaiming_uniform_(nn.Linear(fan_in, classes), fan_in))
    return nn.Sequential(*layers)


def resnet_channels(base, width):
    """pstrain's channel count: max(1, std::round(base * width)), halves rounded away from zero."""
    return max(1, math.floor(base * width + 0.5))


def conv_unit(c_in, c_out, batch_norm):
    """pstrain's resnet conv_unit: conv 3x3 'same' (a bias only without batch norm), [batch norm], ReLU."""
    conv = tc.kaiming_uniform_(nn.Conv2d(c_in, c_out, 3, padding=1, bias=not batch_norm), 9 * c_in)
    return nn.Sequential(conv, *([nn.BatchNorm2d(c_out, eps=1e-5, momentum=0.1)] if batch_norm else []), nn.ReLU())


class ResNetStage(nn.Module):
    """A unit and a 2x2 max-pool, then with RESIDUAL the pooled x plus two more units of x."""

    def __init__(self, c_in, c_out, residual, batch_norm):
        super().__init__()
        self.unit = conv_unit(c_in, c_out, batch_norm)
        self.pool = nn.MaxPool2d(2)
        self.residual = nn.Sequential(conv_unit(c_out, c_out, batch_norm),
                                      conv_unit(c_out, c_out, batch_norm)) if residual else None

    def forward(self, x):
        x = self.pool(self.unit(x))
        return x if self.residual is None else x + self.residual(x)


class ResNet9(nn.Module):
    """`pstrain --model resnet`: the layers in the preset's order, so the initialisation draws in that order."""

    def __init__(self, channels, width, batch_norm, classes):
        super().__init__()
        c = [resnet_channels(base, width) for base in (64, 128, 256, 512)]
        self.prep = conv_unit(channels, c[0], batch_norm)
        self.layer1 = ResNetStage(c[0], c[1], True, batch_norm)
        self.layer2 = ResNetStage(c[1], c[2], False, batch_norm)
        self.layer3 = ResNetStage(c[2], c[3], True, batch_norm)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.linear = tc.glorot_uniform_(nn.Linear(c[3], classes, bias=False), c[3], classes)

    def forward(self, x):
        x = self.layer3(self.layer2(self.layer1(self.prep(x))))
        return self.linear(torch.flatten(self.pool(x), 1)) * 0.125


def run(args, rank, world, result_queue=None):
    tc.set_threads(args.threads)
    if args.device == "cuda":
        device = torch.device("cuda", rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
        # on: fixed shapes, let cuDNN time and pick its fastest algorithms; off: PyTorch's default heuristic choice
        torch.backends.cudnn.benchmark = args.cudnn_benchmark == "on"
        torch.backends.cudnn.allow_tf32 = args.tf32
        torch.backends.cuda.matmul.allow_tf32 = args.tf32
    else:
        device = tc.CPU

    x, y, shape = tc.load(tc.rank_shards(args.data_dir, rank, world), args.hdf5)
    test_x, test_y, _ = tc.load([os.path.join(args.data_dir, "test.h5")], args.hdf5) if rank == 0 else (None, None, None)
    if device.type == "cuda":
        if args.host_data:
            x, y = x.pin_memory(), y.pin_memory()
        else:
            x, y = x.to(device), y.to(device)

    torch.manual_seed(args.seed)
    if args.model == "cnn":
        model = build_cnn(shape, tc.widths(args.conv_filters), args.kernel_size, tc.widths(args.hidden), tc.NUM_CLASSES)
    elif args.model == "resnet":
        model = ResNet9(shape[2], args.width, args.batch_norm == "true", tc.NUM_CLASSES)
    else:
        model = tc.build_mlp(x.shape[1], tc.widths(args.hidden), tc.NUM_CLASSES)
    model = model.to(device)
    if args.channels_last and args.model != "mlp":
        model = model.to(memory_format=torch.channels_last)
    if world > 1:
        # With one input channel (Fashion-MNIST) NCHW and NHWC strides coincide, so the first conv's weight
        # gradient may come back NHWC-strided: DDP copies that tiny tensor and warns once per process.
        warnings.filterwarnings("ignore", message="Grad strides do not match bucket view strides")
        model = tc.distributed(model, device)
    prepare = functools.partial(to_model_input, shape=shape, args=args)
    per_pass, n = tc.train(
        args, rank, world, model, x, y,
        lambda plain: tc.evaluate(plain, test_x, test_y, args.eval_batch_size, device, prepare),
        f"torch {args.model} {args.device}", device, prepare, host_batches=device.type == "cuda" and args.host_data)
    if rank == 0:
        on_cuda = device.type == "cuda"
        model_fields = {"model": args.model, "device": args.device,
                        "device_name": torch.cuda.get_device_name(device) if on_cuda else "cpu"}
        settings = {
            "hidden": args.hidden if args.model != "resnet" else None,
            "conv_filters": args.conv_filters if args.model == "cnn" else None,
            "kernel_size": args.kernel_size if args.model == "cnn" else None,
            "width": args.width if args.model == "resnet" else None,
            "batch_norm": args.batch_norm == "true" if args.model == "resnet" else None,
            "tf32": bool(args.tf32) if on_cuda else None,
            "channels_last": bool(args.channels_last) if args.model != "mlp" else None,
            "data_on": ("host" if args.host_data else "device") if on_cuda else "host",
        }
        tc.emit(tc.summarise(args, world, per_pass, n, model_fields, settings), result_queue)


def main():
    args = parse_args()
    tc.launch(run, args, args.world_size, args.device)


if __name__ == "__main__":
    main()
