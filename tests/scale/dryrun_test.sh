#!/usr/bin/env bash
# The SimGrid dry-run end to end (benchmarks/scale/README.md): builds pstrain-dryrun with smpicxx into BUILD/smpi
# (once; ccache makes it quick), then simulates 1 server + 3 trainers of the MLP on one 4-core node of the fat-tree platform in
# sync and async and checks what the real lib/ps code did there: every step of every trainer simulated, the
# simulated compute equal to the profile's (the injected time, not the host's), every async push applied by the
# server, nonzero server traffic, and a broken profile failing with its message and exit 1 (smpirun itself exits
# 0 after MPI_Abort), sync with node aggregation (one slot, a third of the bytes in), and geo (the server applies one
# update per meeting). The counts are of the
# timed steps: the one warm-up step before them (--warmup-steps, default 1) is not in them. Exit 77 (skipped)
# without smpicxx/smpirun.
#   dryrun_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$1 build_dir=$2
command -v smpicxx > /dev/null && command -v smpirun > /dev/null || { echo "SKIP: smpicxx/smpirun not installed (libsimgrid-dev)"; exit 77; }
smpi_build=$build_dir/smpi
if [[ ! -x $smpi_build/bin/pstrain-dryrun ]]; then
  cmake -S "$source_dir" -B "$smpi_build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=smpicxx \
    -DCMAKE_C_COMPILER=smpicc -DPSTRAIN_SMPI=ON -DPSTRAIN_BUILD_TESTS=OFF > "$smpi_build.configure.log" 2>&1 ||
    { tail -20 "$smpi_build.configure.log"; exit 1; }
fi
cmake --build "$smpi_build" -j 2 --target pstrain-dryrun > "$smpi_build.build.log" 2>&1 || { tail -30 "$smpi_build.build.log"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export DRYRUN_BUILD=$build_dir DRYRUN_SMPI_BUILD=$smpi_build DRYRUN_CACHE=$work/profiles
dryrun=$source_dir/benchmarks/scale/pstrain-dryrun.sh
# A node of 4 cores: a core per rank, so a step computes exactly what the profile says.
platform=$source_dir/benchmarks/scale/platforms/fat-tree-100g.xml
fail() { echo "FAIL: $*"; exit 1; }
value() { sed -n "s/.*[ ^]$2=\([0-9.e+-]*\).*/\1/p" "$1" | head -1; }

for mode in sync async; do
  report=$work/$mode.txt
  "$dryrun" --platform "$platform" --mode "$mode" --servers 1 --trainers 3 --batch 32 --steps 20 --timeout 120 --ranks-per-node 4 \
    > "$report" || fail "$mode: the dry-run failed"
  cat "$report"
  profile=$(ls "$work"/profiles/*.profile)
  expected_ms=$(awk '$1 == "layer" { s += $3 + $4 } END { printf "%.6f", s * 1000 }' "$profile")
  samples=$(value "$report" samples) rate=$(value "$report" samples_per_s) compute=$(value "$report" compute_ms)
  bytes_in=$(value "$report" bytes_in) updates=$(value "$report" updates)
  [[ $samples == 1920 ]] || fail "$mode: $samples samples simulated, expected 3 trainers x 20 steps x 32"
  awk -v r="$rate" 'BEGIN { exit !(r > 0) }' || fail "$mode: samples/s $rate"
  awk -v b="$bytes_in" 'BEGIN { exit !(b > 0) }' || fail "$mode: server 0 took $bytes_in bytes"
  awk -v c="$compute" -v e="$expected_ms" 'BEGIN { d = c - e; if (d < 0) d = -d; exit !(d <= 0.02 * e) }' ||
    fail "$mode: a step computed $compute ms of simulated time, the profile says $expected_ms ms"
  expected_updates=$([[ $mode == sync ]] && echo 20 || echo 60)
  [[ $updates == "$expected_updates" ]] || fail "$mode: server 0 applied $updates updates, expected $expected_updates"
done

# Node aggregation (pstrain's --node-aggregation on): the 3 trainers of the node push once a step, so the server
# holds one gradient slot and takes a third of the bytes; every step still trained by every trainer.
report=$work/aggregated.txt
"$dryrun" --platform "$platform" --mode sync --node-aggregation true --servers 1 --trainers 3 --batch 32 --steps 20 \
  --timeout 120 --ranks-per-node 4 > "$report" || fail "sync with node aggregation: the dry-run failed"
cat "$report"
[[ $(value "$report" samples) == 1920 && $(value "$report" updates) == 20 ]] || fail "aggregated: samples or updates"
[[ $(value "$report" push_slots) == 1 ]] || fail "aggregated: the server holds $(value "$report" push_slots) slots, expected 1"
[[ $(value "$work/sync.txt" push_slots) == 3 ]] || fail "sync: the server holds $(value "$work/sync.txt" push_slots) slots, expected 3"
awk -v on="$(value "$report" bytes_in)" -v off="$(value "$work/sync.txt" bytes_in)" 'BEGIN { exit !(3 * on == off) }' ||
  fail "aggregated: bytes in $(value "$report" bytes_in), expected a third of $(value "$work/sync.txt" bytes_in)"

# GEO from the modes' registry, as pstrain builds it: 1 warm-up + 20 timed steps with --geo-steps 4 meet after steps
# 3, 7, 11, 15, 19 and the last (20), all timed: the server applies 6 sums of changes, and every step is trained.
report=$work/geo.txt
"$dryrun" --platform "$platform" --mode geo --geo-steps 4 --servers 1 --trainers 3 --batch 32 --steps 20 --timeout 120 \
  --ranks-per-node 4 > "$report" || fail "geo: the dry-run failed"
cat "$report"
[[ $(value "$report" samples) == 1920 ]] || fail "geo: $(value "$report" samples) samples, expected 1920"
[[ $(value "$report" updates) == 6 ]] || fail "geo: server 0 applied $(value "$report" updates) updates, expected 6 meetings"

# A profile the dry-run cannot read: the message, and exit 1 (not smpirun's 0).
printf 'model mlp\nbatch 8\nparameter w 10\nlayer fc1 oops 1\n' > "$work/broken.profile"
status=0
"$dryrun" --platform "$platform" --servers 1 --trainers 1 --ranks-per-node 2 --profile "$work/broken.profile" --timeout 60 \
  > "$work/broken.txt" 2>&1 || status=$?
[[ $status == 1 ]] || fail "a broken profile ended with status $status"
grep -q "broken.profile:4: expected" "$work/broken.txt" || { cat "$work/broken.txt"; fail "no message naming the profile's line"; }
echo "PASS"
