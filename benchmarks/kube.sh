#!/usr/bin/env bash
# Figures for the real-Kubernetes lab (lab/kube) and `make demo` on it, one line each: cluster up,
# site.yml's first run (and its NodeAddr stage), its re-run against an empty play over the same
# hosts, srun across pods and metal. benchmarks/run.sh starts with these. Measures; never asserts
# a limit. Run through make (PATH, SLIME_CACHE, the collection): make bench-kube
#   BENCH_COLD=1  from nothing: the Go build and module caches, every image and the debootstrap
#                 tarballs are removed first (tens of minutes).
# Leaves the cluster converged (lab/kube/down.sh removes it).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=benchmarks/lib.sh
. benchmarks/lib.sh

./lab/kube/down.sh >/dev/null
if [ "${BENCH_COLD:-0}" = 1 ]; then
  podman rmi -af >/dev/null 2>&1 || true
  chmod -R u+w "$cache/k8s/go" 2>/dev/null || true
  rm -rf "$cache/k8s" "$cache/kube" "$cache/charts" "$cache"/*-minbase.tar
  t0=$(now); ./tests/k8s/k8s-test-bins.sh >/dev/null 2>&1; t1=$(now)
  echo "Go binaries in one build (control plane, kubelet, kube-proxy, kubectl, helm, kwok, operator, webhook, CoreDNS, cert-manager): $(secs "$t0" "$t1") s"
  t0=$(now); ./lab/kube/cert-manager-chart.sh >/dev/null 2>&1; t1=$(now)
  echo "cert-manager's chart: $(secs "$t0" "$t1") s"
  t0=$(now); ./lab/build-image.sh >/dev/null 2>&1; ./lab/kube/images.sh --require-all >/dev/null 2>&1; t1=$(now)
  echo "images (debootstrap, bare host, Slinky's containers, the others): $(secs "$t0" "$t1") s"
fi

t0=$(now); ./lab/kube/up.sh >/dev/null 2>&1; t1=$(now)
echo "cluster up (3 nodes, CoreDNS, 2 bare hosts; builds cached): $(secs "$t0" "$t1") s"

# The first run without its last stage (the pod workers' NodeAddr), to read what they registered
# with, then that stage alone.
nodeaddr() {
  kubectl -n slurm exec slurm-controller-0 -c slurmctld -- scontrol show node -o \
    | awk '{ n = a = ""; for (i = 1; i <= NF; i++) { if ($i ~ /^NodeName=/) n = substr($i, 10); if ($i ~ /^NodeAddr=/) a = substr($i, 10) } print n "=" a }' \
    | sort | tr '\n' ' '
}
t0=$(now); out=$(ansible-playbook -i inventories/kube/hosts.yml playbooks/site.yml --skip-tags nodeaddr 2>&1); t1=$(now)
first=$(secs "$t0" "$t1")
ctl_ready=$(kubectl -n slurm get pod slurm-controller-0 -o jsonpath='{.status.conditions[?(@.type=="Ready")].lastTransitionTime}')
first_worker=$(kubectl -n slurm get pods -l app.kubernetes.io/name=slurmd -o jsonpath='{.items[*].metadata.creationTimestamp}' | tr ' ' '\n' | sort | head -1)
before=$(nodeaddr)
t0=$(now); out2=$(ansible-playbook -i inventories/kube/hosts.yml playbooks/fix_nodeaddr.yml 2>&1); t1=$(now)
echo "site.yml first run (cert-manager, operator, slurm chart, 2 bare-metal workers): $first s (changed=$(recap_changed <<<"$out")), its NodeAddr stage: $(secs "$t0" "$t1") s (changed=$(recap_changed <<<"$out2"))"
echo "first NodeSet pod created $(( $(date -d "$first_worker" +%s) - $(date -d "$ctl_ready" +%s) )) s after the controller pod was ready (the operator's reconcile backoff)"
echo "pods: $(kubectl -n slurm get pods -l app.kubernetes.io/name=slurmd -o jsonpath='{range .items[*]}{.spec.hostname} pod IP {.status.podIP} on node {.status.hostIP}; {end}')"
echo "NodeAddr as registered: $before"
echo "NodeAddr after fix_nodeaddr: $(nodeaddr)"

# The idempotent re-run against what Ansible costs anyway over the same hosts (benchmarks/empty.yml:
# one ping per host site.yml runs on), 3 pairs back to back, wall and CPU-seconds (benchmarks/rerun.sh).
./benchmarks/rerun.sh | tail -1

t0=$(now); kubectl -n slurm exec slurm-controller-0 -c slurmctld -- timeout 60 srun -N4 hostname >/dev/null; t1=$(now)
echo "srun -N4 across pods and metal from the controller pod: $(secs "$t0" "$t1") s"
t0=$(now); podman exec bm-1 timeout 60 srun -N4 hostname >/dev/null; t1=$(now)
echo "srun -N4 across pods and metal from bare-metal host bm-1: $(secs "$t0" "$t1") s"
