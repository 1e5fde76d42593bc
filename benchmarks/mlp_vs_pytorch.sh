#!/usr/bin/env bash
# pstrain vs PyTorch on the Fashion-MNIST MLP (784-256-128-10, ReLU, SGD momentum), one run, side by side.
#
# For each batch size in BATCHES, in this order:
#   1. pstrain local                      (1 process)
#   2. pstrain 1 server + 1 trainer sync  (mpirun -np 2)
#   3. pstrain 1 server + 1 trainer async (mpirun -np 2)
#   4. PyTorch single                     (1 process)
#   5. PyTorch DDP                        (2 processes, gloo on 127.0.0.1)
# Everything runs with one BLAS/OpenMP thread per process.
#
# Prints a markdown table plus PASS/FAIL lines for the targets of the issue, and writes the table, a
# summary JSON and all raw outputs to benchmarks/results/<timestamp>/ (git-ignored).
#
# Settings (environment):
#   BATCHES="64 256"  PASSES=3  LR=0.05  MOMENTUM=0.9  SEED=1  HIDDEN=256,128
#   BUILD_DIR=<repo>/build  DATA_DIR=<repo>/data/fashion-mnist  PYTHON=/usr/bin/python3
#   RUN_TIMEOUT=900 (seconds, per run)  BINARY_WAIT=180 (seconds to wait for a binary that is being rebuilt)
#   RESULTS_ROOT=<repo>/benchmarks/results
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=benchmarks/lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

set_defaults BATCHES="64 256" PASSES=3 LR=0.05 MOMENTUM=0.9 SEED=1 HIDDEN=256,128 BUILD_DIR="$REPO/build" \
  DATA_DIR="$REPO/data/fashion-mnist" PYTHON=/usr/bin/python3 RUN_TIMEOUT=900 BINARY_WAIT=180 \
  RESULTS_ROOT="$REPO/benchmarks/results"

PSTRAIN="$BUILD_DIR/bin/pstrain"
TORCH_MLP="$SCRIPT_DIR/torch_mlp.py"

# ---- checks -------------------------------------------------------------------------------------

check_positive PASSES
check_batches
require_tools mpirun timeout
[[ -x "$PYTHON" ]] || die "$PYTHON not found (the Debian interpreter with python3-torch and python3-h5py)"
"$PYTHON" -c 'import torch, h5py' 2>/dev/null ||
  die "$PYTHON cannot import torch and h5py: apt-get install -y python3-torch python3-h5py"
[[ -f "$TORCH_MLP" ]] || die "$TORCH_MLP is missing"
wait_for_binary
check_shards

# ---- output folder ------------------------------------------------------------------------------

start_results ""   # RESULTS_ROOT/<timestamp>/
{
  environment_head
  echo "mpirun=$(mpirun --version 2>/dev/null | head -n1)"
  echo "torch=$("$PYTHON" -c 'import torch; print(torch.__version__)')"
  echo "batches=$BATCHES passes=$PASSES lr=$LR momentum=$MOMENTUM seed=$SEED hidden=$HIDDEN"
  echo "data_dir=$DATA_DIR"
  echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/environment.txt"

set_threads 1
COMMON=(--data-dir "$DATA_DIR" --hidden "$HIDDEN" --optimizer momentum --lr "$LR" --momentum "$MOMENTUM"
        --passes "$PASSES" --seed "$SEED")

# run_torch NAME BATCH single|ddp
run_torch() {
  run_torch_cmd "$1" "$2" "$([[ $3 == ddp ]] && echo 2 || echo 1)" \
    "$PYTHON" "$TORCH_MLP" --mode "$3" --data-dir "$DATA_DIR" --hidden "$HIDDEN" --batch-size "$2" \
    --passes "$PASSES" --lr "$LR" --momentum "$MOMENTUM" --seed "$SEED"
}

# ---- runs, interleaved per batch size -----------------------------------------------------------

for batch in $BATCHES; do
  run_pstrain pstrain-local      "$batch" local
  run_pstrain pstrain-1+1-sync   "$batch" sync
  run_pstrain pstrain-1+1-async  "$batch" async
  run_torch   pytorch-single     "$batch" single
  run_torch   pytorch-ddp-2      "$batch" ddp
done
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/environment.txt"

# ---- table --------------------------------------------------------------------------------------

"$PYTHON" - "$OUT" "$PASSES" "$BATCHES" <<'PY' | tee "$OUT/table.md"
import json, sys
out, passes, batches = sys.argv[1], int(sys.argv[2]), [int(b) for b in sys.argv[3].split()]
PSTRAIN = ["pstrain-local", "pstrain-1+1-sync", "pstrain-1+1-async"]
TORCH = ["pytorch-single", "pytorch-ddp-2"]
LABEL = {"pstrain-local": "pstrain local (1 proc)", "pstrain-1+1-sync": "pstrain 1 server + 1 trainer, sync",
         "pstrain-1+1-async": "pstrain 1 server + 1 trainer, async", "pytorch-single": "PyTorch single (1 proc)",
         "pytorch-ddp-2": "PyTorch DDP (2 procs)"}

def mean(xs):
    return sum(xs) / len(xs)

rows = {}
for b in batches:
    for name in PSTRAIN:
        lines = [json.loads(l) for l in open(f"{out}/raw/{name}-b{b}.metrics.jsonl") if l.strip()]
        lines.sort(key=lambda r: r["pass"])
        timed = lines[1:] if passes > 1 and len(lines) > 1 else lines[:1]
        ms = lambda key: 1000 * mean([r[key] for r in timed])
        rows[name, b] = {"samples_per_sec": mean([r["samples_per_sec"] for r in timed]),
                         "final_test_accuracy": lines[-1]["test_accuracy"],
                         "compute_ms": ms("compute_s_per_step"), "push_ms": ms("push_s_per_step"),
                         "barrier_ms": ms("barrier_s_per_step"), "pull_ms": ms("pull_s_per_step"),
                         "passes_timed": [r["pass"] for r in timed], "mode": lines[-1]["mode"]}
    for name in TORCH:
        r = json.load(open(f"{out}/raw/{name}-b{b}.json"))
        rows[name, b] = {"samples_per_sec": r["samples_per_sec"], "final_test_accuracy": r["final_test_accuracy"],
                         "passes_timed": [p["pass"] for p in (r["per_pass"][1:] if passes > 1 else r["per_pass"][:1])]}
    for name in PSTRAIN + TORCH:
        row = rows[name, b]
        row["vs_torch_single"] = row["samples_per_sec"] / rows["pytorch-single", b]["samples_per_sec"]
        row["vs_torch_ddp"] = row["samples_per_sec"] / rows["pytorch-ddp-2", b]["samples_per_sec"]

timed_note = "passes 1..%d (pass 0 is warm-up)" % (passes - 1) if passes > 1 else "pass 0"
print(f"samples/s: training throughput of all trainers, mean over {timed_note}; per-step times: same passes.\n")
print("| config | batch | samples/s | ratio vs PyTorch single | ratio vs PyTorch DDP | final test acc "
      "| compute ms/step | push ms/step | barrier ms/step | pull ms/step |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for b in batches:
    for name in PSTRAIN + TORCH:
        r = rows[name, b]
        if name == "pstrain-local":
            per_step = [f"{r['compute_ms']:.3f}", "-", "-", "-"]
        elif name in PSTRAIN:
            per_step = [f"{r[k]:.3f}" for k in ("compute_ms", "push_ms", "barrier_ms", "pull_ms")]
        else:
            per_step = ["-"] * 4
        print(f"| {LABEL[name]} | {b} | {r['samples_per_sec']:.0f} | {r['vs_torch_single']:.2f}x "
              f"| {r['vs_torch_ddp']:.2f}x | {r['final_test_accuracy']:.4f} | " + " | ".join(per_step) + " |")

print("\nTargets (issue):")
checks = []
for b in (64, 256):
    if b in batches:
        ratio = rows["pstrain-local", b]["vs_torch_single"]
        checks.append((f"pstrain local >= 1.0x PyTorch single at batch {b}", ratio, ratio >= 1.0))
    else:
        print(f"SKIP: pstrain local >= 1.0x PyTorch single at batch {b} (batch {b} not in BATCHES)")
for b in batches:
    ratio = rows["pstrain-1+1-sync", b]["vs_torch_ddp"]
    checks.append((f"pstrain 1+1 sync >= 2x PyTorch DDP (2 processes) at batch {b}", ratio, ratio >= 2.0))
for text, ratio, ok in checks:
    print(f"{'PASS' if ok else 'FAIL'}: {text} (measured {ratio:.2f}x)")

json.dump({"passes": passes, "batches": batches, "timed": timed_note,
           "rows": [{"config": n, "batch": b, **v} for (n, b), v in rows.items()],
           "targets": [{"target": t, "ratio": r, "pass": ok} for t, r, ok in checks]},
          open(f"{out}/summary.json", "w"), indent=1)
PY

note "results: $OUT (table.md, summary.json, environment.txt, runs.csv, raw/)"
