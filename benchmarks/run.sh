#!/usr/bin/env bash
# Figures for the hybrid lab, one line each. Measures; never asserts a limit.
#   BENCH_COLD=1  also rebuild the lab images from debootstrap (lab bring-up "from nothing").
# Leaves a converged lab running (lab/down.sh removes it).
set -euo pipefail
cd "$(dirname "$0")/.."
. lab/env.sh
export ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_NOCOLOR=1

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
recap_changed() { grep -Eo 'changed=[0-9]+' | awk -F= '{ s += $2 } END { print s + 0 }'; }

./lab/down.sh >/dev/null
if [ "${BENCH_COLD:-0}" = 1 ]; then
  rm -f "${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/forky-minbase.tar"   # from nothing: debootstrap too
  t0=$(now); ./lab/build-image.sh --force >/dev/null 2>&1; t1=$(now)
  echo "lab images from debootstrap: $(secs "$t0" "$t1") s"
fi
t0=$(now); ./lab/up.sh >/dev/null 2>&1; t1=$(now)
echo "lab bring-up (images cached): $(secs "$t0" "$t1") s"

t0=$(now); out=$(ansible-playbook playbooks/site.yml 2>&1); t1=$(now)
echo "first converge, 2 bare-metal workers: $(secs "$t0" "$t1") s (changed=$(recap_changed <<<"$out"))"

# Idempotent re-run of site.yml against what Ansible costs anyway over the same hosts (an
# empty play: one ping per bare-metal host), measured back to back.
t0=$(now); ansible-playbook benchmarks/empty.yml >/dev/null 2>&1; t1=$(now)
empty=$(secs "$t0" "$t1")
t0=$(now); out=$(ansible-playbook playbooks/site.yml 2>&1); t1=$(now)
rerun=$(secs "$t0" "$t1")
echo "idempotent re-run of site.yml, 2 bare-metal workers: $rerun s (changed=$(recap_changed <<<"$out")) vs empty play over the same hosts: $empty s ($(awk -v a="$rerun" -v b="$empty" 'BEGIN { printf "%.1f", a / b }')x)"

# slurmd start -> IDLE: a fresh registration of a dynamic node (its record deleted first).
total=0; runs=3
for _ in $(seq "$runs"); do
  podman exec bm-1 systemctl stop slurmd
  podman exec ctl scontrol delete nodename=bm-1
  t0=$(now)
  podman exec bm-1 systemctl start --no-block slurmd
  until podman exec ctl sinfo -h -n bm-1 -o %T 2>/dev/null | grep -qx idle; do sleep 0.1; done
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
podman exec ctl scontrol show node -o >/dev/null
hybrid=$(srun_mean 10 -N4)
bare=$(srun_mean 10 -N2 --constraint=baremetal)
echo "srun launch from bm-1 (mean of 10, incl. podman exec): 2 pod + 2 bare-metal $hybrid s, 2 bare-metal $bare s"

./benchmarks/growth.sh
./benchmarks/scale_in.sh
./benchmarks/elastic.sh
./benchmarks/nodeaddr.sh 64
./benchmarks/nodeaddr.sh 256
./benchmarks/modes.sh
./benchmarks/kube.sh
./benchmarks/bmc_preflight.sh
