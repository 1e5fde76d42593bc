#!/usr/bin/env bash
# The pause between polls of the async server and trainers (core/poll_pause.h) changes when a push is applied,
# never what: with one trainer an async (and an SSP) run is deterministic, so sleeping 100 us between polls must
# give the bits of yielding the processor (--poll-interval-us 0, the default).
source "$(dirname "$0")/common.sh"
np=$1 path=$2
work=$(new_work_dir "async_poll_pause_np${np}_${path}")
common=(--passes 1 --batch-size 32 --hidden 64 --optimizer momentum --lr 0.05 --seed 3 --num-pservers $((np - 1)))
for mode in async ssp; do
  for pause in 0 100; do
    run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" --data-dir "$DATA_DIR" --output-dir "$work/$mode-$pause" \
      --mode "$mode" --poll-interval-us "$pause" "${common[@]}" > "$work/$mode-$pause.log" 2>&1 \
      || { cat "$work/$mode-$pause.log"; fail "--mode $mode --poll-interval-us $pause"; }
  done
  "$TOOLS_DIR/compare_parameters" "$work/$mode-0/pass-00000" "$work/$mode-100/pass-00000" --exact \
    || fail "--mode $mode: sleeping between polls changed the bits"
done
echo "PASS: async and ssp with one trainer and $((np - 1)) shards over $path: the same bits yielding or sleeping between polls"
