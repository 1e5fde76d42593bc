#!/usr/bin/env bash
# How OpenMP's idle threads wait, side by side: pstrain's default (it restarts itself with GOMP_SPINCOUNT=1000
# unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set), libgomp's own default spin (GOMP_SPINCOUNT=300000, what pstrain
# ran before 2026-11-26), OMP_WAIT_POLICY=passive, and one thread. One rank, the default thread count (cores /
# ranks on the node), alternating the variants in every round; prints the median samples/s of each.
#
#   bash benchmarks/cpu_threads.sh            MODEL=mlp|cnn  ROUNDS=3  PASSES=1  BATCH=64
#   DATA_DIR=<repo>/data/fashion-mnist  BUILD_DIR=<repo>/build
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=benchmarks/lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
NOTE_TAG=cpu-threads
set_defaults MODEL=mlp ROUNDS=3 PASSES=1 BATCH=64 DATA_DIR="$REPO/data/fashion-mnist" BUILD_DIR="$REPO/build"
check_positive ROUNDS PASSES BATCH
case "$MODEL" in
  mlp) MODEL_FLAGS=(--model mlp --hidden 256,128) ;;
  cnn) MODEL_FLAGS=(--model cnn --conv-filters 32,64 --kernel-size 3 --hidden 128) ;;
  *) die "MODEL must be mlp or cnn (got '$MODEL')" ;;
esac
PSTRAIN="$BUILD_DIR/bin/pstrain"
[[ -x "$PSTRAIN" ]] || die "$PSTRAIN is missing: build first"
[[ -f "$DATA_DIR/test.h5" ]] || die "no shards in $DATA_DIR"

VARIANTS=("pstrain default|" "libgomp spin 300000|GOMP_SPINCOUNT=300000" "passive|OMP_WAIT_POLICY=passive"
          "one thread|OMP_NUM_THREADS=1")
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
declare -A rates=()
for round in $(seq "$ROUNDS"); do
  for variant in "${VARIANTS[@]}"; do
    name="${variant%%|*}"
    read -r -a settings <<< "${variant#*|}"
    rm -rf "$SCRATCH/run"
    env -u OMP_NUM_THREADS -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "${settings[@]}" "$PSTRAIN" --data-dir "$DATA_DIR" \
      "${MODEL_FLAGS[@]}" --batch-size "$BATCH" --passes "$PASSES" --output-dir "$SCRATCH/run" > "$SCRATCH/log" 2>&1 ||
      die "$name failed: $(tail -3 "$SCRATCH/log")"
    rate="$(python3 -c 'import json, sys; print(round(json.loads(open(sys.argv[1]).readlines()[-1])["samples_per_sec"]))' \
      "$SCRATCH/run/metrics.jsonl")"
    note "round $round, $name: $rate samples/s"
    rates[$name]+="$rate "
  done
done
echo "| $MODEL, batch $BATCH, $(nproc) cores | median samples/s | rounds |"
echo "|---|---:|---|"
for variant in "${VARIANTS[@]}"; do
  name="${variant%%|*}"
  median="$(tr ' ' '\n' <<< "${rates[$name]}" | grep . | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')"
  echo "| $name | $median | ${rates[$name]}|"
done
