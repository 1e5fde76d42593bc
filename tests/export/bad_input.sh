#!/bin/bash
# Bad input to pstrain evaluate, predict and export: each case ends with one message naming the problem and the
# documented exit code (lib/core/error.h: 2 usage, 3 input data, 4 output), and leaves no file behind (outputs
# are written under a temporary name and renamed). CTest passes BIN_DIR, WORK_ROOT, FASHION_MNIST, SOURCE_DIR.
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=1
for variable in $(env | grep -o '^PSTRAIN_[A-Z_]*' || true); do unset "$variable"; done
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${BIN_DIR:?}" "${WORK_ROOT:?}" "${SOURCE_DIR:?}"
work="$WORK_ROOT/bad_input"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
pstrain="$BIN_DIR/pstrain"

# expect CODE PATTERN ARGS...: exit CODE within 30 s, one error line on stderr matching PATTERN.
expect() {
  local code=$1 pattern=$2
  shift 2
  local status=0
  timeout 30 "$pstrain" "$@" > out.txt 2> err.txt || status=$?
  [ "$status" = "$code" ] || fail "pstrain $*: exit $status, expected $code; stderr: $(cat err.txt)"
  [ "$(wc -l < err.txt)" = 1 ] || fail "pstrain $*: expected one line on stderr, got: $(cat err.txt)"
  grep -q -- "$pattern" err.txt || fail "pstrain $*: '$(cat err.txt)' does not say '$pattern'"
}
# no_leftovers DIR: nothing but what was there before (no temporary files).
no_leftovers() {
  ! ls -A "$1" | grep -q -e '\.tmp-' -e '\.onnx$' -e '\.npy$' -e '\.json$' || fail "files left in $1: $(ls -A "$1")"
}

"$BIN_DIR/pstrain-data" fashion-mnist --input "${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}" --output images \
  --split-count 1 --limit 320 --test-limit 100 > /dev/null
/usr/bin/python3 -c "
import random
rng = random.Random(1)
for name, n in (('train.txt', 200), ('test.txt', 40)):
    open(name, 'w').write(''.join(' '.join(f'w{rng.randrange(30)}' for _ in range(8)) + '\n' for _ in range(n)))"
"$BIN_DIR/pstrain-data" text --train train.txt --test test.txt --output tokens --split-count 1 > /dev/null
"$pstrain" --data-dir images --output-dir run --passes 1 --hidden 16 > /dev/null 2>&1 || fail "the image run failed"
pass=run/pass-00000
mkdir outputs

# A pass folder that does not exist, that is incomplete (no done), or whose parameters.h5 is damaged.
expect 3 "no such pass folder" evaluate run/pass-00042
cp -r "$pass" incomplete
rm incomplete/done
expect 3 "incomplete (no done file)" evaluate incomplete --output outputs/e.json
expect 3 "incomplete (no done file)" export --onnx outputs/m.onnx incomplete
expect 3 "incomplete (no done file)" predict incomplete --input images/test.h5 --output outputs/p.npy
cp -r "$pass" damaged
/usr/bin/python3 -c "
import sys; p = 'damaged/parameters.h5'; b = bytearray(open(p, 'rb').read()); b[len(b) // 2] ^= 0x10; open(p, 'wb').write(b)"
expect 3 "parameters.h5" evaluate damaged --output outputs/e.json
expect 3 "parameters.h5" export --onnx outputs/m.onnx damaged
no_leftovers outputs

# Data whose sample shape is not the model's: token windows for an image model, a .npy of other samples.
expect 3 "reads samples of shape 28x28x1" evaluate "$pass" --data-dir tokens --output outputs/e.json
/usr/bin/python3 -c "import numpy; numpy.save('outputs/../wrong.npy', numpy.zeros((4, 27, 28), numpy.float32))"
expect 3 "samples of shape 27x28" predict "$pass" --input wrong.npy --output outputs/p.npy
printf 'not numpy' > bad.npy
expect 3 "not a .npy file" predict "$pass" --input bad.npy --output outputs/p.npy
no_leftovers outputs

# A damaged target path: a missing folder, a folder in the file's place, an existing file (kept as it was).
expect 4 "the folder outputs/missing does not exist" export --onnx outputs/missing/m.onnx "$pass"
mkdir outputs/folder.onnx
expect 4 "folder.onnx" export --onnx outputs/folder.onnx "$pass"
rmdir outputs/folder.onnx
echo keep > keep.onnx
expect 4 "already exists" export --onnx keep.onnx "$pass"
[ "$(cat keep.onnx)" = keep ] || fail "export changed an existing file"
expect 4 "already exists" predict "$pass" --input images/test.h5 --output keep.onnx
no_leftovers outputs

# Usage: no pass folder, no --onnx, an unknown flag.
expect 2 "missing PASS_FOLDER" evaluate
expect 2 "needs --onnx" export "$pass"
expect 2 "unrecognised\|unrecognized" evaluate "$pass" --no-such-flag
# predict started as several MPI ranks (each would write the same file): refused on every rank, nothing written.
# (evaluate shares its work among ranks: tests/mpi/evaluate_ranks.sh.)
status=0
timeout 60 mpirun --oversubscribe -np 2 "$pstrain" predict "$pass" --input images/test.h5 --output outputs/p.csv \
  > mpi.out 2>&1 || status=$?
[ "$status" = 2 ] || fail "predict on 2 ranks: exit $status, expected 2: $(cat mpi.out)"
grep -q "runs on one process; it was started as 2 ranks" mpi.out || fail "predict on 2 ranks: $(cat mpi.out)"

# A pass folder written before pass folders named their model (no model.txt, model.ini nor MANIFEST): refused
# without flags, naming --model; with the run's flags, the same figures as the folder that names its model.
cp -r "$pass" older
rm older/model.txt older/model.ini older/MANIFEST
expect 2 "does not name its data folder; give --data-dir" evaluate older --output outputs/e.json
expect 2 "give --model or --model-file" evaluate older --data-dir images --output outputs/e.json
expect 2 "give --data-dir and --model" export --onnx outputs/m.onnx older
"$pstrain" evaluate "$pass" --output new.json > /dev/null
"$pstrain" evaluate older --data-dir images --model mlp --hidden 16 --output old.json > /dev/null \
  || fail "evaluate of an older folder with --model mlp --hidden 16"
[ "$(grep -v pass_folder new.json)" = "$(grep -v pass_folder old.json)" ] || fail "older folder: $(diff new.json old.json)"
"$pstrain" export --onnx outputs/older.onnx older --data-dir images --model mlp --hidden 16 > /dev/null \
  || fail "export of an older folder with --data-dir and --model"
rm outputs/older.onnx

# (A layer without an ONNX form is named: every registered type has one, so tests/unit/export checks it.)
echo "bad input: every case ended with its message and exit code, nothing left behind"
