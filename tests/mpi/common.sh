# Shared by the multi-rank scenario scripts. CTest passes BIN_DIR, TOOLS_DIR, DATA_DIR and WORK_ROOT.
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=1
# A test must never fail because of a stale PSTRAIN_* in the caller's environment.
for variable in $(env | grep -o '^PSTRAIN_[A-Z_]*' || true); do unset "$variable"; done

fail() { echo "FAIL: $*" >&2; exit 1; }

# The layout pstrain chooses by default for NP ranks.
trainers_for() { local np=$1; if [ "$np" -eq 1 ]; then echo 1; else echo $((np - (np / 2 > 0 ? np / 2 : 1))); fi; }

# run_mpi NP PATH SECONDS ARGS...: PATH is "shm" (defaults: on one node osc/rdma, or osc/sm where processes may not
# copy from each other) or "tcp" (the cross-node path:
# TCP transport and osc/pt2pt, which needs the target to keep calling MPI). TCP keeps to the loopback: a
# container bridge that comes and goes on this machine (podman's, while the container tests run) made Open MPI
# bind to an address that had just vanished, and the run hung until its timeout.
tcp_mca=(--mca btl tcp,self --mca osc pt2pt --mca btl_tcp_if_include lo)
run_mpi() {
  local np=$1 path=$2 seconds=$3
  shift 3
  local mca=()
  if [ "$path" = tcp ]; then mca=("${tcp_mca[@]}"); fi
  timeout -k 5 "$seconds" mpirun --oversubscribe --bind-to none -np "$np" "${mca[@]}" "$@"
}

last_metric() {  # last_metric FILE KEY
  python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])[sys.argv[2]])' "$1" "$2"
}

new_work_dir() {
  local dir="$WORK_ROOT/$1"
  rm -rf "$dir"
  mkdir -p "$dir"
  echo "$dir"
}
