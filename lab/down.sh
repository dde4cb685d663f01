#!/usr/bin/env bash
# Tear the hybrid lab down: containers, networks and the host rules up.sh added.
# Images and the rootfs cache stay (lab/build-image.sh --force rebuilds them).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lab/env.sh
. "$here/env.sh"
# shellcheck source=lab/lib.sh
. "$here/lib.sh"
# The real-Kubernetes lab (lab/kube) shares the bare-metal hosts and the external network.
if podman container exists kube-cp; then
  echo "lab: the real-Kubernetes lab is up (lab/kube/down.sh removes it); the podman-only lab is not" >&2
  exit 0
fi
# shellcheck disable=SC2046,SC2086  # lists of container names, split on purpose
podman rm -f -t 2 $LAB_CONTAINERS $(podman ps -aq --filter label=slime-lab=1) >/dev/null 2>&1
podman network rm -f "$LAB_POD_NET" "$LAB_EXT_NET" >/dev/null 2>&1
# What a teardown racing this one may have left: the bridges, without their networks.
lab_clear_stale_bridges "$LAB_POD_CIDR"
lab_clear_stale_bridges "$LAB_EXT_CIDR"
for pair in "$LAB_POD_CIDR $LAB_EXT_CIDR" "$LAB_EXT_CIDR $LAB_POD_CIDR"; do
  # shellcheck disable=SC2086  # two CIDRs, split on purpose
  set -- $pair
  while iptables -w -t nat -D POSTROUTING -s "$1" -d "$2" -m physdev --physdev-is-bridged \
      -m comment --comment slime-lab -j ACCEPT 2>/dev/null; do :; done
done
for pair in "$LAB_EXT_CIDR $LAB_POD_CIDR" "$LAB_POD_CIDR $LAB_EXT_CIDR"; do
  # shellcheck disable=SC2086  # two CIDRs, split on purpose
  set -- $pair
  while iptables -w -D FORWARD -s "$1" -d "$2" -m physdev ! --physdev-is-bridged \
      -m comment --comment slime-lab -j REJECT 2>/dev/null; do :; done
done
echo "lab: down"
