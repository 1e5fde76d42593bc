#!/usr/bin/env bash
# The elastic driver through `pstrain-launch --elastic`, on localhost. CTest passes BIN_DIR, REPO, DATA_DIR and
# WORK_ROOT. One case per call: elastic_test.sh CASE [MODE] [PATH]
#   churn      the discovery script is a file the test rewrites: localhost:3, then 4 (grow), a rank SIGKILLed,
#              then 3 again (shrink). The run completes; every sample of every pass is trained exactly once (the
#              ledger in metrics.jsonl); elastic.jsonl lists every event with its world, the checkpoint resumed
#              from and the seconds to the next training step; nothing is left running. MODE: sync (default), or
#              async with dynamic dispatch; PATH: shm (default, Open MPI's one-node path) or tcp (the driver's
#              --tcp: btl tcp and osc pt2pt, the cross-node path).
#   signal     SIGTERM to the driver (scancel, a pod's termination): the job writes a checkpoint and stops, the
#              driver exits 0 with nothing left running; the same command again finishes the run, ledger exact.
#   driver_killed
#              SIGKILL to the driver itself (the OOM killer, kill -9) while the job prints nothing (no progress
#              lines, long steps: a write to the dead driver's pipe would end mpirun by SIGPIPE): mpirun gets
#              SIGTERM (PR_SET_PDEATHSIG) and ends its ranks, nothing is left running; the same command again
#              finishes the run, ledger exact.
#   launcher_flags  pstrain-launch's --output-root/--run-name with --elastic: the run's outputs land in DIR/NAME;
#              -np, --hostfile, --dry-run, --oversubscribe and both ways of naming the folder refused, each saying why
#   bad_input  --min-np above --max-np, --resume given, a discovery script that is missing, not
#              executable, fails, hangs, prints garbage, or never lists enough slots: one message naming the
#              problem, the documented exit code, within seconds, nothing left running.
source "$(dirname "$0")/../mpi/common.sh"
source "$(dirname "$0")/../checkpoint/fault_lib.sh"
: "${REPO:?REPO must name the checkout}"
case_name=$1 mode=${2:-sync} path=${3:-shm}
work=$(new_work_dir "elastic_${case_name}_${mode}_${path}")
launcher=$REPO/mpi_launch/pstrain-launch
# The runs that set PSTRAIN_TEST_HOOKS (steps slowed so that the churn happens mid-run) start the test binary
# pstrain-faults instead (pstrain refuses the variable).
export PSTRAIN_BIN=$BIN_DIR/pstrain
total_samples=3840

discovery=$work/discover.sh
printf '#!/bin/sh\ncat %s/hosts\n' "$work" > "$discovery"
chmod +x "$discovery"
set_hosts() {  # set_hosts LINE: rewritten whole (write, then rename), as a scheduler would
  echo "$1" > "$work/hosts.tmp"
  mv "$work/hosts.tmp" "$work/hosts"
}
# first_steps LOG: how many jobs have done their first training step.
first_steps() { local n; n=$(grep -c "first step done" "$1" 2> /dev/null) || true; echo "${n:-0}"; }
wait_for_first_steps() {  # wait_for_first_steps LOG N: bounded wait for the N-th job's first step
  for ((i = 0; i < 1800; i++)); do [ "$(first_steps "$1")" -ge "$2" ] && return 0; sleep 0.1; done
  tail -40 "$1"; fail "job $2 never started training"
}

churn() {
  local out=$work/run log=$work/run.log flags=()
  [ "$mode" = async ] && flags=(--mode async --dispatch dynamic --chunk-size 128)
  local mpi_path=()
  [ "$path" = tcp ] && mpi_path=(--tcp)
  set_hosts localhost:3
  PSTRAIN_BIN=$BIN_DIR/pstrain-faults PSTRAIN_TEST_HOOKS=step-delay-ms=25 timeout -k 5 280 \
    "$launcher" --elastic --min-np 2 --max-np 4 --host-discovery-script "$discovery" --discovery-interval 0.5 \
    --mca btl_tcp_if_include lo "${mpi_path[@]}" -- \
    --data-dir "$DATA_DIR" --output-dir "$out" --passes 4 --batch-size 32 --hidden 32 "${flags[@]}" > "$log" 2>&1 &
  local driver=$!
  trap 'kill "$driver" 2> /dev/null || true' EXIT
  wait_for_first_steps "$log" 1
  sleep 1
  echo "grow: localhost:3 -> localhost:4"
  set_hosts localhost:4
  wait_for_first_steps "$log" 2
  sleep 1
  echo "kill: $(signal_random_rank KILL "$out")"
  wait_for_first_steps "$log" 3
  sleep 1
  echo "shrink: localhost:4 -> localhost:3"
  set_hosts localhost:3
  local code=0
  wait "$driver" || code=$?
  trap - EXIT
  grep -v '^\[rank' "$log" || true
  [ "$code" -eq 0 ] || fail "the elastic run ended with exit $code"
  [ -f "$out/pass-00003/done" ] || fail "the run did not complete its 4 passes"
  no_process_left "$out" 5
  python3 - "$out" "$total_samples" <<'PY' || fail "ledger or elastic.jsonl of $out"
import json, sys
out, total = sys.argv[1], int(sys.argv[2])
passes = [json.loads(line) for line in open(f"{out}/metrics.jsonl")]
assert [p["pass"] for p in passes] == [0, 1, 2, 3], [p["pass"] for p in passes]
for p in passes:
    assert p["samples"] + p["samples_before_resume"] == total, p
    assert p["samples_missing"] == 0 and p["samples_repeated"] == 0, p
print("ledger: every pass trained each of", total, "samples exactly once;",
      [(p["pass"], p["samples_before_resume"], p["trainers"]) for p in passes])
events = [json.loads(line) for line in open(f"{out}/elastic.jsonl")]
for e in events:
    print(" ", e["time"][11:23], e["event"], e["hosts"], e["world"], e["layout"], "resumed", e["resumed_global_step"],
          "lost", e["steps_lost"], "to next step", e["seconds_to_next_step"])
kinds = [e["event"] for e in events]
want = ["driver_started", "launch", "slots_changed", "launch", "job_failed", "launch", "slots_changed", "launch",
        "driver_finished"]
assert kinds == want, kinds
grow, failed, shrink = events[2], events[4], events[6]
assert grow["hosts"] == ["localhost:3->4"] and grow["ranks"] == 4 and grow["layout"] == {"pservers": 2, "trainers": 2}, grow
assert shrink["hosts"] == ["localhost:4->3"] and shrink["ranks"] == 3 and shrink["layout"] == {"pservers": 1, "trainers": 2}, shrink
assert failed["ranks"] == 4 and failed["restarts"] == 1 and "signal 9" in failed["detail"], failed
for e in (grow, failed, shrink):
    assert e["resumed_from"] and "/checkpoints/ckpt-" in e["resumed_from"], e
    assert e["seconds_to_next_step"] is not None and 0 < e["seconds_to_next_step"] < 120, e
for e in (grow, shrink):  # a planned change checkpoints where it stops: nothing lost
    assert e["steps_lost"] == 0, e
launches = [e for e in events if e["event"] == "launch"]
assert [e["launch"] for e in launches] == [1, 2, 3, 4], launches
assert all(e["seconds_to_next_step"] > 0 for e in launches), launches
print("elastic.jsonl: every event listed")
PY
  echo "PASS: elastic churn ($mode, $path): grow, kill, shrink; ledger exact"
}

check_ledger() {  # check_ledger OUT: every pass trained each sample exactly once
  python3 - "$1" "$total_samples" <<'PY' || fail "ledger of $1"
import json, sys
passes = [json.loads(line) for line in open(f"{sys.argv[1]}/metrics.jsonl")]
assert [p["pass"] for p in passes] == [0, 1, 2, 3], [p["pass"] for p in passes]
for p in passes:
    assert p["samples"] + p["samples_before_resume"] == int(sys.argv[2]), p
    assert p["samples_missing"] == 0 and p["samples_repeated"] == 0, p
print("ledger: every pass trained each sample exactly once")
PY
}

signal_driver() {
  local out=$work/run log=$work/run.log
  local command=("$launcher" --elastic --min-np 2 --max-np 4 --host-discovery-script "$discovery"
                 --discovery-interval 0.5 --mca btl_tcp_if_include lo --
                 --data-dir "$DATA_DIR" --output-dir "$out" --passes 4 --batch-size 32 --hidden 32)
  set_hosts localhost:3
  PSTRAIN_BIN=$BIN_DIR/pstrain-faults PSTRAIN_TEST_HOOKS=step-delay-ms=25 timeout -k 5 120 "${command[@]}" > "$log" 2>&1 &
  local driver=$!
  trap 'kill "$driver" 2> /dev/null || true' EXIT
  wait_for_first_steps "$log" 1
  sleep 1
  local start code=0
  start=$(date +%s)
  kill -TERM "$driver"  # timeout hands it to the driver
  wait "$driver" || code=$?
  trap - EXIT
  grep -v '^\[rank' "$log" || true
  [ "$code" -eq 0 ] || fail "SIGTERM to the driver: exit $code, expected 0 after the job's checkpoint"
  [ $(($(date +%s) - start)) -le 30 ] || fail "took more than 30 s to stop"
  grep -q "stopped on a signal after the job wrote a checkpoint" "$log" || fail "no message about the stop"
  [ -f "$out/pass-00003/done" ] && fail "the run finished before the signal: nothing was tested"
  ls -d "$out"/checkpoints/ckpt-* > /dev/null || fail "no checkpoint written on the signal"
  no_process_left "$out" 5
  grep -q '"event":"driver_signalled"' "$out/elastic.jsonl" || fail "elastic.jsonl lacks the signal"
  timeout -k 5 200 "${command[@]}" > "$work/again.log" 2>&1 || { tail -30 "$work/again.log"; fail "the rerun"; }
  [ -f "$out/pass-00003/done" ] || fail "the rerun did not finish the run"
  grep -q "resuming from" "$work/again.log" || fail "the rerun did not resume"
  check_ledger "$out"
  no_process_left "$out" 5
  echo "PASS: SIGTERM to the driver: checkpoint, exit 0, nothing left; the rerun finished, ledger exact"
}

driver_killed() {
  local out=$work/run log=$work/run.log
  local command=("$launcher" --elastic --min-np 2 --max-np 4 --host-discovery-script "$discovery"
                 --discovery-interval 0.5 --mca btl_tcp_if_include lo --
                 --data-dir "$DATA_DIR" --output-dir "$out" --passes 2 --batch-size 32 --hidden 32
                 --progress-every-s 0)
  set_hosts localhost:3
  PSTRAIN_BIN=$BIN_DIR/pstrain-faults PSTRAIN_TEST_HOOKS=step-delay-ms=400 "${command[@]}" > "$log" 2>&1 &
  local driver=$!
  trap 'kill "$driver" 2> /dev/null || true' EXIT
  wait_for_first_steps "$log" 1
  [ "$(cat /proc/$driver/comm)" = pstrain-elastic ] || fail "pid $driver is not the driver"
  kill -KILL "$driver"
  wait "$driver" 2> /dev/null || true
  trap - EXIT
  no_process_left "$out" 10
  echo "ok: nothing of the job left after the driver was SIGKILLed"
  PSTRAIN_BIN=$BIN_DIR/pstrain-faults PSTRAIN_TEST_HOOKS=step-delay-ms=25 timeout -k 5 200 "${command[@]}" > "$work/again.log" 2>&1 \
    || { tail -30 "$work/again.log"; fail "the rerun"; }
  [ -f "$out/pass-00001/done" ] || fail "the rerun did not finish the run"
  python3 - "$out" "$total_samples" <<'PY' || fail "ledger of $out"
import json, sys
passes = [json.loads(line) for line in open(f"{sys.argv[1]}/metrics.jsonl")]
assert [p["pass"] for p in passes] == [0, 1], [p["pass"] for p in passes]
for p in passes:
    assert p["samples"] + p["samples_before_resume"] == int(sys.argv[2]), p
    assert p["samples_missing"] == 0 and p["samples_repeated"] == 0, p
PY
  echo "PASS: a SIGKILLed driver leaves nothing running; the rerun finished, ledger exact"
}

# expect_end CODE WANT SECONDS ARGS...: the launcher ends with CODE within SECONDS, saying WANT once (as
# pstrain-elastic, or with SAYS=pstrain-launch as the launcher itself).
expect_end() {
  local want_code=$1 want=$2 seconds=$3 code=0 start says=${SAYS:-pstrain-elastic}
  shift 3
  start=$(date +%s)
  timeout -k 5 60 "$launcher" --elastic "$@" > "$work/out.log" 2> "$work/err.log" || code=$?
  local took=$(($(date +%s) - start))
  [ "$code" -eq "$want_code" ] || { cat "$work/err.log"; fail "exit $code, expected $want_code ($want)"; }
  [ "$(grep -c "$says: error:" "$work/err.log")" -eq 1 ] || { cat "$work/err.log"; fail "not one message"; }
  grep -qF -- "$want" "$work/err.log" || { cat "$work/err.log"; fail "no '$want' in the message"; }
  [ "$took" -le "$seconds" ] || fail "took ${took}s (at most ${seconds}s) to end on: $want"
  echo "ok: exit $code in ${took}s: $(grep "$says: error:" "$work/err.log")"
}

# The launcher's own options with --elastic: --output-root/--run-name place the run (every relaunch resumes
# there); the options that do not apply to an elastic job are refused, each with its reason, before anything runs.
launcher_flags() {
  local root=$work/root common=(--host-discovery-script "$discovery" --discovery-interval 0.2)
  local train=(--data-dir "$DATA_DIR" --passes 1 --batch-size 32 --hidden 32)
  set_hosts localhost:2
  (cd "$work" && timeout -k 5 120 "$launcher" --elastic --min-np 2 --max-np 2 "${common[@]}" --output-root "$root" \
    --run-name first -- "${train[@]}" > "$work/first.log" 2>&1) || { cat "$work/first.log"; fail "the elastic run failed"; }
  [ -f "$root/first/pass-00000/done" ] && [ -s "$root/first/elastic.jsonl" ] && [ -s "$root/first/metrics.jsonl" ] \
    || { ls -R "$work" | head -30; fail "the run's outputs are not in --output-root/--run-name ($root/first)"; }
  [ ! -e "$work/runs" ] || fail "the run also wrote to ./runs"
  no_process_left "$root/first" 5
  SAYS=pstrain-launch expect_end 2 "give --min-np A --max-np B instead of -np" 2 -np 2 "${common[@]}" -- "${train[@]}"
  SAYS=pstrain-launch expect_end 2 "--elastic discovers its hosts" 2 --hostfile "$work/hosts" --min-np 1 --max-np 2 \
    -- "${train[@]}"
  SAYS=pstrain-launch expect_end 2 "there is no one line to print" 2 --dry-run --min-np 1 --max-np 2 "${common[@]}" \
    -- "${train[@]}"
  SAYS=pstrain-launch expect_end 2 "instead of --oversubscribe" 2 --oversubscribe --min-np 1 --max-np 2 \
    "${common[@]}" -- "${train[@]}"
  SAYS=pstrain-launch expect_end 2 "not both" 2 --min-np 1 --max-np 2 "${common[@]}" --run-name x -- "${train[@]}" \
    --output-dir "$work/other"
  [ ! -e "$work/other" ] && [ ! -e "$root/x" ] || fail "a refused launch left a folder"
  echo "PASS: pstrain-launch --elastic places the run with --output-root/--run-name and refuses what does not apply"
}

bad_input() {
  local out=$work/out common=(--host-discovery-script "$discovery" --discovery-interval 0.2)
  local train=(--data-dir "$DATA_DIR" --output-dir "$out" --passes 1 --hidden 32)
  set_hosts localhost:2
  expect_end 2 "--min-np 4 is above --max-np 2" 5 --min-np 4 --max-np 2 "${common[@]}" -- "${train[@]}"
  expect_end 2 "do not pass --resume" 5 --min-np 1 --max-np 2 "${common[@]}" -- "${train[@]}" --resume auto
  expect_end 2 "'$work/absent.sh' does not exist" 5 --min-np 1 --max-np 2 --host-discovery-script "$work/absent.sh" \
    -- "${train[@]}"
  printf '#!/bin/sh\necho localhost:2\n' > "$work/plain.sh"
  expect_end 2 "is not executable" 5 --min-np 1 --max-np 2 --host-discovery-script "$work/plain.sh" -- "${train[@]}"
  printf '#!/bin/sh\necho "cannot reach the scheduler" >&2\nexit 3\n' > "$work/fails.sh"
  printf '#!/bin/sh\nexec sleep 3017\n' > "$work/hangs.sh"
  printf '#!/bin/sh\necho "<html>502 Bad Gateway</html>"\n' > "$work/garbage.sh"
  chmod +x "$work"/{fails,hangs,garbage}.sh
  expect_end 9 "fails.sh' failed (exit 3)" 5 --min-np 1 --max-np 2 --host-discovery-script "$work/fails.sh" \
    -- "${train[@]}"
  expect_end 9 "did not finish within 1 s (--discovery-timeout)" 6 --min-np 1 --max-np 2 \
    --host-discovery-script "$work/hangs.sh" --discovery-timeout 1 -- "${train[@]}"
  pgrep -f "sleep 3017" > /dev/null && { pkill -f "sleep 3017"; fail "the hanging discovery script was left running"; }
  expect_end 9 "bad line 1 '<html>502 Bad Gateway</html>'" 5 --min-np 1 --max-np 2 \
    --host-discovery-script "$work/garbage.sh" -- "${train[@]}"
  expect_end 8 "only 2 usable slot(s) (localhost:2) where 4 are needed (--min-np 4)" 8 --min-np 4 --max-np 8 \
    "${common[@]}" --elastic-timeout 2 -- "${train[@]}"
  expect_end 2 "--num-pservers 2 needs at least 3 ranks" 5 --min-np 2 --max-np 4 "${common[@]}" -- "${train[@]}" \
    --num-pservers 2
  no_process_left "$out" 2
  # The job's own verdict (here a bad pstrain flag) ends the driver with pstrain's code, not a relaunch loop.
  expect_end 2 "pstrain ended with exit 2" 60 --min-np 2 --max-np 2 "${common[@]}" -- "${train[@]}" --batch-size 0
  [ "$(grep -c '"event":"launch"' "$out/elastic.jsonl")" -eq 1 ] || fail "the bad pstrain flag was relaunched"
  no_process_left "$out" 5
  echo "PASS: elastic bad input"
}

case "$case_name" in
  churn) churn ;;
  signal) signal_driver ;;
  driver_killed) driver_killed ;;
  bad_input) bad_input ;;
  launcher_flags) launcher_flags ;;
  *) fail "unknown case $case_name" ;;
esac
