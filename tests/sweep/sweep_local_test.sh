#!/bin/bash
# pstrain-sweep end to end on real data: grid -> run local (2 at a time) -> run again (all skipped) -> report,
# with report.csv/json checked against the runs' metrics.jsonl; emitters; a bad search space.
# CTest passes BIN_DIR, REPO and WORK_ROOT (and FASHION_MNIST, the IDX folder).
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=1
for variable in $(env | grep -o '^PSTRAIN_[A-Z_]*' || true); do unset "$variable"; done
for variable in JOB_ID JOB_COMPLETION_INDEX SLURM_ARRAY_TASK_ID; do unset "$variable"; done

fail() { echo "FAIL: $*" >&2; exit 1; }
: "${BIN_DIR:?}" "${REPO:?}" "${WORK_ROOT:?}"
SWEEP="$BIN_DIR/pstrain-sweep"
[ -x "$SWEEP" ] || fail "$SWEEP not built"
rm -rf "$WORK_ROOT"
mkdir -p "$WORK_ROOT"
cd "$WORK_ROOT"

"$BIN_DIR/pstrain-data" fashion-mnist --input "${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}" --output data \
  --split-count 2 --limit 2000 --test-limit 1000 >/dev/null

cat > space.ini <<'SPACE'
# 2 x 2 grid, every run 2 passes of batch 32
[fixed]
passes = 2
batch-size = 32
[grid]
lr = 0.005 | 0.05
hidden = 32 | 64
SPACE

"$SWEEP" grid --space space.ini --sweep-dir sweep > grid.out
[ "$(wc -l < sweep/sets.txt)" -eq 4 ] || fail "sets.txt should have 4 lines"
[ "$(sed -n 1p sweep/sets.txt)" = "--passes 2 --batch-size 32 --lr 0.005 --hidden 32" ] || fail "sets.txt line 1: $(sed -n 1p sweep/sets.txt)"
for n in 1 2 3 4; do [ -f "sweep/sets/set-000$n.ini" ] || fail "sets/set-000$n.ini missing"; done

# First pass over the sweep: every set runs, two at a time.
"$SWEEP" run local --sweep-dir sweep --data-dir data --parallel 2 --np 1 > run1.out || { cat run1.out; fail "run local failed"; }
grep -q "4 set(s): 4 ran, 0 skipped (already complete), 0 failed" run1.out || { cat run1.out; fail "first run summary"; }
for n in 1 2 3 4; do
  [ -f "sweep/runs/set-000$n/pass-00001/done" ] || fail "set-000$n has no final pass"
  [ "$(wc -l < "sweep/runs/set-000$n/metrics.jsonl")" -eq 2 ] || fail "set-000$n metrics.jsonl should have 2 passes"
  # One TensorBoard folder per set (tensorboard --logdir sweep/runs compares them), one readable event file each.
  events=(sweep/runs/set-000$n/tensorboard/events.out.tfevents.*)
  [ "${#events[@]}" -eq 1 ] && [ -f "${events[0]}" ] || fail "set-000$n: expected one TensorBoard event file"
  /usr/bin/python3 "$REPO/tests/report/read_events.py" "${events[0]}" > /dev/null || fail "set-000$n: bad event file"
  # "Version everything": the set's provenance names the flags it ran with and the data it read.
  /usr/bin/python3 - "sweep/runs/set-000$n/provenance.json" "sweep/sets/set-000$n.ini" <<'PY' || fail "set-000$n: provenance"
import json, sys
provenance = json.load(open(sys.argv[1]))
for key in ("version", "git_commit", "flags", "model", "data_fingerprint"):
    assert key in provenance, key
for line in open(sys.argv[2]):
    if "=" in line and not line.startswith("#"):
        key, value = (part.strip() for part in line.split("=", 1))
        assert provenance["flags"].get(key) == value, (key, value, provenance["flags"].get(key))
shards = provenance["data_fingerprint"]["crc32"]
assert "test.h5" in shards and any(name.startswith("train-") for name in shards), shards
assert all(len(crc) == 8 for crc in shards.values()), shards
assert "dense" in provenance["model"]["description"]
PY
done

# Second pass: everything is complete, nothing runs.
"$SWEEP" run local --sweep-dir sweep --data-dir data --parallel 2 --np 1 > run2.out || { cat run2.out; fail "rerun failed"; }
grep -q "4 set(s): 0 ran, 4 skipped (already complete), 0 failed" run2.out || { cat run2.out; fail "rerun should skip all"; }
[ "$(grep -c 'already complete, skipped' run2.out)" -eq 4 ] || fail "rerun should name 4 skipped sets"

# Interrupted sets, as a set killed during its last pass leaves them: set-0003 with the checkpoint of pass 0's end
# resumes from it (its first pass is not trained again); set-0004, which has no checkpoint, is moved aside and
# run again from the start.
mapfile -t set3_checkpoints < <(ls -d sweep/runs/set-0003/checkpoints/ckpt-* | sort)
rm -rf sweep/runs/set-0003/pass-00001 "${set3_checkpoints[@]:1}"
sed -i '2,$d' sweep/runs/set-0003/metrics.jsonl
set3_first_pass=$(sha256sum < sweep/runs/set-0003/pass-00000/parameters.h5)
rm -rf sweep/runs/set-0004/pass-00001 sweep/runs/set-0004/checkpoints
"$SWEEP" run local --sweep-dir sweep --data-dir data --parallel 2 > run3.out || { cat run3.out; fail "resume failed"; }
grep -q "4 set(s): 2 ran, 2 skipped (already complete), 0 failed" run3.out || { cat run3.out; fail "resume summary"; }
grep -q "resuming from .*set-0003/checkpoints/ckpt-" sweep/runs/set-0003/pstrain.log || fail "set-0003 did not resume"
[ "$(sha256sum < sweep/runs/set-0003/pass-00000/parameters.h5)" = "$set3_first_pass" ] || fail "set-0003's pass 0 was trained again"
[ "$(wc -l < sweep/runs/set-0003/metrics.jsonl)" -eq 2 ] || fail "set-0003's metrics.jsonl does not hold 2 passes"
ls -d sweep/runs/set-0003.incomplete-* >/dev/null 2>&1 && fail "set-0003 was moved aside instead of resumed"
ls -d sweep/runs/set-0004.incomplete-* >/dev/null 2>&1 || fail "set-0004 (no checkpoint) was not moved aside"
for n in 3 4; do [ -f sweep/runs/set-000$n/pass-00001/done ] || fail "set-000$n was not finished"; done

# Report: the leaderboard's best set is the set with the highest test_accuracy in the metrics, and the files agree.
"$SWEEP" report --sweep-dir sweep > report.out || { cat report.out; fail "report failed"; }
[ -f sweep/report.csv ] && [ -f sweep/report.json ] || fail "report.csv/report.json missing"
python3 - sweep report.out <<'PY' || fail "report does not agree with metrics"
import csv, json, sys, os
sweep, board = sys.argv[1], open(sys.argv[2]).read()
best = {}
for n in range(1, 5):
    lines = [json.loads(l) for l in open(os.path.join(sweep, "runs", "set-%04d" % n, "metrics.jsonl")) if l.strip()]
    best[n] = max(l["test_accuracy"] for l in lines)
top = max(best.values())
winner = min(n for n in best if best[n] == top)          # ties: lower set number first
report = json.load(open(os.path.join(sweep, "report.json")))
assert report["best_set"] == winner, (report["best_set"], best)
assert [s["set"] for s in report["sets"]] == sorted(best, key=lambda n: (-best[n], n)), report["sets"]
for s in report["sets"]:
    assert abs(s["best_test_accuracy"] - best[s["set"]]) < 1e-6, s
    assert s["status"] == "complete", s
rows = list(csv.DictReader(open(os.path.join(sweep, "report.csv"))))
assert len(rows) == 4
assert int(rows[0]["set"]) == winner and rows[0]["rank"] == "1", rows[0]
for row in rows:
    assert abs(float(row["best_test_accuracy"]) - best[int(row["set"])]) < 1e-6, row
assert "best: set-%04d" % winner in board, board
flags = open(os.path.join(sweep, "sets.txt")).read().splitlines()[winner - 1]
assert flags in board.split("best: ")[1], (flags, board)
print("report agrees: best set-%04d test_accuracy %s" % (winner, top))
PY
head -c 4 sweep/report.png 2>/dev/null | od -An -tx1 | grep -q "89 50 4e 47" || { cat report.out; fail "report.png not drawn"; }
grep -q "drew .*report.png" report.out || fail "report does not say it drew report.png"

# Emitters.
"$SWEEP" emit slurm --sweep-dir sweep --data-dir data > sweep.sbatch
grep -qx "#SBATCH --array=0-3" sweep.sbatch || { cat sweep.sbatch; fail "no array line"; }
bash -n sweep.sbatch || fail "the sbatch script is not valid bash"
"$SWEEP" emit k8s --sweep-dir sweep --data-dir data > jobs.yaml
[ "$(grep -c '^apiVersion: ' jobs.yaml)" -eq 4 ] || fail "k8s: expected 4 documents"
[ "$(grep -c '^kind: Job' jobs.yaml)" -eq 4 ] || fail "k8s: expected 4 Jobs"
[ "$(grep -cx -- '---' jobs.yaml)" -eq 3 ] || fail "k8s: expected 3 separators"
grep -q '"/opt/pstrain/bin/pstrain"' jobs.yaml || fail "k8s: pstrain is not the image's /opt/pstrain/bin/pstrain"
grep -q "$BIN_DIR" jobs.yaml && fail "k8s: the Jobs name this machine's build folder $BIN_DIR"
"$SWEEP" emit k8s --sweep-dir sweep --data-dir data --indexed > indexed.yaml
grep -q '/opt/pstrain/bin/pstrain-sweep' indexed.yaml || fail "k8s: pstrain-sweep is not the image's"
grep -q "completions: 4" indexed.yaml || fail "indexed job completions"

# run-one picks its set from the environment (set 2 is complete, so it is skipped).
JOB_COMPLETION_INDEX=1 "$SWEEP" run-one --sweep-dir sweep --data-dir data > one.out || fail "run-one failed"
grep -q "set-0002 (JOB_COMPLETION_INDEX=1)" one.out || { cat one.out; fail "run-one picked the wrong set"; }

# A bad search space: unknown flag, non-zero exit, the message names the line and the flag.
printf '[grid]\nlr = 0.1 | 0.2\nlearning-rate = 1 | 2\n' > bad.ini
set +e
"$SWEEP" grid --space bad.ini --sweep-dir bad-sweep > bad.out 2> bad.err
code=$?
set -e
[ "$code" -eq 2 ] || fail "bad space should exit 2, got $code"
grep -q "pstrain-sweep: error: bad.ini:3: 'learning-rate' is not a pstrain flag" bad.err || { cat bad.err; fail "bad space message"; }
[ ! -e bad-sweep ] || fail "a bad space must not create the sweep folder"
echo "PASS sweep_local"
