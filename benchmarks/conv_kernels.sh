#!/usr/bin/env bash
# The convolutions of the built-in models on one thread: im2col + gemm (OpenBLAS) against the kernel the CPU backend
# chooses (oneDNN's where the build has it: lib/compute/cpu/onednn_convolution.h), forward + backward, medians of
# REPS alternating timings. Prints a markdown table; writes it to OUT_DIR/table.md.
#   REPS=9  BUILD_DIR=<repo>/build  OUT_DIR=<repo>/benchmarks/results/conv-kernels
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
NOTE_TAG=conv
set_defaults REPS=9 BUILD_DIR="$REPO/build" OUT_DIR="$REPO/benchmarks/results/conv-kernels"
check_positive REPS
require_tools g++
mkdir -p "$OUT_DIR"
libs=("$BUILD_DIR/lib/compute/libpstrain_compute.a" "$BUILD_DIR/lib/core/libpstrain_core.a")
for lib in "${libs[@]}"; do [[ -f "$lib" ]] || die "$lib is missing: cmake --build $BUILD_DIR -j2 first"; done
extra=()
grep -q "onednn_convolution" "$BUILD_DIR/lib/compute/CMakeFiles/pstrain_compute.dir/build.make" 2>/dev/null &&
  extra=(-ldnnl -fopenmp)
g++ -O2 -std=c++20 -I"$REPO/lib" "$SCRIPT_DIR/conv_kernels.cc" "${libs[@]}" "${extra[@]}" -lopenblas \
  -lboost_program_options -lz -o "$OUT_DIR/conv_kernels" 2> "$OUT_DIR/build.log" ||
  { cat "$OUT_DIR/build.log" >&2; die "the build failed"; }
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$OUT_DIR/conv_kernels" --reps "$REPS" > "$OUT_DIR/table.body"
{
  echo "# Convolution kernels, one thread"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load average" \
       "before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg); $(git_info | tr '\n' ' ')"
  echo
  echo "Forward + backward (weight and bias gradients; input gradient except for a first layer), ms, median of $REPS."
  echo
  cat "$OUT_DIR/table.body"
} > "$OUT_DIR/table.md"
cat "$OUT_DIR/table.md"
