#!/usr/bin/env bash
# pstrain-data criteo, movielens and synthetic-ctr end to end:
#  - synthetic-ctr writes the same text for the same seed whatever the thread count, a data folder with a MANIFEST,
#    ctr_fields.tsv and the Bayes metrics; criteo converting that text gives the same per-field statistics and, read
#    back with h5dump where installed, the same ids, labels and dense features as the direct conversion;
#  - synthetic-ctr's --zipf-exponent, --new-ids-every and --new-id-share: the same lines on 1 and 2 threads, stated in
#    ctr_conversion.txt; out of range, exit 2 naming the flag and nothing written;
#  - a file without labels (39 columns) is accepted as --test-input;
#  - bad input (a short line, a non-hex id, a label 2, a non-integer, an empty file, a truncated .gz) exits 3 naming
#    the file and the line, and leaves no folder; --skip-bad-lines converts and counts the bad lines;
#  - movielens on the real ml-latest-small (skipped when ../shared/data/movielens-small is not there).
# CTest passes BIN_DIR, WORK_ROOT and MOVIELENS.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }

work="$WORK_ROOT/data_cli_ctr"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
data="$BIN_DIR/pstrain-data"
[ -x "$data" ] || fail "$data is not built"

# --- synthetic-ctr: determinism, folder, metrics ---
"$data" synthetic-ctr --lines 30000 --seed 7 --threads 2 --output synth --text-output synth.txt.gz \
  --shard-samples 10000 > synth.log 2>&1 || { cat synth.log; fail "synthetic-ctr failed"; }
"$data" synthetic-ctr --lines 30000 --seed 7 --threads 1 --text-output one-thread.txt > one.log 2>&1 ||
  { cat one.log; fail "synthetic-ctr --threads 1 failed"; }
cmp <(zcat synth.txt.gz) one-thread.txt || fail "the same seed gave other lines with another thread count"
[ "$(wc -l < one-thread.txt)" -eq 30000 ] || fail "expected 30000 lines"
"$data" synthetic-ctr --lines 2000 --seed 8 --text-output seed8.txt > /dev/null 2>&1
cmp -s <(head -n 2000 one-thread.txt) seed8.txt && fail "seeds 7 and 8 gave the same lines"
grep -q "bayes test AUC: 0\.[6-9]" synth.log || { cat synth.log; fail "no plausible Bayes AUC printed"; }
for file in MANIFEST ctr_fields.tsv ctr_conversion.txt train-00000.h5 train-00001.h5 train-00002.h5 test.h5; do
  [ -f "synth/$file" ] || fail "synth/$file is missing"
done
[ ! -e synth/train-00003.h5 ] || fail "27000 train lines in shards of 10000 make 3 shards"
grep -q "bayes test AUC" synth/ctr_conversion.txt || fail "the Bayes metrics are not recorded"
grep -q "^C3	" synth/ctr_fields.tsv || fail "ctr_fields.tsv has no C3 line"
grep -q "Zipf 1.1 ids" synth/ctr_conversion.txt || fail "the default exponent is not recorded"
grep -q "^new ids: none" synth/ctr_conversion.txt || fail "the fixed id space is not recorded"

# --- synthetic-ctr's generator flags ---
grow_flags=(--lines 6000 --seed 7 --zipf-exponent 0.5 --new-ids-every 300 --new-id-share 0.4)
"$data" synthetic-ctr "${grow_flags[@]}" --threads 2 --output grow --text-output grow-2.txt > grow.log 2>&1 ||
  { cat grow.log; fail "synthetic-ctr --new-ids-every failed"; }
"$data" synthetic-ctr "${grow_flags[@]}" --threads 1 --text-output grow-1.txt > /dev/null 2>&1
cmp grow-1.txt grow-2.txt || fail "with new ids, another thread count gave other lines"
cmp -s <(head -n 6000 one-thread.txt) grow-1.txt && fail "--zipf-exponent and --new-ids-every changed nothing"
grep -q "Zipf 0.5 ids" grow/ctr_conversion.txt || { cat grow/ctr_conversion.txt; fail "the exponent is not recorded"; }
grep -q "^new ids: every 300 lines for a share 0.4 of each field's ranks" grow/ctr_conversion.txt ||
  { cat grow/ctr_conversion.txt; fail "the growing id space is not recorded"; }
expect_usage() {  # expect_usage PATTERN FLAGS...: synthetic-ctr with FLAGS exits 2 with the message, writes nothing
  local pattern=$1 code=0
  shift
  "$data" synthetic-ctr --lines 100 --output refused "$@" > usage.log 2>&1 || code=$?
  [ "$code" -eq 2 ] || { cat usage.log; fail "$*: exit $code, expected 2"; }
  grep -q -- "$pattern" usage.log || { cat usage.log; fail "$*: message does not match '$pattern'"; }
  [ ! -e refused ] || fail "$*: refused was written"
}
expect_usage "--zipf-exponent must be a number, 0 < value <= 10, got '0'" --zipf-exponent 0
expect_usage "--zipf-exponent must be a number, 0 < value <= 10, got '12'" --zipf-exponent 12
expect_usage "--zipf-exponent must be a number, 0 < value <= 10, got 'flat'" --zipf-exponent flat
expect_usage "--new-ids-every must be a whole number of lines, got '-5'" --new-ids-every -5
expect_usage "--new-id-share must be a number, 0 < value <= 1, got '1.5'" --new-ids-every 10 --new-id-share 1.5
expect_usage "--new-id-share needs --new-ids-every N" --new-id-share 0.3

# --- criteo on the generated text, on 1 thread where synthetic-ctr used 2: the same shards' contents ---
"$data" criteo --input synth.txt.gz --output conv --shard-samples 10000 --threads 1 > conv.log 2>&1 ||
  { cat conv.log; fail "criteo on the synthetic text failed"; }
cmp synth/ctr_fields.tsv conv/ctr_fields.tsv || fail "criteo's field statistics differ from synthetic-ctr's"
grep -q "lines per second" conv/ctr_conversion.txt || fail "no lines/s in the report"
if command -v h5dump > /dev/null; then
  for shard in train-00001.h5 test.h5; do
    for dataset in /dense /labels /ids/C3/values /ids/C6/offsets /ids/C24/values; do
      cmp <(h5dump -d "$dataset" "synth/$shard" | tail -n +3) <(h5dump -d "$dataset" "conv/$shard" | tail -n +3) ||
        fail "$shard $dataset differs between the direct and the text conversion"
    done
  done
fi
"$data" criteo --input synth.txt.gz --output conv > again.log 2>&1 && fail "a second conversion into conv was accepted"
grep -q "already holds a conversion" again.log || fail "the refusal does not say why"

# --- a test file without labels ---
head -n 20000 one-thread.txt > train.txt
tail -n 1000 one-thread.txt | cut -f 2- > unlabeled.txt
"$data" criteo --input train.txt --test-input unlabeled.txt --output predict > predict.log 2>&1 ||
  { cat predict.log; fail "a 39-column --test-input was refused"; }
grep -q "test 1000" predict/ctr_conversion.txt || fail "the unlabeled test samples are not all there"
"$data" criteo --input unlabeled.txt --output nolabels > nolabels.log 2>&1 && fail "an unlabeled --input was accepted"

# --- bad input: exit 3, file and line named, no folder ---
head -n 5 one-thread.txt > good.txt
expect_bad() {  # expect_bad NAME MESSAGE-PATTERN: converts NAME, expects exit 3 and the message
  local name=$1 pattern=$2 code=0
  "$data" criteo --input "$name" --output "out-$name" > "$name.log" 2>&1 || code=$?
  [ "$code" -eq 3 ] || { cat "$name.log"; fail "$name: exit $code, expected 3"; }
  grep -q -- "$pattern" "$name.log" || { cat "$name.log"; fail "$name: message does not match '$pattern'"; }
  [ ! -e "out-$name" ] || fail "$name: out-$name was left behind"
  echo "refused: $(cat "$name.log")"
}
{ cat good.txt; printf '0\t1\t2\n'; cat good.txt; } > short.txt
expect_bad short.txt "short.txt:6: expected 40 tab-separated columns"
{ cat good.txt; head -n 1 good.txt | awk -F'\t' 'BEGIN{OFS="\t"} {$20="nothex"; print}'; } > nothex.txt
expect_bad nothex.txt "nothex.txt:6: column 20 (C6): 'nothex' is not a hexadecimal id"
{ cat good.txt; head -n 1 good.txt | awk -F'\t' 'BEGIN{OFS="\t"} {$1="2"; print}'; } > label.txt
expect_bad label.txt "label.txt:6: column 1 (label): label '2' is not 0 or 1"
{ cat good.txt; head -n 1 good.txt | awk -F'\t' 'BEGIN{OFS="\t"} {$4="3.5"; print}'; } > integer.txt
expect_bad integer.txt "integer.txt:6: column 4 (I3): '3.5' is not a 64-bit integer"
: > empty.txt
expect_bad empty.txt "empty.txt: empty file"
head -c 200000 synth.txt.gz > truncated.gz
expect_bad truncated.gz "truncated.gz: truncated gzip data"

# --skip-bad-lines: converted, the bad lines counted
cat short.txt nothex.txt label.txt good.txt good.txt > mixed.txt
"$data" criteo --input mixed.txt --output skipped --skip-bad-lines --test-fraction 0.2 > skipped.log 2>&1 ||
  { cat skipped.log; fail "--skip-bad-lines failed"; }
grep -q "bad lines skipped: 3" skipped/ctr_conversion.txt || { cat skipped/ctr_conversion.txt; fail "not 3 bad lines"; }
grep -q "bad line: mixed.txt:6:" skipped/ctr_conversion.txt || fail "the first bad line is not named"

# --- movielens on the real data ---
if [ -f "$MOVIELENS/ratings.csv" ]; then
  "$data" movielens --input "$MOVIELENS" --output movielens --split-count 2 > movielens.log 2>&1 ||
    { cat movielens.log; fail "movielens failed"; }
  grep -q "100004 ratings of 671 users" movielens/ctr_conversion.txt || fail "movielens report: counts"
  grep -q "^user	671	0 (exact)" movielens/ctr_fields.tsv || { cat movielens/ctr_fields.tsv; fail "user count"; }
  [ -f movielens/train-00001.h5 ] && [ -f movielens/test.h5 ] || fail "movielens shards missing"
  "$data" movielens --input "$work" --output movielens-bad > mlbad.log 2>&1 && fail "a folder without ratings.csv"
  grep -q "movies.csv: cannot open" mlbad.log || { cat mlbad.log; fail "the missing file is not named"; }
else
  echo "skipped movielens: $MOVIELENS is not there"
fi
echo "PASS"
