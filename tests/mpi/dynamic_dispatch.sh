#!/usr/bin/env bash
# Dynamic data dispatch: trainers take chunks from an MPI one-sided counter; every sample of every pass is
# trained exactly once (samples_missing = samples_repeated = 0, chunks add up), and a trainer slowed by 40 ms a step
# (160 ms a chunk: a slow-down by a factor of the step's own time was lost in the time to read a chunk and, with
# 4 ranks on 2 cores, in the scheduling of ranks that poll while the slowed one sleeps) takes fewer chunks than the
# others in async mode (under ssp the staleness bound holds the fast ones back, so only the
# accounting is checked). Also static sharding's accounting, as the control.
source "$(dirname "$0")/common.sh"
np=$1 path=$2 mode=$3
work=$(new_work_dir "dynamic_dispatch_${mode}_np${np}_${path}")
chunk=128
for dispatch in dynamic static; do
  PSTRAIN_TEST_HOOKS=slow-trainer=1,step-delay-ms=40 run_mpi "$np" "$path" 150 "$BIN_DIR/pstrain-faults" \
    --data-dir "$DATA_DIR" --output-dir "$work/$dispatch" --mode "$mode" --num-pservers 1 --passes 2 --batch-size 32 \
    --hidden 32 --dispatch "$dispatch" --chunk-size "$chunk" > "$work/$dispatch.log" 2>&1 \
    || { cat "$work/$dispatch.log"; fail "$dispatch run"; }
  python3 - "$work/$dispatch/metrics.jsonl" "$dispatch" "$chunk" "$mode" <<'PY' || fail "$dispatch accounting"
import json, math, sys
dispatch, chunk, mode = sys.argv[2], int(sys.argv[3]), sys.argv[4]
for line in open(sys.argv[1]):
    r = json.loads(line)
    assert r["dispatch"] == dispatch
    assert r["samples"] == 3840 and r["samples_missing"] == 0 and r["samples_repeated"] == 0, r
    if dispatch == "dynamic":
        chunks = r["chunks_per_trainer"]
        assert sum(chunks) == math.ceil(3840 / chunk), chunks
        if mode == "async":
            # Fewer than the fastest other trainer, and no more than any: on a loaded machine another trainer can
            # be starved of the processor as long as the slowed one sleeps ([26, 2, 2] was seen with 4 ranks and a
            # simulation sharing 2 cores); without the slow-down the counts come out about equal.
            others = [c for i, c in enumerate(chunks) if i != 1]
            assert chunks[1] < max(others) and chunks[1] <= min(others), f"slow trainer 1 took {chunks}"
print(dispatch, "ok:", [json.loads(l).get("chunks_per_trainer") for l in open(sys.argv[1])])
PY
done
echo "PASS: $mode dispatch accounting on $np ranks over $path"
