#!/usr/bin/env bash
# The main job from a fresh machine: install, build, convert Fashion-MNIST to HDF5 shards, and train the MLP
# 784-256-128-10 on 3 ranks (1 parameter-server shard + 2 trainers, sync SGD) for 10 passes.
# Override with environment variables: NP, PASSES, MODE, OUTPUT.
set -euo pipefail
cd "$(dirname "$0")/.."
bash mpi_launch/setup.sh

np=${NP:-3}
data=data/fashion-mnist
output=${OUTPUT:-runs/fashion-mnist-$(date +%Y%m%d-%H%M%S)}
if [ ! -f "$data/test.h5" ]; then
  build/bin/pstrain-data fashion-mnist --input /usr/share/datasets/fashion-mnist --output "$data" --split-count 4
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
mpirun --oversubscribe --bind-to none -np "$np" build/bin/pstrain \
  --data-dir "$data" --output-dir "$output" --mode "${MODE:-sync}" --passes "${PASSES:-10}" \
  --hidden 256,128 --batch-size 64 --optimizer momentum --lr 0.05 --momentum 0.9 --lr-schedule cosine
echo "outputs in $output (metrics.jsonl, pass-NNNNN/, node_<rank>/)"
