#!/usr/bin/env bash
# Start-up of a job with a table no rank holds: how long from mpirun's start until the first training step is
# done, with an embedding table of ROWS x WIDTH floats (default 10M x 64, 2.4 GiB) held by rows on SERVERS
# shards (large_table.sh's job). Before the first step every server fills its rows of the table with their
# initial values: the time that grew with the whole table when each server drew all ROWS x WIDTH numbers.
#
# Runs each pstrain binary of BINS (words NAME=PATH, default: this build's) RUNS times, alternating
# (a, b, a, b, ...), each run stopped once the trainer logs its first step, and prints the median and the runs
# per binary, plus the servers' own "initial rows drawn" time where the binary logs it.
#
# Settings (environment): ROWS=10000000 WIDTH=64 SERVERS=4 TRAINERS=1 RUNS=3 PATH_KIND=shm|tcp
#   BUILD_DIR=<repo>/build BINS="name=path ..." WORK=<a temporary folder> (kept when given)
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
set_defaults ROWS=10000000 WIDTH=64 SERVERS=4 TRAINERS=1 RUNS=3 PATH_KIND=shm BUILD_DIR="$REPO/build" RUN_TIMEOUT=600
check_positive ROWS WIDTH SERVERS TRAINERS RUNS
case "$PATH_KIND" in shm) mpi_path=() ;; tcp) mpi_path=(--mca btl tcp,self --mca osc pt2pt) ;;
  *) die "PATH_KIND must be shm or tcp (got '$PATH_KIND')" ;; esac
require_tools mpirun timeout
BINS=${BINS:-"this=$BUILD_DIR/bin/pstrain"}
MAKE_IDS="$BUILD_DIR/tests/tools/make_id_shards"
[[ -x "$MAKE_IDS" ]] || die "$MAKE_IDS is missing: cmake --build $BUILD_DIR --target make_id_shards"
for entry in $BINS; do [[ -x "${entry#*=}" ]] || die "${entry#*=} is not a program"; done

if [[ -n "${WORK:-}" ]]; then
  work=$WORK
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
# 2 batches per trainer: the first step is what counts.
"$MAKE_IDS" "$work/data" "$ROWS" 4 16 512 "$TRAINERS" 7 > /dev/null
cat > "$work/table.model" <<MODEL
embed embedding vocab=$ROWS dim=$WIDTH
flat flatten
logits dense units=16
MODEL
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1

# one_run BIN OUT: the seconds from start to the first step, as the trainer logs it; the job is ended there.
one_run() {
  local bin=$1 out=$2 pid seconds=""
  rm -rf "$out"
  timeout "$RUN_TIMEOUT" mpirun --oversubscribe --bind-to none "${mpi_path[@]}" -np "$((SERVERS + TRAINERS))" "$bin" \
    --data-dir "$work/data" --model-file "$work/table.model" --num-pservers "$SERVERS" --mode sync \
    --batch-size 256 --passes 1 --optimizer adagrad --lr 0.1 --tensorboard false --progress-every-s 0 \
    --output-dir "$out" > "$out.log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2> /dev/null; do
    seconds=$(grep -oE "first step done [0-9.]+ s after start" "$out.log" | grep -oE "[0-9.]+" | head -1 || true)
    [[ -n "$seconds" ]] && break
    sleep 0.2
  done
  kill "$pid" 2> /dev/null || true  # the step is what was measured: no pass, checkpoint or pass folder (5 GB)
  wait "$pid" 2> /dev/null || true
  [[ -n "$seconds" ]] || { tail -20 "$out.log" >&2; die "no first step in $out.log"; }
  echo "$seconds"
}

declare -A times drawn
for ((run = 0; run < RUNS; ++run)); do
  for entry in $BINS; do
    name=${entry%%=*}
    seconds=$(one_run "${entry#*=}" "$work/out-$name-$run")
    # The servers' own time to fill their rows, where the binary logs it (the slowest server).
    draw=$(grep -ohE "initial rows of [^ ]+ drawn in [0-9.]+ s" "$work/out-$name-$run"/node_*/server.log 2> /dev/null |
      grep -oE "[0-9.]+ s" | sort -n | tail -1 || true)
    note "$name run $run: first step after $seconds s${draw:+, servers drew their rows in $draw}"
    times[$name]+="$seconds "
    drawn[$name]+="${draw%% s} "
  done
done

echo "table $ROWS x $WIDTH floats ($((ROWS * WIDTH * 4 / 1048576)) MiB) on $SERVERS servers + $TRAINERS trainer(s)," \
  "$PATH_KIND, $RUNS alternating runs each, $(nproc) cores"
printf '%-10s %22s %28s   %s\n' binary "start->first step (med)" "server row draw (med, max)" runs
for entry in $BINS; do
  name=${entry%%=*}
  /usr/bin/python3 - "$name" "${times[$name]}" "${drawn[$name]}" <<'PY'
import statistics, sys
name, runs, draws = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split() if x]
draw = f"{statistics.median(draws):.2f} s" if draws else "not logged"
print(f"{name:<10} {statistics.median(runs):>20.2f} s {draw:>28}   {' '.join(f'{r:.2f}' for r in runs)}")
PY
done
