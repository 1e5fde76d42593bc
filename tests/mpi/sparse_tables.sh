#!/usr/bin/env bash
# Row tables held by the servers row by row (--table-exchange sparse, ps/table_plan.h), on a small NPLM over the
# text fixture. One case per call: sparse_tables.sh CASE NP PATH
#   equals_dense  sync SGD: the table updated by rows gives the same bits as the table shipped densely (the row
#                 sum and update repeat the dense expressions); two sparse runs with Adagrad are bit-identical.
#                 The metrics of a language model: perplexities per pass (exp of the mean losses), and
#                 OUTPUT/best-valid pointing at the pass with the lowest validation perplexity.
#   async_learns  async and SSP (staleness 1) with the table by rows learn: the test perplexity ends well below
#                 the vocabulary size (what a model that learned nothing scores), staleness is reported.
#   init_from     --init-from a pass folder loads the table, each server its rows: a run started from A's last
#                 pass folder that learns nothing (SGD at lr 1e-30) ends with A's bits, and a fresh one does not;
#                 the pass folder holds the vocabulary beside the table.
#   resume        resumed from a mid-pass checkpoint, on NP ranks and on NP+1 ranks with one more server than NP
#                 ranks have (NP/2, the default), the rows re-dealt: the run ends with the bits of the
#                 uninterrupted run (NP 3: 1 -> 2 servers; NP 4: 2 -> 3 servers).
source "$(dirname "$0")/common.sh"
case_name=$1 np=$2 path=$3
work=$(new_work_dir "sparse_tables_${case_name}_np${np}_${path}")
text_fixture="$(dirname "$0")/../unit/data/text"
"$BIN_DIR/pstrain-data" text --train "$text_fixture/train.txt" --valid "$text_fixture/valid.txt" \
  --test "$text_fixture/test.txt" --output "$work/text" --split-count 4 --ngram 4 > "$work/convert.log" 2>&1 \
  || { cat "$work/convert.log"; fail "convert"; }

nplm() {  # nplm RANKS OUT [flags...]
  local ranks=$1 out=$2
  shift 2
  run_mpi "$ranks" "$path" 120 "$BIN_DIR/pstrain" --data-dir "$work/text" --output-dir "$out" --model nplm \
    --embedding-dim 8 --hidden 16 --direct true --batch-size 16 --passes 2 --seed 5 "$@" > "$out.log" 2>&1 \
    || { cat "$out.log"; fail "run $out"; }
}
expect_rows_on_servers() { grep -q "is held by rows on the servers" "$1.log" || fail "$1 did not hold the table by rows"; }
exact() { "$TOOLS_DIR/compare_parameters" "$1/pass-00001" "$2/pass-00001" --exact || fail "$3"; }

case "$case_name" in
  equals_dense)
    nplm "$np" "$work/sparse" --optimizer sgd --lr 0.2 --table-exchange sparse
    nplm "$np" "$work/dense" --optimizer sgd --lr 0.2 --table-exchange dense
    expect_rows_on_servers "$work/sparse"
    grep -q "is held by rows" "$work/dense.log" && fail "the dense run held the table by rows"
    exact "$work/sparse" "$work/dense" "sparse and dense SGD differ"
    nplm "$np" "$work/adagrad-1" --optimizer adagrad --lr 0.1
    nplm "$np" "$work/adagrad-2" --optimizer adagrad --lr 0.1
    expect_rows_on_servers "$work/adagrad-1"
    exact "$work/adagrad-1" "$work/adagrad-2" "two sparse Adagrad runs differ"
    python3 - "$work/adagrad-1" <<'PY' || fail "perplexities or best-valid wrong"
import json, math, os, sys
out = sys.argv[1]
lines = [json.loads(l) for l in open(os.path.join(out, "metrics.jsonl")) if l.strip()]
assert len(lines) == 2, lines
for m in lines:
    for split in ("train", "test"):
        assert math.isclose(m[split + "_perplexity"], math.exp(m[split + "_loss"]), rel_tol=1e-5), (split, m)
    assert m["valid_perplexity"] > 1 and m["words_per_sec"] > 0, m
best = min(lines, key=lambda m: m["valid_perplexity"])["pass"]
link = os.readlink(os.path.join(out, "best-valid"))
assert link == "pass-%05d" % best, (link, best)
print("perplexities per pass and best-valid ->", link)
PY
    echo "PASS: sparse = dense (SGD) and sparse runs repeat (Adagrad) on $np ranks, $path"
    ;;
  async_learns)
    vocab=$(wc -l < "$work/text/vocab.txt")
    for mode in async ssp; do
      nplm "$np" "$work/$mode" --mode "$mode" --staleness 1 --optimizer adagrad --lr 0.2
      expect_rows_on_servers "$work/$mode"
      python3 - "$work/$mode/metrics.jsonl" "$vocab" <<'PY' || fail "$mode with rows on the servers did not learn"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
last, vocab = lines[-1], int(sys.argv[2])
print("test perplexity per pass", [round(m["test_perplexity"], 2) for m in lines], "vocabulary", vocab,
      "staleness max", last["staleness_max"])
assert last["test_perplexity"] < 0.5 * vocab, last
assert "staleness_mean" in last and last["samples_missing"] == 0 and last["samples_repeated"] == 0, last
PY
    done
    echo "PASS: async and ssp learn with the table held by rows ($np ranks, $path)"
    ;;
  resume)
    flags=(--optimizer momentum --lr 0.1 --checkpoint-every-steps 7 --keep-checkpoints 0)
    nplm "$np" "$work/reference" "${flags[@]}"
    expect_rows_on_servers "$work/reference"
    # Step 7 lies in the middle of pass 0 (a pass has ~80 steps of 2 x 16 windows).
    middle="$work/reference/checkpoints/ckpt-0000000007"
    [ -d "$middle" ] || fail "no checkpoint at step 7: $(ls "$work/reference/checkpoints")"
    for ranks in "$np" $((np + 1)); do
      out="$work/resumed-np$ranks"
      mkdir -p "$out"
      servers=$((np / 2))
      [ "$ranks" -eq "$np" ] || servers=$((servers + 1))
      nplm "$ranks" "$out" "${flags[@]}" --resume "$middle" --num-pservers "$servers"
      grep -q "resuming from" "$out.log" || fail "$out did not resume"
      exact "$out" "$work/reference" "resumed on $ranks ranks differs from the uninterrupted run"
    done
    echo "PASS: resumed mid-pass with row tables on $np and $((np + 1)) ranks, $((np / 2)) -> $((np / 2 + 1)) servers ($path): bit-identical"
    ;;
  init_from)
    nplm "$np" "$work/first" --optimizer adagrad --lr 0.1
    expect_rows_on_servers "$work/first"
    cmp -s "$work/first/pass-00001/vocab.txt" "$work/text/vocab.txt" || fail "the pass folder lacks the vocabulary"
    nplm "$np" "$work/from-first" --optimizer sgd --lr 1e-30 --init-from "$work/first/pass-00001"
    nplm "$np" "$work/fresh" --optimizer sgd --lr 1e-30
    exact "$work/from-first" "$work/first" "the run started from the pass folder does not hold its parameters"
    "$TOOLS_DIR/compare_parameters" "$work/fresh/pass-00001" "$work/first/pass-00001" --exact > /dev/null 2>&1 \
      && fail "a fresh run ended with the trained parameters: the comparison cannot fail"
    echo "PASS: --init-from loads the table by rows ($np ranks, $path); the pass folder carries vocab.txt"
    ;;
  *) fail "unknown case $case_name" ;;
esac
