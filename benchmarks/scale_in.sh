#!/usr/bin/env bash
# Scale-in while a 60 s job runs on the node being removed: seconds from the start of
# scale_in.yml to the host released (job finished where it ran, node record deleted, slurmd
# stopped). Then scale_out.yml brings the node back. The job is submitted from the controller pod.
# Needs a converged lab/kube (run.sh leaves one). Measures; never asserts a limit.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=benchmarks/lib.sh
. benchmarks/lib.sh
job=$(ctl sbatch --parsable -w bm-2 -o /dev/null --wrap 'sleep 60')
until [ "$(ctl squeue -h -j "$job" -o %T)" = RUNNING ]; do sleep 0.2; done
t0=$(now)
ansible-playbook -i inventories/kube/hosts.yml playbooks/scale_in.yml \
  -e '{"slime_scale_in": ["bm-2"], "slime_scale_in_timeout": 600}' >/dev/null
t1=$(now)
state=$(ctl scontrol show job -o "$job" | grep -Eo 'JobState=[A-Z]+ |Restarts=[0-9]+' | tr -d ' ' | paste -sd' ')
echo "scale-in of bm-2 with a 60 s job running: $(secs "$t0" "$t1") s from start to host released ($state)"
ansible-playbook -i inventories/kube/hosts.yml playbooks/scale_out.yml -e '{"slime_scale_out": ["bm-2"]}' >/dev/null
