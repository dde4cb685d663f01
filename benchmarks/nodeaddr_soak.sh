#!/usr/bin/env bash
# The NodeAddr soak on a converged lab/kube (network_mode nat), three ways: with neither of the
# two mechanisms (site.yml -e slinky_nodeaddr_sync=false, then the bare-metal hosts' pod-slurmd
# DNAT rules deleted by hand: what the collection did before; fix_nodeaddr, site.yml's last stage,
# set every NodeAddr right once), with the sidecar only (the rules deleted again), with both
# (site.yml as it is). The soak is the kube tier's (molecule/kube/verify_soak.yml: two
# re-registrations of every node and a slurmctld restart while bm-1 launches a step on every pod
# worker, one after the other), here reporting only. One line each: launches, failed launches,
# the longest wrong NodeAddr seen from bare metal, the sidecar's heals. Measures; never asserts a
# limit. Run through make (PATH, SLIME_CACHE, the collection) on a converged lab (about 30 min).
#   SOAK_SECONDS  the soak's length (default: two re-registration periods, from SlurmdTimeout)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=benchmarks/lib.sh
. benchmarks/lib.sh

soak() {
  ANSIBLE_CALLBACK_RESULT_FORMAT=json ansible-playbook -i inventories/kube/hosts.yml molecule/kube/verify_soak.yml -e slime_soak_check=false \
    ${SOAK_SECONDS:+-e slime_soak_seconds=$SOAK_SECONDS} \
    | awk '/TASK \[Report the soak\]/ { on = 1 } on && /"msg":/ { sub(/^ *"msg": "/, ""); sub(/"$/, ""); print; exit }'
}

# The pod-slurmd DNAT rules out of the bare-metal hosts (site.yml puts them back).
drop_pod_dnat() {
  local host
  for host in "${LAB_CTR_PREFIX:-}bm-1" "${LAB_CTR_PREFIX:-}bm-2"; do
    # shellcheck disable=SC2016  # the host's shell expands them
    podman exec "$host" bash -c 'iptables -t nat -S SLIME-HYBRID-OUT | grep pod-slurmd | sed "s/^-A /-D /" \
      | while read -r rule; do eval "iptables -t nat $rule"; done'
  done
}

site() { ansible-playbook -i inventories/kube/hosts.yml playbooks/site.yml "$@" >/dev/null; }

site -e slinky_nodeaddr_sync=false; drop_pod_dnat
echo "neither (fix_nodeaddr once, at the end of site.yml): $(soak)"
site; drop_pod_dnat
echo "the sidecar only (every 2 s): $(soak)"
site
echo "the sidecar and the pod-slurmd DNAT on bare metal: $(soak)"
