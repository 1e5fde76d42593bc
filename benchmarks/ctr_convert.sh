#!/usr/bin/env bash
# The CTR converter's throughput and peak memory: LINES synthetic Criteo-format lines (pstrain-data synthetic-ctr
# --text-output, timed too) converted by pstrain-data criteo with 1 and THREADS threads, each under
# /usr/bin/time -v. Reports lines per second (the whole command, the line-count pass included, and the converter's
# own figure for parsing and writing, from ctr_conversion.txt) and the maximum resident set size; GZ=1 converts
# the .gz instead of the plain text.
#
# Settings (environment): LINES=10000000 THREADS=2 GZ=0 SEED=1 SHARD_SAMPLES=1000000 BUILD_DIR=<repo>/build
#   WORK=<a temporary folder> (kept when given)
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
set_defaults LINES=10000000 THREADS=2 GZ=0 SEED=1 SHARD_SAMPLES=1000000 BUILD_DIR="$REPO/build"
check_positive LINES THREADS SHARD_SAMPLES
DATA="$BUILD_DIR/bin/pstrain-data"
[[ -x "$DATA" && -x /usr/bin/time ]] || die "$DATA or /usr/bin/time is missing (bash mpi_launch/setup.sh)"
if [[ -n "${WORK:-}" ]]; then
  work=$WORK
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
input="$work/synthetic.txt"
[[ "$GZ" == 1 ]] && input="$work/synthetic.txt.gz"

# measure NAME COMMAND...: runs COMMAND under /usr/bin/time -v; prints seconds and peak RSS (MB).
measure() {
  local name=$1
  shift
  /usr/bin/time -v "$@" > "$work/$name.out" 2> "$work/$name.time" || { cat "$work/$name.time"; die "$name failed"; }
  local seconds rss
  seconds=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0;
    for (i = 1; i <= n; ++i) s = s * 60 + t[i]; print s }' "$work/$name.time")
  rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$work/$name.time")
  echo "$seconds $rss"
}

echo "lines=$LINES threads=$THREADS gz=$GZ cores=$(nproc) $(git_info | tr '\n' ' ')"
read -r seconds rss < <(measure generate "$DATA" synthetic-ctr --lines "$LINES" --seed "$SEED" --threads "$THREADS" \
  --text-output "$input")
echo "generate: ${seconds}s, $(awk -v l="$LINES" -v s="$seconds" 'BEGIN { printf "%.0f", l / s }') lines/s," \
  "peak RSS ${rss} MB, $(du -m "$input" | cut -f1) MB of text"
for threads in 1 "$THREADS"; do
  out="$work/converted-$threads"
  rm -rf "$out"
  read -r seconds rss < <(measure "convert-$threads" "$DATA" criteo --input "$input" --output "$out" \
    --threads "$threads" --shard-samples "$SHARD_SAMPLES")
  own=$(awk -F': ' '/^lines per second/ { print $2 }' "$out/ctr_conversion.txt")
  echo "convert, $threads thread(s): ${seconds}s," \
    "$(awk -v l="$LINES" -v s="$seconds" 'BEGIN { printf "%.0f", l / s }') lines/s overall" \
    "(parse + write: $own lines/s), peak RSS ${rss} MB, shards $(du -sm "$out" | cut -f1) MB"
  [[ "$threads" == "$THREADS" ]] && break
done
