#!/usr/bin/env bash
# A run's output folder is never overwritten or mixed (lib/job/run_folder.h), one case per call:
#   run_folder.sh CASE NP PATH
#   changed_flags_refused   a finished run, then the same folder with another --hidden and --resume auto: exit 2,
#                           naming the skipped checkpoint, the flag that differs and what to do; every file as it was
#                           (the data-loss bug of issue 27: it started fresh and overwrote the run)
#   failed_resume_keeps_records
#                           --resume with a damaged checkpoint (exit 3), a path that does not exist (exit 3) and a
#                           run folder (exit 2): each names the problem, and config.ini, provenance.json, metrics,
#                           logs and TensorBoard files stay as they were
#   resume_continues_records
#                           a finished run resumed from a checkpoint inside its second pass: metrics.jsonl holds each
#                           pass once, TensorBoard (its purge rule, read_events.py --view) shows every step once in
#                           order, and the parameters are the uninterrupted run's
#   concurrent_runs_refused a second job on a folder a running job holds: exit 2 "in use"; the first one finishes
#   init_from_inside_output a fresh run whose --init-from lies in its own --output-dir: refused, nothing changed
#   auto_in_empty_folder    --resume auto in an empty folder (a Kubernetes Job's first start) trains from scratch
source "$(dirname "$0")/../mpi/common.sh"
source "$(dirname "$0")/fault_lib.sh"
case_name=$1 np=$2 path=$3
work=$(new_work_dir "run_folder_${case_name}_np${np}_${path}")
READER="$(dirname "$0")/../report/read_events.py"

flags() {  # flags [HIDDEN [PASSES]]
  echo --data-dir "$DATA_DIR" --batch-size 32 --optimizer momentum --lr 0.05 --keep-checkpoints 0 \
    --checkpoint-every-steps 7 --log-every-steps 5 --hidden "${1:-32}" --passes "${2:-2}"
}
pstrain() {  # pstrain LOG [args]: the exit code is pstrain's
  local log=$1
  shift
  run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" "$@" > "$log" 2>&1
}
# Every name under a folder and every file's checksum: equal before and after means nothing changed.
tree_state() { (cd "$1" && find . -exec sh -c 'for f; do [ -f "$f" ] && sha256sum "$f" || echo "$f"; done' _ {} + | sort); }
expect_unchanged() {  # expect_unchanged FOLDER STATE WHAT
  local now
  now=$(tree_state "$1")
  [ "$now" = "$2" ] || { diff <(echo "$2") <(echo "$now") || true; fail "$3 changed $1"; }
}
expect_refusal() {  # expect_refusal LOG CODE ACTUAL TEXT...: exit CODE and one message holding every TEXT
  local log=$1 code=$2 actual=$3
  shift 3
  [ "$actual" -eq "$code" ] || { cat "$log"; fail "exit $actual, expected $code"; }
  [ "$(grep -c 'pstrain: error:' "$log")" -eq 1 ] || { cat "$log"; fail "expected exactly one error message"; }
  for text in "$@"; do grep -qF -- "$text" "$log" || { cat "$log"; fail "the message does not say '$text'"; }; done
}
finished_run() {  # finished_run OUT [HIDDEN]: a 2-pass run, checkpoints every 7 steps, all kept
  pstrain "$1.log" $(flags "${2:-32}") --output-dir "$1" || { cat "$1.log"; fail "the first run"; }
}

out="$work/t1"
case "$case_name" in
  changed_flags_refused)
    finished_run "$out" 64
    state=$(tree_state "$out")
    mapfile -t ckpts < <(ls "$out/checkpoints" | sort -r)
    code=0
    pstrain "$work/second.log" $(flags 32) --output-dir "$out" --resume auto || code=$?
    expect_refusal "$work/second.log" 2 "$code" "holds an earlier run" "no checkpoint of it fits" \
      "skipped ${#ckpts[@]} checkpoint(s) in $out/checkpoints (${ckpts[0]} ... ${ckpts[-1]}): model.h5: 'fc1.weight' has shape 64x784 but the model needs 32x784" "hidden = 32 (the earlier run: 64)" \
      "--config $out/config.ini --resume auto" "choose another --output-dir"
    expect_unchanged "$out" "$state" "a refused --resume auto"
    sed -n '/pstrain: error:/,$p' "$work/second.log"
    ;;
  failed_resume_keeps_records)
    finished_run "$out"
    newest=$(ls -d "$out"/checkpoints/ckpt-* | sort | tail -1)
    cp -r "$out" "$work/pristine"
    truncate -s 1000 "$newest/training.h5"
    state=$(tree_state "$out")
    code=0
    pstrain "$work/damaged.log" $(flags 32 3) --output-dir "$out" --resume "$newest" || code=$?
    expect_refusal "$work/damaged.log" 3 "$code" "training.h5 has 1000 bytes"
    expect_unchanged "$out" "$state" "a failed resume (damaged checkpoint)"
    code=0
    pstrain "$work/missing.log" $(flags 32 3) --output-dir "$out" --resume "$out/checkpoints/ckpt-999" || code=$?
    expect_refusal "$work/missing.log" 3 "$code" "no such checkpoint folder" "checkpoints/ckpt-N"
    code=0
    pstrain "$work/folder.log" $(flags 32 3) --output-dir "$out" --resume "$work/pristine" || code=$?
    expect_refusal "$work/folder.log" 2 "$code" "is a run folder, not a checkpoint" "checkpoints/ckpt-N"
    expect_unchanged "$out" "$state" "a failed resume (wrong path)"
    ;;
  resume_continues_records)
    finished_run "$work/reference"
    finished_run "$out"
    # 3840 samples / (32 x trainers) steps per pass; the newest checkpoint inside the second pass.
    steps=$((3840 / 32 / $(trainers_for "$np")))
    resume_from=$(ls -d "$out"/checkpoints/ckpt-* | sort -t- -k2 -n | awk -F- -v s="$steps" '$NF > s && $NF < 2 * s' | tail -1)
    [ -n "$resume_from" ] || fail "no checkpoint inside the second pass"
    pstrain "$work/resumed.log" $(flags) --output-dir "$out" --resume "$resume_from" \
      || { cat "$work/resumed.log"; fail "resume from $resume_from"; }
    grep -q "resuming from $resume_from" "$work/resumed.log" || fail "did not resume from $resume_from"
    "$TOOLS_DIR/compare_parameters" "$work/reference/pass-00001" "$out/pass-00001" --exact \
      || fail "the resumed run's parameters differ from the uninterrupted run's"
    /usr/bin/python3 - "$out/metrics.jsonl" <<'PY' || fail "metrics.jsonl does not hold each pass once"
import json, sys
passes = [json.loads(line)["pass"] for line in open(sys.argv[1])]
assert passes == [0, 1], passes
PY
    /usr/bin/python3 "$READER" --view "$out/tensorboard" > "$work/view.json" || fail "the event files do not read"
    /usr/bin/python3 "$READER" --view "$work/reference/tensorboard" > "$work/reference-view.json" || fail "reference events"
    /usr/bin/python3 - "$work/view.json" "$work/reference-view.json" <<'PY' || fail "TensorBoard's view doubles back"
import json, sys
view, reference = (json.load(open(path)) for path in sys.argv[1:])
assert sorted(view) == sorted(reference), (sorted(view), sorted(reference))
for tag, points in view.items():
    steps = [step for step, _ in points]
    assert steps == sorted(set(steps)), (tag, steps)  # every step once, in order: no zig-zag
    assert steps == [step for step, _ in reference[tag]], (tag, steps, reference[tag])
print(f"{len(view)} tags, each step once, the same steps as the uninterrupted run")
PY
    [ "$(ls "$out/tensorboard" | wc -l)" -eq 2 ] || fail "expected the first run's event file and the resumed one's"
    ;;
  concurrent_runs_refused)
    # The first job trains long (20 passes, 20 ms a step) and is stopped by SIGTERM once the second was refused.
    PSTRAIN_TEST_HOOKS=step-delay-ms=20 run_mpi "$np" "$path" 300 "$BIN_DIR/pstrain-faults" $(flags 32 20) --output-dir "$out" \
      > "$work/first.log" 2>&1 &
    first=$!
    trap 'kill "$first" 2> /dev/null || true' EXIT
    wait_for_training "$work/first.log"
    code=0
    pstrain "$work/second.log" $(flags 32 20) --output-dir "$out" --resume auto || code=$?
    expect_refusal "$work/second.log" 2 "$code" "is in use by another pstrain run"
    pkill -TERM -f -- "^$BIN_DIR/pstrain-faults .*--output-dir $out( |$)" || fail "the first job is gone: nothing was tested"
    wait "$first" || { cat "$work/first.log"; fail "the first job did not stop cleanly"; }
    trap - EXIT
    grep -q "stopped on a signal" "$work/first.log" || fail "the first job did not stop on the signal"
    /usr/bin/python3 - "$out/metrics.jsonl" <<'PY' || fail "metrics.jsonl mixes two runs"
import json, os, sys
passes = [json.loads(line)["pass"] for line in open(sys.argv[1])] if os.path.exists(sys.argv[1]) else []
assert passes == list(range(len(passes))), passes
PY
    ;;
  init_from_inside_output)
    mkdir -p "$out"
    cp -r "$REFERENCE_PASS" "$out/start"
    state=$(tree_state "$out")
    code=0
    pstrain "$work/init.log" $(flags 32 1) --output-dir "$out" --init-from "$out/start" || code=$?
    expect_refusal "$work/init.log" 2 "$code" "--init-from $out/start is inside --output-dir"
    expect_unchanged "$out" "$state" "a refused --init-from"
    ;;
  auto_in_empty_folder)
    mkdir -p "$out"
    pstrain "$work/auto.log" $(flags 32 1) --output-dir "$out" --resume auto || { cat "$work/auto.log"; fail "run"; }
    grep -q "holds no earlier run; starting fresh" "$out"/node_0/*.log || fail "rank 0's log has no 'starting fresh' line"
    [ -f "$out/pass-00000/done" ] || fail "no pass folder"
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "PASS: $case_name on $np ranks over $path"
