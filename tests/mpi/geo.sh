#!/usr/bin/env bash
# --mode geo (GEO-SGD): each trainer takes --geo-steps steps alone (plain SGD, or the recipe's optimizer, its state
# the trainer's own), then the servers add the trainers' sample-weighted mean change. One check per call:
# geo.sh CASE NP PATH
#   matches_sync       --geo-steps 1 is sync SGD: the same parameters as --mode sync (relative 1e-5: a change
#                      w_new - w_old added back to w_old rounds differently from the gradient step itself)
#   matches_sync_streamed  the same with --overlap true: the meetings' blocks go as messages (the streamed transport)
#   one_trainer_local  one server and one trainer with --geo-steps 4: the parameters of local training (1e-5)
#   deterministic      two runs with --geo-steps 4 give the same bits; another --geo-steps does not (the check
#                      can fail), and learns (test accuracy above 0.6)
#   momentum_one_trainer_local  --optimizer momentum, one trainer: the parameters of local training with momentum
#                      (1e-5); a trainer whose velocity restarted at each meeting would not match
#   momentum_resumes   --optimizer momentum, 2 trainers: one pass, then a resume to two, gives the bits of two passes
#                      at once (each trainer's velocity comes back from its trainer-*.h5); a resume with 3 trainers
#                      starts them from the saved trainers' mean velocity, says so, and learns
#   refuses            --checkpoint-every-steps off the meetings and --geo-steps 0: exit 2, one message
source "$(dirname "$0")/common.sh"
case_name=$1 np=$2 path=$3
work=$(new_work_dir "geo_${case_name}_np${np}_${path}")
common=(--data-dir "$DATA_DIR" --passes 2 --batch-size 32 --hidden 64,32 --optimizer sgd --lr 0.05 --seed 7)
momentum_common=(--data-dir "$DATA_DIR" --batch-size 32 --hidden 64,32 --optimizer momentum --lr 0.05 --momentum 0.9
                 --seed 7)

train() {  # train NAME NP [flags...]
  local name=$1 ranks=$2
  shift 2
  run_mpi "$ranks" "$path" 120 "$BIN_DIR/pstrain" "${common[@]}" --output-dir "$work/$name" "$@" > "$work/$name.log" 2>&1 \
    || { cat "$work/$name.log"; fail "run $name"; }
}

case "$case_name" in
  matches_sync)
    train geo "$np" --mode geo --geo-steps 1
    train sync "$np" --mode sync --overlap false
    "$TOOLS_DIR/compare_parameters" "$work/sync/pass-00001" "$work/geo/pass-00001" --rtol 1e-5 \
      || fail "geo with --geo-steps 1 differs from sync"
    ;;
  matches_sync_streamed)
    train geo "$np" --mode geo --geo-steps 1 --overlap true
    train sync "$np" --mode sync --overlap true
    grep -q "geo meetings: blocks as messages" "$work/geo.log" || { cat "$work/geo.log"; fail "geo did not meet over the streamed transport"; }
    "$TOOLS_DIR/compare_parameters" "$work/sync/pass-00001" "$work/geo/pass-00001" --rtol 1e-5 \
      || fail "geo with --geo-steps 1 differs from sync (streamed)"
    ;;
  one_trainer_local)
    [ "$np" -eq 2 ] || fail "one_trainer_local needs np 2 (1 server + 1 trainer)"
    train geo 2 --mode geo --geo-steps 4 --num-pservers 1
    train local 1
    "$TOOLS_DIR/compare_parameters" "$work/local/pass-00001" "$work/geo/pass-00001" --rtol 1e-5 \
      || fail "geo with one trainer differs from local training"
    ;;
  deterministic)
    train a "$np" --mode geo --geo-steps 4
    train b "$np" --mode geo --geo-steps 4
    train other "$np" --mode geo --geo-steps 3
    "$TOOLS_DIR/compare_parameters" "$work/a/pass-00001" "$work/b/pass-00001" --exact || fail "same run, other bits"
    if "$TOOLS_DIR/compare_parameters" "$work/a/pass-00001" "$work/other/pass-00001" --exact > /dev/null 2>&1; then
      fail "--geo-steps 3 gave the bits of --geo-steps 4: the comparison cannot fail"
    fi
    accuracy=$(last_metric "$work/a/metrics.jsonl" test_accuracy)
    python3 -c "import sys; sys.exit(0 if $accuracy > 0.6 else 1)" || fail "test accuracy $accuracy: geo did not learn"
    ;;
  momentum_one_trainer_local)
    [ "$np" -eq 2 ] || fail "momentum_one_trainer_local needs np 2 (1 server + 1 trainer)"
    common=("${momentum_common[@]}")
    train geo 2 --mode geo --geo-steps 4 --num-pservers 1 --passes 2
    train local 1 --passes 2
    "$TOOLS_DIR/compare_parameters" "$work/local/pass-00001" "$work/geo/pass-00001" --rtol 1e-5 \
      || fail "geo with momentum and one trainer differs from local training with momentum"
    ;;
  momentum_resumes)
    [ "$np" -eq 3 ] || fail "momentum_resumes needs np 3 (1 server + 2 trainers)"
    common=("${momentum_common[@]}")
    momentum=(--mode geo --geo-steps 4 --num-pservers 1)
    train whole 3 "${momentum[@]}" --passes 2
    train split 3 "${momentum[@]}" --passes 1
    compgen -G "$work/split/checkpoints/ckpt-*/trainer-00001-of-00002.h5" > /dev/null \
      || fail "the checkpoint holds no trainer state files: $(ls "$work"/split/checkpoints/ckpt-*)"
    cp -r "$work/split" "$work/elastic"
    train split 3 "${momentum[@]}" --passes 2 --resume auto
    grep -q "each trainer's own, as saved" "$work/split.log" || { cat "$work/split.log"; fail "no own state on resume"; }
    "$TOOLS_DIR/compare_parameters" "$work/whole/pass-00001" "$work/split/pass-00001" --exact \
      || fail "geo with momentum resumed after a pass differs from the run that went on"
    train elastic 4 "${momentum[@]}" --passes 2 --resume auto
    grep -q "the mean of the 2 saved trainers'" "$work/elastic.log" \
      || { cat "$work/elastic.log"; fail "the resume with 3 trainers did not take the saved trainers' mean"; }
    accuracy=$(last_metric "$work/elastic/metrics.jsonl" test_accuracy)
    python3 -c "import sys; sys.exit(0 if $accuracy > 0.6 else 1)" || fail "test accuracy $accuracy after the elastic resume"
    ;;
  refuses)
    expect_refusal() {  # expect_refusal TEXT [flags...]
      local text=$1
      shift
      set +e
      run_mpi "$np" "$path" 60 "$BIN_DIR/pstrain" "${common[@]}" --output-dir "$work/refused" --mode geo "$@" \
        > "$work/refused.log" 2>&1
      local code=$?
      set -e
      [ "$code" -eq 2 ] || { cat "$work/refused.log"; fail "exit $code, expected 2 for $*"; }
      grep -q -- "$text" "$work/refused.log" || { cat "$work/refused.log"; fail "no message '$text'"; }
      [ ! -e "$work/refused" ] || fail "a refused run left $work/refused"
    }
    common=(--data-dir "$DATA_DIR" --passes 1 --batch-size 32 --seed 7)
    expect_refusal "is not a multiple of --geo-steps 4" --optimizer sgd --geo-steps 4 --checkpoint-every-steps 6
    expect_refusal "--geo-steps must be > 0" --optimizer sgd --geo-steps 0
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "PASS: geo $case_name on $np ranks over $path"
