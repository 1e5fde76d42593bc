#!/usr/bin/env bash
# Row tables by rows against the same table shipped densely: bytes and time per step, side by side.
#
# The NPLM of Bengio et al. (m=30, h=100, direct connections; --model nplm) on the Brown corpus, 1 server and
# 2 trainers in sync mode, batch 64 per trainer, SGD, one pass over the first two training shards (about 200k of
# the 800k windows; set SHARDS). RUNS rounds, each running --table-exchange sparse then dense, so that the two
# alternate on a shared machine; the table reports medians. Bytes per step and trainer come from the run's own
# accounting ("row tables per step" in its log) and from the model's size for the dense table.
#
# Settings (environment): RUNS=3 SHARDS=2 BATCH=64 PATH_KIND=shm|tcp (tcp: --mca btl tcp,self --mca osc pt2pt,
#   the cross-node path) BUILD_DIR=<repo>/build BROWN_DIR=<repo>/data/brown
#   (made with: build/bin/pstrain-data brown --input "$(bash mpi_launch/fetch-brown.sh)" --output data/brown
#    --split-count 8)
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
set_defaults RUNS=3 SHARDS=2 BATCH=64 PATH_KIND=shm BUILD_DIR="$REPO/build" BROWN_DIR="$REPO/data/brown" RUN_TIMEOUT=1800
check_positive RUNS SHARDS BATCH
case "$PATH_KIND" in shm) mpi_path=() ;; tcp) mpi_path=(--mca btl tcp,self --mca osc pt2pt) ;;
  *) die "PATH_KIND must be shm or tcp (got '$PATH_KIND')" ;; esac
require_tools mpirun timeout
PSTRAIN="$BUILD_DIR/bin/pstrain"
[[ -x "$PSTRAIN" ]] || die "$PSTRAIN is missing: bash mpi_launch/setup.sh"
[[ -f "$BROWN_DIR/vocab.txt" ]] || die "$BROWN_DIR holds no converted corpus (see the header of this script)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/data"
cp "$BROWN_DIR/vocab.txt" "$BROWN_DIR/test.h5" "$work/data/"
for ((i = 0; i < SHARDS; i++)); do cp "$BROWN_DIR/$(printf 'train-%05d.h5' "$i")" "$work/data/"; done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
model=(--data-dir "$work/data" --model nplm --embedding-dim 30 --hidden 100 --direct true)
common=("${model[@]}" --batch-size "$BATCH" --passes 1 --optimizer sgd --lr 0.05 --mode sync --num-pservers 1
        --tensorboard false --progress-every-s 0)
parameters=$("$PSTRAIN" "${model[@]}" --describe-model | awk '/^total/ {print $2; exit}' | tr -d ',')
[[ "$parameters" =~ ^[0-9]+$ ]] || die "could not read the model's size from --describe-model"

for ((round = 1; round <= RUNS; round++)); do
  for exchange in sparse dense; do
    out="$work/$exchange-$round"
    note "round $round: --table-exchange $exchange"
    timeout "$RUN_TIMEOUT" mpirun --oversubscribe --bind-to none "${mpi_path[@]}" -np 3 "$PSTRAIN" "${common[@]}" \
      --table-exchange "$exchange" --output-dir "$out" > "$out.log" 2>&1 || { cat "$out.log"; die "run $out failed"; }
  done
done

/usr/bin/python3 - "$work" "$RUNS" "$parameters" "$PATH_KIND" <<'PY'
import glob, json, re, statistics, sys
work, runs, parameters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows, dense_part = {}, None
for exchange in ("sparse", "dense"):
    step_ms, pull_ms, push_ms, table_b, total_b, server_mib, trainer_mib = [], [], [], [], [], [], []
    for r in range(1, runs + 1):
        m = json.loads(open(f"{work}/{exchange}-{r}/metrics.jsonl").read().strip().splitlines()[-1])
        step_ms.append(1e3 * m["pass_seconds"] / m["steps_per_trainer"])
        pull_ms.append(1e3 * m["pull_s_per_step"])
        push_ms.append(1e3 * m["push_s_per_step"])
        log = open(f"{work}/{exchange}-{r}.log").read()
        found = re.search(r"row tables per step: ([\d.e+]+) rows fetched, ([\d.e+]+) pushed, ([\d.e+]+) bytes; "
                          r"the dense part: (\d+) bytes", log)
        if found:  # sparse: the table's rows (and ids) as counted by the run, the rest as the dense exchange
            dense_part = float(found.group(4))
            table_b.append(float(found.group(3)))
            total_b.append(float(found.group(3)) + dense_part)
        else:  # dense: the whole model pushed and pulled (plus the sample count); the table is what is not dense
            total_b.append(2 * 4 * (parameters + 1))
            table_b.append(total_b[-1] - dense_part)
        peaks = {}  # world rank -> peak resident MiB, from each rank's log
        for path in glob.glob(f"{work}/{exchange}-{r}/node_*/*.log"):
            for rank, mib in re.findall(r"\[rank (\d+) [^]]*\] peak resident memory of this rank: (\d+) MiB",
                                        open(path).read()):
                peaks[int(rank)] = float(mib)
        server_mib.append(peaks.get(0, float("nan")))
        trainer_mib.append(max((v for k, v in peaks.items() if k > 0), default=float("nan")))
    rows[exchange] = [statistics.median(v)
                      for v in (step_ms, pull_ms, push_ms, table_b, total_b, server_mib, trainer_mib)]
print(f"NPLM on Brown, 1 server + 2 trainers, sync, {sys.argv[4]}; medians of {runs} alternating runs; model {parameters} floats")
print("| table exchange | ms per step | pull+fetch ms | push ms | table bytes per step | all bytes per step "
      "| server peak MiB | trainer peak MiB |")
print("|---|---|---|---|---|---|---|---|")
for exchange, (step, pull, push, table, total, server, trainer) in rows.items():
    print(f"| {exchange} | {step:.2f} | {pull:.3f} | {push:.3f} | {table:,.0f} | {total:,.0f} | {server:.0f} "
          f"| {trainer:.0f} |")
print("bytes: per trainer, both directions. sparse/dense: time "
      f"{rows['sparse'][0] / rows['dense'][0]:.3f}x, table bytes {rows['sparse'][3] / rows['dense'][3]:.4f}x, "
      f"all bytes {rows['sparse'][4] / rows['dense'][4]:.4f}x")
PY
