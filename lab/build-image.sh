#!/usr/bin/env bash
# Build the lab's bare-metal host image from nothing: Debian minbase (lab/minbase.sh: debootstrap,
# podman import; the rootfs tarball is cached under ~/.cache) -> a bare systemd host (python3,
# sshd, no Slurm) that site.yml or cloud-init makes a Slurm worker.
#   lab/build-image.sh [--force]     localhost/slime-host:lab (forky: Slurm 26.05)
#   lab/build-image.sh --host SUITE  a bare host on another Debian release (e.g. trixie, whose
#                                    Slurm is 24.11): localhost/slime-host:SUITE, name printed
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# The images carry the checksum of image/ they were built from; a change there rebuilds them.
sum=$(cat "$here"/image/* | sha256sum | cut -c1-16)
built() { podman image exists "$1" && [ "$(podman image inspect -f '{{ index .Labels "slime.lab.sum" }}' "$1" 2>/dev/null)" = "$sum" ]; }
host_image() {  # host_image TAG MINBASE
  built "$1" || podman build -q --label "slime.lab.sum=$sum" --build-arg "MINBASE=$2" -t "$1" \
    -f "$here/image/Containerfile.host" "$here/image" >/dev/null
}

case "${1:-}" in
  --host)
    suite=${2:?usage: lab/build-image.sh --host SUITE}
    host_image "localhost/slime-host:$suite" "$("$here/minbase.sh" "$suite")"
    echo "localhost/slime-host:$suite" ;;
  --force)
    podman rmi -f localhost/slime-host:lab >/dev/null 2>&1 || true
    host_image localhost/slime-host:lab "$("$here/minbase.sh" forky --force)" ;;
  "")
    host_image localhost/slime-host:lab "$("$here/minbase.sh" forky)" ;;
  *) echo "usage: lab/build-image.sh [--force | --host SUITE]" >&2; exit 2 ;;
esac
