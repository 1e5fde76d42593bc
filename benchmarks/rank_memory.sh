#!/usr/bin/env bash
# Resident memory per rank at the first training step, and where it goes (benchmarks/rank_memory.py reads each
# rank's /proc/PID/smaps: cuBLAS, the CUDA runtime and NCCL, MPI, OpenBLAS, oneDNN, HDF5, other libraries, heap and anonymous memory,
# stack), for each configuration of CONFIGS side by side, each run RUNS times alternating; one line per rank and
# run. The job: SERVERS servers + TRAINERS trainers, sync, the MLP (--hidden 64) on the first LIMIT Fashion-MNIST
# training images (60000: all of them) in 4 shards, converted with pstrain-data when missing.
#
# CONFIGS: words NAME=BINARY[:VAR=VALUE,VAR=VALUE] (environment given to the job), default
#   "default=<build>/bin/pstrain". Example: CONFIGS="cuda=build/bin/pstrain cpu=build-cpu/bin/pstrain
#   onethread=build/bin/pstrain:OPENBLAS_NUM_THREADS=1"
# Settings: SERVERS=1 TRAINERS=2 LIMIT=3840 RUNS=2 BUILD_DIR=<repo>/build PATH_KIND=shm|tcp WORK=<a temporary folder>
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
set_defaults SERVERS=1 TRAINERS=2 LIMIT=3840 RUNS=2 BUILD_DIR="$REPO/build" PATH_KIND=shm RUN_TIMEOUT=300
check_positive TRAINERS LIMIT RUNS
case "$PATH_KIND" in shm) mpi_path=() ;; tcp) mpi_path=(--mca btl tcp,self --mca osc pt2pt) ;;
  *) die "PATH_KIND must be shm or tcp (got '$PATH_KIND')" ;; esac
require_tools mpirun timeout pgrep
CONFIGS=${CONFIGS:-"default=$BUILD_DIR/bin/pstrain"}
job=""  # the running mpirun's timeout, ended on any exit
cleanup() {
  if [[ -n "$job" ]]; then kill "$job" 2> /dev/null || true; fi
  if [[ -z "${WORK:-}" ]]; then rm -rf "$work"; fi
}
trap cleanup EXIT
if [[ -n "${WORK:-}" ]]; then
  work=$WORK
  mkdir -p "$work"
else
  work=$(mktemp -d)
fi
data=$work/data-$LIMIT
[[ -f "$data/MANIFEST" ]] || "$BUILD_DIR/bin/pstrain-data" fashion-mnist --input /usr/share/datasets/fashion-mnist \
  --output "$data" --split-count 4 --limit "$LIMIT" --test-limit 2000 > /dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# measure NAME BINARY ENV: starts the job, waits for its first step, reads every rank's smaps, ends the job.
measure() {
  local name=$1 bin=$2 vars=$3 out="$work/out-$1" pid ranks
  local env_args=()
  [[ -n "$vars" ]] && IFS=, read -r -a env_args <<< "$vars"
  rm -rf "$out" "$out.log"
  env "${env_args[@]}" timeout "$RUN_TIMEOUT" mpirun --oversubscribe --bind-to none "${mpi_path[@]}" \
    -np "$((SERVERS + TRAINERS))" "$bin" --data-dir "$data" --output-dir "$out" --num-pservers "$SERVERS" \
    --hidden 64 --batch-size 32 --passes 1000 --progress-every-s 0 --tensorboard false > "$out.log" 2>&1 &
  pid=$! job=$!
  until grep -aq "first step done" "$out.log" 2> /dev/null; do
    kill -0 "$pid" 2> /dev/null || { tail -20 "$out.log" >&2; die "$name: the job ended before its first step"; }
    sleep 0.1
  done
  # $! is env, which became timeout; its child is mpirun, whose children are the ranks (one node: no orted).
  local mpirun_pid
  mpirun_pid=$(pgrep -P "$pid" | head -1 || true)
  [[ -n "$mpirun_pid" ]] || die "$name: no mpirun under $pid"
  ranks=$(pgrep -P "$mpirun_pid" || true)
  [[ -n "$ranks" ]] || die "$name: no pstrain ranks under mpirun"
  /usr/bin/python3 "$SCRIPT_DIR/rank_memory.py" "$name" $ranks | sort -k2 -n
  kill "$pid" 2> /dev/null || true
  wait "$pid" 2> /dev/null || true
  job=""
}

echo "resident memory per rank at the first step (MiB), $SERVERS server(s) + $TRAINERS trainers, $PATH_KIND," \
  "$LIMIT training images"
printf '%-10s %4s %8s %9s %11s %9s %9s %9s %9s %10s %9s %9s\n' config rank total cublas cudart+nccl mpi openblas \
  onednn hdf5 "other libs" heap+anon stack
for ((run = 0; run < RUNS; ++run)); do
  for config in $CONFIGS; do
    name=${config%%=*} rest=${config#*=}
    bin=${rest%%:*} vars=""
    [[ "$rest" == *:* ]] && vars=${rest#*:}
    measure "$name" "$bin" "$vars"
  done
done
