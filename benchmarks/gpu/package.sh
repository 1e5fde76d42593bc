#!/usr/bin/env bash
# Packs what the GPU machine needs to run pstrain into one folder that travels as a `carry` (64 MiB at most,
# the repository's tracked files included): the GPU machine has CUDA, PyTorch and h5py but no Open MPI, HDF5,
# OpenBLAS or Boost.
#
#   benchmarks/gpu/package.sh                 # BUILD_DIR=build, bundle in gpu-bundle/ (git-ignored)
#   BUILD_DIR=build-cuda TESTS=test_gpu benchmarks/gpu/package.sh   # the `cuda` preset's build, test_gpu only
#
# Run it on this machine after a build (for the GPU: a build with the CUDA backend, e.g. the default `build`).
# The bundle holds:
#   payload.tar.xz   bin/ (pstrain, pstrain-data and the test_* binaries, stripped; mpirun = orterun, orted,
#                    ompi_info), lib/ (every shared library they and the Open MPI plugins need, found with ldd,
#                    less the glibc core, the CUDA driver and the CUDA toolkit libraries, which the GPU machine
#                    has), lib-compat/ (libstdc++ and libgcc_s, used only where the system's are too old),
#                    ompi/ (Open MPI's plugins, help files and openmpi-mca-params.conf), pmix2/ (PMIx's plugins
#                    and help files), BUILD_INFO
#   payload.id       a hash of the payload: env.sh unpacks it once into /tmp/pstrain-bundle-<id>/
#   env.sh           `source gpu-bundle/env.sh`: unpacks, then sets PATH, LD_LIBRARY_PATH, OPAL_* / PMIX_* (Open
#                    MPI relocated to the unpacked folder), OMPI_ALLOW_RUN_AS_ROOT*; keeps the caller's
#                    LD_LIBRARY_PATH in GPU_BUNDLE_SAVED_LD_LIBRARY_PATH (run Python with that, not with the bundle's)
#   data/fashion-mnist-idx/   the four gzip'd IDX files (30 MB): run_checks.sh converts them there with
#                    the bundled pstrain-data (faster to carry than the 220 MB of shards)
#   MANIFEST.txt     what is inside, with sizes
#
# Settings (environment): BUILD_DIR=<repo>/build  BUNDLE=<repo>/gpu-bundle
#   FASHION_MNIST_IDX=/usr/share/datasets/fashion-mnist (DATA=none leaves data out)
#   TESTS="test_*" (glob of test binaries in BUILD_DIR/bin to include; "" for none)
#   LIMIT_MB=64 (the carry limit; the repository's tracked files count towards it too)  XZ_LEVEL=6
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=benchmarks/lib/common.sh
source "$SCRIPT_DIR/../lib/common.sh"
NOTE_TAG=package

set_defaults BUILD_DIR="$REPO/build" BUNDLE="$REPO/gpu-bundle" FASHION_MNIST_IDX=/usr/share/datasets/fashion-mnist \
  DATA=idx LIMIT_MB=64 XZ_LEVEL=6
TESTS="${TESTS-test_*}"   # set but empty: no test binaries

require_tools ldd strip tar xz sha256sum readelf ompi_info
for bin in pstrain pstrain-data; do
  [[ -x "$BUILD_DIR/bin/$bin" ]] || die "$BUILD_DIR/bin/$bin is missing: build first (cmake --build $BUILD_DIR -j2)"
done
[[ "$DATA" == idx || "$DATA" == none ]] || die "DATA must be idx or none (got '$DATA')"
case "$BUNDLE" in "$REPO"/*) git -C "$REPO" check-ignore -q "$BUNDLE/x" ||
  die "$BUNDLE is inside the repository but not git-ignored (add it to .gitignore)";; esac

# Open MPI's own idea of its folders (Debian: pkglibdir /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3).
# (awk reads to the end: an early exit would make the writer die of SIGPIPE, which pipefail reports.)
ompi_path() { ompi_info --parsable --path "$1" | awk -F: -v key="$1" '$2 == key && !found {print $3; found = 1}'; }
OMPI_PKGLIBDIR="$(ompi_path pkglibdir)"
OMPI_PKGDATADIR="$(ompi_path pkgdatadir)"
OMPI_SYSCONFDIR="$(ompi_path sysconfdir)"
OMPI_BINDIR="$(ompi_path bindir)"
[[ -d "$OMPI_PKGLIBDIR" ]] || die "Open MPI's plugin folder '$OMPI_PKGLIBDIR' (ompi_info --path pkglibdir) is missing"
ORTERUN="$(readlink -f "$(command -v mpirun)")"

STAGE="$(mktemp -d "${TMPDIR:-/tmp}/pstrain-package.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
ROOT="$STAGE/root"
mkdir -p "$ROOT"/{bin,lib,lib-compat,ompi/lib/openmpi3,ompi/share,ompi/etc,pmix2/lib/pmix,pmix2/share}

# ---- binaries -------------------------------------------------------------------------------------

binaries=(pstrain pstrain-data)
if [[ -n "$TESTS" ]]; then
  shopt -s nullglob
  for path in "$BUILD_DIR"/bin/$TESTS; do [[ -x "$path" && -f "$path" ]] && binaries+=("$(basename "$path")"); done
  shopt -u nullglob
fi
for bin in "${binaries[@]}"; do
  cp "$BUILD_DIR/bin/$bin" "$ROOT/bin/"
  strip --strip-unneeded "$ROOT/bin/$bin"
done
cp "$ORTERUN" "$ROOT/bin/orterun"
ln -s orterun "$ROOT/bin/mpirun"
ln -s orterun "$ROOT/bin/mpiexec"
for tool in orted ompi_info; do
  if [[ -x "$OMPI_BINDIR/$tool" ]]; then cp "$(readlink -f "$OMPI_BINDIR/$tool")" "$ROOT/bin/$tool"; fi
done
note "binaries: ${binaries[*]} + mpirun (orterun), orted, ompi_info"

# ---- Open MPI and PMIx plugins, help files, configuration ------------------------------------------

# Plugins for networks the GPU machine does not have would drag in large libraries (UCX, libfabric, verbs,
# PSM); Debian's openmpi-mca-params.conf turns most of them off anyway. A plugin that is absent is silently
# skipped; one whose library is missing would print a warning on every run.
SKIP_PLUGIN_LIBS='lib(ucp|uct|ucs|ucm|fabric|ibverbs|rdmacm|psm_infinipath|psm2|mlx5|efa)\.so'
kept=0 skipped=()
for plugin in "$OMPI_PKGLIBDIR"/*.so; do
  deps="$(ldd "$plugin" 2> /dev/null || true)"   # not piped into grep -q: pipefail would see ldd's SIGPIPE
  if grep -Eq "$SKIP_PLUGIN_LIBS" <<< "$deps"; then
    skipped+=("$(basename "$plugin" .so)")
  else
    cp "$plugin" "$ROOT/ompi/lib/openmpi3/"
    kept=$((kept + 1))
  fi
done
note "Open MPI plugins: $kept kept; left out (network libraries): ${skipped[*]:-none}"
[[ -d "$OMPI_PKGDATADIR" ]] && cp -r "$OMPI_PKGDATADIR" "$ROOT/ompi/share/openmpi"
if [[ -f "$OMPI_SYSCONFDIR/openmpi-mca-params.conf" ]]; then
  cp "$OMPI_SYSCONFDIR"/openmpi-* "$ROOT/ompi/etc/"
else
  note "no $OMPI_SYSCONFDIR/openmpi-mca-params.conf; the bundle runs with Open MPI's built-in defaults"
fi

# PMIx (Open MPI 4 on Debian uses the system's): its plugins and help files, found next to libpmix.
pmix_lib="$(ldd "$OMPI_PKGLIBDIR"/mca_pmix_*.so 2> /dev/null | awk '/libpmix\.so/ && !p {p = $3} END {print p}')"
if [[ -n "$pmix_lib" ]]; then
  pmix_prefix="$(dirname "$(dirname "$(readlink -f "$pmix_lib")")")"   # .../pmix2/lib/libpmix.so.2.x -> .../pmix2
  if compgen -G "$pmix_prefix/lib/pmix/*.so" > /dev/null; then cp "$pmix_prefix"/lib/pmix/*.so "$ROOT/pmix2/lib/pmix/"; fi
  if [[ -d "$pmix_prefix/share/pmix" ]]; then cp -r "$pmix_prefix/share/pmix" "$ROOT/pmix2/share/"; fi
fi

# ---- shared libraries -----------------------------------------------------------------------------

# Provided by the GPU machine, or must come from it: glibc's core, the CUDA driver and toolkit libraries
# (cuBLAS alone is hundreds of MB; the image has CUDA 13 in /usr/local/cuda and in PyTorch's nvidia packages).
SYSTEM_LIBS='^(linux-vdso|ld-linux-x86-64|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|libBrokenLocale)\.so'
GPU_LIBS='^lib(cuda|cudart|cublas|cublasLt|nccl|nvidia-.*|cudnn.*|nvrtc.*|nvJitLink|cufft.*|curand|cusolver.*|cusparse.*|cupti|nvToolsExt|nvptxcompiler.*|nvrtc-builtins.*)\.so'
COMPAT_LIBS='^(libstdc\+\+|libgcc_s)\.so'

elves=("$ROOT"/bin/* "$ROOT"/ompi/lib/openmpi3/*.so)
compgen -G "$ROOT/pmix2/lib/pmix/*.so" > /dev/null && elves+=("$ROOT"/pmix2/lib/pmix/*.so)
declare -A seen=()
missing=()
# Libraries a plugin needs come from the original folders (ldd on the copy resolves the same way, since
# plugins carry no RUNPATH of their own on Debian); a fixed point over the copied libraries is not needed,
# ldd already lists the whole tree of each file.
for elf in "${elves[@]}"; do
  [[ -L "$elf" ]] && continue
  readelf -h "$elf" > /dev/null 2>&1 || continue
  while read -r name arrow path _; do
    [[ "$arrow" == "=>" ]] || { path=""; }
    [[ -n "${seen[$name]:-}" ]] && continue
    seen[$name]=1
    if [[ "$name" =~ $SYSTEM_LIBS || "$name" =~ $GPU_LIBS ]]; then continue; fi
    if [[ "$path" == "not" || -z "$path" ]]; then
      [[ "$name" == /* ]] || missing+=("$name (needed by $(basename "$elf"))")
      continue
    fi
    if [[ "$name" =~ $COMPAT_LIBS ]]; then cp -L "$path" "$ROOT/lib-compat/$name"; else cp -L "$path" "$ROOT/lib/$name"; fi
  done < <(LD_LIBRARY_PATH="$(dirname "$OMPI_PKGLIBDIR")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$elf" 2> /dev/null)
done
if (( ${#missing[@]} > 0 )); then
  printf '  %s\n' "${missing[@]}" >&2
  die "ldd finds no file for the libraries above on this machine"
fi
note "libraries: $(ls "$ROOT/lib" | wc -l) in lib/, $(ls "$ROOT/lib-compat" | wc -l) in lib-compat/"

# The newest GLIBCXX_ and GLIBC_ versions the bundle asks for: env.sh uses lib-compat/ only where the system's
# libstdc++ lacks that GLIBCXX, and warns when the system's glibc is older than the one it was built against.
needed_versions() {  # PREFIX
  for f in "$ROOT"/bin/* "$ROOT"/lib/* "$ROOT"/ompi/lib/openmpi3/*.so; do
    [[ -L "$f" ]] || readelf -V "$f" 2> /dev/null
  done | grep -o "Name: $1[0-9.]*" | sed "s/Name: //" | sort -uV | tail -n1
}
# The CUDA libraries pstrain needs from the GPU machine: those it links, and cuBLAS, which its GPU backend opens
# at run time (lib/compute/cuda/cublas_api.h) in the version of the CUDA runtime it links. cuDNN is opened at run
# time too where the machine has one (lib/compute/cuda/cudnn_api.h: the system's or PyTorch's); without one the
# convolutions run as im2col + cuBLAS, so it is not listed as needed.
cuda_libraries_needed() {
  local linked
  linked="$(ldd "$BUILD_DIR/bin/pstrain" | awk '{print $1}' | grep -E "$GPU_LIBS" || true)"
  [[ -n "$linked" ]] || return 0
  echo "$linked"
  echo "$linked" | sed -n 's/^libcudart\.so\.\([0-9]*\)$/libcublas.so.\1/p'
}
{
  echo "packed_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "packed_on=$(hostname) ($(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-unknown}"))"
  echo "build_dir=$BUILD_DIR"
  git_info
  echo "pstrain_version=$("$BUILD_DIR/bin/pstrain" --version 2>/dev/null | head -n1 || echo unknown)"
  # "cuDNN ON": the build opens a cuDNN 9 at run time (not carried: ~470 MB; PyTorch's, via env.sh's nvidia/*/lib)
  echo "built_with=$("$BUILD_DIR/bin/pstrain" --version 2>/dev/null | sed -n 's/^ *built with: //p' || echo unknown)"
  echo "cuda_libraries_needed=$(cuda_libraries_needed | paste -sd' ')"
  echo "open_mpi=$(ompi_info --parsable --version ompi full 2>/dev/null | head -n1 || ompi_info --version | head -n1)"
  echo "glibc_built_against=$(getconf GNU_LIBC_VERSION | awk '{print $2}')"
  echo "glibc_needed=$(needed_versions GLIBC_2 | sed 's/GLIBC_//')"
  echo "glibcxx_needed=$(needed_versions GLIBCXX_3)"
} > "$ROOT/BUILD_INFO"
if grep -q '^cuda_libraries_needed=$' "$ROOT/BUILD_INFO"; then
  note "NOTE: $BUILD_DIR/bin/pstrain links no CUDA library: this build has no CUDA backend (--device gpu will fail)"
fi

# ---- env.sh ---------------------------------------------------------------------------------------

write_env_sh() {
  cat <<'ENV'
# shellcheck shell=bash
# pstrain GPU bundle (benchmarks/gpu/package.sh). `source gpu-bundle/env.sh` (bash), from any folder.
# Unpacks payload.tar.xz once into /tmp/pstrain-bundle-<id>/ (GPU_BUNDLE_UNPACK_DIR overrides), then sets:
#   PATH             the bundle's bin/ first: pstrain, pstrain-data, test_*, mpirun (Open MPI 4.1), ompi_info
#   LD_LIBRARY_PATH  the bundle's libraries, then the caller's, then the CUDA libraries of this machine
#                    (/usr/local/cuda, the driver's /usr/local/nvidia, PyTorch's nvidia-* packages)
#   OPAL_*, PMIX_*   Open MPI and PMIx relocated into the unpacked folder (plugins, help files, mca-params)
#   OMPI_ALLOW_RUN_AS_ROOT, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
#   GPU_BUNDLE_SAVED_LD_LIBRARY_PATH   the caller's LD_LIBRARY_PATH: run Python (PyTorch) with it, since the
#                    bundle's libraries (zlib, OpenSSL, libstdc++ ...) are older builds of what Python loads
#   GPU_BUNDLE_FASHION_MNIST_IDX the bundled Fashion-MNIST IDX files, when packed
GPU_BUNDLE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
GPU_BUNDLE_ROOT="${GPU_BUNDLE_UNPACK_DIR:-${TMPDIR:-/tmp}/pstrain-bundle-$(cat "$GPU_BUNDLE/payload.id")}"
if [ ! -f "$GPU_BUNDLE_ROOT/.unpacked" ]; then
  echo "env.sh: unpacking the bundle into $GPU_BUNDLE_ROOT" >&2
  rm -rf "$GPU_BUNDLE_ROOT.partial" && mkdir -p "$GPU_BUNDLE_ROOT.partial" || return 1
  if command -v xz > /dev/null 2>&1; then
    xz -dc "$GPU_BUNDLE/payload.tar.xz" | tar -C "$GPU_BUNDLE_ROOT.partial" -xf -
  else  # no xz-utils: Python's tarfile reads .tar.xz too
    python3 -c 'import sys, tarfile
t = tarfile.open(sys.argv[1])
t.extractall(sys.argv[2], **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))' \
      "$GPU_BUNDLE/payload.tar.xz" "$GPU_BUNDLE_ROOT.partial"
  fi || { echo "env.sh: cannot unpack $GPU_BUNDLE/payload.tar.xz (needs xz or python3)" >&2; return 1; }
  touch "$GPU_BUNDLE_ROOT.partial/.unpacked"
  rm -rf "$GPU_BUNDLE_ROOT" && mv "$GPU_BUNDLE_ROOT.partial" "$GPU_BUNDLE_ROOT" || return 1
fi
export GPU_BUNDLE GPU_BUNDLE_ROOT

# Sourcing twice must not save the bundle's own paths as the caller's.
if [ -z "${GPU_BUNDLE_SAVED_LD_LIBRARY_PATH+set}" ]; then export GPU_BUNDLE_SAVED_LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}"; fi
_pstrain_ld="$GPU_BUNDLE_ROOT/lib"
# libstdc++/libgcc_s: the system's when it is new enough (a newer one serves older programs), else the bundle's.
_pstrain_need="$(sed -n 's/^glibcxx_needed=//p' "$GPU_BUNDLE_ROOT/BUILD_INFO")"
_pstrain_sys="$( (ldconfig -p 2> /dev/null || /sbin/ldconfig -p 2> /dev/null) | awk '/libstdc\+\+\.so\.6 .*x86-64/ && !p {p = $NF} END {print p}')"
if [ ! -f "$_pstrain_sys" ] || [ -z "$_pstrain_need" ] || ! grep -qaF "$_pstrain_need" "$_pstrain_sys" 2> /dev/null; then
  _pstrain_ld="$_pstrain_ld:$GPU_BUNDLE_ROOT/lib-compat"
fi
_pstrain_glibc_need="$(sed -n 's/^glibc_needed=//p' "$GPU_BUNDLE_ROOT/BUILD_INFO")"
_pstrain_glibc="$(getconf GNU_LIBC_VERSION 2> /dev/null | awk '{print $2}')"
if [ -n "$_pstrain_glibc" ] && [ -n "$_pstrain_glibc_need" ] &&
   [ "$(printf '%s\n%s\n' "$_pstrain_glibc_need" "$_pstrain_glibc" | sort -V | head -n1)" != "$_pstrain_glibc_need" ]; then
  echo "env.sh: WARNING: this machine's glibc $_pstrain_glibc is older than the $_pstrain_glibc_need the bundle needs" >&2
fi
# CUDA runtime, cuBLAS and NCCL are not in the bundle: the machine's toolkit, driver and PyTorch's wheels have them.
_pstrain_cuda=""
for _pstrain_dir in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
                    /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
  [ -d "$_pstrain_dir" ] && _pstrain_cuda="$_pstrain_cuda:$_pstrain_dir"
done
if command -v python3 > /dev/null 2>&1; then
  _pstrain_dir="$(LD_LIBRARY_PATH="$GPU_BUNDLE_SAVED_LD_LIBRARY_PATH" python3 -c 'import glob, os
try:
    import nvidia
    roots = list(nvidia.__path__)
except Exception:
    roots = []
print(":".join(sorted({os.path.dirname(p) for r in roots for p in glob.glob(os.path.join(r, "*", "lib", "lib*.so*"))})))' 2> /dev/null)"
  [ -n "$_pstrain_dir" ] && _pstrain_cuda="$_pstrain_cuda:$_pstrain_dir"
fi
export LD_LIBRARY_PATH="$_pstrain_ld${GPU_BUNDLE_SAVED_LD_LIBRARY_PATH:+:$GPU_BUNDLE_SAVED_LD_LIBRARY_PATH}$_pstrain_cuda"
export PATH="$GPU_BUNDLE_ROOT/bin:${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}"

# Open MPI finds its plugins, help texts and mca-params.conf through these (opal installdirs "env").
export OPAL_PREFIX="$GPU_BUNDLE_ROOT/ompi" OPAL_EXEC_PREFIX="$GPU_BUNDLE_ROOT/ompi"
export OPAL_BINDIR="$GPU_BUNDLE_ROOT/bin" OPAL_SBINDIR="$GPU_BUNDLE_ROOT/bin" OPAL_LIBEXECDIR="$GPU_BUNDLE_ROOT/bin"
export OPAL_LIBDIR="$GPU_BUNDLE_ROOT/lib" OPAL_PKGLIBDIR="$GPU_BUNDLE_ROOT/ompi/lib/openmpi3"
export OPAL_DATAROOTDIR="$GPU_BUNDLE_ROOT/ompi/share" OPAL_DATADIR="$GPU_BUNDLE_ROOT/ompi/share"
export OPAL_PKGDATADIR="$GPU_BUNDLE_ROOT/ompi/share/openmpi" OPAL_SYSCONFDIR="$GPU_BUNDLE_ROOT/ompi/etc"
export PMIX_PREFIX="$GPU_BUNDLE_ROOT/pmix2" PMIX_LIBDIR="$GPU_BUNDLE_ROOT/lib" PMIX_PKGLIBDIR="$GPU_BUNDLE_ROOT/pmix2/lib/pmix"
export PMIX_DATADIR="$GPU_BUNDLE_ROOT/pmix2/share" PMIX_PKGDATADIR="$GPU_BUNDLE_ROOT/pmix2/share/pmix"
export PMIX_SYSCONFDIR="$GPU_BUNDLE_ROOT/pmix2/share" PMIX_MCA_mca_base_component_path="$GPU_BUNDLE_ROOT/pmix2/lib/pmix"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -d "$GPU_BUNDLE/data/fashion-mnist-idx" ] && export GPU_BUNDLE_FASHION_MNIST_IDX="$GPU_BUNDLE/data/fashion-mnist-idx"
unset _pstrain_ld _pstrain_need _pstrain_sys _pstrain_glibc _pstrain_glibc_need _pstrain_cuda _pstrain_dir
true
ENV
}

# ---- the bundle -----------------------------------------------------------------------------------

rm -rf "$BUNDLE"
mkdir -p "$BUNDLE"
note "compressing the payload (xz -$XZ_LEVEL) ..."
tar -C "$ROOT" --owner=0 --group=0 -cf - . | xz -T0 "-$XZ_LEVEL" > "$BUNDLE/payload.tar.xz"
sha256sum "$BUNDLE/payload.tar.xz" | cut -c1-16 > "$BUNDLE/payload.id"
write_env_sh > "$BUNDLE/env.sh"
cp "$ROOT/BUILD_INFO" "$BUNDLE/BUILD_INFO"

if [[ "$DATA" == idx ]]; then
  idx_files=(train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz)
  have_all=1
  for f in "${idx_files[@]}"; do [[ -f "$FASHION_MNIST_IDX/$f" ]] || have_all=0; done
  if (( have_all )); then
    mkdir -p "$BUNDLE/data/fashion-mnist-idx"
    for f in "${idx_files[@]}"; do cp "$FASHION_MNIST_IDX/$f" "$BUNDLE/data/fashion-mnist-idx/"; done
  else
    note "WARNING: no Fashion-MNIST IDX files (${idx_files[*]}) in $FASHION_MNIST_IDX: the bundle carries no data"
  fi
fi

{
  echo "# gpu-bundle made by benchmarks/gpu/package.sh; payload unpacks into /tmp/pstrain-bundle-$(cat "$BUNDLE/payload.id")"
  cat "$ROOT/BUILD_INFO"
  echo
  echo "## bundle (as carried)"
  (cd "$BUNDLE" && find . -type f ! -name MANIFEST.txt -printf '%s\t%p\n' | sort -k2)
  echo
  echo "## payload (unpacked)"
  (cd "$ROOT" && find . \( -type f -o -type l \) -printf '%s\t%p\n' | sort -k2)
} > "$BUNDLE/MANIFEST.txt"

bundle_bytes=$(du -sb "$BUNDLE" | cut -f1)
payload_bytes=$(du -sb "$ROOT" | cut -f1)
tree_bytes=$(cd "$REPO" && git ls-files -z --cached --others --exclude-standard | xargs -0 stat -c %s 2>/dev/null |
             awk '{s += $1} END {print s + 0}')
mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
note "bundle $BUNDLE: $(mib "$bundle_bytes") (payload $(mib "$(stat -c %s "$BUNDLE/payload.tar.xz")"), unpacked $(mib "$payload_bytes"));" \
     "with the working tree ($(mib "$tree_bytes")) $(mib $((bundle_bytes + tree_bytes))) of the ${LIMIT_MB} MiB a call carries"
if (( bundle_bytes + tree_bytes > LIMIT_MB * 1048576 )); then
  die "the bundle and the working tree exceed ${LIMIT_MB} MiB: leave out data (DATA=none) or tests (TESTS=)"
fi
echo "$BUNDLE"
