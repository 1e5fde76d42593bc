#!/usr/bin/env bash
# All-reduce buckets summed during the backward pass (allreduce/bucket_stream.h, --overlap true): at 2 trainers
# they give the bits of one sum after the backward pass (--overlap false); at 3 or more they are reproducible (two
# runs, the same bits). --overlap auto sums after the backward pass. fc1 (784 x 256) spans several buckets; adam's
# bias correction checks that each step is counted once.
source "$(dirname "$0")/common.sh"
np=$1 path=$2
work=$(new_work_dir "allreduce_overlap_np${np}_${path}")
common=(--mode allreduce --passes 1 --batch-size 32 --hidden 256,32 --optimizer adam --lr 0.001 --seed 4)
runs=(true false auto)
[ "$np" -gt 2 ] && runs+=(true-again)
for run in "${runs[@]}"; do
  run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" --data-dir "$DATA_DIR" --output-dir "$work/$run" \
    --overlap "${run%-again}" "${common[@]}" > "$work/$run.log" 2>&1 || { cat "$work/$run.log"; fail "--overlap $run"; }
done
same() { "$TOOLS_DIR/compare_parameters" "$work/$1/pass-00000" "$work/$2/pass-00000" --exact; }
grep -q "all-reduce: buckets summed during the backward pass" "$work/true.log" || fail "--overlap true did not stream"
grep -q "overlap: gradient blocks go out during the backward pass" "$work/true.log" || fail "the model did not stream"
grep -q "all-reduce: one sum after the backward pass" "$work/false.log" || fail "--overlap false streamed"
grep -q "all-reduce: one sum after the backward pass (--overlap auto" "$work/auto.log" || fail "--overlap auto streamed"
if [ "$np" -eq 2 ]; then
  same true false || fail "buckets changed the bits at 2 trainers"
else
  same true true-again || fail "two streamed runs differ"
fi
same auto false || fail "--overlap auto changed the bits"
echo "PASS: all-reduce buckets on $np ranks over $path: the bits the rule promises"
