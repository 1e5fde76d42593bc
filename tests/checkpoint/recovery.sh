#!/usr/bin/env bash
# Checkpoint and recovery scenarios (sync training), one per call: recovery.sh CASE NP PATH
#   kill_resume       SIGKILL a random rank at a random moment, relaunch with --resume auto: parameters
#                     bit-identical to an uninterrupted run. FAULT_TRIALS trials (default 2; 10+ for the long run).
#   kill_during_write SIGKILL a random rank while a checkpoint is being written: no partial checkpoint is ever
#                     accepted, the stray temporary folder is cleaned up, the resumed run is still exact.
#   signal            SIGUSR1 to mpirun (Slurm's --signal), or with SIGNAL=TERM SIGTERM to every rank (scancel,
#                     Kubernetes): checkpoint, clean exit 0, exact resume.
#   bad_checkpoints   flipped bit, truncated file, another model, another format version, refusing a folder
#                     with checkpoints without --resume; --resume auto falls back to the previous one.
#   elastic           checkpoint with 2 servers + 2 trainers mid-pass, resume with 1+3 and 3+1: every sample of the
#                     interrupted pass trained exactly once (samples + samples_before_resume), later passes whole.
#   disk_full         a full disk (small tmpfs): refused at the start, the folder as it was; filled during the run, a
#                     checkpoint write fails: exit 4 naming it, last good one intact.
#   async_kill_resume, async_signal  [MODE DISPATCH]
#                     the same for async/ssp with static or dynamic dispatch: checkpoints by request and
#                     quiesce; after the resume every pass trains every sample exactly once.
#   stall_sync, stall_async
#                     SIGSTOP a random rank: the watchdog ends the job within --timeout-seconds, naming that rank.
#   stall_at_exit     [np 3] sync: trainer 1 (world rank 2) is SIGSTOPped after training, before it leaves the job
#                     (the leave-delay-ms test hook holds it there): the others wait in MPI_Finalize, which the watchdog
#                     still guards, so the job ends with exit 6 naming rank 2 instead of hanging (found by the soak).
#   stall_in_meeting_after_checkpoint  [np 3]
#                     async: trainer 1 joins a checkpoint inside the end-of-pass meeting (a nested watchdog wait),
#                     then is SIGSTOPped there: the meeting is still guarded, the job ends with exit 6 naming it.
#   stop_in_meeting   [np 3; with MODEL_FILE: batch norm; MODE=ssp: the staleness gate's exchange]
#                     async: SIGUSR1 while trainer 1 waits in the end-of-pass meeting and the lead still steps:
#                     clean exit 0 (every trainer leaves the same way), then the resumed run finishes.
source "$(dirname "$0")/../mpi/common.sh"
source "$(dirname "$0")/fault_lib.sh"
case_name=$1 np=$2 path=$3 async_mode=${4:-async} dispatch=${5:-static}
work=$(new_work_dir "recovery_${case_name}_np${np}_${path}")
# Flags every run shares; PASSES, HIDDEN and EVERY (checkpoint interval) may be set per call (pstrain refuses a
# flag given twice); MODEL_FILE replaces the MLP by a model file.
# GEO_STEPS: --mode geo with that many steps alone between meetings (plain SGD on the trainers).
common_flags() {
  echo --data-dir "$DATA_DIR" --batch-size 32 --lr 0.05 --lr-schedule cosine --keep-checkpoints 0 \
    $( [ -n "${GEO_STEPS:-}" ] && echo --mode geo --geo-steps "$GEO_STEPS" --optimizer sgd || echo --optimizer momentum ) \
    --passes "${PASSES:-3}" --checkpoint-every-steps "${EVERY:-5}" \
    $( [ -n "${MODEL_FILE:-}" ] && echo --model-file "$MODEL_FILE" || echo --hidden "${HIDDEN:-32}" )
}
total_samples=3840

# The program a run starts: pstrain, or the test binary pstrain-faults when the call sets PSTRAIN_TEST_HOOKS (pstrain
# refuses it).
program() { if [ -n "${PSTRAIN_TEST_HOOKS+set}" ]; then echo "$BIN_DIR/pstrain-faults"; else echo "$BIN_DIR/pstrain"; fi; }

pstrain() {  # pstrain OUT SECONDS [extra flags...]: runs in the foreground, output to OUT.log
  local out=$1 seconds=$2
  shift 2
  run_mpi "$np" "$path" "$seconds" "$(program)" $(common_flags) --output-dir "$out" "$@" > "$out.log" 2>&1
}

start_pstrain() {  # start_pstrain OUT [flags...]: like pstrain, in the background; the job's pid goes to $launcher
  local out=$1
  shift
  run_mpi "$np" "$path" 120 "$(program)" $(common_flags) --output-dir "$out" "$@" > "$out.log" 2>&1 &
  launcher=$!
}

reference() {  # the uninterrupted run every resumed run must match bit for bit
  pstrain "$work/reference" 120 || { cat "$work/reference.log"; fail "reference run"; }
}

kill_random_rank() {  # kill_random_rank OUT: SIGKILL one of the job's pstrain processes, chosen at random
  local victim
  victim=$(signal_random_rank KILL "$1") || return 1
  echo "killed $victim"
}

kill_writer() {  # kill_writer OUT: SIGKILL world rank 0, the rank that writes checkpoints
  local pid
  pid=$(rank_pid "$1" 0)
  [ -n "$pid" ] || return 1
  echo "killing the writer, pid $pid"
  kill -9 "$pid"
}

# expect_watchdog_end OUT CODE START TIMEOUT VICTIM: the job (exit CODE, stalled at date +%s.%N START) was ended by
# the watchdog within TIMEOUT + 6 s, with one message naming the wait and the stopped rank VICTIM.
expect_watchdog_end() {
  local out=$1 code=$2 start=$3 timeout_s=$4 victim_rank=$5 elapsed
  elapsed=$(python3 -c "import time; print(round(time.time() - $start, 1))")
  cat "$out.log" | grep -v '^\[' || true
  [ "$code" -eq 6 ] || fail "exit code $code, expected 6 (a rank stopped responding)"
  python3 -c "import sys; sys.exit(0 if $elapsed <= $timeout_s + 6 else 1)" || fail "took ${elapsed}s to end"
  grep -Eq "waited [0-9]+ s \(--timeout-seconds $timeout_s\) in [a-z]" "$out.log" || fail "the message names no wait"
  grep -q "stopped responding: $victim_rank " "$out.log" || fail "the message does not name rank $victim_rank"
  [ "$(grep -c 'pstrain: error:' "$out.log")" -eq 1 ] || fail "expected exactly one error message"
  echo "ended after ${elapsed}s (timeout ${timeout_s}s)"
}

# stop_rank_expect_watchdog_end OUT RANK TIMEOUT: SIGSTOP world rank RANK of the job running in the background
# ($launcher), then expect_watchdog_end.
stop_rank_expect_watchdog_end() {
  local out=$1 rank=$2 timeout_s=$3 victim start code
  for ((i = 0; i < 100; i++)); do  # bounded: a rank seen between exec and reading its environment is retried
    victim=$(rank_pid "$out" "$rank")
    [ -z "$victim" ] || break
    sleep 0.05
  done
  if [ -z "$victim" ]; then
    ps -eo pid,stat,etimes,comm,args | grep -F -- "$out" | grep -v grep || true
    cat "$out.log"
    fail "rank $rank not found (did the run end early?)"
  fi
  echo "stopping rank $rank (pid $victim)"
  start=$(date +%s.%N)
  kill -STOP "$victim"
  set +e
  wait "$launcher"
  code=$?
  set -e
  expect_watchdog_end "$out" "$code" "$start" "$timeout_s" "$rank"
}

# Async, 1 server + 2 trainers, the lead trainer (world rank 1) 50 ms a step, trainer 1 (world rank 2) at full
# speed: trainer 1 reaches the end-of-pass meeting seconds before the lead and waits there.
start_slow_lead() {  # start_slow_lead OUT [flags]: in the background; the job's pid goes to $launcher
  local out=$1
  shift
  [ "$np" -eq 3 ] || fail "$case_name needs np 3 (1 server + 2 trainers)"
  PSTRAIN_TEST_HOOKS=slow-trainer=0,step-delay-ms=50 run_mpi 3 "$path" 120 "$BIN_DIR/pstrain-faults" $(common_flags) \
    --mode "${MODE:-async}" --output-dir "$out" "$@" > "$out.log" 2>&1 &
  launcher=$!
  trap 'kill "$launcher" 2> /dev/null || true' EXIT  # a failed check leaves no job running
}
meeting="the end-of-pass meeting of the async trainers"

expect_exact() {  # expect_exact OUT: final parameters equal the reference's
  "$TOOLS_DIR/compare_parameters" "$work/reference/pass-00002" "$1/pass-00002" --exact \
    || fail "$1 differs from the uninterrupted run"
}

resume() {  # resume OUT [flags]
  local out=$1
  shift
  run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" $(common_flags) --output-dir "$out" --resume auto "$@" \
    > "$out.resume.log" 2>&1 || { cat "$out.resume.log"; fail "resume of $out"; }
}

case "$case_name" in
  kill_resume)
    reference
    RANDOM=${FAULT_SEED:-$$}
    for ((trial = 1; trial <= ${FAULT_TRIALS:-2}; trial++)); do
      out="$work/trial-$trial"
      PSTRAIN_TEST_HOOKS=step-delay-ms=4 start_pstrain "$out"
      delay=$(python3 -c "import random; random.seed($RANDOM); print(round(random.uniform(0.4, 1.6), 2))")
      sleep "$delay"
      echo "trial $trial: after ${delay}s: $(kill_random_rank "$out" || echo 'run already over')"
      wait "$launcher" || true
      resume "$out"
      expect_exact "$out"
      grep -h "resuming from" "$out.resume.log" || echo "trial $trial: no checkpoint yet, started fresh"
    done
    ;;
  kill_during_write)
    reference
    out="$work/run"
    PSTRAIN_TEST_HOOKS=checkpoint-delay-ms=300 start_pstrain "$out"
    for ((i = 0; i < 400; i++)); do  # wait (bounded) until the second checkpoint is being written
      ls -d "$out"/checkpoints/ckpt-* > /dev/null 2>&1 && ls -d "$out"/checkpoints/.ckpt-tmp-* > /dev/null 2>&1 && break
      sleep 0.02
    done
    ls -d "$out"/checkpoints/.ckpt-tmp-* > /dev/null 2>&1 || fail "never saw a checkpoint being written"
    sleep 0.$((RANDOM % 5))  # a random point of the write (it pauses 300 ms between files)
    kill_writer "$out" || fail "no writer to kill"
    wait "$launcher" && fail "the killed job exited 0"
    ls -d "$out"/checkpoints/.ckpt-tmp-* > /dev/null 2>&1 || fail "the killed write left no temporary folder"
    published_checkpoints_complete "$out"
    resume "$out"
    ls -d "$out"/checkpoints/.ckpt-tmp-* > /dev/null 2>&1 && fail "stray temporary checkpoint left behind"
    grep -q "removed .ckpt-tmp-" "$out.resume.log" || fail "the resumed run did not report cleaning up"
    expect_exact "$out"
    ;;
  signal)
    reference
    out="$work/run"
    PSTRAIN_TEST_HOOKS=step-delay-ms=10 start_pstrain "$out"
    wait_for_training "$out.log"
    if [ "${SIGNAL:-USR1}" = TERM ]; then  # what srun/scancel and Kubernetes do: SIGTERM to every rank
      pkill -TERM -f -- "^$BIN_DIR/pstrain-faults .*--output-dir $out( |$)" || fail "no rank to signal"
    else                                   # Slurm's --signal to the batch shell, forwarded by mpirun
      pkill -USR1 -f -- "^mpirun .*--output-dir $out" || fail "no mpirun to signal"
    fi
    start=$(date +%s)
    wait "$launcher" || { cat "$out.log"; fail "SIGUSR1 should end the job cleanly (exit 0)"; }
    [ $(($(date +%s) - start)) -le 10 ] || fail "took more than 10 s to stop after the signal"
    grep -q "stopped on a signal" "$out.log" || { cat "$out.log"; fail "no 'stopped on a signal' line"; }
    [ -f "$out/pass-00002/done" ] && fail "the run finished before the signal: nothing was tested"
    resume "$out"
    expect_exact "$out"
    ;;
  bad_checkpoints)
    out="$work/run"
    PASSES=1 pstrain "$out" 120 || { cat "$out.log"; fail "run"; }
    mapfile -t ckpts < <(ls -d "$out"/checkpoints/ckpt-* | sort -r)
    newest=${ckpts[0]} previous=${ckpts[1]}
    # Without --resume a folder with checkpoints is refused, saying how to go on.
    PASSES=2 pstrain "$out" 30 && fail "started over a folder holding checkpoints"
    grep -q -- "--resume auto" "$out.log" || fail "the refusal does not say how to resume"
    cp -r "$out" "$work/flip"
    python3 - "$work/flip/checkpoints/$(basename "$newest")/model.h5" <<'PY'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[len(data) // 2] ^= 0x10
open(path, "wb").write(bytes(data))
PY
    run_mpi "$np" "$path" 60 "$BIN_DIR/pstrain" $(PASSES=2 common_flags) --output-dir "$work/flip" --resume auto \
      > "$work/flip.log" 2>&1 || { cat "$work/flip.log"; fail "auto resume past a corrupt checkpoint"; }
    grep -q "skipping checkpoint.*checksum" "$work/flip.log" || { cat "$work/flip.log"; fail "no warning naming the checksum"; }
    grep -q "resuming from .*$(basename "$previous")" "$work/flip.log" || fail "did not fall back to $previous"
    cp -r "$out" "$work/truncated"
    truncate -s 1000 "$work/truncated/checkpoints/$(basename "$newest")/training.h5"
    run_mpi "$np" "$path" 60 "$BIN_DIR/pstrain" $(PASSES=2 common_flags) --output-dir "$work/truncated" \
      --resume "$work/truncated/checkpoints/$(basename "$newest")" > "$work/truncated.log" 2>&1 \
      && fail "resumed from a truncated checkpoint"
    grep -q "training.h5 has 1000 bytes" "$work/truncated.log" || { cat "$work/truncated.log"; fail "truncation not named"; }
    cp -r "$out" "$work/model"
    run_mpi "$np" "$path" 60 "$BIN_DIR/pstrain" $(PASSES=2 HIDDEN=64 common_flags) --output-dir "$work/model" \
      --resume "$newest" > "$work/model.log" 2>&1 && fail "resumed another model's checkpoint"
    grep -q "another model" "$work/model.log" || { cat "$work/model.log"; fail "model mismatch not named"; }
    cp -r "$out" "$work/version"
    sed -i '1s/.*/pstrain-checkpoint 2/' "$work/version/checkpoints/$(basename "$newest")/MANIFEST"
    run_mpi "$np" "$path" 60 "$BIN_DIR/pstrain" $(PASSES=2 common_flags) --output-dir "$work/version" \
      --resume "$work/version/checkpoints/$(basename "$newest")" > "$work/version.log" 2>&1 \
      && fail "resumed a checkpoint of another format version"
    grep -q "format version 2" "$work/version.log" || { cat "$work/version.log"; fail "version not named"; }
    ;;
  elastic)
    out="$work/run"
        # A mid-pass checkpoint of a 2+2 run: stop it by signal in pass 1 of 3.
    PSTRAIN_TEST_HOOKS=step-delay-ms=15 run_mpi 4 "$path" 120 "$BIN_DIR/pstrain-faults" $(common_flags) --num-pservers 2 \
      --output-dir "$work/mid" > "$work/mid.log" 2>&1 &
    launcher=$!
    wait_for_training "$work/mid.log"
    sleep 1  # into pass 1 of 3 (where exactly does not matter: the accounting below must hold anywhere)
    pkill -USR1 -f -- "^mpirun .*--output-dir $work/mid" || fail "no mpirun to signal"
    wait "$launcher" || { cat "$work/mid.log"; fail "2+2 run did not stop cleanly"; }
    for layout in 1 3; do  # 1 server + 3 trainers, then 3 servers + 1 trainer
      cp -r "$work/mid" "$work/resume-$layout"
      run_mpi 4 "$path" 120 "$BIN_DIR/pstrain" $(common_flags) --num-pservers "$layout" --output-dir "$work/resume-$layout" \
        --resume auto > "$work/resume-$layout.log" 2>&1 || { cat "$work/resume-$layout.log"; fail "resume with $layout servers"; }
      python3 - "$work/resume-$layout/metrics.jsonl" "$total_samples" <<'PY' || fail "sample accounting with $layout servers"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
total = int(sys.argv[2])
assert [r["pass"] for r in records] == [0, 1, 2], [r["pass"] for r in records]
for r in records:
    seen = r["samples"] + r["samples_before_resume"]
    assert seen == total, (r["pass"], r["samples"], r["samples_before_resume"])
print("every pass trained", total, "samples exactly; resumed pass:",
      [(r["pass"], r["samples_before_resume"]) for r in records if r["samples_before_resume"]])
PY
    done
    ;;
  disk_full)
    # The output folder on a small tmpfs. Filled before a run, the run is refused at its start (job/disk_check.h:
    # its outputs do not fit), the folder left as it was; filled during a run (the test hook fill-disk fills it after
    # the first step, past the start's check), the next checkpoint write fails: exit 4 naming it, the last good one
    # intact; with the space freed, the run resumes from that one.
    disk="$work/disk"
    mkdir -p "$disk"
    mount -t tmpfs -o size=4m tmpfs "$disk" 2> /dev/null || { echo "SKIP: cannot mount a tmpfs here"; exit 77; }
    trap 'umount "$disk" 2> /dev/null || true' EXIT
    out="$disk/run"
    PASSES=1 EVERY=20 pstrain "$out" 60 || { cat "$out.log"; fail "first run"; }
    good=$(ls -d "$out"/checkpoints/ckpt-* | sort | tail -1)
    before=$(ls -lR "$out")
    free_kb=$(df -k --output=avail "$disk" | tail -1)
    head -c $(( (free_kb - 100) * 1024 )) /dev/zero > "$disk/filler"
    EVERY=20 run_mpi "$np" "$path" 60 "$BIN_DIR/pstrain" $(EVERY=20 common_flags) --output-dir "$out" --resume auto \
      > "$work/start.log" 2>&1 && fail "a run whose outputs cannot fit was accepted"
    grep -q "do not fit the disk of .*pass folders of .*--keep-checkpoints" "$work/start.log" \
      || { cat "$work/start.log"; fail "the start's refusal does not give the arithmetic"; }
    [ "$(ls -lR "$out")" = "$before" ] || fail "the refused run changed its folder"
    rm "$disk/filler"
    PSTRAIN_TEST_HOOKS="fill-disk=$disk/filler" EVERY=20 run_mpi "$np" "$path" 60 "$BIN_DIR/pstrain-faults" \
      $(EVERY=20 common_flags) --output-dir "$out" --resume auto > "$work/full.log" 2>&1 \
      && fail "a failing checkpoint write went unnoticed"
    cat "$work/full.log"
    grep -q "not written" "$work/full.log" || fail "the message does not say the checkpoint was not written"
    grep -q "$(basename "$good"), is intact" "$work/full.log" || fail "the message does not name the last good one"
    [ "$(grep -c 'pstrain: error:' "$work/full.log")" -eq 1 ] || fail "expected exactly one error message"
    ls -d "$out"/checkpoints/.ckpt-tmp-* > /dev/null 2>&1 && fail "partial checkpoint left behind"
    rm "$disk/filler"
    run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" $(EVERY=20 common_flags) --output-dir "$out" --resume auto \
      > "$work/resume.log" 2>&1 || { cat "$work/resume.log"; fail "resume after freeing space"; }
    grep -q "resuming from .*$(basename "$good")" "$work/resume.log" || fail "the last good checkpoint did not load"
    ;;
  async_kill_resume | async_signal)
    out="$work/run"
    aflags=(--mode "$async_mode" --dispatch "$dispatch" --chunk-size 128)
    PSTRAIN_TEST_HOOKS=step-delay-ms=4 start_pstrain "$out" "${aflags[@]}"
    wait_for_training "$out.log"
    # A random moment of the run: its 3 passes last at least 1.4 s after the first step (4 ms per step).
    sleep "$(python3 -c "import random; print(round(random.uniform(0.1, 0.6), 2))")"
    if [ "$case_name" = async_signal ]; then
      pkill -USR1 -f -- "^mpirun .*--output-dir $out" || fail "no mpirun to signal"
      wait "$launcher" || { cat "$out.log"; fail "SIGUSR1 should end the async job cleanly"; }
      grep -q "stopped on a signal" "$out.log" || { cat "$out.log"; fail "no 'stopped on a signal' line"; }
    else
      kill_random_rank "$out" || echo "run already over"
      wait "$launcher" || true
    fi
    run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" $(common_flags) --mode "$async_mode" --dispatch "$dispatch" \
      --chunk-size 128 --output-dir "$out" --resume auto > "$out.resume.log" 2>&1 || { cat "$out.resume.log"; fail "resume"; }
    grep -h "resuming from" "$out.resume.log" || echo "(no checkpoint before the interruption: started fresh)"
    each_sample_once "$out/metrics.jsonl" "$total_samples"
    ;;
  stall_sync | stall_async)
    out="$work/run"
    mode=${case_name#stall_}
    timeout_s=5
    PSTRAIN_TEST_HOOKS=step-delay-ms=2 run_mpi "$np" "$path" 60 "$BIN_DIR/pstrain-faults" $(PASSES=100 EVERY=0 common_flags) \
      --mode "$mode" --output-dir "$out" --timeout-seconds "$timeout_s" > "$out.log" 2>&1 &
    launcher=$!
    wait_for_training "$out.log"
    victim_rank=${STALL_VICTIM:-$((RANDOM % np))}  # STALL_VICTIM=R picks the rank (to reproduce one case)
    stop_rank_expect_watchdog_end "$out" "$victim_rank" "$timeout_s"
    ;;
  stall_at_exit)
    out="$work/run"
    timeout_s=5
    PSTRAIN_TEST_HOOKS=slow-trainer=1,leave-delay-ms=60000 run_mpi 3 "$path" 60 "$BIN_DIR/pstrain-faults" \
      $(PASSES=1 EVERY=0 common_flags) --mode sync --output-dir "$out" --timeout-seconds "$timeout_s" > "$out.log" 2>&1 &
    launcher=$!
    for ((i = 0; i < 1200; i++)); do grep -q "training finished" "$out.log" && break; sleep 0.05; done
    grep -q "training finished" "$out.log" || { cat "$out.log"; fail "the run did not finish training"; }
    stop_rank_expect_watchdog_end "$out" 2 "$timeout_s"
    grep -q "MPI_Finalize" "$out.log" || { cat "$out.log"; fail "the watchdog's message does not name MPI_Finalize"; }
    no_process_left "$out" 10
    ;;
  stall_in_meeting_after_checkpoint)
    out="$work/run"
    timeout_s=5
    PASSES=100 EVERY=10 start_slow_lead "$out" --timeout-seconds "$timeout_s"
    wait_for_training "$out.log"
    wait_for_wait "$out" 2 "$meeting"
    before=$(checkpoint_count "$out")
    for ((i = 0; i < 600; i++)); do [ "$(checkpoint_count "$out")" -gt "$before" ] && break; sleep 0.05; done
    [ "$(checkpoint_count "$out")" -gt "$before" ] || fail "no checkpoint while rank 2 waited in the meeting"
    joined=$(date +%s.%N)
    # A heartbeat written at least one period after that checkpoint: rank 2 is back in the meeting (or in the next
    # checkpoint of the lead: read again); "working" there means the meeting lost its watchdog guard.
    state=
    for ((i = 0; i < 400; i++)); do
      line=$(heartbeat "$out" 2)
      if awk -v stamp="${line%% *}" -v joined="$joined" 'BEGIN { exit !(stamp + 0 > joined + 0.6) }'; then
        case "$line" in *" waiting $meeting" | *" working "*) state=$line && break ;; esac
      fi
      sleep 0.05
    done
    echo "rank 2 after the checkpoint: ${state:-(no heartbeat)}"
    [[ "$state" == *" waiting $meeting" ]] || fail "after a checkpoint inside the meeting, rank 2's wait is unguarded"
    stop_rank_expect_watchdog_end "$out" 2 "$timeout_s"
    no_process_left "$out" 10
    ;;
  stop_in_meeting)
    out="$work/run"
    # ssp: a bound wider than the pass, so that the fast trainer reaches the meeting while the lead still steps.
    EVERY=0 start_slow_lead "$out" --timeout-seconds 10 $( [ "${MODE:-async}" = ssp ] && echo --staleness 1000 )
    wait_for_training "$out.log"
    wait_for_wait "$out" 2 "$meeting"
    pkill -USR1 -f -- "^mpirun .*--output-dir $out" || fail "no mpirun to signal"
    start=$(date +%s)
    wait "$launcher" || { cat "$out.log"; fail "a stop during the end-of-pass meeting should end the job cleanly"; }
    [ $(($(date +%s) - start)) -le 10 ] || fail "took more than 10 s to stop after the signal"
    grep -q "stopped on a signal" "$out.log" || { cat "$out.log"; fail "no 'stopped on a signal' line"; }
    [ -f "$out/pass-00000/done" ] && fail "pass 0 ended before the signal: the meeting was not tested"
    run_mpi 3 "$path" 120 "$BIN_DIR/pstrain" $(EVERY=0 common_flags) --mode "${MODE:-async}" --output-dir "$out" --resume auto \
      > "$out.resume.log" 2>&1 || { cat "$out.resume.log"; fail "resume"; }
    grep -h "resuming from" "$out.resume.log" || fail "the stopped run left no checkpoint to resume from"
    each_sample_once "$out/metrics.jsonl" "$total_samples"
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "PASS: $case_name on $np ranks over $path"
