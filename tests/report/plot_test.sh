#!/bin/bash
# pstrain-plot on a real run's metrics.jsonl (one pass, one process) and on a language-model fixture
# (perplexity fields): each PNG is whole (check_png.py: signature, every CRC, the image data inflates) and of a
# plot's size, and the plotter names the panels it drew. Missing, empty and damaged metrics.jsonl, an unwritable
# PNG and bad usage each end with one message naming the problem and the documented exit code.
# An elastic run's fixture (elastic.jsonl, pass done times) adds the ranks-over-time panel, its steps checked.
# CTest passes BIN_DIR, WORK_ROOT, FASHION_MNIST, CHECK_PNG and PLOT_MODULE_DIR.
set -euo pipefail
export OPENBLAS_NUM_THREADS=1
for variable in $(env | grep -o '^PSTRAIN_[A-Z_]*' || true); do unset "$variable"; done
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${BIN_DIR:?}" "${WORK_ROOT:?}" "${CHECK_PNG:?}" "${PLOT_MODULE_DIR:?}"
rm -rf "$WORK_ROOT"
mkdir -p "$WORK_ROOT"
cd "$WORK_ROOT"

"$BIN_DIR/pstrain-data" fashion-mnist --input "${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}" --output data \
  --split-count 1 --limit 640 --test-limit 200 >/dev/null
"$BIN_DIR/pstrain" --data-dir data --output-dir run --passes 1 --batch-size 64 --hidden 16 >/dev/null 2>&1 \
  || fail "the 1-pass run failed (see $WORK_ROOT/run/node_0/train.log)"
"$BIN_DIR/pstrain-plot" run > run.out || fail "pstrain-plot on a real run: $(cat run.out)"
/usr/bin/python3 "$CHECK_PNG" run/training.png 20000 || fail "run/training.png is not a whole plot"
grep -q "^drew loss, accuracy, samples/s, step breakdown into run/training.png$" run.out \
  || fail "panels of a local run: $(cat run.out)"

# A language model's metrics: perplexity instead of accuracy; staleness and chunks drawn where present.
mkdir -p lm
/usr/bin/python3 - > lm/metrics.jsonl <<'PY'
import json
for p in range(3):
    print(json.dumps({"pass": p, "train_loss": 5.0 - p, "valid_loss": 5.1 - p, "train_perplexity": 150.0 / (p + 1),
                      "valid_perplexity": 160.0 / (p + 1), "test_perplexity": 170.0 / (p + 1),
                      "samples_per_sec": 1000.0 + p, "compute_s_per_step": 0.01, "push_s_per_step": 0.002,
                      "staleness_histogram": [5, 3, 1], "chunks_per_trainer": [4, 2], "mode": "async"}))
PY
"$BIN_DIR/pstrain-plot" lm --png lm/curves.png > lm.out || fail "pstrain-plot on the fixture: $(cat lm.out)"
/usr/bin/python3 "$CHECK_PNG" lm/curves.png 20000 || fail "lm/curves.png is not a whole plot"
grep -q "^drew loss, perplexity, samples/s, step breakdown, staleness, chunks per trainer into lm/curves.png$" \
  lm.out || fail "panels of the language-model fixture: $(cat lm.out)"

# A click model's run with --eval-every-steps: evaluation records ("kind": "eval", no "pass") between the pass records
# add the test-per-step panel, drawn from them in step order (the later of two records of a step wins); the pass
# panels read the pass records alone.
mkdir -p steps
/usr/bin/python3 - > steps/metrics.jsonl <<'PY'
import json
for p in range(2):
    for s in (50, 100):
        step = p * 100 + s
        print(json.dumps({"kind": "eval", "step": step, "in_pass": p, "step_in_pass": s, "steps_in_pass": 100,
                          "test_loss": 0.5 - 0.01 * step / 50, "test_accuracy": 0.8, "test_auc": 0.6 + 0.01 * step / 50}))
    print(json.dumps({"pass": p, "train_loss": 0.6 - 0.1 * p, "test_loss": 0.5 - 0.02 * (p + 1), "test_auc": 0.62 + 0.02 * p,
                      "samples_per_sec": 1000.0, "compute_s_per_step": 0.01}))
PY
"$BIN_DIR/pstrain-plot" steps > steps.out || fail "pstrain-plot on evaluation records: $(cat steps.out)"
/usr/bin/python3 "$CHECK_PNG" steps/training.png 20000 || fail "steps/training.png is not a whole plot"
grep -q "^drew loss, auc, test per step, samples/s, step breakdown into steps/training.png$" steps.out \
  || fail "panels of a run with evaluation records: $(cat steps.out)"
PYTHONPATH=$PLOT_MODULE_DIR /usr/bin/python3 - steps/metrics.jsonl <<'PY' || fail "evaluation records read wrongly"
import sys
import pstrain_plots as plots
assert [r["pass"] for r in plots.read_metrics(sys.argv[1])] == [0, 1]
assert [r["step"] for r in plots.read_evaluations(sys.argv[1])] == [50, 100, 150, 200]
PY

# An elastic run (the driver's elastic.jsonl beside metrics.jsonl): slots 3 -> 4 at 1 min, a rank killed at 2 min,
# 4 -> 3 at 3 min, the end at 4 min; each pass's done file written at the time it ended. The figure gains the
# "ranks over time" panel, and the ranks drawn are those the launches trained with, from their first steps.
mkdir -p elastic
/usr/bin/python3 - elastic <<'PY'
import json, os, sys
out, t0 = sys.argv[1], 1764000000.0
def event(dt, kind, launch=0, ranks=None, to_step=None):
    return {"time": "2025-11-24T16:00:00Z", "unix_time": t0 + dt, "event": kind, "hosts": [], "detail": "",
            "launch": launch, "world": "", "ranks": ranks, "layout": None, "resumed_from": None,
            "resumed_global_step": None, "steps_lost": None, "seconds_to_next_step": to_step, "restarts": 0}
events = [event(0, "driver_started"), event(0.5, "launch", 1, 3, 5.0), event(60, "slots_changed", 2, None, 8.0),
          event(61, "launch", 2, 4, 6.0), event(120, "job_failed", 3, None, 7.0), event(120.2, "launch", 3, 4, 6.8),
          event(180, "slots_changed", 4, None, 6.0), event(181, "launch", 4, 3, 5.0), event(240, "driver_finished")]
with open(f"{out}/elastic.jsonl", "w") as f:
    f.writelines(json.dumps(e) + "\n" for e in events[1:] + events[:1])  # unordered: the plotter sorts
with open(f"{out}/metrics.jsonl", "w") as f:
    for p, speed in enumerate([9000, 11000, 10500, 9100]):
        f.write(json.dumps({"pass": p, "train_loss": 1.0 - 0.1 * p, "test_accuracy": 0.7 + 0.02 * p,
                            "samples_per_sec": speed, "pass_seconds": 50.0}) + "\n")
for p, end in enumerate([57, 117, 178, 239]):
    os.makedirs(f"{out}/pass-{p:05d}")
    open(f"{out}/pass-{p:05d}/done", "w").close()
    os.utime(f"{out}/pass-{p:05d}/done", (t0 + end, t0 + end))
PY
"$BIN_DIR/pstrain-plot" elastic > elastic.out || fail "pstrain-plot on an elastic run: $(cat elastic.out)"
/usr/bin/python3 "$CHECK_PNG" elastic/training.png 20000 || fail "elastic/training.png is not a whole plot"
grep -q "^drew loss, accuracy, samples/s, ranks over time into elastic/training.png$" elastic.out \
  || fail "panels of an elastic run: $(cat elastic.out)"
PYTHONPATH=$PLOT_MODULE_DIR /usr/bin/python3 - elastic <<'PY' || fail "ranks over time of the elastic fixture"
import sys
import pstrain_plots as plots
events = plots.read_elastic_events(sys.argv[1] + "/elastic.jsonl")
steps = [(round(t - 1764000000.0, 1), r) for t, r in plots.ranks_over_time(events)]
# From each launch's first step (launch time + seconds_to_next_step) to the event that ended its job.
want = [(0.0, 0), (5.5, 3), (60.0, 0), (67.0, 4), (120.0, 0), (127.0, 4), (180.0, 0), (186.0, 3), (240.0, 0)]
assert steps == want, steps
spans = [(round(a - 1764000000.0), round(b - 1764000000.0), s) for a, b, s in plots._pass_spans(
    plots.read_metrics(sys.argv[1] + "/metrics.jsonl"), sys.argv[1])]
assert spans == [(7, 57, 9000), (67, 117, 11000), (128, 178, 10500), (189, 239, 9100)], spans
print("ranks over time:", steps)
PY
# A run without elastic.jsonl has no such panel (above: run, lm); a damaged one is named.
mkdir -p elastic-damaged && cp elastic/metrics.jsonl elastic-damaged/
printf '{"unix_time": 1, "event": "launch"}\n{"event": "launch"}\n' > elastic-damaged/elastic.jsonl

# expect_failure CODE PATTERN ARGS...: exit CODE, one line on stderr matching PATTERN, no PNG left behind.
expect_failure() {
  local code=$1 pattern=$2
  shift 2
  local status=0
  "$BIN_DIR/pstrain-plot" "$@" > bad.out 2> bad.err || status=$?
  [ "$status" -eq "$code" ] || fail "pstrain-plot $*: exit $status, expected $code ($(cat bad.err))"
  [ "$(wc -l < bad.err)" -eq 1 ] || fail "pstrain-plot $*: expected one line on stderr, got: $(cat bad.err)"
  grep -q -- "$pattern" bad.err || fail "pstrain-plot $*: message '$(cat bad.err)' does not match '$pattern'"
}
mkdir -p empty damaged nothing
: > empty/metrics.jsonl
printf '{"pass": 0, "train_loss": 1.0}\n{"pass": 1, "train_lo\n' > damaged/metrics.jsonl
expect_failure 3 "nothing/metrics.jsonl not found" nothing
expect_failure 3 "empty/metrics.jsonl holds no passes" empty
expect_failure 3 "damaged/metrics.jsonl:2: not a JSON object" damaged
[ ! -e damaged/training.png ] || fail "a PNG was written from damaged metrics"
echo '["pass", 0]' > damaged/metrics.jsonl
expect_failure 3 'damaged/metrics.jsonl:1: a metrics line needs an integer "pass" field' damaged
expect_failure 3 'elastic-damaged/elastic.jsonl:2: an elastic event needs a numeric "unix_time"' elastic-damaged
[ ! -e elastic-damaged/training.png ] || fail "a PNG was written from a damaged elastic.jsonl"
expect_failure 4 "cannot write no-such-folder/x.png" run --png no-such-folder/x.png
expect_failure 2 "give either an OUTPUT folder or --sweep" run --sweep lm
expect_failure 3 "report.json: not a pstrain-sweep report" --sweep lm
# A container's read-only root file system (the MPIJob's pods): no writable home or temporary folder. matplotlib's
# cache then goes beside the image and is removed: the PNG is drawn and nothing else is left. Needs root for the
# private mounts (CI runs as root).
if [ "$(id -u)" -eq 0 ] && command -v unshare > /dev/null; then
  mkdir -p readonly && cp run/metrics.jsonl readonly/
  unshare -m bash -c 'for d in /tmp /var/tmp "$HOME"; do mount -t tmpfs -o ro tmpfs "$d"; done
                      "$0" readonly' "$BIN_DIR/pstrain-plot" > ro.out 2>&1 || fail "read-only home and /tmp: $(cat ro.out)"
  [ "$(ls -A readonly | sort | tr '\n' ' ')" = "metrics.jsonl training.png " ] || fail "left behind: $(ls -A readonly)"
fi
echo "PASS: plot_test"
