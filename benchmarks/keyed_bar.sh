#!/usr/bin/env bash
# Issue 42's bar for tables keyed by the raw id, in two parts (each runs 1 server + 2 trainers in sync mode):
#   auc      LINES (10M) synthetic-ctr lines with flat ids (--zipf-exponent 0.5: 21.7M distinct ids), the DLRM of
#            examples/models/dlrm-criteo.model with each table sized to SHARE (10%) of its field's distinct ids
#            (at least one meeting's ids): hashed tables; keyed tables at the same rows (--admit-after 2); keyed
#            tables at the same bytes (their key index, sketch and bookkeeping counted: fewer rows). One pass,
#            batch 512; test AUC against the generator's Bayes AUC.
#   growing  GROWING_LINES (500,000) lines whose transient half of each field's ids changes every 1/20 of the
#            training lines (--new-ids-every), PASSES (20) passes of the DLRM preset with keyed tables capped at
#            CAP (16,384) rows a table, --admit-after 2, rows unseen for 2,000 steps (about a pass) evicted, and the
#            same with hashed tables of CAP rows; rows held, admitted, evicted and the test AUC per pass, drawn by
#            keyed_growing_plot.py. A pass re-reads the same lines, so the ids grow along the lines, not from pass to
#            pass.
# Settings (environment): PARTS="auc growing" LINES=10000000 SHARE=0.1 GROWING_LINES=500000 PASSES=20 CAP=16384
#   BUILD_DIR=<repo>/build OUT_DIR=<repo>/benchmarks/results/keyed-bar
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
NOTE_TAG=keyed-bar
set_defaults PARTS="auc growing" LINES=10000000 SHARE=0.1 GROWING_LINES=500000 PASSES=20 CAP=16384 \
  BUILD_DIR="$REPO/build" OUT_DIR="$REPO/benchmarks/results/keyed-bar"
check_positive LINES GROWING_LINES PASSES CAP
require_tools mpirun python3
PSTRAIN="$BUILD_DIR/bin/pstrain"
[[ -x "$PSTRAIN" && -x "$BUILD_DIR/bin/pstrain-data" ]] || die "build pstrain and pstrain-data in $BUILD_DIR first"
mkdir -p "$OUT_DIR"

# data DIR SEED FLAGS...: synthetic-ctr lines into DIR, once.
data() {
  local dir=$1 seed=$2
  shift 2
  [[ -s "$dir/MANIFEST" ]] && return
  "$BUILD_DIR/bin/pstrain-data" synthetic-ctr --seed "$seed" --output "$dir" "$@" > "$dir.data.log" 2>&1 ||
    { cat "$dir.data.log" >&2; die "synthetic-ctr failed"; }
}

# train NAME DATA FLAGS...: one run into OUT_DIR/NAME (replaced), its wall time noted.
train() {
  local name=$1 data_dir=$2
  shift 2
  rm -rf "${OUT_DIR:?}/$name"
  local start=$SECONDS
  env "${MPI_ENV[@]}" OPENBLAS_NUM_THREADS=1 mpirun -np 3 --oversubscribe --bind-to none "$PSTRAIN" \
    --data-dir "$data_dir" --output-dir "$OUT_DIR/$name" --seed 1 --mode sync "$@" > "$OUT_DIR/$name.log" 2>&1 ||
    { tail -20 "$OUT_DIR/$name.log" >&2; die "run $name failed"; }
  note "$name: $((SECONDS - start)) s"
}

# The DLRM of dlrm-criteo.model with each table SHARE of its field's distinct ids (at least a meeting's ids), into
# OUT_DIR/dlrm-rows.model, and the same bytes spent on keyed tables into OUT_DIR/dlrm-bytes.model.
size_models() {
  python3 - "$REPO/examples/models/dlrm-criteo.model" "$1/ctr_fields.tsv" "$SHARE" "$OUT_DIR" <<'PY'
import math, re, sys
model, fields, share, out = open(sys.argv[1]).read(), sys.argv[2], float(sys.argv[3]), sys.argv[4]
rows, meeting = [], []
for line in open(fields).read().splitlines()[1:]:
    f = line.split("\t")
    distinct, longest = int(f[1]), int(f[5])
    meeting.append(min(distinct, 2 * 512 * longest))  # 2 trainers x 512 samples
    rows.append(max(math.ceil(share * distinct), meeting[-1]))
pow2 = lambda x: 1 << (max(1, x) - 1).bit_length()
# bytes a keyed table of cap c holds on its server (lib/job/memory_check.cc keyed_map_bytes, Adagrad's state)
keyed = lambda c: c * 16 * 4 * 2 + pow2(2 * c) * 16 + 64 * c + 4 * pow2(2 * c) * 2
budget = sum(r * 16 * 4 * 2 for r in rows)
lo, hi = 0.05, 1.0
for _ in range(60):
    s = (lo + hi) / 2
    lo, hi = (lo, s) if sum(keyed(max(math.ceil(r * s), m)) for r, m in zip(rows, meeting)) > budget else (s, hi)
caps = [max(math.ceil(r * lo), m) for r, m in zip(rows, meeting)]
def write(name, sizes):
    it = iter(sizes)
    text = re.sub(r"rows=\d+", lambda _: "rows=%d" % next(it), model)
    open("%s/%s" % (out, name), "w").write(text)
write("dlrm-rows.model", rows)
write("dlrm-bytes.model", caps)
print("rows %d of %d distinct ids (%.3f); keyed at the same bytes: %d rows (x %.3f)"
      % (sum(rows), sum(int(l.split("\t")[1]) for l in open(fields).read().splitlines()[1:]), share, sum(caps), lo))
PY
}

for part in $PARTS; do
  case $part in
    auc)
      data "$OUT_DIR/zipf05" 1 --lines "$LINES" --zipf-exponent 0.5 --shard-samples $((LINES / 10))
      size_models "$OUT_DIR/zipf05" | tee "$OUT_DIR/models.txt"
      flags=(--batch-size 512 --passes 1 --optimizer adagrad --lr 0.05)
      train hashed "$OUT_DIR/zipf05" --model-file "$OUT_DIR/dlrm-rows.model" "${flags[@]}"
      train keyed-rows "$OUT_DIR/zipf05" --model-file "$OUT_DIR/dlrm-rows.model" "${flags[@]}" --table-keys exact \
        --admit-after 2
      train keyed-bytes "$OUT_DIR/zipf05" --model-file "$OUT_DIR/dlrm-bytes.model" "${flags[@]}" --table-keys exact \
        --admit-after 2
      {
        echo "| tables | test AUC | test log-loss | samples/s | rows held | admitted | evicted | refused | default lookups |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
        for name in hashed keyed-rows keyed-bytes; do
          python3 - "$OUT_DIR/$name/metrics.jsonl" "$name" <<'PY'
import json, sys
m = json.loads(open(sys.argv[1]).readline())
k = lambda key: m.get(key, "")
share = "%.3f" % (m["keyed_default_lookups"] / m["keyed_lookups"]) if "keyed_lookups" in m else ""
print("| %s | %.4f | %.4f | %.0f | %s | %s | %s | %s | %s |" % (sys.argv[2], m["test_auc"], m["test_logloss"],
      m["samples_per_sec"], k("keyed_rows_held"), k("keyed_rows_admitted"), k("keyed_rows_evicted"),
      k("keyed_ids_refused"), share))
PY
        done
        grep "bayes test AUC" "$OUT_DIR/zipf05/ctr_conversion.txt"
      } | tee "$OUT_DIR/auc.md"
      ;;
    growing)
      data "$OUT_DIR/growing-data" 2 --lines "$GROWING_LINES" --split-count 2 \
        --new-ids-every $((GROWING_LINES * 9 / 10 / 20))
      train growing "$OUT_DIR/growing-data" --model dlrm --passes "$PASSES" --table-keys exact --table-rows "$CAP" \
        --admit-after 2 --row-ttl-steps 2000
      train growing-hashed "$OUT_DIR/growing-data" --model dlrm --passes "$PASSES" --table-rows "$CAP"
      # Debian's python3, which has matplotlib (as pstrain-plot uses)
      /usr/bin/python3 "$SCRIPT_DIR/keyed_growing_plot.py" "$OUT_DIR/growing" "$OUT_DIR/growing-hashed" \
        "$OUT_DIR/growing.png" "$CAP"
      python3 - "$OUT_DIR/growing/metrics.jsonl" <<'PY' | tee "$OUT_DIR/growing.md"
import json, sys
print("| pass | test AUC | rows held | admitted | evicted | default lookups |")
print("|---:|---:|---:|---:|---:|---:|")
for m in (json.loads(l) for l in open(sys.argv[1]) if l.strip()):
    print("| %d | %.4f | %d | %d | %d | %.3f |" % (m["pass"], m["test_auc"], m["keyed_rows_held"],
          m["keyed_rows_admitted"], m["keyed_rows_evicted"], m["keyed_default_lookups"] / m["keyed_lookups"]))
PY
      ;;
    *) die "unknown part $part (auc, growing)" ;;
  esac
done
note "written under $OUT_DIR"
