#!/usr/bin/env bash
# Async pushes streamed block by block during the backward pass (ps/push_stream.h) change when the gradient
# travels, never what arrives: with one trainer an async (and an SSP) run is deterministic, so --overlap true
# must give the bits of --overlap false, where the gradient goes in one push after the backward pass. fc1
# (784 x 256) goes in several blocks of rows. --overlap auto streams them, as every rank runs on this one node.
source "$(dirname "$0")/common.sh"
np=$1 path=$2
work=$(new_work_dir "async_overlap_np${np}_${path}")
common=(--passes 1 --batch-size 32 --hidden 256,32 --optimizer momentum --lr 0.05 --seed 5 --num-pservers $((np - 1)))
for mode in async ssp; do
  for overlap in true false auto; do
    run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" --data-dir "$DATA_DIR" --output-dir "$work/$mode-$overlap" \
      --mode "$mode" --overlap "$overlap" "${common[@]}" > "$work/$mode-$overlap.log" 2>&1 \
      || { cat "$work/$mode-$overlap.log"; fail "--mode $mode --overlap $overlap"; }
  done
  grep -q "overlap: gradient blocks go out during the backward pass" "$work/$mode-true.log" \
    || fail "--mode $mode --overlap true did not stream"
  if grep -q "overlap: gradient blocks" "$work/$mode-false.log"; then fail "--mode $mode --overlap false streamed"; fi
  grep -q "pushes: gradient blocks put during the backward pass (every rank on one node" "$work/$mode-auto.log" \
    || fail "--mode $mode --overlap auto on one node did not stream"
  for overlap in true auto; do
    "$TOOLS_DIR/compare_parameters" "$work/$mode-$overlap/pass-00000" "$work/$mode-false/pass-00000" --exact \
      || fail "--mode $mode --overlap $overlap: streaming the pushes changed the bits"
  done
done
echo "PASS: async and ssp pushes streamed or whole give the same bits with one trainer and $((np - 1)) shards over $path"
