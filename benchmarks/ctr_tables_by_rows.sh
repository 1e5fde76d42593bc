#!/usr/bin/env bash
# A click model's tables held by rows on the servers against the same tables as dense parameters (issue 41):
# --model dlrm with its defaults on synthetic-ctr lines, 1 server + 2 trainers over the cross-node path
# (--mca btl tcp,self --mca osc pt2pt), one pass, sync and async, ROUNDS rounds alternating the configurations;
# prints samples/s, the test AUC and the step's parts from metrics.jsonl. Dense tables are ~10x slower: DENSE=0
# leaves them out.
# Settings (environment): LINES=200000 ROUNDS=3 DENSE=1 BUILD_DIR=<repo>/build
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
set_defaults LINES=200000 ROUNDS=3 DENSE=1 BUILD_DIR="$REPO/build"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BUILD_DIR/bin/pstrain-data" synthetic-ctr --lines "$LINES" --seed 5 --output "$work/data" --split-count 2 \
  | grep "bayes test AUC"
exchanges=(auto)
[[ $DENSE == 1 ]] && exchanges+=(dense)
for round in $(seq "$ROUNDS"); do
  for mode in sync async; do
    for exchange in "${exchanges[@]}"; do
      out="$work/$mode-$exchange-$round"
      env "${MPI_ENV[@]}" mpirun -np 3 --oversubscribe --mca btl tcp,self --mca osc pt2pt "$BUILD_DIR/bin/pstrain" \
        --data-dir "$work/data" --model dlrm --passes 1 --mode "$mode" --table-exchange "$exchange" \
        --output-dir "$out" > "$out.log" 2>&1 || { tail -5 "$out.log"; die "$mode $exchange failed"; }
      /usr/bin/python3 - "$out/metrics.jsonl" "$mode" "$exchange" "$round" <<'PY'
import json, sys
m = [json.loads(line) for line in open(sys.argv[1]) if line.strip()][-1]
ms = {k: 1000 * m[k + "_s_per_step"] for k in ("pull", "push", "compute", "barrier")}
print(f"{sys.argv[2]:5} tables={sys.argv[3]:5} round {sys.argv[4]}: {m['samples_per_sec']:8.0f} samples/s, "
      f"test AUC {m['test_auc']:.4f}, ms a step: " + " ".join(f"{k} {v:.2f}" for k, v in ms.items()))
PY
    done
  done
done
