#!/usr/bin/env bash
# Figures for the hybrid cluster on the real-Kubernetes lab (lab/kube), one line each. Measures;
# never asserts a limit. Run through make (PATH, SLIME_CACHE, the collection): make bench
#   BENCH_COLD=1  from nothing (passed to benchmarks/kube.sh: builds, images, debootstrap).
# 1. benchmarks/kube.sh: cluster up, site.yml first run and its NodeAddr stage, the re-run against
#    an empty play over the same hosts, one srun across pods and metal.
# 2. On the cluster it leaves: slurmd start -> IDLE on a bare-metal host, srun launch latency.
# 3. growth, scale_in, elastic, nodeaddr (64 and 256 nodes), the NodeAddr sidecar at 1,000 nodes and
#    the soak without and with it, modes (a cluster per network mode),
#    bmc_preflight.
# Leaves the cluster converged in network mode nat (lab/kube/down.sh removes it).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=benchmarks/lib.sh
. benchmarks/lib.sh


./benchmarks/kube.sh

# slurmd start -> IDLE: a fresh registration of a dynamic node (its record deleted first). Each
# poll of slurmctld is one kubectl exec into the controller pod.
total=0; runs=3
for _ in $(seq "$runs"); do
  podman exec bm-1 systemctl stop slurmd
  ctl scontrol delete nodename=bm-1
  t0=$(now)
  podman exec bm-1 systemctl start --no-block slurmd
  until ctl sinfo -h -n bm-1 -o %T 2>/dev/null | grep -qx idle; do sleep 0.1; done
  t1=$(now)
  total=$(awk -v t="$total" -v d="$(secs "$t0" "$t1")" 'BEGIN { print t + d }')
done
echo "slurmd start -> IDLE (mean of $runs): $(awk -v t="$total" -v n="$runs" 'BEGIN { printf "%.1f", t / n }') s"

# srun launch latency from a bare-metal host: across the hybrid cluster vs bare metal only.
srun_mean() { # runs args...
  local runs=$1; shift
  local t0 t1
  t0=$(now)
  for _ in $(seq "$runs"); do podman exec bm-1 srun "$@" hostname >/dev/null; done
  t1=$(now)
  awk -v a="$t0" -v b="$t1" -v n="$runs" 'BEGIN { printf "%.3f", (b - a) / n }'
}
pods=$(kubectl -n slurm get pods -l app.kubernetes.io/name=slurmd -o name | wc -l)
ctl scontrol show node -o >/dev/null
hybrid=$(srun_mean 10 -N$((pods + 2)))
bare=$(srun_mean 10 -N2 --constraint=baremetal)
echo "srun launch from bm-1 (mean of 10, incl. podman exec): $pods pod + 2 bare-metal $hybrid s, 2 bare-metal $bare s"

./benchmarks/growth.sh
./benchmarks/scale_in.sh
./benchmarks/elastic.sh
./benchmarks/nodeaddr.sh 64
./benchmarks/nodeaddr.sh 256
./benchmarks/nodeaddr_sidecar.sh 1000
./benchmarks/nodeaddr_soak.sh
./benchmarks/modes.sh
./benchmarks/bmc_preflight.sh
