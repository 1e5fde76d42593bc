#!/usr/bin/env bash
# --node-aggregation (exchange/step_protocol.h "Node aggregation"): the trainers of a node sum their gradients and
# one of them pushes. All ranks here share one node: `on` makes the 4 trainers one push group; the test hook
# ranks-per-node=3 fakes two nodes (world ranks 0-2: the server and trainers 0-1; ranks 3-4: trainers 2-3), two
# groups of two. One check per call: node_aggregation.sh CASE NP PATH (NP 5: 1 server + 4 trainers)
#   reproducible     two runs with `on` give the same bits, one group or two; another seed does not (the check can
#                    fail); the log names the groups
#   matches_off      `on` against `off`: parameters within relative 1e-5 (two groups: the sum is associated
#                    otherwise; one group gives off's bits), the same test accuracy within 0.005, every sample
#                    trained once a pass
#   auto_keeps_bits  `auto` on one node is off: the bits of `off`; over two (faked) nodes it groups
#   rows_match_off   the NPLM, whose embedding the servers hold by rows (row slots stay per trainer, weighted by
#                    each trainer's samples): `on`, one group or two, within relative 1e-5 of `off`
#   geo_resumes      --mode geo with `on`: stopped by SIGUSR1 after a checkpoint, resumed: the bits of the
#                    uninterrupted run, and it learns
#   refuses          `on` with async, ssp, allreduce or --overlap true: exit 2 with one message, no output folder
source "$(dirname "$0")/common.sh"
TEXT_FIXTURE="$(dirname "$0")/../unit/data/text"
case_name=$1 np=$2 path=$3
[ "$np" -eq 5 ] || fail "node_aggregation.sh needs np 5 (1 server + 4 trainers)"
work=$(new_work_dir "node_aggregation_${case_name}_np${np}_${path}")
common=(--data-dir "$DATA_DIR" --num-pservers 1 --passes 2 --batch-size 32 --hidden 64,32 --optimizer momentum
        --lr 0.05)
two_nodes=ranks-per-node=3

train() {  # train NAME [flags...]; in the environment HOOKS: PSTRAIN_TEST_HOOKS for the run, SEED (default 5)
  local name=$1 program=pstrain
  shift
  (
    # Faults only through the test binary (pstrain refuses PSTRAIN_TEST_HOOKS).
    if [ -n "${HOOKS:-}" ]; then export PSTRAIN_TEST_HOOKS=$HOOKS; program=pstrain-faults; fi
    run_mpi "$np" "$path" 120 "$BIN_DIR/$program" "${common[@]}" --seed "${SEED:-5}" --output-dir "$work/$name" "$@" \
      > "$work/$name.log" 2>&1
  ) || { cat "$work/$name.log"; fail "run $name"; }
}
exact() { "$TOOLS_DIR/compare_parameters" "$work/$1/pass-00001" "$work/$2/pass-00001" --exact; }
groups_logged() {  # groups_logged NAME TEXT: the lead trainer's line about the push groups
  grep -q "one-sided, each node's leader pushes its trainers' sum.*$2" "$work/$1.log" \
    || { cat "$work/$1.log"; fail "$1: no line saying '$2'"; }
}
once_each() {  # once_each NAME: every pass trained all 3840 samples once
  python3 - "$work/$1/metrics.jsonl" <<'PY' || fail "$1: sample accounting"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
assert len(records) == 2, records
for r in records:
    assert r["samples"] == 3840 and r["samples_missing"] == 0 and r["samples_repeated"] == 0, r
PY
}

case "$case_name" in
  reproducible)
    train a --node-aggregation on
    train b --node-aggregation on
    exact a b || fail "two runs with --node-aggregation on (one group) differ"
    groups_logged a "1 push group for 4 trainers"
    HOOKS=$two_nodes train two_a --node-aggregation on
    HOOKS=$two_nodes train two_b --node-aggregation on
    exact two_a two_b || fail "two runs with --node-aggregation on (two groups) differ"
    groups_logged two_a "2 push groups for 4 trainers"
    SEED=6 train other_seed --node-aggregation on
    if exact a other_seed > /dev/null 2>&1; then fail "another seed gave the same bits: the check cannot fail"; fi
    ;;
  matches_off)
    train off --node-aggregation off
    train on --node-aggregation on
    HOOKS=$two_nodes train two --node-aggregation on
    # One group of all trainers: the leader's sum is the servers' expression (times a weight of 1): off's bits.
    exact off on || fail "one group of all trainers should give the bits of off"
    for run in on two; do
      "$TOOLS_DIR/compare_parameters" "$work/off/pass-00001" "$work/$run/pass-00001" --rtol 1e-5 \
        || fail "--node-aggregation on ($run) differs from off by more than 1e-5"
      a=$(last_metric "$work/off/metrics.jsonl" test_accuracy) b=$(last_metric "$work/$run/metrics.jsonl" test_accuracy)
      python3 -c "import sys; sys.exit(0 if abs($a - $b) <= 0.005 and $b > 0.6 else 1)" \
        || fail "test accuracy $b ($run) against $a (off)"
      once_each "$run"
    done
    ;;
  rows_match_off)
    "$BIN_DIR/pstrain-data" text --train "$TEXT_FIXTURE/train.txt" --valid "$TEXT_FIXTURE/valid.txt" \
      --test "$TEXT_FIXTURE/test.txt" --output "$work/text" --split-count 4 --ngram 4 --limit 2048 \
      > "$work/convert.log" 2>&1 || { cat "$work/convert.log"; fail "convert"; }
    common=(--data-dir "$work/text" --num-pservers 1 --passes 1 --batch-size 16 --optimizer sgd --lr 0.2
            --model nplm --embedding-dim 8 --hidden 16 --direct true)
    train off --node-aggregation off
    train on --node-aggregation on
    HOOKS=$two_nodes train two --node-aggregation on
    grep -q "is held by rows on the servers" "$work/on.log" || { cat "$work/on.log"; fail "the table was not held by rows"; }
    groups_logged on "1 push group for 4 trainers"
    for run in on two; do
      "$TOOLS_DIR/compare_parameters" "$work/off/pass-00000" "$work/$run/pass-00000" --rtol 1e-5 \
        || fail "the NPLM with --node-aggregation on ($run) differs from off by more than 1e-5"
    done
    ;;
  auto_keeps_bits)
    train off --node-aggregation off
    train auto
    exact off auto || fail "--node-aggregation auto on one node changed the bits of off"
    if grep -q "push group" "$work/auto.log"; then cat "$work/auto.log"; fail "auto grouped the trainers of one node"; fi
    HOOKS=$two_nodes train two_auto
    groups_logged two_auto "2 push groups for 4 trainers (--node-aggregation auto"
    ;;
  geo_resumes)
    common=(--data-dir "$DATA_DIR" --num-pservers 1 --passes 2 --batch-size 32 --hidden 64,32 --mode geo --geo-steps 2
            --optimizer sgd --lr 0.05 --checkpoint-every-steps 4 --keep-checkpoints 0 --node-aggregation on)
    train reference
    groups_logged reference "1 push group for 4 trainers"
    out="$work/run"
    PSTRAIN_TEST_HOOKS=step-delay-ms=30 run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain-faults" "${common[@]}" --seed 5 \
      --output-dir "$out" > "$out.log" 2>&1 &
    launcher=$!
    for ((i = 0; i < 1200; i++)); do  # until the first checkpoint is published (after step 4 of 60 a pass)
      compgen -G "$out/checkpoints/ckpt-*" > /dev/null && break
      sleep 0.05
    done
    pkill -USR1 -f -- "^mpirun .*--output-dir $out" || fail "no mpirun to signal"
    wait "$launcher" || { cat "$out.log"; fail "SIGUSR1 should end the job cleanly (exit 0)"; }
    grep -q "stopped on a signal" "$out.log" || { cat "$out.log"; fail "no 'stopped on a signal' line"; }
    [ ! -f "$out/pass-00001/done" ] || fail "the run finished before the signal: nothing was tested"
    run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" "${common[@]}" --seed 5 --output-dir "$out" --resume auto \
      > "$out.resume.log" 2>&1 || { cat "$out.resume.log"; fail "resume"; }
    exact reference run || fail "the resumed geo run differs from the uninterrupted one"
    accuracy=$(last_metric "$out/metrics.jsonl" test_accuracy)
    python3 -c "import sys; sys.exit(0 if $accuracy > 0.6 else 1)" || fail "test accuracy $accuracy: did not learn"
    ;;
  refuses)
    expect_refusal() {  # expect_refusal TEXT [flags...]
      local text=$1
      shift
      set +e
      run_mpi "$np" "$path" 60 "$BIN_DIR/pstrain" --data-dir "$DATA_DIR" --passes 1 --output-dir "$work/refused" \
        --node-aggregation on "$@" > "$work/refused.log" 2>&1
      local code=$?
      set -e
      [ "$code" -eq 2 ] || { cat "$work/refused.log"; fail "exit $code, expected 2 for $*"; }
      grep -q -- "$text" "$work/refused.log" || { cat "$work/refused.log"; fail "no message '$text' for $*"; }
      [ ! -e "$work/refused" ] || fail "a refused run left $work/refused"
    }
    expect_refusal "it needs --mode sync or geo, not --mode async" --mode async
    expect_refusal "it needs --mode sync or geo, not --mode ssp" --mode ssp
    expect_refusal "it needs --mode sync or geo, not --mode allreduce" --mode allreduce
    expect_refusal "with --overlap true" --overlap true
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "PASS: node aggregation $case_name on $np ranks over $path"
