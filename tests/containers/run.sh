#!/usr/bin/env bash
# The Kubernetes deployment rehearsed with real containers (podman + runc, no cluster, no registry):
#
#   bash tests/containers/run.sh [all|images|rehearse|kill|bad-input [CASE...]|sweep|elastic]   (as root; default: all)
#
#   images    installs podman, buildah, runc, debootstrap...; builds the base images debian:bookworm{,-slim}
#             (debootstrap, cached) and k8s/Dockerfile as it is (podman's layer cache), tagged with the image
#             the rendered MPIJob names
#   rehearse  renders k8s/overlays/cpu-small with kubectl kustomize and runs it as the mpi-operator would:
#             the data-preparation Job's container, then one container per worker (its command: sshd) and the
#             launcher (its exact command: mpirun over ssh into the workers) on one podman network, with the
#             hostfile, the ssh Secret, the operator's environment, the security context and the volumes of
#             the manifests; then checks metrics.jsonl, the pass folders and the checkpoints on the output volume,
#             and that no container changed the image's file system (podman diff; readOnlyRootFilesystem)
#   kill      the same, with a random worker container killed (podman kill) after a random checkpoint; the job is
#             started again as the operator would (the worker container restarted, a new launcher with the
#             same command, which resumes with --resume auto): every sample trained exactly once per pass and
#             final parameters identical to the uninterrupted run's (sync mode)
#   bad-input a worker that does not exist, one that does not answer, one without sshd, an empty data volume, a
#             worker frozen mid-run (bad_input.sh): the launcher fails by itself, in time, with the cause in its log
#   sweep     two Jobs of `pstrain-sweep emit k8s` (k8s/sweep/job.yaml.tmpl), one container each; then
#             `pstrain-sweep report` on the sweep folder of the output volume, checked (sweep.sh)
#   elastic   k8s/overlays/elastic: the launcher runs pstrain-elastic on the operator's discover_hosts.sh, which
#             this script rewrites as the operator would while worker containers are started, killed, restarted
#             and stopped during one run; the ledger is exact and elastic.jsonl lists every change (elastic.sh)
#   all       images, rehearse, kill, bad-input, sweep, elastic
#
# Environment: WORK_ROOT (scratch, default build/tests/work), OVERLAY (default cpu-small), JOB_TIMEOUT (seconds
# per launcher run, default 1200), BUILD_TIMEOUT (default 5400), KEEP=1 keeps the containers after a failure,
# KILL_SEED (victim and moment), KILL_AFTER_STEP (kill after the checkpoint at or past this global step),
# BAD_TIMEOUT (seconds a bad-input launcher may take to fail, default 180), ELASTIC_HIDDEN (the elastic stage's
# --hidden, default 512,256: how long its steps take); LAUNCHER_ENV=NAME=VALUE adds one
# variable to the launcher, for measurements only (e.g. OMPI_MCA_mpi_yield_when_idle=1: on this 2-core machine
# the 3 worker containers share 2 cores, and Open MPI's ranks, each alone on its "node", busy-poll without
# yielding, which a real node with a core per pod never notices).
# podman reads tests/containers/containers.conf (runc, cgroupfs, ulimits) through CONTAINERS_CONF: nothing
# under /etc is edited.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$here/../.." && pwd)"
WORK_ROOT="${WORK_ROOT:-$REPO/build/tests/work}"
WORK="$WORK_ROOT/containers"
OVERLAY="${OVERLAY:-cpu-small}"
JOB_TIMEOUT="${JOB_TIMEOUT:-1200}"
PY=/usr/bin/python3   # Debian's interpreter (python3-yaml)
export CONTAINERS_CONF="$here/containers.conf"
NETWORK=pstrain-rehearsal
mkdir -p "$WORK"

log() { echo "[containers $(date +%T)] $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

source "$here/images.sh"
source "$here/bad_input.sh"
source "$here/sweep.sh"
source "$here/elastic.sh"

# ---------------------------------------------------------------------------------------------------------
# The manifests

render() {  # writes $WORK/rendered.yaml and sets IMAGE, JOB, WORKERS, SLOTS, SSH_PATH
  kubectl kustomize "$REPO/k8s/overlays/$OVERLAY" > "$WORK/rendered.yaml" \
    || fail "kubectl kustomize k8s/overlays/$OVERLAY"
  local fields
  fields=$("$PY" - "$WORK/rendered.yaml" "$REPO/k8s/base/data-prep-job.yaml" <<'PY'
import sys, yaml
job = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") == "MPIJob")
spec = job["spec"]
launcher = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
worker = spec["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
prep = next(d for d in yaml.safe_load_all(open(sys.argv[2])) if d and d.get("kind") == "Job")
prep_image = prep["spec"]["template"]["spec"]["containers"][0]["image"]
images = {launcher["image"], worker["image"]}
assert len(images) == 1, f"launcher and workers use different images: {images}"
assert spec["mpiImplementation"] == "OpenMPI", spec["mpiImplementation"]
print(launcher["image"], job["metadata"]["name"], spec["mpiReplicaSpecs"]["Worker"]["replicas"],
      spec.get("slotsPerWorker", 1), spec.get("sshAuthMountPath", "/root/.ssh"), prep_image)
PY
) || fail "reading the MPIJob of k8s/overlays/$OVERLAY"
  read -r IMAGE JOB WORKERS SLOTS SSH_PATH PREP_IMAGE <<< "$fields"
  [ "$PREP_IMAGE" = "$IMAGE" ] || fail "the data-preparation Job uses $PREP_IMAGE, the MPIJob $IMAGE"
}

pod_args() {  # pod_args ROLE VOLUMES NAME [FILE]: fills the array POD_ARGS; readiness port in READY_PORT
  local file=${4:-$WORK/rendered.yaml}
  [ "$1" = data-prep ] && file=$REPO/k8s/base/data-prep-job.yaml
  mapfile -d '' POD_ARGS < <("$PY" "$here/pod_args.py" "$file" "$1" "$2" "$3" 2> "$WORK/pod_args.err") \
    || { cat "$WORK/pod_args.err"; fail "pod_args.py $1"; }
  [ "${#POD_ARGS[@]}" -gt 1 ] || { cat "$WORK/pod_args.err"; fail "pod_args.py $1 printed nothing"; }
  READY_PORT=$(awk '$1 == "readiness" {print $2}' "$WORK/pod_args.err")
}

# ---------------------------------------------------------------------------------------------------------
# What the mpi-operator (v0.8, OpenMPI) adds to the pods, made by hand here

# The Secret of type kubernetes.io/ssh-auth: an ECDSA P-521 key pair, mounted at sshAuthMountPath as id_rsa,
# id_rsa.pub and authorized_keys (a Secret volume: root-owned, mode 0644 for a non-root mount path, the group
# of fsGroup where the pod has one; read-only).
make_ssh_secret() {  # make_ssh_secret DIR
  mkdir -p "$1/key" "$1/fsgroup" "$1/root"
  rm -f "$1/key/id"
  ssh-keygen -q -t ecdsa -b 521 -N '' -C "$JOB-ssh" -f "$1/key/id" || fail "ssh-keygen"
  local d
  for d in fsgroup root; do
    cp "$1/key/id" "$1/$d/id_rsa"
    cp "$1/key/id.pub" "$1/$d/id_rsa.pub"
    cp "$1/key/id.pub" "$1/$d/authorized_keys"
    chmod 0644 "$1/$d"/*
    chown -R 0:0 "$1/$d"
  done
  chgrp -R 1000 "$1/fsgroup"
}

ssh_mount() {  # ssh_mount ROLE: the --volume argument for the ssh Secret of that role's pod
  local group
  group=$("$PY" -c '
import sys, yaml
job = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") == "MPIJob")
spec = job["spec"]["mpiReplicaSpecs"][sys.argv[2]]["template"]["spec"]
print((spec.get("securityContext") or {}).get("fsGroup", ""))' "$WORK/rendered.yaml" "$1")
  if [ -n "$group" ]; then echo "$RUN/secret/fsgroup:$SSH_PATH:ro"; else echo "$RUN/secret/root:$SSH_PATH:ro"; fi
}

# Pod names, hostnames and the headless Service's DNS names as the operator makes them:
# <job>-worker-<i>.<job>-worker.<namespace>.svc, and <job>-launcher.
worker_name() { echo "$JOB-worker-$1"; }
worker_fqdn() { echo "$JOB-worker-$1.$JOB-worker.default.svc"; }

make_hostfile() {  # the ConfigMap's hostfile, mounted read-only at /etc/mpi
  mkdir -p "$RUN/config"
  local i
  for ((i = 0; i < WORKERS; i++)); do echo "$(worker_fqdn "$i") slots=$SLOTS"; done > "$RUN/config/hostfile"
  chmod 0444 "$RUN/config/hostfile"
}

# ---------------------------------------------------------------------------------------------------------
# Containers

cleanup() {
  remove_containers $? || return 0
  podman network rm -f "$NETWORK" > /dev/null 2>&1 || true
}
trap cleanup EXIT

remove_leftovers() {  # containers and the network of an earlier, interrupted run
  local names=("$JOB-launcher" "$JOB-data-prep") i
  for ((i = 0; i < WORKERS; i++)); do names+=("$(worker_name "$i")"); done
  podman rm -f -t 2 "${names[@]}" > /dev/null 2>&1 || true
  podman network rm -f "$NETWORK" > /dev/null 2>&1 || true
}

new_run() {  # new_run NAME: fresh volumes, Secret, hostfile and network
  RUN=$WORK/$1
  rm -rf "$RUN"
  mkdir -p "$RUN/volumes/pstrain-data" "$RUN/volumes/pstrain-output" "$RUN/logs"
  # The NFS exports must be writable by uid/gid 1000 (k8s/base/pv-nfs.yaml).
  chown 1000:1000 "$RUN/volumes/pstrain-data" "$RUN/volumes/pstrain-output"
  make_ssh_secret "$RUN/secret"
  make_hostfile
  remove_leftovers
  podman network create "$NETWORK" > /dev/null || fail "podman network create $NETWORK"
}

run_data_prep() {  # the data-preparation Job: one container, to completion
  local name=$JOB-data-prep
  pod_args data-prep "$RUN/volumes" "$name"
  CONTAINERS+=("$name")
  log "data-prep Job: ${POD_ARGS[*]}"
  timeout 600 podman run --name "$name" --network "$NETWORK" "${POD_ARGS[@]}" > "$RUN/logs/data-prep.log" 2>&1 \
    || { tail -20 "$RUN/logs/data-prep.log"; fail "the data-preparation Job's container failed (rc $?)"; }
  local shards
  shards=$(ls "$RUN"/volumes/pstrain-data/fashion-mnist/train-*.h5 2>/dev/null | wc -l)
  [ "$shards" -ge 1 ] && [ -f "$RUN/volumes/pstrain-data/fashion-mnist/test.h5" ] \
    || fail "the data-preparation Job wrote no shards (log: $RUN/logs/data-prep.log)"
  log "data-prep Job: $shards training shards + test.h5 on the data volume"
}

start_worker() {  # start_worker I [COMMAND...]: the worker pod's container (sshd, or COMMAND instead), detached
  local i=$1 name
  name=$(worker_name "$i")
  pod_args worker "$RUN/volumes" "$name"
  WORKER_READY_PORT=$READY_PORT
  [ $# -gt 1 ] && replace_command "${@:2}"
  CONTAINERS+=("$name")
  podman run -d --name "$name" --hostname "$name" --network "$NETWORK" \
    --network-alias "$(worker_fqdn "$i")" \
    --volume "$(ssh_mount Worker)" --env K_MPI_JOB_ROLE=worker \
    "${POD_ARGS[@]}" > /dev/null || fail "podman run $name"
}

wait_ready() {  # wait_ready NAME: the readiness probe (tcpSocket), bounded
  local name=$1 ip deadline=$((SECONDS + 60))
  [ -n "$WORKER_READY_PORT" ] || fail "the worker has no tcpSocket readiness probe to wait for"
  while true; do
    ip=$(podman inspect --format "{{(index .NetworkSettings.Networks \"$NETWORK\").IPAddress}}" "$name" 2>/dev/null || true)
    if [ -n "$ip" ] && timeout 2 bash -c "exec 3<> /dev/tcp/$ip/$WORKER_READY_PORT" 2> /dev/null; then return 0; fi
    if [ "$(podman inspect --format '{{.State.Running}}' "$name" 2>/dev/null)" != true ]; then
      podman logs "$name" 2>&1 | tail -20
      fail "worker $name exited before it was ready"
    fi
    [ "$SECONDS" -lt "$deadline" ] || { podman logs "$name" 2>&1 | tail -20; fail "worker $name not ready in 60 s"; }
    sleep 0.5
  done
}

replace_command() {  # replace_command COMMAND...: POD_ARGS with the image's command replaced by COMMAND
  local kept=() i
  for ((i = 0; i < ${#POD_ARGS[@]}; i++)); do
    [ "${POD_ARGS[i]}" = "$IMAGE" ] && break
    if [ "${POD_ARGS[i]}" = --entrypoint ]; then i=$((i + 1)); continue; fi
    kept+=("${POD_ARGS[i]}")
  done
  [ "$i" -lt "${#POD_ARGS[@]}" ] || fail "replace_command: no image $IMAGE in the pod's arguments"
  POD_ARGS=("${kept[@]}" --entrypoint "$1" "$IMAGE" "${@:2}")
}

start_workers() {
  local i
  for ((i = 0; i < WORKERS; i++)); do start_worker "$i"; done
  # launcherCreationPolicy WaitForWorkersReady: the launcher starts once every worker passes its probe.
  for ((i = 0; i < WORKERS; i++)); do wait_ready "$(worker_name "$i")"; done
  log "$WORKERS workers ready (sshd on port $WORKER_READY_PORT)"
}

start_launcher() {  # start_launcher LOGNAME: the launcher pod's container, detached
  local name=$JOB-launcher
  podman rm -f -t 2 "$name" > /dev/null 2>&1 || true
  pod_args launcher "$RUN/volumes" "$name"
  CONTAINERS+=("$name")
  # The operator's additions: the hostfile ConfigMap at /etc/mpi, the ssh Secret, and its environment.
  podman run -d --name "$name" --hostname "$name" --network "$NETWORK" \
    --volume "$RUN/config:/etc/mpi:ro" --volume "$(ssh_mount Launcher)" \
    --env K_MPI_JOB_ROLE=launcher \
    --env OMPI_MCA_orte_keep_fqdn_hostnames=true \
    --env OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile \
    --env "OMPI_MCA_plm_rsh_args=-o ConnectionAttempts=10" \
    --env "OMPI_MCA_orte_set_default_slots=$SLOTS" \
    --env NVIDIA_VISIBLE_DEVICES= --env NVIDIA_DRIVER_CAPABILITIES= \
    ${LAUNCHER_ENV:+--env "$LAUNCHER_ENV"} \
    "${POD_ARGS[@]}" > /dev/null || fail "podman run $name"
  LAUNCHER=$name LAUNCHER_LOG=$RUN/logs/$1.log
  log "launcher started: ${POD_ARGS[*]}"
}

wait_launcher() {  # wait_launcher: waits (bounded) for the launcher to exit; its exit code in LAUNCHER_RC
  LAUNCHER_RC=$(timeout "$JOB_TIMEOUT" podman wait "$LAUNCHER") || {
    podman logs "$LAUNCHER" > "$LAUNCHER_LOG" 2>&1 || true
    tail -30 "$LAUNCHER_LOG"
    fail "the launcher did not finish within $JOB_TIMEOUT s (log: $LAUNCHER_LOG)"
  }
  podman logs "$LAUNCHER" > "$LAUNCHER_LOG" 2>&1 || true
}

output_dir() {  # the launcher's --output-dir, as a path on the host's output volume
  local dir
  dir=$("$PY" -c '
import sys, yaml
job = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") == "MPIJob")
args = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["args"]
print(args[args.index("--output-dir") + 1])' "$WORK/rendered.yaml") || fail "no --output-dir in the launcher's args"
  [[ "$dir" == /output/* ]] || fail "--output-dir $dir is not on the output volume (/output)"
  echo "$RUN/volumes/pstrain-output/${dir#/output/}"
}

launcher_arg() {  # launcher_arg FLAG: the value that follows FLAG in the launcher's args
  "$PY" -c '
import sys, yaml
job = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") == "MPIJob")
args = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["args"]
print(args[args.index(sys.argv[2]) + 1] if sys.argv[2] in args else "")' "$WORK/rendered.yaml" "$1"
}

# ---------------------------------------------------------------------------------------------------------
# Checks on the output volume

check_outputs() {  # check_outputs OUT: metrics, pass folders, checkpoints, per-rank logs
  local out=$1 passes trainers
  passes=$(launcher_arg --passes)
  trainers=$((WORKERS * SLOTS - $(launcher_arg --num-pservers)))
  [ -f "$out/metrics.jsonl" ] || fail "no metrics.jsonl in $out"
  "$PY" - "$out/metrics.jsonl" "$passes" "$trainers" <<'PY' || fail "metrics.jsonl in $out"
import json, math, sys
records = [json.loads(line) for line in open(sys.argv[1])]
passes, trainers = int(sys.argv[2]), int(sys.argv[3])
assert [r["pass"] for r in records] == list(range(passes)), [r["pass"] for r in records]
for r in records:
    assert r["trainers"] == trainers and r["pservers"] >= 1, r
    assert math.isfinite(r["train_loss"]) and math.isfinite(r["test_loss"]), r
    assert r["samples_per_sec"] > 0, r
last = records[-1]
assert last["test_accuracy"] > 0.75, f"test accuracy {last['test_accuracy']} after {passes} passes"
assert last["train_loss"] < records[0]["train_loss"], "the training loss did not go down"
print("metrics: " + "; ".join(f"pass {r['pass']}: loss {r['train_loss']:.4f} acc {r['test_accuracy']:.4f} "
                              f"{r['samples_per_sec']:.0f} samples/s" for r in records))
PY
  local p
  for ((p = 0; p < passes; p++)); do
    local folder
    folder=$(printf '%s/pass-%05d' "$out" "$p")
    [ -f "$folder/parameters.h5" ] && [ -f "$folder/done" ] || fail "$folder is missing or incomplete"
    h5ls "$folder/parameters.h5" > /dev/null 2>&1 || fail "$folder/parameters.h5 does not open"
  done
  local ckpts
  ckpts=$(ls -d "$out"/checkpoints/ckpt-* 2>/dev/null | wc -l)
  [ "$ckpts" -ge 1 ] || fail "no checkpoint in $out/checkpoints"
  for p in "$out"/checkpoints/ckpt-*; do
    [ -f "$p/MANIFEST" ] && [ -f "$p/model.h5" ] && [ -f "$p/training.h5" ] || fail "$p is incomplete"
  done
  ! ls -d "$out"/checkpoints/.ckpt-tmp-* > /dev/null 2>&1 || fail "a temporary checkpoint folder was left in $out"
  for ((p = 0; p < WORKERS * SLOTS; p++)); do
    [ -d "$out/node_$p" ] || fail "no node_$p folder in $out (rank $p never wrote its log)"
  done
  log "outputs: $passes pass folders, $ckpts checkpoints, node_0..node_$((WORKERS * SLOTS - 1)) in $out"
}

# What the containers wrote outside their volumes: podman diff against the image. With readOnlyRootFilesystem a
# write there fails the run itself; this also catches a manifest that drops the setting. Allowed: the mount points
# the runtime creates for the pod's volumes and its own files (/etc/hosts, /etc/hostname, /etc/resolv.conf,
# /run/.containerenv, as the kubelet's /etc/hosts and /dev/termination-log), and the folders above them.
check_no_writes() {  # check_no_writes NAME...
  local name
  for name in "$@"; do
    podman diff --format json "$name" > "$RUN/logs/diff-$name.json" 2>&1 || { cat "$RUN/logs/diff-$name.json"; fail "podman diff $name"; }
    podman inspect --format '{{range .Mounts}}{{.Destination}}{{"\n"}}{{end}}' "$name" > "$RUN/logs/mounts-$name.txt" \
      || fail "podman inspect $name"
    "$PY" - "$RUN/logs/diff-$name.json" "$RUN/logs/mounts-$name.txt" "$name" <<'PY' || fail "$name wrote outside its volumes"
import json, os, sys
diff = json.load(open(sys.argv[1])) or {}
changes = sorted({p for kind in ("changed", "added", "deleted") for p in diff.get(kind) or []})
allowed = {"/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/run/.containerenv"}
allowed |= {line.strip() for line in open(sys.argv[2]) if line.strip()}
for path in list(allowed):
    while path not in ("/", ""):
        path = os.path.dirname(path)
        allowed.add(path)
others = [p for p in changes if p not in allowed]
assert not others, f"{sys.argv[3]} changed the image's file system: {others}"
print(f"{sys.argv[3]}: podman diff lists {len(changes)} path(s), all mount points or runtime files: {changes}")
PY
  done
}

# Both checks must be able to fail: a container from the image without the read-only root that writes into its
# home folder must be refused by check_no_writes, and the same write, or one to the data volume, from a worker
# pod's container (its manifest's security context and mounts) must fail.
check_writes_self_test() {
  local probe=$JOB-write-probe
  CONTAINERS+=("$probe")
  podman run --name "$probe" --user 1000:1000 "$IMAGE" touch /home/mpiuser/stray > /dev/null 2>&1 \
    || fail "podman run $probe"
  if (check_no_writes "$probe") > "$RUN/logs/self-test.log" 2>&1; then
    fail "check_no_writes accepted a container that wrote /home/mpiuser/stray"
  fi
  grep -q "/home/mpiuser/stray" "$RUN/logs/self-test.log" || { cat "$RUN/logs/self-test.log"; fail "check_no_writes self-test"; }
  local target
  for target in /home/mpiuser/stray /data/stray; do   # the image's file system, the data volume
    pod_args worker "$RUN/volumes" "$probe-worker"
    replace_command touch "$target"
    if podman run --rm --name "$probe-worker" "${POD_ARGS[@]}" > "$RUN/logs/self-test-worker.log" 2>&1; then
      fail "a worker pod's container could write $target: it is not read-only"
    fi
    grep -q "Read-only file system" "$RUN/logs/self-test-worker.log" \
      || { cat "$RUN/logs/self-test-worker.log"; fail "the worker's failed write to $target did not say 'Read-only file system'"; }
  done
  podman rm -f -t 2 "$probe" > /dev/null
  log "self-test: a write to the image's file system is caught by podman diff; under the worker's securityContext it and a write to /data are refused"
}

# ---------------------------------------------------------------------------------------------------------
# Scenarios

stage_images() {
  install_packages
  render
  base_images
  build_image "$IMAGE"
  podman run --rm "$IMAGE" /opt/pstrain/bin/pstrain --version > "$WORK/version.txt" 2>&1 \
    || { cat "$WORK/version.txt"; fail "the built image does not run pstrain --version"; }
  log "image $IMAGE: $(head -1 "$WORK/version.txt")"
}

stage_rehearse() {
  install_packages
  render
  podman image exists "$IMAGE" || fail "image $IMAGE not built: run tests/containers/run.sh images first"
  new_run rehearse
  run_data_prep
  start_workers
  local start=$SECONDS
  start_launcher launcher
  wait_launcher
  [ "$LAUNCHER_RC" = 0 ] || { tail -40 "$LAUNCHER_LOG"; fail "the launcher exited with $LAUNCHER_RC (log: $LAUNCHER_LOG)"; }
  log "launcher finished in $((SECONDS - start)) s"
  check_outputs "$(output_dir)"
  check_no_writes "${CONTAINERS[@]}"
  check_writes_self_test
  local left_in_tmp
  left_in_tmp=$(cd "$RUN/volumes" && find emptydir-*-tmp -mindepth 1 -maxdepth 1 | tr '\n' ' ')
  log "/tmp of the pods (emptyDir) after the run: ${left_in_tmp:-empty (Open MPI removes its session folders at exit)}"
  podman rm -f -t 2 "${CONTAINERS[@]}" > /dev/null 2>&1 || true
  CONTAINERS=()
  log "rehearse: PASS"
}

seconds_since() {  # seconds_since EPOCH: elapsed seconds, one decimal
  awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}'
}

# The trainers log "first step done" (second resolution) on every start: the newest such line is the restarted
# job's first step.
first_step_after() {  # first_step_after OUT RESTARTED_AT RELAUNCHED_AT
  local stamp epoch
  stamp=$(grep -h "first step done" "$1"/node_*/train.log | sort | tail -1 | cut -d' ' -f1)
  [ -n "$stamp" ] || fail "no 'first step done' line in $1/node_*/train.log"
  epoch=$(date -d "$stamp" +%s) || fail "unreadable time stamp $stamp"
  log "first step after the restart: $(awk -v e="$epoch" -v a="$2" 'BEGIN {printf "%.0f", e - a}') s after the worker was restarted, $(awk -v e="$epoch" -v a="$3" 'BEGIN {printf "%.0f", e - a}') s after the new launcher started (1 s resolution)"
}

stage_kill() {
  install_packages
  render
  podman image exists "$IMAGE" || fail "image $IMAGE not built: run tests/containers/run.sh images first"
  local reference
  reference=$(RUN=$WORK/rehearse output_dir)
  [ -f "$reference/metrics.jsonl" ] || fail "no uninterrupted run to compare with: run tests/containers/run.sh rehearse first"
  [ "$(launcher_arg --mode)" = sync ] || fail "the exact comparison needs --mode sync in the launcher's args"
  [ "$(launcher_arg --resume)" = auto ] || fail "the launcher's args lack --resume auto: a restarted launcher would start over"
  new_run kill
  run_data_prep
  start_workers
  local out
  out=$(output_dir)
  start_launcher launcher-1
  # Wait (bounded) for a checkpoint at or after a random global step within the first two passes (KILL_AFTER_STEP
  # to choose it), then kill a random worker container while the job runs: the steps trained since that
  # checkpoint are lost and must be trained again, once.
  local every target deadline=$((SECONDS + JOB_TIMEOUT)) newest=0 c
  RANDOM=${KILL_SEED:-$$}
  every=$(launcher_arg --checkpoint-every-steps)
  [ -n "$every" ] || fail "the launcher's args lack --checkpoint-every-steps: a restart would redo whole passes"
  target=${KILL_AFTER_STEP:-$(((1 + RANDOM % 8) * every))}
  log "kill seed ${KILL_SEED:-$$}: waiting for a checkpoint at global step >= $target"
  until [ "$newest" -ge "$target" ]; do
    [ "$(podman inspect --format '{{.State.Running}}' "$LAUNCHER")" = true ] \
      || { podman logs "$LAUNCHER" 2>&1 | tail -30; fail "the launcher ended before a checkpoint at step $target"; }
    [ "$SECONDS" -lt "$deadline" ] || fail "no checkpoint at step >= $target in $out within $JOB_TIMEOUT s"
    sleep 0.2
    for c in "$out"/checkpoints/ckpt-*; do
      [ -d "$c" ] && [ "$((10#${c##*ckpt-}))" -gt "$newest" ] && newest=$((10#${c##*ckpt-}))
    done
  done
  local victim
  victim=$(worker_name $((RANDOM % WORKERS)))
  [ -f "$out/metrics.jsonl" ] && [ "$(wc -l < "$out/metrics.jsonl")" -ge "$(launcher_arg --passes)" ] \
    && fail "the job had already finished when the checkpoint at step $newest was seen"
  log "checkpoint at global step $newest written; podman kill $victim"
  local killed_at
  killed_at=$(date +%s.%N)
  podman kill "$victim" > /dev/null || fail "podman kill $victim"
  wait_launcher
  [ "$LAUNCHER_RC" != 0 ] || fail "the launcher exited 0 although worker $victim was killed"
  log "launcher exited with $LAUNCHER_RC $(seconds_since "$killed_at") s after the kill (log: $LAUNCHER_LOG)"
  [ -f "$out/pass-$(printf '%05d' $(($(launcher_arg --passes) - 1)))/done" ] \
    && fail "the last pass had completed before the kill: nothing left to resume"
  # The operator's restart: the worker's restartPolicy (OnFailure) restarts its container; the launcher Job
  # (backoffLimit) makes a new launcher pod, which runs the same command once the workers are ready again.
  local i restarted_at relaunched_at
  restarted_at=$(date +%s.%N)
  podman start "$victim" > /dev/null || fail "podman start $victim"
  for ((i = 0; i < WORKERS; i++)); do wait_ready "$(worker_name "$i")"; done
  relaunched_at=$(date +%s.%N)
  start_launcher launcher-2
  wait_launcher
  [ "$LAUNCHER_RC" = 0 ] || { tail -40 "$LAUNCHER_LOG"; fail "the restarted launcher exited with $LAUNCHER_RC"; }
  grep -q "resuming from" "$LAUNCHER_LOG" || { tail -20 "$LAUNCHER_LOG"; fail "the restarted job did not resume from a checkpoint"; }
  log "restarted job: $(grep -m1 "resuming from" "$LAUNCHER_LOG")"
  first_step_after "$out" "$restarted_at" "$relaunched_at"
  log "restarted job finished $(seconds_since "$killed_at") s after the kill"
  check_outputs "$out"
  "$PY" - "$out/metrics.jsonl" "$reference/metrics.jsonl" <<'PY' || fail "sample accounting after the restart"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
reference = [json.loads(line) for line in open(sys.argv[2])]
total = reference[0]["samples"] + reference[0].get("samples_before_resume", 0)
assert all(r["samples"] + r.get("samples_before_resume", 0) == total for r in reference), "reference run"
for r in records:
    assert r["samples"] + r["samples_before_resume"] == total, (r["pass"], r["samples"], r["samples_before_resume"], total)
    assert r["samples_missing"] == 0 and r["samples_repeated"] == 0, r
resumed = [(r["pass"], r["samples_before_resume"]) for r in records if r["samples_before_resume"]]
print(f"every pass trained each of the {total} samples exactly once; resumed mid-pass (pass, samples before):",
      resumed or "none (resumed at a pass boundary)")
PY
  local last
  last=$(printf 'pass-%05d' $(($(launcher_arg --passes) - 1)))
  h5diff "$reference/$last/parameters.h5" "$out/$last/parameters.h5" > "$RUN/logs/h5diff.log" 2>&1 \
    || { head -20 "$RUN/logs/h5diff.log"; fail "final parameters differ from the uninterrupted run's"; }
  log "final parameters ($last) identical to the uninterrupted run's (h5diff)"
  podman rm -f -t 2 "${CONTAINERS[@]}" > /dev/null 2>&1 || true
  CONTAINERS=()
  log "kill: PASS"
}

case "${1:-all}" in
  images) stage_images ;;
  rehearse) stage_rehearse ;;
  kill) stage_kill ;;
  bad-input) stage_bad_input "${@:2}" ;;
  sweep) stage_sweep ;;
  elastic) stage_elastic ;;
  all) stage_images; stage_rehearse; stage_kill; stage_bad_input; stage_sweep; stage_elastic ;;
  *) echo "usage: $0 [all|images|rehearse|kill|bad-input [CASE...]|sweep|elastic]" >&2; exit 2 ;;
esac
