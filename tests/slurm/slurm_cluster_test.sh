#!/usr/bin/env bash
# Runs the sbatch scripts of mpi_launch/slurm on a real one-node Slurm cluster started just for this test:
# munged, slurmctld and slurmd with every file (key, config, state, spool, logs, pid files, socket) in a private
# temp folder, on free ports, torn down on every exit. CTest passes BIN_DIR, REPO and WORK_ROOT.
# Exit 77 (skipped) when not root: the daemons and apt-get need it.
set -euo pipefail
: "${BIN_DIR:?BIN_DIR must name the bin folder of the build}" "${REPO:?REPO must name the checkout}"
: "${WORK_ROOT:?WORK_ROOT must name a scratch folder}"
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: the Slurm cluster test needs root"; exit 77; fi
for variable in $(env | grep -o '^PSTRAIN_[A-Z_]*' || true); do unset "$variable"; done
unset SLURM_JOB_ID SLURM_CONF SLURM_ARRAY_TASK_ID SLURM_ARRAY_JOB_ID

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
started=$SECONDS
slurm_dir=$REPO/mpi_launch/slurm
export PATH=$PATH:/usr/sbin:/sbin   # munged, slurmctld, slurmd

# --- packages ---------------------------------------------------------------------------------------------------
if ! command -v munged >/dev/null || ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
   ! command -v sbatch >/dev/null; then
  echo "installing munge slurmctld slurmd slurm-client"
  export DEBIAN_FRONTEND=noninteractive
  # Another apt-get may hold the locks for a while: wait for them, and retry the index update.
  for try in 1 2 3; do apt-get -o DPkg::Lock::Timeout=120 update -qq && break; [ "$try" -lt 3 ] && sleep 10; done
  apt-get -o DPkg::Lock::Timeout=120 install -y -qq --no-install-recommends munge slurmctld slurmd slurm-client \
    >/dev/null || fail "could not install munge slurmctld slurmd slurm-client"
fi

# --- private cluster, always torn down ---------------------------------------------------------------------------
tmp=$(mktemp -d /tmp/pstrain-slurm.XXXXXX)
chmod 755 "$tmp"   # munged wants its socket folder searchable by all
work=$WORK_ROOT/slurm
rm -rf "$work"
mkdir -p "$work"
munged_pid="" slurmctld_pid="" slurmd_pid="" ok=0
export SLURM_CONF=$tmp/etc/slurm.conf

stop_pid() {  # stop_pid PID: TERM, up to 10 s, then KILL
  local pid=$1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
our_stepds() {  # slurmstepd processes of this cluster: their environment names our private config
  local pid
  for pid in $(pgrep -x slurmstepd 2>/dev/null || true); do
    if { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$SLURM_CONF"; then echo "$pid"; fi
  done
}
teardown() {
  local rc=$? pid
  trap - EXIT INT TERM
  if [ -n "$slurmctld_pid" ] && kill -0 "$slurmctld_pid" 2>/dev/null; then
    scancel --quiet --user=root 2>/dev/null || true
    for _ in $(seq 25); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
  fi
  if [ "$ok" -ne 1 ] || [ -n "${SLURM_TEST_VERBOSE:-}" ]; then   # SLURM_TEST_VERBOSE=1: logs even on success
    for log in "$tmp"/log/* "$tmp"/jobs/*; do
      [ -f "$log" ] || continue
      echo "----- $log (tail)" >&2
      tail -n 30 "$log" >&2
    done
  fi
  # Job steps of this cluster finish their cleanup (up to 10 s), then whatever is left is killed.
  for _ in $(seq 50); do [ -z "$(our_stepds)" ] && break; sleep 0.2; done
  for pid in $(our_stepds); do kill -KILL "$pid" 2>/dev/null || true; done
  stop_pid "$slurmd_pid"
  stop_pid "$slurmctld_pid"
  stop_pid "$munged_pid"
  rm -rf "$tmp"
  echo "teardown done ($((SECONDS - started)) s in all)"
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT TERM

mkdir -p "$tmp"/{etc,munge,state,spool,tmpfs,log,jobs}
head -c 1024 /dev/urandom >"$tmp/munge/munge.key"
chmod 400 "$tmp/munge/munge.key"
munged -F --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.socket" --pid-file="$tmp/munge/munged.pid" \
  --seed-file="$tmp/munge/munged.seed" --log-file="$tmp/log/munged.log" >"$tmp/log/munged.log" 2>&1 &
munged_pid=$!

read -r ctld_port slurmd_port < <(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("", 0))
print(*(x.getsockname()[1] for x in s))')
host=$(hostname -s)
node_line=$(slurmd -C | head -n1)
node_name=$(sed -n 's/^NodeName=\([^ ]*\).*/\1/p' <<<"$node_line")
real_cpus=$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<<"$node_line")
memory=$(sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p' <<<"$node_line")
cpus=$((real_cpus > 4 ? real_cpus : 4))   # more tasks than cores: declared CPUs + config_overrides
cat >"$SLURM_CONF" <<CONF
ClusterName=pstraintest
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.socket
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
TmpFS=$tmp/tmpfs
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SlurmdParameters=config_overrides
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=600
InactiveLimit=0
KillWait=5
NodeName=$node_name CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=pstraintest Nodes=$node_name Default=YES MaxTime=INFINITE State=UP
CONF

for _ in $(seq 50); do [ -S "$tmp/munge/munge.socket" ] && break; sleep 0.1; done
[ -S "$tmp/munge/munge.socket" ] || fail "munged did not start"
slurmctld -D -c -f "$SLURM_CONF" >>"$tmp/log/slurmctld.stderr" 2>&1 &
slurmctld_pid=$!
for _ in $(seq 50); do scontrol ping >/dev/null 2>&1 && break; sleep 0.2; done
scontrol ping | grep -q UP || fail "slurmctld did not come up"
slurmd -D -f "$SLURM_CONF" >>"$tmp/log/slurmd.stderr" 2>&1 &
slurmd_pid=$!
state=""
for _ in $(seq 150); do
  state=$(sinfo -h -N -n "$node_name" -o '%T' 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || fail "node $node_name is '$state', not idle, 30 s after slurmd started"
pass "cluster pstraintest up: $node_name with $cpus CPUs idle, ports $ctld_port/$slurmd_port ($((SECONDS - started)) s)"

# --- outside Slurm the scripts refuse to run ----------------------------------------------------------------------
for script in "$slurm_dir"/*.sbatch; do
  rc=0
  env -u SLURM_JOB_ID bash "$script" >"$tmp/outside.out" 2>&1 || rc=$?
  [ "$rc" -eq 1 ] || fail "$(basename "$script") outside Slurm exited $rc, expected 1"
  grep -q "must run inside a Slurm job" "$tmp/outside.out" ||
    fail "$(basename "$script") outside Slurm did not explain why: $(cat "$tmp/outside.out")"
done
pass "every script refuses to run outside Slurm"

# --- jobs ---------------------------------------------------------------------------------------------------------
data=$work/data
"$BIN_DIR/pstrain-data" fashion-mnist --input /usr/share/datasets/fashion-mnist --output "$data" \
  --split-count 4 --limit 2000 --test-limit 1000 >/dev/null
export PSTRAIN_BIN=$BIN_DIR/pstrain DATA_DIR=$data PASSES=1 OUTPUT_ROOT=$work/runs
flags=(--hidden 32 --batch-size 50)
submit() { sbatch --parsable --chdir="$REPO" --output="$tmp/jobs/%x-%A_%a.out" --time=5 "$@" | cut -d';' -f1; }

srun_job=$(submit --nodes=1 --ntasks=3 "$slurm_dir/pstrain-srun.sbatch" "${flags[@]}")
mpirun_job=$(BIND_TO=none submit --nodes=1 --ntasks=3 "$slurm_dir/pstrain-mpirun.sbatch" "${flags[@]}")
printf '%s\n' "--mode sync --lr 0.05" "--mode async --lr 0.1" >"$work/sweep.txt"
sweep_job=$(SWEEP_FILE=$work/sweep.txt submit --array=0-1 --nodes=1 --ntasks=2 \
  "$slurm_dir/pstrain-sweep-array.sbatch" "${flags[@]}")
# A longer job to check that the batch shell forwards Slurm's warning signal (USR1) to the job step.
signal_job=$(PASSES=200 submit --open-mode=append --requeue --nodes=1 --ntasks=2 "$slurm_dir/pstrain-srun.sbatch" "${flags[@]}")
echo "submitted: srun $srun_job, mpirun $mpirun_job, sweep array $sweep_job (2 tasks), signal $signal_job"

job_field() { scontrol show job -o "$1" | grep -o "$2=[^ ]*" | cut -d= -f2; }

# Signal check: once the long job has written a pass, send USR1 to its batch shell (as --signal=B:USR1 does).
deadline=$((SECONDS + 150))
until [ -f "$work/runs/slurm-$signal_job/pass-00000/done" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "job $signal_job wrote no pass within 150 s"
  [ "$(job_field "$signal_job" JobState)" != FAILED ] || fail "job $signal_job failed before its first pass"
  sleep 0.5
done
scancel --batch --signal=USR1 "$signal_job"

# Wait for every job (array tasks included) to leave the queue.
deadline=$((SECONDS + 200))
while [ -n "$(squeue -h -j "$srun_job,$mpirun_job,$sweep_job,$signal_job" 2>/dev/null)" ]; do
  [ "$SECONDS" -lt "$deadline" ] || { squeue >&2; fail "jobs still queued or running after 200 s"; }
  sleep 1
done
pass "all jobs left the queue ($((SECONDS - started)) s)"

check_run() {  # check_run JOB_ID_AS_SHOWN FOLDER TRAINERS
  local job=$1 dir=$2 trainers=$3 state exit_code
  state=$(job_field "$job" JobState)
  exit_code=$(job_field "$job" ExitCode)
  [ "$state" = COMPLETED ] && [ "$exit_code" = 0:0 ] || fail "job $job ended $state (exit $exit_code)"
  [ -f "$dir/pass-00000/done" ] || fail "job $job: $dir/pass-00000/done is missing"
  [ -f "$dir/pass-00000/parameters.h5" ] || fail "job $job: $dir/pass-00000/parameters.h5 is missing"
  [ "$(wc -l <"$dir/metrics.jsonl")" -eq 1 ] || fail "job $job: $dir/metrics.jsonl should hold one pass"
  # Ranks came from MPI: one job of several ranks, not several single-rank jobs.
  grep -q "\"trainers\": $trainers," "$dir/metrics.jsonl" || fail "job $job: expected $trainers trainer(s)"
  pass "job $job completed, $trainers trainer(s), outputs in $dir"
}
check_run "$srun_job" "$work/runs/slurm-$srun_job" 2
check_run "$mpirun_job" "$work/runs/slurm-$mpirun_job" 2
for task in 0 1; do
  check_run "${sweep_job}_$task" "$work/runs/slurm-${sweep_job}_$task" 1
  [ "$(cat "$work/runs/slurm-${sweep_job}_$task/sweep-flags.txt")" = "$(sed -n "$((task + 1))p" "$work/sweep.txt")" ] ||
    fail "sweep task $task did not run line $task"
done
grep -qx "mode = sync" "$work/runs/slurm-${sweep_job}_0/config.ini" || fail "sweep task 0 did not use --mode sync"
grep -qx "mode = async" "$work/runs/slurm-${sweep_job}_1/config.ini" || fail "sweep task 1 did not use --mode async"
pass "sweep tasks ran their own lines"

grep -q "received SIGUSR1, forwarding it to the job step" "$tmp"/jobs/*-"${signal_job}"_*.out ||
  fail "job $signal_job: the batch shell did not report forwarding USR1"
[ ! -d "$work/runs/slurm-$signal_job/pass-00199" ] || fail "job $signal_job ran to the end despite USR1"
grep -q "stopped on a signal after writing a checkpoint" "$tmp"/jobs/*-"${signal_job}"_*.out ||
  fail "job $signal_job: pstrain did not checkpoint and stop on USR1"
pass "USR1 to the batch shell was forwarded to the step (job ended $(job_field "$signal_job" JobState))"

# Requeued (as after a preemption or a node failure), the job keeps its id and output folder and resumes.
scontrol requeue "$signal_job" || fail "scontrol requeue $signal_job refused"
scontrol update jobid="$signal_job" StartTime=now 2> /dev/null || true  # a requeued job may wait for its BeginTime
deadline=$((SECONDS + 150))
until grep -q "resuming from $work/runs/slurm-$signal_job/checkpoints/ckpt-" "$tmp"/jobs/*-"${signal_job}"_*.out; do
  [ "$SECONDS" -lt "$deadline" ] || { squeue >&2; fail "requeued job $signal_job did not resume within 150 s"; }
  sleep 0.5
done
scancel "$signal_job"
deadline=$((SECONDS + 60))
while [ -n "$(squeue -h -j "$signal_job" 2>/dev/null)" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "job $signal_job still queued 60 s after scancel"
  sleep 0.5
done
pass "requeued job $signal_job resumed from its checkpoint"

# --- pstrain-elastic.sbatch: the job goes on through a killed rank and a drained node ----------------------------
# One node: a SIGKILLed rank stands for a node lost (mpirun's step fails the same way); `scontrol update
# state=drain` makes pstrain-slurm-hosts leave the node out (the job checkpoints, stops and waits for slots), and
# `state=resume` brings it back (relaunch). The job completes, every sample trained once per pass.
elastic_out() { echo "$work/runs/slurm-$elastic_job"; }
elastic_launches() { local n; n=$(grep -c '"event":"launch"' "$(elastic_out)/elastic.jsonl" 2> /dev/null) || true; echo "${n:-0}"; }
wait_elastic() {  # wait_elastic WHAT CONDITION...: bounded wait while the elastic job runs
  local what=$1 deadline=$((SECONDS + 120))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || { tail -30 "$tmp"/jobs/*-"${elastic_job}"_*.out >&2; fail "elastic job: $what within 120 s"; }
    [ -n "$(squeue -h -j "$elastic_job" 2> /dev/null)" ] || fail "elastic job $elastic_job left the queue before: $what"
    sleep 0.3
  done
}
trains() {  # trains N: the N-th job of the elastic run did its first step (the job's output may not exist yet)
  local n
  n=$(cat "$tmp"/jobs/*-"${elastic_job}"_*.out 2> /dev/null | grep -c "first step done") || true
  [ "${n:-0}" -ge "$1" ]
}
elastic_pids() { for pid in $(pgrep -f -- "--output-dir $(elastic_out)( |$)" || true); do
                   [ "$(cat /proc/$pid/comm 2> /dev/null)" = pstrain-faults ] && echo "$pid"; done; }
# The step delay makes the job last through the kill and the drain: the test binary pstrain-faults injects it.
elastic_job=$(PSTRAIN_BIN=$BIN_DIR/pstrain-faults PSTRAIN_TEST_HOOKS=step-delay-ms=60 MIN_NP=2 PASSES=4 \
  ELASTIC_ARGS="--discovery-interval 0.5 --mca btl_tcp_if_include lo" \
  submit --nodes=1 --ntasks=3 "$slurm_dir/pstrain-elastic.sbatch" "${flags[@]}")
grep -q -- "^#SBATCH --no-kill$" "$slurm_dir/pstrain-elastic.sbatch" || fail "pstrain-elastic.sbatch lacks --no-kill"
wait_elastic "first training step" trains 1
victim=$(elastic_pids | shuf -n 1)
[ -n "$victim" ] || fail "elastic job $elastic_job: no pstrain rank found"
kill -KILL "$victim"
wait_elastic "relaunch after the killed rank" trains 2
scontrol update nodename="$node_name" state=drain reason=pstrain-elastic-test
# The driver stops the job at a checkpoint and, with no usable slot left, waits (waiting_for_slots, written at once).
wait_elastic "the job stopped for the drained node" grep -q '"event":"waiting_for_slots"' "$(elastic_out)/elastic.jsonl"
launches_drained=$(elastic_launches)
scontrol update nodename="$node_name" state=resume
wait_elastic "relaunch once the node is back" trains 3
deadline=$((SECONDS + 150))
while [ -n "$(squeue -h -j "$elastic_job" 2> /dev/null)" ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "elastic job $elastic_job still queued 150 s after the node came back"
  sleep 0.5
done
state=$(job_field "$elastic_job" JobState) exit_code=$(job_field "$elastic_job" ExitCode)
[ "$state" = COMPLETED ] && [ "$exit_code" = 0:0 ] || fail "elastic job $elastic_job ended $state (exit $exit_code)"
/usr/bin/python3 - "$(elastic_out)" "$node_name" "$launches_drained" <<'PY' || fail "elastic job $elastic_job: ledger or elastic.jsonl"
import json, sys
out, node, launches_drained = sys.argv[1], sys.argv[2], int(sys.argv[3])
passes = [json.loads(line) for line in open(f"{out}/metrics.jsonl")]
assert [p["pass"] for p in passes] == [0, 1, 2, 3], [p["pass"] for p in passes]
total = passes[0]["samples"] + passes[0]["samples_before_resume"]
for p in passes:
    assert p["samples"] + p["samples_before_resume"] == total, p
    assert p["samples_missing"] == 0 and p["samples_repeated"] == 0, p
events = [json.loads(line) for line in open(f"{out}/elastic.jsonl")]
kinds = [e["event"] for e in events]
print("elastic.jsonl:", kinds)
assert kinds[0] == "driver_started" and kinds[-1] == "driver_finished", kinds
failed = next(e for e in events if e["event"] == "job_failed")
assert "signal 9" in failed["detail"], failed
removed = next(e for e in events if e["event"] == "hosts_removed")
assert removed["hosts"] and removed["hosts"][0].startswith(node), removed
launches = [e for e in events if e["event"] == "launch"]
assert len(launches) == launches_drained + 1 == 3, (len(launches), launches_drained)
assert all(e["world"].startswith(node + ":") for e in launches), [e["world"] for e in launches]
print(f"ledger exact over {len(passes)} passes of {total} samples; launches on {[e['world'] for e in launches]}")
PY
no_left=$(pgrep -f -- "--output-dir $(elastic_out)( |$)" || true)
[ -z "$no_left" ] || fail "elastic job $elastic_job left processes: $no_left"
pass "elastic job $elastic_job went on through a killed rank and a drained node, completed with an exact ledger"

ok=1
rm -rf "$work"
echo "PASS ($((SECONDS - started)) s)"
