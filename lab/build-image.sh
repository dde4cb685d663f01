#!/usr/bin/env bash
# Build the lab images from nothing: Debian forky minbase (lab/minbase.sh: debootstrap, podman
# import; the rootfs tarball is cached under ~/.cache) -> a "bare host" image and a Slurm image.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
force=${1:-}

have() { podman image exists "$1"; }

if [ "$force" = --force ]; then
  podman rmi -f localhost/slime-slurm:lab localhost/slime-host:lab >/dev/null 2>&1 || true
fi

"$here/minbase.sh" forky ${force:+--force} >/dev/null
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
