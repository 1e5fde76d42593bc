# Fault-injection helpers shared by recovery.sh (one scenario per CTest test) and tests/soak.sh (random faults in
# a loop). Sourced after tests/mpi/common.sh; every function reads the job's output folder OUT, which names the
# job (pstrain's --output-dir) among the processes of the machine.

# job_pids OUT: the pids of the job's pstrain ranks (not mpirun, not timeout), one a line; the ranks of the test
# binary pstrain-faults (a run with PSTRAIN_TEST_HOOKS) count too.
job_pids() {
  local pid
  for pid in $(pgrep -f -- "--output-dir $1( |$)" || true); do
    case "$(cat /proc/$pid/comm 2>/dev/null)" in pstrain | pstrain-faults) echo "$pid" ;; esac
  done
  return 0
}

# rank_pid OUT RANK: the pid of the job's world rank RANK (empty when it is gone).
rank_pid() {
  local pid
  for pid in $(job_pids "$1"); do
    tr '\0' '\n' < /proc/$pid/environ 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && { echo "$pid"; return 0; }
  done
  return 0
}

# signal_random_rank SIGNAL OUT: sends SIGNAL to one of the job's ranks chosen at random; prints which.
signal_random_rank() {
  local pids
  mapfile -t pids < <(job_pids "$2")
  [ "${#pids[@]}" -gt 0 ] || return 1
  local victim=${pids[$((RANDOM % ${#pids[@]}))]}
  local rank
  rank=$(tr '\0' '\n' < /proc/$victim/environ 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
  kill -"$1" "$victim" 2>/dev/null || return 1
  echo "rank ${rank:-?} (pid $victim of ${#pids[@]})"
}

# wait_for_training LOG: bounded wait until the job's first step is done (signal handlers and the watchdog are in
# place then), instead of guessing a start-up time.
wait_for_training() {
  local log=$1
  for ((i = 0; i < 1200; i++)); do grep -q "first step done" "$log" 2>/dev/null && return 0; sleep 0.05; done
  cat "$log"; fail "training never started ($log)"
}

# no_process_left OUT SECONDS: every process of the job (ranks, mpirun, timeout) gone within SECONDS; fails naming
# the survivors (and kills them, so that one failure does not poison the next run).
no_process_left() {
  local out=$1 seconds=$2 left
  for ((i = 0; i < seconds * 20; i++)); do
    left=$(pgrep -f -- "--output-dir $out( |$)" || true)
    [ -z "$left" ] && return 0
    sleep 0.05
  done
  ps -o pid,stat,args -p "$(echo $left | tr ' ' ,)" >&2 || true
  kill -9 $left 2>/dev/null || true
  fail "processes of $out left behind: $left"
}

# published_checkpoints_complete OUT: every checkpoint folder that is published (ckpt-*, renamed into place as the
# last step of a write) holds its manifest: a partial checkpoint is never visible under a name --resume takes.
published_checkpoints_complete() {
  local folder
  for folder in "$1"/checkpoints/ckpt-*; do
    [ -e "$folder" ] || continue
    [ -f "$folder/MANIFEST" ] || fail "$folder is published without its manifest"
  done
}

# each_sample_once METRICS TOTAL: every pass of a resumed async/ssp/dynamic run trained each of TOTAL samples
# exactly once (before and after the resume together).
each_sample_once() {
  python3 - "$1" "$2" <<'PY' || fail "sample accounting of $1"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
assert [r["pass"] for r in records] == [0, 1, 2], [r["pass"] for r in records]
for r in records:
    assert r["samples"] + r["samples_before_resume"] == int(sys.argv[2]), r
    assert r["samples_missing"] == 0 and r["samples_repeated"] == 0, r
print("every pass: each sample exactly once;", [(r["pass"], r["samples_before_resume"]) for r in records])
PY
}

# heartbeat OUT RANK: the rank's heartbeat line (comm/watchdog.h): "<unix time> waiting|working <what>", or nothing.
heartbeat() {
  cat "$1/node_$2/heartbeat" 2>/dev/null || true
}

# wait_for_wait OUT RANK TEXT: bounded wait until the rank's heartbeat says it waits in TEXT (the watchdog rewrites
# it every 0.5 s), so that a fault lands in a known wait instead of after a guessed delay.
wait_for_wait() {
  for ((i = 0; i < 1200; i++)); do heartbeat "$1" "$2" | grep -q " waiting $3" && return 0; sleep 0.05; done
  fail "rank $2 never waited in '$3' (heartbeat: $(heartbeat "$1" "$2"))"
}

# checkpoint_count OUT: how many checkpoints are published.
checkpoint_count() {
  local folders=("$1"/checkpoints/ckpt-*)
  [ -e "${folders[0]}" ] && echo "${#folders[@]}" || echo 0
}
