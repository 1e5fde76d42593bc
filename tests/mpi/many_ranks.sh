#!/usr/bin/env bash
# Many ranks on one machine, oversubscribed: every mode (sync, async and SSP with static and dynamic dispatch,
# all-reduce) trains one pass with every sample trained exactly once (the sample ledger in metrics.jsonl), and
# the peak resident memory of every rank is reported.
#   many_ranks.sh NP PATH SERVERS SECONDS [RUNS]
# PATH: shm (Open MPI's defaults: on this machine osc/rdma over shared memory, whenever the kernel lets
# processes copy from each other), rdma (osc/rdma asked for: skipped, exit 77, where it cannot open a window) or
# tcp (btl tcp + osc/pt2pt, the cross-node path). SECONDS: the most one run may take (mpirun's timeout), far
# above what it takes. RUNS: MODE:DISPATCH words (default: all seven); sync:nodes is sync with node aggregation
# (--node-aggregation on) on nodes of 4 ranks faked by the test hook ranks-per-node (one machine here).
# Async with dynamic dispatch at 32 ranks (4 servers + 28 trainers) never applied a push before the control
# words stopped being locked (issue 31): the servers spun in MPI_Win_lock under osc/rdma until the watchdog
# ended the job. At 12 ranks (2 servers + 10 trainers) the same pass, here ~1 s, took 94 s (a trainer now and
# then got through): 60 s per run fails that.
source "$(dirname "$0")/common.sh"
np=$1 path=$2 servers=$3 seconds=$4
runs=${5:-"sync:static sync:nodes async:static async:dynamic ssp:static ssp:dynamic allreduce:static"}
work=$(new_work_dir "many_ranks_np${np}_${path}")
mpi_path=$path
mca=()
if [ "$path" = rdma ]; then mpi_path=shm mca=(--mca osc rdma); fi
# One shard per rank, so that all-reduce (every rank a trainer) has one each; 100 samples a shard.
samples=$((np * 100)) chunk=64
"$BIN_DIR/pstrain-data" fashion-mnist --input "$FASHION_MNIST" --output "$work/data" --split-count "$np" \
  --limit "$samples" --test-limit 500 > "$work/data.log" 2>&1 || { cat "$work/data.log"; fail "pstrain-data"; }
for run in $runs; do
  mode=${run%%:*} dispatch=${run##*:} variant=()
  if [ "$dispatch" = nodes ]; then
    dispatch=static variant=(--node-aggregation on)
    export PSTRAIN_TEST_HOOKS=ranks-per-node=4 program=pstrain-faults  # the test binary injects the fake nodes
  else
    unset PSTRAIN_TEST_HOOKS
    program=pstrain
  fi
  layout=(--num-pservers "$servers")
  if [ "$mode" = allreduce ]; then layout=(); fi
  out="$work/${run/:/-}"
  start=$(date +%s%N)
  if ! run_mpi "$np" "$mpi_path" "$seconds" "${mca[@]}" "$BIN_DIR/$program" --data-dir "$work/data" --output-dir "$out" \
    --mode "$mode" "${layout[@]}" "${variant[@]}" --dispatch "$dispatch" --chunk-size "$chunk" --hidden 32 --batch-size 16 \
    --passes 1 --timeout-seconds 60 > "$out.log" 2>&1; then
    if [ "$path" = rdma ] && grep -q 'MPI_Win_allocate.*MPI_ERR_WIN' "$out.log"; then
      echo "SKIP: osc/rdma cannot open a window here"
      exit 77
    fi
    grep -vE 'CPU BLAS|local rank' "$out.log" | tail -n 30
    fail "$np ranks over $path, --mode $mode --dispatch $dispatch"
  fi
  python3 - "$out" "$mode" "$dispatch" "$samples" "$chunk" "$start" <<'PY' || fail "$mode $dispatch accounting"
import glob, json, math, re, sys, time
out, mode, dispatch, samples, chunk, start = sys.argv[1:]
seconds = (time.time_ns() - int(start)) / 1e9
samples, chunk = int(samples), int(chunk)
records = [json.loads(line) for line in open(out + "/metrics.jsonl")]
assert len(records) == 1, records
r = records[0]
assert r["mode"] == mode and r["dispatch"] == dispatch, r
assert r["samples"] == samples and r["samples_missing"] == 0 and r["samples_repeated"] == 0, r
if dispatch == "dynamic":
    assert sum(r["chunks_per_trainer"]) == math.ceil(samples / chunk), r["chunks_per_trainer"]
peaks = {"server": [], "trainer": []}
for log in glob.glob(out + "/node_*/*.log"):
    for line in open(log):
        found = re.search(r"\[rank \d+ (server|trainer) \d+\] peak resident memory of this rank: (\d+) MiB", line)
        if found:
            peaks[found.group(1)].append(int(found.group(2)))
assert len(peaks["server"]) + len(peaks["trainer"]) == r["trainers"] + r["pservers"], peaks
described = ", ".join(f"{len(v)} {role}s {min(v)}-{max(v)} MiB (mean {sum(v) / len(v):.0f})"
                      for role, v in peaks.items() if v)
print(f"{mode:9} {dispatch:7}: {r['trainers']} trainers, {samples} samples once each, pass {r['pass_seconds']:.2f} s "
      f"(run {seconds:.1f} s); peak resident memory: {described}")
PY
  if [ ${#variant[@]} -gt 0 ]; then  # the trainers did push by node: the lead trainer names the groups
    groups=$(grep -ho "[0-9]* push groups for [0-9]* trainers" "$out.log" "$out"/node_*/*.log 2>/dev/null | head -n 1)
    [ -n "$groups" ] || fail "$run: no push groups in the logs, the trainers did not aggregate by node"
    echo "          $run: $groups"
  fi
done
echo "PASS: $np ranks over $path: every sample trained once in every mode"
