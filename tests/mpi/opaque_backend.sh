#!/usr/bin/env bash
# The code paths of GPU trainers without a GPU: the test binary pstrain-faults with PSTRAIN_TEST_HOOKS
# opaque-backend=true makes trainers compute on the CPU backend through copies only (host mirrors in staging
# memory, parameter uploads, all-reduce summed in host memory), exactly as with a GPU backend. The arithmetic is the
# CPU's, so each run must give the SAME BITS as the same run of pstrain on the ordinary CPU path: sync PS (1 server
# + 2 trainers) and all-reduce (2 trainers), MLP and CNN.
source "$(dirname "$0")/common.sh"
path=$1
work=$(new_work_dir "opaque_backend_${path}")
mlp=(--passes 2 --batch-size 32 --hidden 64,32 --optimizer momentum --lr 0.05)
cnn=(--passes 1 --batch-size 32 --model cnn --conv-filters 4,8 --hidden 16 --optimizer momentum --lr 0.05)
for case in sync-mlp allreduce-mlp sync-cnn allreduce-cnn; do
  mode=${case%-*} model=${case#*-}
  np=2; [ "$mode" = sync ] && np=3
  flags=("${mlp[@]}"); [ "$model" = cnn ] && flags=("${cnn[@]}")
  for backend in plain opaque; do
    run=("$BIN_DIR/pstrain")
    [ "$backend" = opaque ] && run=(env PSTRAIN_TEST_HOOKS=opaque-backend=true "$BIN_DIR/pstrain-faults")
    run_mpi "$np" "$path" 120 "${run[@]}" --data-dir "$DATA_DIR" --output-dir "$work/$case-$backend" \
      --mode "$mode" "${flags[@]}" > "$work/$case-$backend.log" 2>&1 || { cat "$work/$case-$backend.log"; fail "$case on the $backend backend"; }
  done
  grep -q "cpu-opaque" "$work/$case-opaque.log" || fail "$case: the opaque backend was not used"
  last=$(basename "$(ls -d "$work/$case-plain"/pass-* | tail -1)")
  "$TOOLS_DIR/compare_parameters" "$work/$case-plain/$last" "$work/$case-opaque/$last" --exact \
    || fail "$case: the copy-only (GPU-style) path gave other bits than the CPU path"
  echo "ok: $case"
done
echo "PASS: GPU-style trainer paths equal the CPU paths bit for bit over $path"
