#!/usr/bin/env bash
# The dry-run against real pstrain runs on this machine (README.md, "Validation"): for each MPI path (shm: Open
# MPI's defaults; tcp: --mca btl tcp,self --mca osc pt2pt), mode and 2-4 ranks (1 server + 1-3 trainers), one
# real pass of Fashion-MNIST with the MLP, then two predictions of the same job on the localhost-<path> platform:
# with the step's compute calibrated by pstrain-calibrate, and with the compute the real run measured per step
# (which isolates the exchange model's error from the calibration's). Prints a Markdown table.
#   bash benchmarks/scale/validate.sh [OUT]      # OUT: benchmarks/results/scale/validation
#   REUSE_RUNS=1 bash benchmarks/scale/validate.sh OUT   # predict again against the real runs already in OUT
#                                                         # (a changed platform file or dry-run; load: theirs)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/benchmarks/results/scale/validation}
data=${PSTRAIN_DATA:-$root/data/fashion-mnist}
modes=${MODES:-sync async}
ranks_list=${RANKS:-2 3 4}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[[ -f $data/manifest.json || -d $data ]] || { echo "validate: no data in $data (pstrain-data fashion-mnist ...)" >&2; exit 2; }

field() { /usr/bin/python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())[sys.argv[2]])' "$1" "$2"; }
dry() { sed -n "s/.* $2=\([0-9.e+-]*\).*/\1/p" "$1" | head -1; }

echo "| path | mode | ranks (P+T) | measured samples/s | predicted, calibrated compute | error | predicted, the run's compute | error | measured compute / push / barrier / pull ms | predicted push / sync / pull ms | load |"
echo "|---|---|---|---:|---:|---:|---:|---:|---|---|---:|"
for path in shm tcp; do
  mca=()
  [[ $path == tcp ]] && mca=(--mca btl tcp,self --mca osc pt2pt)
  for mode in $modes; do
    for ranks in $ranks_list; do
      trainers=$((ranks - 1))
      steps=$(((60000 + 64 * trainers - 1) / (64 * trainers)))
      run=$out/$path-$mode-$ranks
      if [[ ${REUSE_RUNS:-0} == 1 ]]; then
        [[ -f $run/metrics.jsonl ]] || { echo "validate: REUSE_RUNS=1 but no real run in $run" >&2; exit 2; }
        load=$(sed -n 's/^load=//p' "$run.load" 2> /dev/null || echo "?")
      else
        rm -rf "$run"
        load=$(cut -d' ' -f1 /proc/loadavg)
        echo "load=$load" > "$run.load"
        timeout 600 mpirun -np "$ranks" --oversubscribe "${mca[@]}" "$root/build/bin/pstrain" --data-dir "$data" \
          --output-dir "$run" --num-pservers 1 --mode "$mode" --passes 1 --overlap false --batch-size 64 \
          --tensorboard false > "$run.log" 2>&1 || { echo "validate: the real run failed: $run.log" >&2; exit 1; }
      fi
      metrics=$run/metrics.jsonl
      measured=$(field "$metrics" samples_per_sec)
      compute=$(field "$metrics" compute_s_per_step)
      common=(--platform "$here/platforms/localhost-$path.xml" --mode "$mode" --servers 1 --trainers "$trainers"
              --steps "$steps" --batch 64 --timeout 600 --ranks-per-node "$ranks")
      "$here/pstrain-dryrun.sh" "${common[@]}" > "$run.calibrated" 2>&1
      "$here/pstrain-dryrun.sh" "${common[@]}" --compute-ms "$(awk -v c="$compute" 'BEGIN { print c * 1000 }')" \
        > "$run.runcompute" 2>&1
      /usr/bin/python3 - "$metrics" "$run.calibrated" "$run.runcompute" "$path" "$mode" "$trainers" "$load" <<'PY'
import json, re, sys
m = json.loads(open(sys.argv[1]).readline())
def dry(path):
    text = open(path).read()
    return {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.e+-]+)", text)}
a, b = dry(sys.argv[2]), dry(sys.argv[3])
real = m["samples_per_sec"]
err = lambda p: f"{100 * (p - real) / real:+.0f}%"
ms = lambda k: 1000 * m[k]
print(f"| {sys.argv[4]} | {sys.argv[5]} | 1+{sys.argv[6]} | {real:.0f} | {a['samples_per_s']:.0f} | {err(a['samples_per_s'])} "
      f"| {b['samples_per_s']:.0f} | {err(b['samples_per_s'])} "
      f"| {ms('compute_s_per_step'):.2f} / {ms('push_s_per_step'):.2f} / {ms('barrier_s_per_step'):.2f} / {ms('pull_s_per_step'):.2f} "
      f"| {b['push_ms']:.2f} / {b['sync_ms']:.2f} / {b['pull_ms']:.2f} | {sys.argv[7]} |")
PY
    done
  done
done
