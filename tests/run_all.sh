#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs what is missing, builds, and runs every CTest test
# (unit tests, then the multi-rank mpirun tests on both MPI paths). The container rehearsal (label `containers`,
# tests/containers/run.sh: builds the image, ~30+ min the first time) is left out unless a label is asked for:
#   bash tests/run_all.sh -L containers
set -euo pipefail
cd "$(dirname "$0")/.."
bash mpi_launch/setup.sh
cd build
exclude=(-LE containers)
for arg in "$@"; do
  case "$arg" in -LE* | --label-exclude*) ;; -L* | --label-regex*) exclude=() ;; esac
done
ctest --output-on-failure --timeout 600 -j 2 "${exclude[@]}" "$@"
