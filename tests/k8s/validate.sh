#!/usr/bin/env bash
# Offline checks of the Kubernetes deployment (k8s/): no cluster, no Docker engine needed.
#
#   validate.sh yamllint | mpijob_schema | core_objects | kustomize | launcher_local | elastic_discovery | all
#
# Environment (set by CTest, defaults for a manual run from the checkout):
#   REPO       repository root                      (default: two levels above this script)
#   BIN_DIR    folder with pstrain and pstrain-data (default: $REPO/build/bin)
#   WORK_ROOT  scratch folder                       (default: $REPO/build/tests/work)
#   CRD        MPIJob CRD                           (default: tests/k8s/crd/mpijobs.kubeflow.org.v2beta1.crd.yaml,
#              a copy of kubeflow/mpi-operator v0.8.2's)
#   FASHION_MNIST  Fashion-MNIST IDX folder         (default: /usr/share/datasets/fashion-mnist)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="${REPO:-$(cd "$here/../.." && pwd)}"
BIN_DIR="${BIN_DIR:-$REPO/build/bin}"
WORK_ROOT="${WORK_ROOT:-$REPO/build/tests/work}"
CRD="${CRD:-$here/crd/mpijobs.kubeflow.org.v2beta1.crd.yaml}"
FASHION_MNIST="${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}"
PY=/usr/bin/python3   # Debian's interpreter: python3-yaml, python3-jsonschema
K8S="$REPO/k8s"
work="$WORK_ROOT/k8s"

fail() { echo "FAIL: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || fail "$1 not found (install: $2)"; }

overlays() { for k in "$K8S"/overlays/*/kustomization.yaml; do basename "$(dirname "$k")"; done; }

# Renders the base and every overlay into $work/rendered/<name>.yaml.
render_all() {
  need kubectl "kubectl (preinstalled on the CI image)"
  mkdir -p "$work/rendered"
  kubectl kustomize "$K8S/base" > "$work/rendered/base.yaml" || fail "kubectl kustomize k8s/base"
  local o
  for o in $(overlays); do
    kubectl kustomize "$K8S/overlays/$o" > "$work/rendered/$o.yaml" || fail "kubectl kustomize k8s/overlays/$o"
  done
}

t_yamllint() {
  need yamllint "apt-get install yamllint"
  (cd "$K8S" && yamllint --strict -c .yamllint .) || fail "yamllint"
  echo "yamllint: k8s/ clean"
}

t_kustomize() {
  render_all
  [ -n "$(overlays)" ] || fail "no overlays under k8s/overlays"
  local o f
  for o in base $(overlays); do
    f="$work/rendered/$o.yaml"
    grep -q '^kind: MPIJob$' "$f" || fail "$o: no MPIJob rendered"
    [ "$(grep -c '^kind: PersistentVolumeClaim$' "$f")" = 2 ] || fail "$o: expected 2 PersistentVolumeClaims"
    if [ "$o" = gpu ]; then
      grep -q 'nvidia.com/gpu: 1' "$f" || fail "gpu: no nvidia.com/gpu limit"
      grep -qx -- '            - --device' "$f" && grep -qx -- '            - gpu' "$f" || fail "gpu: no --device gpu"
      grep -q 'image: registry.example.com/pstrain:0.1.0-cuda' "$f" || fail "gpu: image tag is not 0.1.0-cuda"
    else
      ! grep -q 'nvidia.com/gpu' "$f" || fail "$o: CPU variant requests GPUs"
      ! grep -q 'pstrain:0.1.0-cuda' "$f" || fail "$o: CPU variant uses the CUDA image"
    fi
    echo "kustomize: $o renders ($(grep -c '^kind:' "$f") objects)"
  done
}

t_mpijob_schema() {
  render_all
  local files=("$K8S/base/mpijob.yaml") o
  for o in base $(overlays); do files+=("$work/rendered/$o.yaml"); done
  "$PY" "$here/validate_mpijob.py" --crd "$CRD" "${files[@]}" || fail "an MPIJob is invalid"
  # Negative checks: broken copies (2 launchers, 0 workers, unknown fields, bad policies, -np mismatch) must fail.
  "$PY" "$here/validate_mpijob.py" --crd "$CRD" --self-test "$K8S/base/mpijob.yaml" \
    || fail "the validator accepted a broken MPIJob"
  if [ -f "$work/rendered/elastic.yaml" ]; then   # the elastic launcher's own rules (pstrain-elastic)
    "$PY" "$here/validate_mpijob.py" --crd "$CRD" --self-test "$work/rendered/elastic.yaml" \
      || fail "the validator accepted a broken elastic MPIJob"
  fi
  # And the command-line path itself must exit non-zero on a broken file.
  "$PY" - "$K8S/base/mpijob.yaml" > "$work/broken-mpijob.yaml" <<'PYEOF'
import sys, yaml
job = yaml.safe_load(open(sys.argv[1]))
job["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 2
yaml.safe_dump(job, sys.stdout)
PYEOF
  if "$PY" "$here/validate_mpijob.py" --crd "$CRD" "$work/broken-mpijob.yaml" 2>/dev/null; then
    fail "an MPIJob with 2 launchers passed"
  fi
  echo "mpijob_schema: ${#files[@]} files valid, broken MPIJobs rejected"
}

t_core_objects() {
  need node "apt-get install nodejs"
  local nodedir="$here/node"
  if [ ! -d "$nodedir/node_modules/kubernetes-models" ]; then
    need npm "apt-get install npm"
    (cd "$nodedir" && npm ci --no-audit --no-fund --loglevel=error) || fail "npm ci in tests/k8s/node"
  fi
  render_all
  local files=("$K8S/base/data-prep-job.yaml" "$K8S/base/pvc.yaml" "$K8S/base/pv-nfs.yaml") o
  for o in base $(overlays); do files+=("$work/rendered/$o.yaml"); done
  node "$nodedir/validate_core.mjs" "${files[@]}" || fail "a core object is invalid"
  node "$nodedir/validate_core.mjs" --self-test "$K8S/base/data-prep-job.yaml" "$K8S/base/pvc.yaml" \
    "$K8S/base/pv-nfs.yaml" > /dev/null || fail "kubernetes-models accepted a broken object"
  echo "core_objects: Job, PVCs, PVs valid; broken copies rejected"
}

# Runs the launcher's exact mpirun command from the rendered cpu-small overlay on this machine.
t_launcher_local() {
  need mpirun "apt-get install openmpi-bin"
  render_all
  [ -x "$BIN_DIR/pstrain" ] && [ -x "$BIN_DIR/pstrain-data" ] || fail "no pstrain binaries in $BIN_DIR"
  local run="$work/launcher" data out hostfile
  rm -rf "$run"
  data="$run/data" out="$run/output" hostfile="$run/hostfile"
  mkdir -p "$data" "$out"
  echo "localhost slots=8" > "$hostfile"
  # The launcher's argv: command + args of the Launcher container, with the in-cluster paths replaced
  # (/opt/pstrain/bin, /data, /output, /etc/mpi/hostfile), one argument per line.
  local argv_file="$run/argv"
  "$PY" - "$work/rendered/cpu-small.yaml" "$BIN_DIR" "$data" "$out" "$hostfile" > "$argv_file" <<'PYEOF'
import sys, yaml
path, bin_dir, data, out, hostfile = sys.argv[1:]
job = next(d for d in yaml.safe_load_all(open(path)) if d and d.get("kind") == "MPIJob")
c = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
argv = list(c.get("command", [])) + list(c.get("args", []))
subst = [("/opt/pstrain/bin/", bin_dir + "/"), ("/data/", data + "/"), ("/output/", out + "/")]
for a in argv:
    a = str(a)
    assert "\n" not in a
    if a == "/etc/mpi/hostfile":
        a = hostfile
    for old, new in subst:
        if a.startswith(old):
            a = new + a[len(old):]
    print(a)
PYEOF
  mapfile -t argv < "$argv_file"
  [ "${argv[0]}" = mpirun ] || fail "launcher command is not mpirun: ${argv[0]}"
  # Where the data and output dirs must be, as the launcher names them.
  local data_dir="" out_dir="" i
  for ((i = 0; i < ${#argv[@]} - 1; i++)); do
    case "${argv[i]}" in
      --data-dir) data_dir="${argv[i + 1]}" ;;
      --output-dir) out_dir="${argv[i + 1]}" ;;
      --passes) argv[i + 1]=1 ;;   # one pass is enough here
    esac
  done
  [[ "$data_dir" == "$data"/* ]] || fail "--data-dir ${data_dir:-missing} is not under /data"
  [[ "$out_dir" == "$out"/* ]] || fail "--output-dir ${out_dir:-missing} is not under /output"
  # What the data-prep Job makes (12 shards), small: 1536 training samples, 500 test samples.
  "$BIN_DIR/pstrain-data" fashion-mnist --input "$FASHION_MNIST" --output "$data_dir" --split-count 12 \
    --limit 1536 --test-limit 500 > "$run/pstrain-data.log" 2>&1 || { cat "$run/pstrain-data.log"; fail "pstrain-data"; }
  # Only what running as root on one machine needs: root permission, and more ranks than cores.
  if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
  local cmd=(mpirun --oversubscribe "${argv[@]:1}")
  printf 'running:'; printf ' %q' "${cmd[@]}"; echo
  local rc=0
  timeout 300 "${cmd[@]}" > "$run/mpirun.log" 2>&1 || rc=$?
  tail -n 20 "$run/mpirun.log"
  [ "$rc" = 0 ] || fail "launcher command exited with $rc"
  [ -f "$out_dir/pass-00000/done" ] || fail "no $out_dir/pass-00000/done"
  [ -f "$out_dir/pass-00000/parameters.h5" ] || fail "no $out_dir/pass-00000/parameters.h5"
  [ -s "$out_dir/metrics.jsonl" ] || fail "no $out_dir/metrics.jsonl"
  grep -q '"test_accuracy"' "$out_dir/metrics.jsonl" || fail "metrics.jsonl has no test_accuracy"
  local np
  np=$(grep -A1 -x -- '-np' "$argv_file" | tail -n 1)
  for ((i = 0; i < np; i++)); do [ -d "$out_dir/node_$i" ] || fail "no $out_dir/node_$i"; done
  echo "launcher_local: $np ranks, $(wc -l < "$out_dir/metrics.jsonl") pass(es), outputs in $out_dir"
}

# The elastic overlay's discovery wrapper (k8s/overlays/elastic/discover.sh) against a stand-in for the operator's
# /etc/mpi/discover_hosts.sh: bare host lines get slotsPerWorker (OMPI_MCA_orte_set_default_slots), a host whose
# sshd port does not answer is left out (unless none answers: then all are printed), the operator's order is kept,
# and a failing operator script fails it.
t_elastic_discovery() {
  local dir="$work/elastic-discovery" script="$K8S/overlays/elastic/discover.sh" got code=0
  rm -rf "$dir" && mkdir -p "$dir"
  # A listener on 127.0.0.1 only (a worker's sshd); 127.0.0.2 is loopback too but refuses (a killed worker).
  "$PY" -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True); time.sleep(120)' > "$dir/port" &
  local listener=$!
  trap 'kill "$listener" 2> /dev/null || true' RETURN
  for _ in $(seq 50); do [ -s "$dir/port" ] && break; sleep 0.1; done
  [ -s "$dir/port" ] || fail "the stand-in sshd did not start"
  printf '#!/bin/sh\necho 127.0.0.1\necho 127.0.0.2\necho localhost:3\n' > "$dir/operator.sh"
  chmod +x "$dir/operator.sh"
  got=$(DISCOVER_HOSTS_SCRIPT=$dir/operator.sh DISCOVER_SSH_PORT=$(cat "$dir/port") OMPI_MCA_orte_set_default_slots=2 \
        sh "$script" | tr '\n' ' ') || fail "discover.sh failed"
  [ "$got" = "127.0.0.1:2 localhost:3 " ] || fail "discover.sh printed '$got', expected '127.0.0.1:2 localhost:3 '"
  # No listed host answers: the probe is the likelier fault, the operator's list is printed as it is.
  printf '#!/bin/sh\necho 127.0.0.2\necho 127.0.0.3:2\n' > "$dir/operator.sh"
  got=$(DISCOVER_HOSTS_SCRIPT=$dir/operator.sh DISCOVER_SSH_PORT=$(cat "$dir/port") sh "$script" | tr '\n' ' ') \
    || fail "discover.sh failed"
  [ "$got" = "127.0.0.2:1 127.0.0.3:2 " ] || fail "discover.sh with no host answering printed '$got'"
  printf '#!/bin/sh\necho "cannot read the ConfigMap" >&2\nexit 4\n' > "$dir/operator.sh"
  DISCOVER_HOSTS_SCRIPT=$dir/operator.sh sh "$script" > "$dir/out" 2>&1 || code=$?
  [ "$code" -eq 4 ] || fail "discover.sh with a failing operator script: exit $code, expected 4"
  echo "elastic_discovery: slots added, the host that does not answer left out, order kept, failures passed on"
}

case "${1:-all}" in
  yamllint) t_yamllint ;;
  mpijob_schema) t_mpijob_schema ;;
  core_objects) t_core_objects ;;
  kustomize) t_kustomize ;;
  launcher_local) t_launcher_local ;;
  elastic_discovery) t_elastic_discovery ;;
  all) t_yamllint; t_kustomize; t_mpijob_schema; t_core_objects; t_launcher_local; t_elastic_discovery ;;
  *) echo "usage: $0 yamllint|mpijob_schema|core_objects|kustomize|launcher_local|elastic_discovery|all" >&2; exit 2 ;;
esac
