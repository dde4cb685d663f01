#!/usr/bin/env bash
# Add or remove one bare-metal host of the running lab (lab/kube/up.sh), made exactly as up.sh
# makes bm-1 and bm-2 (lib.sh): a bare systemd host, no Slurm, on the external network only.
#   ./host.sh add NAME IP [SUITE]   e.g. ./host.sh add bm-3 10.127.0.63 (then converge it with
#                                   site.yml); SUITE: another Debian release than the lab's forky,
#                                   e.g. trixie (its slurmd is 24.11: Slurm's compatibility window)
#   ./host.sh remove NAME    the container, and the node's record in slurmctld if it has one
# Addresses: LAB_EXT_CIDR, .63 upwards (env.sh and kube/env.sh keep .30-.32 and .61-.62).
# SLIME_LAB_SLOT=2: in the second lab (env.sh); the container is then lab2-NAME.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lab/kube/env.sh
. "$here/kube/env.sh"
# shellcheck source=lab/lib.sh
. "$here/lib.sh"

usage() { echo "usage: $0 add NAME IP [SUITE] | remove NAME" >&2; exit 2; }
name_ok() { [[ $1 =~ ^[a-z][a-z0-9-]{0,40}$ ]] || { echo "lab: host name '$1' is not a short lowercase name" >&2; exit 2; }; }

case "${1:-}" in
  add)
    [ $# -eq 3 ] || [ $# -eq 4 ] || usage
    name=$2 ip=$3 image=$LAB_IMAGE_HOST
    if [ $# -eq 4 ]; then
      [[ $4 =~ ^[a-z]+$ ]] || { echo "lab: '$4' is not a Debian release name (e.g. trixie)" >&2; exit 2; }
      image=$("$here/build-image.sh" --host "$4")
    fi
    name_ok "$name"
    prefix=${LAB_EXT_CIDR%.*}.
    [[ $ip == "$prefix"* && ${ip#"$prefix"} =~ ^[0-9]+$ && ${ip#"$prefix"} -ge 2 && ${ip#"$prefix"} -le 254 ]] \
      || { echo "lab: $ip is not a host address of $LAB_EXT_CIDR" >&2; exit 2; }
    for c in $LAB_BMS $KUBE_NODES; do
      [ "${c%%=*}" != "$name" ] || { echo "lab: $name is one of the lab's own containers" >&2; exit 2; }
    done
    podman network exists "$LAB_EXT_NET" || { echo "lab: not up (lab/kube/up.sh)" >&2; exit 1; }
    # A host removed moments ago with this address leaves its MAC in this machine's neighbour
    # table: the first connections to the new one would go to the old MAC and time out.
    ip neigh flush to "$ip" 2>/dev/null || true
    lab_bm_run "$name" "$ip" "$image"
    lab_wait_booted "$name"
    lab_bm_hosts "$name" "$ip"
    echo "lab: $name up at $ip ($image)"
    ;;
  remove)
    [ $# -eq 2 ] || usage
    name=$2
    name_ok "$name"
    for c in $LAB_BMS $KUBE_NODES; do
      [ "${c%%=*}" != "$name" ] || { echo "lab: $name is one of the lab's own containers (lab/kube/down.sh)" >&2; exit 2; }
    done
    podman rm -f -t 2 "$(lab_ctr "$name")" >/dev/null 2>&1 || true
    # A dynamic node stays IDLE in slurmctld until SlurmdTimeout: delete its record (in the
    # controller pod of lab/kube, when the cluster is up).
    if [ -s "$KUBE_KUBECONFIG" ]; then
      "$KUBE_BIN/kubectl" --kubeconfig "$KUBE_KUBECONFIG" -n slurm exec slurm-controller-0 -c slurmctld -- \
        scontrol delete "nodename=$name" >/dev/null 2>&1 || true
    fi
    echo "lab: $name removed"
    ;;
  *) usage ;;
esac
