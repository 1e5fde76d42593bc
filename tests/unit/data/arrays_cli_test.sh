#!/usr/bin/env bash
# pstrain-data npz, npy and csv end to end, on files that NumPy itself wrote, and pstrain on what they write:
#  - npz (numpy.savez, float32 x and int64 y) with --keep-order, --test-fraction and --valid-fraction: the shards,
#    valid.h5, test.h5 and MANIFEST, and every sample and label back in h5py exactly as NumPy held it (features as
#    float32, uint8 ones divided by 255);
#  - Keras' layout (numpy.savez_compressed of uint8 x_train/y_train/x_test/y_test): the test arrays taken from it;
#    the shuffle (--seed) is a permutation of the input;
#  - npy (float64 features, int32 labels) with test files;
#  - csv with a header and the label in its first column, named by --label-column;
#  - bad input (unknown keys, Fortran order, a float label, no test samples, a CSV line short of a field, two
#    splits scaled differently): each refused with its exit code and message, the output folder never created;
#  - pstrain trains one pass on the npz and the csv conversions.
# CTest passes BIN_DIR and WORK_ROOT. Exit 77 (skipped) when /usr/bin/python3 lacks numpy or h5py.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
py=/usr/bin/python3
"$py" -c "import numpy, h5py" 2> /dev/null || { echo "SKIP: python3-numpy and python3-h5py are not installed"; exit 77; }
work="$WORK_ROOT/data_cli_arrays"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
data="$BIN_DIR/pstrain-data"
[ -x "$data" ] || fail "$data is not built"

"$py" - <<'PY'
import numpy as np
rng = np.random.default_rng(7)
x = rng.normal(size=(300, 2, 3)).astype("float32")
y = (x[:, 0, 0] + x[:, 1, 2] > 0).astype("int64") + 2 * (x[:, 0, 1] > 0)  # 4 classes, learnable
np.savez("plain.npz", x=x, y=y)
np.savez_compressed("keras.npz", x_train=rng.integers(0, 256, (60, 4, 4, 1), dtype="uint8"),
                    y_train=rng.integers(0, 10, 60).astype("uint8"),
                    x_test=rng.integers(0, 256, (12, 4, 4, 1), dtype="uint8"), y_test=rng.integers(0, 10, 12))
np.savez("other.npz", inputs=x, targets=y)
np.save("x.npy", x.reshape(300, 6).astype("float64")); np.save("y.npy", y.astype("int32"))
np.save("xt.npy", x[:20].reshape(20, 6).astype("float64")); np.save("yt.npy", y[:20].astype("int32"))
np.save("fortran.npy", np.asfortranarray(x.reshape(300, 6)))
np.save("yfloat.npy", y.astype("float32"))
np.save("xt_bytes.npy", rng.integers(0, 256, (20, 6), dtype="uint8"))
with open("train.csv", "w") as f:
    f.write("label,a,b,c\n")
    for features, label in zip(x.reshape(300, 6)[:, :3], y):
        f.write(f"{label},{features[0]!r},{features[1]!r},{features[2]!r}\n")
with open("test.csv", "w") as f:
    f.write("label,a,b,c\n2,0.5,-1,1e-3\n0,1,2,3\n")
with open("short.csv", "w") as f:
    f.write("1,2,3\n4,5\n")
PY

run() {  # run NAME ARGS...: pstrain-data ARGS, its output in NAME.log
  local name=$1; shift
  "$data" "$@" > "$name.log" 2>&1 || { cat "$name.log"; fail "pstrain-data $* failed"; }
  cat "$name.log"
}

# --- npz in file order: every sample where the fractions put it, exactly ---
run plain npz --input plain.npz --output plain --split-count 2 --test-fraction 0.2 --valid-fraction 0.1 --keep-order
for f in MANIFEST train-00000.h5 train-00001.h5 valid.h5 test.h5; do [ -f "plain/$f" ] || fail "plain: missing $f"; done
"$py" "$(dirname "$0")/check_manifest.py" plain train-00000.h5 train-00001.h5 valid.h5 test.h5 \
  || fail "MANIFEST does not list the files as written"
"$py" - <<'PY' || fail "the npz shards do not hold the arrays as NumPy wrote them"
import h5py, numpy as np
arrays = np.load("plain.npz")
x, y = arrays["x"], arrays["y"]
def read(name):
    with h5py.File(f"plain/{name}", "r") as f:
        assert f["features"].dtype == np.float32 and f["labels"].dtype == np.int32, name
        assert list(f.attrs["sample_shape"]) == [2, 3], f.attrs["sample_shape"]
        assert f.attrs["num_classes"] == 4 and f.attrs["sample_count"] == len(f["labels"]), name
        return f["features"][:], f["labels"][:]
parts = [read(n) for n in ("train-00000.h5", "train-00001.h5", "valid.h5", "test.h5")]
# 300 samples: the last 60 are test, the last 24 of the other 240 valid, 108 + 108 train
assert [len(p[1]) for p in parts] == [108, 108, 24, 60], [len(p[1]) for p in parts]
features = np.concatenate([p[0] for p in parts]); labels = np.concatenate([p[1] for p in parts])
assert np.array_equal(features, x.reshape(300, 6)) and np.array_equal(labels, y)
PY

# --- Keras' layout, shuffled: the test arrays from the archive, the training ones a permutation ---
run keras npz --input keras.npz --output keras --split-count 3 --seed 5
"$py" - <<'PY' || fail "the Keras-layout conversion is not the archive's arrays"
import h5py, numpy as np
a = np.load("keras.npz")
def read(name):
    with h5py.File(f"keras/{name}", "r") as f:
        assert list(f.attrs["sample_shape"]) == [4, 4, 1] and f.attrs["num_classes"] == 10
        return f["features"][:], f["labels"][:]
tx, ty = read("test.h5")
assert np.array_equal(tx, (a["x_test"].reshape(12, 16) / 255.0).astype(np.float32))  # uint8 / 255, as float32
assert np.array_equal(ty, a["y_test"])
parts = [read(f"train-0000{i}.h5") for i in range(3)]
fx = np.concatenate([p[0] for p in parts]); fy = np.concatenate([p[1] for p in parts])
rows = lambda f, l: sorted(map(tuple, np.column_stack([np.round(f * 255).astype(int), l]).tolist()))
assert rows(fx, fy) == rows(a["x_train"].reshape(60, 16).astype(float) / 255, a["y_train"]), "not a permutation"
assert not np.array_equal(fy, a["y_train"]), "--seed 5 did not shuffle"
PY

# --- npy with test files, csv with a named label column ---
run npy npy --features x.npy --labels y.npy --test-features xt.npy --test-labels yt.npy --output npy --split-count 2
run csv csv --train train.csv --test test.csv --label-column label --output csv --split-count 2 --valid-fraction 0.1
"$py" - <<'PY' || fail "the csv conversion is not the file's samples"
import h5py, numpy as np
with h5py.File("csv/test.h5", "r") as f:
    assert np.array_equal(f["features"][:], np.array([[0.5, -1, 1e-3], [1, 2, 3]], dtype=np.float32))
    assert list(f["labels"][:]) == [2, 0] and f.attrs["num_classes"] == 4
    assert list(f.attrs["sample_shape"]) == [3]
PY

# --- bad input: refused with the documented exit code and message, nothing written ---
expect_refused() {  # expect_refused NAME CODE MESSAGE -- ARGS
  local name=$1 code=$2 message=$3; shift 4
  local got=0
  "$data" "$@" --output "refused-$name" > "$name.log" 2>&1 || got=$?
  [ "$got" -eq "$code" ] || { cat "$name.log"; fail "$name: exit code $got, expected $code"; }
  grep -qF -- "$message" "$name.log" || { cat "$name.log"; fail "$name: the message does not say '$message'"; }
  [ ! -e "refused-$name" ] || fail "$name: the output folder was created"
}
expect_refused keys 2 "It holds inputs, targets, not x and y (or x_train and y_train): give --features-key" -- npz --input other.npz --split-count 1 --test-fraction 0.5
expect_refused key 3 "keras.npz holds no array 'a' (it holds: x_train, y_train, x_test, y_test)" -- npz --input keras.npz --split-count 1 --features-key a --labels-key y_train
expect_refused fortran 3 "Fortran order" -- npy --features fortran.npy --labels y.npy --split-count 1 --test-fraction 0.1
expect_refused float_labels 3 "labels of element type '<f4'" -- npy --features x.npy --labels yfloat.npy --split-count 1 --test-fraction 0.1
expect_refused no_test 2 "no test samples" -- npz --input plain.npz --split-count 1
expect_refused short_line 3 "short.csv:2: 2 fields, but the first line has 3" -- csv --train short.csv --split-count 1 --test-fraction 0.5
expect_refused scaling 3 "scaled differently" -- npy --features x.npy --labels y.npy --test-features xt_bytes.npy --test-labels yt.npy --split-count 1
expect_refused fraction 2 "--valid-fraction must be a fraction between 0 and 1" -- npz --input plain.npz --split-count 1 --test-fraction 0.1 --valid-fraction 1
expect_refused wrong_flag 2 "--label-column applies to csv only" -- npz --input plain.npz --split-count 1 --label-column 0

# --- pstrain trains one pass on what was converted ---
pstrain="$BIN_DIR/pstrain"
[ -x "$pstrain" ] || { echo "note: $pstrain is not built; the training checks are skipped"; echo "PASS (conversion only)"; exit 0; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
for folder in plain csv; do
  timeout 120 "$pstrain" --data-dir "$folder" --output-dir "run-$folder" --model mlp --hidden 16 --passes 1 \
    --batch-size 16 --tensorboard false > "run-$folder.log" 2>&1 || { cat "run-$folder.log"; fail "pstrain on the $folder conversion failed"; }
  [ "$(wc -l < "run-$folder/metrics.jsonl")" -eq 1 ] || fail "run-$folder: not one line of metrics for one pass"
done
echo "PASS: pstrain-data npz, npy and csv"
