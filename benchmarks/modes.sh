#!/usr/bin/env bash
# Per network mode: seconds from a restart of every Slurm daemon until a batch job whose
# script runs on a pod worker and launches srun across pod and bare-metal workers completes
# again, with no healing step (nat: also the time once fix_nodeaddr.yml has run).
# Also the doctor's run time. Leaves the lab in nat mode.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_NOCOLOR=1
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
job() { podman exec ctl timeout 20 sbatch --wait -N4 --batch=pod --constraint="[baremetal*2&pod*2]" -o /dev/null \
          --wrap "srun hostname" >/dev/null 2>&1; }
restart_all() {
  podman exec ctl systemctl restart slurmctld
  for c in pod-1 pod-2 bm-1 bm-2; do podman exec "$c" systemctl restart slurmd & done; wait
}
for mode in routed hostnetwork nat; do
  export SLIME_LAB_MODE=$mode
  if ! { ./lab/up.sh >/dev/null 2>&1 && ansible-playbook playbooks/site.yml >/dev/null 2>&1; }; then echo "$mode: lab or converge failed"; continue; fi
  t0=$(now); ansible-playbook playbooks/doctor.yml >/dev/null 2>&1; rc=$?; t1=$(now)
  echo "$mode: doctor $(secs "$t0" "$t1") s (exit $rc)"
  restart_all; t0=$(now); ok=
  for _ in $(seq 1 20); do if job; then ok=1; break; fi; sleep 1; done; t1=$(now)
  if [ -n "$ok" ]; then
    echo "$mode: restart of all Slurm daemons -> cross-kind job done again, no healing: $(secs "$t0" "$t1") s"
  else
    echo "$mode: restart of all Slurm daemons -> cross-kind job still failing after $(secs "$t0" "$t1") s without healing"
    t0=$(now); ansible-playbook playbooks/fix_nodeaddr.yml >/dev/null 2>&1
    for _ in $(seq 1 20); do if job; then ok=1; break; fi; sleep 1; done; t1=$(now)
    echo "$mode: ... fix_nodeaddr.yml + job: $(secs "$t0" "$t1") s (${ok:+ok}${ok:-still failing})"
  fi
done
