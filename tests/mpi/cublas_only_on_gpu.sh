#!/usr/bin/env bash
# No rank of a job without a GPU loads cuBLAS (compute/cuda/cublas_api.h: it is 144 MiB resident per process once
# loaded) or cuDNN (compute/cuda/cudnn_api.h: opened by a GPU backend's first convolution): 1 server + 2 trainers
# of a small CNN, --device auto, on a machine without a GPU. The dynamic loader's own log
# (LD_DEBUG=files, one file per process) lists every library each process opened, linked or dlopen'ed.
source "$(dirname "$0")/common.sh"
path=$1
if compgen -G "/dev/nvidia[0-9]*" > /dev/null; then
  echo "SKIP: this machine has a GPU, so --device auto trainers load cuBLAS as they should"
  exit 77
fi
work=$(new_work_dir "cublas_only_on_gpu_${path}")
run_mpi 3 "$path" 120 -x LD_DEBUG=files -x LD_DEBUG_OUTPUT="$work/loader" "$BIN_DIR/pstrain" --data-dir "$DATA_DIR" \
  --output-dir "$work/run" --mode sync --passes 1 --batch-size 32 --model cnn --conv-filters 4 --hidden 16 --device auto \
  > "$work/run.log" 2>&1 || { cat "$work/run.log"; fail "the run failed"; }
logs=("$work"/loader.*)
[ -e "${logs[0]}" ] || fail "the dynamic loader wrote no log: LD_DEBUG_OUTPUT did not reach the ranks"
# The check can fail: every rank's log must show Open MPI being loaded, or the logs are not the ranks'.
mpi_logs=$(grep -l "file=libmpi.so" "${logs[@]}" | wc -l)
[ "$mpi_logs" -ge 3 ] || fail "only $mpi_logs loader logs show libmpi being opened, expected one per rank (3)"
if grep -lE "file=lib(cublas|cudnn)" "${logs[@]}"; then
  grep -hE "file=lib(cublas|cudnn)" "${logs[@]}" | head -3
  fail "a rank of a job without a GPU loaded cuBLAS or cuDNN (the logs above)"
fi
echo "PASS: none of the 3 ranks (${#logs[@]} processes) loaded cuBLAS or cuDNN over $path"
