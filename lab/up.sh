#!/usr/bin/env bash
# Bring up the hybrid lab: one Kubernetes-like node, a slurmctld "pod", two slurmd "pods"
# on the pod network, and two bare hosts on the external network. Idempotent: containers
# that already run are kept. See lab/README.md for the topology.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lab/env.sh
. "$here/env.sh"
# shellcheck source=lab/lib.sh
. "$here/lib.sh"
case "$LAB_MODE" in nat|routed|hostnetwork) ;; *)
  echo "lab: SLIME_LAB_MODE=$LAB_MODE is not one of nat, routed, hostnetwork" >&2; exit 2 ;;
esac

podman container exists kube-cp && {
  echo "lab: the real-Kubernetes lab is up and holds the bare-metal hosts: run lab/kube/down.sh first" >&2; exit 1; }
"$here/build-image.sh" >/dev/null
mkdir -p "$LAB_CACHE"
chmod 0700 "$LAB_CACHE"
# A lab built for another network mode is rebuilt: its containers sit on other networks.
if [ -f "$LAB_CACHE/mode" ] && [ "$(cat "$LAB_CACHE/mode")" != "$LAB_MODE" ]; then
  "$here/down.sh" >/dev/null
fi
echo "$LAB_MODE" >"$LAB_CACHE/mode"

# The cluster's slurm.key, as Slinky's chart would generate it: 1024 random bytes.
if [ ! -s "$LAB_CACHE/slurm.key" ]; then
  (umask 077; head -c 1024 /dev/urandom >"$LAB_CACHE/slurm.key")
fi

ensure_net() { # name cidr
  podman network exists "$1" && return 0
  lab_clear_stale_bridges "$2"
  podman network create --disable-dns --subnet "$2" "$1" >/dev/null
}
ensure_net "$LAB_POD_NET" "$LAB_POD_CIDR"
ensure_net "$LAB_EXT_NET" "$LAB_EXT_CIDR"

# br_netfilter makes the host's iptables see frames bridged between two containers; podman's
# masquerade rules would then SNAT traffic that k8snode routes between the two networks,
# and slurmctld would record the wrong NodeAddr. Exempt exactly that traffic.
host_rule() { # add|del rule...
  local op=$1; shift
  if [ "$op" = add ]; then
    iptables -w -t nat -C POSTROUTING "$@" 2>/dev/null || iptables -w -t nat -I POSTROUTING "$@"
  else
    while iptables -w -t nat -C POSTROUTING "$@" 2>/dev/null; do iptables -w -t nat -D POSTROUTING "$@"; done
  fi
}
for pair in "$LAB_POD_CIDR $LAB_EXT_CIDR" "$LAB_EXT_CIDR $LAB_POD_CIDR"; do
  # shellcheck disable=SC2086  # NAME IP: split on purpose
  set -- $pair
  host_rule add -s "$1" -d "$2" -m physdev --physdev-is-bridged -m comment --comment slime-lab -j ACCEPT
done

x() { podman exec "$@"; }

lab_run k8snode "$LAB_IMAGE_HOST" --network "$LAB_POD_NET:ip=$LAB_K8SNODE_POD_IP" \
  --network "$LAB_EXT_NET:ip=$LAB_K8SNODE_EXT_IP" --sysctl net.ipv4.ip_forward=1
# The controller "pod" is named and reached as Slinky's are: hostname slurm-controller-0, and
# the Service name slurm-controller.slurm (cluster DNS in a real cluster) for Slurm to connect to.
lab_run ctl "$LAB_IMAGE_SLURM" --network "$LAB_POD_NET:ip=$LAB_CTL_IP" --hostname slurm-controller-0 \
  --add-host "slurm-controller.slurm:$LAB_CTL_IP"
pod_name() { echo "${1%%=*}"; }
pod_ip() { local v=${1#*=}; echo "${v%@*}"; }
pod_node() { echo "${1#*@}"; }
for p in $LAB_PODS; do
  if [ "$LAB_MODE" = hostnetwork ]; then
    # A hostNetwork pod shares its node's network: it sits on the external network at the node address.
    lab_run "$(pod_name "$p")" "$LAB_IMAGE_SLURM" --network "$LAB_EXT_NET:ip=$(pod_node "$p")" --add-host "slurm-controller.slurm:$LAB_CTL_IP" --add-host "slurm-controller-0:$LAB_CTL_IP"
  else
    lab_run "$(pod_name "$p")" "$LAB_IMAGE_SLURM" --network "$LAB_POD_NET:ip=$(pod_ip "$p")" --add-host "slurm-controller.slurm:$LAB_CTL_IP" --add-host "slurm-controller-0:$LAB_CTL_IP"
  fi
done
for b in $LAB_BMS; do lab_bm_run "${b%=*}" "${b#*=}"; done
for c in $LAB_CONTAINERS; do lab_wait_booted "$c"; done

# k8snode plays every Kubernetes node: .50 hosts the controller pod, and each pod worker
# has a node address of its own. It programs what kube-proxy and the CNI's portmap do:
# - the controller's NodePort Service with externalTrafficPolicy: Local: DNAT, no SNAT;
# - hostPorts: the srun range of the controller pod, 6818 + the srun range of each pod worker;
# - pod traffic leaving its node (to the outside, or to another node's hostPort) is
#   masqueraded to that node's address, so replies come back through the node.
# shellcheck disable=SC2016  # expanded by the shell inside the container
x k8snode sh -c 'for f in /proc/sys/net/ipv4/conf/*/send_redirects; do echo 0 >"$f"; done'
ext_dev=$(x k8snode ip -o -4 addr show to "$LAB_K8SNODE_EXT_IP" | awk '{print $2}')
nat_rule() { # container chain rule...
  local c=$1 chain=$2; shift 2
  x "$c" iptables -w -t nat -C "$chain" "$@" 2>/dev/null || x "$c" iptables -w -t nat -A "$chain" "$@"
}
nat_rule k8snode PREROUTING -d "$LAB_K8SNODE_EXT_IP/32" -p tcp --dport "$LAB_NODEPORT" \
  -m comment --comment "nodeport slurm-controller" -j DNAT --to-destination "$LAB_CTL_IP:6817"
nat_rule k8snode PREROUTING -d "$LAB_K8SNODE_EXT_IP/32" -p tcp --dport "$LAB_SRUN_PORTS" \
  -m comment --comment "hostport ctl srun" -j DNAT --to-destination "$LAB_CTL_IP"
node_snat() { # pod-ip node-ip
  nat_rule k8snode POSTROUTING -s "$1/32" -d "$LAB_EXT_CIDR" -m comment --comment "egress $1" -j SNAT --to-source "$2"
  nat_rule k8snode POSTROUTING -s "$1/32" -m conntrack --ctstate DNAT -m comment --comment "hairpin $1" -j SNAT --to-source "$2"
}
# Pod egress is masqueraded to the node's address (as common CNIs do), except in routed
# mode, where the point is that pods and bare metal see each other's real addresses.
[ "$LAB_MODE" = routed ] || node_snat "$LAB_CTL_IP" "$LAB_K8SNODE_EXT_IP"
for p in $LAB_PODS; do
  [ "$LAB_MODE" = nat ] || continue
  ip=$(pod_ip "$p"); node=$(pod_node "$p")
  x k8snode sh -c "ip -o -4 addr show dev $ext_dev | grep -q ' $node/' || ip addr add $node/${LAB_EXT_CIDR#*/} dev $ext_dev"
  nat_rule k8snode PREROUTING -d "$node/32" -p tcp -m multiport --dports "6818,$LAB_SRUN_PORTS" \
    -m comment --comment "hostports $(pod_name "$p")" -j DNAT --to-destination "$ip"
  node_snat "$ip" "$node"
done

# Pods reach the outside through their node; hostNetwork pods (on the node network) reach
# the pod network through it, as a Kubernetes node does.
for p in ctl $(for q in $LAB_PODS; do pod_name "$q"; done); do
  if [ "$LAB_MODE" = hostnetwork ] && [ "$p" != ctl ]; then
    x "$p" ip route replace "$LAB_POD_CIDR" via "$LAB_K8SNODE_EXT_IP"
  else
    x "$p" ip route replace "$LAB_EXT_CIDR" via "$LAB_K8SNODE_POD_IP"
  fi
done
for b in $LAB_BMS; do lab_bm_hosts "${b%=*}" "${b#*=}"; done
# Bare metal has no route into the pod network of its own: the host does not route between
# the two podman networks (only frames bridged through k8snode pass), so bare metal reaches
# pods only through k8snode: its NodePort/hostPorts, or routes via it (routed mode).
for pair in "$LAB_EXT_CIDR $LAB_POD_CIDR" "$LAB_POD_CIDR $LAB_EXT_CIDR"; do
  # shellcheck disable=SC2086  # NAME IP: split on purpose
  set -- $pair
  iptables -w -C FORWARD -s "$1" -d "$2" -m physdev ! --physdev-is-bridged -m comment --comment slime-lab -j REJECT 2>/dev/null \
    || iptables -w -I FORWARD -s "$1" -d "$2" -m physdev ! --physdev-is-bridged -m comment --comment slime-lab -j REJECT
done

install_key() { # container
  podman cp "$LAB_CACHE/slurm.key" "$1:/etc/slurm/slurm.key"
  x "$1" sh -c 'chown slurm:slurm /etc/slurm/slurm.key && chmod 0600 /etc/slurm/slurm.key'
}

# Controller "pod".
podman cp "$here/files/slurm.conf" ctl:/etc/slurm/slurm.conf
podman cp "$here/files/cgroup.conf" ctl:/etc/slurm/cgroup.conf
install_key ctl
x ctl systemctl start slurmctld
for _ in $(seq 1 60); do x ctl scontrol ping >/dev/null 2>&1 && break; sleep 0.5; done
x ctl scontrol ping | grep -q UP || { echo "lab: slurmctld is not up" >&2; exit 1; }

# Pod workers: configless dynamic slurmd, as a Slinky NodeSet pod runs it.
for p in $LAB_PODS; do
  name=$(pod_name "$p")
  install_key "$name"
  x "$name" mkdir -p /etc/systemd/system/slurmd.service.d
  podman cp "$here/files/slurmd-pod.conf" "$name:/etc/systemd/system/slurmd.service.d/10-slinky.conf"
  x "$name" systemctl daemon-reload
  x "$name" systemctl start slurmd
done
for _ in $(seq 1 60); do
  [ "$(x ctl sinfo -h -N -o '%N %T' | grep -c ' idle')" -ge 2 ] && break; sleep 0.5
done
echo "lab: up (network mode $LAB_MODE)"
x ctl sinfo -N -o '%N %T %f'
