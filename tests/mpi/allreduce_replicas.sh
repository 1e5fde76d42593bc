#!/usr/bin/env bash
# All-reduce training keeps every trainer's parameters bit-identical: the replica check compares checksums after
# EVERY step and the run must pass; then the last trainer nudges one parameter by one ulp after step 3, and the
# same check must end the job (non-zero exit, one message naming the divergence, within seconds).
source "$(dirname "$0")/common.sh"
np=$1 path=$2
work=$(new_work_dir "allreduce_replicas_np${np}_${path}")
common=(--mode allreduce --passes 2 --batch-size 32 --hidden 64,32 --optimizer adam --lr 0.001 --check-replicas-every-steps 1)

run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" --data-dir "$DATA_DIR" --output-dir "$work/clean" "${common[@]}" \
  > "$work/clean.log" 2>&1 || { cat "$work/clean.log"; fail "the all-reduce run with a replica check every step"; }
grep -q '"mode": "allreduce"' "$work/clean/metrics.jsonl" || fail "metrics do not say mode allreduce"
[ "$(last_metric "$work/clean/metrics.jsonl" pservers)" = 0 ] || fail "an all-reduce run reported servers"
[ "$(last_metric "$work/clean/metrics.jsonl" samples_missing)" = 0 ] || fail "samples missed"
[ "$(last_metric "$work/clean/metrics.jsonl" samples_repeated)" = 0 ] || fail "samples repeated"

set +e
PSTRAIN_TEST_HOOKS=perturb-replica-step=3 run_mpi "$np" "$path" 30 "$BIN_DIR/pstrain-faults" --data-dir "$DATA_DIR" \
  --output-dir "$work/nudged" "${common[@]}" > "$work/nudged.log" 2>&1
code=$?
set -e
cat "$work/nudged.log"
[ "$code" -ne 0 ] || fail "a replica one ulp off went unnoticed (exit 0)"
[ "$code" -ne 124 ] && [ "$code" -ne 137 ] || fail "the run with a diverged replica hung"
grep -q "replicas diverged" "$work/nudged.log" || fail "no message naming the diverged replicas"
[ "$(grep -c 'pstrain: error:' "$work/nudged.log")" -eq 1 ] || fail "expected exactly one error message"
echo "PASS: $np all-reduce trainers over $path stay bit-identical every step; a nudged replica is caught (exit $code)"
