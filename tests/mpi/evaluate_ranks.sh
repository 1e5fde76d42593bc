#!/usr/bin/env bash
# `pstrain evaluate` shared among MPI ranks (lib/inference/evaluate_on_ranks.h) gives one process's figures:
# the sample count, accuracy, per-class accuracy and confusion matrix exactly, the loss and perplexity within 1e-9
# relative (the ranks' loss sums are added in another order). One case per call: evaluate_ranks.sh CASE NP PATH
#   mlp           the reference MLP pass folder (the mpi_data fixture), NP ranks each scoring a part of the test
#                 shard in batches of 64 (2000 samples: a short last batch, shares of unequal length).
#   nplm_servers  a small NPLM trained here: NP ranks each scoring a part, then NP ranks of which 1 holds the
#                 embedding table by rows (--num-pservers 1) and the others fetch the rows each batch needs; with
#                 NP >= 4 also 2 servers.
#   ctr           a small DLRM trained here on synthetic click data (embedding_bag tables of hashed bags, loss=bce;
#                 4,150 lines: 415 test samples, batches of 64: 7 batches, shares of 3, 2 and 2 batches): rank 0
#                 gathers every evaluator's predictions, so auc, logloss, ne and calibration are one process's
#                 byte for byte (the JSON's text), on NP evaluators, on NP ranks of which 1 holds the tables by rows
#                 (each fetches the hashed rows of its bags), and on NP + 1 ranks of which 2 hold them; a pass
#                 folder without a table only the servers read, and a data folder without test data, end every rank
#                 with one message.
#   bad_input     failures a user can cause end every rank with one message and the documented exit code, no
#                 JSON written, within seconds: more servers than ranks allow, servers for a model without row
#                 tables, and a pass folder whose table only the server reads is missing (one rank fails).
source "$(dirname "$0")/common.sh"
case_name=$1 np=$2 path=$3
work=$(new_work_dir "evaluate_ranks_${case_name}_np${np}_${path}")

# same_figures ONE MANY SERVERS: MANY (from NP ranks, SERVERS of them serving) has ONE's figures.
same_figures() {
  python3 - "$1" "$2" "$np" "$3" <<'PY' || fail "figures of $2 differ from one process's ($1)"
import json, math, sys
one, many = (json.load(open(p)) for p in sys.argv[1:3])
ranks, servers = int(sys.argv[3]), int(sys.argv[4])
assert "ranks" not in one, one
assert many.pop("ranks") == ranks and many.pop("servers") == servers, many
for key in set(one) | set(many):
    if key == "pass_folder":
        continue
    if key in ("loss", "perplexity"):
        assert math.isclose(one[key], many[key], rel_tol=1e-9, abs_tol=0), (key, one[key], many[key])
    else:
        assert one[key] == many[key], (key, one[key], many[key])
print("same figures: samples %d, loss %.17g vs %.17g, accuracy %s" %
      (one["samples"], one["loss"], many["loss"], one["accuracy"]))
PY
}
one_process() {  # one_process PASS OUT [flags...]
  local pass=$1 out=$2
  shift 2
  timeout 60 "$BIN_DIR/pstrain" evaluate "$pass" --output "$out" "$@" > "$out.log" 2>&1 || { cat "$out.log"; fail "$out"; }
}
on_ranks() {  # on_ranks PASS OUT [flags...]
  local pass=$1 out=$2
  shift 2
  run_mpi "$np" "$path" 60 "$BIN_DIR/pstrain" evaluate "$pass" --output "$out" "$@" > "$out.log" 2>&1 \
    || { cat "$out.log"; fail "$out on $np ranks"; }
  [ "$(grep -c '^samples ' "$out.log")" = 1 ] || fail "$out: expected the figures printed once: $(cat "$out.log")"
}
# expect_failure CODE PATTERN ARGS...: every rank ends with CODE, one error line naming PATTERN, no JSON.
expect_failure() {
  local code=$1 pattern=$2 status=0
  shift 2
  run_mpi "$np" "$path" 30 "$BIN_DIR/pstrain" evaluate "$@" --output "$work/failed.json" > "$work/failed.log" 2>&1 \
    || status=$?
  [ "$status" = "$code" ] || fail "evaluate $*: exit $status, expected $code: $(cat "$work/failed.log")"
  [ "$(grep -c 'pstrain: error' "$work/failed.log")" = 1 ] || fail "evaluate $*: not one message: $(cat "$work/failed.log")"
  grep -q -- "$pattern" "$work/failed.log" || fail "evaluate $*: does not say '$pattern': $(cat "$work/failed.log")"
  [ ! -e "$work/failed.json" ] || fail "evaluate $*: wrote a JSON"
}
small_nplm() {  # small_nplm OUT: one pass of a small NPLM on the text fixture, its pass folder OUT/pass-00000
  local text_fixture
  text_fixture="$(dirname "$0")/../unit/data/text"
  "$BIN_DIR/pstrain-data" text --train "$text_fixture/train.txt" --valid "$text_fixture/valid.txt" \
    --test "$text_fixture/test.txt" --output "$work/text" --split-count 1 --ngram 4 > "$work/convert.log" 2>&1 \
    || { cat "$work/convert.log"; fail "convert"; }
  "$BIN_DIR/pstrain" --data-dir "$work/text" --output-dir "$1" --model nplm --embedding-dim 8 --hidden 16 \
    --direct true --batch-size 16 --passes 1 --seed 5 > "$1.log" 2>&1 || { cat "$1.log"; fail "train the NPLM"; }
}

# same_ctr_figures ONE MANY: MANY's CTR figures are ONE's, the same text in the JSON and on the printed line.
same_ctr_figures() {
  local key
  for key in auc logloss ne calibration; do
    [ "$(grep "\"$key\":" "$1")" = "$(grep "\"$key\":" "$2")" ] \
      || fail "$key of $2 differs from one process's: $(grep "\"$key\":" "$1") vs $(grep "\"$key\":" "$2")"
  done
  [ "$(grep -o ' auc .*' "$1.log")" = "$(grep -o ' auc .*' "$2.log")" ] \
    || fail "printed CTR figures of $2 differ: $(grep -o ' auc .*' "$1.log") vs $(grep -o ' auc .*' "$2.log")"
  echo "same CTR figures as one process: $(grep -o ' auc .*' "$2.log")"
}
small_dlrm() {  # small_dlrm OUT: one pass of a small DLRM on synthetic click data, its pass folder OUT/pass-00000
  "$BIN_DIR/pstrain-data" synthetic-ctr --lines 4150 --seed 3 --output "$work/ctr" --split-count 1 \
    > "$work/convert.log" 2>&1 || { cat "$work/convert.log"; fail "synthetic-ctr"; }
  cat > "$work/dlrm.model" <<'MODEL'
b1 dense units=8 inputs=input
b1a relu
c0_12 embedding_bag fields=0-12 rows=4096 dim=8
c13_25 embedding_bag fields=13-25 rows=4096 dim=8
x dot_interaction inputs=b1a,c0_12,c13_25
t1 dense units=8
t1a relu
logit dense units=1 loss=bce
MODEL
  "$BIN_DIR/pstrain" --data-dir "$work/ctr" --output-dir "$1" --model-file "$work/dlrm.model" --batch-size 64 \
    --passes 1 --optimizer adagrad --lr 0.05 --seed 9 > "$1.log" 2>&1 || { cat "$1.log"; fail "train the DLRM"; }
}

case "$case_name" in
  ctr)
    small_dlrm "$work/dlrm"
    pass="$work/dlrm/pass-00000"
    one_process "$pass" "$work/one.json"
    grep -q '"samples": 415,' "$work/one.json" || fail "expected 415 test samples: $(cat "$work/one.json")"
    grep -q '"auc": 0\.' "$work/one.json" || fail "no AUC: $(cat "$work/one.json")"
    on_ranks "$pass" "$work/many.json"
    same_figures "$work/one.json" "$work/many.json" 0
    same_ctr_figures "$work/one.json" "$work/many.json"
    on_ranks "$pass" "$work/served.json" --num-pservers 1
    same_figures "$work/one.json" "$work/served.json" 1
    same_ctr_figures "$work/one.json" "$work/served.json"
    np=$((np + 1)) on_ranks "$pass" "$work/served2.json" --num-pservers 2  # 2 servers, the rows dealt by r mod 2
    np=$((np + 1)) same_figures "$work/one.json" "$work/served2.json" 2
    same_ctr_figures "$work/one.json" "$work/served2.json"
    # Only the servers read the tables: a folder without one fails on them, and every rank ends.
    cp -r "$pass" "$work/no-table"
    rm "$work/no-table/MANIFEST"
    /usr/bin/python3 -c 'import h5py, sys; f = h5py.File(sys.argv[1], "r+"); del f["c13_25.weight"]; f.close()' \
      "$work/no-table/parameters.h5"
    expect_failure 3 "c13_25.weight" "$work/no-table" --num-pservers 1
    mkdir -p "$work/no-test"
    expect_failure 3 "has no test.h5" "$pass" --data-dir "$work/no-test"
    echo "PASS: evaluate of a click model on $np ranks ($path), also with its tables on 1 and 2 servers:"
    echo "      one process's AUC, logloss, NE and calibration to the byte"
    ;;
  mlp)
    one_process "$REFERENCE_PASS" "$work/one.json" --data-dir "$DATA_DIR" --batch-size 64
    on_ranks "$REFERENCE_PASS" "$work/many.json" --data-dir "$DATA_DIR" --batch-size 64
    same_figures "$work/one.json" "$work/many.json" 0
    echo "PASS: evaluate on $np ranks ($path) = one process (MLP)"
    ;;
  nplm_servers)
    small_nplm "$work/lm"
    one_process "$work/lm/pass-00000" "$work/one.json" --batch-size 16
    on_ranks "$work/lm/pass-00000" "$work/many.json" --batch-size 16
    same_figures "$work/one.json" "$work/many.json" 0
    on_ranks "$work/lm/pass-00000" "$work/served.json" --batch-size 16 --num-pservers 1
    same_figures "$work/one.json" "$work/served.json" 1
    if [ "$np" -ge 4 ]; then  # the rows dealt to 2 servers (row r on server r mod 2)
      on_ranks "$work/lm/pass-00000" "$work/served2.json" --batch-size 16 --num-pservers 2
      same_figures "$work/one.json" "$work/served2.json" 2
    fi
    echo "PASS: evaluate on $np ranks ($path), also with the table on servers = one process (NPLM)"
    ;;
  bad_input)
    expect_failure 2 "leaves no rank to evaluate" "$REFERENCE_PASS" --data-dir "$DATA_DIR" --num-pservers "$np"
    expect_failure 2 "has no row table" "$REFERENCE_PASS" --data-dir "$DATA_DIR" --num-pservers 1
    small_nplm "$work/lm"
    # A folder without its table: an older one (no MANIFEST, taken on its done file) with embed.weight removed.
    # Only the server reads the table; the evaluators have all they read.
    cp -r "$work/lm/pass-00000" "$work/no-table"
    rm "$work/no-table/MANIFEST"
    /usr/bin/python3 -c 'import h5py, sys; f = h5py.File(sys.argv[1], "r+"); del f["embed.weight"]; f.close()' \
      "$work/no-table/parameters.h5"
    expect_failure 3 "embed.weight" "$work/no-table" --num-pservers 1
    echo "PASS: bad input to evaluate on $np ranks ($path) ends every rank with one message"
    ;;
  *) fail "unknown case $case_name" ;;
esac
