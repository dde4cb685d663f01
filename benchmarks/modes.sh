#!/usr/bin/env bash
# Per network mode (routed, hostnetwork, nat): seconds from a restart of every Slurm daemon until
# a batch job whose script runs on a pod worker and launches srun across pod and bare-metal
# workers completes again, with no healing step (nat: also the time once fix_nodeaddr.yml has
# run). Also the doctor's run time. The restart, as molecule's verify_modes.yml does it:
# slurmctld and every pod worker's slurmd killed with SIGKILL (supervisord starts them again in
# the same pods; the images have no supervisorctl), slurmd restarted by systemd on bare metal.
# Each mode on a cluster of its own: lab/kube/down.sh, SLIME_LAB_MODE=$mode lab/kube/up.sh,
# site.yml (a NodeSet takes a new network mode on a running cluster only through the operator's
# rolling update, lab/kube/README.md). Leaves the cluster converged in nat mode. Run through make
# (PATH, SLIME_CACHE, the collection). Measures; never asserts a limit.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=benchmarks/lib.sh
. benchmarks/lib.sh
play() { ansible-playbook -i inventories/kube/hosts.yml "$@" >/dev/null 2>&1; }
feature=slinky   # the NodeSet of inventories/kube (slinky_nodesets): its name is its pods' Slurm feature
bms="bm-1 bm-2"
pods() { kubectl -n slurm get pods -l app.kubernetes.io/name=slurmd -o jsonpath='{.items[*].metadata.name}'; }
job() {
  ctl timeout 20 sbatch --wait -N$((npods + 2)) --batch="$feature" --constraint="[baremetal*2&$feature*$npods]" \
    -o /dev/null --wrap "srun hostname" >/dev/null 2>&1
}
restart_all() {
  ctl pkill -KILL -x 'slurmctld(-wlm)?' || true
  for p in $(pods); do kubectl -n slurm exec "$p" -c slurmd -- pkill -KILL -x 'slurmd(-wlm)?' & done
  for h in $bms; do podman exec "$h" systemctl restart slurmd & done
  wait
}
for mode in routed hostnetwork nat; do
  export SLIME_LAB_MODE=$mode
  ./lab/kube/down.sh >/dev/null
  if ! { ./lab/kube/up.sh >/dev/null 2>&1 && play playbooks/site.yml; }; then echo "$mode: cluster or converge failed"; continue; fi
  npods=$(pods | wc -w)
  t0=$(now); rc=0; play playbooks/doctor.yml || rc=$?; t1=$(now)
  echo "$mode: doctor $(secs "$t0" "$t1") s (exit $rc)"
  restart_all; t0=$(now); ok=
  for _ in $(seq 1 20); do if job; then ok=1; break; fi; sleep 1; done; t1=$(now)
  if [ -n "$ok" ]; then
    echo "$mode: restart of all Slurm daemons -> cross-kind job done again, no healing: $(secs "$t0" "$t1") s"
  else
    echo "$mode: restart of all Slurm daemons -> cross-kind job still failing after $(secs "$t0" "$t1") s without healing"
    t0=$(now); play playbooks/fix_nodeaddr.yml || true
    for _ in $(seq 1 20); do if job; then ok=1; break; fi; sleep 1; done; t1=$(now)
    echo "$mode: ... fix_nodeaddr.yml + job: $(secs "$t0" "$t1") s (${ok:+ok}${ok:-still failing})"
  fi
done
