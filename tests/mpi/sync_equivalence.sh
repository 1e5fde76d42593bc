#!/usr/bin/env bash
# Sync SGD (or all-reduce, with mode "allreduce") with T trainers and batch b must give the parameters of a
# local run with batch T*b over the same samples in the same order (relative difference <= 1e-5).
source "$(dirname "$0")/common.sh"
np=$1 path=$2 mode=${3:-sync} model=${4:-mlp}
batch=32
trainers=$(trainers_for "$np")
[ "$mode" = allreduce ] && trainers=$np  # no servers: every rank trains
work=$(new_work_dir "${mode}_${model}_equivalence_np${np}_${path}")
common=(--passes 2 --shuffle false --optimizer momentum --lr 0.05 --seed 11 --hidden 64,32)
# A small CNN (two conv + pool layers) keeps the run short while going through every convolution code path. It
# uses tanh: Fashion-MNIST's background pixels are exact zeros, so a conv output there IS the bias, and with ReLU
# a bias within rounding of 0 switches the gradient of a whole background region on or off. With 3 trainers
# (weights 1/3, not exact in binary) such a flip made two correct runs differ by 0.3 relative after 40 steps
# (tanh: 1.6e-6), a property of the problem, not of the code: ReLU's gradients are checked by finite
# differences in the unit tests.
[ "$model" = cnn ] && common=(--passes 1 --shuffle false --optimizer momentum --lr 0.05 --seed 11 --model cnn \
  --conv-filters 4,8 --hidden 16 --activation tanh)

run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" --data-dir "$DATA_DIR" --output-dir "$work/distributed" \
  --mode "$mode" --batch-size "$batch" "${common[@]}" > "$work/distributed.log" 2>&1 || { cat "$work/distributed.log"; fail "distributed run"; }

"$TOOLS_DIR/interleave_shards" "$DATA_DIR" "$trainers" "$batch" "$work/interleaved"
timeout 120 "$BIN_DIR/pstrain" --data-dir "$work/interleaved" --output-dir "$work/local" \
  --batch-size $((trainers * batch)) "${common[@]}" > "$work/local.log" 2>&1 || { cat "$work/local.log"; fail "local run"; }

[ "$(last_metric "$work/distributed/metrics.jsonl" samples)" = "$(last_metric "$work/local/metrics.jsonl" samples)" ] \
  || fail "the runs saw different sample counts"
last_pass=$(basename "$(ls -d "$work/local"/pass-* | tail -1)")
"$TOOLS_DIR/compare_parameters" "$work/distributed/$last_pass" "$work/local/$last_pass" --rtol 1e-5 \
  || fail "$mode with $trainers trainers x batch $batch differs from local batch $((trainers * batch))"
echo "PASS: $mode $model on $np ranks ($trainers trainers) on $path matches the local run"
