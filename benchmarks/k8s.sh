#!/usr/bin/env bash
# Kubernetes API tier figures: slinky role converge and idempotent re-run against the test
# API server (test charts), and the size of the cached test binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
changed() { grep -Eo 'changed=[0-9]+' | awk -F= '{ s += $2 } END { print s + 0 }'; }

./scripts/k8s-test-bins.sh >/dev/null
./scripts/k8s-test-cluster.sh down >/dev/null 2>&1 || true
./scripts/k8s-test-cluster.sh up >/dev/null
python tests/k8s/fake_kubelet.py "$cache/k8s/kubeconfig" >/dev/null 2>&1 &
kubelet=$!
trap 'kill $kubelet 2>/dev/null; ./scripts/k8s-test-cluster.sh down >/dev/null 2>&1' EXIT
export K8S_AUTH_KUBECONFIG=$cache/k8s/kubeconfig ANSIBLE_NOCOLOR=1
inv=$(mktemp -d)
cat >"$inv/hosts.yml" <<INV
all:
  hosts:
    k8s-api: {ansible_connection: local, ansible_python_interpreter: $(command -v python)}
  vars:
    slime_test_charts: $PWD/tests/k8s/charts
    slime_cluster: {name: bench, slurm_version: "26.05", controller: {host: slurm-controller-0, address: 10.244.0.10},
                    nodeport: {address: 192.0.2.10, port: 30017}, srun_port_range: 60001-60100}
INV
t0=$(now); out=$(ansible-playbook -i "$inv/hosts.yml" molecule/k8s/slinky_play.yml 2>&1); t1=$(now)
echo "slinky role converge against the test API server: $(secs "$t0" "$t1") s (changed=$(changed <<<"$out"))"
t0=$(now); out=$(ansible-playbook -i "$inv/hosts.yml" molecule/k8s/slinky_play.yml 2>&1); t1=$(now)
echo "slinky role idempotent re-run: $(secs "$t0" "$t1") s (changed=$(changed <<<"$out"))"
rm -rf "$inv"
echo "cached test binaries: $(du -shL "$cache/k8s/bin" | cut -f1) (kube-apiserver $(du -h "$cache/k8s/bin/kube-apiserver" | cut -f1), helm $(du -h "$cache/k8s/bin/helm" | cut -f1), etcd $(du -hL "$cache/k8s/bin/etcd" | cut -f1)); Go build cache $(du -sh "$cache/k8s/go" 2>/dev/null | cut -f1)"
