#!/usr/bin/env bash
# Communication behind computation (issue 11, item 3), side by side: pstrain sync PS with --overlap true (streamed:
# gradient blocks go out during the backward pass, parameter blocks come in during the forward pass) and --overlap
# false (one-sided, everything exchanged after the backward pass; the same bits), against pstrain local,
# alternating in every round; medians over ROUNDS. MODE=async or ssp compares their pushes streamed and whole.
# COMPARE=poll compares instead the pause between polls of async/ssp (--poll-interval-us 0, yielding the
# processor, against 100, sleeping 100 us; --overlap auto both times).
# 1 server + TRAINERS trainers, on each MPI path of PATHS (shm: Open MPI's defaults; tcp: --mca btl tcp,self
# --mca osc pt2pt, the cross-node path), for each model of MODELS at batch BATCH.
# Prints a table (samples/s, the ratio to local, the per-step breakdown of the last round) and writes it with
# every run's numbers to RESULTS_ROOT/<UTC timestamp>-overlap/.
#
# Data: Fashion-MNIST converted from DATA_DIR (the IDX files) into scratch folders, the first MLP_LIMIT (24576) or
# CNN_LIMIT (3072) training samples, as speed_report.sh does.
#
# Settings (environment): MODE=sync COMPARE=overlap ROUNDS=5 MODELS="mlp cnn" BATCH=64 PATHS="shm tcp" TRAINERS=1 PASSES=3 THREADS=1
#   MLP_LIMIT=24576 CNN_LIMIT=3072 DATA_DIR=/usr/share/datasets/fashion-mnist BUILD_DIR=<repo>/build
#   RESULTS_ROOT=<repo>/benchmarks/results RUN_TIMEOUT=600
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=benchmarks/lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
NOTE_TAG=overlap
set_defaults MODE=sync COMPARE=overlap ROUNDS=5 MODELS="mlp cnn" BATCH=64 PATHS="shm tcp" TRAINERS=1 PASSES=3 THREADS=1 MLP_LIMIT=24576 \
  CNN_LIMIT=3072 DATA_DIR=/usr/share/datasets/fashion-mnist BUILD_DIR="$REPO/build" \
  RESULTS_ROOT="$REPO/benchmarks/results" RUN_TIMEOUT=600
check_positive ROUNDS BATCH TRAINERS PASSES THREADS MLP_LIMIT CNN_LIMIT RUN_TIMEOUT
PSTRAIN="$BUILD_DIR/bin/pstrain"
[[ -x "$PSTRAIN" ]] || die "no $PSTRAIN: build first (bash mpi_launch/setup.sh)"
require_tools mpirun python3
case $COMPARE in
  overlap) CONFIGS=(overlap serial) ;;
  poll) CONFIGS=(yield sleep100) ;;
  *) die "COMPARE=$COMPARE: overlap or poll" ;;
esac

OUT="$RESULTS_ROOT/$(date -u +%Y%m%dT%H%M%SZ)-overlap"
mkdir -p "$OUT/raw"
declare -A DATA_OF
for model in $MODELS; do
  limit=$MLP_LIMIT
  [[ $model == cnn ]] && limit=$CNN_LIMIT
  DATA_OF[$model]="$OUT/data-$model"
  "$BUILD_DIR/bin/pstrain-data" fashion-mnist --input "$DATA_DIR" --output "${DATA_OF[$model]}" --split-count 12 \
    --limit "$limit" --test-limit 1000 > "$OUT/data-$model.log" 2>&1 || die "converting $DATA_DIR failed (see $OUT/data-$model.log)"
done
ROWS="$OUT/rounds.csv"
echo "round,model,path,config,samples_per_sec,compute_ms,push_ms,barrier_ms,pull_ms" > "$ROWS"
export OPENBLAS_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS
{ git_info; echo "rounds=$ROUNDS batch=$BATCH trainers=$TRAINERS passes=$PASSES threads=$THREADS limits=$MLP_LIMIT,$CNN_LIMIT";
  echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) cores=$(nproc)"; } > "$OUT/environment.txt"

# The flags that make a configuration of CONFIGS.
config_flags() {
  case $1 in
    overlap) echo "--overlap true" ;;
    serial) echo "--overlap false" ;;
    yield) echo "--poll-interval-us 0" ;;
    sleep100) echo "--poll-interval-us 100" ;;
  esac
}

model_flags() {
  case $1 in
    mlp) echo "--model mlp" ;;
    cnn) echo "--model cnn" ;;
    *) die "unknown model '$1' (mlp, cnn)" ;;
  esac
}

# One run; appends its line to rounds.csv. The figures are pass 1's onwards (pass 0 warms up), as pstrain's
# metrics.jsonl states them: samples/s of all trainers, per-step milliseconds of the lead trainer.
run_one() {
  local round=$1 model=$2 path=$3 config=$4 dir="$OUT/raw/r$1-$2-$3-$4" flags
  read -r -a flags <<< "$(model_flags "$model")"
  local cmd=("$PSTRAIN" --data-dir "${DATA_OF[$model]}" --output-dir "$dir" "${flags[@]}" --batch-size "$BATCH"
             --passes "$PASSES" --optimizer momentum --lr 0.05 --seed 1 --tensorboard false --progress-every-s 0)
  if [[ $config != local ]]; then
    local mca=() chosen
    [[ $path == tcp ]] && mca=(--mca btl tcp,self --mca osc pt2pt)
    read -r -a chosen <<< "$(config_flags "$config")"
    cmd=(env "${MPI_ENV[@]}" mpirun --oversubscribe --bind-to none -np $((TRAINERS + 1)) "${mca[@]}" "${cmd[@]}"
         --mode "$MODE" --num-pservers 1 "${chosen[@]}")
  fi
  timeout "$RUN_TIMEOUT" "${cmd[@]}" > "$dir.log" 2>&1 || die "run failed: ${cmd[*]} (log: $dir.log)"
  python3 - "$dir/metrics.jsonl" "$round,$model,$path,$config" >> "$ROWS" <<'PY'
import json, sys
passes = [r for r in map(json.loads, open(sys.argv[1])) if r.get("event", "pass") == "pass" and "samples_per_sec" in r]
later = passes[1:] or passes
mean = lambda key: sum(r.get(key, 0.0) for r in later) / len(later)
print(sys.argv[2] + "," + ",".join(f"{v:.6g}" for v in (
    mean("samples_per_sec"), 1e3 * mean("compute_s_per_step"), 1e3 * mean("push_s_per_step"),
    1e3 * mean("barrier_s_per_step"), 1e3 * mean("pull_s_per_step"))))
PY
  rm -rf "$dir"
}
trap 'rm -rf "$OUT"/data-*/' EXIT

for ((round = 1; round <= ROUNDS; round++)); do
  note "round $round of $ROUNDS"
  for model in $MODELS; do
    run_one "$round" "$model" - local
    for path in $PATHS; do
      for config in "${CONFIGS[@]}"; do run_one "$round" "$model" "$path" "$config"; done
    done
  done
done

python3 - "$ROWS" <<'PY' | tee "$OUT/table.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
local = {}
for r in rows:
    if r["config"] == "local":
        local[(r["round"], r["model"])] = float(r["samples_per_sec"])
print("| model | path | config | samples/s (median) | x local (median of rounds) | compute | push | barrier | pull |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|")
keys = sorted({(r["model"], r["path"], r["config"]) for r in rows}, key=lambda k: (k[0], k[1] != "-", k[1], k[2]))
for model, path, config in keys:
    mine = [r for r in rows if (r["model"], r["path"], r["config"]) == (model, path, config)]
    sps = statistics.median(float(r["samples_per_sec"]) for r in mine)
    ratio = statistics.median(float(r["samples_per_sec"]) / local[(r["round"], model)] for r in mine)
    ms = {k: statistics.median(float(r[k + "_ms"]) for r in mine) for k in ("compute", "push", "barrier", "pull")}
    print(f"| {model} | {path} | {config} | {sps:.0f} | {ratio:.3f} | {ms['compute']:.3f} | {ms['push']:.3f} | "
          f"{ms['barrier']:.3f} | {ms['pull']:.3f} |")
print("\nper-step milliseconds: medians over rounds; config overlap = --overlap true (streamed), serial = --overlap "
      "false (one-sided), yield = --poll-interval-us 0, sleep100 = --poll-interval-us 100")
PY
note "results: $OUT"
