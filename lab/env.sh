# shellcheck shell=bash disable=SC2034
# (sourced, never executed; its variables are used by the scripts that source it)
# Shared settings of the hybrid lab (sourced by up.sh, down.sh and the benchmarks).
# Addresses are fixed because inventories/lab/ names them; change both together.
# The hybrid network mode the lab emulates: nat (default), routed or hostnetwork.
LAB_MODE=${SLIME_LAB_MODE:-nat}
LAB_CACHE=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/lab
LAB_POD_NET=slime-lab-pod
LAB_POD_CIDR=10.126.0.0/24
LAB_EXT_NET=slime-lab-ext
LAB_EXT_CIDR=10.127.0.0/24
LAB_K8SNODE_POD_IP=10.126.0.50
LAB_K8SNODE_EXT_IP=10.127.0.50      # the Kubernetes node that hosts the controller pod
LAB_CTL_IP=10.126.0.11              # controller pod IP when lab/up.sh starts it
LAB_NODEPORT=30017
LAB_SRUN_PORTS=60001:60100
LAB_IMAGE_SLURM=localhost/slime-slurm:lab
LAB_IMAGE_HOST=localhost/slime-host:lab
# The key Ansible logs in to bare-metal hosts with (made once by lab/lib.sh, lab_ssh_key).
LAB_SSH_KEY=$LAB_CACHE/ssh/id_ed25519
# Pod workers: name=pod-ip@node-ip. Each runs on its own "Kubernetes node" address of k8snode,
# which publishes its 6818 and srun range as hostPorts (one pod worker per node address).
LAB_PODS="pod-1=10.126.0.21@10.127.0.51 pod-2=10.126.0.22@10.127.0.52"
# Bare-metal hosts (external network): name=ip
LAB_BMS="bm-1=10.127.0.61 bm-2=10.127.0.62"
LAB_CONTAINERS="k8snode ctl pod-1 pod-2 bm-1 bm-2"
