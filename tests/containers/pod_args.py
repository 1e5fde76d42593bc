#!/usr/bin/python3
"""Turns a pod template of a rendered manifest into `podman run` arguments, the way the kubelet and the
mpi-operator would run it (used by tests/containers/run.sh).

  pod_args.py RENDERED.yaml launcher|worker|data-prep|job VOLUMES_DIR [NAME]

RENDERED.yaml holds the kustomize output (MPIJob), the data-preparation Job, or the Jobs that
`pstrain-sweep emit k8s` wrote (role job: the Job whose metadata.name is NAME). Prints NUL-separated arguments
for `podman run` (everything between `run` and the end: options, image, then the container's args), taken from
the first container of the pod template:
  - image; command as the entrypoint, args as the command (Kubernetes semantics: command replaces ENTRYPOINT,
    args replace CMD);
  - env; runAsUser/runAsGroup as --user, fsGroup as a supplementary group (the group of every volume);
    runAsNonRoot is checked here (a uid of 0 or none is refused, as the kubelet would);
  - the container's securityContext: readOnlyRootFilesystem as --read-only (without podman's own tmpfs mounts on
    /tmp, /var/tmp and /run: only the pod's volumes are writable, as under the kubelet), allowPrivilegeEscalation
    false as no-new-privileges, capabilities as --cap-drop/--cap-add, seccompProfile RuntimeDefault as podman's
    default profile; any other field is refused rather than silently not rehearsed;
  - resources.limits cpu/memory as --cpus/--memory;
  - volumeMounts: a persistentVolumeClaim becomes VOLUMES_DIR/<claimName> bound at mountPath (read-only if the
    mount or the claim source says readOnly), an emptyDir with medium Memory a tmpfs of sizeLimit, another
    emptyDir a fresh folder VOLUMES_DIR/emptydir-NAME-<volume>, mode 0777 as the kubelet makes it; a configMap
    its files (from the ConfigMap of the same manifest) with the volume's defaultMode, read-only;
  - containerPort values are printed to stderr as "port N" lines (the caller probes the readiness port).
What the operator adds (hostfile, ssh Secret, its environment variables) is added by run.sh, not here.
"""
import json
import os
import sys

import yaml


def fail(message):
    print(f"pod_args.py: {message}", file=sys.stderr)
    sys.exit(2)


def quantity_cpu(value):
    value = str(value)
    return float(value[:-1]) / 1000 if value.endswith("m") else float(value)


def quantity_bytes(value):
    value = str(value)
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "k": 10**3, "M": 10**6, "G": 10**9}
    for suffix, factor in units.items():
        if value.endswith(suffix):
            return int(float(value[: -len(suffix)]) * factor)
    return int(value)


def container_security_args(role, security):
    """podman options for the fields of a container's securityContext that only the container level has."""
    args = []
    known = {"runAsUser", "runAsGroup", "runAsNonRoot", "readOnlyRootFilesystem", "allowPrivilegeEscalation",
             "capabilities", "seccompProfile"}
    unknown = sorted(set(security) - known)
    if unknown:
        fail(f"{role}: securityContext fields this rehearsal does not map: {unknown}")
    if security.get("readOnlyRootFilesystem"):
        # podman --read-only alone mounts its own tmpfs on /tmp, /var/tmp and /run; the kubelet does not.
        args += ["--read-only", "--read-only-tmpfs=false"]
    if security.get("allowPrivilegeEscalation") is False:
        args += ["--security-opt", "no-new-privileges"]
    capabilities = security.get("capabilities") or {}
    for capability in capabilities.get("drop") or []:
        args += ["--cap-drop", capability]
    for capability in capabilities.get("add") or []:
        args += ["--cap-add", capability]
    seccomp = (security.get("seccompProfile") or {}).get("type")
    if seccomp not in (None, "RuntimeDefault"):
        fail(f"{role}: seccompProfile {seccomp} is not rehearsed (only RuntimeDefault, podman's default profile)")
    return args


def pod_template(documents, role, name):
    if role == "job":
        job = next((d for d in documents if d and d.get("kind") == "Job" and d["metadata"]["name"] == name), None)
        if job is None:
            fail(f"no Job named {name} in the manifest")
        return job["spec"]["template"]
    if role == "data-prep":
        job = next((d for d in documents if d and d.get("kind") == "Job"), None)
        if job is None:
            fail("no Job in the data-preparation manifest")
        return job["spec"]["template"]
    job = next((d for d in documents if d and d.get("kind") == "MPIJob"), None)
    if job is None:
        fail("no MPIJob in the rendered manifest")
    replica = {"launcher": "Launcher", "worker": "Worker"}[role]
    return job["spec"]["mpiReplicaSpecs"][replica]["template"]


def config_map_folder(documents, source, volumes_dir, role):
    """A configMap volume as the kubelet makes it: one file per data key (or per listed item) with the volume's
    defaultMode (0644 unless given), in VOLUMES_DIR/configmap-<name>; the ConfigMap comes from the same manifest."""
    name = source["name"]
    config = next((d for d in documents if d and d.get("kind") == "ConfigMap" and d["metadata"]["name"] == name), None)
    if config is None:
        fail(f"{role}: configMap volume names {name}, which the manifest does not hold")
    folder = os.path.join(volumes_dir, f"configmap-{name}")
    os.makedirs(folder, exist_ok=True)
    items = source.get("items") or [{"key": key, "path": key} for key in config.get("data") or {}]
    for item in items:
        path = os.path.join(folder, item["path"])
        with open(path, "w") as f:
            f.write(config["data"][item["key"]])
        os.chmod(path, item.get("mode", source.get("defaultMode", 0o644)))
    return folder


def main():
    if len(sys.argv) not in (4, 5):
        fail("usage: pod_args.py RENDERED.yaml launcher|worker|data-prep|job VOLUMES_DIR [NAME]")
    path, role, volumes_dir = sys.argv[1:4]
    name = sys.argv[4] if len(sys.argv) == 5 else role
    with open(path) as f:
        documents = list(yaml.safe_load_all(f))
    spec = pod_template(documents, role, name)["spec"]
    container = spec["containers"][0]
    args = []

    container_security = container.get("securityContext") or {}
    security = dict(spec.get("securityContext") or {})
    security.update(container_security)
    uid, gid = security.get("runAsUser"), security.get("runAsGroup")
    if security.get("runAsNonRoot") and not uid:
        fail(f"{role}: runAsNonRoot without a non-zero runAsUser (the kubelet would refuse to start it)")
    if uid is not None:
        args += ["--user", f"{uid}:{gid if gid is not None else uid}"]
    fs_group = security.get("fsGroup")
    if fs_group is not None:
        args += ["--group-add", str(fs_group)]

    args += container_security_args(role, container_security)

    for env in container.get("env") or []:
        if "value" not in env:
            fail(f"{role}: env {env.get('name')} is not a plain value (valueFrom is not rehearsed)")
        args += ["--env", f"{env['name']}={env['value']}"]

    limits = (container.get("resources") or {}).get("limits") or {}
    if "cpu" in limits:
        args += ["--cpus", str(quantity_cpu(limits["cpu"]))]
    if "memory" in limits:
        args += ["--memory", str(quantity_bytes(limits["memory"]))]

    volumes = {v["name"]: v for v in spec.get("volumes") or []}
    for mount in container.get("volumeMounts") or []:
        volume = volumes.get(mount["name"])
        if volume is None:
            fail(f"{role}: volumeMount {mount['name']} names no volume of the pod")
        target = mount["mountPath"]
        if "persistentVolumeClaim" in volume:
            claim = volume["persistentVolumeClaim"]
            read_only = mount.get("readOnly") or claim.get("readOnly")
            source = os.path.join(volumes_dir, claim["claimName"])
            args += ["--volume", f"{source}:{target}:{'ro' if read_only else 'rw'}"]
        elif "emptyDir" in volume:
            empty = volume["emptyDir"] or {}
            if empty.get("medium") == "Memory":
                size = quantity_bytes(empty.get("sizeLimit", "64Mi"))
                # tmpfs mounts come up root-owned 1777 on /dev/shm-like paths: usable by any uid.
                args += ["--tmpfs", f"{target}:rw,size={size},mode=1777"]
            else:
                source = os.path.join(volumes_dir, f"emptydir-{name}-{mount['name']}")
                os.makedirs(source, exist_ok=True)
                os.chmod(source, 0o777)  # the kubelet's emptyDir: writable by the pod's non-root user
                args += ["--volume", f"{source}:{target}:rw"]
        elif "configMap" in volume:
            source = config_map_folder(documents, volume["configMap"], volumes_dir, role)
            args += ["--volume", f"{source}:{target}:ro"]
        else:
            fail(f"{role}: volume {mount['name']} has a type this rehearsal does not map: {sorted(volume)}")

    for port in container.get("ports") or []:
        print(f"port {port['containerPort']}", file=sys.stderr)
    probe = (container.get("readinessProbe") or {}).get("tcpSocket")
    if probe:
        print(f"readiness {probe['port']}", file=sys.stderr)

    if container.get("command"):
        args += ["--entrypoint", json.dumps(container["command"])]
    args.append(container["image"])
    args += [str(a) for a in container.get("args") or []]
    sys.stdout.write("\0".join(args) + "\0")


if __name__ == "__main__":
    main()
