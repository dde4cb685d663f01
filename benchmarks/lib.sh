# shellcheck shell=bash
# Sourced by the benchmarks, from the repository root (never executed): the lab's cluster
# (lab/kube) for Ansible and kubectl, a shell in its controller pod, and the timing helpers.
# shellcheck disable=SC2034  # read by the benchmarks that source this
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
# the cluster's kubeconfig and binaries as lab/kube/up.sh made them
# shellcheck source=lab/kube/env.sh
. lab/kube/env.sh
export ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_NOCOLOR=1 K8S_AUTH_KUBECONFIG=$KUBE_KUBECONFIG
kubectl() { "$KUBE_BIN/kubectl" --kubeconfig "$KUBE_KUBECONFIG" "$@"; }
# Slurm's commands in the controller pod's slurmctld container.
ctl() { kubectl -n slurm exec slurm-controller-0 -c slurmctld -- "$@"; }
now() { date +%s.%N; }
# secs T0 T1 [DIGITS]: seconds from T0 to T1 (now's format), DIGITS after the point (1).
secs() { awk -v a="$1" -v b="$2" -v d="${3:-1}" 'BEGIN { printf "%." d "f", b - a }'; }
# The sum of changed= over an ansible-playbook recap on stdin.
recap_changed() { grep -Eo 'changed=[0-9]+' | awk -F= '{ s += $2 } END { print s + 0 }'; }
# The median of the numbers on stdin, one a line.
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
