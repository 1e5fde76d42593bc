# shellcheck shell=bash
# Shared parts of the benchmark scripts (mlp_vs_pytorch.sh, cnn_vs_pytorch.sh, gpu/package.sh, gpu/run_checks.sh).
# Source it near the top of a script:
#   source "$SCRIPT_DIR/lib/common.sh"          # from benchmarks/
#   source "$SCRIPT_DIR/../lib/common.sh"       # from benchmarks/gpu/
# It sets REPO (the repository root) and defines the helpers below. die() prefixes the running script's name,
# note() "[$NOTE_TAG]" (default "bench").
#
# The side-by-side benchmarks (mlp_vs_pytorch.sh, cnn_vs_pytorch.sh) also use the run helpers at the end; they
# read these globals of the script: PSTRAIN, BUILD_DIR, DATA_DIR, BINARY_WAIT, RUN_TIMEOUT, RESULTS_ROOT, and
# COMMON (pstrain's flags shared by all runs), MPI_EXPORTS (set_threads), EXTRA_MPI (extra mpirun flags), ROWS_CSV
# (when not empty: a "name,batch,ran,processes" line is appended to it after each run).

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
NOTE_TAG=bench
ROWS_CSV=""
EXTRA_MPI=()
MPI_ENV=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)

die() { echo "$(basename "$0"): $*" >&2; exit 1; }
note() { echo "[$NOTE_TAG] $*" >&2; }

# set_defaults NAME=VALUE ...: for each NAME that is unset or empty, NAME=VALUE (as NAME="${NAME:-VALUE}").
set_defaults() {
  local _sd_pair _sd_name
  for _sd_pair in "$@"; do
    _sd_name="${_sd_pair%%=*}"
    [[ -n "${!_sd_name:-}" ]] || printf -v "$_sd_name" '%s' "${_sd_pair#*=}"
  done
}

# require_tools TOOL ...: dies unless every TOOL is on PATH.
require_tools() {
  local tool
  for tool in "$@"; do command -v "$tool" > /dev/null || die "'$tool' is not on PATH"; done
}

# check_positive NAME ...: dies unless each variable NAME holds a positive integer.
check_positive() {
  local name
  for name in "$@"; do [[ "${!name}" =~ ^[1-9][0-9]*$ ]] || die "$name must be a positive integer (got '${!name}')"; done
}

# check_batches: dies unless BATCHES is a non-empty list of positive integers.
check_batches() {
  local b
  for b in $BATCHES; do [[ "$b" =~ ^[1-9][0-9]*$ ]] || die "BATCHES must hold positive integers (got '$b')"; done
  [[ -n "${BATCHES// /}" ]] || die "BATCHES is empty"
}

# git_info: the git_head= and git_dirty_files= lines of the repository.
git_info() {
  echo "git_head=$(git -C "$REPO" rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "git_dirty_files=$(git -C "$REPO" status --porcelain 2>/dev/null | wc -l)"
}

# ---- the side-by-side benchmarks ----------------------------------------------------------------------------

# The build may be in the middle of a rebuild by somebody else: give a missing binary a while to reappear.
wait_for_binary() {
  local waited=0
  while [[ ! -x "$PSTRAIN" ]]; do
    if (( waited >= BINARY_WAIT )); then
      die "$PSTRAIN is missing (waited ${BINARY_WAIT}s). Build it with: cmake --build $BUILD_DIR -j2 --target pstrain pstrain-data"
    fi
    (( waited == 0 )) && note "$PSTRAIN is missing, probably being rebuilt; waiting up to ${BINARY_WAIT}s"
    sleep 5; waited=$((waited + 5))
  done
}

# check_shards: dies unless DATA_DIR holds test.h5 and at least 2 training shards.
check_shards() {
  local shards
  shopt -s nullglob
  shards=("$DATA_DIR"/train-[0-9][0-9][0-9][0-9][0-9].h5)
  shopt -u nullglob
  if (( ${#shards[@]} < 2 )) || [[ ! -f "$DATA_DIR/test.h5" ]]; then
    die "$DATA_DIR needs test.h5 and at least 2 train-NNNNN.h5 shards (found ${#shards[@]}). Create them with:
  $BUILD_DIR/bin/pstrain-data fashion-mnist --input /usr/share/datasets/fashion-mnist --output $DATA_DIR --split-count 4"
  fi
}

# start_results [SUFFIX]: STAMP, OUT=RESULTS_ROOT/STAMP[SUFFIX] with raw/ and runs.csv, and SCRATCH (removed on exit).
start_results() {
  STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
  OUT="$RESULTS_ROOT/$STAMP${1:-}"
  mkdir -p "$OUT/raw"
  SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/pstrain-bench.XXXXXX")"   # pstrain's pass folders (checkpoints) go here
  trap 'rm -rf "$SCRATCH"' EXIT
  echo "config,batch,source,loadavg_before" > "$OUT/runs.csv"
}

# environment_head: the first lines of environment.txt (when, where, which commit and binary).
environment_head() {
  echo "timestamp_utc=$STAMP"
  echo "host=$(hostname)"
  echo "nproc=$(nproc)"
  git_info
  echo "pstrain_sha256=$(sha256sum "$PSTRAIN" | cut -d' ' -f1)"
}

# set_threads N: N BLAS/OpenMP threads per process, exported, and passed on by mpirun (MPI_EXPORTS).
set_threads() {
  export OMP_NUM_THREADS="$1" OPENBLAS_NUM_THREADS="$1" MKL_NUM_THREADS="$1"
  MPI_EXPORTS=(-x OMP_NUM_THREADS -x OPENBLAS_NUM_THREADS -x MKL_NUM_THREADS)
}

# start_run NAME BATCH SOURCE: the runs.csv line (load average before the run) and the progress note.
start_run() {
  echo "$1,$2,$3,$(cut -d' ' -f1 /proc/loadavg)" >> "$OUT/runs.csv"
  note "$1, batch $2"
}

# ran NAME BATCH PROCESSES: the rows.csv line of a finished run (when the script keeps rows.csv).
ran() {
  [[ -z "$ROWS_CSV" ]] || echo "$1,$2,ran,$3" >> "$ROWS_CSV"
}

# run_logged NAME BATCH STDOUT COMMAND...: COMMAND under RUN_TIMEOUT; raw/NAME-bBATCH.log gets the command line
# and COMMAND's stderr, and its stdout too unless STDOUT names another file. Dies when COMMAND fails.
run_logged() {
  local name=$1 batch=$2 stdout=$3
  shift 3
  local log="$OUT/raw/$name-b$batch.log" rc=0
  echo "$*" > "$log"
  if [[ "$stdout" == "$log" ]]; then
    timeout --kill-after=30 "$RUN_TIMEOUT" "$@" >> "$log" 2>&1 || rc=$?
  else
    timeout --kill-after=30 "$RUN_TIMEOUT" "$@" > "$stdout" 2>> "$log" || rc=$?
  fi
  if (( rc != 0 )); then
    tail -n 20 "$log" >&2
    die "$name (batch $batch) failed or timed out after ${RUN_TIMEOUT}s; log: $log"
  fi
}

# run_pstrain NAME BATCH local|sync|async|allreduce [NP]: one pstrain run (NP processes under mpirun, default 2;
# 1 server for sync/async), its metrics.jsonl and config.ini kept in raw/.
run_pstrain() {
  local name=$1 batch=$2 kind=$3 np=${4:-2} dir="$SCRATCH/$1-b$2"
  wait_for_binary
  local sha; sha="$(sha256sum "$PSTRAIN" | cut -d' ' -f1)"
  grep -q "pstrain_sha256=$sha" "$OUT/environment.txt" ||
    note "WARNING: $PSTRAIN changed since the start of this run (rebuilt under us); see $OUT/environment.txt"
  echo "pstrain_sha256[$name-b$batch]=$sha" >> "$OUT/environment.txt"
  start_run "$name" "$batch" pstrain
  local cmd
  if [[ $kind == local ]]; then
    np=1
    cmd=("$PSTRAIN" "${COMMON[@]}" --batch-size "$batch" --output-dir "$dir")
  else
    local layout=(--mode "$kind")
    [[ $kind == allreduce ]] || layout+=(--num-pservers 1)
    cmd=(env "${MPI_ENV[@]}" mpirun --oversubscribe --bind-to none -np "$np" "${MPI_EXPORTS[@]}" "${EXTRA_MPI[@]}"
         "$PSTRAIN" "${COMMON[@]}" --batch-size "$batch" --output-dir "$dir" "${layout[@]}")
  fi
  run_logged "$name" "$batch" "$OUT/raw/$name-b$batch.log" "${cmd[@]}"
  [[ -s "$dir/metrics.jsonl" ]] || die "$name (batch $batch) wrote no $dir/metrics.jsonl; log: $OUT/raw/$name-b$batch.log"
  cp "$dir/metrics.jsonl" "$OUT/raw/$name-b$batch.metrics.jsonl"
  cp "$dir/config.ini" "$OUT/raw/$name-b$batch.config.ini" 2>/dev/null || true
  ran "$name" "$batch" "$np"
}

# run_torch_cmd NAME BATCH PROCESSES COMMAND...: one PyTorch run; its JSON line goes to raw/NAME-bBATCH.json.
run_torch_cmd() {
  local name=$1 batch=$2 np=$3
  shift 3
  start_run "$name" "$batch" pytorch
  run_logged "$name" "$batch" "$OUT/raw/$name-b$batch.json" "$@"
  [[ -s "$OUT/raw/$name-b$batch.json" ]] || die "$name (batch $batch) printed no JSON; log: $OUT/raw/$name-b$batch.log"
  ran "$name" "$batch" "$np"
}

# install_python_modules MODULE...: the Debian packages (python3-MODULE) of the modules $PYTHON cannot import, when
# root and INSTALL=1 (else a note); apt-get's log in $OUT/apt.log. The caller checks what it cannot do without.
install_python_modules() {
  local module missing=()
  for module in "$@"; do
    "$PYTHON" -c "import $module" 2> /dev/null || missing+=("python3-$module")
  done
  (( ${#missing[@]} > 0 )) || return 0
  if [[ "$INSTALL" != 1 || $(id -u) != 0 ]]; then
    note "missing: ${missing[*]} (not root, or INSTALL=0: not installing them)"
    return 0
  fi
  note "installing ${missing[*]} (log: $OUT/apt.log)"
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"; } > "$OUT/apt.log" 2>&1 ||
    note "apt-get failed (see $OUT/apt.log)"
}
