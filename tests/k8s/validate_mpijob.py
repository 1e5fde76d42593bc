#!/usr/bin/python3
"""Validates kubeflow.org/v2beta1 MPIJobs offline.

  validate_mpijob.py --crd CRD.yaml FILE...    every MPIJob in FILE (multi-document YAML, '-' = stdin) must pass
  validate_mpijob.py --crd CRD.yaml --self-test FILE
                                               the first MPIJob in FILE must pass and broken copies of it must fail

Checks, in order:
  1. the CRD's openAPIV3Schema (jsonschema), read strictly as the API server does with kubectl's default
     --validate=strict: an object schema with properties and no additionalProperties /
     x-kubernetes-preserve-unknown-fields rejects unknown fields;
  2. the rules mpi-operator v0.8 checks itself: exactly 1 Launcher replica, Worker replicas >= 1,
     runPolicy.cleanPodPolicy in None/Running/All, every restartPolicy in Never/OnFailure, only Launcher and
     Worker replica types, a container in every template, a DNS-1035 name;
  3. pstrain's own consistency: the launcher runs mpirun with --hostfile /etc/mpi/hostfile, -np equal to
     Worker replicas x slotsPerWorker, osc pt2pt enabled (cross-node RMA), and /opt/pstrain/bin/pstrain; or it runs
     the elastic driver (/opt/pstrain/bin/pstrain-elastic) with the workers within [--min-np, --max-np], its
     discovery script on a mounted ConfigMap and its output folder on a mounted claim (elastic_rules).
Exit status 0 when everything passes, 1 otherwise (each problem on stderr).
"""
import argparse
import copy
import re
import sys

import jsonschema
import yaml


def strict(schema):
    """Copy of an OpenAPI v3 structural schema where objects with declared properties reject unknown fields."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) if k in ("properties", "items", "additionalProperties", "anyOf", "allOf", "oneOf", "not")
           else v for k, v in schema.items()}
    if "properties" in out:
        out["properties"] = {k: strict(v) for k, v in schema["properties"].items()}
        if "additionalProperties" not in out and not out.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
    return out


def load_crd_schema(path):
    crd = yaml.safe_load(open(path, encoding="utf-8"))
    versions = [v for v in crd["spec"]["versions"] if v["name"] == "v2beta1"]
    if not versions:
        sys.exit(f"{path}: no v2beta1 version")
    schema = strict(versions[0]["schema"]["openAPIV3Schema"])
    # metadata is validated by the API server's ObjectMeta, not by the CRD schema: allow it as an object.
    schema.setdefault("properties", {})["metadata"] = {"type": "object"}
    schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind", "metadata", "spec"})
    return schema


def operator_rules(job):
    errors = []
    name = job.get("metadata", {}).get("name", "")
    if not re.fullmatch(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?", name or ""):
        errors.append(f"metadata.name {name!r} is not a DNS-1035 label")
    spec = job.get("spec", {})
    replicas = spec.get("mpiReplicaSpecs", {}) or {}
    for rtype in replicas:
        if rtype not in ("Launcher", "Worker"):
            errors.append(f"mpiReplicaSpecs.{rtype}: unknown replica type (Launcher, Worker)")
    launcher = replicas.get("Launcher")
    if launcher is None:
        errors.append("mpiReplicaSpecs.Launcher is missing")
    elif launcher.get("replicas", 1) != 1:
        errors.append(f"mpiReplicaSpecs.Launcher.replicas must be 1, is {launcher.get('replicas')}")
    worker = replicas.get("Worker")
    if worker is None:
        errors.append("mpiReplicaSpecs.Worker is missing")
    elif not isinstance(worker.get("replicas", 1), int) or worker.get("replicas", 1) < 1:
        errors.append(f"mpiReplicaSpecs.Worker.replicas must be >= 1, is {worker.get('replicas')}")
    policy = spec.get("runPolicy", {}).get("cleanPodPolicy", "Running")
    if policy not in ("None", "Running", "All"):
        errors.append(f"runPolicy.cleanPodPolicy {policy!r} not in None/Running/All")
    if spec.get("slotsPerWorker", 1) < 1:
        errors.append("slotsPerWorker must be >= 1")
    for rtype, rspec in replicas.items():
        if not isinstance(rspec, dict):
            continue
        rp = rspec.get("restartPolicy", "Never")
        if rp not in ("Never", "OnFailure"):
            errors.append(f"mpiReplicaSpecs.{rtype}.restartPolicy {rp!r} not in Never/OnFailure")
        containers = (rspec.get("template", {}).get("spec", {}) or {}).get("containers") or []
        if not containers:
            errors.append(f"mpiReplicaSpecs.{rtype}.template.spec.containers is empty")
    return errors


def pstrain_rules(job):
    errors = []
    spec = job.get("spec", {})
    replicas = spec.get("mpiReplicaSpecs", {}) or {}
    try:
        container = replicas["Launcher"]["template"]["spec"]["containers"][0]
    except (KeyError, IndexError, TypeError):
        return ["no launcher container"]
    argv = list(container.get("command", [])) + list(container.get("args", []))
    if argv and argv[0] == "/opt/pstrain/bin/pstrain-elastic":
        return elastic_rules(spec, container, argv)
    if not argv or argv[0] not in ("mpirun", "/usr/bin/mpirun"):
        return [f"launcher does not run mpirun: {argv[:1]}"]

    def value(flag):
        return argv[argv.index(flag) + 1] if flag in argv and argv.index(flag) + 1 < len(argv) else None

    if value("--hostfile") != "/etc/mpi/hostfile":
        errors.append("mpirun needs --hostfile /etc/mpi/hostfile (mounted by the operator)")
    np_value = value("-np") or value("-n")
    workers = (replicas.get("Worker") or {}).get("replicas", 1)
    slots = spec.get("slotsPerWorker", 1)
    if np_value is None or not str(np_value).isdigit():
        errors.append("mpirun has no numeric -np")
    elif isinstance(workers, int) and isinstance(slots, int) and int(np_value) != workers * slots:
        errors.append(f"mpirun -np {np_value} != Worker replicas {workers} x slotsPerWorker {slots}")
    osc = [argv[i + 2] for i in range(len(argv) - 2) if argv[i] == "--mca" and argv[i + 1] == "osc"]
    if not any("pt2pt" in o.split(",") for o in osc):
        errors.append("mpirun lacks --mca osc ...pt2pt (cross-node one-sided needs osc/pt2pt)")
    if "/opt/pstrain/bin/pstrain" not in argv:
        errors.append("mpirun does not start /opt/pstrain/bin/pstrain")
    return errors


def elastic_rules(spec, container, argv):
    """A launcher running the elastic driver (k8s/overlays/elastic): the workers it starts with lie within
    [--min-np, --max-np], its discovery script is on a mounted ConfigMap, and its --output-dir is on a volume the
    launcher mounts (the driver writes its host lists and elastic.jsonl there); --resume is the driver's own."""
    errors = []
    driver, _, pstrain = argv[1:], None, []
    if "--" in argv:
        driver, pstrain = argv[1:argv.index("--")], argv[argv.index("--") + 1:]
    else:
        errors.append("pstrain-elastic has no '--' before pstrain's flags")

    def value(flags, flag):
        return flags[flags.index(flag) + 1] if flag in flags and flags.index(flag) + 1 < len(flags) else None

    replicas = spec.get("mpiReplicaSpecs", {})
    workers = (replicas.get("Worker") or {}).get("replicas", 1) * spec.get("slotsPerWorker", 1)
    low, high = value(driver, "--min-np"), value(driver, "--max-np")
    if not (str(low).isdigit() and str(high).isdigit()):
        errors.append("pstrain-elastic needs numeric --min-np and --max-np")
    elif not int(low) <= workers <= int(high):
        errors.append(f"Worker replicas x slotsPerWorker = {workers} is outside --min-np {low} .. --max-np {high}")
    pod = replicas["Launcher"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod.get("volumes") or []}
    mounts = {m["mountPath"]: volumes.get(m["name"], {}) for m in container.get("volumeMounts") or []}
    script = value(driver, "--host-discovery-script") or ""
    if not any(script.startswith(path + "/") and "configMap" in volume for path, volume in mounts.items()):
        errors.append(f"the discovery script {script or '(none)'} is not on a ConfigMap the launcher mounts")
    output = value(pstrain, "--output-dir") or ""
    if not any(output.startswith(path + "/") and "persistentVolumeClaim" in volume for path, volume in mounts.items()):
        errors.append(f"--output-dir {output or '(none)'} is not on a volume claim the launcher mounts")
    if "--resume" in pstrain:
        errors.append("pstrain-elastic passes --resume itself: drop it from pstrain's flags")
    return errors


def validate(job, validator):
    errors = [f"schema: {'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"
              for e in sorted(validator.iter_errors(job), key=lambda e: list(map(str, e.absolute_path)))]
    if job.get("apiVersion") != "kubeflow.org/v2beta1":
        errors.append(f"apiVersion {job.get('apiVersion')!r} is not kubeflow.org/v2beta1")
    if errors:  # the rules below assume the schema's types
        return errors
    return operator_rules(job) + pstrain_rules(job)


def mpijobs(path):
    stream = sys.stdin if path == "-" else open(path, encoding="utf-8")
    return [d for d in yaml.safe_load_all(stream) if isinstance(d, dict) and d.get("kind") == "MPIJob"]


def broken_copies(job):
    """Each (description, broken MPIJob) must be rejected."""
    cases = []

    def case(desc, mutate):
        j = copy.deepcopy(job)
        mutate(j)
        cases.append((desc, j))

    rs = lambda j: j["spec"]["mpiReplicaSpecs"]  # noqa: E731
    case("2 launcher replicas", lambda j: rs(j)["Launcher"].__setitem__("replicas", 2))
    case("0 worker replicas", lambda j: rs(j)["Worker"].__setitem__("replicas", 0))
    case("replicas as a string", lambda j: rs(j)["Worker"].__setitem__("replicas", "3"))
    case("cleanPodPolicy Sometimes", lambda j: j["spec"].setdefault("runPolicy", {}).__setitem__(
        "cleanPodPolicy", "Sometimes"))
    case("restartPolicy Always", lambda j: rs(j)["Worker"].__setitem__("restartPolicy", "Always"))
    case("unknown spec field slotPerWorker", lambda j: j["spec"].__setitem__("slotPerWorker", 1))
    case("unknown container field imagePullPolicyy", lambda j: rs(j)["Worker"]["template"]["spec"]["containers"][0]
         .__setitem__("imagePullPolicyy", "Always"))
    case("mpiImplementation OpenMP", lambda j: j["spec"].__setitem__("mpiImplementation", "OpenMP"))
    case("no Launcher", lambda j: rs(j).pop("Launcher"))
    launcher = rs(job)["Launcher"]["template"]["spec"]["containers"][0]
    if launcher.get("command") == ["/opt/pstrain/bin/pstrain-elastic"]:
        args = lambda j: rs(j)["Launcher"]["template"]["spec"]["containers"][0]["args"]  # noqa: E731
        case("more workers than --max-np", lambda j: rs(j)["Worker"].__setitem__(
            "replicas", int(args(job)[args(job).index("--max-np") + 1]) + 1))
        case("--resume among pstrain's flags", lambda j: args(j).extend(["--resume", "auto"]))
        case("discovery script not mounted", lambda j: args(j).__setitem__(
            args(j).index("--host-discovery-script") + 1, "/opt/discover.sh"))
        case("launcher without the output volume", lambda j: rs(j)["Launcher"]["template"]["spec"]["containers"][0]
             .__setitem__("volumeMounts", [m for m in rs(j)["Launcher"]["template"]["spec"]["containers"][0]
                                           ["volumeMounts"] if m["mountPath"] != "/output"]))
    else:
        case("-np differs from the workers", lambda j: rs(j)["Worker"].__setitem__(
            "replicas", rs(job)["Worker"].get("replicas", 1) + 1))
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crd", required=True)
    parser.add_argument("--self-test", action="store_true")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    validator = jsonschema.Draft7Validator(load_crd_schema(args.crd))
    failed = False
    for path in args.files:
        jobs = mpijobs(path)
        if not jobs:
            print(f"{path}: no MPIJob found", file=sys.stderr)
            failed = True
            continue
        if args.self_test:
            jobs = jobs[:1]
        for job in jobs:
            errors = validate(job, validator)
            where = f"{path}: MPIJob {job.get('metadata', {}).get('name')}"
            for e in errors:
                print(f"{where}: {e}", file=sys.stderr)
            failed |= bool(errors)
            if not errors:
                print(f"{where}: valid")
            if args.self_test:
                for desc, broken in broken_copies(job):
                    errors = validate(broken, validator)
                    if errors:
                        print(f"{where}: broken copy ({desc}) rejected: {errors[0]}")
                    else:
                        print(f"{where}: broken copy ({desc}) was ACCEPTED", file=sys.stderr)
                        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
