#!/usr/bin/env bash
# One table of ROWS rows x 16 (all 26 fields of synthetic-ctr lines share it) held by 4 servers, 2 trainers, sync,
# OPTIMIZER (adagrad, or rowwise_adagrad: one accumulator per row), over the cross-node path; one pass with a
# checkpoint at its end (issue 41's scale bar). Prints the peak memory of the largest rank, rows and bytes a step,
# and the checkpoint's size and the time its row files took. Needs ~2 x ROWS x 16 x 4 B of memory over the servers
# with adagrad (3.3 GB a server at 100M rows), ~17/16 of one table with rowwise_adagrad, and as much disk twice.
# Settings (environment): ROWS=100000000 LINES=40000 OPTIMIZER=adagrad BUILD_DIR=<repo>/build WORK=<a temporary
# folder>
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
set_defaults ROWS=100000000 LINES=40000 OPTIMIZER=adagrad BUILD_DIR="$REPO/build"
work=${WORK:-$(mktemp -d -p "$REPO/..")}
trap 'rm -rf "$work"' EXIT
"$BUILD_DIR/bin/pstrain-data" synthetic-ctr --lines "$LINES" --seed 7 --output "$work/data" --split-count 2 > /dev/null
cat > "$work/scale.model" <<MODEL
b1 dense units=16 inputs=input
b1a relu
c embedding_bag fields=0-25 rows=$ROWS dim=16 limit=0.01
x dot_interaction inputs=b1a,c
t1 dense units=64
t1a relu
logit dense units=1 loss=bce
MODEL
start=$(date +%s)
env "${MPI_ENV[@]}" /usr/bin/time -v mpirun -np 6 --oversubscribe --mca btl tcp,self --mca osc pt2pt \
  "$BUILD_DIR/bin/pstrain" --data-dir "$work/data" --model-file "$work/scale.model" --num-pservers 4 --mode sync \
  --optimizer "$OPTIMIZER" --lr 0.05 --batch-size 128 --passes 1 --output-dir "$work/run" > "$work/run.log" 2> "$work/time.log" \
  || { tail -5 "$work/run.log" "$work/time.log"; die "the run failed"; }
echo "run: $(( $(date +%s) - start )) s in all"
grep -E "row tables per step|training finished" "$work/run.log"
grep -E "Maximum resident" "$work/time.log" | sed 's/^\s*/largest rank: /'
checkpoint=$(ls -d "$work"/run/checkpoints/ckpt-* | tail -1)
du -sh "$checkpoint" "$work/run/pass-00000"
# The row files' birth and last write: the servers write them side by side.
stat -c '%W %Y' "$checkpoint"/rows-* | awk '{ if (!b || $1 < b) b = $1; if ($2 > e) e = $2 } END { print "row files written in", e - b, "s" }'
