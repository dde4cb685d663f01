#!/usr/bin/env bash
# A Debian minbase image made from Debian packages, no registry: debootstrap SUITE (minbase)
# -> a rootfs tarball cached under ~/.cache -> `podman import` as localhost/slime-SUITE:minbase.
# The lab's images (forky) and the execution environment's base (trixie) start from it.
#   lab/minbase.sh SUITE [--force]     prints the image name
set -euo pipefail
suite=${1:?usage: lab/minbase.sh SUITE [--force]}
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
mirror=${SLIME_DEBIAN_MIRROR:-http://deb.debian.org/debian}
image=localhost/slime-$suite:minbase
tarball=$cache/$suite-minbase.tar
mkdir -p "$cache"

if [ "${2:-}" = --force ]; then
  podman rmi -f "$image" >/dev/null 2>&1 || true   # re-imported; rm the tarball to debootstrap again
fi
if ! podman image exists "$image"; then
  if [ ! -s "$tarball" ]; then
    # A suite debootstrap has no script for yet (forky on bookworm) bootstraps like sid.
    script=/usr/share/debootstrap/scripts/$suite
    [ -e "$script" ] || script=/usr/share/debootstrap/scripts/sid
    root=$(mktemp -d "$cache/rootfs.XXXX")
    debootstrap --variant=minbase "$suite" "$root" "$mirror" "$script" >&2
    tar -C "$root" -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf "$root"
  fi
  podman import "$tarball" "$image" >/dev/null
fi
echo "$image"
