#!/bin/bash
# Tables keyed by the raw id (--table-keys exact) used after training, end to end: a 2-pass sync run of 1 server +
# 2 trainers (a DLRM model file, one table pooled by sum and one by mean, a cap of 4,096 rows a table with admission
# and a TTL, so that ids are evicted and some lookups read the default row) writes keyed pass folders; then
#   evaluate    on one process and on 2 ranks without servers: the test AUC is the run's last test_auc
#               (metrics.jsonl, rel 1e-5); with --num-pservers one message and exit 2
#   predict     its click probabilities (.npy) give evaluate's AUC; its logits are what the ONNX graph is checked
#               against
#   export      --onnx: the graph (raw ids through ai.onnx.ml LabelEncoder) evaluated outside pstrain
#               (check_export.py, onnx_numpy.py) gives predict's logits within 1e-5 and evaluate's AUC and log-loss;
#               with --external-data-above the largest tables go to external data and give the same
#   changed     --changed-rows --since pass-00000 pass-00001: applied to pass-00000's tables it gives pass-00001's
#   rows        exactly (keys and every bit of every row); some rows are new or changed and some removed; the file is
#               never replaced; two folders of other models are refused
# CTest passes BIN_DIR, WORK_ROOT, SOURCE_DIR (the repository). Skipped (77) without python3-onnx, numpy, h5py or
# in a build without ONNX.
set -euo pipefail
export OPENBLAS_NUM_THREADS=1
for variable in $(env | grep -o '^PSTRAIN_[A-Z_]*' || true); do unset "$variable"; done
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${BIN_DIR:?}" "${WORK_ROOT:?}" "${SOURCE_DIR:?}"
here="$SOURCE_DIR/tests/export"
/usr/bin/python3 -c "import onnx, numpy, h5py" 2>/dev/null || { echo "SKIP: python3-onnx, numpy or h5py missing"; exit 77; }
if "$BIN_DIR/pstrain" export --onnx /dev/null/x.onnx nowhere 2>&1 | grep -q "built without ONNX"; then
  echo "SKIP: pstrain was built without ONNX"; exit 77
fi
work="$WORK_ROOT/keyed_tables"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
mpi() { timeout -k 5 120 mpirun --oversubscribe --bind-to none "$@"; }

"$BIN_DIR/pstrain-data" synthetic-ctr --lines 24000 --seed 3 --output data --split-count 3 > convert.log 2>&1 \
  || fail "synthetic-ctr: $(cat convert.log)"
cat > dlrm.model <<'MODEL'
b1 dense units=16 inputs=input
b1a relu
bottom dense units=8
bottoma relu
c0_12 embedding_bag fields=0-12 rows=4096 dim=8
c13_25 embedding_bag fields=13-25 rows=4096 dim=8 pooling=mean
x dot_interaction inputs=bottoma,c0_12,c13_25
t1 dense units=16
t1a relu
logit dense units=1 loss=bce
MODEL
mpi -np 3 "$BIN_DIR/pstrain" --data-dir data --output-dir run --model-file dlrm.model --batch-size 64 --passes 2 \
  --optimizer adagrad --lr 0.05 --seed 9 --mode sync --table-keys exact --admit-after 2 --row-ttl-steps 100 \
  > train.log 2>&1 || fail "the keyed run: $(tail -5 train.log)"
pass=run/pass-00001
[ -d run/pass-00000 ] && [ -d "$pass" ] || fail "no pass folders: $(ls run)"

# evaluate, on one process and on 2 ranks without servers: the run's own test AUC.
"$BIN_DIR/pstrain" evaluate "$pass" --output evaluation.json > evaluate.out 2>&1 || fail "evaluate: $(cat evaluate.out)"
mpi -np 2 "$BIN_DIR/pstrain" evaluate "$pass" --output evaluation-ranks.json > evaluate-ranks.out 2>&1 \
  || fail "evaluate on 2 ranks: $(cat evaluate-ranks.out)"
status=0
mpi -np 2 "$BIN_DIR/pstrain" evaluate "$pass" --num-pservers 1 > served.out 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "keyed by the raw id" served.out || fail "evaluate --num-pservers: exit $status, $(cat served.out)"

# predict: click probabilities for the AUC, logits for the ONNX check.
"$BIN_DIR/pstrain" predict "$pass" --input data/test.h5 --output probabilities.npy --batch-size 77 > predict.out \
  || fail "predict: $(cat predict.out)"
"$BIN_DIR/pstrain" predict "$pass" --input data/test.h5 --output logits.npy --logits --batch-size 77 >> predict.out \
  || fail "predict --logits: $(cat predict.out)"
/usr/bin/python3 - "$here" <<'PY' || fail "evaluate or predict differ from the run's figures"
import json, sys
import h5py, numpy as np
sys.path.insert(0, sys.argv[1])
from check_export import auc, AUC_TOLERANCE
run = json.loads(open("run/metrics.jsonl").read().splitlines()[-1])
m = {k: v for k, v in run.items() if k.startswith("keyed")}
assert m["keyed_rows_evicted"] > 0 and 0 < m["keyed_default_lookups"] < m["keyed_lookups"], m
for name in ("evaluation.json", "evaluation-ranks.json"):
    ours = json.load(open(name))
    if abs(ours["auc"] / run["test_auc"] - 1) > 1e-5 or abs(ours["logloss"] / run["test_logloss"] - 1) > 1e-5:
        sys.exit(f"{name}: auc {ours['auc']} logloss {ours['logloss']}; the run's {run['test_auc']} {run['test_logloss']}")
labels = h5py.File("data/test.h5", "r")["labels"][()]
p = np.load("probabilities.npy").astype(np.float64)
own = auc(p, labels)
if abs(own - run["test_auc"]) > AUC_TOLERANCE:
    sys.exit(f"the AUC of predict's probabilities {own} != the run's test_auc {run['test_auc']}")
print(f"keyed: test_auc run {run['test_auc']:.6f} evaluate {ours['auc']:.6f} predict {own:.6f}; {m}")
PY

# export --onnx: the graph outside pstrain gives predict's logits; the same with the tables as external data.
"$BIN_DIR/pstrain" export --onnx model.onnx "$pass" > export.out || fail "export: $(cat export.out)"
/usr/bin/python3 "$here/check_export.py" model.onnx data/test.h5 logits.npy evaluation.json keyed
mkdir external
"$BIN_DIR/pstrain" export --onnx external/model.onnx "$pass" --external-data-above 20000 > export-external.out \
  || fail "export with external data: $(cat export-external.out)"
/usr/bin/python3 "$here/check_export.py" external/model.onnx data/test.h5 logits.npy evaluation.json keyed_external \
  --external-data

# export --changed-rows: pass-00000 with the change applied is pass-00001, bit for bit.
"$BIN_DIR/pstrain" export --changed-rows changed.h5 --since run/pass-00000 "$pass" > changed.out \
  || fail "export --changed-rows: $(cat changed.out)"
/usr/bin/python3 - run/pass-00000 "$pass" changed.h5 <<'PY' || fail "the changed rows do not give the new pass's tables"
import sys
import h5py, numpy as np
old, new, delta = (h5py.File(f"{p}/parameters.h5" if not p.endswith(".h5") else p, "r") for p in sys.argv[1:])
assert delta.attrs["format"] in (b"pstrain-changed-rows", "pstrain-changed-rows") and delta.attrs["version"] == 1
assert sorted(delta["tables"]) == sorted(new["keys"]), (list(delta["tables"]), list(new["keys"]))
for name, d in delta["tables"].items():
    table = dict(zip(old["keys/" + name][()].tolist(), old[name][1:]))
    changed, rows, removed = d["changed_ids"][()], d["changed_rows"][()], d["removed_ids"][()]
    assert (np.diff(changed) > 0).all() and (np.diff(removed) > 0).all(), name
    assert len(changed) > 0 and len(removed) > 0, (name, len(changed), len(removed))
    for k in removed.tolist():
        del table[k]
    for k, row in zip(changed.tolist(), rows):
        table[k] = row
    keys = np.array(sorted(table), dtype=np.int64)
    assert np.array_equal(keys, new["keys/" + name][()]), name
    rebuilt = np.vstack([d["default_row"][()][None, :]] + [table[k][None, :] for k in keys.tolist()])
    assert rebuilt.dtype == np.float32 and rebuilt.tobytes() == new[name][()].tobytes(), name
    print(f"{name}: {len(changed)} new or changed, {len(removed)} removed, of {len(keys)} held: applied, exact")
PY
status=0
"$BIN_DIR/pstrain" export --changed-rows changed.h5 --since run/pass-00000 "$pass" > again.out 2>&1 || status=$?
[ "$status" = 4 ] && grep -q "already exists" again.out || fail "--changed-rows over an existing file: exit $status"
status=0
"$BIN_DIR/pstrain" export --changed-rows other.h5 "$pass" > nosince.out 2>&1 || status=$?
[ "$status" = 2 ] && grep -q "needs --since" nosince.out || fail "--changed-rows without --since: exit $status"
cp -r run/pass-00000 other-model && echo "# another model" >> other-model/model.txt
status=0
"$BIN_DIR/pstrain" export --changed-rows other.h5 --since other-model "$pass" > other.out 2>&1 || status=$?
[ "$status" -ne 0 ] && [ ! -e other.h5 ] && grep -q "pstrain: error: " other.out \
  || fail "--changed-rows from another model: exit $status, $(cat other.out)"
echo "PASS: keyed pass folders evaluate, predict, export to ONNX and export their changed rows"
