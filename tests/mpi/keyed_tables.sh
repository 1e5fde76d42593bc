#!/usr/bin/env bash
# Tables keyed by the raw id (--table-keys exact, issue 42) in runs of 1 server + 2 trainers (sync unless said) over
# synthetic-ctr lines: a DLRM model file whose two tables read 13 fields each. One case per call:
# keyed_tables.sh CASE NP PATH
#   learns    learns as the hashed tables do (test_auc above chance); two runs give the same bits, and streamed sync
#             steps (--overlap true) the same as one-sided ones; with a cap of 4,096
#             rows a table, admission at the 2nd sighting and a TTL, the servers hold at most the cap
#             (metrics.jsonl: keyed_rows_held = admitted - evicted <= the cap, some evicted, lookups on the default
#             row counted); the pass folder holds each table's ids (keys/<table>, ascending, distinct) and one row
#             each after the default row of zeros; pstrain evaluate of the keyed folder gives the run's test AUC
#   resume    resumed from a checkpoint in the middle of the pass, on one server or on two, it ends with the bits
#             of the uninterrupted run (no cap binds: every id keeps its row); with a cap that binds (evictions),
#             resumed on one server it ends with the uninterrupted run's bits (the index restored as it was), and
#             resumed onto two servers twice, the two runs end with the same bits and hold at most the cap
#   async     --mode async and ssp (2 passes, cap 4,096, admission at the 2nd sighting): learn, every sample once,
#             rows held within the cap, evictions and dropped gradients counted
#   refused   each is one message and a non-zero exit on every rank within seconds, its folder left as it was: a
#             cap smaller than one batch's ids; a cap past the servers' memory (the key index counted); --admit-after without --table-keys exact; --mode geo and allreduce (the
#             rows on the trainers); a run on one rank (no servers)
source "$(dirname "$0")/common.sh"
case_name=$1 np=$2 path=$3
work=$(new_work_dir "keyed_tables_${case_name}_np${np}_${path}")
"$BIN_DIR/pstrain-data" synthetic-ctr --lines 24000 --seed 3 --output "$work/data" --split-count 3 \
  > "$work/convert.log" 2>&1 || { cat "$work/convert.log"; fail "synthetic-ctr"; }
# model ROWS: the DLRM of ctr_training.sh, each table's cap ROWS rows
model() {
  cat > "$work/dlrm-$1.model" <<MODEL
b1 dense units=16 inputs=input
b1a relu
bottom dense units=8
bottoma relu
c0_12 embedding_bag fields=0-12 rows=$1 dim=8
c13_25 embedding_bag fields=13-25 rows=$1 dim=8
x dot_interaction inputs=bottoma,c0_12,c13_25
t1 dense units=16
t1a relu
logit dense units=1 loss=bce
MODEL
}
model 131072  # holds every id of these lines: nothing evicted
model 16384
model 4096
model 512
model 400000000  # past any test machine's memory: 2 tables x 400M rows x (8 floats + Adagrad's 8) x 4 B + the maps
mode=sync passes=1
dlrm() {  # dlrm RANKS OUT ROWS [flags...]: --mode $mode, --passes $passes
  local ranks=$1 out=$2 rows=$3
  shift 3
  run_mpi "$ranks" "$path" 120 "$BIN_DIR/pstrain" --data-dir "$work/data" --output-dir "$out" \
    --model-file "$work/dlrm-$rows.model" --batch-size 64 --passes "$passes" --optimizer adagrad --lr 0.05 --seed 9 \
    --mode "$mode" --table-keys exact "$@" > "$out.log" 2>&1 || { cat "$out.log"; fail "run $out"; }
}
exact() { "$TOOLS_DIR/compare_parameters" "$1/pass-00000" "$2/pass-00000" --exact || fail "$3"; }

case "$case_name" in
  learns)
    dlrm "$np" "$work/a" 16384
    dlrm "$np" "$work/b" 16384
    exact "$work/a" "$work/b" "two keyed runs differ"
    dlrm "$np" "$work/streamed" 16384 --overlap true
    exact "$work/a" "$work/streamed" "streamed sync steps (--overlap true) give other bits"
    dlrm "$np" "$work/capped" 4096 --admit-after 2 --row-ttl-steps 100
    /usr/bin/python3 - "$work/a" "$work/capped" <<'PY' || fail "the keyed runs' figures or pass folder are wrong"
import json, sys, h5py, numpy
for run, cap in ((sys.argv[1], 2 * 16384), (sys.argv[2], 2 * 4096)):
    m = [json.loads(l) for l in open(run + "/metrics.jsonl") if l.strip()][-1]
    print(run.split("/")[-1], {k: v for k, v in m.items() if k.startswith("keyed") or k == "test_auc"})
    assert m["test_auc"] > 0.58, m
    assert m["keyed_rows_held"] == m["keyed_rows_admitted"] - m["keyed_rows_evicted"] <= cap, m
    assert 0 < m["keyed_default_lookups"] < m["keyed_lookups"], m
    with h5py.File(run + "/pass-00000/parameters.h5") as f:
        held = 0
        for table in ("c0_12.weight", "c13_25.weight"):
            keys, rows = f["keys/" + table][:], f[table][:]
            assert (numpy.diff(keys) > 0).all(), table
            assert rows.shape == (len(keys) + 1, 8) and not rows[0].any() and rows[1:].any(), (table, rows.shape)
            held += len(keys)
        assert held == m["keyed_rows_held"], (held, m["keyed_rows_held"])
capped = [json.loads(l) for l in open(sys.argv[2] + "/metrics.jsonl") if l.strip()][-1]
assert capped["keyed_rows_evicted"] > 0, capped
PY
    # pstrain evaluate reads the keyed pass folder (ids not held on the default row) and gets the run's figure.
    "$BIN_DIR/pstrain" evaluate "$work/capped/pass-00000" --output "$work/evaluation.json" > "$work/evaluate.log" 2>&1 \
      || { cat "$work/evaluate.log"; fail "pstrain evaluate of a keyed pass folder"; }
    python3 - "$work/capped/metrics.jsonl" "$work/evaluation.json" <<'PY' || fail "evaluate disagrees with the run"
import json, math, sys
run = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
auc = json.load(open(sys.argv[2]))["auc"]
assert math.isclose(auc, run["test_auc"], rel_tol=1e-5), (auc, run["test_auc"])
print("evaluate's AUC", auc, "= the run's")
PY
    echo "PASS: keyed tables learn, repeat their bits, stay within their cap, write their keys, and evaluate"
    ;;
  resume)
    flags=(--checkpoint-every-steps 40 --keep-checkpoints 0)
    dlrm "$np" "$work/whole" 131072 "${flags[@]}"
    middle="$work/whole/checkpoints/ckpt-0000000040"
    [ -d "$middle" ] || fail "no checkpoint at step 40: $(ls "$work/whole/checkpoints")"
    mkdir -p "$work/same" "$work/wider"
    dlrm "$np" "$work/same" 131072 --resume "$middle"
    grep -q "resuming from" "$work/same.log" || fail "did not resume"
    exact "$work/same" "$work/whole" "resumed on one server, the keyed run ends with other bits"
    [ "$(last_metric "$work/whole/metrics.jsonl" keyed_rows_evicted)" = 0 ] || fail "the uncapped run evicted rows"
    dlrm $((np + 1)) "$work/wider" 131072 --num-pservers 2 --resume "$middle"
    exact "$work/wider" "$work/whole" "resumed on two servers, the keyed run ends with other bits"
    dlrm "$np" "$work/capped" 4096 "${flags[@]}"
    mkdir -p "$work/capped-1" "$work/capped-2" "$work/capped-same"
    dlrm "$np" "$work/capped-same" 4096 --resume "$work/capped/checkpoints/ckpt-0000000040"
    dlrm $((np + 1)) "$work/capped-1" 4096 --num-pservers 2 --resume "$work/capped/checkpoints/ckpt-0000000040"
    dlrm $((np + 1)) "$work/capped-2" 4096 --num-pservers 2 --resume "$work/capped/checkpoints/ckpt-0000000040"
    exact "$work/capped-1" "$work/capped-2" "two resumes of a capped keyed run differ"
    held=$(last_metric "$work/capped-1/metrics.jsonl" keyed_rows_held)
    [ "$held" -le $((2 * 4096)) ] || fail "the resumed capped run holds $held rows"
    [ "$(last_metric "$work/capped-1/metrics.jsonl" keyed_rows_evicted)" -gt 0 ] || fail "the capped run evicted nothing"
    exact "$work/capped-same" "$work/capped" "resumed on one server, the capped keyed run ends with other bits"
    echo "PASS: keyed tables resume exactly on one server and on two; a capped resume is deterministic"
    ;;
  async)
    # Async and ssp: a push's sightings meet at its application; a row given to another id between a trainer's
    # read and its push takes no gradient (counted in keyed_gradients_dropped).
    passes=2
    for mode in async ssp; do
      dlrm "$np" "$work/$mode" 4096 --admit-after 2
      /usr/bin/python3 - "$work/$mode/metrics.jsonl" <<'PY' || fail "keyed $mode"
import json, sys
for m in (json.loads(l) for l in open(sys.argv[1]) if l.strip()):
    print(sys.argv[1].split("/")[-2], {k: v for k, v in m.items() if k.startswith("keyed") or k == "test_auc"})
    assert m["samples_missing"] == 0 and m["samples_repeated"] == 0, m
    assert m["keyed_rows_held"] == m["keyed_rows_admitted"] - m["keyed_rows_evicted"] <= 2 * 4096, m
    assert m["keyed_gradients_dropped"] >= 0 and m["keyed_rows_evicted"] > 0, m
assert m["test_auc"] > 0.58, m
PY
    done
    echo "PASS: keyed tables learn in async and ssp, every sample once, within their cap"
    ;;
  refused)
    # name|ranks|model rows|flags|what the message says
    while IFS='|' read -r name ranks rows flags says; do
      start=$SECONDS
      # shellcheck disable=SC2086  # $flags is a list of flags
      if run_mpi "$ranks" "$path" 60 "$BIN_DIR/pstrain" --data-dir "$work/data" --output-dir "$work/refused-$name" \
        --model-file "$work/dlrm-$rows.model" --batch-size 64 $flags > "$work/refused-$name.log" 2>&1 < /dev/null; then
        fail "a keyed run was accepted ($name)"
      fi
      grep -q "pstrain: error: .*$says" "$work/refused-$name.log" || { cat "$work/refused-$name.log"; fail "$name: no message"; }
      grep -m1 "pstrain: error:" "$work/refused-$name.log"
      [ $((SECONDS - start)) -lt 30 ] || fail "the refusal of $name took $((SECONDS - start)) s"
      [ ! -e "$work/refused-$name" ] || [ -z "$(ls -A "$work/refused-$name")" ] || fail "refused run $name left files"
    done <<ROWS
cap|$np|512|--table-keys exact|may hold 512 rows.*fewer than the distinct ids one meeting
memory|$np|400000000|--table-keys exact|does not fit this node.*key index
flag|$np|16384|--admit-after 2|rules of keyed tables: give them with --table-keys exact
geo|$np|16384|--table-keys exact --mode geo|--mode geo keeps the rows on the trainers
allreduce|$np|16384|--table-keys exact --mode allreduce|--mode allreduce keeps the rows on the trainers
local|1|16384|--table-keys exact|one rank holds its tables whole
ROWS
    echo "PASS: keyed tables are refused where they cannot run, with one message, in seconds"
    ;;
  *) fail "unknown case $case_name" ;;
esac
