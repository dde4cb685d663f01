#!/usr/bin/env bash
# Scale-in while a 60 s job runs on the node being removed: seconds from the start of
# scale_in.yml to the host released (job finished where it ran, node record deleted, slurmd
# stopped). Then scale_out.yml brings the node back. Needs a converged lab (run.sh leaves one).
set -euo pipefail
cd "$(dirname "$0")/.."
export ANSIBLE_CONFIG=$PWD/ansible.cfg ANSIBLE_NOCOLOR=1
now() { date +%s.%N; }
job=$(podman exec ctl sbatch --parsable -w bm-2 -o /dev/null --wrap 'sleep 60')
until [ "$(podman exec ctl squeue -h -j "$job" -o %T)" = RUNNING ]; do sleep 0.2; done
t0=$(now)
ansible-playbook playbooks/scale_in.yml -e '{"slime_scale_in": ["bm-2"], "slime_scale_in_timeout": 600}' >/dev/null
t1=$(now)
state=$(podman exec ctl scontrol show job -o "$job" | grep -Eo 'JobState=[A-Z]+ |Restarts=[0-9]+' | tr -d ' ' | paste -sd' ')
echo "scale-in of bm-2 with a 60 s job running: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s from start to host released ($state)"
ansible-playbook playbooks/scale_out.yml -e '{"slime_scale_out": ["bm-2"]}' >/dev/null
