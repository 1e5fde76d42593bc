#!/usr/bin/env bash
# A row table larger than any rank may hold: 4M x 64 floats (1 GiB) on 4 server shards and 1 trainer, sync, one
# pass with its end-of-pass checkpoint and pass folder. No rank's peak resident memory reaches half the table
# (each server holds a quarter of it, the trainer one batch's rows; a rank that gathered the table, or a trainer
# that held it with its gradient, would pass 1 GiB). The checkpoint holds the table as one row file per shard
# and a model.h5 without it; the pass folder holds it whole under the layer's name.
# Resident memory is what a rank holds over TCP (osc/pt2pt: windows are private memory); over shared memory a
# trainer's also counts the servers' window pages it has read, so PATH should be tcp.
# usage: large_table.sh PATH
source "$(dirname "$0")/common.sh"
path=$1
work=$(new_work_dir "large_table_np5_${path}")
rows=4000000 width=64
"$TOOLS_DIR/make_id_shards" "$work/data" "$rows" 4 16 2000 1 7 || fail "make_id_shards"
printf 'embed embedding vocab=%s dim=%s\nflat flatten\nlogits dense units=16\n' "$rows" "$width" > "$work/table.model"
out="$work/out"
run_mpi 5 "$path" 240 "$BIN_DIR/pstrain" --data-dir "$work/data" --model-file "$work/table.model" --num-pservers 4 \
  --mode sync --batch-size 64 --passes 1 --optimizer sgd --lr 0.5 --tensorboard false --output-dir "$out" \
  > "$work/run.log" 2>&1 || { tail -30 "$work/run.log"; fail "the run failed"; }
grep -q "is held by rows on the servers" "$work/run.log" || fail "the table was not held by rows"

table_mib=$((rows * width * 4 / 1048576))
for log in "$out"/node_*/*.log; do
  peak=$(sed -n 's/.*peak resident memory of this rank: \([0-9]*\) MiB.*/\1/p' "$log")
  [ -n "$peak" ] || fail "$log reports no peak memory"
  echo "$(basename "$(dirname "$log")") $(basename "$log" .log): peak $peak MiB of a $table_mib MiB table"
  [ "$peak" -lt $((table_mib / 2)) ] || fail "$log: peak $peak MiB, half the table or more"
done

ckpt=$(ls -d "$out"/checkpoints/ckpt-* | tail -1)
for shard in 0 1 2 3; do
  file="$ckpt/rows-embed.weight-0000${shard}-of-00004.h5"
  h5ls "$file/rows" | grep -q "{1000000, 64}" || fail "$file does not hold the shard's 1000000 rows"
  grep -q "$(basename "$file")" "$ckpt/MANIFEST" || fail "the MANIFEST does not list $(basename "$file")"
done
h5ls -r "$ckpt/model.h5" | grep -q "embed.weight" && fail "model.h5 holds the table besides the row files"
h5ls "$out/pass-00000/parameters.h5/embed.weight" | grep -q "{4000000, 64}" || fail "the pass folder lacks the whole table"
echo "PASS: a $table_mib MiB table trained, checkpointed and saved with no rank near its size ($path)"
