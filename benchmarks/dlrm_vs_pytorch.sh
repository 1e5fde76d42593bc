#!/usr/bin/env bash
# pstrain vs a plain PyTorch loop on DLRM over synthetic click logs (issue 41's bar), one thread a process.
#
# Data: LINES synthetic Criteo-format lines (pstrain-data synthetic-ctr --seed SEED: 13 dense features, 26
# categorical fields, the last 10% of the lines as test.h5, the rest in 2 equal training shards), or the folder
# DATA_DIR names (kept as it is). The generator's planted Bayes test AUC (the best any model reaches on these test
# lines) is printed under the table.
# Model (the same on both sides): bottom MLP 13 -> BOTTOM_HIDDEN (64) -> EMBEDDING_DIM (16), ReLU; a table of ROWS
# (2^18) rows x EMBEDDING_DIM per field, each bag the sum of the rows its ids hash to (pstrain's hash, seed = the
# field); DLRM's dot interaction of the 27 vectors (16 + 351 features); top MLP HIDDEN (512,256), ReLU, one logit,
# binary cross-entropy. pstrain gets it as a model file (written to the results folder: the --model dlrm preset's
# layers with every table ROWS rows, limit=0.01); PyTorch is torch_dlrm.py (nn.EmbeddingBag(sparse=True) per
# field, torch.optim.Adagrad over the tables' sparse gradients and over the dense layers, tensors in memory, no
# DataLoader). Adagrad at LR (0.05, pstrain's default for its click models), batch BATCH (512) per trainer,
# PASSES passes, seed SEED.
#
# PSTRAIN_MODEL=deepfm makes both sides DeepFM: pstrain's --model deepfm preset (--table-rows ROWS --embedding-dim
# EMBEDDING_DIM --hidden HIDDEN: a linear (dim-1, seed 1000 + the field) and a vector table (seed = the field) of
# ROWS rows per field, the sum of the linear weights, FM's second-order term over the field vectors, a deep MLP over
# the dense features and the field vectors at HIDDEN, here 400,400 unless set, the preset's default; the logit the
# sum of the three), against torch_dlrm.py --model deepfm, the same network in PyTorch (same hashing, init rules,
# Adagrad over the sparse tables and the dense layers). No dlrm.model then; BOTTOM_HIDDEN does not apply.
# ROUNDS rounds; each runs, in this order, pstrain in every mode of MODES, then PyTorch:
#   local  pstrain alone, no MPI (its tables in its own memory; a step updates the rows it touched)
#   sync   1 server + 2 trainers (mpirun -np 3) over TCP (--mca btl tcp,self --mca osc pt2pt), --mode sync
#          --num-pservers 1: the server holds the tables by rows; 2 x BATCH samples a step
#   async  the same, --mode async
#   geo    the same, --mode geo (--geo-steps 4: a trainer holds its rows between meetings, SGD on them)
# samples/s: each program's own figure for its training loop (pstrain's metrics.jsonl samples_per_sec: all
# trainers, the slowest one's pass time), the mean over passes 1..PASSES-1 when PASSES > 1, else pass 0. Test AUC,
# logloss: after the last pass. The table gives the medians over the rounds, the median of the per-round ratios
# to PyTorch and their range, and the AUC difference to PyTorch.
#
# Writes table.md, summary.json, rounds.csv, environment.txt, dlrm.model and raw/ (every run's log, pstrain's
# metrics.jsonl and config.ini, PyTorch's JSON lines) to RESULTS_ROOT/<UTC timestamp>-dlrm/. As root it installs
# what is missing of python3-torch and python3-h5py with apt-get (INSTALL=0: never).
#
# Settings (environment):
#   LINES=2000000  SEED=1  PASSES=1  ROUNDS=3  MODES=local (any of: local sync async geo)  BATCH=512  LR=0.05 (deepfm: 0.0125)
#   PSTRAIN_MODEL=dlrm (or deepfm: both sides)  EMBEDDING_DIM=16  ROWS=262144  BOTTOM_HIDDEN=64
#   HIDDEN=512,256 (deepfm: 400,400)  THREADS=1  DATA_DIR (an existing CTR folder with 2 training shards, instead
#   of generating one)  BUILD_DIR=<repo>/build  PYTHON=/usr/bin/python3
#   RESULTS_ROOT=<repo>/benchmarks/results  RUN_TIMEOUT=3600 (seconds, per run)  BINARY_WAIT=180
#   MPIRUN_ARGS="" (extra mpirun flags)  INSTALL=1
# Example (a quick look, ~2 minutes on 2 cores): LINES=40000 PASSES=2 ROUNDS=1 MODES="local sync"
#   bash benchmarks/dlrm_vs_pytorch.sh
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=benchmarks/lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
NOTE_TAG=dlrm

# DeepFM's deep MLP and learning rate default to the preset's (given to both sides); DLRM's top MLP to 512,256.
if [[ "${PSTRAIN_MODEL:-}" == deepfm ]]; then set_defaults HIDDEN=400,400 LR=0.0125; fi
set_defaults LINES=2000000 SEED=1 PASSES=1 ROUNDS=3 MODES=local BATCH=512 LR=0.05 EMBEDDING_DIM=16 ROWS=262144 \
  BOTTOM_HIDDEN=64 HIDDEN=512,256 THREADS=1 BUILD_DIR="$REPO/build" PYTHON=/usr/bin/python3 \
  RESULTS_ROOT="$REPO/benchmarks/results" RUN_TIMEOUT=3600 BINARY_WAIT=180 MPIRUN_ARGS= INSTALL=1 PSTRAIN_MODEL=dlrm
DATA_DIR="${DATA_DIR:-}"

PSTRAIN="$BUILD_DIR/bin/pstrain"
PSTRAIN_DATA="$BUILD_DIR/bin/pstrain-data"
TORCH_DLRM="$SCRIPT_DIR/torch_dlrm.py"

# ---- checks -------------------------------------------------------------------------------------------------

check_positive LINES PASSES ROUNDS BATCH EMBEDDING_DIM ROWS THREADS RUN_TIMEOUT
[[ "$SEED" =~ ^[0-9]+$ ]] || die "SEED must be a non-negative integer (got '$SEED')"
[[ "$LR" =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] || die "LR must be a positive number (got '$LR')"
for widths in BOTTOM_HIDDEN HIDDEN; do
  [[ "${!widths}" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "$widths must be comma-separated widths (got '${!widths}')"
done
[[ -n "${MODES// /}" ]] || die "MODES is empty"
for mode in $MODES; do
  [[ "$mode" =~ ^(local|sync|async|geo)$ ]] || die "MODES: '$mode' is not one of local sync async geo"
done
[[ "$PSTRAIN_MODEL" =~ ^(dlrm|deepfm)$ ]] || die "PSTRAIN_MODEL must be dlrm or deepfm (got '$PSTRAIN_MODEL')"
[[ "$INSTALL" == 0 || "$INSTALL" == 1 ]] || die "INSTALL must be 0 or 1 (got '$INSTALL')"
require_tools timeout
[[ " $MODES " =~ " "(sync|async|geo)" " ]] && require_tools mpirun
[[ -x "$PYTHON" ]] || die "$PYTHON not found (the Debian interpreter: python3-torch, python3-h5py)"
[[ -f "$TORCH_DLRM" ]] || die "$TORCH_DLRM is missing"
wait_for_binary
[[ -n "$DATA_DIR" || -x "$PSTRAIN_DATA" ]] ||
  die "$PSTRAIN_DATA is missing: cmake --build $BUILD_DIR -j2 --target pstrain pstrain-data"
if [[ -n "$DATA_DIR" ]]; then
  shopt -s nullglob
  shards=("$DATA_DIR"/train-[0-9][0-9][0-9][0-9][0-9].h5)
  shopt -u nullglob
  if (( ${#shards[@]} < 2 )) || [[ ! -f "$DATA_DIR/test.h5" || ! -f "$DATA_DIR/ctr_fields.tsv" ]]; then
    die "DATA_DIR=$DATA_DIR needs test.h5, ctr_fields.tsv and at least 2 train-NNNNN.h5 CTR shards"
  fi
fi

# ---- output folder, packages, data ----------------------------------------------------------------------------

start_results "-dlrm"   # OUT, raw/, runs.csv; SCRATCH (the data and pstrain's output folders), removed on exit

install_python_modules torch h5py
"$PYTHON" -c 'import torch, h5py' 2> /dev/null ||
  die "$PYTHON cannot import torch and h5py: apt-get install -y python3-torch python3-h5py"

if [[ -z "$DATA_DIR" ]]; then
  DATA_DIR="$SCRATCH/data"
  note "generating $LINES synthetic click lines (seed $SEED)"
  "$PSTRAIN_DATA" synthetic-ctr --lines "$LINES" --seed "$SEED" --output "$DATA_DIR" --split-count 2 \
    > "$OUT/raw/generate.log" 2>&1 || die "pstrain-data synthetic-ctr failed: $OUT/raw/generate.log"
fi
cp "$DATA_DIR/ctr_fields.tsv" "$OUT/raw/"
cp "$DATA_DIR/ctr_conversion.txt" "$OUT/raw/" 2> /dev/null || true
BAYES_AUC=$(awk -F': ' '/^bayes test AUC/ { print $2 }' "$DATA_DIR/ctr_conversion.txt" 2> /dev/null || true)
FIELDS=$(( $(wc -l < "$DATA_DIR/ctr_fields.tsv") - 1 ))
(( FIELDS >= 1 )) || die "$DATA_DIR/ctr_fields.tsv names no field"

# The model file: --model dlrm's layers (lib/nn/click_presets.cc), every table ROWS rows, seed = its field.
# PSTRAIN_MODEL=deepfm uses the preset itself (no model file).
MODEL="$OUT/dlrm.model"
if [[ "$PSTRAIN_MODEL" == dlrm ]]; then
  {
    echo "# DLRM of dlrm_vs_pytorch.sh ($FIELDS fields x $ROWS rows x $EMBEDDING_DIM), the network of torch_dlrm.py"
    last=input
    i=0
    for width in ${BOTTOM_HIDDEN//,/ } "$EMBEDDING_DIM"; do
      i=$((i + 1))
      echo "bottom$i dense units=$width inputs=$last"
      echo "bottom${i}_relu relu"
      last="bottom${i}_relu"
    done
    vectors=$last
    for ((f = 0; f < FIELDS; f++)); do
      echo "table$f embedding_bag field=$f rows=$ROWS dim=$EMBEDDING_DIM seed=$f limit=0.01"
      vectors+=",table$f"
    done
    echo "interaction dot_interaction inputs=$vectors"
    last=interaction
    i=0
    for width in ${HIDDEN//,/ }; do
      i=$((i + 1))
      echo "top$i dense units=$width inputs=$last"
      echo "top${i}_relu relu"
      last="top${i}_relu"
    done
    echo "logit dense units=1 inputs=$last loss=bce"
  } > "$MODEL"
fi

{
  environment_head
  echo "pstrain_version=$("$PSTRAIN" --version 2>/dev/null | head -n1)"
  [[ " $MODES " =~ " "(sync|async|geo)" " ]] && echo "mpirun=$(mpirun --version 2>/dev/null | head -n1)"
  echo "pstrain_model=$PSTRAIN_MODEL"
  echo "python=$PYTHON"
  echo "torch=$("$PYTHON" -c 'import torch; print(torch.__version__)')"
  echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "data_dir=$DATA_DIR lines=$LINES seed=$SEED fields=$FIELDS bayes_test_auc=${BAYES_AUC:-unknown}"
  # shellcheck disable=SC2153  # BATCH is set by set_defaults
  echo "rounds=$ROUNDS modes=$MODES passes=$PASSES batch=$BATCH lr=$LR embedding_dim=$EMBEDDING_DIM rows=$ROWS"
  echo "bottom_hidden=$BOTTOM_HIDDEN hidden=$HIDDEN threads=$THREADS"
  echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/environment.txt"

# ---- the runs -------------------------------------------------------------------------------------------------

set_threads "$THREADS"
EXTRA_MPI=(--mca btl "tcp,self" --mca osc pt2pt)
# shellcheck disable=SC2206  # MPIRUN_ARGS is a list of words
EXTRA_MPI+=($MPIRUN_ARGS)
MODEL_FLAGS=(--model-file "$MODEL")
[[ "$PSTRAIN_MODEL" == dlrm ]] ||
  MODEL_FLAGS=(--model "$PSTRAIN_MODEL" --table-rows "$ROWS" --embedding-dim "$EMBEDDING_DIM" --hidden "$HIDDEN")
COMMON=(--data-dir "$DATA_DIR" "${MODEL_FLAGS[@]}" --optimizer adagrad --lr "$LR" --passes "$PASSES"
        --seed "$SEED" --tensorboard false)

for ((round = 1; round <= ROUNDS; round++)); do
  for mode in $MODES; do
    name="pstrain-$mode-$round"
    run_pstrain "$name" "$BATCH" "$mode" 3
    rm -rf "${SCRATCH:?}/$name-b$BATCH"   # its pass folders and checkpoints: the tables, ~ROWS x 16 x 4 B each
  done
  run_torch_cmd "pytorch-$round" "$BATCH" 1 "$PYTHON" "$TORCH_DLRM" --model "$PSTRAIN_MODEL" --data-dir "$DATA_DIR" \
    --passes "$PASSES" --batch-size "$BATCH" --lr "$LR" --embedding-dim "$EMBEDDING_DIM" --rows "$ROWS" \
    --bottom-hidden "$BOTTOM_HIDDEN" --hidden "$HIDDEN" --seed "$SEED" --threads "$THREADS"
done
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/environment.txt"

# ---- the table ------------------------------------------------------------------------------------------------

"$PYTHON" - "$OUT" "$ROUNDS" "$BATCH" "${BAYES_AUC:-nan}" "$MODES" "$PSTRAIN_MODEL" <<'PY' | tee "$OUT/table.md"
import csv, json, math, statistics, sys

out, rounds, batch, bayes, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5].split()
model = sys.argv[6]


def timed_rate(passes):
    """The mean samples/s over passes 1..N-1 when N > 1, else pass 0."""
    timed = passes[1:] if len(passes) > 1 else passes
    return sum(p["samples_per_sec"] for p in timed) / len(timed)


def lines(path):
    return [json.loads(line) for line in open(path) if line.strip().startswith("{")]


runs = {}  # (config, round) -> samples/s, AUC, logloss, per-pass samples/s
for r in range(1, rounds + 1):
    for mode in modes:
        passes = lines(f"{out}/raw/pstrain-{mode}-{r}-b{batch}.metrics.jsonl")
        runs[(mode, r)] = (timed_rate(passes), passes[-1]["test_auc"], passes[-1]["test_logloss"],
                           [p["samples_per_sec"] for p in passes])
    passes = lines(f"{out}/raw/pytorch-{r}-b{batch}.json")
    runs[("pytorch", r)] = (timed_rate(passes), passes[-1]["test_auc"], passes[-1]["test_logloss"],
                            [p["samples_per_sec"] for p in passes])

with open(f"{out}/rounds.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["config", "round", "samples_per_sec", "test_auc", "test_logloss", "samples_per_sec_per_pass"])
    for (config, r), (rate, auc, logloss, per_pass) in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        w.writerow([config, r, f"{rate:.1f}", f"{auc:.6f}", f"{logloss:.6f}", " ".join(f"{x:.1f}" for x in per_pass)])

names = {"local": "pstrain local", "sync": "pstrain 1 server + 2 trainers, sync, TCP",
         "async": "pstrain 1 server + 2 trainers, async, TCP", "geo": "pstrain 1 server + 2 trainers, geo, TCP",
         "pytorch": "PyTorch (torch_dlrm.py)" if model == "dlrm" else
                    "PyTorch DeepFM (torch_dlrm.py --model deepfm)"}
procs = {"local": 1, "sync": 3, "async": 3, "geo": 3, "pytorch": 1}
torch_auc = statistics.median(runs[("pytorch", r)][1] for r in range(1, rounds + 1))
summary = {"model": model, "batch": int(batch), "rounds": rounds,
           "bayes_test_auc": bayes if math.isfinite(bayes) else None, "configs": {}}
print(f"| configuration | processes | samples/s (median) | pstrain / PyTorch (median of rounds) | range |"
      f" test AUC (median) | AUC - PyTorch | test logloss (median) |")
print("|---|---:|---:|---:|---|---:|---:|---:|")
for config in modes + ["pytorch"]:
    mine = [runs[(config, r)] for r in range(1, rounds + 1)]
    rate = statistics.median(x[0] for x in mine)
    auc = statistics.median(x[1] for x in mine)
    logloss = statistics.median(x[2] for x in mine)
    entry = {"samples_per_sec": rate, "test_auc": auc, "test_logloss": logloss,
             "per_round": [{"samples_per_sec": x[0], "test_auc": x[1], "test_logloss": x[2],
                            "samples_per_sec_per_pass": x[3]} for x in mine]}
    if config == "pytorch":
        ratio_text, range_text, diff_text = "1 (reference)", "", ""
    else:
        ratios = [runs[(config, r)][0] / runs[("pytorch", r)][0] for r in range(1, rounds + 1)]
        entry["ratio_to_pytorch"] = statistics.median(ratios)
        entry["ratios"] = ratios
        entry["auc_minus_pytorch"] = auc - torch_auc
        ratio_text = f"{entry['ratio_to_pytorch']:.2f}x"
        range_text = f"{min(ratios):.2f}-{max(ratios):.2f}x"
        diff_text = f"{auc - torch_auc:+.4f}"
    summary["configs"][config] = entry
    print(f"| {names[config]} | {procs[config]} | {rate:,.0f} | {ratio_text} | {range_text} | {auc:.4f} |"
          f" {diff_text} | {logloss:.4f} |")
print(f"\nplanted Bayes test AUC (the best any model can reach on these test lines): "
      f"{bayes:.4f}" if math.isfinite(bayes) else "\nplanted Bayes test AUC: unknown (no ctr_conversion.txt)")
json.dump(summary, open(f"{out}/summary.json", "w"), indent=1)
PY
written="table.md, summary.json, rounds.csv, environment.txt,"
[[ "$PSTRAIN_MODEL" == dlrm ]] && written+=" dlrm.model,"
note "results: $OUT ($written raw/)"
