#!/bin/bash
# install_test.sh tree|lmod|deb (CTest passes BUILD_DIR, WORK_ROOT, VERSION, FASHION_MNIST and the GNU
# directories the build installs to):
#   tree: cmake --install into WORK_ROOT/prefix; the expected files are there; the programs run from
#         PREFIX/bin with a bare environment (--version, a tiny training run, pstrain-launch --dry-run);
#   lmod: `module load pstrain` from PREFIX's modulefile puts PREFIX/bin first on PATH; pstrain --version runs;
#   deb:  cpack -G DEB; the package declares its library dependencies, holds the same tree under /usr, and its
#         programs run after `dpkg-deb -x` into a temporary root.
set -euo pipefail
part=$1
fail() { echo "FAIL ($part): $*" >&2; exit 1; }
: "${BUILD_DIR:?}" "${WORK_ROOT:?}" "${VERSION:?}" "${MODULEFILES:?}" "${DATADIR:?}" "${BINDIR:?}" "${DOCDIR:?}"
prefix=$WORK_ROOT/prefix
# Nothing from the caller's environment: no LD_LIBRARY_PATH, no PSTRAIN_*, a plain PATH.
bare=(env -i HOME="$WORK_ROOT" PATH=/usr/bin:/bin OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      OPENBLAS_NUM_THREADS=1)

# run_tiny ROOT: pstrain-data and a one-pass pstrain run from ROOT/bin, with an installed example model file.
run_tiny() {
  local root=$1 out=$WORK_ROOT/run-$part
  rm -rf "$out"
  "${bare[@]}" "$root/$BINDIR/pstrain-data" fashion-mnist --input "${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}" \
    --output "$out/data" --split-count 1 --limit 640 --test-limit 200 > /dev/null || fail "$root: pstrain-data failed"
  "${bare[@]}" "$root/$BINDIR/pstrain" --model-file "$root/$DATADIR/pstrain/examples/models/mlp.model" \
    --data-dir "$out/data" --output-dir "$out/run" --passes 1 > "$out/log" 2>&1 \
    || { cat "$out/log"; fail "$root: training failed"; }
  [ -f "$out/run/pass-00000/done" ] || fail "$root: no pass folder after training"
  grep -q '"test_accuracy"' "$out/run/metrics.jsonl" || fail "$root: no metrics"
  ls "$out/run/tensorboard/"events.out.tfevents.* > /dev/null || fail "$root: no TensorBoard event file"
  # pstrain-plot finds its module under ROOT/share/pstrain/plot.
  "${bare[@]}" "$root/$BINDIR/pstrain-plot" "$out/run" > "$out/plot.log" 2>&1 || { cat "$out/plot.log"; fail "$root: pstrain-plot failed"; }
  head -c 8 "$out/run/training.png" | od -An -tx1 | grep -q "89 50 4e 47 0d 0a 1a 0a" || fail "$root: training.png is no PNG"
}

check_version() {  # check_version PROGRAM
  local said
  said=$("${bare[@]}" "$1" --version | head -n 1) || fail "$1 --version failed"
  [ "$said" = "pstrain $VERSION" ] || fail "$1 --version said '$said', expected 'pstrain $VERSION'"
}

case "$part" in
tree)
  rm -rf "$WORK_ROOT"
  mkdir -p "$WORK_ROOT"
  cmake --install "$BUILD_DIR" --prefix "$prefix" > "$WORK_ROOT/install.log" || { cat "$WORK_ROOT/install.log"; fail "cmake --install"; }
  for file in "$BINDIR"/{pstrain,pstrain-data,pstrain-sweep,pstrain-launch,pstrain-plot,pstrain-elastic} "$DATADIR"/pstrain/plot/pstrain_plots.py \
              "$DATADIR"/pstrain/slurm/{pstrain-srun,pstrain-mpirun,pstrain-gpu,pstrain-sweep-array}.sbatch \
              "$DATADIR"/pstrain/k8s/{base/mpijob.yaml,base/kustomization.yaml,overlays/gpu/kustomization.yaml,Dockerfile} \
              "$DATADIR"/pstrain/examples/{configs/fashion-mnist-sync.ini,models/cnn.model,sweeps/space.ini} \
              "$DOCDIR"/{README.md,sweep.md,k8s.md,data.md,docs/model-files.md,docs/running.md} "$MODULEFILES/pstrain/$VERSION.lua"; do
    [ -f "$prefix/$file" ] || fail "missing $prefix/$file"
  done
  for program in pstrain pstrain-data pstrain-sweep pstrain-launch pstrain-plot pstrain-elastic; do
    [ -x "$prefix/$BINDIR/$program" ] || fail "$program is not executable"
  done
  # The installed programs must not reach back into the build folder.
  if grep -rlF "$BUILD_DIR" "$prefix/$BINDIR" > /dev/null; then fail "an installed program names $BUILD_DIR"; fi
  ldd "$prefix/$BINDIR/pstrain" | grep -q "not found" && fail "pstrain has unresolved libraries"
  check_version "$prefix/$BINDIR/pstrain"
  # The test suite's fault injection stays in the build folder: its binary pstrain-faults is never installed (the
  # .deb holds this same tree), and the installed pstrain refuses PSTRAIN_TEST_HOOKS instead of ignoring it.
  [ -z "$(find "$prefix" -name '*faults*')" ] || fail "installed: $(find "$prefix" -name '*faults*')"
  code=0
  "${bare[@]}" PSTRAIN_TEST_HOOKS=step-delay-ms=1 "$prefix/$BINDIR/pstrain" --version > /dev/null 2>&1 || code=$?
  [ "$code" -eq 2 ] || fail "the installed pstrain, PSTRAIN_TEST_HOOKS set, exited $code (expected 2, a refusal)"
  run_tiny "$prefix"
  # pstrain-launch finds the pstrain next to it.
  echo "localhost slots=2" > "$WORK_ROOT/hosts"
  line=$("${bare[@]}" "$prefix/$BINDIR/pstrain-launch" --hostfile "$WORK_ROOT/hosts" -np 2 --output-root "$WORK_ROOT/launch" --dry-run -- \
    --data-dir "$WORK_ROOT/run-tree/data") || fail "pstrain-launch --dry-run failed"
  grep -qF "$prefix/$BINDIR/pstrain " <<< "$line" || fail "pstrain-launch does not use $prefix/$BINDIR/pstrain: $line"
  ;;
lmod)
  init=$(ls /usr/share/lmod/lmod/init/bash 2> /dev/null || true)
  [ -n "$init" ] || fail "Lmod is not installed (apt-get install lmod)"
  said=$("${bare[@]}" bash -c "source $init && module use $prefix/$MODULEFILES && module load pstrain/$VERSION &&
    command -v pstrain && pstrain --version | head -n 1 && module unload pstrain && (command -v pstrain || echo gone)" 2>&1) \
    || fail "module load failed: $said"
  expected=$(printf '%s\n' "$prefix/$BINDIR/pstrain" "pstrain $VERSION" gone)
  [ "$said" = "$expected" ] || fail "expected
$expected
got
$said"
  ;;
deb)
  rm -rf "$WORK_ROOT/deb" "$WORK_ROOT/root"
  (cd "$BUILD_DIR" && cpack -G DEB -B "$WORK_ROOT/deb" > "$WORK_ROOT/cpack.log" 2>&1) || { cat "$WORK_ROOT/cpack.log"; fail "cpack"; }
  deb=$(ls "$WORK_ROOT"/deb/pstrain_"$VERSION"*.deb) || fail "no pstrain_$VERSION*.deb"
  depends=$(dpkg-deb -f "$deb" Depends)
  for library in libhdf5 libopenmpi libboost-program-options libprotobuf libzip openmpi-bin; do
    grep -q "$library" <<< "$depends" || fail "Depends lacks $library: $depends"
  done
  dpkg-deb -x "$deb" "$WORK_ROOT/root" || fail "dpkg-deb -x"
  # The same tree as cmake --install, under /usr.
  diff <(cd "$prefix" && find . -type f | sort) <(cd "$WORK_ROOT/root/usr" && find . -type f | sort) \
    || fail "the .deb's tree differs from the installed one"
  check_version "$WORK_ROOT/root/usr/$BINDIR/pstrain"
  run_tiny "$WORK_ROOT/root/usr"
  # The package's modulefile finds its own prefix too.
  said=$("${bare[@]}" bash -c "source /usr/share/lmod/lmod/init/bash && module use $WORK_ROOT/root/usr/$MODULEFILES &&
    module load pstrain && command -v pstrain" 2>&1) || fail "module load from the package failed: $said"
  [ "$said" = "$WORK_ROOT/root/usr/$BINDIR/pstrain" ] || fail "the package's module puts '$said' on PATH"
  ;;
*) fail "unknown part (tree, lmod or deb)" ;;
esac
echo "PASS: install_$part"
