#!/usr/bin/env bash
# --init-from loads the whole model of a pass folder, batch-norm running statistics included.
#   init_from.sh NP PATH
# A: one pass of a batch-norm model (its running statistics move away from their start, mean 0 and variance 1).
# B: starts from A's pass folder with batch-norm momentum 0 (running statistics frozen) and a vanishing learning
#    rate, so its pass folder must hold A's statistics and parameters. C: the same without --init-from must not
#    (the check can fail: it fails when the statistics are not loaded).
source "$(dirname "$0")/../mpi/common.sh"
np=$1 path=$2
work=$(new_work_dir "init_from_np${np}_${path}")
model=$(dirname "$0")/bn_dropout.model
frozen=$work/frozen.model
sed -e 's/^bn1 batchnorm$/bn1 batchnorm momentum=0/' -e 's/ rate=0.2/ rate=0/' "$model" > "$frozen"
grep -q "momentum=0" "$frozen" || fail "could not derive the frozen model from $model"

flags=(--data-dir "$DATA_DIR" --batch-size 32 --optimizer sgd)
run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" "${flags[@]}" --model-file "$model" --lr 0.05 --passes 1 \
  --output-dir "$work/a" > "$work/a.log" 2>&1 || { cat "$work/a.log"; fail "run A"; }
run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" "${flags[@]}" --model-file "$frozen" --lr 1e-30 --passes 1 \
  --init-from "$work/a/pass-00000" --output-dir "$work/b" > "$work/b.log" 2>&1 || { cat "$work/b.log"; fail "run B"; }
run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" "${flags[@]}" --model-file "$frozen" --lr 1e-30 --passes 1 \
  --output-dir "$work/c" > "$work/c.log" 2>&1 || { cat "$work/c.log"; fail "run C"; }

"$TOOLS_DIR/compare_parameters" "$work/a/pass-00000" "$work/b/pass-00000" --rtol 1e-6 ||
  fail "--init-from did not carry A's parameters and running statistics into B"
if "$TOOLS_DIR/compare_parameters" "$work/a/pass-00000" "$work/c/pass-00000" --rtol 1e-6 > /dev/null; then
  fail "a run without --init-from ended equal to A: the check cannot tell a loaded model from a fresh one"
fi
echo "PASS: --init-from carries parameters and batch-norm running statistics"
