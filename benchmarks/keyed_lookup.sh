#!/usr/bin/env bash
# The lookup protocol of keyed tables (issue "Ids without a vocabulary", item 2: "one-sided reads of the server's
# map, which may take two round trips, or a request the server answers between meetings: choose by measurement on
# both MPI paths"), measured by keyed_lookup.cc with pstrain's own index (lib/ps/key_index.h): a trainer resolves
# a batch's distinct ids of every table to rows on the servers and fetches the rows, each step, by
#   one-sided  per server: one MPI_Get of every id's D index buckets, then one MPI_Get of the rows found
#   request    per server: one message of the ids, one answer of the rows (the server's CPU on the path)
# on one node's shared memory (osc/sm, btl sm) and on the cross-node path (--mca btl tcp,self --mca osc pt2pt),
# with SERVERS servers and 2 trainers. The rounds alternate the rows; the table gives the median ms per step.
#
# Settings (environment): ROUNDS=3 STEPS=300 TABLES=26 IDS_PER_TABLE=300 (Zipf draws per table and step, before
#   removing repeats: about a batch of 512 one-hot samples) UNIVERSE=1000000 (ids per table) HELD=200000 (ids per
#   table the servers hold; the rest fall on the default row) WIDTH=16 SERVERS="1 2"
#   OUT_DIR=<repo>/benchmarks/results/keyed-lookup
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
NOTE_TAG=keyed-lookup
set_defaults ROUNDS=3 STEPS=300 TABLES=26 IDS_PER_TABLE=300 UNIVERSE=1000000 HELD=200000 WIDTH=16 \
  SERVERS="1 2" OUT_DIR="$REPO/benchmarks/results/keyed-lookup"
check_positive ROUNDS STEPS TABLES IDS_PER_TABLE UNIVERSE HELD WIDTH
(( STEPS >= 20 )) || die "STEPS must be at least 20 (the first fifth warms up)"
require_tools mpicxx mpirun

mkdir -p "$OUT_DIR"
BINARY="$OUT_DIR/keyed_lookup"
SOURCES=("$SCRIPT_DIR/keyed_lookup.cc" "$REPO/lib/ps/key_index.cc" "$REPO/lib/ps/keyed_rows.cc"
         "$REPO/lib/ps/admission_sketch.cc" "$REPO/lib/core/error.cc")
stale=0
for source in "${SOURCES[@]}"; do [[ "$BINARY" -nt "$source" ]] || stale=1; done
if (( stale )); then
  mpicxx -DOMPI_SKIP_MPICXX -O2 -std=c++20 -Wall -Wextra -I"$REPO/lib" "${SOURCES[@]}" -o "$BINARY" \
    > "$OUT_DIR/build.log" 2>&1 || { cat "$OUT_DIR/build.log" >&2; die "the build failed"; }
fi

# run_row VARIANT PATH SERVERS: one run; prints "ms_per_step,lookups_per_step,share_held".
run_row() {
  local mca=()
  [[ "$2" == tcp ]] && mca=(--mca btl tcp,self --mca osc pt2pt)
  local out
  out=$(env "${MPI_ENV[@]}" timeout 300 mpirun -np $(( $3 + 2 )) --oversubscribe --bind-to none "${mca[@]}" \
        "$BINARY" --variant "$1" --servers "$3" --steps "$STEPS" --tables "$TABLES" --ids-per-table "$IDS_PER_TABLE" \
        --universe "$UNIVERSE" --held "$HELD" --width "$WIDTH" 2> "$OUT_DIR/last.err") ||
    { cat "$OUT_DIR/last.err" >&2; die "the row $1 $2 $3 failed"; }
  cut -d, -f2- <<< "$out"
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
: > "$OUT_DIR/results.csv"
for (( round = 1; round <= ROUNDS; round++ )); do
  note "round $round of $ROUNDS"
  for servers in $SERVERS; do
    for path in shm tcp; do
      for variant in one-sided request; do
        echo "$round,$servers,$path,$variant,$(run_row "$variant" "$path" "$servers")" >> "$OUT_DIR/results.csv"
      done
    done
  done
done

{
  echo "# Keyed tables: resolving a batch's ids to rows on the servers (2 trainers)"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPU(s); load average before: $load_before, after:" \
       "$(cut -d' ' -f1-3 /proc/loadavg); TABLES=$TABLES IDS_PER_TABLE=$IDS_PER_TABLE UNIVERSE=$UNIVERSE" \
       "HELD=$HELD WIDTH=$WIDTH STEPS=$STEPS, $ROUNDS round(s); $(git_info | tr '\n' ' ')"
  echo
  echo "| servers | path | one-sided ms/step | request ms/step | one-sided / request | distinct ids/step | held |"
  echo "|---:|---|---:|---:|---:|---:|---:|"
  for servers in $SERVERS; do
    for path in shm tcp; do
      pick() { awk -F, -v s="$servers" -v p="$path" -v v="$1" '$2 == s && $3 == p && $4 == v {print $'"$2"'}' \
                 "$OUT_DIR/results.csv"; }
      one=$(pick one-sided 5 | median)
      req=$(pick request 5 | median)
      printf '| %s | %s | %.2f | %.2f | %.2fx | %.0f | %.3f |\n' "$servers" "$path" "$one" "$req" \
        "$(awk -v a="$one" -v b="$req" 'BEGIN {print a / b}')" "$(pick request 6 | median)" "$(pick request 7 | median)"
    done
  done
} > "$OUT_DIR/table.md"
cat "$OUT_DIR/table.md"
note "written: $OUT_DIR/table.md, $OUT_DIR/results.csv"
