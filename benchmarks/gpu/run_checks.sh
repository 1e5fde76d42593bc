#!/usr/bin/env bash
# The checks to run on the GPU machine (one H100; CUDA, PyTorch and h5py there, no MPI or HDF5), with the bundle
# made here by benchmarks/gpu/package.sh. From the repository root on that machine:
#
#   bash benchmarks/gpu/run_checks.sh [PHASE ...]        PHASE: env unit train bench cpu (default: all but cpu)
#
# With the device tool (one call may run 10 minutes at most: split the phases over two calls if needed):
#   run(command="bash benchmarks/gpu/run_checks.sh env unit train", carry=["gpu-bundle"])
#   run(command="bash benchmarks/gpu/run_checks.sh bench", carry=["gpu-bundle"])
#
# Phases:
#   env    nvidia-smi, the bundle's BUILD_INFO, pstrain --version, mpirun --version, how pstrain's libraries resolve
#          (a "not found" fails), PyTorch's view of the GPU
#   unit   test_gpu (the CUDA backend against the CPU backend), then the other bundled test_* binaries
#   train  Fashion-MNIST on the GPU, MLP and CNN, each in PS mode (mpirun -np 2: 1 server + 1 trainer, sync) and
#          in allreduce mode (mpirun -np 2 with 2+ GPUs, else -np 1); PASS needs a zero exit, a metrics.jsonl,
#          and a final test accuracy >= MIN_ACCURACY
#   bench  benchmarks/cnn_vs_pytorch.sh with DEVICE=gpu for each model in BENCH_MODELS
#   speed  the speed table (issue 43): for each MODEL:BATCH:PASSES in SPEED_CONFIGS, pstrain alone on the GPU
#          (1 process) and a plain PyTorch loop (torch_cnn.py: data on the GPU, fp32, cudnn.benchmark off, as
#          PyTorch leaves it), SPEED_REPS times each, alternating; each run's rate is the mean over its passes after
#          the first, whose summed time (the window) must be >= 2 s (PASSES is sized for that from the H200's rates,
#          2026-11-26, with room for a 2x faster pstrain; a shorter window is marked "(short)" in the table; the
#          ResNet at width 0.25, half the first run's, to fit the budget); the table has the medians:
#          speed-table.md, speed-runs.csv. Budget SPEED_TIMEOUT (270 s; no run starts after it).
#   accuracy  the CNN (32,64 filters, batch 128, ACCURACY_PASSES passes, momentum) on the GPU against the same
#          recipe on this machine's CPU, twice (8 threads and 2: the CPU's own spread): PASS when the GPU's final
#          test accuracy lies within ACCURACY_TOLERANCE of the CPU runs' range: accuracy.md. Budget ~60 s; the CPU
#          runs start first, in the background.
#   recipe the Fashion-MNIST recipe (examples/fashion-mnist-best.ini: 30 passes, 1 server + 2 trainers sharing
#          the GPU, sync): the accuracy bar's run, against the CPU's figure for the same recipe (RECIPE_CPU_ACCURACY)
#   diagnose  the CNN at batch 64, 3 passes, alone on the GPU, with the GPU's clocks and use sampled every
#          second (nvidia-smi dmon) beside the step log: on the H200 (2026-11-26) the second pass ran 4x slower
#          than the first at batch 64 (11.9 against 3.2 ms a step) and not at 256 or 1024
#   cpu    the machine's CPU cores: the MLP on Fashion-MNIST with --device cpu in sync PS (1 server), async PS
#          and allreduce at each rank count in CPU_RANKS (1: local), one line of samples/s each in cpu-scaling.csv;
#          then 1 server + 1 trainer sync over TCP (--mca btl tcp,self --mca osc pt2pt), with and without Open
#          MPI's TCP progress thread
# The data (Fashion-MNIST shards) is made first where a phase needs it, with the bundled pstrain-data from the
# bundled IDX files, into WORK (kept between calls while the machine stays warm).
#
# Results go to $OUT (the device tool's folder; default <repo>/gpu-results), at most 8 files as the tool brings
# back: summary.txt (one PASS/FAIL line per step), bench-<model>.md (the benchmark tables), and
# results-<phases>.tar.gz (every log, metrics.jsonl, config.ini and the benchmarks' raw output).
# Exit status: 0 when every step passed, 1 otherwise.
#
# Settings (environment): OUT  BUNDLE=<repo>/gpu-bundle  WORK=/tmp/pstrain-gpu-checks  PASSES=2 (train phase)
#   MIN_ACCURACY=0.7  TRAIN_TIMEOUT=300  UNIT_TIMEOUT=300  BENCH_MODELS="cnn mlp"  BATCHES="64 256 1024"
#   BENCH_PASSES=3  CPU_RANKS="1 2 4 8 16"  CPU_PASSES=2  DEADLINE (seconds from the start: a step gets at most
#   what is left less 15 s, and none once less than 30 s is left, so that a device call's limit never cuts the
#   results off)  (GPUS, TORCH_ARGS, RUN_TIMEOUT ... pass through to cnn_vs_pytorch.sh)
#   SYSTEM_PYTHON=python3 (the interpreter that has PyTorch).
#   For a dry run on a machine without a GPU: DEVICE=cpu (train and bench on the CPU) and DATA_LIMIT=N (convert
#   only the first N training samples).
set -uo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=benchmarks/lib/common.sh
source "$SCRIPT_DIR/../lib/common.sh"
# SYSTEM_PYTHON: the interpreter with PyTorch (on the GPU machine: python3)
set_defaults BUNDLE="$REPO/gpu-bundle" OUT="$REPO/gpu-results" WORK=/tmp/pstrain-gpu-checks PASSES=2 MIN_ACCURACY=0.7 \
  TRAIN_TIMEOUT=300 UNIT_TIMEOUT=300 BENCH_MODELS="cnn mlp" BENCH_PASSES=3 DEVICE=gpu DATA_LIMIT= SYSTEM_PYTHON=python3 \
  CPU_RANKS="1 2 4 8 16" CPU_PASSES=2 DEADLINE=100000 RECIPE_TIMEOUT=420 RECIPE_CPU_ACCURACY=0.9426 \
  SPEED_REPS=3 SPEED_TIMEOUT=270 ACCURACY_PASSES=3 ACCURACY_TOLERANCE=0.003 \
  SPEED_CONFIGS="resnet:256:5 resnet:1024:5 cnn:256:9 cnn:1024:15 mlp:1024:31"
BENCH_BATCHES="${BATCHES:-64 256 1024}"

phases=("$@")
(( ${#phases[@]} > 0 )) || phases=(env unit train bench)
for phase in "${phases[@]}"; do
  case "$phase" in env|unit|train|bench|speed|accuracy|recipe|diagnose|cpu) ;;
    *) echo "run_checks.sh: unknown phase '$phase' (env unit train bench speed accuracy recipe diagnose cpu)" >&2; exit 2 ;;
  esac
done

[[ -f "$BUNDLE/env.sh" ]] || { echo "run_checks.sh: $BUNDLE/env.sh is missing: run benchmarks/gpu/package.sh on the build machine and carry gpu-bundle" >&2; exit 2; }
# shellcheck source=/dev/null
source "$BUNDLE/env.sh" || { echo "run_checks.sh: sourcing $BUNDLE/env.sh failed" >&2; exit 2; }

mkdir -p "$OUT" "$WORK"
RUN="$WORK/run-$(date -u +%Y%m%dT%H%M%SZ)-$(IFS=-; echo "${phases[*]}")"
LOGS="$RUN/logs"
mkdir -p "$LOGS"
SUMMARY="$RUN/summary.txt"
DATA="$WORK/data/fashion-mnist"
failures=0

# PyTorch runs with the machine's own libraries, not the bundle's older zlib/OpenSSL/libstdc++.
PYTHON="$WORK/python"
cat > "$PYTHON" <<SH
#!/bin/sh
if [ -n "\${GPU_BUNDLE_SAVED_LD_LIBRARY_PATH:-}" ]; then export LD_LIBRARY_PATH="\$GPU_BUNDLE_SAVED_LD_LIBRARY_PATH"; else unset LD_LIBRARY_PATH; fi
exec $SYSTEM_PYTHON "\$@"
SH
chmod +x "$PYTHON"

GPUS="${GPUS:-$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ' || true)}"
[[ "$GPUS" =~ ^[0-9]+$ ]] || GPUS=0
# allreduce trainers: 2 everywhere. With one GPU both share it and pstrain sums through MPI (NCCL refuses two
# ranks on one GPU); with 2+ GPUs each has its own and the sum is NCCL's. The log says which it used.
AR_NP=2

# Packs the results on every exit, so that a step that hangs until the tool's limit still leaves its logs.
finish() {
  cp "$SUMMARY" "$OUT/summary.txt" 2> /dev/null
  tar -C "$WORK" --exclude="*.h5" -czf "$OUT/results-$(IFS=-; echo "${phases[*]}").tar.gz" "$(basename "$RUN")" 2> /dev/null
  echo
  echo "== summary ($failures failed) =="
  cat "$SUMMARY" 2> /dev/null
  echo "results: $OUT"
}
trap finish EXIT

# step NAME SECONDS COMMAND...: runs COMMAND with a time limit, its output in logs/NAME.log; one summary line.
step() {
  local name=$1 limit=$2
  shift 2
  local left=$((DEADLINE - SECONDS - 15))
  if (( left < 15 )); then
    record FAIL "$name" "not run: the DEADLINE of ${DEADLINE}s is near"
    return 1
  fi
  (( limit <= left )) || limit=$left
  echo "== $name: $*"
  local start=$SECONDS rc=0
  timeout -k 10 "$limit" "$@" > "$LOGS/$name.log" 2>&1 || rc=$?
  local took=$((SECONDS - start)) verdict=PASS
  (( rc == 0 )) || { verdict=FAIL; failures=$((failures + 1)); }
  (( rc == 124 || rc == 137 )) && verdict="FAIL (timed out after ${limit}s)"
  tail -n 8 "$LOGS/$name.log"
  local command="$*"
  command="${command//$'\n'/ }"
  (( ${#command} <= 200 )) || command="${command:0:197}..."
  printf '%-5s %-28s rc=%-3s %4ss  %s\n' "${verdict%% *}" "$name" "$rc" "$took" "$command" >> "$SUMMARY"
  [[ "$verdict" == "FAIL (timed out"* ]] && echo "      ^ timed out after ${limit}s" >> "$SUMMARY"
  cp "$SUMMARY" "$OUT/summary.txt" 2> /dev/null   # a call cut off by its limit still brings the lines back
  return "$rc"
}

record() {  # record PASS|FAIL NAME TEXT: a summary line for a check that is not a command
  [[ "$1" == PASS ]] || failures=$((failures + 1))
  printf '%-5s %-28s %s\n' "$1" "$2" "$3" >> "$SUMMARY"
  cp "$SUMMARY" "$OUT/summary.txt" 2> /dev/null
}

prepare_data() {
  [[ -f "$DATA/test.h5" && -f "$DATA/train-00015.h5" ]] && return 0
  if [[ -z "${GPU_BUNDLE_FASHION_MNIST_IDX:-}" ]]; then
    record FAIL data "the bundle carries no Fashion-MNIST IDX files (package.sh with DATA=idx)"
    return 1
  fi
  local limit=()
  [[ -n "$DATA_LIMIT" ]] && limit=(--limit "$DATA_LIMIT" --test-limit "$(( DATA_LIMIT < 10000 ? DATA_LIMIT : 10000 ))")
  rm -rf "$DATA"
  step data 300 pstrain-data fashion-mnist --input "$GPU_BUNDLE_FASHION_MNIST_IDX" --output "$DATA" --split-count 16 \
    "${limit[@]}"
}

# ---- env ----------------------------------------------------------------------------------------

phase_env() {
  step nvidia-smi 60 nvidia-smi
  step bundle-info 30 cat "$BUNDLE/BUILD_INFO"
  step pstrain-version 30 pstrain --version
  step mpirun-version 30 mpirun --version
  # Every library pstrain needs must resolve: the bundle's, the CUDA toolkit's, the driver's.
  step pstrain-libraries 30 bash -c 'ldd "$(command -v pstrain)"; ! ldd "$(command -v pstrain)" | grep -q "not found"'
  step ompi-info 60 bash -c 'ompi_info | head -n 40; ompi_info --parsable --path all | grep -E "pkglibdir|pkgdatadir|sysconfdir"'
  step mpi-hello 60 mpirun --oversubscribe --bind-to none -np 2 bash -c 'echo "rank $OMPI_COMM_WORLD_RANK of $OMPI_COMM_WORLD_SIZE on $(hostname)"'
  step torch-cuda 120 "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
"available", torch.cuda.is_available(), "devices", torch.cuda.device_count(),
torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
try:
    import h5py; print("h5py", h5py.__version__)
except ImportError:
    print("no h5py: torch_cnn.py reads shards through libhdf5 (ctypes)")'
}

# ---- unit ---------------------------------------------------------------------------------------

phase_unit() {
  local bin name
  if [[ -x "$GPU_BUNDLE_ROOT/bin/test_gpu" ]]; then
    step test_gpu "$UNIT_TIMEOUT" test_gpu --gtest_output="xml:$LOGS/test_gpu.xml"
    # A build without CUDA skips every GPU test; a GPU machine must not pass that way.
    if grep -q 'skipped="[1-9]' "$LOGS/test_gpu.xml" 2> /dev/null && (( GPUS > 0 )); then
      record FAIL test_gpu-skips "test_gpu skipped tests on a machine with $GPUS GPU(s): is the bundle a CUDA build? (BUILD_INFO)"
    fi
  else
    record FAIL test_gpu "no test_gpu in the bundle (package.sh with TESTS='test_*', from a build with tests)"
  fi
  for bin in "$GPU_BUNDLE_ROOT"/bin/test_*; do
    name="$(basename "$bin")"
    [[ "$name" == test_gpu || ! -x "$bin" ]] && continue
    step "$name" "$UNIT_TIMEOUT" "$name" --gtest_output="xml:$LOGS/$name.xml"
  done
}

# ---- train --------------------------------------------------------------------------------------

# train NAME NP ARGS...: one pstrain run on the GPU (DEVICE), checked for its metrics and final test accuracy.
train() {
  local name=$1 np=$2
  shift 2
  local dir="$RUN/train/$name"
  step "train-$name" "$TRAIN_TIMEOUT" mpirun --oversubscribe --bind-to none -np "$np" \
    pstrain --data-dir "$DATA" --output-dir "$dir" --device "$DEVICE" --passes "$PASSES" --batch-size 64 "$@" || return 0
  if [[ ! -s "$dir/metrics.jsonl" ]]; then
    record FAIL "accuracy-$name" "no $dir/metrics.jsonl"
    return 0
  fi
  local line accuracy
  line="$(tail -n 1 "$dir/metrics.jsonl")"
  accuracy="$("$PYTHON" -c 'import json, sys; print(json.loads(sys.argv[1])["test_accuracy"])' "$line" 2> /dev/null)"
  line="$("$PYTHON" -c 'import json, sys; r = json.loads(sys.argv[1])
print(", ".join(f"{k} {r[k]}" for k in ("device", "model", "mode", "trainers", "pservers", "samples_per_sec",
                                         "compute_s_per_step", "allreduce_s_per_step") if k in r))' "$line" 2> /dev/null)"
  if "$PYTHON" -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' "${accuracy:-0}" "$MIN_ACCURACY" 2> /dev/null; then
    record PASS "accuracy-$name" "test accuracy $accuracy >= $MIN_ACCURACY after $PASSES passes ($line)"
  else
    record FAIL "accuracy-$name" "test accuracy ${accuracy:-?} < $MIN_ACCURACY after $PASSES passes ($line)"
  fi
}

# shellcheck disable=SC2054  # the commas are inside flag values
phase_train() {
  prepare_data || return 0
  local cnn=(--model cnn --conv-filters 32,64 --kernel-size 3 --hidden 128)
  local mlp=(--model mlp --hidden 256,128)
  train mlp-ps-sync 2 "${mlp[@]}" --mode sync --num-pservers 1
  train cnn-ps-sync 2 "${cnn[@]}" --mode sync --num-pservers 1
  train mlp-allreduce-np$AR_NP "$AR_NP" "${mlp[@]}" --mode allreduce
  train cnn-allreduce-np$AR_NP "$AR_NP" "${cnn[@]}" --mode allreduce
}

# ---- bench --------------------------------------------------------------------------------------

phase_bench() {
  prepare_data || return 0
  local model table
  for model in $BENCH_MODELS; do
    step "bench-$model" 1800 env DEVICE="$DEVICE" MODEL="$model" BATCHES="$BENCH_BATCHES" PASSES="$BENCH_PASSES" \
      BUILD_DIR="$GPU_BUNDLE_ROOT" DATA_DIR="$DATA" PYTHON="$PYTHON" GPUS="$GPUS" RESULTS_ROOT="$RUN/bench" \
      bash "$REPO/benchmarks/cnn_vs_pytorch.sh"
    table="$(ls -d "$RUN"/bench/*-"$model"-"$DEVICE" 2> /dev/null | tail -n 1)"
    if [[ -n "$table" && -f "$table/table.md" ]]; then
      cp "$table/table.md" "$OUT/bench-$model.md"
      cat "$table/table.md"
    fi
  done
}

# ---- speed --------------------------------------------------------------------------------------

# model_flags MODEL: the flags pstrain and torch_cnn.py share for a built-in model (as cnn_vs_pytorch.sh).
model_flags() {
  case "$1" in
    resnet) echo "--model resnet --width 0.25 --batch-norm true" ;;
    cnn) echo "--model cnn --hidden 128 --conv-filters 32,64 --kernel-size 3" ;;
    mlp) echo "--model mlp --hidden 256,128" ;;
  esac
}

# speed_run SIDE MODEL BATCH PASSES REP: one run, one CSV line (its rate and window over passes 1..P-1).
speed_run() {
  local side=$1 model=$2 batch=$3 passes=$4 rep=$5 name="speed-$1-$2-b$3-r$5"
  local dir="$RUN/speed/$name" flags
  read -r -a flags <<< "$(model_flags "$model")"
  local common=(--data-dir "$DATA" "${flags[@]}" --batch-size "$batch" --passes "$passes" --lr 0.05 --momentum 0.9
                --seed 1)
  mkdir -p "$dir"
  if [[ "$side" == pstrain ]]; then
    step "$name" 120 mpirun --oversubscribe --bind-to none -np 1 pstrain "${common[@]}" --device "$DEVICE" \
      --optimizer momentum --output-dir "$dir" || return 0
  else
    local torch_device=cuda
    [[ "$DEVICE" == gpu ]] || torch_device=cpu  # a dry run without a GPU
    step "$name" 120 "$PYTHON" "$REPO/benchmarks/torch_cnn.py" --mode single --device "$torch_device" --cudnn-benchmark off \
      "${common[@]}" || return 0
    grep '^{' "$LOGS/$name.log" | tail -n 1 > "$dir/result.json"
  fi
  "$PYTHON" - "$side" "$dir" "$model" "$batch" "$rep" "$passes" >> "$SPEED_CSV" <<'PY' ||
import json, os, sys
side, folder, model, batch, rep, passes = sys.argv[1:]
if side == "pstrain":
    rows = [json.loads(l) for l in open(os.path.join(folder, "metrics.jsonl")) if l.strip()]
    timed = [(r["samples"], r["pass_seconds"]) for r in rows[1:]]
    accuracy = rows[-1]["test_accuracy"]
else:
    result = json.load(open(os.path.join(folder, "result.json")))
    timed = [(p["samples_per_sec"] * p["pass_seconds"], p["pass_seconds"]) for p in result["per_pass"][1:]]
    accuracy = result["final_test_accuracy"]
window = sum(s for _, s in timed)
print(f"{model},{batch},{side},{rep},{sum(n for n, _ in timed) / window:.0f},{window:.2f},{passes},{accuracy:.4f}")
PY
    record FAIL "$name-rate" "no rate in $dir"
}

phase_speed() {
  prepare_data || return 0
  SPEED_CSV="$OUT/speed-runs.csv"
  echo "model,batch,side,rep,samples_per_sec,window_s,passes,final_test_accuracy" > "$SPEED_CSV"
  local start=$SECONDS config model batch passes rep side
  for config in $SPEED_CONFIGS; do
    IFS=: read -r model batch passes <<< "$config"
    for rep in $(seq 1 "$SPEED_REPS"); do
      for side in pstrain pytorch; do  # alternating, so that a drift of the machine hits both sides alike
        if (( SECONDS - start > SPEED_TIMEOUT )); then
          record FAIL "speed-budget" "the speed table's ${SPEED_TIMEOUT}s were spent before $config rep $rep $side"
          break 3
        fi
        speed_run "$side" "$model" "$batch" "$passes" "$rep"
      done
    done
  done
  "$PYTHON" - "$SPEED_CSV" > "$OUT/speed-table.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("pstrain (1 process, --device gpu) against a plain PyTorch loop (torch_cnn.py: data on the GPU, fp32,"
      " torch.backends.cudnn.benchmark off as PyTorch leaves it), alternating runs; samples/s = median over runs of"
      " each run's mean over its passes after the first; window = that run's timed seconds (>= 2 s wanted).\n")
print("| model | batch | pstrain samples/s | PyTorch samples/s | ratio | runs | shortest window s |")
print("|---|---:|---:|---:|---:|---:|---:|")
keys = sorted({(r["model"], int(r["batch"])) for r in rows}, key=lambda k: ("resnet cnn mlp".split().index(k[0]), k[1]))
for model, batch in keys:
    side = {s: [r for r in rows if r["model"] == model and int(r["batch"]) == batch and r["side"] == s]
            for s in ("pstrain", "pytorch")}
    median = {s: statistics.median(float(r["samples_per_sec"]) for r in v) if v else 0 for s, v in side.items()}
    window = min((float(r["window_s"]) for v in side.values() for r in v), default=0)
    ratio = f"{median['pstrain'] / median['pytorch']:.2f}x" if median["pytorch"] else "-"
    flag = "" if window >= 2 else " (short)"
    print(f"| {model} | {batch} | {median['pstrain']:.0f} | {median['pytorch']:.0f} | {ratio} |"
          f" {len(side['pstrain'])}+{len(side['pytorch'])} | {window:.2f}{flag} |")
PY
  cat "$OUT/speed-table.md"
}

# ---- accuracy -----------------------------------------------------------------------------------

# shellcheck disable=SC2054  # the commas are inside flag values
phase_accuracy() {
  prepare_data || return 0
  local dir="$RUN/accuracy"
  local recipe=(--data-dir "$DATA" --model cnn --conv-filters 32,64 --kernel-size 3 --hidden 128 --batch-size 128
                --passes "$ACCURACY_PASSES" --optimizer momentum --lr 0.05 --momentum 0.9 --seed 1)
  mkdir -p "$dir"
  # The CPU runs are waited for below: bound them by what the DEADLINE leaves, so the call still ends in time.
  local cpu_limit=$((DEADLINE - SECONDS - 30))
  (( cpu_limit <= 240 )) || cpu_limit=240
  if (( cpu_limit < 40 )); then
    record FAIL accuracy "not run: the DEADLINE of ${DEADLINE}s is near"
    return 0
  fi
  # The CPU's two runs in the background (the machine's cores are idle while the GPU trains), at two thread
  # counts: two summation orders, the CPU's own spread (8 and 2 keep the phase near a minute).
  (OMP_NUM_THREADS=8 OPENBLAS_NUM_THREADS=8 timeout "$cpu_limit" mpirun --oversubscribe --bind-to none -np 1 pstrain \
     "${recipe[@]}" --device cpu --output-dir "$dir/cpu-8threads" > "$LOGS/accuracy-cpu-8threads.log" 2>&1) &
  local cpu8=$!
  (OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 timeout "$cpu_limit" mpirun --oversubscribe --bind-to none -np 1 pstrain \
     "${recipe[@]}" --device cpu --output-dir "$dir/cpu-2threads" > "$LOGS/accuracy-cpu-2threads.log" 2>&1) &
  local cpu2=$!
  step accuracy-gpu 120 mpirun --oversubscribe --bind-to none -np 1 pstrain "${recipe[@]}" --device "$DEVICE" \
    --output-dir "$dir/gpu"
  wait "$cpu8" "$cpu2"
  "$PYTHON" - "$dir" "$ACCURACY_TOLERANCE" "$ACCURACY_PASSES" > "$OUT/accuracy.md" <<'PY'
import json, os, sys
folder, tolerance, passes = sys.argv[1], float(sys.argv[2]), sys.argv[3]
def final(run):
    try:
        return [json.loads(l) for l in open(os.path.join(folder, run, "metrics.jsonl")) if l.strip()][-1]["test_accuracy"]
    except (OSError, IndexError, KeyError, ValueError):
        return None
gpu, cpus = final("gpu"), [a for a in (final("cpu-8threads"), final("cpu-2threads")) if a is not None]
verdict = "FAIL"
if gpu is not None and cpus and min(cpus) - tolerance <= gpu <= max(cpus) + tolerance:
    verdict = "PASS"
print(f"CNN on Fashion-MNIST, batch 128, {passes} passes: GPU {gpu}, CPU (8 threads, 2 threads) {cpus},"
      f" tolerance {tolerance}: {verdict}")
PY
  cat "$OUT/accuracy.md"
  if grep -q ": PASS$" "$OUT/accuracy.md"; then record PASS accuracy "$(cat "$OUT/accuracy.md")"
  else record FAIL accuracy "$(cat "$OUT/accuracy.md" 2> /dev/null || echo 'no result')"; fi
}

# ---- recipe -------------------------------------------------------------------------------------

phase_recipe() {
  prepare_data || return 0
  local dir="$RUN/recipe"
  step recipe-gpu "$RECIPE_TIMEOUT" mpirun --oversubscribe --bind-to none -np 3 pstrain --config \
    "$REPO/examples/fashion-mnist-best.ini" --model-file "$REPO/examples/models/fashion-mnist-best.model" \
    --data-dir "$DATA" --device "$DEVICE" --output-dir "$dir" || return 0
  local accuracy
  accuracy="$("$PYTHON" -c 'import json, sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["test_accuracy"])' \
    "$dir/metrics.jsonl" 2> /dev/null)"
  if "$PYTHON" -c 'import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) <= 0.003 else 1)' \
      "${accuracy:-0}" "$RECIPE_CPU_ACCURACY" 2> /dev/null; then
    record PASS recipe-accuracy "GPU $accuracy, CPU $RECIPE_CPU_ACCURACY: within 0.3 points"
  else
    record FAIL recipe-accuracy "GPU ${accuracy:-?}, CPU $RECIPE_CPU_ACCURACY: more than 0.3 points apart"
  fi
}

# ---- diagnose -----------------------------------------------------------------------------------

phase_diagnose() {
  prepare_data || return 0
  local dir="$RUN/diagnose"
  mkdir -p "$dir"
  nvidia-smi dmon -s puc -d 1 > "$OUT/diagnose-dmon.txt" 2>&1 &
  local dmon=$!
  step diagnose-cnn-b64 75 pstrain --data-dir "$DATA" --device "$DEVICE" --model cnn --conv-filters 32,64 \
    --kernel-size 3 --hidden 128 --optimizer momentum --lr 0.05 --momentum 0.9 --batch-size 64 --passes 3 \
    --log-every-steps 200 --output-dir "$dir/cnn-b64"
  kill "$dmon" 2> /dev/null
  # The log's pass lines, and the GPU's own step breakdown (CUDA events: data, forward, backward, between steps),
  # beside diagnose-dmon.txt's clocks: a second pass whose forward/backward grow points at the GPU (clocks, power),
  # one whose "between steps" grows at the host.
  grep -E "pass [0-9]:|step [0-9]+/|GPU step time|layer kernels|cuDNN" "$LOGS/diagnose-cnn-b64.log" \
    > "$OUT/diagnose-steps.txt" 2> /dev/null
}

# ---- cpu ----------------------------------------------------------------------------------------

# cpu_run NAME NP ARGS...: one CPU run of the MLP; its samples/s (mean over passes after the first) into the CSV.
cpu_run() {
  local name=$1 np=$2
  shift 2
  local dir="$RUN/cpu/$name"
  step "cpu-$name" 120 mpirun --oversubscribe --bind-to none -np "$np" "$@" || return 0
  "$PYTHON" - "$dir/metrics.jsonl" "$name" "$np" >> "$CPU_CSV" <<'PY' || record FAIL "cpu-$name-metrics" "no metrics"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
timed = lines[1:] or lines
rate = sum(r["samples_per_sec"] for r in timed) / len(timed)
print(f"{sys.argv[2]},{sys.argv[3]},{rate:.0f},{lines[-1]['test_accuracy']:.4f}")
PY
}

phase_cpu() {
  prepare_data || return 0
  CPU_CSV="$OUT/cpu-scaling.csv"
  echo "run,ranks,samples_per_sec,final_test_accuracy" > "$CPU_CSV"
  local ranks mode
  local common=(--data-dir "$DATA" --device cpu --model mlp --hidden 256,128 --batch-size 64 --passes "$CPU_PASSES"
                --optimizer momentum --lr 0.05 --seed 1)
  for ranks in $CPU_RANKS; do
    if (( ranks == 1 )); then
      cpu_run local-1 1 pstrain "${common[@]}" --output-dir "$RUN/cpu/local-1"
      continue
    fi
    for mode in sync async; do
      cpu_run "$mode-$ranks" "$ranks" pstrain "${common[@]}" --mode "$mode" --num-pservers 1 \
        --output-dir "$RUN/cpu/$mode-$ranks"
    done
    cpu_run "allreduce-$ranks" "$ranks" pstrain "${common[@]}" --mode allreduce --output-dir "$RUN/cpu/allreduce-$ranks"
  done
  local tcp=(--mca btl tcp,self --mca osc pt2pt)
  cpu_run tcp-1+1-sync 2 "${tcp[@]}" pstrain "${common[@]}" --mode sync --num-pservers 1 --output-dir "$RUN/cpu/tcp-1+1-sync"
  cpu_run tcp-progress-1+1-sync 2 "${tcp[@]}" --mca btl_tcp_progress_thread 1 pstrain "${common[@]}" --mode sync \
    --num-pservers 1 --output-dir "$RUN/cpu/tcp-progress-1+1-sync"
  cat "$CPU_CSV"
}

for phase in "${phases[@]}"; do
  echo "==== phase $phase ===="
  "phase_$phase"
done
(( failures == 0 ))
