#!/usr/bin/env bash
# pstrain vs PyTorch on the CNN (or the MLP, or the ResNet-9 preset), on CPU or GPU, one run, side by side.
#
# Model (MODEL=cnn, the default): conv 3x3 pad 1, 32 filters -> ReLU -> 2x2 max-pool -> conv 3x3 pad 1, 64 filters
# -> ReLU -> 2x2 max-pool -> fully connected 128 -> ReLU -> fully connected 10; MODEL=mlp: 784-256-128-10;
# MODEL=resnet: the `--model resnet` preset (DAWNBench ResNet-9 shape) with WIDTH and BATCH_NORM.
# SGD with momentum, the same lr on both sides, on the HDF5 shards in DATA_DIR (Fashion-MNIST or CIFAR-10).
#
# For each batch size in BATCHES, in this order:
#   1. pstrain local                                  (1 process)
#   2. pstrain 1 server + 1 trainer, sync             (mpirun -np 2)
#   3. pstrain allreduce, 2 trainers                  (mpirun -np 2, no servers); with DEVICE=gpu and one GPU:
#                                                      allreduce with 1 trainer instead (the 2-trainer row is
#                                                      listed as skipped)
#   4. PyTorch single                                 (1 process; torch_cnn.py)
#   5. PyTorch DDP, 2 processes                       (only with TORCH_DDP=1; gloo on cpu, nccl on 2 GPUs)
# CPU runs use THREADS BLAS/OpenMP threads per process (default 1).
#
# Prints a markdown table plus PASS/FAIL lines for the target ("CNN at batch >= 256: pstrain local >= 0.8x
# PyTorch"), and writes the table, a summary JSON and all raw outputs to RESULTS_ROOT/<timestamp>/.
#
# Settings (environment):
#   MODEL=cnn|mlp|resnet  WIDTH=0.25 BATCH_NORM=true (resnet)  DEVICE=cpu|gpu  BATCHES="64 256 1024"  PASSES=3  LR=0.05  MOMENTUM=0.9  SEED=1
#   HIDDEN (default 128 for cnn, 256,128 for mlp)  CONV_FILTERS=32,64  KERNEL_SIZE=3  THREADS=1
#   TORCH_DDP=0|1  TORCH_ARGS="" (extra torch_cnn.py flags, e.g. "--tf32 --channels-last")  GPUS (default: what
#   torch counts)  BUILD_DIR=<repo>/build  DATA_DIR=<repo>/data/fashion-mnist  PYTHON (default /usr/bin/python3
#   when it imports torch, else python3 on PATH)  RUN_TIMEOUT=1800 (seconds, per run)  BINARY_WAIT=180
#   RESULTS_ROOT=<repo>/benchmarks/results  MPIRUN_ARGS="" (extra mpirun flags)
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=benchmarks/lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

set_defaults MODEL=cnn DEVICE=cpu BATCHES="64 256 1024" PASSES=3 LR=0.05 MOMENTUM=0.9 SEED=1 CONV_FILTERS=32,64 \
  KERNEL_SIZE=3 THREADS=1 TORCH_DDP=0 TORCH_ARGS= MPIRUN_ARGS= BUILD_DIR="$REPO/build" \
  WIDTH=0.25 BATCH_NORM=true DATA_DIR="$REPO/data/fashion-mnist" RUN_TIMEOUT=1800 BINARY_WAIT=180 RESULTS_ROOT="$REPO/benchmarks/results"

PSTRAIN="$BUILD_DIR/bin/pstrain"
TORCH_CNN="$SCRIPT_DIR/torch_cnn.py"

# ---- checks -------------------------------------------------------------------------------------

case "$MODEL" in
  cnn) HIDDEN="${HIDDEN:-128}" ;;
  mlp) HIDDEN="${HIDDEN:-256,128}" ;;
  resnet) HIDDEN="" ;;
  *) die "MODEL must be cnn, mlp or resnet (got '$MODEL')" ;;
esac
case "$DEVICE" in
  cpu) TORCH_DEVICE=cpu ;;
  gpu) TORCH_DEVICE=cuda ;;
  *) die "DEVICE must be cpu or gpu (got '$DEVICE')" ;;
esac
check_positive PASSES THREADS
[[ "$TORCH_DDP" =~ ^[01]$ ]] || die "TORCH_DDP must be 0 or 1 (got '$TORCH_DDP')"
check_batches

if [[ -z "${PYTHON:-}" ]]; then
  PYTHON=/usr/bin/python3
  if ! "$PYTHON" -c 'import torch' 2>/dev/null; then PYTHON="$(command -v python3 || echo python3)"; fi
fi

require_tools mpirun timeout
[[ -x "$(command -v "$PYTHON")" ]] || die "$PYTHON not found (an interpreter with torch; h5py optional)"
"$PYTHON" -c 'import torch' 2>/dev/null || die "$PYTHON cannot import torch (CPU machine: apt-get install -y python3-torch python3-h5py)"
[[ -f "$TORCH_CNN" ]] || die "$TORCH_CNN is missing"
wait_for_binary
check_shards

# Allreduce with 2 trainers puts one trainer on each GPU: with fewer than 2 GPUs it runs 1 trainer instead.
GPUS="${GPUS:-}"
if [[ "$DEVICE" == gpu ]]; then
  [[ -n "$GPUS" ]] || GPUS="$("$PYTHON" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)"
  [[ "$GPUS" =~ ^[0-9]+$ ]] || die "GPUS must be a whole number (got '$GPUS')"
  (( GPUS >= 1 )) || die "DEVICE=gpu but no GPU is visible (torch.cuda.device_count() is 0; try nvidia-smi)"
fi
two_gpus() { [[ "$DEVICE" == cpu ]] || (( GPUS >= 2 )); }

# ---- output folder ------------------------------------------------------------------------------

start_results "-$MODEL-$DEVICE"
{
  environment_head
  echo "pstrain_version=$("$PSTRAIN" --version 2>/dev/null | head -n1)"
  echo "mpirun=$(mpirun --version 2>/dev/null | head -n1)"
  echo "python=$PYTHON"
  echo "torch=$("$PYTHON" -c 'import torch; print(torch.__version__)')"
  if [[ "$DEVICE" == gpu ]]; then
    echo "gpus=$GPUS"
    echo "gpu_names=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | paste -sd';')"
  fi
  echo "model=$MODEL device=$DEVICE batches=$BATCHES passes=$PASSES lr=$LR momentum=$MOMENTUM seed=$SEED"
  echo "hidden=$HIDDEN width=$WIDTH batch_norm=$BATCH_NORM conv_filters=$CONV_FILTERS kernel_size=$KERNEL_SIZE threads=$THREADS torch_args=$TORCH_ARGS"
  echo "data_dir=$DATA_DIR"
  echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/environment.txt"

set_threads "$THREADS"
for var in LD_LIBRARY_PATH PATH CUDA_VISIBLE_DEVICES; do [[ -n "${!var:-}" ]] && MPI_EXPORTS+=(-x "$var"); done
read -r -a EXTRA_MPI <<< "$MPIRUN_ARGS"
read -r -a EXTRA_TORCH <<< "$TORCH_ARGS"
case "$MODEL" in
  resnet) MODEL_FLAGS=(--model resnet --width "$WIDTH" --batch-norm "$BATCH_NORM") ;;
  cnn) MODEL_FLAGS=(--model cnn --hidden "$HIDDEN" --conv-filters "$CONV_FILTERS" --kernel-size "$KERNEL_SIZE") ;;
  *) MODEL_FLAGS=(--model "$MODEL" --hidden "$HIDDEN") ;;
esac
COMMON=(--data-dir "$DATA_DIR" "${MODEL_FLAGS[@]}" --device "$DEVICE" --optimizer momentum --lr "$LR"
        --momentum "$MOMENTUM" --passes "$PASSES" --seed "$SEED")

ROWS_CSV="$OUT/rows.csv"
echo "name,batch,status,processes" > "$ROWS_CSV"   # what the table shows, in order; status ran|skipped:<why>

# run_torch NAME BATCH single|ddp
run_torch() {
  local np=1
  [[ $3 == ddp ]] && np=2
  run_torch_cmd "$1" "$2" "$np" \
    "$PYTHON" "$TORCH_CNN" --mode "$3" --world-size "$np" --device "$TORCH_DEVICE" --data-dir "$DATA_DIR" \
    "${MODEL_FLAGS[@]}" --batch-size "$2" --passes "$PASSES" --lr "$LR" --momentum "$MOMENTUM" \
    --seed "$SEED" --threads "$THREADS" "${EXTRA_TORCH[@]}"
}

skip_row() {  # skip_row NAME BATCH WHY
  note "$1, batch $2: skipped ($3)"
  echo "$1,$2,skipped:$3,-" >> "$ROWS_CSV"
}

# ---- runs, interleaved per batch size -----------------------------------------------------------

for batch in $BATCHES; do
  run_pstrain pstrain-local "$batch" local
  run_pstrain pstrain-1+1-sync "$batch" sync 2
  if two_gpus; then
    run_pstrain pstrain-allreduce-2 "$batch" allreduce 2
  else
    skip_row pstrain-allreduce-2 "$batch" "needs 2 GPUs ($GPUS visible)"
    run_pstrain pstrain-allreduce-1 "$batch" allreduce 1
  fi
  run_torch pytorch-single "$batch" single
  if [[ "$TORCH_DDP" == 1 ]]; then
    if two_gpus; then run_torch pytorch-ddp-2 "$batch" ddp; else skip_row pytorch-ddp-2 "$batch" "needs 2 GPUs"; fi
  fi
done
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/environment.txt"

# ---- table --------------------------------------------------------------------------------------

"$PYTHON" - "$OUT" "$PASSES" "$MODEL" "$DEVICE" <<'PY' | tee "$OUT/table.md"
import csv, json, sys
out, passes, model, device = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
LABEL = {"pstrain-local": "pstrain local (1 proc)",
         "pstrain-1+1-sync": "pstrain 1 server + 1 trainer, sync",
         "pstrain-allreduce-2": "pstrain allreduce, 2 trainers",
         "pstrain-allreduce-1": "pstrain allreduce, 1 trainer",
         "pytorch-single": "PyTorch single (1 proc)",
         "pytorch-ddp-2": "PyTorch DDP (2 procs)"}


def mean(xs):
    return sum(xs) / len(xs)


def allreduce_key(record):
    """The allreduce step-time field, when pstrain reports one."""
    for key in ("allreduce_s_per_step", "allreduce_s", "allreduce"):
        if isinstance(record.get(key), (int, float)):
            return key
    for key, value in record.items():
        if key.startswith("allreduce") and key.endswith("s_per_step") and isinstance(value, (int, float)):
            return key
    return None


def ms(timed, key):
    """Mean per-step milliseconds of KEY over the timed passes, None when pstrain does not report it."""
    if key is None or any(not isinstance(r.get(key), (int, float)) for r in timed):
        return None
    return 1000 * mean([r[key] for r in timed])


order, rows = [], {}
for entry in csv.DictReader(open(f"{out}/rows.csv")):
    name, b, status = entry["name"], int(entry["batch"]), entry["status"]
    order.append((name, b))
    if status != "ran":
        rows[name, b] = {"skipped": status.split(":", 1)[1]}
        continue
    if name.startswith("pstrain"):
        lines = [json.loads(l) for l in open(f"{out}/raw/{name}-b{b}.metrics.jsonl") if l.strip()]
        lines.sort(key=lambda r: r["pass"])
        timed = lines[1:] if passes > 1 and len(lines) > 1 else lines[:1]
        rows[name, b] = {"samples_per_sec": mean([r["samples_per_sec"] for r in timed]),
                         "final_test_accuracy": lines[-1]["test_accuracy"],
                         "compute_ms": ms(timed, "compute_s_per_step"), "copy_ms": ms(timed, "copy_s_per_step"),
                         "push_ms": ms(timed, "push_s_per_step"),
                         "barrier_ms": ms(timed, "barrier_s_per_step"), "pull_ms": ms(timed, "pull_s_per_step"),
                         "allreduce_ms": ms(timed, allreduce_key(timed[0])),
                         "trainers": lines[-1].get("trainers"), "pservers": lines[-1].get("pservers"),
                         "passes_timed": [r["pass"] for r in timed]}
    else:
        r = json.load(open(f"{out}/raw/{name}-b{b}.json"))
        rows[name, b] = {"samples_per_sec": r["samples_per_sec"], "final_test_accuracy": r["final_test_accuracy"],
                         "processes": r["processes"], "torch_version": r["torch_version"],
                         "passes_timed": [p["pass"] for p in (r["per_pass"][1:] if passes > 1 else r["per_pass"][:1])]}
for (name, b), row in rows.items():
    base = rows.get(("pytorch-single", b), {})
    if "samples_per_sec" in row and "samples_per_sec" in base:
        row["vs_torch_single"] = row["samples_per_sec"] / base["samples_per_sec"]


def cell(value, fmt):
    return "-" if value is None else format(value, fmt)


timed_note = "passes 1..%d (pass 0 is warm-up)" % (passes - 1) if passes > 1 else "pass 0"
print(f"{model.upper()} on {device}. samples/s: training throughput of all trainers, mean over {timed_note}; "
      "per-step times: same passes, measured on the trainers.\n")
print("| config | batch | samples/s | ratio vs PyTorch single | final test acc | step ms | compute ms/step "
      "| host-device copies ms/step | push ms/step | barrier ms/step | pull ms/step | allreduce ms/step |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for name, b in order:
    r = rows[name, b]
    if "skipped" in r:
        print(f"| {LABEL[name]} | {b} | skipped: {r['skipped']} | | | | | | | | | |")
        continue
    # Only the exchange a configuration has: none for local, push/barrier/pull for PS, allreduce for allreduce.
    shown = {"compute_ms", "copy_ms"} if name.startswith("pstrain") else set()
    if name == "pstrain-1+1-sync":
        shown |= {"push_ms", "barrier_ms", "pull_ms"}
    elif name.startswith("pstrain-allreduce"):
        shown |= {"allreduce_ms"}
    per_step = [cell(r.get(k) if k in shown else None, ".3f")
                for k in ("compute_ms", "copy_ms", "push_ms", "barrier_ms", "pull_ms", "allreduce_ms")]
    ratio = r.get("vs_torch_single")
    # The whole step as the samples/s says (batch per trainer over each trainer's rate): what the listed parts
    # leave of it is the batch assembly on the host and what the trainer waits for otherwise.
    trainers = r.get("trainers") or r.get("processes") or 1
    step = 1000 * b * trainers / r["samples_per_sec"]
    print(f"| {LABEL[name]} | {b} | {r['samples_per_sec']:.0f} | {cell(ratio, '.2f')}{'x' if ratio else ''} "
          f"| {r['final_test_accuracy']:.4f} | {step:.3f} | " + " | ".join(per_step) + " |")

print("\nTarget:")
checks = []
target = f"{model.upper()} at batch >= 256: pstrain local >= 0.8x PyTorch"
big = sorted({b for _, b in order if b >= 256})
for b in big:
    ratio = rows[("pstrain-local", b)].get("vs_torch_single")
    checks.append((f"{target} (batch {b}, {device})", ratio, ratio is not None and ratio >= 0.8))
if not big:
    print(f"SKIP: {target} (no batch >= 256 in BATCHES)")
for text, ratio, ok in checks:
    print(f"{'PASS' if ok else 'FAIL'}: {text}: measured {cell(ratio, '.2f')}x")

json.dump({"model": model, "device": device, "passes": passes, "timed": timed_note,
           "rows": [{"config": n, "batch": b, **rows[n, b]} for n, b in order],
           "targets": [{"target": t, "ratio": r, "pass": ok} for t, r, ok in checks]},
          open(f"{out}/summary.json", "w"), indent=1)
PY

note "results: $OUT (table.md, summary.json, environment.txt, runs.csv, rows.csv, raw/)"
