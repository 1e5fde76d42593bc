#!/bin/bash
# End to end, for one model: a short run writes a pass folder; `pstrain export` writes it as ONNX; `pstrain
# evaluate` scores it and `pstrain predict --logits` writes its logits on the test shard; check_export.py then
# runs onnx.checker and evaluates the ONNX graph outside pstrain (onnx_numpy.py), which must give pstrain's logits
# within 1e-5 relative and the same accuracy (and perplexity; for click models AUC and log-loss, the bags fed as
# the documented hashed rows, ctr_rows.py). Usage: export_test.sh CASE, CASE one of
#   mlp cnn resnet resnet_nobn recipe layers nplm          images and words
#   dlrm deepfm                                            the click presets, 225 steps on synthetic-ctr lines
#   ctr_file                                               the DLRM model file of tests/mpi/ctr_training.sh
#   ctr_layers                                             every click layer form (ctr_layers.model)
#   ctr_external_data                                      ctr_layers.model with --external-data-above 100000:
#                                                          the largest tables as ONNX external data; an existing
#                                                          side file is never replaced
# CTest passes BIN_DIR, WORK_ROOT, FASHION_MNIST, SOURCE_DIR (the repository).
set -euo pipefail
export OPENBLAS_NUM_THREADS=1
for variable in $(env | grep -o '^PSTRAIN_[A-Z_]*' || true); do unset "$variable"; done
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${BIN_DIR:?}" "${WORK_ROOT:?}" "${SOURCE_DIR:?}"
case_name=${1:?usage: export_test.sh CASE}
here="$SOURCE_DIR/tests/export"
/usr/bin/python3 -c "import onnx, numpy, h5py" 2>/dev/null || { echo "SKIP: python3-onnx, numpy or h5py missing"; exit 77; }
"$BIN_DIR/pstrain" export --help > /dev/null
if "$BIN_DIR/pstrain" export --onnx /dev/null/x.onnx nowhere 2>&1 | grep -q "built without ONNX"; then
  echo "SKIP: pstrain was built without ONNX"; exit 77
fi
work="$WORK_ROOT/$case_name"
rm -rf "$work"
mkdir -p "$work"
cd "$work"

images() {
  "$BIN_DIR/pstrain-data" fashion-mnist --input "${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}" --output data \
    --split-count 1 --limit 640 --test-limit 300 > /dev/null
}
# A small corpus of made-up sentences over 60 words: token shards with a validation split.
tokens() {
  /usr/bin/python3 - <<'PY'
import random
rng = random.Random(7)
words = [f"w{i}" for i in range(60)]
for name, lines in (("train.txt", 400), ("valid.txt", 60), ("test.txt", 80)):
    with open(name, "w") as f:
        for _ in range(lines):
            f.write(" ".join(rng.choice(words[: rng.randint(10, 60)]) for _ in range(rng.randint(4, 12))) + "\n")
PY
  "$BIN_DIR/pstrain-data" text --train train.txt --valid valid.txt --test test.txt --output data --split-count 1 \
    > /dev/null
}

# 4,000 synthetic click-log lines (3,600 to train on, 400 to test).
clicks() {
  "$BIN_DIR/pstrain-data" synthetic-ctr --lines 4000 --seed 5 --output data --split-count 1 > /dev/null
}
# The DLRM model file tests/mpi/ctr_training.sh trains, as that script writes it.
ctr_training_model() {
  sed -n "/<<'MODEL'/,/^MODEL\$/p" "$SOURCE_DIR/tests/mpi/ctr_training.sh" | sed '1d;$d' > ctr_training.model
  grep -q embedding_bag ctr_training.model || fail "no model file found in tests/mpi/ctr_training.sh"
}

flags=(--passes 1 --batch-size 32 --seed 3)
# One pass of 225 steps: the tables of 3,600 lines overfit past it (test AUC ~0.59 DLRM, ~0.65 DeepFM, falling after).
click_flags=(--passes 1 --batch-size 16 --seed 3 --optimizer adagrad --lr 0.05)
export_flags=()
check_flags=()
case "$case_name" in
  mlp) images; flags+=(--hidden 256,128) ;;
  cnn) images; flags+=(--model cnn --conv-filters 8,16 --hidden 32) ;;
  resnet) images; flags+=(--model resnet --width 0.125) ;;
  resnet_nobn) images; flags+=(--model resnet --width 0.125 --batch-norm false) ;;
  recipe) images; flags+=(--model-file "$SOURCE_DIR/examples/models/fashion-mnist-best.model") ;;
  layers) images; flags+=(--model-file "$here/all_layers.model") ;;
  nplm) tokens; flags+=(--model nplm --embedding-dim 8 --hidden 16 --direct true) ;;
  dlrm) clicks; flags=("${click_flags[@]}" --model dlrm --embedding-dim 8 --bottom-hidden 32 --hidden 64,32) ;;
  deepfm) clicks; flags=("${click_flags[@]}" --model deepfm --embedding-dim 8 --hidden 64,32) ;;
  ctr_file) clicks; ctr_training_model; flags=("${click_flags[@]}" --model-file ctr_training.model) ;;
  ctr_layers) clicks; flags=("${click_flags[@]}" --model-file "$here/ctr_layers.model") ;;
  ctr_external_data)
    clicks
    flags=("${click_flags[@]}" --model-file "$here/ctr_layers.model")
    export_flags=(--external-data-above 100000)
    check_flags=(--external-data)
    ;;
  *) fail "unknown case $case_name" ;;
esac
"$BIN_DIR/pstrain" --data-dir data --output-dir run "${flags[@]}" > train.out 2>&1 \
  || fail "the 1-pass run failed: $(tail -5 train.out)"
pass=$(ls -d run/pass-* | tail -n 1)  # the last pass: metrics.jsonl's last line
"$BIN_DIR/pstrain" export --onnx model.onnx "$pass" "${export_flags[@]}" > export.out || fail "export: $(cat export.out)"
if [ ${#check_flags[@]} -gt 0 ]; then
  grep -q "as external data in model.onnx.data" export.out || fail "export does not name its side file: $(cat export.out)"
  # A side file that exists already is never replaced, and nothing is written beside it.
  mkdir again && cp model.onnx.data again/ && cksum again/model.onnx.data > again.sum
  status=0
  "$BIN_DIR/pstrain" export --onnx again/model.onnx "$pass" "${export_flags[@]}" > again.out 2>&1 || status=$?
  [ "$status" = 4 ] && grep -q "model.onnx.data already exists" again.out \
    || fail "export over an existing side file: exit $status, $(cat again.out)"
  [ "$(ls again)" = model.onnx.data ] && cksum again/model.onnx.data | cmp -s - again.sum \
    || fail "export over an existing side file changed $(ls again)"
fi
"$BIN_DIR/pstrain" evaluate "$pass" --output evaluation.json > evaluate.out || fail "evaluate: $(cat evaluate.out)"
# evaluate's figures are the run's own for the same pass (metrics.jsonl, computed by the trainer).
/usr/bin/python3 - "$work" <<'PY' || fail "evaluate differs from the run's figures"
import json, sys
run = json.loads(open("run/metrics.jsonl").read().splitlines()[-1])
ours = json.load(open("evaluation.json"))
if f"{run['test_accuracy']:.6f}" != f"{ours['accuracy']:.6f}" or abs(run["test_loss"] / ours["loss"] - 1) > 1e-5:
    sys.exit(f"run: accuracy {run['test_accuracy']} loss {run['test_loss']}; evaluate: {ours['accuracy']} {ours['loss']}")
if "test_perplexity" in run and abs(run["test_perplexity"] / ours["perplexity"] - 1) > 1e-5:
    sys.exit(f"run: perplexity {run['test_perplexity']}; evaluate: {ours['perplexity']}")
PY
"$BIN_DIR/pstrain" predict "$pass" --input data/test.h5 --output logits.npy --logits --batch-size 77 > predict.out \
  || fail "predict: $(cat predict.out)"
/usr/bin/python3 "$here/check_export.py" model.onnx data/test.h5 logits.npy evaluation.json "$case_name" \
  "${check_flags[@]}"
