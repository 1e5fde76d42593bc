#!/bin/bash
# Short real runs write TensorBoard event files: exactly one file per run (the lead trainer's), named
# events.out.tfevents.<time>.<host>, first record brain.Event:2, every CRC right (read_events.py, independent of
# lib/report), the per-pass scalars equal to metrics.jsonl and the per-step ones at every --log-every-steps.
# CTest passes BIN_DIR, WORK_ROOT, FASHION_MNIST and READER.
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
for variable in $(env | grep -o '^PSTRAIN_[A-Z_]*' || true); do unset "$variable"; done
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${BIN_DIR:?}" "${WORK_ROOT:?}" "${READER:?}"
rm -rf "$WORK_ROOT"
mkdir -p "$WORK_ROOT"
cd "$WORK_ROOT"

# 1280 training samples: 20 steps of 64 per pass on one trainer, 10 on each of two.
"$BIN_DIR/pstrain-data" fashion-mnist --input "${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}" --output data \
  --split-count 2 --limit 1280 --test-limit 500 >/dev/null

# check RUN PASSES STEPS_PER_PASS LOG_EVERY: the one event file of RUN against RUN/metrics.jsonl.
check() {
  local run=$1 passes=$2 steps=$3 every=$4
  local files=("$run"/tensorboard/*)
  [ "${#files[@]}" -eq 1 ] || fail "$run/tensorboard holds ${#files[@]} files, expected 1: ${files[*]}"
  [[ "$(basename "${files[0]}")" =~ ^events\.out\.tfevents\.[0-9]+\.$(hostname)$ ]] \
    || fail "event file name $(basename "${files[0]}")"
  /usr/bin/python3 "$READER" "${files[0]}" > "$run/events.json" || fail "$run: the event file does not read back"
  /usr/bin/python3 - "$run" "$passes" "$steps" "$every" <<'PY' || fail "$run: scalars do not match"
import json, sys
run, passes, steps, every = sys.argv[1], *map(int, sys.argv[2:])
events = json.load(open(f"{run}/events.json"))
scalars = events["scalars"]
metrics = [json.loads(line) for line in open(f"{run}/metrics.jsonl")]
assert len(metrics) == passes, len(metrics)
for key in ("train_loss", "test_loss", "train_accuracy", "test_accuracy", "samples_per_sec",
            "compute_s_per_step", "push_s_per_step", "barrier_s_per_step", "pull_s_per_step", "staleness_mean"):
    points = scalars[f"pass/{key}"]  # at the global step that ends the pass
    assert [step for step, _ in points] == [(p + 1) * steps for p in range(passes)], (key, points)
    for (_, value), line in zip(points, metrics):
        # metrics.jsonl has 6 significant digits, the event file a float
        assert abs(value - line[key]) <= 1e-5 * max(1.0, abs(line[key])), (key, value, line[key])
assert all(abs(v - 0.05) < 1e-7 for _, v in scalars["pass/learning_rate"]), scalars["pass/learning_rate"]
expected_steps = [p * steps + s for p in range(passes) for s in range(every, steps + 1, every)]
for tag in ("step/train_loss", "step/train_accuracy", "step/trainer_samples_per_sec", "step/compute_s_per_step",
            "step/push_s_per_step", "step/staleness_mean", "step/learning_rate"):
    assert [step for step, _ in scalars[tag]] == expected_steps, (tag, scalars[tag], expected_steps)
assert all(v > 0 for _, v in scalars["step/train_loss"]), scalars["step/train_loss"]
assert events["restarts"] == [1], events["restarts"]  # a fresh run's steps are its own from its first
assert events["events"] == 2 + passes + len(expected_steps), events["events"]
print(f"{run}: {events['events']} events, {len(scalars)} tags, every record checked")
PY
}

# One process (local training), then 1 server + 2 trainers in sync: only the lead trainer writes.
"$BIN_DIR/pstrain" --data-dir data --output-dir local --passes 2 --batch-size 64 --hidden 32 --lr 0.05 \
  --log-every-steps 5 >/dev/null 2>&1 || fail "local run failed (see $WORK_ROOT/local/node_0/train.log)"
check local 2 20 5
timeout -k 5 60 mpirun --oversubscribe --bind-to none -np 3 "$BIN_DIR/pstrain" --data-dir data --output-dir sync \
  --num-pservers 1 --passes 2 --batch-size 64 --hidden 32 --lr 0.05 --log-every-steps 4 >/dev/null 2>&1 \
  || fail "3-rank run failed"
check sync 2 10 4

# --tensorboard false writes none.
"$BIN_DIR/pstrain" --data-dir data --output-dir off --passes 1 --batch-size 64 --hidden 32 --tensorboard false \
  >/dev/null 2>&1 || fail "run with --tensorboard false failed"
[ ! -e off/tensorboard ] || fail "--tensorboard false wrote off/tensorboard"

# The reader is not a rubber stamp: one flipped byte, or a cut file, is found.
file=$(echo local/tensorboard/*)
mkdir -p bad
cp "$file" "bad/$(basename "$file")"
printf '\x5a' | dd of="bad/$(basename "$file")" bs=1 seek=40 conv=notrunc status=none
! /usr/bin/python3 "$READER" "bad/$(basename "$file")" >/dev/null 2>&1 || fail "a flipped byte went unnoticed"
head -c -3 "$file" > "bad/$(basename "$file")"
! /usr/bin/python3 "$READER" "bad/$(basename "$file")" >/dev/null 2>&1 || fail "a truncated file went unnoticed"
echo "PASS: tensorboard_run"
