#!/usr/bin/env bash
# Click-through-rate training end to end (issue 41): a DLRM model file over a synthetic-ctr folder (CTR shards:
# dense features, bags of raw 64-bit ids per field, a planted logistic truth whose Bayes test AUC the generator
# prints), its tables hashed at training time; with servers (sync, async, ssp) the servers hold them by rows (the
# default, --table-exchange auto). One case per call:
# ctr_training.sh CASE NP PATH
#   local      one process learns: test_auc well above 0.5 (what a model that learned nothing scores), and the CTR
#              metrics agree with each other: test_logloss (from the logits) = test_loss (the model's loss), NE =
#              logloss over the entropy of the training click rate, the TensorBoard file carries pass/test_auc;
#              pstrain evaluate reports the run's AUC, NE and calibration, and pstrain predict's click probabilities
#              ([samples] float32) give the same AUC computed here;
#              --model dlrm and --model deepfm learn with their defaults
#   sync       1 server + 2 trainers: learns; a second run, and one writing checkpoints, give the same bits; resumed
#              from a checkpoint in the middle of the pass it ends with the bits of the uninterrupted run
#   modes      async (under dynamic dispatch: CTR rows read a chunk at a time), ssp, geo (servers) and all-reduce
#              learn, every sample trained once
#   rows       the tables by rows on the servers (sync): the same bits as the tables held whole as dense parameters
#              (--table-exchange dense: Adagrad on the touched rows is dense Adagrad where the rest gets no
#              gradient); the checkpoint holds the tables as row files, and a run resumed from it on two servers
#              (one more rank) ends with the bits of the uninterrupted run on one; all-reduce refuses tables past
#              2^26 floats (run_common/table_layout.h), naming the modes that take them; a run whose pass folders and
#              checkpoints would not fit the output's disk is refused before it writes, its sizes those written
#   geo        --mode geo with the tables by rows on the servers (a trainer holds the rows it looked up since the last
#              meeting, moves them by SGD, pushes their changes at the next): with --optimizer sgd the same bits as
#              the tables held whole on every trainer (--table-exchange dense); the checkpoint holds row files, and a
#              run resumed from one mid-pass, on one server or on two, ends with the uninterrupted run's bits
#   rowwise    --optimizer rowwise_adagrad (sync, tables by rows): learns; each row file holds the one accumulator
#              per row ([rows x 1], the values recomputed here from nothing but h5py would be a second
#              implementation: its unit test checks the rule); resumed on two servers it ends with the bits of the
#              uninterrupted run; a run that holds its tables whole (one rank, --table-exchange dense) or whose
#              trainers move the rows themselves (--mode geo) is refused on
#              every rank, in seconds, naming the runs that take it, its folder left as it was
#   eval_steps --eval-every-steps 25 (sync, 1 server + 2 trainers, 2 passes of 225 steps): an evaluation record
#              ("kind": "eval", no "pass") at every 25th global step with test_auc, test_logloss, test_ne and
#              test_calibration, between pass records that keep their form; the records at steps 225 and 450 (the
#              passes' last) carry their pass's test figures; one log line each; TensorBoard's eval/test_auc at
#              those steps; the evaluations leave the training bits as they were; streamed sync steps
#              (--overlap true) give the same records; the run's folder, copied as if it
#              had died at step 450 and resumed from its checkpoint at step 250 (itself an evaluation step), ends
#              with the same records, none twice, and the same bits; geo evaluates at its meetings; an MLP without
#              CTR metrics (all-reduce over DATA_DIR) writes test_loss and test_accuracy; async is refused on every
#              rank with one message naming the modes that take the flag
source "$(dirname "$0")/common.sh"
case_name=$1 np=$2 path=$3
work=$(new_work_dir "ctr_training_${case_name}_np${np}_${path}")
"$BIN_DIR/pstrain-data" synthetic-ctr --lines 24000 --seed 3 --output "$work/data" --split-count 3 \
  > "$work/convert.log" 2>&1 || { cat "$work/convert.log"; fail "synthetic-ctr"; }
bayes=$(sed -n 's/^bayes test AUC: //p' "$work/convert.log")
cat > "$work/dlrm.model" <<'MODEL'
b1 dense units=16 inputs=input
b1a relu
bottom dense units=8
bottoma relu
c0_12 embedding_bag fields=0-12 rows=16384 dim=8
c13_25 embedding_bag fields=13-25 rows=16384 dim=8
x dot_interaction inputs=bottoma,c0_12,c13_25
t1 dense units=16
t1a relu
logit dense units=1 loss=bce
MODEL

passes=1 optimizer=adagrad lr=0.05
dlrm() {  # dlrm RANKS OUT [flags...]
  local ranks=$1 out=$2
  shift 2
  run_mpi "$ranks" "$path" 120 "$BIN_DIR/pstrain" --data-dir "$work/data" --output-dir "$out" \
    --model-file "$work/dlrm.model" --batch-size 64 --passes "$passes" --optimizer "$optimizer" --lr "$lr" --seed 9 "$@" \
    > "$out.log" 2>&1 || { cat "$out.log"; fail "run $out"; }
}
# learns OUT: the last test_auc well above chance (the Bayes AUC of these lines is printed beside it; one pass
# over 21,600 lines of Criteo-like cardinalities reaches ~0.65 of it).
learns() {
  python3 - "$1/metrics.jsonl" "$bayes" <<'PY' || fail "$1 did not learn"
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
print(sys.argv[1].split("/")[-2], "test_auc", round(last["test_auc"], 4), "bayes", sys.argv[2])
assert last["test_auc"] > 0.58, last
assert last["samples_missing"] == 0 and last["samples_repeated"] == 0, last
PY
}
exact() { "$TOOLS_DIR/compare_parameters" "$1/pass-00000" "$2/pass-00000" --exact || fail "$3"; }  # 1 pass

case "$case_name" in
  local)
    passes=2 dlrm 1 "$work/local"
    learns "$work/local"
    # The same lines as text (the same seed gives the same bits): the training click rate from their labels.
    "$BIN_DIR/pstrain-data" synthetic-ctr --lines 24000 --seed 3 --text-output "$work/lines.txt" > /dev/null 2>&1 \
      || fail "synthetic-ctr --text-output"
    python3 - "$work/local/metrics.jsonl" "$work/lines.txt" <<'PY' || fail "the CTR metrics disagree"
import json, math, sys
labels = [int(line.split("\t", 1)[0]) for line in open(sys.argv[2])][:21600]  # the training lines
p = sum(labels) / len(labels)
entropy = -(p * math.log(p) + (1 - p) * math.log(1 - p))
for m in (json.loads(l) for l in open(sys.argv[1]) if l.strip()):
    assert math.isclose(m["test_logloss"], m["test_loss"], rel_tol=1e-5), m
    assert math.isclose(m["test_ne"], m["test_logloss"] / entropy, rel_tol=1e-9), (m, p)
    assert 0.2 < m["test_calibration"] < 5, m
print("test_logloss = test_loss; test_ne = logloss / H(%.4f), the training click rate" % p)
PY
    grep -aq "pass/test_auc" "$work"/local/tensorboard/events.* || fail "no pass/test_auc in TensorBoard's file"
    grep -q "test_auc" "$work/local.log" || fail "the pass line does not show test_auc"
    # pstrain evaluate and predict read the click model: evaluate's AUC, NE and calibration are the run's figures
    # of the same pass (the same model on the same test set), and an AUC recomputed here from predict's click
    # probabilities and the test lines' labels (ties counted half) agrees with them.
    "$BIN_DIR/pstrain" evaluate "$work/local/pass-00001" --output "$work/evaluation.json" > "$work/evaluate.log" 2>&1 \
      || { cat "$work/evaluate.log"; fail "pstrain evaluate"; }
    "$BIN_DIR/pstrain" predict "$work/local/pass-00001" --input "$work/data/test.h5" --output "$work/clicks.npy" \
      > "$work/predict.log" 2>&1 || { cat "$work/predict.log"; fail "pstrain predict"; }
    python3 - "$work/local/metrics.jsonl" "$work/evaluation.json" "$work/clicks.npy" "$work/lines.txt" <<'PY' \
      || fail "evaluate or predict disagree with the run"
import ast, json, math, struct, sys
run = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
evaluation = json.load(open(sys.argv[2]))
for key in ("auc", "ne", "calibration", "logloss"):
    assert math.isclose(evaluation[key], run["test_" + key], rel_tol=1e-5), (key, evaluation[key], run["test_" + key])
raw = open(sys.argv[3], "rb").read()
header_length = struct.unpack("<H", raw[8:10])[0]
header = ast.literal_eval(raw[10:10 + header_length].decode())
assert header["descr"] == "<f4" and header["shape"] == (2400,), header
p = struct.unpack("<2400f", raw[10 + header_length:])
labels = [int(line.split("\t", 1)[0]) for line in open(sys.argv[4])][21600:]
assert len(labels) == 2400 and all(0 < x < 1 for x in p)
clicks = [x for x, y in zip(p, labels) if y == 1]
others = sorted(x for x, y in zip(p, labels) if y == 0)
import bisect
wins = sum(bisect.bisect_left(others, c) + 0.5 * (bisect.bisect_right(others, c) - bisect.bisect_left(others, c))
           for c in clicks)
auc = wins / (len(clicks) * len(others))
assert abs(auc - evaluation["auc"]) < 1e-4, (auc, evaluation["auc"])
assert math.isclose(sum(p) / len(p) / (sum(labels) / len(labels)), evaluation["calibration"], rel_tol=1e-4)
print("evaluate = the run's test figures; predict's probabilities give AUC %.6f (evaluate %.6f)" % (auc, evaluation["auc"]))
PY
    # The presets, with no flag but the data: tables sized from ctr_fields.tsv, Adagrad, batches of 128.
    for preset in dlrm deepfm; do
      run_mpi 1 "$path" 120 "$BIN_DIR/pstrain" --data-dir "$work/data" --output-dir "$work/$preset" --model "$preset" \
        --passes 1 > "$work/$preset.log" 2>&1 || { cat "$work/$preset.log"; fail "--model $preset"; }
      grep -q "batch 128 per trainer" "$work/$preset.log" || fail "--model $preset: not its default batch"
      learns "$work/$preset"
    done
    echo "PASS: a DLRM learns on CTR data alone (AUC above, bayes $bayes), its CTR metrics consistent; the presets learn"
    ;;
  sync)
    dlrm "$np" "$work/sync-1" --mode sync
    dlrm "$np" "$work/sync-2" --mode sync
    learns "$work/sync-1"
    exact "$work/sync-1" "$work/sync-2" "two sync runs differ"
    flags=(--mode sync --checkpoint-every-steps 40 --keep-checkpoints 0)
    dlrm "$np" "$work/checkpointed" "${flags[@]}"
    exact "$work/checkpointed" "$work/sync-1" "checkpoints changed the bits"
    middle="$work/checkpointed/checkpoints/ckpt-0000000040"
    [ -d "$middle" ] || fail "no checkpoint at step 40: $(ls "$work/checkpointed/checkpoints")"
    mkdir -p "$work/resumed"
    dlrm "$np" "$work/resumed" "${flags[@]}" --resume "$middle"
    grep -q "resuming from" "$work/resumed.log" || fail "did not resume"
    exact "$work/resumed" "$work/sync-1" "resumed mid-pass differs from the uninterrupted run"
    echo "PASS: sync CTR training on $np ranks ($path) repeats its bits and resumes mid-pass exactly"
    ;;
  modes)
    # Dynamic dispatch reads CTR rows a chunk at a time (data::ShardRows); learns() checks every sample once.
    dlrm "$np" "$work/async" --mode async --dispatch dynamic --chunk-size 256
    dlrm "$np" "$work/ssp" --mode ssp --staleness 2
    dlrm "$np" "$work/geo" --mode geo --geo-steps 4
    dlrm "$np" "$work/allreduce" --mode allreduce
    for mode in async ssp geo allreduce; do learns "$work/$mode"; done
    echo "PASS: async, ssp, geo and all-reduce learn CTR data on $np ranks ($path)"
    ;;
  rows)
    dlrm "$np" "$work/rows" --mode sync --checkpoint-every-steps 40 --keep-checkpoints 0
    for table in c0_12 c13_25; do
      grep -q "table $table.weight (16384 x 8) is held by rows on the servers" "$work/rows.log" \
        || { cat "$work/rows.log"; fail "table $table is not held by rows"; }
    done
    learns "$work/rows"
    dlrm "$np" "$work/dense" --mode sync --table-exchange dense
    exact "$work/rows" "$work/dense" "the tables by rows gave other bits than the tables held whole"
    middle="$work/rows/checkpoints/ckpt-0000000040"
    for table in c0_12 c13_25; do
      [ -f "$middle/rows-$table.weight-00000-of-00001.h5" ] || fail "no row file of $table: $(ls "$middle")"
    done
    mkdir -p "$work/wider"
    dlrm $((np + 1)) "$work/wider" --mode sync --num-pservers 2 --resume "$middle"
    grep -q "resuming from" "$work/wider.log" || fail "did not resume"
    exact "$work/wider" "$work/rows" "resumed on two servers, the run ends with other bits"
    # All-reduce holds the tables whole on every trainer: a table past its limit (2^26 floats) is refused on every
    # rank, in seconds, naming the modes that take it, and the refused run leaves its folder as it found it.
    sed 's/^c0_12 embedding_bag fields=0-12 rows=16384/c0_12 embedding_bag fields=0-12 rows=9000000/' "$work/dlrm.model" \
      > "$work/large.model"
    start=$SECONDS
    if run_mpi "$np" "$path" 60 "$BIN_DIR/pstrain" --data-dir "$work/data" --output-dir "$work/allreduce" \
      --model-file "$work/large.model" --mode allreduce > "$work/allreduce.log" 2>&1; then
      fail "all-reduce accepted a table of 72M floats"
    fi
    grep -q "every trainer would hold whole.*--mode sync, async or ssp" "$work/allreduce.log" \
      || { cat "$work/allreduce.log"; fail "all-reduce's refusal gives no reason"; }
    [ $((SECONDS - start)) -lt 30 ] || fail "the refusal took $((SECONDS - start)) s"
    [ ! -e "$work/allreduce" ] || [ -z "$(ls -A "$work/allreduce")" ] || fail "a refused run left files in its folder"
    # The disk: a run whose pass folders and checkpoints cannot fit the output's file system is refused on every
    # rank before it writes anything (job/disk_check.h), with its arithmetic; the arithmetic's sizes are those of a
    # real pass folder and checkpoint (a model of 64 MiB: 2 tables of 2^20 x 8).
    sed 's/rows=16384/rows=1048576/' "$work/dlrm.model" > "$work/big.model"
    big=(--data-dir "$work/data" --model-file "$work/big.model" --optimizer momentum)
    free=$(df --output=avail -B1 "$work" | tail -1)
    if (( free > 6 * 1024 ** 4 )); then
      echo "(the disk refusal is not checked: $free bytes free, more than 99,999 pass folders of 64 MiB)"
    else
      start=$SECONDS
      if run_mpi "$np" "$path" 60 "$BIN_DIR/pstrain" "${big[@]}" --passes 99999 --output-dir "$work/full" \
        > "$work/full.log" 2>&1; then
        fail "a run of 6 TiB of outputs was accepted with $free bytes free"
      fi
      grep -q "do not fit the disk of .*99999 pass folders of .*--keep-checkpoints" "$work/full.log" \
        || { cat "$work/full.log"; fail "the disk refusal gives no reason"; }
      [ $((SECONDS - start)) -lt 30 ] || fail "the disk refusal took $((SECONDS - start)) s"
      [ ! -e "$work/full" ] || [ -z "$(ls -A "$work/full")" ] || fail "the refused run left files in its folder"
      run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" "${big[@]}" --passes 1 --output-dir "$work/one-pass" \
        > "$work/one-pass.log" 2>&1 || { cat "$work/one-pass.log"; fail "the 64 MiB model's run"; }
      python3 - "$work/full.log" "$work/one-pass" <<'PY' || fail "the disk arithmetic is not what the run writes"
import glob, os, re, sys
said = re.search(r"pass folders of ([0-9.e+]+) GiB .* checkpoints of ([0-9.e+]+) GiB", open(sys.argv[1]).read())
def size(folder):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(folder) for f in files) / 2**30
written = (size(sys.argv[2] + "/pass-00000"), size(glob.glob(sys.argv[2] + "/checkpoints/ckpt-*")[0]))
for estimate, real in zip(map(float, said.groups()), written):
    assert abs(estimate - real) <= 0.01 * real, (estimate, real)
print("pass folder %.4f GiB (said %s), checkpoint %.4f GiB (said %s)" % (written[0], said[1], written[1], said[2]))
PY
    fi
    echo "PASS: CTR tables by rows on the servers: the bits of dense tables, resumed exactly on another server count;"
    echo "      all-reduce refuses a table past its limit, naming the modes that take it; outputs past the disk refused"
    ;;
  geo)
    optimizer=sgd lr=0.5
    flags=(--mode geo --geo-steps 4)
    dlrm "$np" "$work/rows" "${flags[@]}" --checkpoint-every-steps 40 --keep-checkpoints 0
    for table in c0_12 c13_25; do
      grep -q "table $table.weight (16384 x 8) is held by rows on the servers" "$work/rows.log" \
        || { cat "$work/rows.log"; fail "geo: table $table is not held by rows"; }
    done
    dlrm "$np" "$work/dense" "${flags[@]}" --table-exchange dense
    exact "$work/rows" "$work/dense" "geo: the tables by rows gave other bits than the tables held whole"
    middle="$work/rows/checkpoints/ckpt-0000000040"
    for table in c0_12 c13_25; do
      [ -f "$middle/rows-$table.weight-00000-of-00001.h5" ] || fail "geo: no row file of $table: $(ls "$middle")"
    done
    mkdir -p "$work/resumed" "$work/wider"
    dlrm "$np" "$work/resumed" "${flags[@]}" --resume "$middle"
    dlrm $((np + 1)) "$work/wider" "${flags[@]}" --num-pservers 2 --resume "$middle"
    for resumed in resumed wider; do
      grep -q "resuming from" "$work/$resumed.log" || fail "geo: $resumed did not resume"
      exact "$work/$resumed" "$work/rows" "geo: the run resumed mid-pass ($resumed) ends with other bits"
    done
    echo "PASS: geo with the tables by rows: the bits of the tables held whole; resumed mid-pass exactly, on one"
    echo "      server and on two"
    ;;
  rowwise)
    optimizer=rowwise_adagrad
    dlrm "$np" "$work/rowwise" --mode sync --checkpoint-every-steps 40 --keep-checkpoints 0
    learns "$work/rowwise"
    middle="$work/rowwise/checkpoints/ckpt-0000000040"
    /usr/bin/python3 - "$middle" <<'PY' || fail "the row files do not hold one accumulator per row"  # Debian's: h5py
import glob, sys, h5py
files = sorted(glob.glob(sys.argv[1] + "/rows-*.h5"))
assert len(files) == 2, files
for name in files:
    with h5py.File(name) as f:
        assert list(f["optimizer"]) == ["row_sum"], (name, list(f["optimizer"]))
        rows, sums = f["rows"], f["optimizer/row_sum"]
        assert sums.shape == (rows.shape[0], 1), (name, sums.shape, rows.shape)
        touched = int((sums[:, 0] > 0).sum())
        assert touched > 0 and (sums[:, 0] >= 0).all(), (name, touched)
        print(name.split("/")[-1], "rows", rows.shape, "row_sum", sums.shape, "touched", touched)
PY
    mkdir -p "$work/wider"
    dlrm $((np + 1)) "$work/wider" --mode sync --num-pservers 2 --resume "$middle"
    grep -q "resuming from" "$work/wider.log" || fail "did not resume"
    exact "$work/wider" "$work/rowwise" "row-wise Adagrad resumed on two servers ends with other bits"
    for refused in "1 local" "$np dense --mode sync --table-exchange dense" "$np geo --mode geo"; do
      read -r ranks name flags <<< "$refused"
      start=$SECONDS
      # shellcheck disable=SC2086  # $flags is a list of flags
      if run_mpi "$ranks" "$path" 60 "$BIN_DIR/pstrain" --data-dir "$work/data" --output-dir "$work/refused-$name" \
        --model-file "$work/dlrm.model" --optimizer rowwise_adagrad $flags > "$work/refused-$name.log" 2>&1; then
        fail "row-wise Adagrad accepted a run holding its tables whole ($name)"
      fi
      grep -q "rowwise_adagrad keeps one accumulator per row.*use --optimizer adagrad" "$work/refused-$name.log" \
        || { cat "$work/refused-$name.log"; fail "the refusal of $name gives no reason"; }
      [ $((SECONDS - start)) -lt 30 ] || fail "the refusal of $name took $((SECONDS - start)) s"
      [ ! -e "$work/refused-$name" ] || [ -z "$(ls -A "$work/refused-$name")" ] || fail "refused run $name left files"
    done
    echo "PASS: row-wise Adagrad on the servers' rows: learns, one accumulator per row in the row files, resumed"
    echo "      exactly on another server count; refused where the tables are held whole or moved by the trainers"
    ;;
  eval_steps)
    passes=2
    dlrm "$np" "$work/plain" --mode sync
    dlrm "$np" "$work/every" --mode sync --eval-every-steps 25 --checkpoint-every-steps 50 --keep-checkpoints 0
    exact_pass() { "$TOOLS_DIR/compare_parameters" "$1/pass-00001" "$2/pass-00001" --exact || fail "$3"; }
    exact_pass "$work/every" "$work/plain" "evaluating every 25 steps changed the training bits"
    [ "$(grep -c "step [0-9]* (pass [01] step [0-9]*/225): test_loss .* test_auc .* test_ne " "$work/every.log")" -eq 18 ] \
      || { grep "test_auc" "$work/every.log"; fail "expected 18 evaluation log lines"; }
    /usr/bin/python3 "$(dirname "$0")/../report/read_events.py" "$work"/every/tensorboard/events.* > "$work/events.json" \
      || fail "the event file does not read back"
    python3 - "$work/every/metrics.jsonl" "$work/events.json" <<'PY' || fail "the evaluation records are wrong"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
evals = [r for r in lines if r.get("kind") == "eval"]
passes = [r for r in lines if "kind" not in r]
assert [r["step"] for r in evals] == list(range(25, 451, 25)), [r["step"] for r in evals]
assert [r["pass"] for r in passes] == [0, 1] and all(next(iter(r)) == "pass" for r in passes), passes
assert all("pass" not in r and "train_loss" not in r for r in evals), evals[0]
for r in evals:
    assert (r["in_pass"], r["step_in_pass"], r["steps_in_pass"]) == ((r["step"] - 1) // 225, (r["step"] - 1) % 225 + 1, 225), r
    for key in ("test_loss", "test_accuracy", "test_auc", "test_logloss", "test_ne", "test_calibration"):
        assert isinstance(r[key], float), (key, r)
    assert 0.5 < r["test_auc"] < 1 and r["test_ne"] > 0, r
# The passes' last steps: the pass's own evaluation, written just before the pass record.
for p, step in ((0, 225), (1, 450)):
    at_end = next(r for r in evals if r["step"] == step)
    for key in ("test_loss", "test_accuracy", "test_auc", "test_logloss", "test_ne", "test_calibration"):
        assert at_end[key] == passes[p][key], (p, key, at_end[key], passes[p][key])
    assert lines.index(at_end) + 1 == lines.index(passes[p]), "the record of step %d is not right before pass %d's" % (step, p)
board = json.load(open(sys.argv[2]))["scalars"]
for key in ("test_auc", "test_logloss", "test_ne", "test_calibration", "test_loss"):
    points = board["eval/" + key]
    assert [s for s, _ in points] == [r["step"] for r in evals], (key, points)
    assert all(abs(v - r[key]) <= 1e-6 * max(1, abs(r[key])) for (_, v), r in zip(points, evals)), key
print("18 evaluation records at steps 25..450, the pass ends' equal to their pass records, TensorBoard eval/* alike")
PY
    # Streamed sync steps (--overlap true: a step returns while blocks still land, and the evaluation's barrier meets
    # the streamed messages): the records of the one-sided steps above (the same bits either way).
    dlrm "$np" "$work/streamed" --mode sync --overlap true --eval-every-steps 25
    python3 - "$work/every/metrics.jsonl" "$work/streamed/metrics.jsonl" <<'PY' || fail "streamed steps evaluated otherwise"
import json, sys
def evals(path):
    return [{k: v for k, v in json.loads(l).items() if k not in ("eval_seconds", "elapsed_s")}
            for l in open(path) if '"kind": "eval"' in l]
assert evals(sys.argv[1]) == evals(sys.argv[2]), (evals(sys.argv[1])[:2], evals(sys.argv[2])[:2])
print("streamed sync steps: the same 18 evaluation records")
PY
    # As if the run had died after step 450 with its last checkpoint at step 250: resume auto from there.
    cp -r "$work/every" "$work/resumed"
    for late in "$work"/resumed/checkpoints/ckpt-*; do
      [ "${late##*ckpt-}" -le 250 ] || rm -rf "$late"
    done
    dlrm "$np" "$work/resumed" --mode sync --eval-every-steps 25 --checkpoint-every-steps 50 --keep-checkpoints 0 \
      --resume auto
    grep -q "resuming from .*ckpt-0000000250" "$work/resumed.log" || fail "did not resume from step 250"
    exact_pass "$work/resumed" "$work/every" "resumed at step 250, the run ends with other bits"
    python3 - "$work/every/metrics.jsonl" "$work/resumed/metrics.jsonl" <<'PY' || fail "the resumed run's records differ"
import json, sys
def records(path):
    lines = [json.loads(l) for l in open(path) if l.strip()]
    timing = ("eval_seconds", "elapsed_s")
    evals = [{k: v for k, v in r.items() if k not in timing} for r in lines if r.get("kind") == "eval"]
    tests = [{k: v for k, v in r.items() if k.startswith("test_") or k == "pass"} for r in lines if "kind" not in r]
    return evals, tests
(evals, tests), (resumed_evals, resumed_tests) = records(sys.argv[1]), records(sys.argv[2])
assert resumed_evals == evals, ([r["step"] for r in resumed_evals], [r["step"] for r in evals])
assert resumed_tests == tests, (resumed_tests, tests)
print("resumed at step 250: the same %d evaluation records, none twice, and the same pass test figures" % len(evals))
PY
    # geo evaluates where trainers and servers meet; an MLP reports test_loss and test_accuracy without CTR figures.
    passes=1
    optimizer=sgd dlrm "$np" "$work/geo" --mode geo --geo-steps 5 --eval-every-steps 25
    run_mpi "$np" "$path" 120 "$BIN_DIR/pstrain" --data-dir "$DATA_DIR" --output-dir "$work/mlp" --mode allreduce \
      --passes 1 --hidden 16 --batch-size 32 --eval-every-steps 20 > "$work/mlp.log" 2>&1 \
      || { cat "$work/mlp.log"; fail "the MLP run"; }
    python3 - "$work/geo/metrics.jsonl" "$work/mlp/metrics.jsonl" <<'PY' || fail "geo or the MLP evaluated wrongly"
import json, sys
geo = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [r["step"] for r in geo if r.get("kind") == "eval"] == list(range(25, 226, 25)), geo
mlp = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
evals = [r for r in mlp if r.get("kind") == "eval"]
assert [r["step"] for r in evals] == [20, 40], [r["step"] for r in evals]  # 3 trainers x 1280 samples: 40 steps of 32
assert all(0 < r["test_accuracy"] <= 1 and r["test_loss"] > 0 and "test_auc" not in r for r in evals), evals
print("geo: records at its meetings 25..225; the MLP: test_loss and test_accuracy at steps 20, 40")
PY
    # async has no common step: refused on every rank, one message, in seconds, the folder left empty.
    start=$SECONDS
    if run_mpi "$np" "$path" 60 "$BIN_DIR/pstrain" --data-dir "$work/data" --output-dir "$work/async" \
      --model-file "$work/dlrm.model" --mode async --eval-every-steps 25 > "$work/async.log" 2>&1; then
      fail "async accepted --eval-every-steps"
    fi
    [ "$(grep -c "mode async has none (each trainer steps on its own); use --mode sync, geo or allreduce" \
      "$work/async.log")" -eq 1 ] || { cat "$work/async.log"; fail "async's refusal is not one message naming the modes"; }
    [ $((SECONDS - start)) -lt 30 ] || fail "the refusal took $((SECONDS - start)) s"
    [ ! -e "$work/async" ] || [ -z "$(ls -A "$work/async")" ] || fail "the refused run left files in its folder"
    echo "PASS: --eval-every-steps on $np ranks ($path): records at their steps, equal to the pass records at the"
    echo "      passes' ends, the same after a resume, training bits unchanged; geo and an MLP evaluate; async refused"
    ;;
  *) fail "unknown case $case_name" ;;
esac
