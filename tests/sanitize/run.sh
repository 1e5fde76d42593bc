#!/usr/bin/env bash
# The sanitizer step (bash tests/run_all.sh, and so CI, runs it after the normal suite).
#   asan: build-asan/, AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer), CPU only. Runs every unit
#         test and a subset of the multi-rank tests on both MPI paths (ASAN_TESTS below); builds only what those
#         need (the unit tests, pstrain, pstrain-data and the test tools).
#   tsan: build-tsan/, ThreadSanitizer, only what runs threads: the watchdog (its heartbeat thread beside the main
#         thread) in test_comm, and pstrain itself in real multi-rank runs (TSAN_TESTS below), where the watchdog
#         runs beside MPI and training, including one run that the watchdog ends (TSAN_MPI=0 leaves those out).
#   fuzz: build-fuzz/, clang + libFuzzer + ASan + UBSan (PSTRAIN_FUZZ), only the fuzz targets; each runs for
#         FUZZ_SECONDS (20) on its committed corpus (tests/fuzz/run.sh).
#   tests/sanitize/run.sh [asan|tsan|fuzz]...     (default: all three)
# asan and tsan use gcc (SANITIZE_CC/SANITIZE_CXX to change): Debian 12's clang 14 cannot compile lib/ (a lambda
# capturing a structured binding, C++20, needs clang 16). The fuzz targets leave out the code that needs it.
# Build time (CI must stay under 45 minutes on 2 cores): -O1 -g1 (line tables are all a sanitizer report needs;
# about half the compile time of -O2 -g), and ccache when installed, with its cache outside the checkout
# (PSTRAIN_CCACHE_DIR, default /var/cache/pstrain/ccache, else ~/.cache/pstrain-ccache) so that CI's fresh clones reuse it: paths are made
# relative to the checkout (CCACHE_BASEDIR) and the working folder is left out of the hash (CCACHE_NOHASHDIR),
# so a clone elsewhere hits the same entries. PSTRAIN_CCACHE=0 builds without it.
# Every sanitizer writes its reports to files (log_path) under build-*/sanitizer-reports/, so a report is caught
# even in a test that expects pstrain to fail (bad input) or in a rank that mpirun ends: any report fails the step.
# Suppressions (only Open MPI's and HDF5's own internals, each with its reason) are in *.supp here.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(asan tsan fuzz)
jobs=${SANITIZE_JOBS:-2}
export CC=${SANITIZE_CC:-gcc} CXX=${SANITIZE_CXX:-g++}

# Multi-rank tests under ASan/UBSan (about 18 s each here): the one-sided and the streamed/pt2pt code on both MPI
# paths (shm: osc/sm; tcp: btl tcp + osc/pt2pt) through a sync and an async run; every other scenario on one path,
# since what it adds (all-reduce, the staleness bound, resume, row tables, bad input) is above the transport. CI
# must stay under 45 minutes on 2 cores: 16 runs, not the 32 of both paths (583 s in CI).
ASAN_TESTS='^mpi_(sync_equivalence_np3|async_learns_np3)_(shm|tcp)$|^mpi_allreduce_replicas_np3_shm$|^mpi_ssp_bound_np3_shm$'
ASAN_TESTS+='|^recovery_kill_resume_np3_shm$|^recovery_bad_checkpoints_np3_shm$'
# Row tables on the servers: trainer caches, row files in checkpoints, elastic resume re-dealing them.
ASAN_TESTS+='|^mpi_sparse_tables_equals_dense_np3_tcp$|^mpi_sparse_tables_resume_np3_shm$'
# Tables of bags by rows (one window set for all tables, hindexed gets and puts), row-wise Adagrad's state per row
# in the row files, re-dealt on resume to another server count; GEO's rows held from one meeting to the next
# (per-row origin blocks, the values they were fetched with).
ASAN_TESTS+='|^mpi_ctr_training_(rowwise|geo)_np3_shm$'
ASAN_TESTS+='|^mpi_bad_input_(garbage_shard|truncated_shard|nan_loss|existing_output)_np2_shm$'
# Under TSan: a plain sync run on each path, an async run, and the watchdog ending a job whose rank stopped.
TSAN_TESTS='^mpi_sync_equivalence_np2_(shm|tcp)$|^mpi_async_learns_np3_shm$|^recovery_stall_sync_np3_shm$'

launcher=()
if [ "${PSTRAIN_CCACHE:-1}" = 1 ] && command -v ccache > /dev/null; then
  export CCACHE_DIR=${PSTRAIN_CCACHE_DIR:-/var/cache/pstrain/ccache} CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
  # Not root: the user's own cache folder.
  mkdir -p "$CCACHE_DIR" 2> /dev/null || { CCACHE_DIR=$HOME/.cache/pstrain-ccache; mkdir -p "$CCACHE_DIR"; }
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  ccache --zero-stats > /dev/null
fi

# configure DIR FLAGS...: configures once (again only when the flags change).
configure() {
  local dir=$1
  shift
  local stamp="$CXX ${launcher[*]} $*"
  if [ ! -f "$dir/CMakeCache.txt" ] || [ "$(cat "$dir/.sanitize-flags" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    nice -n 19 cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
      -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DPSTRAIN_CUDA=OFF "${launcher[@]}" "$@" > "$dir/configure.log" 2>&1 \
      || { cat "$dir/configure.log"; exit 1; }
    echo "$stamp" > "$dir/.sanitize-flags"
  fi
}

# reports DIR: the folder the sanitizers write to, emptied.
reports_dir() {
  local dir=$root/$1/sanitizer-reports
  rm -rf "$dir"
  mkdir -p "$dir"
  echo "$dir"
}

# check_reports DIR NAME: fails when any sanitizer wrote a report.
check_reports() {
  local dir=$1 name=$2
  if [ -n "$(ls -A "$dir")" ]; then
    echo "sanitize: $name: REPORTS in $dir:"
    for file in "$dir"/*; do echo "== $file"; head -60 "$file"; done
    return 1
  fi
  echo "sanitize: $name: no sanitizer reports"
}

# timed NAME COMMAND...: runs COMMAND and prints its wall time and the CPU time (user + system) of its processes,
# which, unlike the wall time, does not depend on what else the machine runs.
times_file=${TMPDIR:-/tmp}/pstrain-sanitize-times.$$
timed() {
  local name=$1 before after wall_start=$(date +%s) code=0
  shift
  times > "$times_file"  # the builtin, in this shell: a subshell would not see this shell's children
  before=$(children_cpu_seconds)
  "$@" || code=$?
  times > "$times_file"
  after=$(children_cpu_seconds)
  rm -f "$times_file"
  echo "sanitize: $name: $(( $(date +%s) - wall_start )) s wall, $(( after - before )) s CPU"
  return $code
}
children_cpu_seconds() {  # user + system time of the shell's finished children, from the output of `times`
  tail -1 "$times_file" | awk '{ split($1, u, "m"); split($2, s, "m"); printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }'
}

# unit_test_programs: the unit-test executables (tests/unit/*/CMakeLists.txt), test_gpu included (its tests
# skip without a GPU, but CTest counts a registered program that was not built as a failure).
unit_test_programs() {
  sed -n 's/^ *add_executable(\(test_[a-z_]*\).*/\1/p' tests/unit/*/CMakeLists.txt | sort -u | tr '\n' ' '
}

# The build folders (SANITIZE_BUILD_PREFIX=build-x puts them in build-x-asan/ etc.).
prefix=${SANITIZE_BUILD_PREFIX:-build}
asan_dir=$prefix-asan tsan_dir=$prefix-tsan fuzz_dir=$prefix-fuzz

status=0
for step in "${steps[@]}"; do
  start=$(date +%s)
  case "$step" in
    asan)
      configure "$asan_dir" -DPSTRAIN_SANITIZE=ON
      # ASAN_UNIT="test_core test_data ..." builds and runs only those unit-test programs (a quicker check on a
      # busy machine); CI leaves it unset: every unit test.
      # blas_restart_probe: the BLAS-restart tests among the unit tests run it; pstrain-faults: the multi-rank
      # tests that inject faults (PSTRAIN_TEST_HOOKS) run it instead of pstrain.
      build_targets=(--target ${ASAN_UNIT:-$(unit_test_programs)} pstrain pstrain-faults pstrain-data
                     compare_parameters interleave_shards make_shard blas_restart_probe)
      timed "asan build" nice -n 19 cmake --build "$asan_dir" -j "$jobs" "${build_targets[@]}" > "$asan_dir/build.log" 2>&1 \
        || { tail -50 "$asan_dir/build.log"; exit 1; }
      reports=$(reports_dir "$asan_dir")
      export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:fast_unwind_on_malloc=0:detect_stack_use_after_return=0"
      export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1:suppressions=$root/tests/sanitize/ubsan.supp"
      export LSAN_OPTIONS="suppressions=$root/tests/sanitize/lsan.supp:print_suppressions=0"
      ok=true
      if [ -z "${ASAN_UNIT:-}" ]; then
        timed "asan unit tests" bash -c "cd '$asan_dir' && nice -n 19 ctest --test-dir tests/unit --output-on-failure --timeout 900 -j $jobs" || ok=false
      else
        for program in ${ASAN_UNIT}; do
          (cd "$asan_dir" && timeout 900 nice -n 19 "bin/$program" --gtest_brief=1) || ok=false
        done
      fi
      timed "asan mpirun tests" bash -c "cd '$asan_dir' && nice -n 19 ctest --test-dir tests --output-on-failure --timeout 900 -R '$ASAN_TESTS'" || ok=false
      unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
      check_reports "$reports" asan || ok=false
      $ok || status=1
      ;;
    tsan)
      configure "$tsan_dir" -DPSTRAIN_TSAN=ON
      # The multi-rank runs (TSAN_TESTS) need one suppression, an Open MPI lock order (tsan.supp); about 70 s.
      tsan_targets=(test_comm)
      [ "${TSAN_MPI:-1}" != 1 ] \
        || tsan_targets+=(pstrain pstrain-faults pstrain-data compare_parameters interleave_shards make_shard)
      timed "tsan build" nice -n 19 cmake --build "$tsan_dir" -j "$jobs" --target "${tsan_targets[@]}" > "$tsan_dir/build.log" 2>&1 \
        || { tail -50 "$tsan_dir/build.log"; exit 1; }
      reports=$(reports_dir "$tsan_dir")
      export TSAN_OPTIONS="log_path=$reports/tsan:halt_on_error=0:second_deadlock_stack=1:suppressions=$root/tests/sanitize/tsan.supp"
      ok=true
      (cd "$tsan_dir" && nice -n 19 ctest --test-dir tests/unit/comm --output-on-failure --timeout 300) || ok=false
      if [ "${TSAN_MPI:-1}" = 1 ]; then
        (cd "$tsan_dir" && nice -n 19 ctest --test-dir tests --output-on-failure --timeout 900 -R "$TSAN_TESTS") || ok=false
      fi
      unset TSAN_OPTIONS
      check_reports "$reports" tsan || ok=false
      $ok || status=1
      ;;
    fuzz)
      CC=clang CXX=clang++ configure "$fuzz_dir" -DPSTRAIN_FUZZ=ON -DPSTRAIN_BUILD_TESTS=OFF
      timed "fuzz build" nice -n 19 cmake --build "$fuzz_dir" -j "$jobs" --target fuzz_all > "$fuzz_dir/build.log" 2>&1 \
        || { tail -50 "$fuzz_dir/build.log"; exit 1; }
      BUILD_DIR="$fuzz_dir" bash tests/fuzz/run.sh "${FUZZ_SECONDS:-20}" fuzz_idx fuzz_cifar fuzz_text fuzz_arrays \
        fuzz_ini fuzz_search_space || status=1
      # These three feed damaged HDF5 files to HDF5 1.10.8, which has bugs of its own on them (tests/fuzz/known-hdf5:
      # global-heap hang and overflow, metadata allocations sized by the file, a null read in a group's B-tree that
      # a CI run met after 2 s): they run and report, but do not fail CI until pstrain has a way around them
      # (FUZZ_STRICT=1 makes them count). A real checkpoint is checksummed before HDF5 reads a byte of it.
      if ! BUILD_DIR="$fuzz_dir" bash tests/fuzz/run.sh "${FUZZ_SECONDS:-20}" fuzz_checkpoint fuzz_shard fuzz_pass_folder; then
        echo "sanitize: fuzz_checkpoint/fuzz_shard/fuzz_pass_folder: a finding (see above; known HDF5 failures are listed in tests/fuzz/known-hdf5)"
        [ "${FUZZ_STRICT:-0}" != 1 ] || status=1
      fi
      ;;
    *) echo "sanitize: unknown step $step (asan, tsan, fuzz)"; exit 2 ;;
  esac
  echo "sanitize: $step took $(( $(date +%s) - start )) s"
done
[ ${#launcher[@]} -eq 0 ] || echo "sanitize: ccache: $(ccache --print-stats | awk '/^(direct_cache_hit|preprocessed_cache_hit|cache_miss)\t/ {printf "%s %s ", $1, $2}')"
exit $status
