# shellcheck shell=bash disable=SC2034
# (sourced, never executed; its variables are used by the scripts that source it)
# Shared settings of the lab's bare-metal hosts (lib.sh, host.sh) and of the real-Kubernetes lab
# beside them (kube/env.sh). Addresses are fixed because inventories/kube/ names them; change both
# together.
# The network mode the cluster's pod network is built for: nat (default), routed or hostnetwork.
LAB_MODE=${SLIME_LAB_MODE:-nat}
LAB_CACHE=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/lab
# The external network: the Kubernetes nodes and the bare-metal hosts, as at a site.
LAB_EXT_NET=slime-lab-ext
LAB_EXT_CIDR=10.127.0.0/24
LAB_IMAGE_HOST=localhost/slime-host:lab
# The key Ansible logs in to bare-metal hosts with (made once by lab/lib.sh, lab_ssh_key).
LAB_SSH_KEY=$LAB_CACHE/ssh/id_ed25519
# Bare-metal hosts (external network): name=ip. lab/host.sh adds more, from .63 up.
LAB_BMS="bm-1=10.127.0.61 bm-2=10.127.0.62"
