#!/usr/bin/env bash
# Seconds from an elastic event to the next training step, for the MLP main job (the quickstart's: sync, MLP
# 784-256-128-10, batch 64, momentum, Fashion-MNIST) or the Brown NPLM recipe, and where they go.
#
# pstrain-launch --elastic on localhost, --min-np 2 --max-np 4, the discovery script a file rewritten here. CYCLES
# times: slots 3 -> 4 (grow), a random rank SIGKILLed (crash), 4 -> 3 (shrink), each SETTLE seconds of training
# after the previous job's first step; then SIGTERM to the driver. From OUTPUT/elastic.jsonl and the job's log:
#   to_next_step  event seen by the driver -> first training step of the relaunched job (elastic.jsonl)
#   stop          event -> the old job gone and the new one spawned (planned: SIGUSR1, checkpoint, exit)
#   start         spawn -> first step (mpirun, MPI_Init, then pstrain's own part:)
#   pstrain       pstrain's "first step done X s after start": data, model, checkpoint load, windows, first step
# The discovery interval adds up to one interval before the driver sees a change (not counted: 0.5 s here).
#
# RECIPE=nplm measures the same for the Brown NPLM recipe (examples/brown-nplm.ini: sync, Adam, the embedding table
# held by the servers row by row), data converted from the cached Brown corpus (mpi_launch/fetch-brown.sh).
#
#   bash benchmarks/elastic_events.sh          # CYCLES=2 SETTLE=5 RECIPE=mlp
set -euo pipefail
cd "$(dirname "$0")/.."
CYCLES=${CYCLES:-2} SETTLE=${SETTLE:-5} RECIPE=${RECIPE:-mlp}
[ -x build/bin/pstrain-elastic ] || { echo "build first: cmake --build build --target pstrain pstrain-elastic" >&2; exit 1; }
case "$RECIPE" in
  mlp)
    data=${DATA_DIR:-data/fashion-mnist}
    [ -f "$data/test.h5" ] || build/bin/pstrain-data fashion-mnist --input /usr/share/datasets/fashion-mnist --output "$data" --split-count 4
    recipe=(--model mlp --hidden 256,128 --batch-size 64 --mode sync --optimizer momentum --lr 0.05 --momentum 0.9
            --lr-schedule cosine) ;;
  nplm)
    data=${DATA_DIR:-data/brown}
    [ -f "$data/test.h5" ] || build/bin/pstrain-data brown --input "$(bash mpi_launch/fetch-brown.sh)" --output "$data" --split-count 8
    recipe=(--model nplm --embedding-dim 60 --hidden 50 --direct true --batch-size 128 --mode sync --optimizer adam
            --lr 0.002) ;;
  *) echo "RECIPE is mlp or nplm, not '$RECIPE'" >&2; exit 2 ;;
esac
export OPENBLAS_NUM_THREADS=1
work=$(mktemp -d)
[ -z "${KEEP:-}" ] || echo "work folder: $work"
trap 'kill "$driver" 2> /dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
out=$work/run log=$work/run.log
printf '#!/bin/sh\ncat %s/hosts\n' "$work" > "$work/discover.sh"
chmod +x "$work/discover.sh"
set_hosts() { echo "$1" > "$work/hosts.tmp"; mv "$work/hosts.tmp" "$work/hosts"; }
first_steps() { local n; n=$(grep -c "first step done" "$log" 2> /dev/null) || true; echo "${n:-0}"; }
wait_started() {  # wait_started N: the N-th job has done its first step, then SETTLE seconds of training
  for ((i = 0; i < 3000; i++)); do [ "$(first_steps)" -ge "$1" ] && { sleep "$SETTLE"; return 0; }; sleep 0.1; done
  tail -30 "$log"; echo "job $1 never started" >&2; exit 1
}
kill_random_rank() {
  local pids=()
  for pid in $(pgrep -f -- "--output-dir $out( |$)"); do [ "$(cat /proc/$pid/comm 2> /dev/null)" = pstrain ] && pids+=("$pid"); done
  kill -9 "${pids[$((RANDOM % ${#pids[@]}))]}"
}

set_hosts localhost:3
timeout -k 5 1200 mpi_launch/pstrain-launch --elastic --min-np 2 --max-np 4 --host-discovery-script "$work/discover.sh" \
  --discovery-interval 0.5 --mca btl_tcp_if_include lo -- --data-dir "$data" --output-dir "$out" \
  "${recipe[@]}" --passes 1000 > "$log" 2>&1 &
driver=$!
jobs_started=1
wait_started 1
for ((cycle = 0; cycle < CYCLES; cycle++)); do
  set_hosts localhost:4; wait_started $((++jobs_started))
  kill_random_rank; wait_started $((++jobs_started))
  set_hosts localhost:3; wait_started $((++jobs_started))
done
kill -TERM "$driver"
wait "$driver" || { tail -30 "$log"; echo "the driver did not stop cleanly" >&2; exit 1; }
/usr/bin/python3 - "$out/elastic.jsonl" "$log" <<'PY'
import json, re, statistics, sys
events = [json.loads(line) for line in open(sys.argv[1])]
own = [float(x) for x in re.findall(r"first step done ([0-9.]+) s after start", open(sys.argv[2]).read())]
launches = [e for e in events if e["event"] == "launch"]
rows = {}
for e in events:
    if e["event"] not in ("slots_changed", "job_failed") or e["seconds_to_next_step"] is None:
        continue
    kind = "crash" if e["event"] == "job_failed" else ("grow" if e["hosts"][0].endswith("->4") else "shrink")
    launch = next(l for l in launches if l["launch"] == e["launch"] and l["seconds_to_next_step"] is not None)
    start = launch["seconds_to_next_step"]
    pstrain = own[e["launch"] - 1]
    rows.setdefault(kind, []).append((e["seconds_to_next_step"], e["seconds_to_next_step"] - start, start,
                                      start - pstrain, pstrain, e["steps_lost"]))
fresh = own[0]
print(f"first launch (fresh): start {launches[0]['seconds_to_next_step']:.2f} s, of which pstrain {fresh:.2f} s")
print(f"{'event':7} {'n':>2} {'to_next_step':>22} {'stop':>6} {'start':>6} {'mpirun+init':>11} {'pstrain':>8} lost")
for kind in ("grow", "crash", "shrink"):
    r = rows.get(kind, [])
    if not r:
        continue
    med = lambda i: statistics.median(x[i] for x in r)
    print(f"{kind:7} {len(r):>2} median {med(0):5.2f} max {max(x[0] for x in r):5.2f} {med(1):6.2f} {med(2):6.2f}"
          f" {med(3):11.2f} {med(4):8.2f} {[x[5] for x in r]}")
print("(medians in seconds; stop = event -> relaunch spawned; start = spawn -> first step = mpirun+init + pstrain)")
PY
