#!/usr/bin/env bash
# One bad input per call: the job must end within 10 s with a non-zero exit on every rank, print one message
# naming the problem, leave no rank running, leave existing pass folders untouched, and (failing before training)
# leave the output folder exactly as it found it.
source "$(dirname "$0")/common.sh"
np=$1 path=$2 case=$3
work=$(new_work_dir "bad_input_${case}_np${np}_${path}")
data="$DATA_DIR"
out="$work/out"
extra=()
envs=()
expect=""
expect2=""  # a second part of the message, where one is not enough

text_data_dir() {  # the text fixture converted into 4-gram token shards
  "$BIN_DIR/pstrain-data" text --train "$text_fixture/train.txt" --test "$text_fixture/test.txt" \
    --output "$work/text" --split-count 4 --ngram 4 > "$work/convert.log" 2>&1 || { cat "$work/convert.log"; fail "convert"; }
  data="$work/text"
}
text_fixture="$(dirname "$0")/../unit/data/text"

converted_data_copy() {  # the real data as pstrain-data left it, MANIFEST included
  mkdir -p "$work/data"
  cp "$DATA_DIR"/* "$work/data/"
  [ -f "$work/data/MANIFEST" ] || fail "pstrain-data wrote no MANIFEST in $DATA_DIR"
  data="$work/data"
}

bad_data_dir() {  # a copy of the real data with one shard replaced by $1 (a command writing to $2)
  mkdir -p "$work/data"
  cp "$DATA_DIR"/*.h5 "$work/data/"
  data="$work/data"
}

case "$case" in
  unknown_flag) extra=(--bogus-flag 1); expect="bogus-flag" ;;
  unknown_env) envs=(PSTRAIN_BOGUS_SETTING=1); expect="PSTRAIN_BOGUS_SETTING" ;;
  zero_batch) extra=(--batch-size 0); expect="--batch-size" ;;
  text_batch) extra=(--batch-size many); expect="batch-size" ;;
  negative_lr) extra=(--lr -0.1); expect="--lr" ;;
  nan_lr) extra=(--lr nan); expect="--lr" ;;
  zero_passes) extra=(--passes 0); expect="--passes" ;;
  impossible_layout) extra=(--num-pservers "$np"); expect="num-pservers" ;;
  missing_data) data="$work/no-such-folder"; expect="no-such-folder" ;;
  garbage_shard)
    bad_data_dir; head -c 100000 /dev/urandom > "$data/train-00001.h5"; expect="train-00001.h5" ;;
  truncated_shard)
    bad_data_dir; truncate -s $(($(stat -c %s "$data/train-00000.h5") / 2)) "$data/train-00000.h5"
    expect="train-00000.h5" ;;
  corrupt_listed_shard)  # a copy with its MANIFEST: one flipped byte inside HDF5's superblock
    converted_data_copy; printf '\x5a' | dd of="$data/train-00003.h5" bs=1 seek=20 conv=notrunc status=none
    expect="train-00003.h5: checksum"; expect2="the file is corrupt" ;;
  copy_without_last_shard)  # no gap left: only the MANIFEST knows that train-00011.h5 belongs to the folder
    converted_data_copy; rm "$data/train-00011.h5"; expect="holds 11 train shards but its MANIFEST lists 12" ;;
  width_mismatch)
    bad_data_dir; "$TOOLS_DIR/make_shard" "$data/train-00002.h5" 100 10 64 1; expect="samples of shape 100 but" ;;
  label_out_of_range)
    # The real shards' shape, so that the labels are what is wrong (the path holds "label" too: name the check).
    bad_data_dir; "$TOOLS_DIR/make_shard" "$data/train-00000.h5" 784 10 64 10 28x28
    expect="label 10 of sample 0 is out of range [0, 10)" ;;
  unwritable_output) echo "a file" > "$work/file"; out="$work/file/out"; expect="$work/file/out" ;;
  existing_output) mkdir -p "$out"; cp -r "$REFERENCE_PASS" "$out/pass-00000"; expect="already holds" ;;
  nan_loss) extra=(--lr 1e12 --optimizer sgd); expect="diverged" ;;
  no_gpu)  # only meaningful where there is no GPU; CTest counts exit 77 as skipped
    if nvidia-smi -L > /dev/null 2>&1; then echo "SKIP: this machine has a GPU"; exit 77; fi
    extra=(--device gpu); expect="sees no GPU" ;;
  bad_device) extra=(--device tpu); expect="--device" ;;
  allreduce_with_servers) extra=(--mode allreduce --num-pservers 1); expect="no parameter servers" ;;
  cnn_on_vectors)  # samples without an image shape
    mkdir -p "$work/vectors"; data="$work/vectors"
    for shard in 0 1 2 3; do "$TOOLS_DIR/make_shard" "$data/train-0000$shard.h5" 784 10 64 1; done
    "$TOOLS_DIR/make_shard" "$data/test.h5" 784 10 64 1
    extra=(--model cnn); expect="image samples" ;;
  even_kernel) extra=(--model cnn --kernel-size 4); expect="kernel" ;;
  model_file_unknown_layer)
    printf 'f flatten\nh dense3 units=10\n' > "$work/bad.model"
    extra=(--model-file "$work/bad.model"); expect="bad.model:2: unknown layer type 'dense3'" ;;
  model_file_shape)  # a dense layer straight on 28x28 images
    printf 'h dense units=10\n' > "$work/bad.model"
    extra=(--model-file "$work/bad.model"); expect="bad.model:1: layer h (dense): needs a flat input, got 28x28x1" ;;
  model_file_cycle)
    printf 'a dense units=8 inputs=b\nb relu inputs=a\nf flatten inputs=b\nh dense units=10\n' > "$work/bad.model"
    extra=(--model-file "$work/bad.model"); expect="form a cycle" ;;
  model_file_with_preset)
    printf 'f flatten\nh dense units=10\n' > "$work/good.model"
    extra=(--model-file "$work/good.model" --model cnn); expect="both name a model" ;;
  model_file_missing) extra=(--model-file "$work/none.model"); expect="none.model: cannot be read" ;;
  dropout_rate)
    printf 'f flatten\nd dropout rate=1.5\nh dense units=10\n' > "$work/bad.model"
    extra=(--model-file "$work/bad.model"); expect="bad.model:2: layer d (dropout): rate=1.5 is outside" ;;
  augment_on_vectors)  # samples without an image shape
    mkdir -p "$work/vectors"; data="$work/vectors"
    for shard in 0 1 2 3; do "$TOOLS_DIR/make_shard" "$data/train-0000$shard.h5" 784 10 64 1; done
    "$TOOLS_DIR/make_shard" "$data/test.h5" 784 10 64 1
    extra=(--augment flip); expect="needs image samples" ;;
  lr_points_decreasing) extra=(--lr-schedule piecewise --lr-points 0,5,3 --lr-factors 0,1,0); expect="strictly increasing" ;;
  lr_points_negative) extra=(--lr-schedule piecewise --lr-points -1,5,24 --lr-factors 0,1,0); expect="--lr-points must be finite and >= 0" ;;
  text_vocab_mismatch)  # lines 2 and 3 swapped: the same size, other ids
    text_data_dir; sed -i '2{h;d};3G' "$data/vocab.txt"
    extra=(--model nplm); expect="vocab.txt does not match the shards" ;;
  text_id_out_of_range)
    text_data_dir; vocab_size=$(wc -l < "$data/vocab.txt")
    "$TOOLS_DIR/make_token_shard" "$data/train-00001.h5" "$data/vocab.txt" 4 64 "$vocab_size"
    rm "$data/MANIFEST"  # a hand-made shard in a folder without one: the reader's own checks must catch the ids
    extra=(--model nplm); expect="outside the vocabulary of $vocab_size words" ;;
  nplm_on_images) extra=(--model nplm); expect="--model nplm needs token shards" ;;
  table_too_large)  # 2e9 rows x 64 floats: 512 GB, on one server
    text_data_dir; vocab_size=$(wc -l < "$data/vocab.txt")
    printf 'embed embedding vocab=2000000000 dim=64\nctx flatten\nlogits dense units=%s\n' "$vocab_size" > "$work/huge.model"
    extra=(--model-file "$work/huge.model"); expect="does not fit this node" ;;
  *) fail "unknown case $case" ;;
esac


# The output folder as the run found it (no folder at all, for most cases): a run that fails before training
# leaves it so, creating nothing (docs/checkpoints.md).
out_tree() { [ -e "$out" ] && (cd "$out" && find . -exec sh -c 'for f; do [ -f "$f" ] && sha256sum "$f" || echo "$f"; done' _ {} + | sort) || echo absent; }
out_before=$(out_tree)
before=$(cd "$(dirname "$REFERENCE_PASS")" && find "$(basename "$REFERENCE_PASS")" -type f -exec sha256sum {} + | sort)
start=$(date +%s.%N)
set +e
env "${envs[@]}" timeout -k 2 10 mpirun --oversubscribe --bind-to none -np "$np" \
  $( [ "$path" = tcp ] && echo "${tcp_mca[@]}" ) \
  "$BIN_DIR/pstrain" --data-dir "$data" --output-dir "$out" --passes 2 --batch-size 32 --hidden 32 \
  $( [[ " ${extra[*]} " == *" cnn "* || " ${extra[*]} " == *" --model-file "* || " ${extra[*]} " == *" nplm "* ]] ||
     echo --init-from "$REFERENCE_PASS" ) \
  "${extra[@]}" > "$work/stdout" 2> "$work/stderr"
code=$?
set -e
elapsed=$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")
cat "$work/stderr"
[ "$code" -ne 0 ] || fail "exit code 0 for $case"
[ "$code" -ne 124 ] && [ "$code" -ne 137 ] || fail "$case: still running after 10 s (timeout)"
grep -qF -- "$expect" "$work/stderr" || fail "$case: stderr does not mention '$expect'"
[ -z "$expect2" ] || grep -qF -- "$expect2" "$work/stderr" || fail "$case: stderr does not mention '$expect2'"
if [ "$case" != nan_loss ]; then
  # Errors found before training are agreed on by all ranks: exactly one message, not one per rank.
  [ "$(grep -c 'pstrain: error:' "$work/stderr")" -eq 1 ] || fail "$case: expected exactly one error message"
fi
if pgrep -f -- "$work" > /dev/null; then pkill -9 -f -- "$work"; fail "$case: ranks still running after exit"; fi
after=$(cd "$(dirname "$REFERENCE_PASS")" && find "$(basename "$REFERENCE_PASS")" -type f -exec sha256sum {} + | sort)
[ "$before" = "$after" ] || fail "$case: the existing pass folder changed"
if [ "$case" != nan_loss ]; then
  [ "$(out_tree)" = "$out_before" ] || { diff <(echo "$out_before") <(out_tree) || true; fail "$case: the run changed its output folder before training"; }
fi
if [ "$case" = existing_output ]; then
  cmp -s "$REFERENCE_PASS/parameters.h5" "$out/pass-00000/parameters.h5" || fail "existing pass folder overwritten"
fi
echo "PASS: $case on $np ranks over $path: exit $code after ${elapsed}s"
