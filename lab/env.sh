# shellcheck shell=bash disable=SC2034
# (sourced, never executed; its variables are used by the scripts that source it)
# Shared settings of the lab's bare-metal hosts (lib.sh, host.sh) and of the real-Kubernetes lab
# beside them (kube/env.sh). Addresses are fixed because inventories/kube/ names them; change both
# together.
# The network mode the cluster's pod network is built for: nat (default), routed or hostnetwork.
LAB_MODE=${SLIME_LAB_MODE:-nat}
LAB_CACHE=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/lab
# Four labs can run side by side on one machine (make test runs routed mode in the second, the
# faults and scaling in the third and OpenShift mode in the fourth, beside the nat mission in the
# first): SLIME_LAB_SLOT unset for the lab, 2, 3 or 4 for the others. Each has its own network,
# addresses (10.127.0.x, 10.127.2.x, ...), container names (lab2-, lab3-, lab4-; the hosts' own
# names are the same) and cluster state (kube/env.sh).
LAB_SLOT=${SLIME_LAB_SLOT:-}
case "$LAB_SLOT" in ""|2|3|4) ;; *)
  echo "lab: SLIME_LAB_SLOT=$LAB_SLOT is not one of: unset (the lab), 2, 3 or 4 (the other labs)" >&2; exit 2 ;;
esac
# How long the lab waits for each of its parts (a container to boot, the API server, a node's
# podCIDR, the nodes Ready, CoreDNS), in seconds: seconds on an idle machine, minutes on a 2-core
# one running four labs (make test). Only a part that never comes fails, and it fails after this.
LAB_WAIT=${SLIME_LAB_WAIT:-600}
LAB_NET_PREFIX=10.127.${LAB_SLOT:-0}
LAB_CTR_PREFIX=${LAB_SLOT:+lab$LAB_SLOT-}
# The label of the lab's bare-metal host containers (lib.sh lab_run; down.sh removes by it).
LAB_SLOT_LABEL=slime-lab-slot=${LAB_SLOT:-1}
# The external network: the Kubernetes nodes and the bare-metal hosts, as at a site.
LAB_EXT_NET=slime-lab-ext$LAB_SLOT
LAB_EXT_CIDR=$LAB_NET_PREFIX.0/24
LAB_IMAGE_HOST=localhost/slime-host:lab
# The key Ansible logs in to bare-metal hosts with (made once by lab/lib.sh, lab_ssh_key).
LAB_SSH_KEY=$LAB_CACHE/ssh/id_ed25519
# Bare-metal hosts (external network): name=ip. lab/host.sh adds more, from .63 up.
LAB_BMS="bm-1=$LAB_NET_PREFIX.61 bm-2=$LAB_NET_PREFIX.62"
