#!/usr/bin/env bash
# Tests mpi_launch/pstrain-launch. CTest passes BIN_DIR (build/bin), REPO (the checkout) and WORK_ROOT.
set -euo pipefail
: "${BIN_DIR:?BIN_DIR must name the bin folder of the build}" "${REPO:?REPO must name the checkout}"
: "${WORK_ROOT:?WORK_ROOT must name a scratch folder}"
# A stale PSTRAIN_* in the caller's environment must not change the outcome.
for variable in $(env | grep -o '^PSTRAIN_[A-Z_]*' || true); do unset "$variable"; done

launcher=$REPO/mpi_launch/pstrain-launch
work=$WORK_ROOT/launch
rm -rf "$work"
mkdir -p "$work"
export PSTRAIN_BIN=$BIN_DIR/pstrain

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# expect_error WANT_TEXT ARGS...: the launcher must fail (non-zero) and say WANT_TEXT on stderr.
expect_error() {
  local want=$1; shift
  local rc=0
  "$launcher" "$@" >"$work/stdout" 2>"$work/err" || rc=$?
  [ "$rc" -ne 0 ] || fail "pstrain-launch $* exited 0; expected an error about '$want'"
  grep -qi -- "$want" "$work/err" || fail "pstrain-launch $* did not say '$want'; stderr: $(cat "$work/err")"
  pass "pstrain-launch $* -> rc $rc, '$want'"
}

printf 'localhost slots=4\n' >"$work/hostfile"
: >"$work/empty-hostfile"
printf '# only a comment\n\n' >"$work/comment-hostfile"

# --- argument checks --------------------------------------------------------------------------------------------
expect_error "does not exist" --hostfile "$work/missing-hostfile" -np 2 --dry-run
expect_error "is empty" --hostfile "$work/empty-hostfile" -np 2 --dry-run
expect_error "is empty" --hostfile "$work/comment-hostfile" -np 2 --dry-run
expect_error "hostfile FILE is required" -np 2 --dry-run
expect_error "-np N is required" --hostfile "$work/hostfile" --dry-run
expect_error "positive integer" --hostfile "$work/hostfile" -np 0 --dry-run
expect_error "positive integer" --hostfile "$work/hostfile" -np -3 --dry-run
# A mistyped launcher option is refused before mpirun starts, with the nearest option named.
expect_error "unknown option '--hostfle': neither a pstrain-launch option nor a pstrain flag; did you mean --hostfile?" \
  --hostfle "$work/hostfile" -np 2 --dry-run
expect_error "did you mean --passes?" --hostfile "$work/hostfile" -np 2 --dry-run --pases 3
"$launcher" --version | grep -q "^pstrain-launch (with pstrain " || fail "--version does not name pstrain's version"
pass "pstrain-launch --version"
expect_error "positive integer" --hostfile "$work/hostfile" -np two --dry-run
expect_error "do not pass --output-dir" --hostfile "$work/hostfile" -np 2 --dry-run -- --output-dir /tmp/x

# --- the dry-run line ------------------------------------------------------------------------------------------
line=$(cd "$work" && PSTRAIN_BATCH_SIZE=32 LD_LIBRARY_PATH=/opt/lib "$launcher" --hostfile hostfile -np 3 \
         --output-root out --run-name dry --dry-run -- --passes 1 --hidden '32 16')
echo "dry run: $line"
[ "$(printf '%s\n' "$line" | wc -l)" -eq 1 ] || fail "--dry-run printed more than one line"
expect_in() { [[ " $line " == *" $1 "* ]] || fail "dry-run line lacks '$1'"; }
expect_out() { [[ " $line " != *" $1 "* ]] || fail "dry-run line has '$1' but should not"; }
expect_in "mpirun --hostfile $work/hostfile -np 3"
expect_in "--mca osc sm,pt2pt"
expect_in "--mca btl tcp,self,vader"
expect_in "--bind-to core --map-by node"
expect_out "-x OPENBLAS_NUM_THREADS=1"   # threads follow the allocation (pstrain decides per rank)
expect_in "-x HDF5_USE_FILE_LOCKING=FALSE"
expect_in "-x LD_LIBRARY_PATH"
expect_in "-x PSTRAIN_BATCH_SIZE"
expect_out "-x PSTRAIN_BIN"            # the launcher's own setting; pstrain would reject it
expect_out "--oversubscribe"
expect_in "$BIN_DIR/pstrain --output-dir $work/out/dry --passes 1 --hidden '32 16'"
if [ "$(id -u)" -eq 0 ]; then expect_in "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"; fi
[ ! -e "$work/out" ] || fail "--dry-run created the output folder"
pass "dry-run line (default transport)"

line=$("$launcher" --hostfile "$work/hostfile" -np 2 --tcp --oversubscribe --dry-run --passes 1)
echo "dry run: $line"
expect_in "--mca btl tcp,self"
expect_out "--mca btl tcp,self,vader"
expect_in "--oversubscribe"
expect_in "--map-by node"
# The default run name is a timestamp under runs/ in the current folder.
pattern=" --output-dir $PWD/runs/[0-9]{8}-[0-9]{6} "
[[ "$line " =~ $pattern ]] || fail "default output folder is not runs/<timestamp>"
pass "dry-run line (--tcp --oversubscribe)"

# --- a real run: 3 ranks (1 shard + 2 trainers) over TCP on localhost, 1 pass on a small real subset --------------
data=$work/data
"$BIN_DIR/pstrain-data" fashion-mnist --input /usr/share/datasets/fashion-mnist --output "$data" \
  --split-count 4 --limit 2000 --test-limit 1000 >/dev/null
start=$SECONDS
timeout -k 5 120 "$launcher" --hostfile "$work/hostfile" -np 3 --tcp --oversubscribe --output-root "$work/runs" \
  --run-name real -- --data-dir "$data" --passes 1 --hidden 32 --batch-size 50 \
  || fail "the real run failed (rc $?)"
run=$work/runs/real
[ -f "$run/pass-00000/done" ] || fail "$run/pass-00000/done is missing"
[ -f "$run/pass-00000/parameters.h5" ] || fail "$run/pass-00000/parameters.h5 is missing"
[ "$(wc -l <"$run/metrics.jsonl")" -eq 1 ] || fail "$run/metrics.jsonl should hold one pass"
grep -q '"trainers": 2' "$run/metrics.jsonl" || fail "metrics.jsonl does not show 2 trainers"
[ -d "$run/node_2" ] || fail "no node_2 folder: not 3 ranks"
pass "real run over TCP in $((SECONDS - start)) s"

# pstrain refuses to write into the same run folder again; the launcher passes its exit code (2) through.
rc=0
"$launcher" --hostfile "$work/hostfile" -np 1 --output-root "$work/runs" --run-name real -- \
  --data-dir "$data" --passes 1 --hidden 32 >"$work/stdout" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "re-using a run folder gave rc $rc, expected 2"
pass "re-used run folder refused with rc 2"

rm -rf "$work"
echo "PASS"
