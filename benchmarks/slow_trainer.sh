#!/usr/bin/env bash
# Dynamic data dispatch against static sharding with one slow trainer, side by side in one run.
#
# 1 parameter server + 2 trainers, async SGD, the Fashion-MNIST MLP 784-256-128-10; trainer 1 is slowed 3x
# (the test suite's slow-factor fault, PSTRAIN_TEST_HOOKS, which only the test binary pstrain-faults injects, sleeps
# twice the step's own time, compute and exchange, after every step). Static sharding makes the pass wait for the
# slow trainer's half of the data; dynamic dispatch lets the fast trainer take more chunks.
# Prints samples/s (all trainers, mean over passes 1..N-1) for both and their ratio; the target is >= 1.5x.
#
#   bash benchmarks/slow_trainer.sh            # PASSES=3 SLOW=3 BATCH=64 CHUNK=512; needs the tests' build
set -euo pipefail
cd "$(dirname "$0")/.."
PASSES=${PASSES:-3} SLOW=${SLOW:-3} BATCH=${BATCH:-64} CHUNK=${CHUNK:-512}
data=${DATA_DIR:-data/fashion-mnist}
[ -x build/bin/pstrain-faults ] || { echo "build first, with the tests: bash mpi_launch/setup.sh --tests" >&2; exit 1; }
[ -f "$data/test.h5" ] || build/bin/pstrain-data fashion-mnist --input /usr/share/datasets/fashion-mnist --output "$data" --split-count 4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for dispatch in static dynamic; do
  PSTRAIN_TEST_HOOKS=slow-trainer=1,slow-factor=$SLOW timeout 900 mpirun --oversubscribe --bind-to none -np 3 \
    build/bin/pstrain-faults --data-dir "$data" --output-dir "$out/$dispatch" --mode async --num-pservers 1 \
    --passes "$PASSES" --batch-size "$BATCH" --dispatch "$dispatch" --chunk-size "$CHUNK" > "$out/$dispatch.log" 2>&1 || { cat "$out/$dispatch.log"; exit 1; }
done
/usr/bin/python3 - "$out" <<'PY'
import json, sys
def load(name):
    rows = [json.loads(l) for l in open(f"{sys.argv[1]}/{name}/metrics.jsonl")]
    timed = rows[1:] if len(rows) > 1 else rows
    return sum(r["samples_per_sec"] for r in timed) / len(timed), rows[-1]
static, s_last = load("static")
dynamic, d_last = load("dynamic")
print("| dispatch | samples/s | final test acc | chunks per trainer (last pass) | samples missing/repeated |")
print("|---|---:|---:|---|---|")
print(f"| static | {static:.0f} | {s_last['test_accuracy']:.4f} | - | {s_last['samples_missing']}/{s_last['samples_repeated']} |")
print(f"| dynamic | {dynamic:.0f} | {d_last['test_accuracy']:.4f} | {d_last['chunks_per_trainer']} | {d_last['samples_missing']}/{d_last['samples_repeated']} |")
ratio = dynamic / static
print(f"dynamic / static = {ratio:.2f}x  ({'PASS' if ratio >= 1.5 else 'FAIL'}: target >= 1.5x with one trainer slowed 3x)")
PY
