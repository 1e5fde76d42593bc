#!/usr/bin/env bash
# mpi_launch/slurm/pstrain-slurm-hosts (the elastic driver's discovery inside a Slurm allocation) against a fake
# `scontrol` that answers from files this test writes, as Slurm 22.05 formats them: the job's node list as Slurm
# holds it now, node states, slots from SLURM_TASKS_PER_NODE. Checks that nodes that are down, drained, failing,
# not responding or powered down are left out, that a node Slurm took out of the job (--no-kill) is left out although
# SLURM_JOB_NODELIST still names it, ELASTIC_EXCLUDE_FILE and ELASTIC_SLOTS_PER_NODE, and that a failing scontrol is
# an exit 1 with one message (never an empty list, which would make the driver stop the job).
# CTest passes REPO.
set -euo pipefail
: "${REPO:?REPO must name the checkout}"
fail() { echo "FAIL: $*" >&2; exit 1; }
script=$REPO/mpi_launch/slurm/pstrain-slurm-hosts
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"

# The fake scontrol: `show job -o ID`, `show hostnames LIST` (bracket ranges), `show node -o A,B`.
cat > "$work/bin/scontrol" <<'SH'
#!/usr/bin/env bash
set -euo pipefail
state=$FAKE_SLURM
# "down": slurmctld unreachable (`show hostnames` works without it, as in Slurm).
if [ -e "$state/down" ] && [ "$2" != hostnames ]; then
  echo "slurm_load_jobs error: Unable to contact slurm controller" >&2; exit 1
fi
expand() {  # n[1-3,5],m7 -> one name a line
  /usr/bin/python3 - "$1" <<'PY'
import re, sys
for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", sys.argv[1]):
    m = re.fullmatch(r"([^\[]+)\[([^\]]*)\]", part)
    if not m:
        print(part); continue
    for r in m.group(2).split(","):
        a, _, b = r.partition("-")
        for i in range(int(a), int(b or a) + 1):
            print(f"{m.group(1)}{i:0{len(a)}d}")
PY
}
case "$1 $2" in
  "show job") [ "$3" = -o ] && [ "$4" = "$SLURM_JOB_ID" ] || exit 2
              echo "JobId=$4 JobName=pstrain-elastic ReqNodeList=(null) NodeList=$(cat "$state/nodelist") BatchHost=n1 ExcNodeList=(null)" ;;
  "show hostnames") expand "$3" ;;
  "show node") [ "$3" = -o ] || exit 2
               for n in $(echo "$4" | tr ',' ' '); do
                 s=$(grep "^$n " "$state/states" | cut -d' ' -f2 || true)
                 [ -n "$s" ] && echo "NodeName=$n Arch=x86_64 CoresPerSocket=1 CPUAlloc=4 State=$s ThreadsPerCore=1"
               done ;;
  *) exit 2 ;;
esac
SH
chmod +x "$work/bin/scontrol"
export PATH=$work/bin:$PATH FAKE_SLURM=$work SLURM_JOB_ID=4242
export SLURM_JOB_NODELIST="n[1-3]" SLURM_TASKS_PER_NODE="4(x2),3"
unset ELASTIC_SLOTS_PER_NODE ELASTIC_EXCLUDE_FILE SLURM_NTASKS_PER_NODE

set_states() { printf '%s\n' "$@" > "$work/states"; }
expect() {  # expect WHAT LINES...: the script prints exactly LINES
  local what=$1 got want
  shift
  got=$("$script" 2> "$work/err") || fail "$what: exit $? ($(cat "$work/err"))"
  want=$(printf '%s\n' "$@")
  [ "$got" = "$want" ] || fail "$what: printed '$(tr '\n' ' ' <<< "$got")', expected '$(tr '\n' ' ' <<< "$want")'"
  [ ! -s "$work/err" ] || fail "$what: wrote to stderr: $(cat "$work/err")"
  echo "ok: $what -> $(tr '\n' ' ' <<< "$got")"
}

echo "n[1-3]" > "$work/nodelist"
set_states "n1 ALLOCATED" "n2 MIXED" "n3 ALLOCATED"
expect "all nodes up, slots from SLURM_TASKS_PER_NODE" n1:4 n2:4 n3:3
for bad in DOWN+NOT_RESPONDING IDLE+DRAIN MIXED+DRAIN ALLOCATED+FAIL ALLOCATED+NOT_RESPONDING IDLE+POWERED_DOWN \
           MIXED+REBOOT_REQUESTED; do
  set_states "n1 ALLOCATED" "n2 $bad" "n3 ALLOCATED"
  expect "n2 $bad is left out" n1:4 n3:3
done
set_states "n1 ALLOCATED" "n2 ALLOCATED+COMPLETING" "n3 ALLOCATED"
expect "a node completing another job's step stays" n1:4 n2:4 n3:3
# --no-kill: Slurm took the failed n2 out of the job; its state may already be back to IDLE (rebooted).
echo "n[1,3]" > "$work/nodelist"
set_states "n1 ALLOCATED" "n2 IDLE" "n3 ALLOCATED"
expect "a node Slurm took out of the job is left out (SLURM_JOB_NODELIST still names it)" n1:4 n3:3
set_states "n1 ALLOCATED" "n3 ALLOCATED"
expect "a node Slurm no longer knows" n1:4 n3:3
echo "n[1-3]" > "$work/nodelist"
set_states "n1 ALLOCATED" "n2 ALLOCATED" "n3 ALLOCATED"
printf '# maintenance\nn3\n\n' > "$work/exclude"
ELASTIC_EXCLUDE_FILE=$work/exclude expect "ELASTIC_EXCLUDE_FILE leaves n3 out" n1:4 n2:4
: > "$work/exclude"
ELASTIC_EXCLUDE_FILE=$work/exclude expect "n3 back once its line is gone" n1:4 n2:4 n3:3
ELASTIC_SLOTS_PER_NODE=2 expect "ELASTIC_SLOTS_PER_NODE" n1:2 n2:2 n3:2
(unset SLURM_TASKS_PER_NODE; SLURM_NTASKS_PER_NODE=6 expect "SLURM_NTASKS_PER_NODE when the counts are unknown" \
  n1:6 n2:6 n3:6)
echo "(null)" > "$work/nodelist"
expect "a job with no nodes left prints nothing (the driver waits for slots)"

# A failing scontrol: exit 1, one message, nothing on stdout.
echo "n[1-3]" > "$work/nodelist"
touch "$work/down"
code=0
"$script" > "$work/out" 2> "$work/err" || code=$?
[ "$code" -eq 1 ] || fail "slurmctld unreachable: exit $code, expected 1"
[ ! -s "$work/out" ] || fail "slurmctld unreachable: printed '$(cat "$work/out")'"
[ "$(wc -l < "$work/err")" -eq 1 ] && grep -q "pstrain-slurm-hosts: .*failed" "$work/err" \
  || fail "slurmctld unreachable: message '$(cat "$work/err")'"
echo "ok: slurmctld unreachable -> exit 1: $(cat "$work/err")"
rm "$work/down"
code=0
env -u SLURM_JOB_ID "$script" > /dev/null 2> "$work/err" || code=$?
[ "$code" -ne 0 ] && grep -q "SLURM_JOB_ID is unset" "$work/err" || fail "outside a job: exit $code, '$(cat "$work/err")'"
echo "ok: outside a Slurm job -> exit $code"
echo "PASS: pstrain-slurm-hosts"
