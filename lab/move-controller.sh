#!/usr/bin/env bash
# Move the controller "pod" to another pod IP, as Kubernetes does when it reschedules the
# slurmctld pod (StatefulSet pod deleted, node drained): slurmctld stops, the pod comes back
# with a new IP on the same node, and what follows the pod follows it - the NodePort's and the
# hostPorts' DNAT on its node (kube-proxy, the CNI's portmap), its egress SNAT, and the Service
# name in cluster DNS (here: the pods' /etc/hosts). Bare metal is left as it was: that is what
# the fault is about (docs/faults.md).
#   lab/move-controller.sh NEW_IP    e.g. 10.126.0.12 (in LAB_POD_CIDR)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lab/env.sh
. "$here/env.sh"
new=${1:?usage: lab/move-controller.sh NEW_IP}
old=$(cat "$LAB_CTL_IP_FILE" 2>/dev/null || echo "$LAB_CTL_IP")
[[ $new =~ ^${LAB_POD_CIDR%.*}\.([0-9]+)$ && ${BASH_REMATCH[1]} -ge 2 && ${BASH_REMATCH[1]} -le 254 ]] \
  || { echo "lab: $new is not a host address of $LAB_POD_CIDR" >&2; exit 2; }
[ "$new" != "$old" ] || { echo "lab: the controller is at $new already"; exit 0; }
x() { podman exec "$@"; }
word() { printf '%s' "$1" | sed 's/\./\\./g'; }   # an address as a sed pattern

x ctl systemctl stop slurmctld
podman network disconnect "$LAB_POD_NET" ctl
podman network connect --ip "$new" "$LAB_POD_NET" ctl
x ctl ip route replace "$LAB_EXT_CIDR" via "$LAB_K8SNODE_POD_IP"
# Cluster DNS: the controller's names now resolve to the new pod IP everywhere in the cluster.
for c in ctl $(for p in $LAB_PODS; do echo "${p%%=*}"; done); do
  x "$c" sh -c "sed -E 's/^$(word "$old")([[:space:]])/$new\\1/' /etc/hosts >/tmp/hosts && cat /tmp/hosts >/etc/hosts"
done
# kube-proxy and portmap on the node: every rule naming the old pod IP names the new one.
x k8snode sh -c "iptables-save -t nat | sed -E 's/(^|[^0-9])$(word "$old")([^0-9]|$)/\\1$new\\2/g' | iptables-restore -T nat"
echo "$new" >"$LAB_CTL_IP_FILE"
x ctl systemctl start slurmctld
for _ in $(seq 1 60); do x ctl scontrol ping >/dev/null 2>&1 && break; sleep 0.5; done
x ctl scontrol ping | grep -q UP || { echo "lab: slurmctld is not up at $new" >&2; exit 1; }
echo "lab: controller moved from $old to $new"
