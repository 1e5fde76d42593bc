#!/usr/bin/env bash
# A hyperparameter sweep as Kubernetes Jobs, rehearsed with real containers (sourced by run.sh; functions only):
# pstrain-sweep grid and emit k8s run in a throw-away pod (as `kubectl run` with both claims), emitting one Job per
# set from k8s/sweep/job.yaml.tmpl; each Job's pod runs in its own container, as the kubelet would run it
# (pod_args.py: its user, security context, limits and volumes); then pstrain-sweep report reads the sweep folder
# on the output volume, and its ranking is checked against each run's own metrics.jsonl.

# shellcheck disable=SC2154  # here, REPO, RUN, JOB, IMAGE... come from run.sh, which sources this file
SWEEP_IN_POD=/output/sweeps/rehearsal   # the sweep folder as every pod sees it (on the pstrain-output claim)

# A throw-away pod from the image with both claims, the template and the search space: the README's
# `kubectl run ... --overrides` with the restricted security context.
tool_pod() {  # tool_pod NAME COMMAND...: stdout to $RUN/logs/NAME.out
  local name=$JOB-$1
  shift
  CONTAINERS+=("$name")
  timeout 300 podman run --rm --name "$name" --user 1000:1000 --read-only --read-only-tmpfs=false \
    --security-opt no-new-privileges --cap-drop ALL \
    --volume "$RUN/volumes/pstrain-data:/data:ro" --volume "$RUN/volumes/pstrain-output:/output:rw" \
    --volume "$REPO/k8s/sweep:/templates:ro" --volume "$here/sweep-space.ini:/space/space.ini:ro" \
    "$IMAGE" "$@" > "$RUN/logs/${name#"$JOB-"}.out" 2> "$RUN/logs/${name#"$JOB-"}.err" \
    || { cat "$RUN/logs/${name#"$JOB-"}.err"; fail "$* in a throw-away pod"; }
}

job_names() {  # job_names FILE: metadata.name of every Job in FILE, one a line
  "$PY" -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "Job":
        print(d["metadata"]["name"])' "$1"
}

run_sweep_jobs() {  # run_sweep_jobs FILE: one container per Job, all at once (each limited to its CPU), bounded
  local file=$1 name names=()
  mapfile -t names < <(job_names "$file")
  [ "${#names[@]}" -ge 2 ] || fail "emit k8s wrote ${#names[@]} Job(s) in $file, expected 2"
  for name in "${names[@]}"; do
    pod_args job "$RUN/volumes" "$name" "$file"
    CONTAINERS+=("$name")
    podman run -d --name "$name" --hostname "$name" --network "$NETWORK" "${POD_ARGS[@]}" > /dev/null \
      || fail "podman run $name"
  done
  log "sweep: ${#names[@]} Jobs running: ${names[*]}"
  local codes
  codes=$(timeout "$JOB_TIMEOUT" podman wait "${names[@]}") \
    || fail "the sweep's Jobs did not finish within $JOB_TIMEOUT s"
  local i=0 code
  for code in $codes; do
    podman logs "${names[i]}" > "$RUN/logs/${names[i]}.log" 2>&1 || true
    [ "$code" = 0 ] || { tail -20 "$RUN/logs/${names[i]}.log"; fail "Job ${names[i]} exited with $code"; }
    i=$((i + 1))
  done
  check_no_writes "${names[@]}"
}

# report.json against each set's own metrics.jsonl: every set complete, its final accuracy the one of its last
# pass, ranked best first.
check_sweep_report() {  # check_sweep_report SWEEP_DIR_ON_HOST
  "$PY" - "$1" <<'PY' || fail "pstrain-sweep report in $1"
import json, os, sys
sweep = sys.argv[1]
report = json.load(open(os.path.join(sweep, "report.json")))
sets = report["sets"]
assert len(sets) == 2, f"{len(sets)} sets in report.json, expected 2"
for s in sets:
    assert s["status"] == "complete", s
    metrics = [json.loads(l) for l in open(os.path.join(sweep, "runs", s["name"], "metrics.jsonl"))]
    assert s["passes_done"] == len(metrics) == s["passes_asked"], (s, len(metrics))
    assert abs(s["final_test_accuracy"] - metrics[-1]["test_accuracy"]) < 1e-6, (s, metrics[-1])
    assert s["final_test_accuracy"] > 0.7, s
accuracies = [s["best_test_accuracy"] for s in sets]
assert accuracies == sorted(accuracies, reverse=True), f"not ranked best first: {accuracies}"
assert report["best_set"] == sets[0]["set"], report["best_set"]
print("report: " + "; ".join(f"#{s['rank']} {s['name']} lr {s['flags'].get('lr')} acc {s['final_test_accuracy']:.4f}"
                             for s in sets))
PY
}

stage_sweep() {
  install_packages
  render
  podman image exists "$IMAGE" || fail "image $IMAGE not built: run tests/containers/run.sh images first"
  new_run sweep
  run_data_prep
  tool_pod sweep-grid pstrain-sweep grid --space /space/space.ini --sweep-dir "$SWEEP_IN_POD"
  tool_pod sweep-emit pstrain-sweep emit k8s --template /templates/job.yaml.tmpl --sweep-dir "$SWEEP_IN_POD" \
    --data-dir /data/fashion-mnist --image "$IMAGE" --pstrain /opt/pstrain/bin/pstrain --name pstrain-sweep
  cp "$RUN/logs/sweep-emit.out" "$RUN/jobs.yaml"
  local start=$SECONDS
  run_sweep_jobs "$RUN/jobs.yaml"
  log "sweep: both Jobs finished in $((SECONDS - start)) s"
  tool_pod sweep-report pstrain-sweep report --sweep-dir "$SWEEP_IN_POD"
  sed 's/^/  /' "$RUN/logs/sweep-report.out"
  check_sweep_report "$RUN/volumes/pstrain-output/${SWEEP_IN_POD#/output/}"
  # The image draws the report's plot too (pstrain-plot and python3-matplotlib are in it).
  grep -q "drew .*report.png" "$RUN/logs/sweep-report.out" || fail "pstrain-sweep report in the image drew no report.png"
  [ "$(head -c 8 "$RUN/volumes/pstrain-output/${SWEEP_IN_POD#/output/}/report.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] \
    || fail "report.png is not a PNG image"
  podman rm -f -t 2 "${CONTAINERS[@]}" > /dev/null 2>&1 || true
  CONTAINERS=()
  log "sweep: PASS"
}
