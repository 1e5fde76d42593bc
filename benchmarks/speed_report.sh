#!/usr/bin/env bash
# The speed report of issue 11 ("Faster than PyTorch on the same CPU", item 4): one command, one table, one PNG.
#
# Part "local" (pstrain vs PyTorch): for each model in MODELS and batch in BATCHES, pstrain local (one process,
#   no MPI) then the plain PyTorch loop (torch_cnn.py --mode single: tensors in memory, no DataLoader), one
#   thread each. Table: median samples/s of each, the median of the per-round ratios and their range.
# Part "scaling": for each model in SCALE_MODELS and batch in SCALE_BATCHES, pstrain at every rank count of
#   RANKS (ranks = MPI processes in all) on each MPI path of PATHS:
#     sync PS     --mode sync --num-pservers 1: 1 server + (ranks - 1) trainers
#     all-reduce  --mode allreduce: ranks trainers, no servers
#     1 rank      pstrain local (no mpirun), run once and shared by every curve: the reference
#   shm = Open MPI's defaults (shared memory, osc/sm); tcp = --mca btl tcp,self --mca osc pt2pt (the cross-node
#   path). Table: samples/s of all trainers, the ratio to local (per round, then the median) and the per-step
#   breakdown that pstrain writes to metrics.jsonl (compute, push, barrier = waiting, pull, allreduce, other).
# Part "sgemm": the machine's single-core sgemm rate, the best provider's on a 1024^3 square (gemm_providers.sh
#   PEAK_ONLY=1, 3 repetitions), measured every round after part local, for the bar "MLP local at batch 256 >= 85%
#   of it" (pstrain's rate: samples/s x 1.007 MFLOP, the MLP's GEMM work per training sample).
# ROUNDS rounds; within a round every configuration runs once, in a fixed interleaved order (part local, then
# part scaling), so slow phases of a shared machine hit them all alike. Medians are over the rounds.
# samples/s: the pass time each program reports (pstrain: metrics.jsonl samples_per_sec, all trainers, the
# slowest trainer's pass time; PyTorch: the same definition), the mean over passes 1..PASSES-1 (pass 0 warms up).
#
# Data: Fashion-MNIST converted from DATA_DIR (the IDX files) by pstrain-data into a scratch folder, in SHARDS
# shards (12: every trainer count of 1..4 gets the same number of samples), the first LIMIT training samples and
# the first TEST_LIMIT test samples (evaluation only, untimed). Each model has its own LIMIT (samples per pass):
# MLP_LIMIT=24576, CNN_LIMIT=3072, RESNET_LIMIT=1536 (the resnet at width RESNET_WIDTH=0.25 trains ~1000 samples/s
# on one core here); LIMIT=N sets all three.
#
# Prints the tables and the PASS/FAIL lines of the issue's bars; writes them (table.md), summary.json,
# rounds.csv (every run's numbers), speed.png and all raw outputs to RESULTS_ROOT/<UTC timestamp>-speed/.
# As root it installs what is missing of python3-torch, python3-h5py and python3-matplotlib with apt-get.
#
# Settings (environment):
#   ROUNDS=5  BATCHES="32 64 256"  MODELS="mlp cnn resnet"  SCALE_MODELS="mlp cnn"  SCALE_BATCHES=64
#   RANKS="1 2 3 4"  PATHS="shm tcp"  PARTS="local sgemm scaling"  PASSES=3  THREADS=1  LIMIT (all models)
#   MLP_LIMIT=24576  CNN_LIMIT=3072  RESNET_LIMIT=1536  TEST_LIMIT=1000  SHARDS=12  RESNET_WIDTH=0.25
#   LR=0.05  MOMENTUM=0.9  SEED=1  DATA_DIR=/usr/share/datasets/fashion-mnist  BUILD_DIR=<repo>/build
#   PYTHON=/usr/bin/python3  RESULTS_ROOT=<repo>/benchmarks/results  RUN_TIMEOUT=600 (seconds, per run)
#   BINARY_WAIT=180  MPIRUN_ARGS="" (extra mpirun flags, both paths)  INSTALL=1 (0: never apt-get)
# Example (a quick look): ROUNDS=1 MODELS=mlp BATCHES=64 SCALE_MODELS=mlp RANKS="1 2" bash benchmarks/speed_report.sh
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=benchmarks/lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
NOTE_TAG=speed

set_defaults ROUNDS=5 BATCHES="32 64 256" MODELS="mlp cnn resnet" SCALE_MODELS="mlp cnn" SCALE_BATCHES=64 \
  RANKS="1 2 3 4" PATHS="shm tcp" PARTS="local sgemm scaling" PASSES=3 THREADS=1 TEST_LIMIT=1000 SHARDS=12 \
  RESNET_WIDTH=0.25 LR=0.05 MOMENTUM=0.9 SEED=1 DATA_DIR=/usr/share/datasets/fashion-mnist \
  BUILD_DIR="$REPO/build" PYTHON=/usr/bin/python3 RESULTS_ROOT="$REPO/benchmarks/results" RUN_TIMEOUT=600 \
  BINARY_WAIT=180 MPIRUN_ARGS= INSTALL=1
MLP_LIMIT="${MLP_LIMIT:-${LIMIT:-24576}}"
CNN_LIMIT="${CNN_LIMIT:-${LIMIT:-3072}}"
RESNET_LIMIT="${RESNET_LIMIT:-${LIMIT:-1536}}"

PSTRAIN="$BUILD_DIR/bin/pstrain"
PSTRAIN_DATA="$BUILD_DIR/bin/pstrain-data"
TORCH_CNN="$SCRIPT_DIR/torch_cnn.py"
TCP_MCA=(--mca btl "tcp,self" --mca osc pt2pt)

# ---- checks -------------------------------------------------------------------------------------------------

check_positive ROUNDS PASSES THREADS TEST_LIMIT SHARDS MLP_LIMIT CNN_LIMIT RESNET_LIMIT RUN_TIMEOUT
check_batches
[[ "$INSTALL" == 0 || "$INSTALL" == 1 ]] || die "INSTALL must be 0 or 1 (got '$INSTALL')"
# in_list WORD LIST...: whether WORD is one of LIST.
in_list() { local w=$1 x; shift; for x in "$@"; do [[ "$x" == "$w" ]] && return 0; done; return 1; }
# has_part PART: whether PARTS names PART.
has_part() { [[ " $PARTS " == *" $1 "* ]]; }
# check_words NAME ALLOWED...: dies unless the variable NAME is a non-empty list of ALLOWED words.
check_words() {
  local name=$1 word; shift
  [[ -n "${!name// /}" ]] || die "$name is empty"
  for word in ${!name}; do in_list "$word" "$@" || die "$name: '$word' is not one of: $*"; done
}
check_words MODELS mlp cnn resnet
check_words SCALE_MODELS mlp cnn resnet
check_words PATHS shm tcp
check_words PARTS local sgemm scaling
for b in $SCALE_BATCHES; do
  [[ "$b" =~ ^[1-9][0-9]*$ ]] || die "SCALE_BATCHES must hold positive integers (got '$b')"
done
for r in $RANKS; do [[ "$r" =~ ^[1-9][0-9]*$ ]] || die "RANKS must hold positive integers (got '$r')"; done
[[ "$RESNET_WIDTH" =~ ^[0-9]*\.?[0-9]+$ ]] || die "RESNET_WIDTH must be a positive number (got '$RESNET_WIDTH')"
require_tools mpirun timeout
[[ -x "$PYTHON" ]] || die "$PYTHON not found (the Debian interpreter: python3-torch, python3-matplotlib)"
[[ -f "$TORCH_CNN" && -f "$SCRIPT_DIR/speed_report.py" ]] ||
  die "torch_cnn.py or speed_report.py is missing in $SCRIPT_DIR"
for idx in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  [[ -f "$DATA_DIR/$idx.gz" || -f "$DATA_DIR/$idx" ]] ||
    die "$DATA_DIR has no $idx(.gz): DATA_DIR is the folder of Fashion-MNIST's IDX files" \
      "(apt-get install dataset-fashion-mnist)"
done
wait_for_binary
[[ -x "$PSTRAIN_DATA" ]] || die "$PSTRAIN_DATA is missing: cmake --build $BUILD_DIR -j2 --target pstrain pstrain-data"

# limit_of MODEL: its training samples per pass, rounded down to a multiple of SHARDS (equal shards).
limit_of() {
  local limit
  case "$1" in mlp) limit=$MLP_LIMIT ;; cnn) limit=$CNN_LIMIT ;; resnet) limit=$RESNET_LIMIT ;; esac
  echo $(( limit / SHARDS * SHARDS ))
}
for m in $MODELS $SCALE_MODELS; do
  (( $(limit_of "$m") >= SHARDS )) || die "the $m LIMIT must be at least SHARDS=$SHARDS samples"
done

# ---- output folder, packages, data ---------------------------------------------------------------------------

start_results "-speed"   # OUT, raw/, runs.csv; SCRATCH (pstrain's output folders and the data), removed on exit

# The Python modules the report needs: h5py is optional (torch_cnn.py reads the shards through libhdf5 without it);
# matplotlib only costs the PNG.
install_python_modules torch h5py matplotlib
"$PYTHON" -c 'import torch' 2> /dev/null || die "$PYTHON cannot import torch: apt-get install -y python3-torch"
"$PYTHON" -c 'import matplotlib' 2> /dev/null || note "no matplotlib for $PYTHON: the tables only, no PNG"

declare -A DATA_OF   # model -> its shard folder
# shellcheck disable=SC2086  # the lists are words
for m in $(printf '%s\n' $MODELS $SCALE_MODELS | sort -u); do
  limit=$(limit_of "$m")
  dir="$SCRATCH/data-$limit"
  if [[ ! -d "$dir" ]]; then
    "$PSTRAIN_DATA" fashion-mnist --input "$DATA_DIR" --output "$dir" --split-count "$SHARDS" --limit "$limit" \
      --test-limit "$TEST_LIMIT" >> "$OUT/raw/convert.log" 2>&1 || die "pstrain-data failed: $OUT/raw/convert.log"
  fi
  DATA_OF[$m]=$dir
done

{
  environment_head
  echo "pstrain_version=$("$PSTRAIN" --version 2>/dev/null | head -n1)"
  echo "mpirun=$(mpirun --version 2>/dev/null | head -n1)"
  echo "python=$PYTHON"
  echo "torch=$("$PYTHON" -c 'import torch; print(torch.__version__)')"
  echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  # One setting per line: speed_report.py reads rounds, passes, threads, limits and test_limit from here.
  for setting in ROUNDS PARTS PASSES THREADS MODELS BATCHES SCALE_MODELS SCALE_BATCHES RANKS PATHS MPIRUN_ARGS \
      TEST_LIMIT SHARDS RESNET_WIDTH LR MOMENTUM SEED DATA_DIR; do
    echo "${setting,,}=${!setting}"
  done
  echo "limits=mlp $(limit_of mlp), cnn $(limit_of cnn), resnet $(limit_of resnet)"
  echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/environment.txt"

# ---- runs ----------------------------------------------------------------------------------------------------

set_threads "$THREADS"
for var in LD_LIBRARY_PATH PATH; do [[ -n "${!var:-}" ]] && MPI_EXPORTS+=(-x "$var"); done
read -r -a USER_MPI <<< "$MPIRUN_ARGS"
PLAN="$OUT/plan.csv"   # every run, in the order it ran; speed_report.py reads it
echo "part,round,model,batch,program,config,path,ranks,name" > "$PLAN"

# model_flags MODEL: the model's flags, the same for pstrain and torch_cnn.py.
model_flags() {
  case "$1" in
    mlp) echo --model mlp --hidden 256,128 ;;
    cnn) echo --model cnn --conv-filters 32,64 --kernel-size 3 --hidden 128 ;;
    resnet) echo --model resnet --width "$RESNET_WIDTH" --batch-norm true ;;
  esac
}

# pstrain_run PART ROUND MODEL BATCH local|sync|allreduce PATH RANKS: one pstrain run (common.sh's run_pstrain);
# its output folder is removed afterwards (pass folders and checkpoints are not needed; metrics.jsonl, config.ini
# and provenance.json, which names the commit pstrain was built from, are kept in raw/).
pstrain_run() {
  local part=$1 round=$2 model=$3 batch=$4 config=$5 path=$6 ranks=$7 flags
  local name="r$round-$part-$model-$config"
  [[ $config == local ]] || name+="-$path-np$ranks"
  read -r -a flags <<< "$(model_flags "$model")"
  COMMON=(--data-dir "${DATA_OF[$model]}" "${flags[@]}" --device cpu --optimizer momentum --lr "$LR"
          --momentum "$MOMENTUM" --passes "$PASSES" --seed "$SEED" --tensorboard false --progress-every-s 0)
  EXTRA_MPI=("${USER_MPI[@]}")
  [[ $path == tcp ]] && EXTRA_MPI=("${TCP_MCA[@]}" "${USER_MPI[@]}")
  run_pstrain "$name" "$batch" "$config" "$ranks"
  cp "$SCRATCH/$name-b$batch/provenance.json" "$OUT/raw/$name-b$batch.provenance.json" 2> /dev/null || true
  rm -rf "$SCRATCH/$name-b$batch"
  echo "$part,$round,$model,$batch,pstrain,$config,$path,$ranks,$name-b$batch" >> "$PLAN"
}

# torch_run ROUND MODEL BATCH: the plain PyTorch loop, one process.
torch_run() {
  local round=$1 model=$2 batch=$3 flags name="r$1-local-$2-pytorch"
  read -r -a flags <<< "$(model_flags "$model")"
  run_torch_cmd "$name" "$batch" 1 "$PYTHON" "$TORCH_CNN" --mode single --device cpu --data-dir "${DATA_OF[$model]}" \
    "${flags[@]}" --batch-size "$batch" --passes "$PASSES" --lr "$LR" --momentum "$MOMENTUM" --seed "$SEED" \
    --threads "$THREADS"
  echo "local,$round,$model,$batch,pytorch,torch,-,1,$name-b$batch" >> "$PLAN"
}

# sgemm_run ROUND: the single-core sgemm rate of every provider gemm_providers.sh can load (its results.csv).
sgemm_run() {
  local round=$1 name="r$1-sgemm"
  PEAK_ONLY=1 REPS=3 INSTALL="$INSTALL" OUT_DIR="$OUT/sgemm" bash "$SCRIPT_DIR/gemm_providers.sh" \
    > "$OUT/raw/$name.log" 2>&1 || die "gemm_providers.sh failed (log: $OUT/raw/$name.log)"
  cp "$OUT/sgemm/results.csv" "$OUT/raw/$name.csv"
  echo "sgemm,$round,-,0,gemm_providers,peak,-,1,$name" >> "$PLAN"
}

runs_per_round=0
has_part local && runs_per_round=$(( $(wc -w <<< "$MODELS") * $(wc -w <<< "$BATCHES") * 2 ))
has_part sgemm && runs_per_round=$((runs_per_round + 1))
if has_part scaling; then
  per=0
  for r in $RANKS; do if (( r == 1 )); then per=$((per + 1)); else per=$((per + 2 * $(wc -w <<< "$PATHS"))); fi; done
  runs_per_round=$(( runs_per_round + $(wc -w <<< "$SCALE_MODELS") * $(wc -w <<< "$SCALE_BATCHES") * per ))
fi
note "$ROUNDS round(s) of $runs_per_round runs; results in $OUT"

for ((round = 1; round <= ROUNDS; round++)); do
  note "round $round of $ROUNDS ($(( SECONDS / 60 )) min so far)"
  if has_part local; then
    for model in $MODELS; do
      for batch in $BATCHES; do
        pstrain_run local "$round" "$model" "$batch" local - 1
        torch_run "$round" "$model" "$batch"
      done
    done
  fi
  has_part sgemm && sgemm_run "$round"
  if has_part scaling; then
    for model in $SCALE_MODELS; do
      for batch in $SCALE_BATCHES; do
        for ranks in $RANKS; do
          if (( ranks == 1 )); then
            pstrain_run scaling "$round" "$model" "$batch" local - 1
            continue
          fi
          for path in $PATHS; do
            pstrain_run scaling "$round" "$model" "$batch" sync "$path" "$ranks"
            pstrain_run scaling "$round" "$model" "$batch" allreduce "$path" "$ranks"
          done
        done
      done
    done
  fi
done
{
  echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "wall_seconds=$SECONDS"
} >> "$OUT/environment.txt"

# ---- report --------------------------------------------------------------------------------------------------

"$PYTHON" "$SCRIPT_DIR/speed_report.py" "$OUT" || die "speed_report.py failed on $OUT"
note "took $(( SECONDS / 60 )) min $(( SECONDS % 60 )) s"
note "results: $OUT (table.md, summary.json, rounds.csv, speed.png, environment.txt, plan.csv, raw/)"
