#!/usr/bin/env bash
# A dry-run of a pstrain job at scale on SimGrid's SMPI (README.md here): one command from a platform file and a
# job to samples/s, the step breakdown, bytes in and out per server and memory per rank.
#
#   benchmarks/scale/pstrain-dryrun.sh --platform benchmarks/scale/platforms/fat-tree-100g.xml \
#       --model mlp --hidden 256,128 --mode sync --servers 4 --trainers 60 --batch 64 [--steps 50] [--warmup-steps 1]
#
# It (1) calibrates the model's step with the real kernels on this machine (build/bin/pstrain-calibrate, cached
# under benchmarks/results/scale/profiles/; --profile FILE gives one measured elsewhere, e.g. on a GPU), (2) writes
# the hostfile (--ranks-per-node, default the platform's core count), (3) runs build-smpi/bin/pstrain-dryrun under
# smpirun with a timeout, and (4) reads the log: smpirun exits 0 even after MPI_Abort or a detected deadlock, so
# the run counts as done only when the report is there and no error is. Exit 0 with the report on stdout; 1 when
# the simulation failed (its log's last lines on stderr); 2 for a bad flag; 77 when smpirun is not installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${DRYRUN_BUILD:-$root/build}
smpi_build=${DRYRUN_SMPI_BUILD:-$root/build-smpi}
platform= model=mlp hidden=256,128 input_shape=28,28 classes=10 width=1 mode=sync servers=-1 trainers= batch=64
steps=50 warmup_steps=1 optimizer=sgd per_node=0 profile= timeout_s=600 poll_us=0 staleness=3 log= compute_ms= overlap=false node_aggregation=false geo_steps=4
embedding_dim=30 direct=false data_dir=

usage() {
  sed -n '2,14p' "$0" >&2
  echo "flags: --platform --ranks-per-node --model --hidden --input-shape --classes --width --mode --servers" \
       "--trainers --batch --steps --warmup-steps --optimizer --staleness --geo-steps --poll-interval-us --overlap --node-aggregation --profile --compute-ms --timeout --log" \
       "--embedding-dim --direct --data-dir (nplm: a token folder gives the vocabulary, context and the batches' ids)" >&2
  exit 2
}
while (($#)); do
  case $1 in
    --platform) platform=$2 ;; --ranks-per-node) per_node=$2 ;; --model) model=$2 ;; --hidden) hidden=$2 ;;
    --input-shape) input_shape=$2 ;; --classes) classes=$2 ;; --width) width=$2 ;; --mode) mode=$2 ;;
    --servers) servers=$2 ;; --trainers) trainers=$2 ;; --batch) batch=$2 ;; --steps) steps=$2 ;; --warmup-steps) warmup_steps=$2 ;;
    --optimizer) optimizer=$2 ;; --staleness) staleness=$2 ;; --poll-interval-us) poll_us=$2 ;; --overlap) overlap=$2 ;;
    --node-aggregation) node_aggregation=$2 ;; --geo-steps) geo_steps=$2 ;;
    --profile) profile=$2 ;; --compute-ms) compute_ms=$2 ;; --timeout) timeout_s=$2 ;; --log) log=$2 ;;
    --embedding-dim) embedding_dim=$2 ;; --direct) direct=$2 ;; --data-dir) data_dir=$2 ;;
    -h | --help) usage ;;
    *) echo "pstrain-dryrun: unknown flag $1" >&2; usage ;;
  esac
  shift 2 || { echo "pstrain-dryrun: $1 needs a value" >&2; exit 2; }
done
[[ -n $platform && -f $platform ]] || { echo "pstrain-dryrun: --platform FILE (benchmarks/scale/platforms/*.xml) is required" >&2; exit 2; }
[[ $trainers =~ ^[1-9][0-9]*$ ]] || { echo "pstrain-dryrun: --trainers N (N >= 1) is required" >&2; exit 2; }
command -v smpirun > /dev/null || { echo "pstrain-dryrun: smpirun not found (apt-get install libsimgrid-dev)" >&2; exit 77; }
[[ -x $smpi_build/bin/pstrain-dryrun ]] || { echo "pstrain-dryrun: $smpi_build/bin/pstrain-dryrun missing: cmake --preset smpi && cmake --build --preset smpi" >&2; exit 2; }

if [[ $mode == allreduce ]]; then servers=0; elif ((servers < 1)); then servers=$(((trainers + 1) / 2)); fi
ranks=$((servers + trainers))

work=$(mktemp -d "${TMPDIR:-/tmp}/pstrain-dryrun.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [[ -z $profile ]]; then
  cache=${DRYRUN_CACHE:-$root/benchmarks/results/scale/profiles}
  mkdir -p "$cache"
  profile=$cache/$model-h${hidden//,/_}-w$width-in${input_shape//,/_}-c$classes-b$batch.profile
  nplm_flags=()
  if [[ $model == nplm ]]; then
    [[ -z $data_dir || -d $data_dir ]] || { echo "pstrain-dryrun: --data-dir $data_dir is not a folder" >&2; exit 2; }
    nplm_flags=(--embedding-dim "$embedding_dim" --direct "$direct")
    [[ -n $data_dir ]] && nplm_flags+=(--data-dir "$data_dir")
    sizes=v$classes-in${input_shape//,/_}
    [[ -n $data_dir ]] && sizes=data_$(basename "$data_dir")  # the folder gives the vocabulary and the context
    profile=$cache/$model-h${hidden//,/_}-m$embedding_dim-d$direct-b$batch-$sizes.profile
  fi
  if [[ ! -s $profile ]]; then
    [[ -x $build/bin/pstrain-calibrate ]] || { echo "pstrain-dryrun: $build/bin/pstrain-calibrate missing (cmake --build build --target pstrain-calibrate)" >&2; exit 2; }
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 timeout 600 "$build/bin/pstrain-calibrate" --output "$profile" \
      --model "$model" --hidden "$hidden" --width "$width" --classes "$classes" --input-shape "$input_shape" \
      --batch-size "$batch" "${nplm_flags[@]}" >&2
  fi
fi

# --compute-ms: the same layers, scaled so that a step computes this long (a step time measured elsewhere: a run
# of pstrain itself, another CPU, a GPU).
if [[ -n $compute_ms ]]; then
  awk -v target="$compute_ms" '$1 == "layer" { total += $3 + $4 } { lines[NR] = $0 }
    END { scale = target / 1000 / total
          for (i = 1; i <= NR; ++i) { split(lines[i], f, " ")
            if (f[1] == "layer") printf "layer %s %.9g %.9g\n", f[2], f[3] * scale, f[4] * scale; else print lines[i] } }' \
    "$profile" > "$work/scaled.profile"
  profile=$work/scaled.profile
fi
/usr/bin/python3 "$here/hostfile.py" "$platform" "$ranks" "$per_node" > "$work/hosts" || exit 2
speed=$(/usr/bin/python3 -c 'import sys,xml.etree.ElementTree as E
r=E.parse(sys.argv[1]).getroot(); print(next(e.get("speed") for e in r.iter() if e.tag in ("host","cluster")))' "$platform")
log=${log:-$work/smpi.log}
mkdir -p "$work/tmp"
# smpirun's -tmpdir is broken in 3.32: TMPDIR it is. The dlopen privatization copies the program once per rank.
# The parameter-server trainers' buffers are SMPI_SHARED_MALLOC'd (lib/core/bulk_vector.h): 'global' folds
# them onto one block of memory; DRYRUN_SHARED_MALLOC=off gives every rank its own (to compare). DRYRUN_SMPI_CFG adds
# SimGrid options, e.g. "--cfg=network/crosstraffic:1 --cfg=smpi/send-is-detached-thresh:65536" puts back SimGrid's
# TCP defaults that the fat tree's platform file turns off (README.md, "Simulating faster").
read -r -a extra_cfg <<< "${DRYRUN_SMPI_CFG:-}"
status=0
TMPDIR=$work/tmp OPENBLAS_NUM_THREADS=1 timeout "$timeout_s" smpirun -np "$ranks" -platform "$platform" \
  -hostfile "$work/hosts" --cfg=smpi/coll-selector:ompi --cfg=smpi/host-speed:"$speed" \
  --cfg=smpi/shared-malloc:"${DRYRUN_SHARED_MALLOC:-global}" "${extra_cfg[@]}" \
  --log=smpi_colls.thres:warning --log=root.fmt:%m%n \
  "$smpi_build/bin/pstrain-dryrun" --profile "$profile" --mode "$mode" --num-pservers "$servers" --steps "$steps" --warmup-steps "$warmup_steps" \
  --optimizer "$optimizer" --staleness "$staleness" --poll-interval-us "$poll_us" --overlap "$overlap" \
  --node-aggregation "$node_aggregation" --geo-steps "$geo_steps" > "$log" 2>&1 || status=$?
if ((status != 0)) || grep -qiE "deadlock|MPI_Abort|pstrain-dryrun: error|Segmentation|terminate called" "$log" ||
   ! grep -q '^dryrun simulated_seconds=' "$log"; then
  echo "pstrain-dryrun: the simulation failed (smpirun status $status; timeout ${timeout_s}s); its log ends:" >&2
  tail -15 "$log" >&2
  exit 1
fi
grep '^dryrun ' "$log"
