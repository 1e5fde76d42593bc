#!/usr/bin/env bash
# pstrain vs PyTorch on the N-gram language model of Bengio et al. 2003 (issue 10's bar: pstrain local words/s
# >= 1.2x PyTorch), one thread each, side by side.
#
# The model of examples/brown-nplm.ini (--model nplm, m=60, h=50, direct connections: the paper's MLP1), Adam,
# batch 128, on the Brown corpus: one pass over the first SHARDS training shards (of 8: about 100k windows each).
# ROUNDS rounds, each running pstrain local then PyTorch (torch_nplm.py: nn.Embedding(sparse=True), SparseAdam
# for the table, a plain loop over tensors in memory), so that the two alternate on a shared machine; the table
# gives each round and the medians. The test set is cut to its first 10,000 windows (the sanity perplexity only).
#
# Settings (environment): ROUNDS=3 SHARDS=2 BATCH=128 OPTIMIZER=adam LR=0.002 BUILD_DIR=<repo>/build
#   BROWN_CORPUS: the corpus folder (default: what mpi_launch/fetch-brown.sh prints)  PYTHON=/usr/bin/python3
#   RESULTS_ROOT=<repo>/benchmarks/results
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
set_defaults ROUNDS=3 SHARDS=2 BATCH=128 OPTIMIZER=adam LR=0.002 BUILD_DIR="$REPO/build" PYTHON=/usr/bin/python3 \
  RESULTS_ROOT="$REPO/benchmarks/results" RUN_TIMEOUT=1800
check_positive ROUNDS SHARDS BATCH
require_tools timeout
PSTRAIN="$BUILD_DIR/bin/pstrain"
[[ -x "$PSTRAIN" ]] || die "$PSTRAIN is missing: bash mpi_launch/setup.sh"
"$PYTHON" -c 'import torch, h5py' 2> /dev/null ||
  die "$PYTHON cannot import torch and h5py: apt-get install -y python3-torch python3-h5py"
corpus=${BROWN_CORPUS:-$(bash "$REPO/mpi_launch/fetch-brown.sh")}

start_results "-nplm"
data="$SCRATCH/data"
"$BUILD_DIR/bin/pstrain-data" brown --input "$corpus" --output "$SCRATCH/brown" --split-count 8 --test-limit 10000 \
  > "$OUT/raw/convert.log" 2>&1 || die "pstrain-data failed: $OUT/raw/convert.log"
mkdir -p "$data"
cp "$SCRATCH/brown/vocab.txt" "$SCRATCH/brown/test.h5" "$data/"
for ((i = 0; i < SHARDS; i++)); do cp "$SCRATCH/brown/$(printf 'train-%05d.h5' "$i")" "$data/"; done
{
  environment_head
  echo "torch=$("$PYTHON" -c 'import torch; print(torch.__version__)')"
  echo "rounds=$ROUNDS shards=$SHARDS batch=$BATCH optimizer=$OPTIMIZER lr=$LR"
  echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/environment.txt"
set_threads 1

for ((round = 1; round <= ROUNDS; round++)); do
  name="pstrain-local-$round"
  start_run "$name" "$BATCH" pstrain
  run_logged "$name" "$BATCH" "$OUT/raw/$name-b$BATCH.log" "$PSTRAIN" --data-dir "$data" --model nplm \
    --embedding-dim 60 --hidden 50 --direct --optimizer "$OPTIMIZER" --lr "$LR" --batch-size "$BATCH" --passes 1 \
    --tensorboard false --output-dir "$SCRATCH/$name"
  cp "$SCRATCH/$name/metrics.jsonl" "$OUT/raw/$name.metrics.jsonl"
  name="pytorch-$round"
  start_run "$name" "$BATCH" pytorch
  run_logged "$name" "$BATCH" "$OUT/raw/$name.json" "$PYTHON" "$SCRIPT_DIR/torch_nplm.py" --data-dir "$data" \
    --embedding-dim 60 --hidden 50 --direct --optimizer "$OPTIMIZER" --lr "$LR" --batch-size "$BATCH" --passes 1
done
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/environment.txt"

"$PYTHON" - "$OUT" "$ROUNDS" <<'PY' | tee "$OUT/table.md"
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
rows = []
for r in range(1, rounds + 1):
    p = json.loads(open(f"{out}/raw/pstrain-local-{r}.metrics.jsonl").read().strip().splitlines()[-1])
    t = json.loads(open(f"{out}/raw/pytorch-{r}.json").read().strip().splitlines()[-1])
    rows.append((r, p["words_per_sec"], t["words_per_sec"], p["test_perplexity"], t["test_perplexity"]))
print("| round | pstrain local words/s | PyTorch words/s | ratio | pstrain test ppl | PyTorch test ppl |")
print("|---:|---:|---:|---:|---:|---:|")
for r, pw, tw, pp, tp in rows:
    print(f"| {r} | {pw:.0f} | {tw:.0f} | {pw / tw:.2f}x | {pp:.1f} | {tp:.1f} |")
mp, mt = statistics.median(x[1] for x in rows), statistics.median(x[2] for x in rows)
ratio = statistics.median(x[1] / x[2] for x in rows)
print(f"| median | {mp:.0f} | {mt:.0f} | {ratio:.2f}x | | |")
print(f"\n{'PASS' if ratio >= 1.2 else 'FAIL'}: pstrain local >= 1.2x PyTorch words/s (median ratio {ratio:.2f}x)")
json.dump({"rounds": rows, "median_ratio": ratio}, open(f"{out}/summary.json", "w"), indent=1)
PY
note "results: $OUT (table.md, summary.json, environment.txt, raw/)"
