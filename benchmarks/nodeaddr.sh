#!/usr/bin/env bash
# NodeAddr fix for N pod workers: the module (one batched scontrol update, one Ansible task)
# versus a per-node loop like the thesis's script (one exec + scontrol update per node), in
# the same run and through the same transport (podman exec into the controller), on the lab's
# real slurmctld. The N nodes are dynamic node records (State=CLOUD) without daemons; when N
# and the lab's own nodes exceed the lab's MaxNodeCount (128), slurmctld is restarted with room
# for them and restored afterwards. Needs a running lab (lab/up.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-64}
export ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_NOCOLOR=1
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
last=$(printf 'bench%03d' "$n")
records="NodeName=bench[001-$(printf %03d "$n")]"
# Address i of a run: 10.X.(i / 250).(i % 250 + 1), X = 200 (loop), 201 (module), 202/203 (inside).
addr() { echo "10.$1.$(( $2 / 250 )).$(( $2 % 250 + 1 ))"; }

max_node_count() {  # set MaxNodeCount in the controller's slurm.conf and restart slurmctld
  podman exec ctl sed -i -E "s/^MaxNodeCount=.*/MaxNodeCount=$1/" /etc/slurm/slurm.conf
  podman exec ctl systemctl restart slurmctld
  for _ in $(seq 1 60); do podman exec ctl scontrol ping >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "slurmctld did not answer after MaxNodeCount=$1" >&2; return 1
}
lab_max=$(podman exec ctl sed -n -E 's/^MaxNodeCount=//p' /etc/slurm/slurm.conf)
cleanup() {
  podman exec ctl scontrol delete "$records" >/dev/null 2>&1 || true
  [ "$(podman exec ctl sed -n -E 's/^MaxNodeCount=//p' /etc/slurm/slurm.conf)" = "$lab_max" ] || max_node_count "$lab_max"
}
trap cleanup EXIT
podman exec ctl scontrol delete "$records" >/dev/null 2>&1 || true
[ $(( n + 16 )) -le "$lab_max" ] || max_node_count $(( n + 16 ))
podman exec ctl scontrol create "$records" CPUs=1 State=CLOUD Feature=bench

t0=$(now)
for i in $(seq 1 "$n"); do
  podman exec ctl scontrol update "NodeName=$(printf 'bench%03d' "$i")" "NodeAddr=$(addr 200 "$i")"
done
t1=$(now)
loop=$(secs "$t0" "$t1")
podman exec ctl scontrol show node -o "$last" | grep -q "NodeAddr=$(addr 200 "$n") " || { echo "loop did not apply" >&2; exit 1; }

t0=$(now)
ansible-playbook benchmarks/nodeaddr.yml -e bench_count="$n" >/dev/null
t1=$(now)
module=$(secs "$t0" "$t1")
podman exec ctl scontrol show node -o "$last" | grep -q "NodeAddr=$(addr 201 "$n") " || { echo "module did not apply" >&2; exit 1; }

t0=$(now)
ansible-playbook benchmarks/nodeaddr.yml -e bench_count="$n" >/dev/null
t1=$(now)
again=$(secs "$t0" "$t1")

# The same comparison without any exec or Ansible overhead: inside the controller,
# N scontrol updates versus the one batched update the module sends.
inner=$(podman exec ctl bash -c '
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
echo "NodeAddr fix for $n nodes inside slurmctld's host: $n scontrol updates $1 s, one batched update $2 s ($(awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }')x)"
echo "NodeAddr fix for $n nodes: per-node loop $loop s, module $module s ($(awk -v a="$loop" -v b="$module" 'BEGIN { printf "%.1f", a / b }')x faster), module re-run with nothing to change $again s"
