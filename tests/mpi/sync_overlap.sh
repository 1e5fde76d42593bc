#!/usr/bin/env bash
# The two sync transports change when data travels, never what is computed: a run whose blocks are streamed
# (--overlap true: gradient blocks out during the backward pass, parameter blocks in during the forward pass) gives
# the bits of a one-sided run (--overlap false). fc1 (784 x 256) goes out in several blocks of rows; with 4 ranks
# the blocks are dealt to two shards; adam's per-step bias correction checks that a block-wise update counts each
# step once. --overlap auto streams exactly when the ranks have a processor each (here: np <= the processors
# mpirun lets them use, as it binds nothing).
source "$(dirname "$0")/common.sh"
np=$1 path=$2
work=$(new_work_dir "sync_overlap_np${np}_${path}")
# BATCH (default 32): 512 sums the batch beyond OpenBLAS's inner blocking (the kernel-family variants below).
common=(--mode sync --passes 1 --batch-size "${BATCH:-32}" --hidden 256,32 --optimizer adam --lr 0.001 --seed 9)
for overlap in true false auto; do
  run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" --data-dir "$DATA_DIR" --output-dir "$work/$overlap" \
    --overlap "$overlap" "${common[@]}" > "$work/$overlap.log" 2>&1 || { cat "$work/$overlap.log"; fail "--overlap $overlap"; }
done
grep -q "sync steps: blocks streamed" "$work/true.log" || fail "the run with --overlap true did not stream"
grep -q "overlap: gradient blocks go out during the backward pass" "$work/true.log" || fail "the model did not stream"
grep -q "sync steps: one-sided" "$work/false.log" || fail "the run with --overlap false was not one-sided"
if grep -q "overlap: gradient blocks" "$work/false.log"; then fail "the run with --overlap false streamed"; fi
if [ "$np" -le "$(nproc)" ]; then expected="blocks streamed"; else expected="one-sided"; fi
grep -q "sync steps: $expected" "$work/auto.log" || fail "--overlap auto with $np ranks on $(nproc) processors: expected '$expected'"
for overlap in true auto; do
  "$TOOLS_DIR/compare_parameters" "$work/$overlap/pass-00000" "$work/false/pass-00000" --exact \
    || fail "--overlap $overlap changed the bits"
done
echo "PASS: streamed and one-sided sync steps give the same bits on $np ranks over $path; auto chose $expected"
