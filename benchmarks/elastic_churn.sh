#!/usr/bin/env bash
# A churn run against a quiet run of the same elastic job (issue 29's bar): the MLP main job (the quickstart's: MLP
# 784-256-128-10, batch 64, momentum, cosine rate, Fashion-MNIST 60k; MODE=sync, or MODE=async with dynamic
# dispatch) for PASSES passes through `pstrain-launch --elastic` on localhost (--min-np 2 --max-np 4), twice:
#   quiet  the discovery script lists localhost:3 throughout
#   churn  every EVENT_EVERY seconds the next event of a schedule: slots 3 -> 4 (grow), a random rank SIGKILLed,
#          4 -> 3 (shrink), SIGTERM to the driver (it checkpoints and exits 0; the same command runs again at once
#          and resumes), and again from the top, until the run is done
# Printed side by side: wall time, samples/s over the whole run (passes x samples / wall time), the median of the
# per-pass samples/s, the final test accuracy; for the churn run every event with its seconds to the next training
# step and its steps lost, and their median and max. Both runs must finish with an exact ledger.
#
#   bash benchmarks/elastic_churn.sh            # PASSES=30 EVENT_EVERY=40 MODE=sync
set -euo pipefail
cd "$(dirname "$0")/.."
PASSES=${PASSES:-30} EVENT_EVERY=${EVENT_EVERY:-40} MODE=${MODE:-sync}
data=${DATA_DIR:-data/fashion-mnist}
[ -x build/bin/pstrain-elastic ] || { echo "build first: cmake --build build --target pstrain pstrain-elastic" >&2; exit 1; }
[ -f "$data/test.h5" ] || build/bin/pstrain-data fashion-mnist --input /usr/share/datasets/fashion-mnist --output "$data" --split-count 4
export OPENBLAS_NUM_THREADS=1
work=$(mktemp -d)
[ -z "${KEEP:-}" ] || echo "work folder: $work"
driver=""
trap 'if [ -n "$driver" ]; then kill "$driver" 2> /dev/null || true; fi; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
printf '#!/bin/sh\ncat %s/hosts\n' "$work" > "$work/discover.sh"
chmod +x "$work/discover.sh"
set_hosts() { echo "$1" > "$work/hosts.tmp"; mv "$work/hosts.tmp" "$work/hosts"; }
mode_flags=(--mode sync)
[ "$MODE" = async ] && mode_flags=(--mode async --dispatch dynamic --chunk-size 256)

start_driver() {  # start_driver OUT LOG: the elastic job in the background, its pid in $driver
  timeout -k 5 3600 mpi_launch/pstrain-launch --elastic --min-np 2 --max-np 4 --host-discovery-script "$work/discover.sh" \
    --discovery-interval 0.5 --mca btl_tcp_if_include lo -- --data-dir "$data" --output-dir "$1" \
    --model mlp --hidden 256,128 --batch-size 64 "${mode_flags[@]}" --optimizer momentum --lr 0.05 --momentum 0.9 \
    --lr-schedule cosine --passes "$PASSES" >> "$2" 2>&1 &
  driver=$!
}
finished() { [ -f "$1/pass-$(printf '%05d' $((PASSES - 1)))/done" ]; }
kill_random_rank() {
  local pids=() pid
  for pid in $(pgrep -f -- "--output-dir $1( |$)" || true); do
    [ "$(cat /proc/"$pid"/comm 2> /dev/null)" = pstrain ] && pids+=("$pid")
  done
  [ "${#pids[@]}" -gt 0 ] && kill -9 "${pids[$((RANDOM % ${#pids[@]}))]}" 2> /dev/null || true
}

quiet() {
  local out=$work/quiet start=$SECONDS
  set_hosts localhost:3
  start_driver "$out" "$work/quiet.log"
  wait "$driver" || { tail -30 "$work/quiet.log"; echo "the quiet run failed" >&2; exit 1; }
  driver=""
  echo "$((SECONDS - start))" > "$work/quiet.seconds"
}

churn() {
  local out=$work/churn start=$SECONDS event=0 next
  set_hosts localhost:3
  start_driver "$out" "$work/churn.log"
  next=$((SECONDS + EVENT_EVERY))
  while ! finished "$out"; do
    if ! kill -0 "$driver" 2> /dev/null; then  # ended: after SIGTERM (exit 0, run the same command again), or failed
      wait "$driver" || { tail -30 "$work/churn.log"; echo "the churn run failed" >&2; exit 1; }
      finished "$out" && break
      start_driver "$out" "$work/churn.log"
    fi
    if [ "$SECONDS" -ge "$next" ]; then
      case $((event % 4)) in
        0) set_hosts localhost:4; echo "$((SECONDS - start)) s: grow 3 -> 4" ;;
        1) kill_random_rank "$out"; echo "$((SECONDS - start)) s: a rank SIGKILLed" ;;
        2) set_hosts localhost:3; echo "$((SECONDS - start)) s: shrink 4 -> 3" ;;
        3) kill -TERM "$driver"; echo "$((SECONDS - start)) s: SIGTERM to the driver (then the same command again)" ;;
      esac
      event=$((event + 1))
      next=$((SECONDS + EVENT_EVERY))
    fi
    sleep 0.2
  done
  wait "$driver" || { tail -30 "$work/churn.log"; echo "the churn run failed at its end" >&2; exit 1; }
  driver=""
  echo "$((SECONDS - start))" > "$work/churn.seconds"
}

echo "MLP main job, $MODE, $PASSES passes; churn: an event every $EVENT_EVERY s (load: $(cut -d' ' -f1-3 /proc/loadavg))"
quiet
churn
/usr/bin/python3 - "$work" "$PASSES" <<'PY'
import json, statistics, sys
work, passes = sys.argv[1], int(sys.argv[2])
rows = {}
for name in ("quiet", "churn"):
    records = [json.loads(line) for line in open(f"{work}/{name}/metrics.jsonl")]
    assert [r["pass"] for r in records] == list(range(passes)), (name, [r["pass"] for r in records])
    total = records[0]["samples"] + records[0]["samples_before_resume"]
    for r in records:
        assert r["samples"] + r["samples_before_resume"] == total and not r["samples_missing"] \
            and not r["samples_repeated"], (name, r)
    seconds = int(open(f"{work}/{name}.seconds").read())
    rows[name] = (seconds, passes * total / seconds, statistics.median(r["samples_per_sec"] for r in records),
                  records[-1]["test_accuracy"])
print(f"{'run':6} {'wall s':>7} {'samples/s (run)':>16} {'median pass samples/s':>22} {'final test acc':>15}")
for name, (seconds, overall, median, accuracy) in rows.items():
    print(f"{name:6} {seconds:7d} {overall:16.0f} {median:22.0f} {accuracy:15.4f}")
print(f"churn/quiet samples/s over the run: {rows['churn'][1] / rows['quiet'][1]:.3f}; "
      f"accuracy difference {rows['churn'][3] - rows['quiet'][3]:+.4f} (ledger exact in both)")
events = [json.loads(line) for line in open(f"{work}/churn/elastic.jsonl")]
costs = {}
for e in events:
    if e["event"] in ("slots_changed", "job_failed") and e["seconds_to_next_step"] is not None:
        kind = "rank killed" if e["event"] == "job_failed" else (
            "grow" if e["hosts"] and e["hosts"][0].endswith("->4") else "shrink")
        costs.setdefault(kind, []).append((e["seconds_to_next_step"], e["steps_lost"]))
for index, e in enumerate(events):  # SIGTERM: from the signal to the first step of the rerun's job
    if e["event"] == "driver_signalled":
        launch = next((l for l in events[index:] if l["event"] == "launch" and l["seconds_to_next_step"] is not None
                       and l["unix_time"] > e["unix_time"]), None)
        if launch:
            costs.setdefault("SIGTERM+rerun", []).append(
                (launch["unix_time"] + launch["seconds_to_next_step"] - e["unix_time"], 0))
reruns = [e for e in events if e["event"] == "driver_started"][1:]
for kind, values in costs.items():
    times = [t for t, _ in values]
    print(f"{kind:14} n={len(values)} to next step: median {statistics.median(times):5.1f} s, max {max(times):5.1f} s;"
          f" steps lost {[lost for _, lost in values]}")
print(f"driver restarts after SIGTERM: {len(reruns)}; every event in elastic.jsonl: "
      f"{sum(1 for e in events if e['event'] not in ('launch',))} records")
PY
