#!/usr/bin/env bash
# The CPU's test accuracy on the GPU benchmark's own recipes, side by side with the GPU's (issue: GPU training must
# reach the CPU's accuracy within 0.3 points). For each pstrain row of the cnn_vs_pytorch.sh result folders given
# (brought back from the GPU machine: benchmarks/gpu/results/<date>/<model>/), reruns that row's config.ini with
# --device cpu on the same data twice, with the default threads and with one (the CPU's own spread: a different
# summation order alone moved the MLP's accuracy after 2 passes by 1.4 points, 2026-11-26), then prints one
# table line per row: PASS when the GPU's accuracy lies within TOLERANCE of the range the CPU's runs span.
#
#   DATA_DIR=/tmp/fashion-mnist-16 bash benchmarks/gpu/cpu_accuracy.sh benchmarks/gpu/results/2026-11-26-h200/mlp ...
#
# The data must be made as on the GPU machine (run_checks.sh: pstrain-data fashion-mnist --split-count 16): the
# shards decide the sample order. Settings: DATA_DIR (required)  ROWS="pstrain-local" (row names to rerun; a 1+1
# sync or 1-trainer allreduce row trains the same parameters as local)  BATCHES (default: every batch found)
# BUILD_DIR=<repo>/build  TOLERANCE=0.003  OUT=<repo>/benchmarks/results/gpu-cpu-accuracy-<time>
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=benchmarks/lib/common.sh
source "$SCRIPT_DIR/../lib/common.sh"
NOTE_TAG=cpu-accuracy
set_defaults BUILD_DIR="$REPO/build" ROWS="pstrain-local" TOLERANCE=0.003 \
  OUT="$REPO/benchmarks/results/gpu-cpu-accuracy-$(date -u +%Y%m%dT%H%M%SZ)"
[[ -n "${DATA_DIR:-}" && -f "$DATA_DIR/test.h5" ]] || die "DATA_DIR must hold the shards (made with --split-count 16)"
(( $# > 0 )) || die "usage: DATA_DIR=... bash benchmarks/gpu/cpu_accuracy.sh RESULT_FOLDER..."
mkdir -p "$OUT"
TABLE="$OUT/table.md"
echo "| model | row | batch | GPU test accuracy | CPU, default threads | CPU, 1 thread | GPU - CPU range (points) | verdict |" > "$TABLE"
echo "|---|---|---:|---:|---:|---:|---:|---|" >> "$TABLE"
failures=0
for folder in "$@"; do
  for row in $ROWS; do
    for config in "$folder"/raw/"$row"-b*.config.ini; do
      [[ -f "$config" ]] || continue
      batch="${config##*-b}"
      batch="${batch%.config.ini}"
      [[ -z "${BATCHES:-}" || " $BATCHES " == *" $batch "* ]] || continue
      gpu_metrics="${config%.config.ini}.metrics.jsonl"
      run_dir="$OUT/$(basename "$folder")-$row-b$batch"
      note "$(basename "$folder") $row batch $batch on the CPU ..."
      "$BUILD_DIR/bin/pstrain" --config "$config" --device cpu --data-dir "$DATA_DIR" --output-dir "$run_dir" \
        > "$run_dir.log" 2>&1 || die "the CPU run failed: $run_dir.log"
      OMP_NUM_THREADS=1 "$BUILD_DIR/bin/pstrain" --config "$config" --device cpu --data-dir "$DATA_DIR" \
        --output-dir "$run_dir-1thread" > "$run_dir-1thread.log" 2>&1 || die "the CPU run failed: $run_dir-1thread.log"
      python3 - "$gpu_metrics" "$run_dir/metrics.jsonl" "$run_dir-1thread/metrics.jsonl" "$(basename "$folder")" \
        "$row" "$batch" "$TOLERANCE" >> "$TABLE" <<'PY' || failures=$((failures + 1))
import json, sys
gpu_file, cpu_file, single_file, model, row, batch, tolerance = sys.argv[1:8]
last = lambda path: [json.loads(l) for l in open(path) if l.strip()][-1]["test_accuracy"]
gpu, cpu, single = last(gpu_file), last(cpu_file), last(single_file)
low, high = min(cpu, single), max(cpu, single)
gap = gpu - high if gpu > high else gpu - low if gpu < low else 0.0
ok = abs(gap) <= float(tolerance) + 1e-12
print(f"| {model} | {row} | {batch} | {gpu:.4f} | {cpu:.4f} | {single:.4f} | {100 * gap:+.2f} | {'PASS' if ok else 'FAIL'} |")
sys.exit(0 if ok else 1)
PY
    done
  done
done
cat "$TABLE"
note "results: $OUT"
(( failures == 0 ))
