#!/usr/bin/env bash
# NodeAddr fix for N pod workers: the module (one batched scontrol update, one Ansible task)
# versus a per-node loop like the thesis's script (one exec + scontrol update per node), in
# the same run, on the lab's real slurmctld. The N nodes are dynamic node records (State=CLOUD)
# without daemons. Needs a running lab (lab/up.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-64}
export ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_NOCOLOR=1
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
last=$(printf 'bench%03d' "$n")

podman exec ctl scontrol delete "NodeName=bench[001-$(printf %03d "$n")]" >/dev/null 2>&1 || true
podman exec ctl scontrol create "NodeName=bench[001-$(printf %03d "$n")]" CPUs=1 State=CLOUD Feature=bench
trap 'podman exec ctl scontrol delete "NodeName=bench[001-$(printf %03d "$n")]" >/dev/null 2>&1 || true' EXIT

t0=$(now)
for i in $(seq 1 "$n"); do
  podman exec ctl scontrol update "NodeName=$(printf 'bench%03d' "$i")" "NodeAddr=10.200.0.$i"
done
t1=$(now)
loop=$(secs "$t0" "$t1")
podman exec ctl scontrol show node -o "$last" | grep -q "NodeAddr=10.200.0.$n " || { echo "loop did not apply" >&2; exit 1; }

t0=$(now)
ansible-playbook benchmarks/nodeaddr.yml -e bench_count="$n" >/dev/null
t1=$(now)
module=$(secs "$t0" "$t1")
podman exec ctl scontrol show node -o "$last" | grep -q "NodeAddr=10.201.0.$n " || { echo "module did not apply" >&2; exit 1; }

t0=$(now)
ansible-playbook benchmarks/nodeaddr.yml -e bench_count="$n" >/dev/null
t1=$(now)
again=$(secs "$t0" "$t1")

# The same comparison without any exec or Ansible overhead: inside the controller,
# N scontrol updates versus the one batched update the module sends.
inner=$(podman exec ctl bash -c '
  n=$1; names=$(printf "bench%03d," $(seq 1 "$n")); addrs=$(printf "10.202.0.%d," $(seq 1 "$n"))
  t0=$(date +%s.%N)
  for i in $(seq 1 "$n"); do scontrol update NodeName=$(printf "bench%03d" "$i") NodeAddr=10.203.0.$i; done
  t1=$(date +%s.%N)
  scontrol update NodeName=${names%,} NodeAddr=${addrs%,}
  t2=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v c="$t2" "BEGIN { printf \"%.3f %.3f\", b - a, c - b }"' _ "$n")
# shellcheck disable=SC2086  # two timings, split on purpose
set -- $inner
echo "NodeAddr fix for $n nodes inside slurmctld's host: $n scontrol updates $1 s, one batched update $2 s ($(awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }')x)"
echo "NodeAddr fix for $n nodes: per-node loop $loop s, module $module s ($(awk -v a="$loop" -v b="$module" 'BEGIN { printf "%.1f", a / b }')x faster), module re-run with nothing to change $again s"
