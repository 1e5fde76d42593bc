#!/usr/bin/env bash
# The absolute pins (tests/unit/nn/test_model_pins.cc: hashes of trained parameters) were recorded under OpenBLAS's
# SkylakeX kernels with oneDNN's avx512_core ones; they run under those wherever the CPU has AVX-512, whatever
# family the machine would pick itself (some set OPENBLAS_CORETYPE=Haswell for every process). Elsewhere they skip,
# saying so; the relative bit identities run under every family (kernel_families_test.sh).
#   BIN_DIR=build/bin bash tests/unit/nn/model_pins_test.sh
set -euo pipefail
: "${BIN_DIR:?}"
if ! grep -qw avx512f /proc/cpuinfo; then
  echo "SKIPPED: the pins need the SkylakeX kernels they were recorded with, and this CPU has no AVX-512"
  exit 77
fi
OPENBLAS_CORETYPE=SkylakeX ONEDNN_MAX_CPU_ISA=AVX512_CORE OPENBLAS_NUM_THREADS=1 \
  "$BIN_DIR/test_nn" --gtest_filter='ModelPinTest.*' --gtest_brief=1 > pins.log 2>&1 || { cat pins.log; exit 1; }
cat pins.log
if grep -q "SKIPPED" pins.log; then grep -q "this build has no oneDNN" pins.log || { echo "FAIL: a pin skipped"; exit 1; }; fi
echo "PASS: every model keeps its pinned parameters under the kernels they were recorded with"
