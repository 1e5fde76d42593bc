#!/usr/bin/env bash
# Sync training with --augment: two runs with the same seed and layout are bit-identical; a run killed after a
# checkpoint and resumed with --resume auto ends bit-identical to the uninterrupted one (the augmentation is a
# function of (seed, pass, sample), not of anything a restart loses); a run without --augment differs, so the
# comparisons can fail. The data are Fashion-MNIST 28 x 28 images.
source "$(dirname "$0")/common.sh"
np=$1 path=$2
work=$(new_work_dir "augment_runs_np${np}_${path}")
common=(--data-dir "$DATA_DIR" --mode sync --passes 2 --batch-size 32 --hidden 32 --optimizer momentum --nesterov
        --lr 0.05 --lr-schedule piecewise --lr-points 0,0.5,2 --lr-factors 0.2,1,0 --weight-decay 5e-4
        --no-decay-bias-and-norm --seed 3 --keep-checkpoints 0)
augment=(--augment crop:2,flip,cutout:6)
run() {  # run NAME FLAGS...
  local name=$1
  shift
  run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" "${common[@]}" --output-dir "$work/$name" "$@" > "$work/$name.log" 2>&1 \
    || { cat "$work/$name.log"; fail "run $name"; }
}
run a "${augment[@]}"
run b "${augment[@]}"
run plain
"$TOOLS_DIR/compare_parameters" "$work/a/pass-00001" "$work/b/pass-00001" --exact || fail "same seed, different bits"
if "$TOOLS_DIR/compare_parameters" "$work/a/pass-00001" "$work/plain/pass-00001" --exact > /dev/null 2>&1; then
  fail "--augment changed nothing: the comparisons cannot fail"
fi

# Killed (SIGKILL, every rank) once its first checkpoint (mid-pass 0, after step 3) is complete, then resumed with
# --resume auto: the result must equal run a bit for bit.
PSTRAIN_TEST_HOOKS=step-delay-ms=200 run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain-faults" "${common[@]}" "${augment[@]}" \
  --output-dir "$work/resumed" --checkpoint-every-steps 3 > "$work/resumed.log" 2>&1 &
launcher=$!
for _ in $(seq 1 600); do  # until the first checkpoint is complete (polling a file the job writes, up to 60 s)
  compgen -G "$work/resumed/checkpoints/ckpt-*" > /dev/null && break
  kill -0 "$launcher" 2> /dev/null || break
  sleep 0.1
done
compgen -G "$work/resumed/checkpoints/ckpt-*" > /dev/null || { cat "$work/resumed.log"; fail "no checkpoint written"; }
kill -9 $(pgrep -f -- "--output-dir $work/resumed" | while read -r pid; do
  [ "$(cat /proc/$pid/comm 2>/dev/null)" = pstrain-faults ] && echo "$pid"; done) 2> /dev/null || true
wait "$launcher" || true
[ ! -d "$work/resumed/pass-00001" ] || fail "the run finished before it was killed: nothing was resumed"
run resumed "${augment[@]}" --checkpoint-every-steps 3 --resume auto
grep -q "resuming from" "$work/resumed.log" || fail "the second run did not resume"
"$TOOLS_DIR/compare_parameters" "$work/a/pass-00001" "$work/resumed/pass-00001" --exact \
  || fail "the resumed run differs from the uninterrupted one"
echo "PASS: --augment runs are bit-identical, also across a kill and resume, on $np ranks over $path"
