#!/usr/bin/env bash
# Remove the real-Kubernetes lab: node containers, their containerd volumes and cgroups, the
# storage volume (the controller's state), the bare-metal hosts, the external network, and the
# cluster's state (certificates, kubeconfig). Built images and binaries stay cached.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lab/kube/env.sh
. "$here/env.sh"
# shellcheck source=lab/lib.sh
. "$here/../lib.sh"
for n in $KUBE_NODES; do
  name=$(lab_ctr "${n%%=*}")
  # The pods' cgroups sit below the node container's own (the kubelet's cgroupRoot): podman
  # removes the container's cgroup only when they are gone (cgroup v1: depth first).
  cg=$(podman inspect -f '{{.State.CgroupPath}}' "$name" 2>/dev/null || true)
  podman rm -f -t 5 "$name" >/dev/null 2>&1 || true
  podman volume rm -f "$name-containerd" >/dev/null 2>&1 || true
  if [ -n "$cg" ]; then
    for h in /sys/fs/cgroup/*/; do
      [ -d "$h$cg" ] && { find "$h$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true; }
    done
  fi
done
podman volume rm -f "$KUBE_PV_VOLUME" >/dev/null 2>&1 || true
# The bare-metal hosts of this lab, with those lab/host.sh added: lab_run labels each.
# shellcheck disable=SC2046  # container ids, split on purpose
podman rm -f -t 2 $(podman ps -aq --filter label=slime-lab=1 --filter "label=$LAB_SLOT_LABEL") >/dev/null 2>&1 || true
while iptables -w -t nat -D POSTROUTING -s "$LAB_EXT_CIDR" -d "$KUBE_CLUSTER_CIDR" -m physdev --physdev-is-bridged \
    -m comment --comment slime-kube -j ACCEPT 2>/dev/null; do :; done
while iptables -w -D FORWARD -s "$LAB_EXT_CIDR" -d "$KUBE_CLUSTER_CIDR" -m physdev ! --physdev-is-bridged \
    -m comment --comment slime-kube -j REJECT 2>/dev/null; do :; done
podman network rm -f "$LAB_EXT_NET" >/dev/null 2>&1 || true
rm -rf "$KUBE_DIR/pki" "$KUBE_DIR/nodes" "$KUBE_KUBECONFIG"
echo "lab/kube: down${LAB_SLOT:+ (lab $LAB_SLOT)}"
