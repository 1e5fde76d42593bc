#!/usr/bin/env bash
# The relative bit-identity tests (A equals B on one machine: a streamed step against an unstreamed one) under every
# kernel family a user's CPU may get, whatever this machine would pick itself: OpenBLAS's (OPENBLAS_CORETYPE:
# Haswell is what Zen 1-3 and Haswell/Broadwell get, SkylakeX what AVX-512 machines get) with oneDNN's ISA cap
# (ONEDNN_MAX_CPU_ISA). A family this CPU cannot run is skipped by name (OpenBLAS falls back silently otherwise).
#   BIN_DIR=build/bin bash tests/unit/nn/kernel_families_test.sh
set -euo pipefail
: "${BIN_DIR:?}"
families=("Haswell AVX2" "Zen AVX2" "SkylakeX AVX512_CORE" "Sandybridge AVX")
ran=0
for family in "${families[@]}"; do
  read -r coretype isa <<< "$family"
  case "$isa" in
    AVX512_CORE) flag=avx512f ;;
    AVX2) flag=avx2 ;;
    *) flag=avx ;;
  esac
  if ! grep -qw "$flag" /proc/cpuinfo; then
    echo "kernel families: SKIPPED $coretype/$isa: this CPU has no $flag"
    continue
  fi
  echo "kernel families: OPENBLAS_CORETYPE=$coretype ONEDNN_MAX_CPU_ISA=$isa"
  OPENBLAS_CORETYPE=$coretype ONEDNN_MAX_CPU_ISA=$isa OPENBLAS_NUM_THREADS=1 \
    "$BIN_DIR/test_nn" --gtest_filter='ParameterStreamTest.*' --gtest_brief=1 \
    || { echo "FAIL: a streamed step is not an unstreamed one's bits under $coretype/$isa"; exit 1; }
  ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || { echo "FAIL: no kernel family could run"; exit 1; }
echo "PASS: streamed and unstreamed steps give the same bits under $ran kernel families"
