#!/usr/bin/env bash
# MovieLens-small (../shared/data/movielens-small, or DATA_SOURCE): test AUC of the click presets (--model dlrm,
# --model deepfm, their defaults) against logistic regression and matrix factorization (model files in
# ctr_models/, Adagrad at 0.05 on batches of 128 like the presets), each after 1 and 3 passes, on the split of
# pstrain-data movielens (each user's last 10% of ratings by time as test; a rating >= 4 is a click).
# Settings (environment): DATA_SOURCE=<repo>/../shared/data/movielens-small BUILD_DIR=<repo>/build
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
set_defaults DATA_SOURCE="$REPO/../shared/data/movielens-small" BUILD_DIR="$REPO/build"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BUILD_DIR/bin/pstrain-data" movielens --input "$DATA_SOURCE" --output "$work/data" > /dev/null
printf '%-8s %8s %8s\n' model "1 pass" "3 passes"
for model in dlrm deepfm lr mf; do
  flags=(--model "$model")
  [[ $model == lr || $model == mf ]] && flags=(--model-file "$SCRIPT_DIR/ctr_models/movielens-$model.model"
                                               --optimizer adagrad --batch-size 128)
  aucs=()
  for passes in 1 3; do
    "$BUILD_DIR/bin/pstrain" --data-dir "$work/data" --output-dir "$work/$model-$passes" --passes "$passes" \
      "${flags[@]}" > "$work/$model-$passes.log" 2>&1 || { cat "$work/$model-$passes.log"; die "$model"; }
    aucs+=("$(python3 -c 'import json,sys; print(round(json.loads(open(sys.argv[1]).read().splitlines()[-1])["test_auc"], 4))' \
      "$work/$model-$passes/metrics.jsonl")")
  done
  printf '%-8s %8s %8s\n' "$model" "${aucs[@]}"
done
