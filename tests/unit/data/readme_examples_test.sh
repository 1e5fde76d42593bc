#!/usr/bin/env bash
# data/README.md's "Writing shards yourself (h5py)" as a user runs it, and the own-data rows of its table: its python block saved as write_shards.py and
# its sh block run line by line (pstrain-data and pstrain from BIN_DIR, python3 = /usr/bin/python3, which has
# Debian's numpy and h5py), so the doc stays true. Then what the section promises around it:
#  - the shards carry h5py's defaults (variable-length strings, int64 attributes), and pstrain trained on them;
#  - before `pstrain-data manifest`, pstrain refuses them naming that command;
#  - `pstrain-data manifest` on a folder with a bad shard refuses it and leaves no MANIFEST behind;
#  - a shard changed after the manifest is refused by its checksum;
#  - the table's pstrain-data npz, npy, csv and manifest commands, as written, on files of those names.
# CTest passes BIN_DIR, WORK_ROOT and README. Exit 77 (skipped) when /usr/bin/python3 lacks numpy or h5py.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
py=/usr/bin/python3
"$py" -c "import numpy, h5py" 2> /dev/null || { echo "SKIP: python3-numpy and python3-h5py are not installed"; exit 77; }
[ -x "$BIN_DIR/pstrain-data" ] && [ -x "$BIN_DIR/pstrain" ] || fail "pstrain-data and pstrain must be built"
work="$WORK_ROOT/data_readme_examples"
rm -rf "$work"
mkdir -p "$work/bin"
cd "$work"
ln -s "$py" bin/python3
export PATH="$work/bin:$BIN_DIR:$PATH" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1

# The section's first python block and first sh block.
"$py" - "$README" <<'PY' || fail "data/README.md has no h5py section with a python and an sh block"
import re, sys
text = open(sys.argv[1]).read()
section = text.split("## Writing shards yourself (h5py)", 1)[1].split("\n## ", 1)[0]
python = re.search(r"```python\n(.*?)```", section, re.S).group(1)
shell = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
open("write_shards.py", "w").write(python)
open("commands.sh", "w").write(shell)
PY
cat commands.sh
grep -q "^python3 write_shards.py$" commands.sh || fail "the sh block does not run write_shards.py"

# Before the manifest: the README's first command alone, then pstrain refuses the variable-length strings.
python3 write_shards.py
"$py" - <<'PY' || fail "write_shards.py does not write h5py's defaults (what this test is about)"
import h5py
with h5py.File("data/blobs/test.h5", "r") as f:
    assert h5py.check_string_dtype(f.attrs.get_id("dataset").dtype).length is None, "not variable-length"
    assert f.attrs.get_id("num_classes").dtype == "int64" and f.attrs.get_id("sample_shape").dtype == "int64"
PY
code=0
timeout 60 pstrain --data-dir data/blobs --output-dir runs/early --passes 1 > early.log 2>&1 || code=$?
cat early.log
[ "$code" -eq 3 ] || fail "pstrain on h5py shards without a MANIFEST: exit $code, expected 3"
grep -qF "pstrain-data manifest --output data/blobs" early.log || fail "the refusal does not name pstrain-data manifest"

# The README's commands, each line as written.
while IFS= read -r line; do
  [ -n "$line" ] || continue
  echo "+ $line"
  timeout 120 bash -c "$line" > step.log 2>&1 || { cat step.log; fail "README command failed: $line"; }
  cat step.log
done < commands.sh
[ -f data/blobs/MANIFEST ] || fail "pstrain-data manifest wrote no MANIFEST"
[ "$(wc -l < runs/blobs/metrics.jsonl)" -eq 1 ] || fail "pstrain did not record one pass"
"$py" - <<'PY' || fail "pstrain did not learn the blobs"
import json
line = json.loads(open("runs/blobs/metrics.jsonl").readline())
print("one pass on the README's shards:", line)
assert line["test_accuracy"] > 0.6, line["test_accuracy"]  # three classes around 0, 1, 2 with unit noise: chance is 1/3
PY

# A shard changed after the manifest is refused by its checksum.
cp -r data/blobs changed
"$py" -c "import h5py; f = h5py.File('changed/test.h5', 'r+'); f.attrs['source'] = 'edited'; f.close()"
code=0
timeout 60 pstrain --data-dir changed --output-dir runs/changed --passes 1 > changed.log 2>&1 || code=$?
[ "$code" -eq 3 ] || { cat changed.log; fail "a shard changed after its MANIFEST: exit $code, expected 3"; }

# pstrain-data manifest checks the shards first: labels out of range refuse the folder and leave no MANIFEST.
cp -r data/blobs bad && rm bad/MANIFEST
"$py" -c "import h5py; f = h5py.File('bad/train-00001.h5', 'r+'); f['labels'][0] = 7; f.close()"
code=0
pstrain-data manifest --output bad > bad.log 2>&1 || code=$?
cat bad.log
[ "$code" -eq 3 ] || fail "pstrain-data manifest on a bad shard: exit $code, expected 3"
grep -q "train-00001.h5: label 7 of sample 0 is out of range" bad.log || fail "the bad shard is not named"
[ ! -e bad/MANIFEST ] || fail "pstrain-data manifest left a MANIFEST for a folder it refused"

# The table's own-data commands (npz, npy, csv, manifest), run as written on files NumPy writes under their names.
"$py" - <<'PY'
import numpy as np
rng = np.random.default_rng(3)
x = rng.normal(size=(400, 6)).astype("float32"); y = (x[:, 0] > 0).astype("int64")
np.savez("data.npz", x=x, y=y)
np.save("X.npy", x[:300]); np.save("y.npy", y[:300]); np.save("Xt.npy", x[300:]); np.save("yt.npy", y[300:])
for name, rows in (("train.csv", range(300)), ("test.csv", range(300, 400))):
    with open(name, "w") as f:
        f.write("a,b,c,d,e,f,label\n")
        f.writelines(",".join(map(repr, map(float, x[i]))) + f",{y[i]}\n" for i in rows)
PY
"$py" - "$README" > table.sh <<'PY'
import re, sys
for command in re.findall(r"`(pstrain-data (?:npz|npy|csv|manifest) [^`]*)`", open(sys.argv[1]).read()):
    print(command)
PY
[ "$(grep -c . table.sh)" -eq 4 ] || { cat table.sh; fail "data/README.md's table should hold the npz, npy, csv and manifest commands"; }
while IFS= read -r line; do
  # Each conversion into a folder of its own (pstrain-data refuses one that holds a conversion); manifest checks the
  # last conversion's shards where they are.
  [[ $line == "pstrain-data manifest "* ]] || rm -rf data/mine
  echo "+ $line"
  timeout 120 bash -c "$line" > step.log 2>&1 || { cat step.log; fail "README command failed: $line"; }
  cat step.log
  [ -f data/mine/MANIFEST ] && [ -f data/mine/test.h5 ] && [ -f data/mine/train-00003.h5 ] || fail "$line: no shards"
done < table.sh
echo "PASS: data/README.md's h5py example and own-data commands"
