#!/usr/bin/env bash
# Every PSTRAIN_* variable the project's docs and scripts name is either a flag (PSTRAIN_<FLAG>) or one of the
# project's own variables that programs ignore (lib/core/options.cc, kToolVariables): set in the environment, none
# breaks a program. One exception, on purpose: pstrain refuses PSTRAIN_TEST_HOOKS, the test suite's fault injection,
# which only the test binary pstrain-faults honours (a pstrain that ran without the faults a test asked for would
# let the test pass untested); it is not set on pstrain here (tests/tools/pstrain_faults/refusal_test.sh checks
# the refusal), and set on the other programs, which ignore it. Each name found is set (to a value valid for a flag of that name, or "x") while every
# program prints its version. CTest passes BIN_DIR and SOURCE_DIR.
set -euo pipefail
: "${BIN_DIR:?}" "${SOURCE_DIR:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$SOURCE_DIR"
# Docs and scripts users read or run; the test suite's own deliberate typos (PSTRAIN_BOGUS_SETTING) are not docs.
mapfile -t names < <(grep -rhoE 'PSTRAIN_[A-Z][A-Z0-9_]*[A-Z0-9]' README.md docs data examples mpi_launch k8s benchmarks \
  tests/run_all.sh tests/sanitize/run.sh tests/fuzz/README.md tests/fuzz/run.sh 2>/dev/null | sort -u)
[ "${#names[@]}" -ge 5 ] || fail "found only ${#names[@]} names: the search is broken"
# C++ macros the docs mention, not environment variables.
not_variables=" PSTRAIN_ASSERT PSTRAIN_VERSION PSTRAIN_HAVE_CUDA PSTRAIN_HAVE_NCCL PSTRAIN_HAVE_ONEDNN "
help=$("$BIN_DIR/pstrain" --help)
# The value each name gets: one valid for a flag of that name (a number reads as one for any numeric flag and as
# text for the rest), or "x".
assignments=()
for name in "${names[@]}"; do
  [[ "$not_variables" == *" $name "* ]] && continue
  value=x
  flag=$(echo "${name#PSTRAIN_}" | tr 'A-Z_' 'a-z-')
  grep -qE -- "--$flag( |$)" <<< "$help" && value=1
  assignments+=("$name=$value")
done
# All names at once per program (one start each: under ASan a start costs seconds); only when that fails, one at a
# time, to name the variable that breaks it.
for program in pstrain pstrain-data pstrain-sweep; do
  [ -x "$BIN_DIR/$program" ] || continue
  err="$BIN_DIR/../variables-$program.err"
  set_here=("${assignments[@]}")
  [ "$program" = pstrain ] && mapfile -t set_here < <(printf '%s\n' "${assignments[@]}" | grep -v '^PSTRAIN_TEST_HOOKS=')
  env "${set_here[@]}" "$BIN_DIR/$program" --version > /dev/null 2> "$err" && continue
  for assignment in "${set_here[@]}"; do
    env "$assignment" "$BIN_DIR/$program" --version > /dev/null 2> "$err" \
      || fail "$assignment breaks $program --version: $(cat "$err")"
  done
  fail "the documented names together break $program --version, none alone: $(cat "$err")"
done
checked=${#assignments[@]}
# And the rule still catches a typo of a real flag.
if PSTRAIN_BACH_SIZE=3 "$BIN_DIR/pstrain" --version > /dev/null 2>&1; then fail "PSTRAIN_BACH_SIZE was accepted"; fi
echo "PASS: $checked documented PSTRAIN_* names set, no program broken; a typo still refused"
