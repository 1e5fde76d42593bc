#!/usr/bin/env bash
# pstrain never runs with the test suite's fault injection asked for: with PSTRAIN_TEST_HOOKS set it refuses to
# start (exit 2, usage), alone and under mpirun, with one message naming the variable and the test binary that
# honours it; pstrain-faults, given the same, trains, and injects (opaque-backend=true shows in its log), and
# refuses a malformed value naming the entry. CTest passes BIN_DIR, DATA_DIR and WORK_ROOT (the mpi_data fixture).
source "$(dirname "$0")/../../mpi/common.sh"
work=$(new_work_dir pstrain_refuses_test_hooks)
run=(--data-dir "$DATA_DIR" --passes 1 --hidden 16 --batch-size 64 --progress-every-s 0)

expect_refusal() {  # expect_refusal NAME COMMAND...: exit 2 and exactly one message naming pstrain-faults
  local name=$1 code=0
  shift
  PSTRAIN_TEST_HOOKS=step-delay-ms=1 "$@" > "$work/$name.log" 2>&1 || code=$?
  [ "$code" -eq 2 ] || { cat "$work/$name.log"; fail "$name: exit $code with PSTRAIN_TEST_HOOKS set, expected 2"; }
  [ "$(grep -c "pstrain: error: PSTRAIN_TEST_HOOKS is set: .*only the test binary pstrain-faults" "$work/$name.log")" \
    -eq 1 ] || { cat "$work/$name.log"; fail "$name: not one message naming PSTRAIN_TEST_HOOKS and pstrain-faults"; }
  [ ! -e "$work/$name" ] || fail "$name: the refused run wrote $work/$name"
  echo "ok: $name refused: $(grep "pstrain: error:" "$work/$name.log")"
}
expect_refusal alone "$BIN_DIR/pstrain" "${run[@]}" --output-dir "$work/alone"
expect_refusal version "$BIN_DIR/pstrain" --version
expect_refusal mpirun run_mpi 2 shm 60 "$BIN_DIR/pstrain" "${run[@]}" --output-dir "$work/mpirun"

PSTRAIN_TEST_HOOKS=step-delay-ms=1 "$BIN_DIR/pstrain-faults" "${run[@]}" --output-dir "$work/faults" \
  > "$work/faults.log" 2>&1 || { cat "$work/faults.log"; fail "pstrain-faults with PSTRAIN_TEST_HOOKS set"; }
[ -f "$work/faults/pass-00000/done" ] || fail "pstrain-faults: no pass folder"
PSTRAIN_TEST_HOOKS=opaque-backend=true "$BIN_DIR/pstrain-faults" "${run[@]}" --output-dir "$work/opaque" \
  > "$work/opaque.log" 2>&1 || { cat "$work/opaque.log"; fail "pstrain-faults with opaque-backend=true"; }
grep -q "cpu-opaque" "$work/opaque.log" || { cat "$work/opaque.log"; fail "pstrain-faults injected no opaque backend"; }
echo "ok: pstrain-faults trains with PSTRAIN_TEST_HOOKS set, and injects its faults"
code=0
PSTRAIN_TEST_HOOKS=step-delay=5 "$BIN_DIR/pstrain-faults" --version > "$work/malformed.log" 2>&1 || code=$?
[ "$code" -eq 2 ] && grep -q "unknown hook 'step-delay'" "$work/malformed.log" \
  || { cat "$work/malformed.log"; fail "a malformed PSTRAIN_TEST_HOOKS: exit $code"; }
echo "PASS: pstrain refuses PSTRAIN_TEST_HOOKS; only pstrain-faults honours it"
