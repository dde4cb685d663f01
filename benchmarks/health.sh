#!/usr/bin/env bash
# Health checks on the lab (docs/howto-health.md): seconds from a failure on a bare-metal worker to
# its node drained by the health check, from the failure's end to the node back idle, and from
# slurmd gone (a hung host, as slurmctld sees one) to the node DOWN, to what the remediation then
# decides for it (playbooks/remediate.yml; the lab's hosts are SSH-only, so it reports them). Runs
# N rounds (HEALTH_ROUNDS, default 3) on bm-2. The power-cycle through Metal3 is timed by molecule
# metal3's verify ("node-0 power-cycled and provisioned again N s after the annotation").
# Needs a converged lab/kube (make demo). Measures; never asserts a limit.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=benchmarks/lib.sh
. benchmarks/lib.sh
rounds=${HEALTH_ROUNDS:-3}
bm=$(lab_ctr bm-2 2>/dev/null || echo bm-2)
state() { ctl sinfo --noheader --Node --nodes bm-2 --format '%T|%E'; }
wait_for() { until state | grep -Eq "$1"; do sleep 0.5; done; }
trap 'podman exec "$bm" sh -c "grep -q \"^slime-health-bench /tmp \" /proc/mounts && umount /tmp; systemctl start slurmd" >/dev/null 2>&1 || true' EXIT
echo "HealthCheckInterval: $(ctl scontrol show config | awk '/^HealthCheckInterval/ { print $3, $4 }')"
for round in $(seq "$rounds"); do
  wait_for '^idle\|'
  podman exec "$bm" mount -t tmpfs -o size=16m slime-health-bench /tmp
  t0=$(now); wait_for '^drained\|slime-health: /tmp has'; t1=$(now)
  podman exec "$bm" umount /tmp
  t2=$(now); wait_for '^idle\|none$'; t3=$(now)
  echo "round $round: /tmp full -> drained $(secs "$t0" "$t1") s; freed -> idle $(secs "$t2" "$t3") s"
done
podman exec "$bm" systemctl stop slurmd
t0=$(now); wait_for '^down'; t1=$(now)
echo "slurmd stopped -> DOWN $(secs "$t0" "$t1") s ($(state))"
ansible-playbook -i inventories/kube/hosts.yml playbooks/remediate.yml -e metal3_hosts_remediation_grace=0 \
  | tr -s ' \n' ' ' | grep -Eo 'bm-2: [a-z]+ - [^"]*not touched' || true
podman exec "$bm" systemctl start slurmd
t2=$(now); wait_for '^idle\|'; t3=$(now)
echo "slurmd started -> idle $(secs "$t2" "$t3") s"
# A power-cycle as remediation makes one, with the host's container restarted for the BMC's reset:
# the drain with remediation's reason, the restart, then remediate.yml runs until it resumes the node
# (it waits while slurmctld's record still shows the slurmd from before the restart).
ctl scontrol update NodeName=bm-2 State=DRAIN Reason="slime-remediation: power-cycle 1 of 3: benchmark"
t0=$(now)
podman restart -t 5 "$bm" >/dev/null
until ctl sinfo --noheader --Node --nodes bm-2 --format '%T|%E' | grep -q '^idle|'; do
  ansible-playbook -i inventories/kube/hosts.yml playbooks/remediate.yml >/dev/null
  sleep 1
done
t1=$(now)
echo "drained, host restarted -> idle (remediate.yml resumed it) $(secs "$t0" "$t1") s"
