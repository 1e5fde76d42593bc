#!/usr/bin/env bash
# What the bar "MLP, 1 server + 1 trainer, sync, over --mca btl tcp,self --mca osc pt2pt: >= 0.85x of local at
# batch 64" (issue "Faster than PyTorch on the same CPU") needs from the transport, measured on a model of the
# step (tcp_step_model.cc) rather than on pstrain, so that ways of moving the bytes that pstrain does not have can
# be tried too: Open MPI over TCP inline, from a communication thread, with Open MPI's TCP progress thread; and
# plain loopback sockets inline and from a thread that blocks in the kernel, with and without the first layer's
# forward product in pieces. Every row runs 1 server + 1 trainer under mpirun on the TCP path; the rounds
# alternate the rows; the table gives the median ms per step and the median of the per-round ratios to the row
# `compute` (the step without an exchange, i.e. local).
#
# Settings (environment): ROUNDS=5 STEPS=2000 STEP_MS=0.75 (pstrain's local MLP step at batch 64, speed report of
#   2026-11-24) FLOATS=235146 (the MLP's parameters) PIECES=8 SHARE=0.37 (each first-layer product's share of the
#   step: 40% of the MLP's FLOPs, times compute 0.69 of 0.75 ms) OUT_DIR=<repo>/benchmarks/results/tcp-step-model
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$SCRIPT_DIR/lib/common.sh"
NOTE_TAG=tcp-model
set_defaults ROUNDS=5 STEPS=2000 STEP_MS=0.75 FLOATS=235146 PIECES=8 SHARE=0.37 \
  OUT_DIR="$REPO/benchmarks/results/tcp-step-model"
check_positive ROUNDS STEPS FLOATS PIECES
(( STEPS > 200 )) || die "STEPS must be over 200 (the first 200 warm up)"
for name in STEP_MS SHARE; do
  [[ "${!name}" =~ ^[0-9]*\.?[0-9]+$ ]] || die "$name must be a positive number (got '${!name}')"
done
require_tools mpicxx mpirun

# ROWS: name (no commas: results.csv) | model variant and flags | extra mpirun flags.
ROWS=(
  "compute|--variant compute|"
  "mpi-inline|--variant mpi-inline|"
  "mpi-inline with Open MPI's TCP progress thread|--variant mpi-inline|--mca btl_tcp_progress_thread 1"
  "mpi-thread with the forward in pieces|--variant mpi-thread --split-forward 1|"
  "socket-inline|--variant socket-inline|"
  "socket-thread|--variant socket-thread|"
  "socket-thread with the forward in pieces|--variant socket-thread --split-forward 1|"
)
TCP_MCA=(--mca btl "tcp,self" --mca osc pt2pt)

mkdir -p "$OUT_DIR"
BINARY="$OUT_DIR/tcp_step_model"
if [[ ! "$BINARY" -nt "$SCRIPT_DIR/tcp_step_model.cc" ]]; then
  mpicxx -DOMPI_SKIP_MPICXX -O2 -std=c++20 -Wall -Wextra -pthread "$SCRIPT_DIR/tcp_step_model.cc" -o "$BINARY" \
    > "$OUT_DIR/build.log" 2>&1 || { cat "$OUT_DIR/build.log" >&2; die "the build failed"; }
fi

# run_row NAME MODEL_FLAGS MPI_FLAGS: one run; prints its ms per step.
run_row() {
  local model_flags mpi_flags out
  read -r -a model_flags <<< "$2"
  read -r -a mpi_flags <<< "$3"
  out=$(env "${MPI_ENV[@]}" timeout 120 mpirun -np 2 --oversubscribe --bind-to none "${TCP_MCA[@]}" \
        "${mpi_flags[@]}" "$BINARY" "${model_flags[@]}" --steps "$STEPS" --step-ms "$STEP_MS" --floats "$FLOATS" \
        --pieces "$PIECES" --last-layer-share "$SHARE" 2> "$OUT_DIR/last.err") ||
    { cat "$OUT_DIR/last.err" >&2; die "the row '$1' failed"; }
  cut -d, -f2 <<< "$out"
}

# median: of the numbers on standard input.
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
: > "$OUT_DIR/results.csv"
for (( round = 1; round <= ROUNDS; round++ )); do
  note "round $round of $ROUNDS"
  for row in "${ROWS[@]}"; do
    IFS='|' read -r name model_flags mpi_flags <<< "$row"
    echo "$round,$name,$(run_row "$name" "$model_flags" "$mpi_flags")" >> "$OUT_DIR/results.csv"
  done
done

{
  echo "# One sync PS step over TCP, modelled (1 server + 1 trainer, one node)"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPU(s); load average before: $load_before, after:" \
       "$(cut -d' ' -f1-3 /proc/loadavg); STEP_MS=$STEP_MS FLOATS=$FLOATS PIECES=$PIECES SHARE=$SHARE" \
       "STEPS=$STEPS, $ROUNDS round(s); $(git_info | tr '\n' ' ')"
  echo
  echo "| row | ms per step (median) | range | vs compute (median of per-round ratios) |"
  echo "|---|---:|---:|---:|"
  for row in "${ROWS[@]}"; do
    name=${row%%|*}
    times=$(awk -F, -v n="$name" '$2 == n {print $3}' "$OUT_DIR/results.csv")
    ratios=$(awk -F, -v n="$name" '$2 == "compute" {c[$1] = $3} $2 == n {t[$1] = $3}
                                   END {for (r in t) printf "%.4f\n", c[r] / t[r]}' "$OUT_DIR/results.csv")
    printf '| %s | %.3f | %.3f-%.3f | %.2fx |\n' "$name" "$(median <<< "$times")" \
      "$(sort -g <<< "$times" | head -1)" "$(sort -g <<< "$times" | tail -1)" "$(median <<< "$ratios")"
  done
} > "$OUT_DIR/table.md"
cat "$OUT_DIR/table.md"
note "written: $OUT_DIR/table.md, $OUT_DIR/results.csv"
