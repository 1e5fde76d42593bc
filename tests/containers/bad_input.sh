#!/usr/bin/env bash
# Bad input to the MPIJob, rehearsed with real containers (sourced by run.sh; functions only). Each case sets up
# the pods as the operator would, with one thing wrong, and asserts that the launcher ends by itself within
# BAD_TIMEOUT seconds with a non-zero exit and a message naming the problem, that no rank or daemon is left in
# the workers, and that no container of the job is left once the operator's cleanPodPolicy (Running) removed the
# workers:
#   absent-worker  the hostfile names a worker pod that does not exist (its name does not resolve, as the
#                  headless Service publishes no address for a missing pod)
#   silent-worker  a worker whose name resolves but which does not answer (its container frozen: podman pause, as
#                  a node cut off the network)
#   sshd-down      a worker pod that runs but whose sshd does not (the container runs `sleep` instead)
#   no-data        the data volume is empty (the data-preparation Job never ran)
#   frozen-worker  a worker frozen mid-run (podman pause after the first checkpoint): mpirun must end, not hang
#                  (the image's ssh ServerAlive*; without them it hung past 120 s, with them it ends in ~40 s, but
#                  Open MPI's message then is its generic "unable to reliably start one or more daemons")

BAD_TIMEOUT="${BAD_TIMEOUT:-180}"

# Waits (bounded) until no orted or pstrain process is left in the job's running worker containers: mpirun's
# daemons must end with the launcher, or they would hold the workers' CPUs until the pods are deleted.
check_no_ranks_left() {
  local deadline=$((SECONDS + 30)) name left
  while true; do
    left=""
    for name in $(podman ps --filter "name=^$JOB-worker-" --filter status=running --format '{{.Names}}'); do
      podman top "$name" comm 2> /dev/null | grep -Eq '^(orted|pstrain)$' && left+=" $name"
    done
    [ -z "$left" ] && return 0
    [ "$SECONDS" -lt "$deadline" ] || fail "orted or pstrain still running in$left 30 s after the launcher ended"
    sleep 0.5
  done
}

# The operator's cleanup (cleanPodPolicy Running deletes the worker pods once the launcher finished), then no
# container of the job may be left.
remove_job_containers() {
  [ "${#CONTAINERS[@]}" -gt 0 ] && podman rm -f -t 2 "${CONTAINERS[@]}" > /dev/null 2>&1
  CONTAINERS=()
  local left
  left=$(podman ps -a --filter "name=^$JOB-" --format '{{.Names}}')
  [ -z "$left" ] || fail "containers left after the job: $left"
}

# Runs the launcher as set up and asserts: exit non-zero within BAD_TIMEOUT, a message matching EXPECTED.
expect_launcher_failure() {  # expect_launcher_failure CASE EXPECTED_REGEX
  local case=$1 expected=$2 start=$SECONDS took
  start_launcher "bad-$case"
  # shellcheck disable=SC2034  # read by wait_launcher (dynamic scope): it fails the test past this time
  local JOB_TIMEOUT=$BAD_TIMEOUT
  wait_launcher
  took=$((SECONDS - start))
  [ "$LAUNCHER_RC" != 0 ] || { tail -20 "$LAUNCHER_LOG"; fail "$case: the launcher exited 0"; }
  grep -Eq "$expected" "$LAUNCHER_LOG" \
    || { tail -30 "$LAUNCHER_LOG"; fail "$case: no line matching /$expected/ in the launcher's log ($LAUNCHER_LOG)"; }
  log "$case: launcher exited $LAUNCHER_RC after $took s; $(grep -Ec "$expected" "$LAUNCHER_LOG") line(s) like: $(grep -Em1 "$expected" "$LAUNCHER_LOG")"
  echo "$case rc=$LAUNCHER_RC seconds=$took" >> "$WORK/bad-input.txt"
  check_no_ranks_left
  remove_job_containers
}

bad_absent_worker() {
  new_run bad-absent-worker
  local i missing
  for ((i = 0; i < WORKERS - 1; i++)); do start_worker "$i"; done
  for ((i = 0; i < WORKERS - 1; i++)); do wait_ready "$(worker_name "$i")"; done
  missing=$(worker_fqdn $((WORKERS - 1)))
  expect_launcher_failure absent-worker "Could not resolve hostname ${missing//./\\.}"
}

bad_silent_worker() {
  new_run bad-silent-worker
  start_workers
  local victim
  victim=$(worker_name $((WORKERS - 1)))
  podman pause "$victim" > /dev/null || fail "podman pause $victim"
  # ssh's ConnectTimeout (image's ssh_config) ends the wait for the banner; neither ssh nor ORTE names the host
  # there (ssh would give only its IP address, at LogLevel INFO).
  expect_launcher_failure silent-worker "Connection timed out during banner exchange"
}

bad_sshd_down() {
  new_run bad-sshd-down
  local i host
  for ((i = 0; i < WORKERS - 1; i++)); do start_worker "$i"; done
  start_worker $((WORKERS - 1)) sleep infinity
  for ((i = 0; i < WORKERS - 1; i++)); do wait_ready "$(worker_name "$i")"; done
  host=$(worker_fqdn $((WORKERS - 1)))
  expect_launcher_failure sshd-down "connect to host ${host//./\\.} port [0-9]+: Connection refused"
}

bad_frozen_worker() {
  new_run bad-frozen-worker
  run_data_prep
  start_workers
  start_launcher bad-frozen-worker
  # Freeze a worker once training runs (its first checkpoint is on the output volume): a node cut off mid-run.
  local out deadline=$((SECONDS + 120)) victim start
  out=$(output_dir)
  until ls -d "$out"/checkpoints/ckpt-* > /dev/null 2>&1; do
    [ "$(podman inspect --format '{{.State.Running}}' "$LAUNCHER")" = true ] || fail "frozen-worker: the launcher ended before its first checkpoint"
    [ "$SECONDS" -lt "$deadline" ] || fail "frozen-worker: no checkpoint within 120 s"
    sleep 0.2
  done
  victim=$(worker_name $((WORKERS - 1)))
  podman pause "$victim" > /dev/null || fail "podman pause $victim"
  start=$SECONDS
  # shellcheck disable=SC2034  # read by wait_launcher (dynamic scope)
  local JOB_TIMEOUT=$BAD_TIMEOUT
  wait_launcher
  log "frozen-worker: launcher exited $LAUNCHER_RC $((SECONDS - start)) s after $victim was frozen; last lines: $(grep -v '^\s*$' "$LAUNCHER_LOG" | tail -3 | tr '\n' '|')"
  [ "$LAUNCHER_RC" != 0 ] || fail "frozen-worker: the launcher exited 0"
  echo "frozen-worker rc=$LAUNCHER_RC seconds=$((SECONDS - start))" >> "$WORK/bad-input.txt"
  podman unpause "$victim" > /dev/null 2>&1 || true
  check_no_ranks_left
  remove_job_containers
}

bad_no_data() {
  new_run bad-no-data
  start_workers
  expect_launcher_failure no-data "/data/fashion-mnist"
}

stage_bad_input() {  # stage_bad_input [CASE...]
  install_packages
  render
  podman image exists "$IMAGE" || fail "image $IMAGE not built: run tests/containers/run.sh images first"
  rm -f "$WORK/bad-input.txt"
  local cases=("$@") case
  [ "${#cases[@]}" -gt 0 ] || cases=(absent-worker silent-worker sshd-down no-data frozen-worker)
  for case in "${cases[@]}"; do
    case "$case" in
      absent-worker) bad_absent_worker ;;
      silent-worker) bad_silent_worker ;;
      sshd-down) bad_sshd_down ;;
      no-data) bad_no_data ;;
      frozen-worker) bad_frozen_worker ;;
      *) fail "unknown bad-input case $case (absent-worker, silent-worker, sshd-down, no-data, frozen-worker)" ;;
    esac
  done
  podman network rm -f "$NETWORK" > /dev/null 2>&1 || true
  log "bad-input: PASS ($(tr '\n' ';' < "$WORK/bad-input.txt"))"
}
