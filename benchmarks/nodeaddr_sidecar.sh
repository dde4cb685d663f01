#!/usr/bin/env bash
# What the NodeAddr sidecar costs at N nodes (network_mode nat): each interval it reads every node
# once (`scontrol --oneliner show node`) and runs its awk over the text. Timed inside the sidecar's
# container (mean of 5), with N dynamic node records (State=CLOUD, no daemons; deleted at the
# end) beside the cluster's own; N plus those must fit the live MaxNodeCount (Slinky's operator
# writes 1024). Also the time for slurmctld to answer one batched update of N NodeAddrs, the
# sidecar's write when every node drifted at once (after a slurmctld restart). Needs a converged
# lab/kube with the sidecar (network_mode nat). Measures; never asserts a limit.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
# shellcheck source=benchmarks/lib.sh
. benchmarks/lib.sh
records="NodeName=side[0001-$(printf %04d "$n")]"
cleanup() { ctl scontrol delete "$records" >/dev/null 2>&1 || true; }
trap cleanup EXIT
cleanup
ctl scontrol create "$records" CPUs=1 State=CLOUD Feature=bench
total=$(ctl scontrol show node -o | grep -c '^NodeName=')
# shellcheck disable=SC2016  # the container's shell expands them
read -r read_s bytes update_s < <(kubectl -n slurm exec slurm-controller-0 -c slime-nodeaddr -- bash -c '
  n=$1; t0=$(date +%s.%N)
  for _ in 1 2 3 4 5; do bytes=$(scontrol --oneliner show node | wc -c); done
  t1=$(date +%s.%N)
  names=$(printf "side%04d," $(seq 1 "$n")); addrs=$(for i in $(seq 1 "$n"); do printf "10.204.%d.%d," $((i / 250)) $((i % 250 + 1)); done)
  t2=$(date +%s.%N); scontrol update NodeName=${names%,} NodeAddr=${addrs%,}; t3=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v n="$bytes" "BEGIN { printf \"%.3f %d %.3f\\n\", (b - a) / 5, n, d - c }"' _ "$n")
echo "NodeAddr sidecar at $total nodes: one read (scontrol --oneliner show node) $read_s s, $bytes bytes; one batched update of $n NodeAddrs $update_s s"
