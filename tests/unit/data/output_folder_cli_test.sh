#!/usr/bin/env bash
# pstrain-data never overwrites or mixes a conversion, and a conversion that fails leaves nothing behind:
#  - converting into a folder that already holds a conversion (the same command again, another split count, a
#    folder with only a MANIFEST, only test.h5, or the staging folder of a killed conversion) is refused with
#    exit 2 and "already holds a conversion", every file of the folder left as it was;
#  - a folder that exists but holds only other files is converted into, those files untouched;
#  - a conversion that fails midway (a file-size limit: the train shards fit, test.h5 does not) exits 4 naming
#    test.h5 and leaves no shard: the folder it would have created does not exist, an existing folder holds only
#    what it held, and no temporary file or staging folder remains.
# Input: CSV files written here with awk, and the text fixture (vocab.txt is staged like the shards).
# CTest passes BIN_DIR and WORK_ROOT.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }

here="$(cd "$(dirname "$0")" && pwd)"
fixture="$here/text"
work="$WORK_ROOT/data_cli_output_folder"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
data="$BIN_DIR/pstrain-data"
[ -x "$data" ] || fail "$data is not built"

# write_csv FILE ROWS: 64 features and a label in 0..4 per line.
write_csv() {
  awk -v rows="$2" 'BEGIN { for (r = 0; r < rows; ++r) { line = "";
    for (c = 0; c < 64; ++c) line = line sprintf("%.3f,", ((r * 31 + c * 7) % 97) / 97.0);
    print line (r % 5) } }' > "$1"
}
write_csv train.csv 2000  # 2000 x 64 float32: 4 shards of 128 KiB
write_csv test.csv 1500   # test.h5: 375 KiB

snapshot() {  # snapshot FOLDER: FOLDER and everything below it with size, modification time and checksum
  (cd "$1" && find . -printf '%p %s %T@\n' | sort && find . -type f -exec md5sum {} + | sort)
}
contents() {  # contents FOLDER: snapshot without FOLDER's own time (a staging folder made and removed in it)
  (cd "$1" && find . -mindepth 1 -printf '%p %s %T@\n' | sort && find . -type f -exec md5sum {} + | sort)
}
convert_csv() {  # convert_csv OUTPUT [FLAGS...]
  local output=$1
  shift
  "$data" csv --train train.csv --test test.csv --output "$output" --split-count 4 "$@"
}
expect_refused() {  # expect_refused CASE FOLDER COMMAND...: exit 2, the message, FOLDER unchanged
  local name=$1 folder=$2 before code=0
  shift 2
  before=$(snapshot "$folder")
  "$@" > "$name.log" 2>&1 || code=$?
  [ "$code" -eq 2 ] || { cat "$name.log"; fail "$name: exit $code, expected 2"; }
  grep -q "$folder already holds a conversion (.*): pstrain-data never overwrites or mixes conversions" "$name.log" ||
    { cat "$name.log"; fail "$name: the refusal does not name the folder and the rule"; }
  [ "$(snapshot "$folder")" == "$before" ] || fail "$name: $folder changed"
  echo "refused: $(cat "$name.log")"
}
no_leftovers() {  # no_leftovers FOLDER: no temporary file and no staging folder in it
  [ -z "$(find "$1" -name '*.tmp-*' -o -name '.pstrain-data-partial-*')" ] || fail "$1 holds leftovers: $(ls -a "$1")"
}

# --- a conversion, then every way of converting into it again ---
convert_csv first > first.log 2>&1 || { cat first.log; fail "the first conversion failed"; }
no_leftovers first
python3 "$here/check_manifest.py" first train-00000.h5 train-00001.h5 train-00002.h5 train-00003.h5 test.h5 ||
  fail "first: the MANIFEST does not list the files as written"
expect_refused same-command first convert_csv first
expect_refused fewer-shards first "$data" csv --train train.csv --test test.csv --output first --split-count 2
expect_refused other-dataset first "$data" text --train "$fixture/train.txt" --test "$fixture/test.txt" \
  --output first --split-count 1
grep -q "train shards" fewer-shards.log || fail "the refusal does not count the train shards"

mkdir only-manifest && cp first/MANIFEST only-manifest/
expect_refused only-manifest only-manifest convert_csv only-manifest
mkdir only-test && cp first/test.h5 only-test/
expect_refused only-test only-test convert_csv only-test
mkdir -p killed/.pstrain-data-partial-12345 && cp first/train-00000.h5 killed/.pstrain-data-partial-12345/
expect_refused killed killed convert_csv killed

# --- a folder with other files in it: converted into, the files untouched ---
mkdir mine && echo "my notes" > mine/notes.txt && cp train.csv mine/
convert_csv mine > mine.log 2>&1 || { cat mine.log; fail "conversion into a folder of other files failed"; }
[ "$(cat mine/notes.txt)" == "my notes" ] && cmp -s train.csv mine/train.csv || fail "mine: the user's files changed"
[ -f mine/MANIFEST ] && [ -f mine/train-00003.h5 ] || fail "mine: the conversion is not there"
no_leftovers mine

# --- text: vocab.txt is staged and listed with the shards ---
"$data" text --train "$fixture/train.txt" --valid "$fixture/valid.txt" --test "$fixture/test.txt" --output text \
  --split-count 2 --ngram 3 > text.log 2>&1 || { cat text.log; fail "the text conversion failed"; }
grep -q "vocab.txt" text/MANIFEST && grep -q "valid.h5" text/MANIFEST || fail "text: MANIFEST lacks vocab.txt or valid.h5"
no_leftovers text
expect_refused text-again text "$data" text --train "$fixture/train.txt" --test "$fixture/test.txt" --output text \
  --split-count 2 --ngram 3

# --- a conversion that fails midway: the train shards fit under the file-size limit, test.h5 does not ---
convert_limited() {  # convert_limited OUTPUT: exit code of the conversion under a 256 KiB file-size limit
  local code=0
  # SIGXFSZ ignored: a write past the limit fails with EFBIG, as on a full disk, instead of killing the process.
  (trap '' XFSZ && ulimit -f 256 && exec "$data" csv --train train.csv --test test.csv --output "$1" \
    --split-count 4) > "$1.log" 2>&1 || code=$?
  echo "$code"
}
code=$(convert_limited new-folder)
[ "$code" -eq 4 ] || { cat new-folder.log; fail "failed midway: exit $code, expected 4"; }
grep -q "cannot write .*test.h5" new-folder.log || { cat new-folder.log; fail "the failure does not name test.h5"; }
[ ! -e new-folder ] || fail "a conversion that failed left the folder it created: $(ls -a new-folder)"
echo "failed midway: $(cat new-folder.log)"

mkdir existing && echo "my notes" > existing/notes.txt
before=$(contents existing)
code=$(convert_limited existing)
[ "$code" -eq 4 ] || { cat existing.log; fail "failed midway into an existing folder: exit $code, expected 4"; }
[ "$(contents existing)" == "$before" ] || fail "a conversion that failed changed existing/: $(ls -a existing)"
no_leftovers existing
[ -z "$(find . -maxdepth 1 -name "*.tmp-*")" ] || fail "a temporary file was left beside the folder"

echo "PASS: pstrain-data refuses a folder holding a conversion and leaves nothing of a failed one"
