#!/usr/bin/env bash
# Build the lab images from nothing: debootstrap Debian forky (minbase) -> podman import ->
# a "bare host" image and a Slurm image. The rootfs tarball is cached under ~/.cache.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
mirror=${SLIME_DEBIAN_MIRROR:-http://deb.debian.org/debian}
force=${1:-}
mkdir -p "$cache"

have() { podman image exists "$1"; }

if [ "$force" = --force ]; then
  podman rmi -f localhost/slime-slurm:lab localhost/slime-host:lab localhost/slime-forky:minbase >/dev/null 2>&1 || true
fi

if ! have localhost/slime-forky:minbase; then
  tarball=$cache/forky-minbase.tar
  if [ ! -s "$tarball" ]; then
    root=$(mktemp -d "$cache/rootfs.XXXX")
    # bookworm's debootstrap has no forky script; sid's works for forky.
    debootstrap --variant=minbase forky "$root" "$mirror" /usr/share/debootstrap/scripts/sid
    tar -C "$root" -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf "$root"
  fi
  podman import "$tarball" localhost/slime-forky:minbase >/dev/null
fi
# The images carry the checksum of image/ they were built from; a change there rebuilds them.
sum=$(cat "$here"/image/* | sha256sum | cut -c1-16)
built() { have "$1" && [ "$(podman image inspect -f '{{ index .Labels "slime.lab.sum" }}' "$1" 2>/dev/null)" = "$sum" ]; }
if ! built localhost/slime-host:lab; then
  podman build -q --label "slime.lab.sum=$sum" -t localhost/slime-host:lab -f "$here/image/Containerfile.host" "$here/image"
  podman rmi -f localhost/slime-slurm:lab >/dev/null 2>&1 || true
fi
built localhost/slime-slurm:lab \
  || podman build -q --label "slime.lab.sum=$sum" -t localhost/slime-slurm:lab -f "$here/image/Containerfile.slurm" "$here/image"
podman run --rm localhost/slime-slurm:lab cat /etc/slurm-packages.txt
