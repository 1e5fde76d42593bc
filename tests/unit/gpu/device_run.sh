#!/usr/bin/env bash
# Runs the GPU tests on a lent GPU machine (see docs/PLATFORM.md, "GPU"), which has CUDA 13 but no OpenBLAS.
#
#   here:  cmake --build build-cuda -j2 --target test_gpu && tests/unit/gpu/device_run.sh pack
#   there: tests/unit/gpu/device_run.sh run [gtest flags]      (device tool, carry: ["build-cuda/device"])
#
# pack copies test_gpu and the shared libraries the GPU machine may lack into build-cuda/device (about 42 MB);
# cuBLAS (hundreds of MB) is taken from the machine's own CUDA 13 toolkit or its pip nvidia-cublas wheel.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
device="${root}/build-cuda/device"

case "${1:-}" in
  pack)
    rm -rf "${device}" && mkdir -p "${device}/lib"
    cp "${root}/build-cuda/bin/test_gpu" "${device}/"
    for library in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0 libcudart.so.13; do
      path="$(ldd "${device}/test_gpu" | awk -v name="${library}" '$1 == name { print $3 }')"
      if [[ -n "${path}" ]]; then cp -L "${path}" "${device}/lib/"; fi
    done
    du -sh "${device}"
    ;;
  run)
    shift
    search="${device}/lib"
    for candidate in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
      if [[ -e "${candidate}/libcublas.so.13" ]]; then search="${search}:${candidate}"; fi
    done
    # PyTorch's pip wheels carry cuBLAS too.
    wheels="$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null || true)"
    if [[ -n "${wheels}" ]]; then
      while IFS= read -r folder; do search="${search}:${folder}"; done \
        < <(find "${wheels}" -name 'libcublas*.so.13' -printf '%h\n' 2>/dev/null | sort -u)
    fi
    export LD_LIBRARY_PATH="${search}${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
    if ldd "${device}/test_gpu" | grep 'not found'; then
      echo "device_run.sh: shared libraries missing (LD_LIBRARY_PATH=${LD_LIBRARY_PATH})" >&2
      exit 1
    fi
    exec "${device}/test_gpu" "$@"
    ;;
  *)
    echo "usage: $0 pack | run [gtest flags]" >&2
    exit 2
    ;;
esac
