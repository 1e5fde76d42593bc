#!/usr/bin/env bash
# Sync SGD (or all-reduce, with mode "allreduce") with T trainers and batch b must give the parameters of a
# local run with batch T*b over the same samples in the same order (relative difference <= 1e-5).
source "$(dirname "$0")/common.sh"
np=$1 path=$2 mode=${3:-sync}
batch=32
trainers=$(trainers_for "$np")
[ "$mode" = allreduce ] && trainers=$np  # no servers: every rank trains
work=$(new_work_dir "${mode}_equivalence_np${np}_${path}")
common=(--passes 2 --shuffle false --optimizer momentum --lr 0.05 --seed 11 --hidden 64,32)

run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" --data-dir "$DATA_DIR" --output-dir "$work/distributed" \
  --mode "$mode" --batch-size "$batch" "${common[@]}" > "$work/distributed.log" 2>&1 || { cat "$work/distributed.log"; fail "distributed run"; }

"$TOOLS_DIR/interleave_shards" "$DATA_DIR" "$trainers" "$batch" "$work/interleaved"
timeout 120 "$BIN_DIR/pstrain" --data-dir "$work/interleaved" --output-dir "$work/local" \
  --batch-size $((trainers * batch)) "${common[@]}" > "$work/local.log" 2>&1 || { cat "$work/local.log"; fail "local run"; }

[ "$(last_metric "$work/distributed/metrics.jsonl" samples)" = "$(last_metric "$work/local/metrics.jsonl" samples)" ] \
  || fail "the runs saw different sample counts"
"$TOOLS_DIR/compare_parameters" "$work/distributed/pass-00001" "$work/local/pass-00001" --rtol 1e-5 \
  || fail "$mode with $trainers trainers x batch $batch differs from local batch $((trainers * batch))"
echo "PASS: $mode on $np ranks ($trainers trainers) on $path matches the local run"
