#!/usr/bin/env bash
# NodeAddr fix for N pod workers: the module (one batched scontrol update, one Ansible task)
# versus a per-node loop like the thesis's script (one exec + scontrol update per node), in
# the same run and through the same transport (kubectl exec into the controller pod: the loop's
# execs, and the ctl host of inventories/kube for the module), on lab/kube's real slurmctld. The
# N nodes are dynamic node records (State=CLOUD) without daemons, deleted at the end.
# MaxNodeCount: the slurm.conf Slinky's operator writes has no setting of ours (operator v1.2.1
# writes MaxNodeCount=1024, internal/builder/controllerbuilder/controller_config.go; the model's
# slime_cluster.max_node_count only sizes the srun port range and does not reach the chart), so
# there is no slurm.conf to edit: N plus the cluster's nodes must fit the live MaxNodeCount, and
# a larger N is refused. Needs a converged lab/kube (run.sh leaves one). Measures; never asserts
# a limit.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-64}
# shellcheck source=benchmarks/lib.sh
. benchmarks/lib.sh
# PATH: the ctl host's connection (kubernetes.core.kubectl) runs the kubectl it finds there.
export PATH=$cache/k8s/bin:$PATH
last=$(printf 'bench%03d' "$n")
records="NodeName=bench[001-$(printf %03d "$n")]"
# Address i of a run: 10.X.(i / 250).(i % 250 + 1), X = 200 (loop), 201 (module), 202/203 (inside).
addr() { echo "10.$1.$(( $2 / 250 )).$(( $2 % 250 + 1 ))"; }

cleanup() { ctl scontrol delete "$records" >/dev/null 2>&1 || true; }
trap cleanup EXIT
cleanup
max=$(ctl scontrol show config | awk '$1 == "MaxNodeCount" { print $3 }')
have=$(ctl scontrol show node -o | grep -c '^NodeName=' || true)
if [ $(( n + have )) -gt "${max:?MaxNodeCount not read from slurmctld}" ]; then
  echo "nodeaddr: $n nodes and the cluster's $have exceed its MaxNodeCount=$max (set by Slinky's operator); not measured" >&2
  exit 1
fi
ctl scontrol create "$records" CPUs=1 State=CLOUD Feature=bench

t0=$(now)
for i in $(seq 1 "$n"); do
  ctl scontrol update "NodeName=$(printf 'bench%03d' "$i")" "NodeAddr=$(addr 200 "$i")"
done
t1=$(now)
loop=$(secs "$t0" "$t1" 2)
ctl scontrol show node -o "$last" | grep -q "NodeAddr=$(addr 200 "$n") " || { echo "loop did not apply" >&2; exit 1; }

t0=$(now)
ansible-playbook -i inventories/kube/hosts.yml benchmarks/nodeaddr.yml -e bench_count="$n" >/dev/null
t1=$(now)
module=$(secs "$t0" "$t1" 2)
ctl scontrol show node -o "$last" | grep -q "NodeAddr=$(addr 201 "$n") " || { echo "module did not apply" >&2; exit 1; }

t0=$(now)
ansible-playbook -i inventories/kube/hosts.yml benchmarks/nodeaddr.yml -e bench_count="$n" >/dev/null
t1=$(now)
again=$(secs "$t0" "$t1" 2)

# The same comparison without any exec or Ansible overhead: inside the controller's container,
# N scontrol updates versus the one batched update the module sends.
# shellcheck disable=SC2016  # the inner shell expands them
inner=$(ctl bash -c '
  n=$1; names=$(printf "bench%03d," $(seq 1 "$n"))
  addrs=$(for i in $(seq 1 "$n"); do printf "10.202.%d.%d," $((i / 250)) $((i % 250 + 1)); done)
  t0=$(date +%s.%N)
  for i in $(seq 1 "$n"); do scontrol update NodeName=$(printf "bench%03d" "$i") NodeAddr=10.203.$((i / 250)).$((i % 250 + 1)); done
  t1=$(date +%s.%N)
  scontrol update NodeName=${names%,} NodeAddr=${addrs%,}
  t2=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v c="$t2" "BEGIN { printf \"%.3f %.3f\", b - a, c - b }"' _ "$n")
# shellcheck disable=SC2086  # two timings, split on purpose
set -- $inner
echo "NodeAddr fix for $n nodes inside slurmctld's container: $n scontrol updates $1 s, one batched update $2 s ($(awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }')x)"
echo "NodeAddr fix for $n nodes: per-node loop $loop s, module $module s ($(awk -v a="$loop" -v b="$module" 'BEGIN { printf "%.1f", a / b }')x faster), module re-run with nothing to change $again s"
