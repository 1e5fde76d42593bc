#!/usr/bin/env bash
# A table no rank holds: an embedding table of ROWS x WIDTH floats (default 10M x 64, 2.56 GB) held by rows on
# SERVERS parameter-server shards, trained by TRAINERS trainers in sync mode, one pass, with the end-of-pass
# checkpoint (each shard writes its own rows) and the pass folder (the whole table, streamed from the servers).
# Reports each rank's peak resident memory against the table's size, and the bytes a trainer moves per step for
# the table (the run's own accounting) against the table's size.
#
# The data are synthetic (build/tests/tools/make_id_shards): IDS ids per sample in [0, ROWS), low ids frequent,
# labelled by the first id mod CLASSES. The model: embedding -> flatten -> dense(CLASSES).
#
# Settings (environment): ROWS=10000000 WIDTH=64 IDS=4 CLASSES=16 SERVERS=4 TRAINERS=1 SAMPLES=20000 (per
#   training shard, one shard per trainer) BATCH=256 OPTIMIZER=adagrad PATH_KIND=shm|tcp BUILD_DIR=<repo>/build
#   WORK=<a temporary folder> (kept when given)
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
set_defaults ROWS=10000000 WIDTH=64 IDS=4 CLASSES=16 SERVERS=4 TRAINERS=1 SAMPLES=20000 BATCH=256 OPTIMIZER=adagrad \
  PATH_KIND=shm BUILD_DIR="$REPO/build" RUN_TIMEOUT=1800
check_positive ROWS WIDTH IDS CLASSES SERVERS TRAINERS SAMPLES BATCH
case "$PATH_KIND" in shm) mpi_path=() ;; tcp) mpi_path=(--mca btl tcp,self --mca osc pt2pt) ;;
  *) die "PATH_KIND must be shm or tcp (got '$PATH_KIND')" ;; esac
require_tools mpirun timeout
PSTRAIN="$BUILD_DIR/bin/pstrain"
MAKE_IDS="$BUILD_DIR/tests/tools/make_id_shards"
[[ -x "$PSTRAIN" && -x "$MAKE_IDS" ]] || die "$PSTRAIN or $MAKE_IDS is missing: bash mpi_launch/setup.sh --tests"

if [[ -n "${WORK:-}" ]]; then
  work=$WORK
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
note "data: $TRAINERS x $SAMPLES samples of $IDS ids in [0, $ROWS)"
"$MAKE_IDS" "$work/data" "$ROWS" "$IDS" "$CLASSES" "$SAMPLES" "$TRAINERS" 7
cat > "$work/table.model" <<EOF
embed embedding vocab=$ROWS dim=$WIDTH
flat flatten
logits dense units=$CLASSES
EOF
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
ranks=$((SERVERS + TRAINERS))
note "training on $SERVERS servers + $TRAINERS trainer(s), $PATH_KIND"
start=$(date +%s.%N)
timeout "$RUN_TIMEOUT" mpirun --oversubscribe --bind-to none "${mpi_path[@]}" -np "$ranks" "$PSTRAIN" \
  --data-dir "$work/data" --model-file "$work/table.model" --num-pservers "$SERVERS" --mode sync \
  --batch-size "$BATCH" --passes 1 --optimizer "$OPTIMIZER" --lr 0.1 --tensorboard false --progress-every-s 30 \
  --output-dir "$work/out" > "$work/run.log" 2>&1 || { tail -30 "$work/run.log"; die "the run failed"; }
wall=$(echo "$(date +%s.%N) - $start" | bc)

/usr/bin/python3 - "$work" "$ROWS" "$WIDTH" "$SERVERS" "$wall" <<'PY'
import glob, json, os, re, sys
work, rows, width, servers, wall = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
table_mib = rows * width * 4 / 2**20
print(f"table: {rows} x {width} floats = {table_mib:.0f} MiB over {servers} servers ({table_mib / servers:.0f} MiB each)")
print(f"{'rank':>5} {'role':>8} {'peak MiB':>9} {'of table':>9}")
largest = 0
for folder in sorted(glob.glob(f"{work}/out/node_*"), key=lambda f: int(f.rsplit('_', 1)[1])):
    rank = int(folder.rsplit('_', 1)[1])
    role = "server" if os.path.exists(f"{folder}/server.log") else "trainer"
    log = open(f"{folder}/{role if role == 'server' else 'train'}.log").read()
    peak = int(re.search(r"peak resident memory of this rank: (\d+) MiB", log).group(1))
    largest = max(largest, peak)
    print(f"{rank:>5} {role:>8} {peak:>9} {peak / table_mib:>8.0%}")
log = open(f"{work}/run.log").read()
traffic = re.search(r"row tables per step: ([\d.e+]+) rows fetched, ([\d.e+]+) pushed, ([\d.e+]+) bytes", log)
fetched, pushed, moved = (float(traffic.group(i)) for i in (1, 2, 3))
m = json.loads(open(f"{work}/out/metrics.jsonl").read().strip().splitlines()[-1])
print(f"largest rank: {largest} MiB = {largest / table_mib:.0%} of the table")
print(f"per step and trainer: {fetched:.0f} rows fetched, {pushed:.0f} pushed, {moved / 2**20:.2f} MiB "
      f"({moved / (rows * width * 4):.2e} of the table)")
print(f"step: {1e3 * m['pass_seconds'] / m['steps_per_trainer']:.1f} ms, pass {m['pass_seconds']:.1f} s, "
      f"test accuracy {m['test_accuracy']:.4f}, whole run {wall:.0f} s")
for line in open(f"{work}/out/node_0/server.log").read().splitlines():
    if "checkpoint ckpt-" in line and "written in" in line:
        print("end-of-pass " + line.split("] ", 1)[1])
first = re.search(r"first step done ([\d.]+) s after start", log)
print(f"start to first step (servers drawing their rows): {float(first.group(1)):.1f} s")
ckpt = sorted(glob.glob(f"{work}/out/checkpoints/ckpt-*"))[-1]
print("checkpoint files:", ", ".join(f"{os.path.basename(p)} {os.path.getsize(p) / 2**20:.0f} MiB"
                                     for p in sorted(glob.glob(f"{ckpt}/*.h5"))))
print(f"pass folder parameters.h5: {os.path.getsize(f'{work}/out/pass-00000/parameters.h5') / 2**20:.0f} MiB")
PY
