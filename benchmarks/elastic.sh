#!/usr/bin/env bash
# Figures of the elastic bare-metal side, on a converged lab/kube (run.sh leaves one). Measures;
# never asserts a limit. Inventory: inventories/kube plus the hosts added here; a run limited to
# some hosts takes localhost (the Kubernetes API host, where cluster_facts.yml reads the
# controller's address and slurm.key) too, and site.yml only its bare-metal stage (--tags baremetal).
# 1. Rolling upgrade (playbooks/upgrade.yml): Debian trixie hosts (slurmd 24.11) taken to forky's
#    26.05, one batch of 1 host and one batch of 2: seconds per batch, and the idempotent re-run.
# 2. Autoscaling (extensions/eda/rulebooks/autoscale.yml run by ansible-rulebook, pool [bm-3],
#    idle_time BENCH_IDLE s, default 20; Slurm's commands through kubectl exec into the controller
#    pod): seconds from a bare-metal job waiting for a node to it running on a host the rulebook
#    added, and from the queue empty to that host released.
# The hosts it adds (bm-t, bm-u, bm-v, bm-3) are removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=benchmarks/lib.sh
. benchmarks/lib.sh
idle=${BENCH_IDLE:-20}
work=$(mktemp -d)
pid=
cleanup() {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  for h in bm-t bm-u bm-v bm-3; do ./lab/host.sh remove "$h" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# inventory FILE [VARS]: the extra hosts (name=ip) of $hosts in slurm_baremetal, each with the
# host variables VARS too (YAML flow mapping entries).
inventory() {
  { echo "all: {children: {slurm_baremetal: {hosts: {"
    for pair in $hosts; do echo "  ${pair%%=*}: {lab_address: ${pair#*=}${2:+, $2}},"; done
    echo "}}}}"; } >"$1"
}
mirror=${SLIME_DEBIAN_MIRROR:-http://deb.debian.org/debian}

# 1. Rolling upgrade.
hosts="bm-t=10.127.0.70 bm-u=10.127.0.71 bm-v=10.127.0.72"
for pair in $hosts; do ./lab/host.sh add "${pair%%=*}" "${pair#*=}" trixie >/dev/null; done
inventory "$work/trixie.yml"
ansible-playbook -i inventories/kube/hosts.yml -i "$work/trixie.yml" playbooks/site.yml --tags baremetal \
  --limit bm-t,bm-u,bm-v,localhost >/dev/null
inventory "$work/upgrade.yml" "slurm_node_worker: {apt_repository: 'deb $mirror forky main'}"
t0=$(now)
ansible-playbook -i inventories/kube/hosts.yml -i "$work/upgrade.yml" playbooks/upgrade.yml --limit bm-t,localhost >/dev/null
t1=$(now)
echo "rolling upgrade 24.11 -> 26.05, a batch of 1 host: $(secs "$t0" "$t1") s (whole run: check of the host, drain, upgrade, restart, resume)"
t0=$(now)
ansible-playbook -i inventories/kube/hosts.yml -i "$work/upgrade.yml" playbooks/upgrade.yml --limit bm-u,bm-v,localhost \
  -e slime_upgrade_batch=2 >/dev/null
t1=$(now)
echo "rolling upgrade 24.11 -> 26.05, a batch of 2 hosts: $(secs "$t0" "$t1") s"
echo "  slurmctld lists: $(ctl sinfo -h -N -n bm-t,bm-u,bm-v -o '%N %t %v' | paste -sd,)"
t0=$(now)
out=$(ansible-playbook -i inventories/kube/hosts.yml -i "$work/upgrade.yml" playbooks/upgrade.yml 2>&1)
t1=$(now)
echo "upgrade.yml again over 5 hosts at the target: $(secs "$t0" "$t1") s (changed=$(recap_changed <<<"$out"))"
for h in bm-t bm-u bm-v; do ./lab/host.sh remove "$h" >/dev/null; done

# 2. Autoscaling.
hosts="bm-3=10.127.0.63"
./lab/host.sh add bm-3 10.127.0.63 >/dev/null
mkdir -p "$work/inventory"
cp -r inventories/kube/hosts.yml inventories/kube/group_vars "$work/inventory/"
inventory "$work/inventory/bm-3.yml"
ansible-playbook -i "$work/inventory" playbooks/site.yml --tags baremetal --limit bm-3,localhost >/dev/null
printf '%s\n' "slime_autoscale_command: ['$KUBE_BIN/kubectl', --kubeconfig, '$KUBE_KUBECONFIG', -n, slurm, exec, slurm-controller-0, -c, slurmctld, --]" \
  "slime_autoscale_hosts: [bm-3]" \
  "slime_autoscale_interval: 2" "slime_autoscale_cooldown: 10" "slime_autoscale_idle_time: $idle" >"$work/vars.yml"
setsid ansible-rulebook -v -r extensions/eda/rulebooks/autoscale.yml -i "$work/inventory" --vars "$work/vars.yml" \
  </dev/null >"$work/rulebook.log" 2>&1 &
pid=$!
gone() { [[ $(ctl scontrol show node bm-3 2>&1) == *"not found"* ]]; }
until gone; do sleep 1; done     # idle bm-3 released first
jobs=$(for _ in 1 2 3; do ctl sbatch --parsable --exclusive -N1 --constraint=baremetal -o /dev/null --wrap 'sleep 45'; done | paste -sd,)
until [ "$(ctl squeue -h -j "$jobs" -t RUNNING | wc -l)" = 2 ]; do sleep 0.5; done
waiting=$(ctl squeue -h -j "$jobs" -t PENDING -o %i)
t0=$(now)
until [ "$(ctl squeue -h -j "$waiting" -o '%T|%N')" = 'RUNNING|bm-3' ]; do sleep 0.5; done
t1=$(now)
echo "autoscale: a bare-metal job waiting for a node -> running on the host the rulebook added: $(secs "$t0" "$t1") s"
until [ -z "$(ctl squeue -h -j "$jobs")" ]; do sleep 0.5; done
t0=$(now)
until gone; do sleep 0.5; done
t1=$(now)
echo "autoscale: queue empty -> host released (idle_time $idle s): $(secs "$t0" "$t1") s"
echo "autoscale: decisions: $(grep -c 'slurm_queue: scale_out' "$work/rulebook.log") scale-out, $(grep -c 'slurm_queue: scale_in' "$work/rulebook.log") scale-in; jobs: $(for j in ${jobs//,/ }; do ctl scontrol show job -o "$j" | grep -Eo 'JobState=[A-Z]+|Restarts=[0-9]+' | paste -sd' '; done | sort | uniq -c | sed 's/^ *//' | paste -sd,)"
