#!/usr/bin/env bash
# Kubernetes tier figures on the real control plane of tests/k8s/k8s-test-cluster.sh (API server,
# controller-manager, scheduler, kwok, Slinky's operator v1.2.1 and its charts, real Slurm
# daemons for the Slinky pods): slinky role converge and idempotent re-run, the time until the
# operator's pods are Running and their Slurm nodes idle, the objects the operator created,
# and the size of the cached binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
changed() { grep -Eo 'changed=[0-9]+' | awk -F= '{ s += $2 } END { print s + 0 }'; }

./tests/k8s/k8s-test-bins.sh >/dev/null
charts=$(./tests/k8s/slinky-charts.sh 2>/dev/null)
./tests/k8s/k8s-test-cluster.sh down >/dev/null 2>&1 || true
./tests/k8s/k8s-test-cluster.sh up >/dev/null
trap './tests/k8s/k8s-test-cluster.sh down >/dev/null 2>&1' EXIT
export K8S_AUTH_KUBECONFIG=$cache/k8s/kubeconfig ANSIBLE_NOCOLOR=1
inv=$(mktemp -d)
cat >"$inv/hosts.yml" <<INV
all:
  hosts:
    k8s-api: {ansible_connection: local, ansible_python_interpreter: $(command -v python)}
  vars:
    slime_test_charts: $charts
    slinky_install_cert_manager: false
    slinky_operator_values: {webhook: {enabled: false}}
    slinky_nodesets: {slinky: {replicas: 2}}
    slinky_slurm_values:
      configFiles: {cgroup.conf: "CgroupPlugin=disabled\n"}
      controller: {extraConfMap: {ProctrackType: proctrack/linuxproc, TaskPlugin: task/affinity}}
    slime_cluster: {name: bench, slurm_version: "26.05", controller: {host: slurm-controller-0, address: 10.244.0.10},
                    nodeport: {address: 192.0.2.10, port: 30017}, srun_port_range: 60001-60100}
INV
python - "$cache/k8s/kubeconfig" <<'PY' >/dev/null
import sys, kubernetes
kubernetes.config.load_kube_config(sys.argv[1])
kubernetes.client.CoreV1Api().create_persistent_volume({"apiVersion": "v1", "kind": "PersistentVolume",
    "metadata": {"name": "bench-state"}, "spec": {"capacity": {"storage": "4Gi"}, "accessModes": ["ReadWriteOnce"],
    "hostPath": {"path": "/var/lib/bench-state"}}})
PY
t0=$(now); out=$(ansible-playbook -i "$inv/hosts.yml" molecule/k8s/slinky_play.yml 2>&1); t1=$(now)
echo "slinky role converge on the real control plane: $(secs "$t0" "$t1") s (changed=$(changed <<<"$out"))"
for _ in $(seq 120); do
  [ "$(podman exec slime-k8s-slurmctld sinfo -h -N -t idle -o %N 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 1
done
t2=$(now)
echo "until both NodeSet pods run and their Slurm nodes are idle: $(secs "$t0" "$t2") s after the converge started"
t0=$(now); out=$(ansible-playbook -i "$inv/hosts.yml" molecule/k8s/slinky_play.yml 2>&1); t1=$(now)
echo "slinky role idempotent re-run: $(secs "$t0" "$t1") s (changed=$(changed <<<"$out"))"
python - "$cache/k8s/kubeconfig" <<'PY'
import collections, sys, kubernetes
kubernetes.config.load_kube_config(sys.argv[1])
client = kubernetes.dynamic.DynamicClient(kubernetes.client.ApiClient())
SLINKY = {"Controller", "NodeSet", "RestApi", "LoginSet", "Accounting", "Token"}
made = {"operator": collections.Counter(), "controllers": collections.Counter()}
for api, kind in (("v1", "Pod"), ("v1", "Service"), ("v1", "ConfigMap"), ("v1", "Secret"), ("apps/v1", "StatefulSet"),
                  ("apps/v1", "Deployment"), ("apps/v1", "ReplicaSet"), ("policy/v1", "PodDisruptionBudget"),
                  ("v1", "PersistentVolumeClaim"), ("apps/v1", "ControllerRevision")):
    for obj in client.resources.get(api_version=api, kind=kind).get(namespace="slurm").items:
        owners = {ref.kind for ref in (obj.metadata.ownerReferences or [])}
        if owners & SLINKY:
            made["operator"][kind] += 1
        elif owners:
            made["controllers"][kind] += 1
for who, kinds in made.items():
    print("objects in namespace slurm owned by the %s: %s (%d)"
          % ("operator's Slinky objects" if who == "operator" else "Kubernetes controllers",
             ", ".join("%s %d" % item for item in sorted(kinds.items())), sum(kinds.values())))
PY
rm -rf "$inv"
echo "cached binaries: $(du -shL "$cache/k8s/bin" | cut -f1) ($(cd "$cache/k8s/bin" && for b in kube-apiserver kube-controller-manager kube-scheduler kwok helm slurm-operator; do printf '%s %s, ' "$b" "$(du -h "$b" | cut -f1)"; done)etcd $(du -hL "$cache/k8s/bin/etcd" | cut -f1)); Go build cache $(du -sh "$cache/k8s/go" 2>/dev/null | cut -f1)"
