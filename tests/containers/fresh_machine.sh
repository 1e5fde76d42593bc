#!/usr/bin/env bash
# The fresh-machine bar (issue 14), measured in fresh containers from the debootstrap base debian:bookworm (as root,
# host network: Debian's mirror reachable as on the host, nothing else installed):
#
#   bash tests/containers/fresh_machine.sh [all|quickstart|deb|newcomer]      (as root; default: all)
#
#   quickstart  copies the checkout (tracked and untracked, not ignored files: no build/) into a fresh container
#               and runs the README's first command, `bash mpi_launch/quickstart.sh`; records the time to a
#               trained model, the test accuracy it printed (checked against its metrics.jsonl) and the Debian
#               packages it added (dpkg before/after); then builds the .deb from that build folder
#               (cd build && cpack -G DEB, the README's packaging step) and keeps it
#   deb         a second fresh container: `apt-get install ./pstrain_*.deb`, `pstrain --version`, then one pass
#               of local training with the installed programs (pstrain-data, mpirun -np 3 pstrain)
#   all         quickstart, deb
#   newcomer    issue 27's newcomer's first hour, every command taken from the docs, in a third fresh container:
#               the README's first command (the set-up and the quickstart), then the blocks of NEWCOMER_PAGES in
#               order, in the checkout itself, as a reader pasting them would (tests/docs/run_doc_commands.sh with
#               IN_PLACE=1, after the README's `export OMPI_ALLOW_RUN_AS_ROOT=...` for root): the tour's training
#               on 3 ranks, curves, resumed run, 2-node pstrain-launch with a hostfile and sweep, then own data
#               from a .npz; each step timed and judged by newcomer_checks.py (the run resumed from its
#               checkpoint, the sweep's report, the shards...); the table goes to $WORK/fresh/newcomer/table.md
#
# Results (times, accuracy, package lists) go to $WORK/fresh/summary.txt. Environment: WORK_ROOT (default
# build/tests/work), QUICKSTART_TIMEOUT (default 3600 s), DEB_TIMEOUT (default 1200 s), NEWCOMER_PAGES (default
# "README.md docs/data.md#your-own-data"), KEEP=1 keeps the containers after a failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$here/../.." && pwd)"
WORK_ROOT="${WORK_ROOT:-$REPO/build/tests/work}"
WORK="$WORK_ROOT/containers"
FRESH="$WORK/fresh"
QUICKSTART_TIMEOUT="${QUICKSTART_TIMEOUT:-3600}"
DEB_TIMEOUT="${DEB_TIMEOUT:-1200}"
PY=/usr/bin/python3
export CONTAINERS_CONF="$here/containers.conf"
mkdir -p "$FRESH"

log() { echo "[fresh $(date +%T)] $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

source "$here/images.sh"

cleanup() {
  remove_containers $? || true
}
trap cleanup EXIT

fresh_container() {  # fresh_container NAME: a new container from debian:bookworm, kept alive for podman exec
  podman rm -f -t 2 "$1" > /dev/null 2>&1 || true
  CONTAINERS+=("$1")
  # The host's network: apt reaches the mirror the debootstrap base points to, as on a fresh host.
  podman run -d --name "$1" --hostname "$1" --network host debian:bookworm sleep infinity > /dev/null \
    || fail "podman run $1"
}

packages_of() {  # packages_of NAME: installed Debian packages in the container, sorted
  podman exec "$1" dpkg-query -W -f '${Package}\n' | sort
}

# Every line of a command's output with the seconds since the start in front: the phases (apt, build, data,
# training) can be told apart afterwards.
timestamped() {
  local start=$SECONDS line
  while IFS= read -r line; do printf '%5d %s\n' $((SECONDS - start)) "$line"; done
}

# The checkout as `git clone` plus the working tree's changes would give it: tracked and untracked files that
# git does not ignore (so no build/, data/ or runs/).
copy_checkout() {  # copy_checkout NAME DIR
  podman exec "$1" mkdir -p "$2"
  git -C "$REPO" ls-files -z --cached --others --exclude-standard \
    | (cd "$REPO" && xargs -0 stat --printf '%n\0' 2> /dev/null) \
    | tar -C "$REPO" --null -T - -c | podman exec -i "$1" tar -C "$2" -x \
    || fail "copying the checkout into $1"
}

# "training finished: N pass(es) in T, test accuracy best B (pass P), final F; ..." against the run's
# metrics.jsonl: prints F.
check_trained() {  # check_trained LOG METRICS PASSES MIN_ACCURACY
  "$PY" - "$@" <<'PY' || fail "training result in $1 / $2"
import json, re, sys
log, metrics, passes, minimum = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
lines = [l for l in open(log, errors="replace") if "training finished:" in l]
assert lines, "no 'training finished' line printed"
m = re.search(r"(\d+) pass\(es\) in .*test accuracy best ([0-9.]+) \(pass \d+\), final ([0-9.]+)", lines[-1])
assert m, lines[-1]
records = [json.loads(l) for l in open(metrics)]
assert len(records) == passes == int(m.group(1)), (len(records), passes, m.group(1))
final = records[-1]["test_accuracy"]
assert abs(final - float(m.group(3))) < 1e-4, (final, m.group(3))
assert final >= minimum, f"final test accuracy {final} < {minimum}"
print(f"{final:.4f}")
PY
}

stage_quickstart() {
  install_packages
  base_images
  local name=pstrain-fresh-quickstart start took
  fresh_container "$name"
  packages_of "$name" > "$FRESH/packages-before.txt"
  copy_checkout "$name" /root/pstrain
  log "running bash mpi_launch/quickstart.sh in $name (log: $FRESH/quickstart.log)"
  start=$SECONDS
  timeout "$QUICKSTART_TIMEOUT" podman exec -e OUTPUT=runs/quickstart "$name" \
      bash -c 'cd /root/pstrain && nice -n 10 bash mpi_launch/quickstart.sh' 2>&1 | timestamped > "$FRESH/quickstart.log" \
    || { tail -30 "$FRESH/quickstart.log"; fail "quickstart.sh failed or ran past $QUICKSTART_TIMEOUT s"; }
  took=$((SECONDS - start))
  packages_of "$name" > "$FRESH/packages-after.txt"
  comm -13 "$FRESH/packages-before.txt" "$FRESH/packages-after.txt" > "$FRESH/packages-added.txt"
  podman cp "$name:/root/pstrain/runs/quickstart/metrics.jsonl" "$FRESH/quickstart-metrics.jsonl" \
    || fail "no runs/quickstart/metrics.jsonl after the quickstart"
  local accuracy
  accuracy=$(check_trained "$FRESH/quickstart.log" "$FRESH/quickstart-metrics.jsonl" 10 0.85)
  local build_start train_start
  build_start=$(awk '/\[ *[0-9]+%\] Building/ {print $1; exit}' "$FRESH/quickstart.log")
  train_start=$(awk '/\[ *[0-9]+%\] Built target/ {t = $1} END {print t}' "$FRESH/quickstart.log")
  {
    echo "quickstart: ${took} s to a trained model (apt until ~${build_start:-?} s, build until ~${train_start:-?} s), final test accuracy $accuracy"
    echo "quickstart: $(wc -l < "$FRESH/packages-added.txt") Debian packages added: $(tr '\n' ' ' < "$FRESH/packages-added.txt")"
  } | tee -a "$FRESH/summary.txt"
  package_deb "$name"
  podman rm -f -t 2 "$name" > /dev/null
  log "quickstart: PASS"
}

# The README's packaging step in the quickstart's build folder. CPack's DEB generator runs dpkg-shlibdeps and
# `file` on every program: a fresh machine after the quickstart lacks `file` (setup.sh does not install it), so
# it is installed first and reported.
package_deb() {  # package_deb NAME
  local name=$1 deb
  if ! podman exec "$name" sh -c 'command -v file > /dev/null'; then
    echo "deb: the quickstart left no 'file' program: cpack -G DEB needs it (apt-get install file)" | tee -a "$FRESH/summary.txt"
    podman exec "$name" bash -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends file' \
      > "$FRESH/file-install.log" 2>&1 || { tail "$FRESH/file-install.log"; fail "apt-get install file"; }
  fi
  timeout 600 podman exec "$name" bash -c 'cd /root/pstrain/build && rm -f pstrain_*.deb && cpack -G DEB' \
    > "$FRESH/cpack.log" 2>&1 || { tail -30 "$FRESH/cpack.log"; fail "cpack -G DEB"; }
  deb=$(podman exec "$name" bash -c 'cd /root/pstrain/build && ls pstrain_*.deb') || fail "cpack wrote no pstrain_*.deb"
  rm -f "$FRESH"/pstrain_*.deb
  podman cp "$name:/root/pstrain/build/$deb" "$FRESH/$deb" || fail "podman cp $deb"
  echo "deb: $deb, $(stat -c %s "$FRESH/$deb") bytes; Depends: $(dpkg-deb -f "$FRESH/$deb" Depends)" | tee -a "$FRESH/summary.txt"
}

stage_deb() {
  install_packages
  base_images
  local deb name=pstrain-fresh-deb start
  deb=$(ls "$FRESH"/pstrain_*.deb 2> /dev/null | head -1)
  [ -n "$deb" ] || fail "no .deb in $FRESH: run tests/containers/fresh_machine.sh quickstart first"
  fresh_container "$name"
  packages_of "$name" > "$FRESH/deb-packages-before.txt"
  podman cp "$deb" "$name:/root/" || fail "podman cp $deb"
  start=$SECONDS
  timeout "$DEB_TIMEOUT" podman exec "$name" bash -c "apt-get update -q && cd /root && \
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q ./$(basename "$deb")" > "$FRESH/deb-install.log" 2>&1 \
    || { tail -30 "$FRESH/deb-install.log"; fail "apt-get install ./$(basename "$deb")"; }
  local install_took=$((SECONDS - start))
  packages_of "$name" > "$FRESH/deb-packages-after.txt"
  comm -13 "$FRESH/deb-packages-before.txt" "$FRESH/deb-packages-after.txt" > "$FRESH/deb-packages-added.txt"
  local version
  version=$(podman exec "$name" pstrain --version) || fail "pstrain --version from the .deb"
  [[ "$version" == pstrain\ * ]] || fail "pstrain --version printed '$version'"
  # One pass of local training with the installed programs, as a user would start it (dataset from Debian).
  timeout "$DEB_TIMEOUT" podman exec -e OMPI_ALLOW_RUN_AS_ROOT=1 -e OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      -e OPENBLAS_NUM_THREADS=1 "$name" bash -c '
    set -e
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends dataset-fashion-mnist > /dev/null
    cd /root
    pstrain-data fashion-mnist --input /usr/share/datasets/fashion-mnist --output data --split-count 4
    mpirun --oversubscribe --bind-to none -np 3 pstrain --data-dir data --output-dir run --passes 1' \
    > "$FRESH/deb-train.log" 2>&1 || { tail -30 "$FRESH/deb-train.log"; fail "one pass of training from the .deb"; }
  podman cp "$name:/root/run/metrics.jsonl" "$FRESH/deb-metrics.jsonl" || fail "no run/metrics.jsonl"
  local accuracy
  accuracy=$(check_trained "$FRESH/deb-train.log" "$FRESH/deb-metrics.jsonl" 1 0.75)
  {
    echo "deb: apt-get install ./$(basename "$deb") in ${install_took} s, $(wc -l < "$FRESH/deb-packages-added.txt") packages added; '$version'; 1 pass: test accuracy $accuracy"
  } | tee -a "$FRESH/summary.txt"
  podman rm -f -t 2 "$name" > /dev/null
  log "deb: PASS"
}

# The README's first command: the first command line of its first ```bash block, without its comment.
readme_setup_command() {
  awk '/^```bash/ {inside = 1; next} inside && /^```/ {exit}
       inside && !/^[[:space:]]*(#|$)/ {sub(/[[:space:]]+#.*/, ""); print; exit}' "$REPO/README.md"
}

stage_newcomer() {
  install_packages
  base_images
  local name=pstrain-fresh-newcomer out=$FRESH/newcomer setup start rc=0 took docs_rc=0 pages load_before
  pages=${NEWCOMER_PAGES:-README.md docs/data.md#your-own-data}
  setup=$(readme_setup_command)
  [ -n "$setup" ] || fail "README.md has no first command in a \`\`\`bash block"
  rm -rf "$out"
  mkdir -p "$out"
  fresh_container "$name"
  copy_checkout "$name" /root/pstrain
  podman exec "$name" mkdir -p /root/newcomer
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  log "newcomer: '$setup' in $name (log: $out/quickstart.log)"
  start=$(date +%s.%N)
  timeout "$QUICKSTART_TIMEOUT" podman exec "$name" bash -c "cd /root/pstrain && nice -n 10 $setup" 2>&1 \
    | timestamped > "$out/quickstart.log" || rc=$?
  took=$(seconds_since "$start")
  log "newcomer: set-up + quickstart exited $rc after $took s"
  podman cp "$out/quickstart.log" "$name:/root/newcomer/quickstart.log" || fail "podman cp quickstart.log"
  if [ "$rc" -eq 0 ]; then
    log "newcomer: the blocks of $pages, in place (log: $out/docs.log)"
    # The README's tour: "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 first when you are root".
    podman exec -e IN_PLACE=1 -e RESULTS=/root/newcomer/results.tsv -e WORK_ROOT=/root/newcomer \
        -e BLOCK_TIMEOUT=600 -e OMPI_ALLOW_RUN_AS_ROOT=1 -e OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$name" \
        bash -c "cd /root/pstrain && nice -n 10 bash tests/docs/run_doc_commands.sh $pages" > "$out/docs.log" 2>&1 \
      || docs_rc=$?
  fi
  local checks_rc=0
  podman exec "$name" python3 /root/pstrain/tests/containers/newcomer_checks.py --checkout /root/pstrain \
      --quickstart-command "$setup" --quickstart-rc "$rc" --quickstart-seconds "$took" \
      --quickstart-log /root/newcomer/quickstart.log --results /root/newcomer/results.tsv \
      --table /root/newcomer/table.md > "$out/checks.log" 2>&1 || checks_rc=$?
  podman exec "$name" tar -C /root/newcomer -c . | tar -C "$out" -x || fail "copying /root/newcomer out"
  [ "$checks_rc" -eq 0 ] || cat "$out/checks.log"
  [ "$rc" -eq 0 ] || { tail -30 "$out/quickstart.log"; fail "'$setup' failed or ran past $QUICKSTART_TIMEOUT s"; }
  [ "$docs_rc" -eq 0 ] || { grep -v '^ok\|^skip' "$out/docs.log" | head -60; fail "a documented command failed (log: $out/docs.log)"; }
  [ "$checks_rc" -eq 0 ] || fail "a step of the newcomer's hour failed its check (table: $out/table.md)"
  local build_start train_start
  build_start=$(awk '/\[ *[0-9]+%\] Building/ {print $1; exit}' "$out/quickstart.log")
  train_start=$(awk '/\[ *[0-9]+%\] Built target/ {t = $1} END {print t}' "$out/quickstart.log")
  {
    echo "newcomer: commit $(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD || echo ' + working-tree changes'), pages: $pages"
    cat "$out/table.md"
    echo "newcomer: set-up + quickstart: apt until ~${build_start:-?} s, build until ~${train_start:-?} s, then the conversion and 10 passes;" \
      "load average $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after ($(nproc) cores)"
  } | tee -a "$FRESH/summary.txt"
  podman rm -f -t 2 "$name" > /dev/null
  log "newcomer: PASS"
}

seconds_since() {  # seconds_since EPOCH: elapsed seconds, one decimal
  awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}'
}

case "${1:-all}" in
  quickstart) stage_quickstart ;;
  deb) stage_deb ;;
  all) stage_quickstart; stage_deb ;;
  newcomer) stage_newcomer ;;
  *) echo "usage: $0 [all|quickstart|deb|newcomer]" >&2; exit 2 ;;
esac
