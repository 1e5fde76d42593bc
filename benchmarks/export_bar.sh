#!/usr/bin/env bash
# Issue 30's bar at full size: a model trained as the user would, then evaluated with `pstrain evaluate`, exported
# with `pstrain export --onnx` and the ONNX graph evaluated outside pstrain, must give the test figures the training
# run itself reported for the same pass folder, to 4 digits. Three models:
#   mlp     the README's main job (mpi_launch/quickstart.sh): MLP 784-256-128-10, sync SGD, 1 server + 2 trainers,
#           momentum 0.9, lr 0.05 cosine, batch 64, on Fashion-MNIST (4 shards); quickstart's MLP_PASSES=10.
#   nplm    the Brown NPLM (examples/brown-nplm.ini): 1 server + 2 trainers, Brown corpus in 8 shards; figure:
#           test perplexity of the run's best-valid pass folder. The recipe's NPLM_PASSES=3.
#   recipe  the Fashion-MNIST recipe (examples/fashion-mnist-best.ini, the CNN of
#           examples/models/fashion-mnist-best.model): 1 server + 2 trainers; the recipe's RECIPE_PASSES=30.
# For each: the pass folder the run reports as best (best-valid when the run has a validation split, else its last
# pass), the run's own test figures for that pass (metrics.jsonl), `pstrain evaluate` on one process (and for the
# NPLM also `mpirun -np 3 pstrain evaluate --num-pservers 1`: the embedding table held by a server rank),
# `pstrain export --onnx`, `pstrain predict --logits` on the test shard, and tests/export/check_export.py
# (onnx.checker, then the graph evaluated in float64 numpy by tests/export/onnx_numpy.py, compared with pstrain's
# logits). Prints one markdown table; accuracies agree when equal to 4 decimals, perplexities when equal to 4
# significant digits (and within 1e-4 relative, check_export.py's tolerance).
#
# Run from anywhere (needs build/bin/pstrain and pstrain-data built with ONNX, Open MPI, Debian's python3-onnx and
# python3-h5py; the NPLM's logits file is samples x vocabulary float32, about 9 GB on disk for a moment):
#   OPENBLAS_NUM_THREADS=1 nice -n 5 benchmarks/export_bar.sh
#   MODELS="mlp nplm" NPLM_PASSES=1 benchmarks/export_bar.sh
# Settings (environment): MODELS="mlp nplm recipe" MLP_PASSES=10 NPLM_PASSES=3 RECIPE_PASSES=30
#   BUILD_DIR=<repo>/build DATA_ROOT=<repo>/data (fashion-mnist/ and brown/ under it, converted when missing)
#   BROWN_CORPUS (default: what mpi_launch/fetch-brown.sh prints) PYTHON=/usr/bin/python3 RUN_TIMEOUT=5400
#   RESULTS_ROOT=<repo>/benchmarks/results (written: RESULTS_ROOT/<UTC stamp>-export-bar/: table.md, timings.txt,
#   environment.txt, raw/ with each run's metrics.jsonl, config.ini, the evaluations and the checker's output).
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
NOTE_TAG=export-bar
set_defaults MODELS="mlp nplm recipe" MLP_PASSES=10 NPLM_PASSES=3 RECIPE_PASSES=30 BUILD_DIR="$REPO/build" \
  DATA_ROOT="$REPO/data" PYTHON=/usr/bin/python3 RUN_TIMEOUT=5400 RESULTS_ROOT="$REPO/benchmarks/results"
check_positive MLP_PASSES NPLM_PASSES RECIPE_PASSES RUN_TIMEOUT
require_tools timeout mpirun
PSTRAIN="$BUILD_DIR/bin/pstrain"
[[ -x "$PSTRAIN" && -x "$BUILD_DIR/bin/pstrain-data" ]] || die "$PSTRAIN or pstrain-data is missing: bash mpi_launch/setup.sh"
if "$PSTRAIN" export --onnx /dev/null/x.onnx nowhere 2>&1 | grep -q "built without ONNX"; then
  die "$PSTRAIN was built without ONNX (apt-get install libonnx-dev, then rebuild)"
fi
"$PYTHON" -c 'import onnx, numpy, h5py' 2> /dev/null || die "$PYTHON cannot import onnx, numpy and h5py"
for variable in $(env | grep -o '^PSTRAIN_[A-Z_]*' || true); do unset "$variable"; done
export "${MPI_ENV[@]}"

start_results "-export-bar"
{
  environment_head  # before set_threads: GNU nproc counts OMP_NUM_THREADS
  echo "models=$MODELS mlp_passes=$MLP_PASSES nplm_passes=$NPLM_PASSES recipe_passes=$RECIPE_PASSES"
  echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/environment.txt"
set_threads 1
MPIRUN=(timeout --kill-after=30 "$RUN_TIMEOUT" mpirun --oversubscribe --bind-to none "${MPI_EXPORTS[@]}")
echo "model,step,seconds" > "$OUT/timings.csv"

# timed MODEL STEP COMMAND...: COMMAND (stdout and stderr to raw/MODEL-STEP.log), its wall time in timings.csv;
# dies naming the log when it fails.
timed() {
  local model=$1 step=$2 start rc=0
  shift 2
  start=$(date +%s.%N)
  echo "$*" > "$OUT/raw/$model-$step.log"
  note "$model: $step"
  (cd "$REPO" && "$@") >> "$OUT/raw/$model-$step.log" 2>&1 || rc=$?
  echo "$model,$step,$(echo "$(date +%s.%N) - $start" | bc)" >> "$OUT/timings.csv"
  if ((rc != 0)); then
    tail -n 20 "$OUT/raw/$model-$step.log" >&2
    die "$model: $step failed (exit $rc); log: $OUT/raw/$model-$step.log"
  fi
}

fashion_data() {
  local data="$DATA_ROOT/fashion-mnist"
  [[ -f "$data/test.h5" ]] || timed data fashion-mnist "$BUILD_DIR/bin/pstrain-data" fashion-mnist \
    --input /usr/share/datasets/fashion-mnist --output "$data" --split-count 4
  echo "$data"
}

brown_data() {
  local data="$DATA_ROOT/brown"
  if [[ ! -f "$data/test.h5" ]]; then
    local corpus=${BROWN_CORPUS:-$(bash "$REPO/mpi_launch/fetch-brown.sh")}
    timed data brown "$BUILD_DIR/bin/pstrain-data" brown --input "$corpus" --output "$data" --split-count 8
  fi
  echo "$data"
}

# The pass folder the run reports as best: best-valid when the run kept one, else its newest pass folder.
best_pass() {
  local run=$1
  if [[ -L "$run/best-valid" ]]; then
    echo "$run/$(readlink "$run/best-valid")"
  else
    find "$run" -maxdepth 1 -name 'pass-[0-9]*' -type d | sort | tail -n 1
  fi
}

# measure MODEL DATA RUN [3]: the steps after training, on the run's best pass folder; "3" adds the evaluation
# on 3 ranks with the row tables on 1 server rank.
measure() {
  local model=$1 data=$2 run=$3 ranks=${4:-} pass number
  pass=$(best_pass "$run")
  [[ -n "$pass" && -d "$pass" ]] || die "$model: no pass folder in $run"
  number=$((10#${pass##*pass-}))
  echo "$pass" > "$OUT/raw/$model-pass.txt"
  cp "$run/metrics.jsonl" "$OUT/raw/$model-metrics.jsonl"
  cp "$run/config.ini" "$OUT/raw/$model-config.ini" 2> /dev/null || true
  "$PYTHON" - "$run/metrics.jsonl" "$number" > "$OUT/raw/$model-reported.json" <<'PY'
import json, sys
lines = [json.loads(t) for t in open(sys.argv[1]) if t.strip()]
found = [line for line in lines if line.get("pass") == int(sys.argv[2]) and "test_loss" in line]
if not found:
    sys.exit(f"no metrics line for pass {sys.argv[2]} in {sys.argv[1]}")
print(json.dumps(found[-1]))
PY
  local work="$SCRATCH/$model-use"
  mkdir -p "$work"
  timed "$model" evaluate "$PSTRAIN" evaluate "$pass" --data-dir "$data" --output "$OUT/raw/$model-evaluate.json"
  if [[ -n "$ranks" ]]; then
    timed "$model" evaluate-3-ranks "${MPIRUN[@]}" -np 3 "$PSTRAIN" evaluate "$pass" --data-dir "$data" \
      --num-pservers 1 --output "$OUT/raw/$model-evaluate-3-ranks.json"
  fi
  timed "$model" export "$PSTRAIN" export --onnx "$work/model.onnx" "$pass"
  timed "$model" predict "$PSTRAIN" predict "$pass" --input "$data/test.h5" --output "$work/logits.npy" --logits
  # check_export.py exits 1 when the figures differ: that is a result to print, not a reason to stop.
  local start rc=0
  start=$(date +%s.%N)
  note "$model: onnx outside pstrain"
  "$PYTHON" "$REPO/tests/export/check_export.py" "$work/model.onnx" "$data/test.h5" "$work/logits.npy" \
    "$OUT/raw/$model-evaluate.json" "$model" > "$OUT/raw/$model-onnx.log" 2>&1 || rc=$?
  echo "$model,onnx-outside-pstrain,$(echo "$(date +%s.%N) - $start" | bc)" >> "$OUT/timings.csv"
  echo "$rc" > "$OUT/raw/$model-onnx.rc"
  cat "$OUT/raw/$model-onnx.log" >&2
  ls -l "$work/model.onnx" > "$OUT/raw/$model-onnx-size.txt"
  rm -rf "$work"
}

for model in $MODELS; do
  run="$SCRATCH/$model-run"
  case "$model" in
    mlp)
      data=$(fashion_data)
      timed mlp train "${MPIRUN[@]}" -np 3 "$PSTRAIN" --data-dir "$data" --output-dir "$run" --model mlp \
        --hidden 256,128 --batch-size 64 --mode sync --passes "$MLP_PASSES" --device cpu --optimizer momentum \
        --lr 0.05 --momentum 0.9 --lr-schedule cosine
      measure mlp "$data" "$run"
      ;;
    nplm)
      data=$(brown_data)
      timed nplm train "${MPIRUN[@]}" -np 3 "$PSTRAIN" --config examples/brown-nplm.ini --data-dir "$data" \
        --output-dir "$run" --passes "$NPLM_PASSES"
      measure nplm "$data" "$run" 3
      ;;
    recipe)
      data=$(fashion_data)
      timed recipe train "${MPIRUN[@]}" -np 3 "$PSTRAIN" --config examples/fashion-mnist-best.ini --data-dir "$data" \
        --output-dir "$run" --passes "$RECIPE_PASSES"
      measure recipe "$data" "$run"
      ;;
    *) die "unknown model '$model' in MODELS (mlp nplm recipe)" ;;
  esac
  rm -rf "$run"
done
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/environment.txt"

"$PYTHON" - "$OUT" "$MODELS" <<'PY' | tee "$OUT/table.md"
import csv, json, os, re, sys
out, models = sys.argv[1], sys.argv[2].split()
raw = os.path.join(out, "raw")
names = {"mlp": "README main job (MLP, quickstart.sh)", "nplm": "Brown NPLM (brown-nplm.ini)",
         "recipe": "Fashion-MNIST recipe (fashion-mnist-best.ini)"}


def load(name):
    path = os.path.join(raw, name)
    return json.load(open(path)) if os.path.exists(path) else None


print("| model | pass | figure | run reported | pstrain evaluate | evaluate on 3 ranks | ONNX outside pstrain "
      "| max relative logit difference | agree to 4 digits |")
print("|---|---|---|---:|---:|---:|---:|---:|---|")
failures = []
for model in models:
    reported = load(f"{model}-reported.json")
    single = load(f"{model}-evaluate.json")
    ranks = load(f"{model}-evaluate-3-ranks.json")
    log = open(os.path.join(raw, f"{model}-onnx.log")).read()
    rc = int(open(os.path.join(raw, f"{model}-onnx.rc")).read())
    pass_folder = os.path.basename(open(os.path.join(raw, f"{model}-pass.txt")).read().strip())
    worst = re.search(r"max relative logit difference ([0-9.e+-]+)", log)
    language = "test_perplexity" in reported
    if language:
        onnx = re.search(r"perplexity pstrain [0-9.]+ onnx ([0-9.]+)", log)
        figure, key = "test perplexity", "perplexity"
        values = [reported["test_perplexity"], single["perplexity"], ranks["perplexity"] if ranks else None,
                  float(onnx.group(1)) if onnx else None]
        shown = lambda v: f"{v:.4f}"
        four = lambda v: f"{v:.4g}"
    else:
        onnx = re.search(r"accuracy pstrain [0-9.]+ onnx ([0-9.]+)", log)
        figure = "test accuracy"
        values = [reported["test_accuracy"], single["accuracy"], ranks["accuracy"] if ranks else None,
                  float(onnx.group(1)) if onnx else None]
        shown = lambda v: f"{v:.4f}"  # the exact fraction for a test set of 10,000 samples
        four = lambda v: f"{v:.4f}"
    present = [v for v in values if v is not None]
    agree = onnx is not None and rc == 0 and len({four(v) for v in present}) == 1
    if language:  # 4 significant digits, and within check_export.py's 1e-4 relative of the run's figure
        agree = agree and all(abs(v / values[0] - 1) <= 1e-4 for v in present)
    if not agree:
        failures.append(model)
    cells = [shown(v) if v is not None else "-" for v in values]
    print(f"| {names.get(model, model)} | {pass_folder} | {figure} | " + " | ".join(cells) +
          f" | {worst.group(1) if worst else '-'} | {'yes' if agree else 'NO'} |")
print()
for model in models:
    print(open(os.path.join(raw, f"{model}-onnx.log")).read().strip())
print()
print("| model | step | seconds |")
print("|---|---|---:|")
for row in csv.DictReader(open(os.path.join(out, "timings.csv"))):
    print(f"| {row['model']} | {row['step']} | {float(row['seconds']):.1f} |")
print()
print("FAIL: " + ", ".join(failures) + " disagree" if failures else "PASS: every figure agrees to 4 digits")
PY
note "results: $OUT (table.md, timings.csv, environment.txt, raw/)"
