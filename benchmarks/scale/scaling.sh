#!/usr/bin/env bash
# Weak scaling from the dry-run (README.md, "Scaling"): a model at batch 64 per trainer (the MLP unless
# MODEL_FLAGS says otherwise), every mode at each rank count, every server count in SERVERS that leaves at least as
# many trainers (parameter-server modes), on one platform. Appends one CSV row per simulation to OUT/CSV
# (default scaling.csv); plot_scaling.py turns it into the table and the PNG.
#   bash benchmarks/scale/scaling.sh [OUT]     RANKS="16 64 256" MODES="sync async ssp allreduce" STEPS=20
# (mode sync-nodeagg: sync with --node-aggregation true, the trainers of each node pushing once)
#   MODEL_FLAGS="--model resnet --width 1 --input-shape 32,32,3" CSV=scaling-resnet.csv bash benchmarks/scale/scaling.sh
#   BATCH=128 MODEL_FLAGS="--model nplm --hidden 50 --embedding-dim 60 --direct true --data-dir data/brown" ...
# The last column is a trainer's row-table traffic per step (rows and ids, both ways; 0 without a row table).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/benchmarks/results/scale}
platform=${PLATFORM:-$here/platforms/fat-tree-100g.xml}
ranks_list=${RANKS:-16 64 256}
modes=${MODES:-sync async ssp allreduce}
servers_list=${SERVERS:-1 2 4 8 16 32 64}
steps=${STEPS:-20}
timeout_s=${TIMEOUT:-600}
batch=${BATCH:-64}
read -r -a model_flags <<< "${MODEL_FLAGS:-}"
mkdir -p "$out"
csv=$out/${CSV:-scaling.csv}
[[ -s $csv ]] || echo "platform,mode,ranks,servers,trainers,batch,steps,samples_per_s,step_ms,compute_ms,push_ms,sync_ms,pull_ms,gate_ms,allreduce_ms,update_ms,server_bytes_in_per_step,server_bytes_out_per_step,server_memory_bytes,trainer_memory_bytes,simulation_wall_s,table_bytes_per_trainer_step" > "$csv"
value() { sed -n "s/.*[ ^]$2=\([0-9.e+-]*\).*/\1/p" "$1" | head -1; }
simulate() {  # mode ranks servers
  local mode=$1 ranks=$2 servers=$3 report start end
  report=$(mktemp)
  start=$(date +%s.%N)
  local mode_flags=(--mode "$mode")
  [[ $mode == sync-nodeagg ]] && mode_flags=(--mode sync --node-aggregation true)
  if ! "$here/pstrain-dryrun.sh" --platform "$platform" "${model_flags[@]}" "${mode_flags[@]}" --servers "$servers" \
      --trainers $((ranks - servers)) --batch "$batch" --steps "$steps" --timeout "$timeout_s" > "$report" 2>&1; then
    echo "scaling: $mode $ranks ranks $servers servers failed:" >&2; tail -5 "$report" >&2; rm -f "$report"; return 0
  fi
  end=$(date +%s.%N)
  local in out table
  table=$(value "$report" bytes_per_trainer_step)
  in=$(grep '^dryrun server=' "$report" | sed 's/.*bytes_in=\([0-9]*\).*/\1/' | sort -n | tail -1 || true)
  out=$(grep '^dryrun server=' "$report" | sed 's/.*bytes_out=\([0-9]*\).*/\1/' | sort -n | tail -1 || true)
  echo "$(basename "$platform" .xml),$mode,$ranks,$servers,$((ranks - servers)),$batch,$steps,$(value "$report" samples_per_s),$(value "$report" step_ms),$(value "$report" compute_ms),$(value "$report" push_ms),$(value "$report" sync_ms),$(value "$report" pull_ms),$(value "$report" gate_ms),$(value "$report" allreduce_ms),$(value "$report" update_ms),$(awk -v b="${in:-0}" -v s="$steps" 'BEGIN { printf "%.0f", b / s }'),$(awk -v b="${out:-0}" -v s="$steps" 'BEGIN { printf "%.0f", b / s }'),$(value "$report" memory_server_bytes),$(value "$report" memory_trainer_bytes),$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }'),${table:-0}" | tee -a "$csv"
  rm -f "$report"
}
for ranks in $ranks_list; do
  for mode in $modes; do
    if [[ $mode == allreduce ]]; then simulate allreduce "$ranks" 0; continue; fi
    for servers in $servers_list; do
      if ((servers * 2 <= ranks)); then simulate "$mode" "$ranks" "$servers"; fi
    done
  done
done
