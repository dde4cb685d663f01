# shellcheck shell=bash disable=SC2034
# (sourced, never executed) Settings of the real-Kubernetes lab (lab/kube/up.sh, down.sh).
# It uses the external network, bare-metal hosts, SSH key and network mode of lab/env.sh: the
# Kubernetes nodes sit on the external network beside the bare metal, as at a site; pods live
# in each node's podCIDR behind it.
# shellcheck source=lab/env.sh
. "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
KUBE_DIR=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/kube
KUBE_BIN=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/k8s/bin
KUBE_IMAGES=$KUBE_DIR/images
KUBE_KUBECONFIG=$KUBE_DIR/kubeconfig
KUBE_NODE_IMAGE=localhost/slime-kube/node:trixie
# The cluster's storage: one podman volume mounted on every node, as a site's network storage.
KUBE_PV_VOLUME=slime-kube-pv
# name=address; the first is the control plane (and a node that runs pods too, as kind's).
# Three nodes because Slurm's pods publish the same hostPorts (6818, the srun range): at most
# one of the controller and the NodeSet pods per node.
KUBE_NODES="kube-cp=10.127.0.30 kube-1=10.127.0.31 kube-2=10.127.0.32"
KUBE_API_IP=10.127.0.30
KUBE_SERVICE_CIDR=10.96.0.0/16
KUBE_API_SERVICE_IP=10.96.0.1
KUBE_DNS_IP=10.96.0.10
KUBE_CLUSTER_CIDR=10.244.0.0/16
