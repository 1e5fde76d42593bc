#!/usr/bin/env bash
# pstrain-data cifar10 end to end. Writes a small folder in the CIFAR-10 binary format (5 training batches of 4
# records and a test batch of 3, inside cifar-10-batches-bin/ as the tarball unpacks), converts it into 2 train
# shards + test.h5, and reads the shards back with h5dump: attributes, label values and channels-last pixels.
# Then bad inputs: a file of a wrong size, a label >= 10, a missing batch, each refused with exit code 3 and a
# message naming the file, without creating the output folder.
# CTest passes BIN_DIR and WORK_ROOT. Exit 77 (skipped) when h5dump is not installed.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v h5dump > /dev/null || { echo "SKIP: h5dump is not installed (apt-get install hdf5-tools)"; exit 77; }
command -v python3 > /dev/null || { echo "SKIP: python3 is not installed"; exit 77; }

work="$WORK_ROOT/data_cli_cifar10"
rm -rf "$work"
mkdir -p "$work"
data="$BIN_DIR/pstrain-data"
[ -x "$data" ] || fail "$data is not built"

# write_sample FOLDER: the sample; pixel byte (batch b, record r, channel c, y, x) = (37b + 11r + 83c + 7y + 3x) % 256,
# label (3b + r) % 10; the test batch is batch 6.
write_sample() {
  python3 - "$1" <<'PY'
import os, sys
folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
def batch(b, records):
    out = bytearray()
    for r in range(records):
        out.append((3 * b + r) % 10)
        for c in range(3):
            for y in range(32):
                out += bytes((37 * b + 11 * r + 83 * c + 7 * y + 3 * x) % 256 for x in range(32))
    return bytes(out)
for b in range(1, 6):
    open(os.path.join(folder, f"data_batch_{b}.bin"), "wb").write(batch(b, 4))
open(os.path.join(folder, "test_batch.bin"), "wb").write(batch(6, 3))
open(os.path.join(folder, "batches.meta.txt"), "w").write(
    "airplane\nautomobile\nbird\ncat\ndeer\ndog\nfrog\nhorse\nship\ntruck\n")
PY
}

# --- the good conversion, from the parent of cifar-10-batches-bin/ ---
write_sample "$work/in/cifar-10-batches-bin"
"$data" cifar10 --input "$work/in" --output "$work/out" --split-count 2 > "$work/convert.log" 2>&1 ||
  { cat "$work/convert.log"; fail "conversion failed"; }
cat "$work/convert.log"
for f in train-00000.h5 train-00001.h5 test.h5; do [ -f "$work/out/$f" ] || fail "missing $work/out/$f"; done
[ ! -e "$work/out/train-00002.h5" ] || fail "more than 2 train shards"
# The MANIFEST, written last, lists exactly these files with their sizes and zlib CRC-32s.
python3 "$(dirname "$0")/check_manifest.py" "$work/out" train-00000.h5 train-00001.h5 test.h5 ||
  fail "MANIFEST does not list the files as written"
grep -q "cifar10, 32x32x3, 10 classes" "$work/convert.log" || fail "the summary line does not say cifar10, 32x32x3"

attributes=$(h5dump -A "$work/out/test.h5")
echo "$attributes"
check_attr() {  # check_attr NAME PATTERN: the data line of attribute NAME (its first "(0):" line) holds PATTERN
  echo "$attributes" | grep -A12 -F "ATTRIBUTE \"$1\"" | grep -m1 -F '(0):' | grep -Eq -- "$2" ||
    fail "test.h5 attribute $1 does not match '$2'"
}
check_attr dataset '"cifar10"'
check_attr sample_shape '32, 32, 3'
check_attr num_classes '\(0\): 10$'
check_attr sample_count '\(0\): 3$'
check_attr source 'test_batch.bin'
h5dump -H "$work/out/test.h5" | grep -A3 'DATASET "/features"\|DATASET "features"' | grep -q '( 3, 3072 )' ||
  fail "test.h5 /features is not 3 x 3072"
h5dump -H "$work/out/train-00000.h5" | grep -q '( 10, 3072 )' || fail "train-00000.h5 /features is not 10 x 3072"
h5dump -A "$work/out/train-00001.h5" | grep -A4 'sample_count' | grep -Eq '\(0\): 10$' ||
  fail "train-00001.h5 does not hold 10 samples"

# Values: labels of the test batch, and sample 1 of the test batch at pixel (y 2, x 5), channels R G B, which
# channels last is features[1, (2 * 32 + 5) * 3 + c] = features[1, 207..209].
h5dump -y -d /labels "$work/out/test.h5" > "$work/labels.txt"
h5dump -y -d /features -s "1,207" -c "1,3" "$work/out/test.h5" > "$work/pixels.txt"
h5dump -y -d /labels "$work/out/train-00001.h5" > "$work/train1-labels.txt"
python3 - "$work" <<'PY' || fail "values read back do not match the sample"
import re, sys
work = sys.argv[1]
def data_values(path):
    text = open(path).read()
    block = text[text.index("DATA {") + len("DATA {"):]
    block = block[:block.index("}")]
    return [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", block)]
labels = data_values(f"{work}/labels.txt")
assert labels == [(3 * 6 + r) % 10 for r in range(3)], labels
# train shard 1 holds samples 10..19 of the 20: batch 3 records 2..3, then batches 4 and 5.
train1 = data_values(f"{work}/train1-labels.txt")
expected = [(3 * (1 + s // 4) + s % 4) % 10 for s in range(10, 20)]
assert train1 == expected, (train1, expected)
pixels = data_values(f"{work}/pixels.txt")
expected = [((37 * 6 + 11 * 1 + 83 * c + 7 * 2 + 3 * 5) % 256) / 255 for c in range(3)]
assert len(pixels) == 3 and all(abs(a - b) < 1e-5 for a, b in zip(pixels, expected)), (pixels, expected)
print("values OK:", labels, train1, pixels)
PY

# The folder holding the .bin files directly works too, and --limit / --test-limit apply as for fashion-mnist.
"$data" cifar10 --input "$work/in/cifar-10-batches-bin" --output "$work/out-limited" --split-count 3 --limit 7 \
  --test-limit 2 > "$work/limited.log" 2>&1 || { cat "$work/limited.log"; fail "conversion of the .bin folder failed"; }
h5dump -A "$work/out-limited/test.h5" | grep -A4 sample_count | grep -Eq '\(0\): 2$' || fail "--test-limit 2 ignored"
[ -f "$work/out-limited/train-00002.h5" ] || fail "--split-count 3 did not write 3 shards"

# --- bad inputs: exit 3, the file named, nothing written ---
expect_refused() {  # expect_refused CASE INPUT TEXT...
  local case=$1 input=$2 code=0
  shift 2
  "$data" cifar10 --input "$input" --output "$work/out-$case" --split-count 2 > "$work/$case.log" 2>&1 || code=$?
  cat "$work/$case.log"
  [ "$code" -eq 3 ] || fail "$case: exit code $code, expected 3"
  for text in "$@"; do grep -qF -- "$text" "$work/$case.log" || fail "$case: message does not mention '$text'"; done
  [ ! -e "$work/out-$case" ] || fail "$case: the output folder was created"
}
write_sample "$work/bad-size"
head -c 5000 /dev/zero >> "$work/bad-size/data_batch_2.bin"
expect_refused bad_size "$work/bad-size" data_batch_2.bin "size 17292 bytes" "3073"

write_sample "$work/bad-label"
printf '\x0c' | dd of="$work/bad-label/test_batch.bin" bs=1 seek=$((2 * 3073)) conv=notrunc status=none
expect_refused bad_label "$work/bad-label" test_batch.bin "record 2" "label 12"

write_sample "$work/missing"
rm "$work/missing/data_batch_5.bin"
expect_refused missing_file "$work/missing" "missing data_batch_5.bin" "test_batch.bin" "cifar-10-batches-bin/"

code=0
"$data" cifar-100 --input "$work/in" --output "$work/out-x" --split-count 1 2> "$work/unknown.log" || code=$?
[ "$code" -eq 2 ] || fail "unknown dataset: exit code $code, expected 2"
grep -q "cifar10" "$work/unknown.log" || fail "unknown dataset: the message does not list cifar10"
# Not `--help | grep -q`: grep stops reading at the first match and pipefail would report the writer's SIGPIPE.
grep -q "cifar10" <("$data" --help) || fail "--help does not mention cifar10"

rm -rf "$work"
echo "PASS: pstrain-data cifar10"
