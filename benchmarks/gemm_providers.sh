#!/usr/bin/env bash
# Single-thread SGEMM throughput of the GEMM providers pstrain could use, on the products its CPU trainer runs
# (issue "Faster than PyTorch on the same CPU", item 1: measure and choose the GEMM provider).
#
# Providers: OpenBLAS through cblas_sgemm, as it picks its kernels and with OPENBLAS_CORETYPE=SkylakeX and
# =Cooperlake; oneDNN's dnnl_sgemm; BLIS through its cblas_sgemm, as it picks its kernels and with its skx kernels;
# libxsmm's JIT kernels (libxsmm_smmdispatch). Products: the MLP 784-256-128-10 at batch 64 and 256 (forward,
# dW, dX), the NPLM's output layers (batch 128, 50 and 240 -> 14114), the CNN's second convolution (im2col), and a
# 1024^3 square for each provider's peak. One process holds all providers and alternates them in every round of
# repetitions; see gemm_providers.cc and benchmarks/README.md.
#
# As root it installs the Debian 12 packages it needs (when missing): libdnnl-dev (oneDNN 2.6), libblis-serial-dev
# (BLIS 0.9 built without threads; libblis-dev would pull in the OpenMP build) and libxsmm-dev (libxsmm 1.17, a
# static library only). BLIS registers its libblas.so.3 at alternatives priority 70, below OpenBLAS's 100, so
# whatever links -lblas keeps OpenBLAS.
#
# Settings (environment): REPS=9 (timed repetitions per product and provider) SMALL_ONLY=0 (1: the MLP's
#   products only, a quick check) PEAK_ONLY=0 (1: the 1024^3 square only, the machine's single-core sgemm rate;
#   speed_report.sh runs it every round) INSTALL=1 (0: never apt-get) OUT_DIR=<repo>/benchmarks/results/gemm-providers
#   (the binary, table.md, results.csv, build logs)
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
NOTE_TAG=gemm
set_defaults REPS=9 SMALL_ONLY=0 PEAK_ONLY=0 INSTALL=1 OUT_DIR="$REPO/benchmarks/results/gemm-providers"
check_positive REPS
[[ "$SMALL_ONLY" == 0 || "$SMALL_ONLY" == 1 ]] || die "SMALL_ONLY must be 0 or 1 (got '$SMALL_ONLY')"
[[ "$PEAK_ONLY" == 0 || "$PEAK_ONLY" == 1 ]] || die "PEAK_ONLY must be 0 or 1 (got '$PEAK_ONLY')"
require_tools g++
PACKAGES=(libdnnl-dev libblis-serial-dev libxsmm-dev)
BLIS_SERIAL=/usr/lib/x86_64-linux-gnu/blis-serial/libblis.so.4

# install_packages: apt-get installs the PACKAGES that are missing, one by one, so that one that cannot be
# installed only costs its own column.
install_packages() {
  local package missing=()
  for package in "${PACKAGES[@]}"; do dpkg -s "$package" > /dev/null 2>&1 || missing+=("$package"); done
  (( ${#missing[@]} > 0 )) || return 0
  if [[ "$INSTALL" != 1 || $(id -u) != 0 ]]; then
    note "not installed: ${missing[*]} (not root, or INSTALL=0); their columns will be n/a"
    return 0
  fi
  note "installing ${missing[*]}"
  apt-get update > "$OUT_DIR/apt.log" 2>&1 || note "apt-get update failed (see $OUT_DIR/apt.log)"
  for package in "${missing[@]}"; do
    DEBIAN_FRONTEND=noninteractive apt-get install -y "$package" >> "$OUT_DIR/apt.log" 2>&1 ||
      note "could not install $package (see $OUT_DIR/apt.log); its column will be n/a"
  done
}

# build: the program with libxsmm compiled in when it links, without it otherwise.
build() {
  local compile=(g++ -O2 -std=c++20 -Wall -Wextra "$SCRIPT_DIR/gemm_providers.cc" -o "$BINARY")
  if "${compile[@]}" -DWITH_LIBXSMM -lxsmm -lxsmmnoblas -lpthread -lrt -ldl -lm > "$OUT_DIR/build-libxsmm.log" 2>&1
  then
    return 0
  fi
  note "libxsmm does not link (see $OUT_DIR/build-libxsmm.log); building without it, its column will be n/a"
  "${compile[@]}" -ldl > "$OUT_DIR/build.log" 2>&1 || { cat "$OUT_DIR/build.log" >&2; die "the build failed"; }
}

mkdir -p "$OUT_DIR"
install_packages
BINARY="$OUT_DIR/gemm_providers"
[[ "$BINARY" -nt "$SCRIPT_DIR/gemm_providers.cc" ]] || build  # built once per OUT_DIR and source

args=(--reps "$REPS" --csv "$OUT_DIR/results.csv")
(( SMALL_ONLY == 0 )) || args+=(--small-only)
(( PEAK_ONLY == 0 )) || args+=(--peak-only)
if [[ -f "$BLIS_SERIAL" ]]; then
  args+=(--blis "$BLIS_SERIAL")
else
  note "no serial BLIS ($BLIS_SERIAL); trying libblis.so.4 with BLIS_NUM_THREADS=1"
fi

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
note "running $BINARY ${args[*]}"
"$BINARY" "${args[@]}" > "$OUT_DIR/table.body" || die "$BINARY failed"
{
  echo "# GEMM providers, one thread"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), $(hostname), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
       "$(nproc) CPU(s); load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg);" \
       "$(git_info | tr '\n' ' ')"
  echo
  cat "$OUT_DIR/table.body"
} > "$OUT_DIR/table.md"
rm "$OUT_DIR/table.body"
cat "$OUT_DIR/table.md"
note "written: $OUT_DIR/table.md, $OUT_DIR/results.csv"
