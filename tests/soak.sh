#!/usr/bin/env bash
# Soak campaign: random faults at random moments in every training mode on both MPI paths, each trial resumed and
# checked, until the time is up. One line per trial, a summary at the end; exit 1 if any trial failed.
#   tests/soak.sh --minutes 30 [--seed S] [--build DIR] [--trials N] [--keep]
# A trial: a 3-pass job (random mode, MPI path and rank count) with checkpoints every 5 steps; after its first
# step, at a random moment, one fault:
#   kill   SIGKILL to a random rank (a crash, the OOM killer)
#   stop   SIGSTOP to a random rank: the watchdog must end the job (exit 6) within --timeout-seconds + 10 s
#   term   SIGTERM to every rank (scancel, Kubernetes) or SIGUSR1 to mpirun (Slurm's --signal): checkpoint, exit 0
#   full   the output folder's disk (a tmpfs of its own) filled up: exit 4, one message, nothing partial kept
# then the checks: no process of the job left behind, every published checkpoint complete, the resumed job (after
# freeing the disk) ends with exit 0 and no temporary checkpoint left; sync and all-reduce runs bit-identical to an
# uninterrupted run of the same layout, async/ssp (static or dynamic dispatch) runs trained each sample exactly
# once per pass. A failed trial keeps its folder (printed); --keep keeps all. Needs root for the tmpfs of "full"
# (without it that fault is left out, and said so).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
minutes=10 seed=$$ build=$root/build max_trials=0 keep=false
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --trials) max_trials=$2; shift 2 ;;
    --keep) keep=true; shift ;;
    -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "soak: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
export BIN_DIR=$build/bin TOOLS_DIR=$build/tests/tools WORK_ROOT=$build/tests/work/soak
[ -x "$BIN_DIR/pstrain" ] && [ -x "$TOOLS_DIR/compare_parameters" ] \
  || { echo "soak: no pstrain build with its test tools in $build (bash mpi_launch/setup.sh --tests)" >&2; exit 2; }
source "$here/mpi/common.sh"
source "$here/checkpoint/fault_lib.sh"
RANDOM=$seed

# The data: the test suite's Fashion-MNIST subset (12 shards x 320 samples), made here if CTest has not.
export DATA_DIR=$build/tests/data/fashion-mnist-small
total_samples=3840
if [ ! -f "$DATA_DIR/test.h5" ]; then
  "$BIN_DIR/pstrain-data" fashion-mnist --input /usr/share/datasets/fashion-mnist --output "$DATA_DIR" \
    --split-count 12 --limit 3840 --test-limit 2000 > /dev/null || { echo "soak: cannot make $DATA_DIR" >&2; exit 2; }
fi
mkdir -p "$WORK_ROOT"
faults=(kill stop term full)
probe=$WORK_ROOT/.tmpfs-probe
mkdir -p "$probe"
if mount -t tmpfs -o size=1m tmpfs "$probe" 2> /dev/null; then umount "$probe"; else
  faults=(kill stop term)
  echo "soak: cannot mount a tmpfs (not root?): the full-disk fault is left out"
fi
modes=(sync allreduce async ssp async-dynamic ssp-dynamic)
timeout_s=15
# A pause after every step stretches a job to a few seconds (3 passes of 30-60 steps), so that a fault lands in
# its middle; faults are drawn within the first 1.5 s after the first step.
step_delay_ms=10

# Cleanup on any exit: no job of ours and no tmpfs of ours survives the soak.
cleanup() {
  local pids
  pids=$(pgrep -f -- "--output-dir $WORK_ROOT/" || true)
  [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
  { grep -o " $WORK_ROOT/[^ ]*" /proc/mounts || true; } | while read -r mounted; do umount -l "$mounted" 2>/dev/null || true; done
  return 0
}
trap cleanup EXIT

# job_flags MODE: the flags of a job in MODE (every trial of a mode and layout trains the same thing).
job_flags() {
  local mode=${1%-dynamic} dispatch=static
  [ "$1" = "$mode" ] || dispatch=dynamic
  echo --data-dir "$DATA_DIR" --batch-size 32 --optimizer momentum --lr 0.05 --lr-schedule cosine --hidden 32 \
    --passes 3 --keep-checkpoints 0 --checkpoint-every-steps 5 --seed 7 --mode "$mode" --timeout-seconds "$timeout_s"
  case "$mode" in async | ssp) echo --dispatch "$dispatch" --chunk-size 128 ;; esac
}

# reference MODE NP PATH: the uninterrupted run's final pass folder (made once per layout).
reference() {
  local dir=$WORK_ROOT/reference-$1-np$2-$3
  if [ ! -f "$dir/pass-00002/done" ]; then
    rm -rf "$dir"
    run_mpi "$2" "$3" 300 "$BIN_DIR/pstrain" $(job_flags "$1") --output-dir "$dir" > "$dir.log" 2>&1 \
      || { cat "$dir.log" >&2; fail "reference run $1 np $2 $3"; }
  fi
  echo "$dir/pass-00002"
}

# inject FAULT OUT: the fault, now; prints what it did.
inject() {
  local fault=$1 out=$2
  case "$fault" in
    kill | stop)
      local signal=KILL
      [ "$fault" = stop ] && signal=STOP
      signal_random_rank "$signal" "$out" || echo "nothing to signal (run over)"
      ;;
    term)
      if [ $((RANDOM % 2)) -eq 0 ]; then
        pkill -TERM -f -- "^$BIN_DIR/pstrain-faults .*--output-dir $out( |$)" && echo "SIGTERM to every rank" || echo "run over"
      else
        pkill -USR1 -f -- "^mpirun .*--output-dir $out( |$)" && echo "SIGUSR1 to mpirun" || echo "run over"
      fi
      ;;
    full)
      local free_kb
      free_kb=$(df -k --output=avail "$(dirname "$out")" | tail -1)
      head -c $((free_kb * 1024)) /dev/zero > "$(dirname "$out")/filler" 2> /dev/null || true
      echo "disk filled ($free_kb KiB)"
      ;;
  esac
}

# expect_exit FAULT CODE OUT LOG ELAPSED: the interrupted job ended the way its fault must end it.
expect_exit() {
  local fault=$1 code=$2 out=$3 log=$4 elapsed=$5
  local finished=false
  [ -f "$out/pass-00002/done" ] && finished=true
  case "$fault" in
    kill) [ "$code" -ne 0 ] || $finished || fail "exit 0 after a rank was killed, run unfinished" ;;
    stop)
      [ "$code" -eq 6 ] || { [ "$code" -eq 0 ] && $finished; } || fail "exit $code after SIGSTOP, expected 6"
      python3 -c "import sys; sys.exit(0 if $elapsed <= $timeout_s + 10 else 1)" || fail "SIGSTOP: ended after ${elapsed}s"
      ;;
    term)
      [ "$code" -eq 0 ] || fail "exit $code after SIGTERM/SIGUSR1, expected 0"
      $finished || grep -q "stopped on a signal" "$log" || fail "no 'stopped on a signal' line"
      ;;
    full)
      if [ "$code" -ne 0 ]; then
        [ "$code" -eq 4 ] || fail "exit $code on a full disk, expected 4"
        [ "$(grep -c 'pstrain: error:' "$log")" -eq 1 ] || fail "expected exactly one error message"
      else
        $finished || fail "exit 0 on a full disk, run unfinished"
      fi
      ;;
  esac
}

# trial N MODE NP PATH FAULT DELAY: one fault DELAY seconds after the first step, resumed and checked; prints one
# line. Runs in a subshell: fail() ends only the trial.
trial() {
  local n=$1 mode=$2 np=$3 path=$4 fault=$5 delay=$6
  # The job's output on a disk of its own (a tmpfs when the fault fills it); its console logs beside it.
  local dir=$WORK_ROOT/trial-$n
  local disk=$dir/disk
  local out=$disk/run log=$dir/run.log
  rm -rf "$dir"
  mkdir -p "$disk"
  if [ "$fault" = full ]; then mount -t tmpfs -o size=64m tmpfs "$disk" || fail "cannot mount a tmpfs on $disk"; fi
  local what code=0 started ended
  PSTRAIN_TEST_HOOKS=step-delay-ms=$step_delay_ms run_mpi "$np" "$path" 300 "$BIN_DIR/pstrain-faults" $(job_flags "$mode") \
    --output-dir "$out" > "$log" 2>&1 &
  local launcher=$!
  wait_for_training "$log"
  sleep "$delay"
  started=$(date +%s.%N)
  what=$(inject "$fault" "$out")
  wait "$launcher" || code=$?
  ended=$(date +%s.%N)
  local elapsed
  elapsed=$(python3 -c "print(round($ended - $started, 1))")
  no_process_left "$out" 10
  expect_exit "$fault" "$code" "$out" "$log" "$elapsed"
  published_checkpoints_complete "$out"
  rm -f "$disk/filler"
  run_mpi "$np" "$path" 300 "$BIN_DIR/pstrain" $(job_flags "$mode") --output-dir "$out" --resume auto \
    > "$dir/resume.log" 2>&1 || { tail -20 "$dir/resume.log"; fail "the resumed job failed"; }
  no_process_left "$out" 10
  ls -d "$out"/checkpoints/.ckpt-tmp-* > /dev/null 2>&1 && fail "a temporary checkpoint was left after the resume"
  local from verdict
  # No match when the fault came before the first checkpoint (the resume starts fresh): not a failure.
  from=$(grep -ho "resuming from [^ ]*" "$dir/resume.log" | head -1 | sed 's|.*/||; s|:*$||' || true)
  case "$mode" in
    sync | allreduce)
      local expected
      expected=$(reference "$mode" "$np" "$path") || fail "no reference run"
      "$TOOLS_DIR/compare_parameters" "$expected" "$out/pass-00002" --exact > "$dir/compare.log" 2>&1 \
        || { cat "$dir/compare.log"; fail "differs from the uninterrupted run"; }
      verdict="bit-identical" ;;
    *) each_sample_once "$out/metrics.jsonl" "$total_samples" > /dev/null; verdict="each sample once per pass" ;;
  esac
  $keep || { mountpoint -q "$disk" && umount "$disk"; rm -rf "$dir"; }
  echo "$what, exit $code after ${elapsed}s; resumed from ${from:-the start}: $verdict"
}

start=$(date +%s)
deadline=$((start + minutes * 60))
declare -A ran failed
n=0 failures=0
echo "soak: seed $seed, $minutes min, faults: ${faults[*]}, modes: ${modes[*]}, paths: shm tcp, 3-4 ranks"
while [ "$(date +%s)" -lt "$deadline" ] && { [ "$max_trials" -eq 0 ] || [ "$n" -lt "$max_trials" ]; }; do
  n=$((n + 1))
  # Every draw is made here, in the main shell, so that the seed fixes the whole campaign.
  mode=${modes[$((RANDOM % ${#modes[@]}))]}
  np=$((3 + RANDOM % 2))
  path=$( [ $((RANDOM % 2)) -eq 0 ] && echo shm || echo tcp)
  fault=${faults[$((RANDOM % ${#faults[@]}))]}
  delay=$(python3 -c "import random; random.seed($RANDOM); print(round(random.uniform(0.05, 1.5), 2))")
  set +e
  line=$(set -e; trial "$n" "$mode" "$np" "$path" "$fault" "$delay" 2>&1)
  code=$?
  set -e
  key="$mode/$path/$fault"
  ran[$key]=$(( ${ran[$key]:-0} + 1 ))
  label=$(printf 'soak: trial %3d %-13s np%d %-3s %-4s at %4ss' "$n" "$mode" "$np" "$path" "$fault" "$delay")
  if [ "$code" -eq 0 ]; then
    echo "$label OK    $(echo "$line" | tail -1)"
  else
    failures=$((failures + 1))
    failed[$key]=$(( ${failed[$key]:-0} + 1 ))
    echo "$label FAIL  $(echo "$line" | grep -h 'FAIL:' | tail -1) (kept: $WORK_ROOT/trial-$n)"
    echo "$line" | tail -30 | sed 's/^/    /'
    # A failed trial may leave its job behind (that may be the finding): end it, keep its files.
    pids=$(pgrep -f -- "--output-dir $WORK_ROOT/trial-$n/" || true)
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
    if mountpoint -q "$WORK_ROOT/trial-$n/disk"; then
      cp -a "$WORK_ROOT/trial-$n/disk" "$WORK_ROOT/trial-$n/disk.kept" 2>/dev/null || true
      umount -l "$WORK_ROOT/trial-$n/disk"
    fi
  fi
done
echo "soak: summary: $n trials in $(( ($(date +%s) - start) / 60 )) min, $failures failed (seed $seed)"
for key in $(printf '%s\n' "${!ran[@]}" | sort); do
  printf 'soak:   %-28s %3d trials, %d failed\n' "$key" "${ran[$key]}" "${failed[$key]:-0}"
done
[ "$failures" -eq 0 ]
