#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs what is missing, builds, and runs every CTest test
# (unit tests, then the multi-rank mpirun tests on both MPI paths).
set -euo pipefail
cd "$(dirname "$0")/.."
bash mpi_launch/setup.sh
cd build
ctest --output-on-failure --timeout 600 -j 2 "$@"
