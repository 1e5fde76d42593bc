#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs what is missing, builds, and runs every CTest test
# (unit tests, then the multi-rank mpirun tests on both MPI paths). The container rehearsal (label `containers`,
# tests/containers/run.sh: builds the image, ~30+ min the first time) is left out unless a label is asked for:
#   bash tests/run_all.sh -L containers
# PSTRAIN_SANITIZERS=1 adds, as a separate step, the sanitizer and fuzzing step (tests/sanitize/run.sh: ASan+UBSan
# and TSan builds, their tests, every fuzz target for 20 s). It is not yet in the default (CI) run: its first run
# builds pstrain twice more (the gcc ASan build alone took 18 minutes here), which would take CI past 45 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash mpi_launch/setup.sh --tests
exclude=(-LE containers)
for arg in "$@"; do
  case "$arg" in -LE* | --label-exclude*) ;; -L* | --label-regex*) exclude=() ;; esac
done
[ "${PSTRAIN_SANITIZERS:-0}" = 1 ] || echo "run_all: sanitizers and fuzzing not run (PSTRAIN_SANITIZERS=1 runs them)"
suite=0
(cd build && ctest --output-on-failure --timeout 600 -j 2 "${exclude[@]}" "$@") || suite=$?

if [ "${PSTRAIN_SANITIZERS:-0}" = 1 ]; then
  echo "run_all: sanitizers and fuzzing (tests/sanitize/run.sh)"
  start=$(date +%s)
  sanitize=0
  bash tests/sanitize/run.sh || sanitize=$?
  echo "run_all: sanitizers and fuzzing took $(( $(date +%s) - start )) s, exit $sanitize"
  [ "$sanitize" -eq 0 ] || { echo "run_all: the sanitizer/fuzzing step FAILED"; [ "$suite" -ne 0 ] || suite=$sanitize; }
fi
exit "$suite"
