#!/usr/bin/env bash
# The elastic MPIJob (k8s/overlays/elastic) rehearsed with real containers (sourced by run.sh; functions only).
# The launcher runs the overlay's exact command (pstrain-elastic on the discovery wrapper of its ConfigMap), and
# this script plays the mpi-operator: it starts and stops worker containers and rewrites /etc/mpi/discover_hosts.sh
# as the operator does (one `echo <pod>.<job>-worker.default.svc` line per Running worker, sorted by name, replaced
# as a whole, as a ConfigMap volume is). During one run:
#   1. 3 of the 4 workers run (the 4th pending): the job starts on 3 ranks;
#   2. the 4th worker starts (Running, listed): the job grows to 4;
#   3. a random worker container is killed (podman kill, as the kubelet after an OOM kill): its ranks die, mpirun
#      fails, and the driver relaunches on the 3 that answer (the killed pod is still listed: the wrapper's
#      probe leaves it out); the operator then lists it no more, restarts it (restartPolicy OnFailure) and lists
#      it again: after the --cooldown the job grows back to 4;
#   4. the Worker replicas go 4 -> 3: the operator deletes worker-3 (its ranks die with it) and lists it no more:
#      the job goes on on 3.
# The run completes (launcher exit 0), every sample of every pass is trained exactly once (the ledger in
# metrics.jsonl), elastic.jsonl lists the grows, the failures and the relaunches, and no container wrote outside its
# volumes. The time from each event to the next training step is reported.

# shellcheck disable=SC2154  # here, REPO, RUN, JOB, IMAGE... come from run.sh, which sources this file

write_operator_discovery() {  # write_operator_discovery INDEX...: the operator's discover_hosts.sh, replaced whole
  local i
  {
    echo "#!/bin/sh"
    for i in $(printf '%s\n' "$@" | sort -n); do echo "echo $(worker_fqdn "$i")"; done
  } > "$RUN/config/.discover_hosts.sh.new"
  chmod 0555 "$RUN/config/.discover_hosts.sh.new"
  mv "$RUN/config/.discover_hosts.sh.new" "$RUN/config/discover_hosts.sh"
  log "operator: discover_hosts.sh lists worker(s) $*"
}

launcher_first_steps() {  # how many jobs of the run have done their first training step
  local n
  n=$(podman logs "$LAUNCHER" 2>&1 | grep -c "first step done") || true
  echo "${n:-0}"
}

wait_first_steps() {  # wait_first_steps N WHAT: bounded wait for the N-th job's first step
  local deadline=$((SECONDS + 240))
  until [ "$(launcher_first_steps)" -ge "$1" ]; do
    [ "$(podman inspect --format '{{.State.Running}}' "$LAUNCHER")" = true ] \
      || { podman logs "$LAUNCHER" 2>&1 | tail -30; fail "the launcher ended before $2"; }
    [ "$SECONDS" -lt "$deadline" ] || { podman logs "$LAUNCHER" 2>&1 | tail -30; fail "no training step within 240 s: $2"; }
    sleep 0.5
  done
  log "job $1 trains: $2"
}

stage_elastic() {
  install_packages
  OVERLAY=elastic render
  podman image exists "$IMAGE" || fail "image $IMAGE not built: run tests/containers/run.sh images first"
  podman run --rm --network none "$IMAGE" test -x /opt/pstrain/bin/pstrain-elastic \
    || fail "image $IMAGE has no /opt/pstrain/bin/pstrain-elastic: rebuild it (tests/containers/run.sh images)"
  [ "$WORKERS" -eq 4 ] && [ "$SLOTS" -eq 1 ] || fail "the scenario expects 4 workers of 1 slot, the overlay has $WORKERS x $SLOTS"
  new_run elastic
  run_data_prep
  local out
  out=$(output_dir)
  RANDOM=${KILL_SEED:-$$}
  # 1. Three workers Running (the fourth pending), listed by the operator.
  local i
  for i in 0 1 2; do start_worker "$i"; done
  for i in 0 1 2; do wait_ready "$(worker_name "$i")"; done
  write_operator_discovery 0 1 2
  # Longer steps, so that the run outlasts the events on this machine, from a wider MLP than the overlay's
  # default (--hidden 256,128): PSTRAIN_HIDDEN, a flag the launcher forwards to every rank like any PSTRAIN_*
  # setting, leaves the overlay's command as it is and needs nothing in the image but pstrain. On the development
  # machine (3 ranks over TCP, batch 64) 512,256 took a sync step from 11 to 21 ms, what the 10 ms step delay of
  # the test suite's fault injection used to add (the image carries no fault injection).
  LAUNCHER_ENV=PSTRAIN_HIDDEN=${ELASTIC_HIDDEN:-512,256} start_launcher launcher-elastic
  wait_first_steps 1 "3 workers"
  # 2. The fourth worker starts: grow.
  start_worker 3
  wait_ready "$(worker_name 3)"
  write_operator_discovery 0 1 2 3
  wait_first_steps 2 "grown to 4 workers"
  # 3. A random worker killed; the operator's list lags; it is restarted and listed again.
  local victim=$((RANDOM % 4))
  log "podman kill $(worker_name "$victim")"
  podman kill "$(worker_name "$victim")" > /dev/null || fail "podman kill $(worker_name "$victim")"
  wait_first_steps 3 "relaunched on the 3 workers left after $(worker_name "$victim") was killed"
  write_operator_discovery $(printf '%s\n' 0 1 2 3 | grep -vx "$victim")
  podman start "$(worker_name "$victim")" > /dev/null || fail "podman start $(worker_name "$victim")"
  wait_ready "$(worker_name "$victim")"
  write_operator_discovery 0 1 2 3
  wait_first_steps 4 "grown back to 4 workers once $(worker_name "$victim") was back (after --cooldown if it had 2 strikes)"
  # 4. Worker replicas 4 -> 3: the operator deletes worker-3 and lists it no more.
  write_operator_discovery 0 1 2
  podman stop -t 2 "$(worker_name 3)" > /dev/null || fail "podman stop $(worker_name 3)"
  wait_first_steps 5 "shrunk to 3 workers"
  wait_launcher
  [ "$LAUNCHER_RC" = 0 ] || { tail -40 "$LAUNCHER_LOG"; fail "the elastic launcher exited with $LAUNCHER_RC (log: $LAUNCHER_LOG)"; }
  "$PY" - "$out" "$(launcher_arg --passes)" <<'PY' || fail "ledger or elastic.jsonl in $out"
import json, statistics, sys
out = sys.argv[1]
passes = [json.loads(line) for line in open(f"{out}/metrics.jsonl")]
assert [p["pass"] for p in passes] == list(range(int(sys.argv[2]))), [p["pass"] for p in passes]
total = passes[0]["samples"] + passes[0]["samples_before_resume"]
for p in passes:
    assert p["samples"] + p["samples_before_resume"] == total, p
    assert p["samples_missing"] == 0 and p["samples_repeated"] == 0, p
print(f"ledger: each of the {total} samples trained exactly once in each of {len(passes)} passes; final test "
      f"accuracy {passes[-1]['test_accuracy']:.4f}")
events = [json.loads(line) for line in open(f"{out}/elastic.jsonl")]
for e in events:
    print(" ", e["time"][11:19], e["event"], e["hosts"], e["world"], "lost", e["steps_lost"], "to next step",
          e["seconds_to_next_step"])
kinds = [e["event"] for e in events]
assert kinds[0] == "driver_started" and kinds[-1] == "driver_finished", kinds
launches = [e for e in events if e["event"] == "launch"]
assert [e["ranks"] for e in launches][:2] == [3, 4] and len(launches) >= 5, [e["ranks"] for e in launches]
assert launches[-1]["ranks"] == 3, launches[-1]
assert kinds.count("job_failed") >= 1 and "hosts_added" in kinds, kinds
costs = [e["seconds_to_next_step"] for e in events
         if e["event"] in ("hosts_added", "hosts_removed", "job_failed", "host_back", "slots_changed")
         and e["seconds_to_next_step"] is not None]
print(f"seconds from an event to the next training step: median {statistics.median(costs):.1f}, "
      f"max {max(costs):.1f} over {len(costs)} events")
PY
  check_no_writes "${CONTAINERS[@]}"
  podman rm -f -t 2 "${CONTAINERS[@]}" > /dev/null 2>&1 || true
  CONTAINERS=()
  log "elastic: PASS"
}
