#!/usr/bin/env bash
# embedding_bag forward + backward on one thread (batch 512, 26 fields of one id, dim 16, 2^18 rows): a table per
# field against one shared table, samples/s, medians of REPS steps. Prints a markdown table; writes it to
# OUT_DIR/table.md.
#   REPS=21  BUILD_DIR=<repo>/build  OUT_DIR=<repo>/benchmarks/results/embedding-bag
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
NOTE_TAG=embedding_bag
set_defaults REPS=21 BUILD_DIR="$REPO/build" OUT_DIR="$REPO/benchmarks/results/embedding-bag"
check_positive REPS
require_tools g++
mkdir -p "$OUT_DIR"
libs=("$BUILD_DIR/lib/nn/libpstrain_nn.a" "$BUILD_DIR/lib/compute/libpstrain_compute.a"
      "$BUILD_DIR/lib/core/libpstrain_core.a")
for lib in "${libs[@]}"; do [[ -f "$lib" ]] || die "$lib is missing: cmake --build $BUILD_DIR -j2 first"; done
extra=()
grep -q "onednn_convolution" "$BUILD_DIR/lib/compute/CMakeFiles/pstrain_compute.dir/build.make" 2>/dev/null &&
  extra=(-ldnnl -fopenmp)
g++ -O2 -std=c++20 -I"$REPO/lib" "$SCRIPT_DIR/embedding_bag.cc" "${libs[@]}" "${extra[@]}" -lopenblas \
  -lboost_program_options -lz -o "$OUT_DIR/embedding_bag" 2> "$OUT_DIR/build.log" ||
  { cat "$OUT_DIR/build.log" >&2; die "the build failed"; }
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$OUT_DIR/embedding_bag" --reps "$REPS" > "$OUT_DIR/table.body"
{
  echo "# embedding_bag, one thread"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load average" \
       "before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg); $(git_info | tr '\n' ' ')"
  echo
  echo "Batch 512, 26 fields of one random 64-bit id each, dim 16, sum pooling; forward + backward, median of $REPS."
  echo
  cat "$OUT_DIR/table.body"
} > "$OUT_DIR/table.md"
rm -f "$OUT_DIR/table.body"
cat "$OUT_DIR/table.md"
