#!/usr/bin/env bash
# Async training on a real Fashion-MNIST subset reaches a test accuracy an untrained model cannot (chance is
# 0.10), and writes the documented outputs.
source "$(dirname "$0")/common.sh"
np=$1 path=$2
work=$(new_work_dir "async_learns_np${np}_${path}")
# Slurm variables as mpirun inside an allocation leaves them (the same on every rank): pstrain must ignore them.
SLURM_PROCID=0 SLURM_LOCALID=0 run_mpi "$np" "$path" 150 "$BIN_DIR/pstrain" --data-dir "$DATA_DIR" --output-dir "$work/out" --mode async \
  --passes 3 --batch-size 32 --hidden 128,64 --optimizer momentum --lr 0.02 > "$work/run.log" 2>&1 \
  || { cat "$work/run.log"; fail "async run"; }
cat "$work/run.log"
accuracy=$(last_metric "$work/out/metrics.jsonl" test_accuracy)
python3 -c "import sys; sys.exit(0 if float('$accuracy') >= 0.65 else 1)" || fail "test accuracy $accuracy < 0.65"
[ "$(wc -l < "$work/out/metrics.jsonl")" -eq 3 ] || fail "metrics.jsonl should hold 3 passes"
for pass in 00000 00001 00002; do [ -f "$work/out/pass-$pass/done" ] || fail "pass-$pass/done missing"; done
[ -f "$work/out/config.ini" ] || fail "config.ini missing"
for ((rank = 0; rank < np; rank++)); do
  ls "$work/out/node_$rank/"*.log > /dev/null || fail "node_$rank log missing"
  # One node: the local rank (from MPI_Comm_split_type) equals the world rank.
  grep -q "local rank $rank of $np on this node" "$work/out/node_$rank/"*.log || fail "node_$rank: wrong local rank"
done
python3 - "$work/out/metrics.jsonl" <<'PY' || fail "metrics fields"
import json, sys
for line in open(sys.argv[1]):
    record = json.loads(line)
    for key in ("pass", "train_loss", "test_loss", "test_accuracy", "samples_per_sec", "elapsed_s", "mode",
                "trainers", "pservers", "staleness_mean", "staleness_max"):
        assert key in record, key
PY
echo "PASS: async on $np ranks over $path reached test accuracy $accuracy"
