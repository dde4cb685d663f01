# shellcheck shell=bash disable=SC2034
# (sourced, never executed) Settings of the real-Kubernetes lab (lab/kube/up.sh, down.sh).
# It uses the external network, bare-metal hosts, SSH key and network mode of lab/env.sh: the
# Kubernetes nodes sit on the external network beside the bare metal, as at a site; pods live
# in each node's podCIDR behind it.
# shellcheck source=lab/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
# The cluster's state (certificates, kubeconfig, node configuration): one directory per lab
# (kube, kube2); what the nodes run is built once for both.
KUBE_DIR=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/kube$LAB_SLOT
KUBE_BIN=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/k8s/bin
KUBE_IMAGES=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/kube/images
KUBE_KUBECONFIG=$KUBE_DIR/kubeconfig
KUBE_NODE_IMAGE=localhost/slime-kube/node:trixie
# The cluster's storage: one podman volume mounted on every node, as a site's network storage.
KUBE_PV_VOLUME=${LAB_CTR_PREFIX}slime-kube-pv
# name=address; the first is the control plane (and a node that runs pods too, as kind's).
# Three nodes because Slurm's pods publish the same hostPorts (6818, the srun range): at most
# one of the controller and the NodeSet pods per node. Their containers: lab_ctr NAME (lib.sh).
KUBE_NODES="kube-cp=$LAB_NET_PREFIX.30 kube-1=$LAB_NET_PREFIX.31 kube-2=$LAB_NET_PREFIX.32"
KUBE_API_IP=$LAB_NET_PREFIX.30
KUBE_SERVICE_CIDR=10.96.0.0/16
KUBE_API_SERVICE_IP=10.96.0.1
KUBE_DNS_IP=10.96.0.10
KUBE_CLUSTER_CIDR=10.244.0.0/16
