#!/usr/bin/env bash
# What to do after `make demo`: the commands to look around the lab, printed as they work from the
# repository's directory (make demo prints them last). With --run, runs each one that neither waits
# for a terminal nor removes the lab, and fails on the first that fails (molecule kube runs it; its
# tier ends with `make kube-down`, the last line).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
# shellcheck source=lab/kube/env.sh
. "$here/env.sh"
# shellcheck source=lab/lib.sh
. "$here/../lib.sh"
slot=${SLIME_LAB_SLOT:+SLIME_LAB_SLOT=$SLIME_LAB_SLOT }
kubectl="$KUBE_BIN/kubectl --kubeconfig $KUBE_KUBECONFIG"
bm=$(lab_ctr bm-1)
# command | what it shows | run by --run (yes/no)
steps=(
  "$kubectl get pods -A -o wide|the pods of every namespace, and their nodes|yes"
  "$kubectl -n slurm exec slurm-controller-0 -c slurmctld -- sinfo -N|Slurm's nodes, from the controller pod|yes"
  "podman exec $bm srun -N4 -l hostname|one step across pods and metal, from bare metal|yes"
  "podman exec $bm sinfo -N -o '%N %T %f'|the same cluster, from a bare-metal worker (configless)|yes"
  "podman exec -it $bm bash|a shell on a bare-metal worker (squeue, journalctl -u slurmd)|no"
  "${slot}make doctor|every network path, from every bare-metal host|yes"
  "${slot}make kube-down|remove the cluster and the hosts (built images stay cached)|no"
)
if [ "${1:-}" = --run ]; then
  for step in "${steps[@]}"; do
    IFS='|' read -r cmd _ run <<<"$step"
    [ "$run" = yes ] || continue
    echo "\$ $cmd"
    bash -c "$cmd" || { echo "next-steps: '$cmd' failed" >&2; exit 1; }
  done
  echo "next-steps: every command ran"
  exit 0
fi
echo "Look around (from this directory):"
for step in "${steps[@]}"; do
  IFS='|' read -r cmd what _ <<<"$step"
  printf '  %s\n      # %s\n' "$cmd" "$what"
done
