#!/usr/bin/env bash
# Builds what the rehearsal needs, cached between runs (sourced by run.sh and fresh_machine.sh; functions only;
# they use log, fail and WORK from the script that sources them):
#   install_packages  podman, buildah, runc, debootstrap... from Debian, when missing
#   base_images   debian:bookworm and debian:bookworm-slim, imported from a debootstrap root file system
#                 (no image registry is reachable; the Dockerfile's FROM lines then resolve locally)
#   build_image   k8s/Dockerfile as it is, tagged with the image the rendered MPIJob names; podman's layer cache
#                 keeps the apt and compile layers until their inputs change
#   remove_containers  the containers a run started (CONTAINERS), for the scripts' exit traps

install_packages() {
  # iptables: netavark sets up the bridge network with it (without it: "netavark: No such file or directory").
  local packages=(podman buildah runc debootstrap netavark aardvark-dns uidmap fuse-overlayfs openssh-client
                  python3-yaml hdf5-tools ca-certificates iptables) missing=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    local sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -q > "$WORK/apt.log" 2>&1 || { cat "$WORK/apt.log"; fail "apt-get update"; }
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" \
      >> "$WORK/apt.log" 2>&1 || { tail -30 "$WORK/apt.log"; fail "apt-get install ${missing[*]}"; }
  fi
  command -v kubectl > /dev/null || fail "kubectl not found (it renders the overlay: kubectl kustomize)"
  [ "$(id -u)" -eq 0 ] || fail "run as root: rootful podman (bridge networks, bind mounts owned by uid 1000)"
}

base_images() {
  if podman image exists debian:bookworm && podman image exists debian:bookworm-slim; then
    log "base images debian:bookworm{,-slim} already there"
    return 0
  fi
  local mirror rootfs
  # The mirror apt already uses (deb822 .sources or one-line .list), so no other registry is needed.
  mirror=$(grep -rhoE '^URIs: *\S+|^deb +\S+' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null \
           | awk '{print $2}' | grep -v security | head -1 || true)
  [ -n "$mirror" ] || fail "no Debian mirror found in /etc/apt/sources.list{,.d}"
  rootfs=$(mktemp -d /var/tmp/pstrain-rootfs.XXXXXX)
  log "debootstrap bookworm from $mirror into $rootfs"
  timeout 900 nice -n 19 debootstrap --variant=minbase bookworm "$rootfs" "$mirror" > "$WORK/debootstrap.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap.log"; rm -rf "$rootfs"; fail "debootstrap (log: $WORK/debootstrap.log)"; }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import - debian:bookworm > /dev/null || { rm -rf "$rootfs"; fail "podman import"; }
  rm -rf "$rootfs"
  podman tag debian:bookworm debian:bookworm-slim || fail "podman tag debian:bookworm-slim"
  log "base images imported: $(podman image inspect --format '{{.Size}}' debian:bookworm) bytes"
}

build_image() {  # build_image IMAGE
  local image=$1 start=$SECONDS
  log "building k8s/Dockerfile as $image (WITH_DATASET=1; cached layers are reused; log: $WORK/build.log)"
  # --isolation chroot: RUN steps need no OCI runtime; --layers keeps every step in the cache.
  timeout "${BUILD_TIMEOUT:-5400}" nice -n 19 podman build --isolation chroot --layers \
      --build-arg WITH_DATASET=1 -f "$REPO/k8s/Dockerfile" -t "$image" "$REPO" > "$WORK/build.log" 2>&1 \
    || { tail -40 "$WORK/build.log"; fail "podman build of k8s/Dockerfile (log: $WORK/build.log)"; }
  log "image $image built in $((SECONDS - start)) s"
}

CONTAINERS=()
# remove_containers STATUS: removes the containers in CONTAINERS, unless the run failed (STATUS not 0) and KEEP=1
# asks to keep them for a look (then returns 1).
remove_containers() {
  local status=$1
  if [ "$status" -ne 0 ] && [ "${KEEP:-0}" = 1 ]; then
    log "KEEP=1: containers left: ${CONTAINERS[*]:-none}"
    return 1
  fi
  [ "${#CONTAINERS[@]}" -gt 0 ] && podman rm -f -t 2 "${CONTAINERS[@]}" > /dev/null 2>&1
  return 0
}
