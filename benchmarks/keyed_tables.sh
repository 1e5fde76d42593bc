#!/usr/bin/env bash
# Step time of tables keyed by the raw id against hashed tables (issue "Ids without a vocabulary", bar: "step time
# of exact keys against hashed on the same data, on both MPI paths (aim >= 0.8x), and its breakdown"): the DLRM
# preset over the same synthetic-ctr lines, 1 server + 2 trainers in sync mode, each table hashed into
# TABLE_ROWS rows or keyed by the raw id with a cap of TABLE_ROWS rows (admission at the 2nd sighting), on one
# node's shared memory and on the cross-node path (--mca btl tcp,self --mca osc pt2pt). The rounds alternate the
# four rows; the table gives medians: samples/s, exact/hashed, and the per-step breakdown from metrics.jsonl
# (compute, push, barrier: the servers' update, pull: rows and parameters, of which keyed_resolve: finding the
# keyed rows in the servers' indexes).
#
# Settings (environment): ROUNDS=3 LINES=300000 ZIPF=0.5 BATCH=512 TABLE_ROWS=65536 BUILD_DIR=<repo>/build
#   OUT_DIR=<repo>/benchmarks/results/keyed-tables
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
NOTE_TAG=keyed-tables
set_defaults ROUNDS=3 LINES=300000 ZIPF=0.5 BATCH=512 TABLE_ROWS=65536 BUILD_DIR="$REPO/build" \
  OUT_DIR="$REPO/benchmarks/results/keyed-tables"
check_positive ROUNDS LINES BATCH TABLE_ROWS
require_tools mpirun python3
PSTRAIN="$BUILD_DIR/bin/pstrain"
[[ -x "$PSTRAIN" && -x "$BUILD_DIR/bin/pstrain-data" ]] || die "build pstrain and pstrain-data in $BUILD_DIR first"

mkdir -p "$OUT_DIR"
DATA="$OUT_DIR/data-$LINES-$ZIPF"
if [[ ! -s "$DATA/MANIFEST" ]]; then
  "$BUILD_DIR/bin/pstrain-data" synthetic-ctr --lines "$LINES" --seed 1 --zipf-exponent "$ZIPF" --output "$DATA" \
    --split-count 2 > "$OUT_DIR/data.log" 2>&1 || { cat "$OUT_DIR/data.log" >&2; die "synthetic-ctr failed"; }
fi
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/pstrain-keyed.XXXXXX")"
trap 'rm -rf "$SCRATCH"' EXIT

# run_row KEYS PATH: one run; prints its metrics as "samples_per_sec,compute,push,barrier,pull,resolve" (ms/step).
run_row() {
  local mca=() keys=(--table-keys hashed) dir="$SCRATCH/$1-$2"
  [[ "$2" == tcp ]] && mca=(--mca btl tcp,self --mca osc pt2pt --mca btl_tcp_if_include lo)
  [[ "$1" == exact ]] && keys=(--table-keys exact --admit-after 2)
  rm -rf "$dir"
  env "${MPI_ENV[@]}" OPENBLAS_NUM_THREADS=1 timeout 900 mpirun -np 3 --oversubscribe --bind-to none "${mca[@]}" \
    "$PSTRAIN" --data-dir "$DATA" --output-dir "$dir" --model dlrm --batch-size "$BATCH" --table-rows "$TABLE_ROWS" \
    --passes 1 --seed 1 --mode sync "${keys[@]}" > "$OUT_DIR/last.log" 2>&1 ||
    { tail -20 "$OUT_DIR/last.log" >&2; die "the row $1 $2 failed"; }
  python3 - "$dir/metrics.jsonl" <<'PY'
import json, sys
m = json.loads(open(sys.argv[1]).readline())
ms = lambda key: 1000 * m.get(key, 0.0)
print("%.1f,%.3f,%.3f,%.3f,%.3f,%.3f,%.4f" % (m["samples_per_sec"], ms("compute_s_per_step"), ms("push_s_per_step"),
      ms("barrier_s_per_step"), ms("pull_s_per_step"), ms("keyed_resolve_s_per_step"), m["test_auc"]))
PY
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
: > "$OUT_DIR/results.csv"
for (( round = 1; round <= ROUNDS; round++ )); do
  note "round $round of $ROUNDS"
  for path in shm tcp; do
    for keys in hashed exact; do
      echo "$round,$path,$keys,$(run_row "$keys" "$path")" >> "$OUT_DIR/results.csv"
    done
  done
done

{
  echo "# Keyed tables against hashed tables: DLRM, 1 server + 2 trainers, sync"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPU(s); load average before: $load_before, after:" \
       "$(cut -d' ' -f1-3 /proc/loadavg); LINES=$LINES ZIPF=$ZIPF BATCH=$BATCH TABLE_ROWS=$TABLE_ROWS," \
       "$ROUNDS round(s); $(git_info | tr '\n' ' ')"
  echo
  echo "| path | tables | samples/s | exact / hashed | compute ms | push ms | barrier ms | pull ms | of which keyed_resolve ms | test AUC |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  for path in shm tcp; do
    pick() { awk -F, -v p="$path" -v k="$1" '$2 == p && $3 == k {print $'"$2"'}' "$OUT_DIR/results.csv"; }
    hashed=$(pick hashed 4 | median)
    for keys in hashed exact; do
      rate=$(pick "$keys" 4 | median)
      printf '| %s | %s | %.0f | %.2fx | %.2f | %.2f | %.2f | %.2f | %.2f | %.4f |\n' "$path" "$keys" "$rate" \
        "$(awk -v a="$rate" -v b="$hashed" 'BEGIN {print a / b}')" "$(pick "$keys" 5 | median)" \
        "$(pick "$keys" 6 | median)" "$(pick "$keys" 7 | median)" "$(pick "$keys" 8 | median)" \
        "$(pick "$keys" 9 | median)" "$(pick "$keys" 10 | median)"
    done
  done
} > "$OUT_DIR/table.md"
cat "$OUT_DIR/table.md"
note "written: $OUT_DIR/table.md, $OUT_DIR/results.csv"
