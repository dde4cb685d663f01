#!/usr/bin/env bash
# Build the lab images from nothing: Debian forky minbase (lab/minbase.sh: debootstrap, podman
# import; the rootfs tarball is cached under ~/.cache) -> a "bare host" image and a Slurm image.
#   lab/build-image.sh [--force]     the lab's images (forky: Slurm 26.05)
#   lab/build-image.sh --bare        the bare host image only (the real-Kubernetes lab's hosts;
#                                    the Slurm image is the podman-only lab's)
#   lab/build-image.sh --host SUITE  a bare host on another Debian release (e.g. trixie, whose
#                                    Slurm is 24.11): localhost/slime-host:SUITE, name printed
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

have() { podman image exists "$1"; }
# The images carry the checksum of image/ they were built from; a change there rebuilds them.
sum=$(cat "$here"/image/* | sha256sum | cut -c1-16)
built() { have "$1" && [ "$(podman image inspect -f '{{ index .Labels "slime.lab.sum" }}' "$1" 2>/dev/null)" = "$sum" ]; }
host_image() {  # host_image TAG MINBASE
  built "$1" || podman build -q --label "slime.lab.sum=$sum" --build-arg "MINBASE=$2" -t "$1" \
    -f "$here/image/Containerfile.host" "$here/image" >/dev/null
}

if [ "${1:-}" = --host ]; then
  suite=${2:?usage: lab/build-image.sh --host SUITE}
  host_image "localhost/slime-host:$suite" "$("$here/minbase.sh" "$suite")"
  echo "localhost/slime-host:$suite"
  exit 0
fi
if [ "${1:-}" = --bare ]; then
  minbase=$("$here/minbase.sh" forky)
  if ! built localhost/slime-host:lab; then
    host_image localhost/slime-host:lab "$minbase"
    podman rmi -f localhost/slime-slurm:lab >/dev/null 2>&1 || true
  fi
  exit 0
fi
force=${1:-}
if [ "$force" = --force ]; then
  podman rmi -f localhost/slime-slurm:lab localhost/slime-host:lab >/dev/null 2>&1 || true
fi

minbase=$("$here/minbase.sh" forky ${force:+--force})
if ! built localhost/slime-host:lab; then
  host_image localhost/slime-host:lab "$minbase"
  podman rmi -f localhost/slime-slurm:lab >/dev/null 2>&1 || true
fi
built localhost/slime-slurm:lab \
  || podman build -q --label "slime.lab.sum=$sum" -t localhost/slime-slurm:lab -f "$here/image/Containerfile.slurm" "$here/image"
podman run --rm localhost/slime-slurm:lab cat /etc/slurm-packages.txt
