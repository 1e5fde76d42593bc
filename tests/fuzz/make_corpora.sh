#!/usr/bin/env bash
# Regenerates the committed seed corpora in tests/fuzz/corpus/ from real files (kept small: a few images, not
# the 60000). Needs Fashion-MNIST (dataset-fashion-mnist) and a PSTRAIN_FUZZ build (BUILD_DIR, default
# build-asan) for pstrain-data and fuzz_make_seeds. Run it by hand after a format change; CI only reads the corpora.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD_DIR:-build-fuzz}
pstrain_bin=${PSTRAIN_BIN:-build/bin/pstrain}
mnist=${PSTRAIN_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
corpus=tests/fuzz/corpus
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "${corpus:?}"/fuzz_*
mkdir -p "$corpus"/{fuzz_idx,fuzz_cifar,fuzz_shard,fuzz_text,fuzz_arrays,fuzz_checkpoint,fuzz_pass_folder,fuzz_ini,fuzz_search_space}

# IDX: the real headers with the first images/labels, raw and gzip'd (the header counts say 3 / 10).
/usr/bin/python3 - "$mnist" "$corpus/fuzz_idx" <<'PY'
import gzip, struct, sys
src, out = sys.argv[1], sys.argv[2]
images = gzip.open(f"{src}/t10k-images-idx3-ubyte.gz").read()
labels = gzip.open(f"{src}/t10k-labels-idx1-ubyte.gz").read()
small_images = struct.pack(">IIII", 0x803, 3, 28, 28) + images[16:16 + 3 * 784]
small_labels = struct.pack(">II", 0x801, 10) + labels[8:18]
tiny_images = struct.pack(">IIII", 0x803, 2, 2, 3) + bytes(images[16 + 300:16 + 312])
for name, data in [("images-3", small_images), ("labels-10", small_labels), ("images-2x2x3", tiny_images)]:
    open(f"{out}/{name}", "wb").write(data)
    open(f"{out}/{name}.gz", "wb").write(gzip.compress(data, mtime=0))
PY

# CIFAR-10 has no Debian package: two records in its binary layout, with real (Fashion-MNIST) pixel bytes.
/usr/bin/python3 - "$mnist" "$corpus/fuzz_cifar" <<'PY'
import gzip, sys
src, out = sys.argv[1], sys.argv[2]
pixels = gzip.open(f"{src}/t10k-images-idx3-ubyte.gz").read()[16:16 + 2 * 3072]
open(f"{out}/two-records", "wb").write(bytes([3]) + pixels[:3072] + bytes([9]) + pixels[3072:])
open(f"{out}/one-record", "wb").write(bytes([0]) + pixels[:3072])
PY

# Shards: pstrain-data's own output for 2 training samples and 2 test samples.
"$build/bin/pstrain-data" fashion-mnist --input "$mnist" --output "$work/shards" --split-count 1 --limit 2 \
  --test-limit 2 > /dev/null
cp "$work/shards/train-00000.h5" "$corpus/fuzz_shard/train-2-samples.h5"
"$build/bin/pstrain-data" fashion-mnist --input "$mnist" --output "$work/shards1" --split-count 1 --limit 1 \
  --test-limit 1 > /dev/null
cp "$work/shards1/train-00000.h5" "$corpus/fuzz_shard/train-1-sample.h5"
# Text: the first sentences of the unit tests' fixture, a vocab.txt, and a token shard of 3 windows.
fixture="$(dirname "$0")/../unit/data/text"
head -5 "$fixture/train.txt" > "$corpus/fuzz_text/sentences.txt"
printf '<unk>\n<s>\n<e>\nthe\ncaf\xc3\xa9\n' > "$corpus/fuzz_text/vocab.txt"
"$build/bin/pstrain-data" text --train "$fixture/train.txt" --test "$fixture/test.txt" --output "$work/text" \
  --split-count 1 --ngram 3 --limit 3 --test-limit 3 > /dev/null
cp "$work/text/train-00000.h5" "$corpus/fuzz_shard/token-3-windows.h5"

# A user's own arrays as NumPy writes them (pstrain-data npz, npy, csv): .npy files of each kind of element, .npz
# archives stored and deflated, and a CSV with a header.
/usr/bin/python3 - "$corpus/fuzz_arrays" <<'PY'
import sys
import numpy as np
out = sys.argv[1]
x = np.arange(6, dtype=np.float32).reshape(2, 3) / 5
np.save(f"{out}/features-f4.npy", x)
np.save(f"{out}/features-u1.npy", np.arange(12, dtype=np.uint8).reshape(2, 2, 3))
np.save(f"{out}/labels-i8.npy", np.array([0, 2], dtype=np.int64))
np.savez(f"{out}/stored.npz", x=x, y=np.array([1, 0], dtype=np.int32))
np.savez_compressed(f"{out}/deflated.npz", x_train=x.astype(np.float64), y_train=np.array([1, 1], dtype=np.uint8))
with open(f"{out}/samples.csv", "w") as f:
    f.write("label,a,b\n1,0.5,-2\n0,1e-3,+4\n")
PY

# Checkpoints and pass folders for the fuzz targets' small model, written by pstrain's writers.
"$build/fuzz/fuzz_make_seeds" "$corpus"

# INI: a hand-written file with comments, and (below) the resolved configuration a real run saves.
cat > "$corpus/fuzz_ini/hand-written.ini" <<'INI'
# a hand-written configuration
data-dir = /data/fashion-mnist
output-dir = /runs/one
mode = ssp
staleness = 2
hidden = 64,32
lr = 0.05
optimizer = adam
dispatch = dynamic
chunk-size = 256
shuffle = false
INI

# Search spaces: the README's example and the sweep test's.
sed -n '/^```ini$/,/^```$/p' lib/sweep/README.md | sed '1d;$d' > "$corpus/fuzz_search_space/readme.ini"
sed -n "/<<'SPACE'/,/^SPACE$/p" tests/sweep/sweep_local_test.sh | sed '1d;$d' > "$corpus/fuzz_search_space/sweep-test.ini"
printf '[grid]\nlr = 0.1 | 0.2\n[random]\nseed = int(1, 9)\nbatch-size = choice(32 | 64)\n' \
  > "$corpus/fuzz_search_space/small.ini"
if [ -x "$pstrain_bin" ]; then
  "$pstrain_bin" --data-dir "$work/shards" --output-dir "$work/run" --passes 1 --hidden 8 --batch-size 2 \
    --eval-batch-size 2 > /dev/null
  cp "$(find "$work/run" -name config.ini | head -1)" "$corpus/fuzz_ini/resolved.ini"
else
  echo "make_corpora: no $pstrain_bin: fuzz_ini/resolved.ini not written"
fi
du -sh "$corpus"
