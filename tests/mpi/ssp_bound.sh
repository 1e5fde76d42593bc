#!/usr/bin/env bash
# Bounded staleness: with trainer 1 slowed down (a test-only delay), no trainer ever runs more than s steps ahead
# of the slowest (s = 2, then s = 0), the gate really engages (fast trainers reach the bound and wait), every
# sample is trained once per pass, and the model learns.
source "$(dirname "$0")/common.sh"
np=$1 path=$2
work=$(new_work_dir "ssp_bound_np${np}_${path}")
for bound in 2 0; do
  PSTRAIN_TEST_HOOKS=step-delay-ms=8,slow-trainer=1 run_mpi "$np" "$path" 150 "$BIN_DIR/pstrain-faults" \
    --data-dir "$DATA_DIR" --output-dir "$work/s$bound" --mode ssp --staleness "$bound" --num-pservers 1 --passes 2 \
    --batch-size 32 --hidden 32 > "$work/s$bound.log" 2>&1 || { cat "$work/s$bound.log"; fail "ssp run with s=$bound"; }
  python3 - "$work/s$bound/metrics.jsonl" "$bound" <<'PY' || fail "ssp bound $bound"
import json, sys
bound = int(sys.argv[2])
for line in open(sys.argv[1]):
    r = json.loads(line)
    assert r["mode"] == "ssp" and r["ssp_bound"] == bound, r
    assert r["ssp_lead_max"] <= bound, f"pass {r['pass']}: a trainer ran {r['ssp_lead_max']} steps ahead (bound {bound})"
    assert r["ssp_lead_max"] == bound, f"pass {r['pass']}: nobody reached the bound: the slow trainer did not slow anyone"
    assert r["ssp_gate_s_per_step"] > 0, "the gate never waited"
    assert r["samples"] == 3840, r["samples"]
print(f"s={bound}: lead max", [json.loads(l)["ssp_lead_max"] for l in open(sys.argv[1])],
      "test accuracy", json.loads(open(sys.argv[1]).read().splitlines()[-1])["test_accuracy"])
PY
done
echo "PASS: ssp on $np ranks over $path"
