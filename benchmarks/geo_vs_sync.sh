#!/usr/bin/env bash
# --mode geo (GEO-SGD) against sync with the same layout, over the TCP path (--mca btl tcp,self --mca osc pt2pt),
# and against local training: samples/s and the test figures, medians of ROUNDS alternating rounds (issue 28's bar).
#   1. MLP 1 server + 1 trainer, batch 64, 2 passes of Fashion-MNIST: local, sync, geo --geo-steps 4 (plain SGD
#      lr 0.05 in all three, so that only the exchange differs); samples/s of the last pass.
#   2. The README's main job (MLP 784-256-128-10, 1 server + 2 trainers, batch 64, PASSES passes): sync with its
#      flags (momentum 0.9, lr 0.05, cosine), geo --geo-steps 4 with the same flags (each trainer's velocity its own
#      across meetings), sync with plain SGD (lr 0.1, cosine), geo --geo-steps 4 with plain SGD (lr 0.1, cosine):
#      test accuracy after the last pass and samples/s (mean of passes 1..).
#   3. The Brown NPLM (examples/brown-nplm.ini's model, 1 server + 2 trainers, batch 128) on the first NPLM_LIMIT
#      training windows, 1 pass: sync with the recipe's Adam (lr 0.002), sync with plain SGD (lr 0.5), geo
#      --geo-steps 4 with plain SGD (lr 0.5): test perplexity and words/s.
# PARTS selects the parts (default "1 2 3").
#   bash benchmarks/geo_vs_sync.sh          # ROUNDS=3 PASSES=10 NPLM_LIMIT=20000 GEO_STEPS=4 PARTS="1 2 3"
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3} PASSES=${PASSES:-10} NPLM_LIMIT=${NPLM_LIMIT:-20000} GEO_STEPS=${GEO_STEPS:-4} PARTS=${PARTS:-1 2 3}
part() { [[ " $PARTS " == *" $1 "* ]]; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
[ -x build/bin/pstrain ] || { echo "build first: cmake --build build --target pstrain pstrain-data" >&2; exit 1; }
work=${WORK:-$(mktemp -d)}
echo "work folder: $work"
fm=$work/fashion-mnist brown=$work/brown
build/bin/pstrain-data fashion-mnist --input /usr/share/datasets/fashion-mnist --output "$fm" --split-count 4 > /dev/null
! part 3 || build/bin/pstrain-data brown --input "$(bash mpi_launch/fetch-brown.sh)" --output "$brown" --split-count 8 \
  --limit "$NPLM_LIMIT" > /dev/null
tcp=(--mca btl tcp,self --mca osc pt2pt --mca btl_tcp_if_include lo)
mlp=(--model mlp --hidden 256,128 --batch-size 64)
nplm=(--model nplm --embedding-dim 60 --hidden 50 --direct true --batch-size 128)

run() {  # run NAME NP [flags...]: one training run into $work/NAME-$round
  local name=$1 np=$2
  shift 2
  local out=$work/$name-$round
  if [ "$np" -eq 1 ]; then
    timeout 1800 build/bin/pstrain --output-dir "$out" "$@" > "$out.log" 2>&1
  else
    timeout 1800 mpirun --oversubscribe --bind-to none -np "$np" "${tcp[@]}" build/bin/pstrain --output-dir "$out" "$@" \
      > "$out.log" 2>&1
  fi || { tail -20 "$out.log"; echo "run $name failed" >&2; exit 1; }
}

for ((round = 0; round < ROUNDS; round++)); do
  echo "round $((round + 1)) of $ROUNDS"
  if part 1; then
  run 1-local 1 --data-dir "$fm" "${mlp[@]}" --passes 2 --optimizer sgd --lr 0.05
  run 1-sync 2 --data-dir "$fm" "${mlp[@]}" --passes 2 --optimizer sgd --lr 0.05 --mode sync --num-pservers 1
  run 1-geo 2 --data-dir "$fm" "${mlp[@]}" --passes 2 --optimizer sgd --lr 0.05 --mode geo --geo-steps "$GEO_STEPS" \
    --num-pservers 1
  fi
  if part 2; then
  run 2-sync-momentum 3 --data-dir "$fm" "${mlp[@]}" --passes "$PASSES" --mode sync --optimizer momentum --lr 0.05 \
    --momentum 0.9 --lr-schedule cosine
  run 2-geo-momentum 3 --data-dir "$fm" "${mlp[@]}" --passes "$PASSES" --mode geo --geo-steps "$GEO_STEPS" \
    --optimizer momentum --lr 0.05 --momentum 0.9 --lr-schedule cosine
  run 2-sync-sgd 3 --data-dir "$fm" "${mlp[@]}" --passes "$PASSES" --mode sync --optimizer sgd --lr 0.1 \
    --lr-schedule cosine
  run 2-geo 3 --data-dir "$fm" "${mlp[@]}" --passes "$PASSES" --mode geo --geo-steps "$GEO_STEPS" --optimizer sgd \
    --lr 0.1 --lr-schedule cosine
  fi
  if part 3; then
  run 3-sync-adam 3 --data-dir "$brown" "${nplm[@]}" --passes 1 --mode sync --optimizer adam --lr 0.002
  run 3-sync-sgd 3 --data-dir "$brown" "${nplm[@]}" --passes 1 --mode sync --optimizer sgd --lr 0.5
  run 3-geo 3 --data-dir "$brown" "${nplm[@]}" --passes 1 --mode geo --geo-steps "$GEO_STEPS" --optimizer sgd --lr 0.5
  fi
done

/usr/bin/python3 - "$work" "$ROUNDS" "$PARTS" <<'PY'
import json, statistics, sys
work, rounds, parts = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
def lines(name, r):
    return [json.loads(l) for l in open(f"{work}/{name}-{r}/metrics.jsonl")]
def median(name, pick):
    return statistics.median(pick(lines(name, r)) for r in range(rounds))
last_rate = lambda ls: ls[-1]["samples_per_sec"]
mean_rate = lambda ls: statistics.mean(l["samples_per_sec"] for l in (ls[1:] if len(ls) > 1 else ls))
if "1" in parts:
    print("1. MLP, 1 server + 1 trainer over TCP, batch 64, plain SGD (samples/s of the last pass, median):")
    local = median("1-local", last_rate)
    for name in ("1-local", "1-sync", "1-geo"):
        rate = median(name, last_rate)
        print(f"   {name[2:]:6} {rate:9.0f}  {rate / local:5.2f}x local")
if "2" in parts:
    print("2. The README's main job (1 server + 2 trainers over TCP):")
    for name in ("2-sync-momentum", "2-geo-momentum", "2-sync-sgd", "2-geo"):
        acc = median(name, lambda ls: ls[-1]["test_accuracy"])
        print(f"   {name[2:]:14} test accuracy {acc:.4f}  samples/s {median(name, mean_rate):8.0f}")
if "3" in parts:
    print("3. Brown NPLM, first windows, 1 pass (1 server + 2 trainers over TCP):")
    for name in ("3-sync-adam", "3-sync-sgd", "3-geo"):
        ppl = median(name, lambda ls: ls[-1].get("test_perplexity", float("nan")))
        print(f"   {name[2:]:11} test perplexity {ppl:8.2f}  words/s {median(name, last_rate):8.0f}")
PY
