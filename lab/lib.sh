# shellcheck shell=bash
# Functions shared by the lab scripts (kube/up.sh, host.sh); source env.sh first.

# The container of the lab's host NAME: its name prefixed in the second lab (env.sh). Every
# function below takes the host's name and works on its container.
lab_ctr() { echo "$LAB_CTR_PREFIX$1"; }

# Start a lab container booting systemd, unless it already runs: lab_run name image podman-args...
lab_run() {
  local name=$1 image=$2 ctr; shift 2
  ctr=$(lab_ctr "$name")
  if [ "$(podman inspect -f '{{.State.Running}}' "$ctr" 2>/dev/null)" = true ]; then return; fi
  podman rm -f "$ctr" >/dev/null 2>&1 || true
  podman run -d --name "$ctr" --hostname "$name" --label slime-lab=1 --label "$LAB_SLOT_LABEL" \
    --privileged --systemd=always --cgroupns=private "$@" "$image" >/dev/null
}

# Wait until systemd in the container has booted: lab_wait_booted name
lab_wait_booted() {
  local name=$1 state
  for _ in $(seq 1 $((LAB_WAIT * 2))); do
    state=$(podman exec "$(lab_ctr "$name")" systemctl is-system-running 2>/dev/null || true)
    case "$state" in running|degraded) return 0 ;; esac
    sleep 0.5
  done
  echo "lab: $name did not boot (systemd state: $state)" >&2
  return 1
}

# A bare-metal host: a bare systemd host (no Slurm) on the external network only, with its
# own /etc/hosts for the roles to edit. The host's FORWARD rules (kube/up.sh) keep the whole
# external network from reaching pod IPs but through a node, so every such host gets the same
# isolation.
#   lab_bm_run name ip [image]   start it (returns at once; then lab_wait_booted); the image
#                                is $LAB_IMAGE_HOST (forky) unless named
#   lab_bm_hosts name ip    once booted: its own name in /etc/hosts
lab_bm_run() {
  lab_run "$1" "${3:-$LAB_IMAGE_HOST}" --network "$LAB_EXT_NET:ip=$2" --no-hosts
}
lab_bm_hosts() {
  podman exec "$(lab_ctr "$1")" sh -c "grep -q ' $1\$' /etc/hosts || echo '$2 $1' >>/etc/hosts"
  lab_ssh_authorize "$1"
}

# The lab's SSH key (ed25519, made once; both labs may come up at once, so under a lock) and
# its public half in a host's root authorized_keys, as a site's provisioning would put an
# operator key there.
lab_ssh_key() {
  local dir
  dir=$(dirname "$LAB_SSH_KEY")
  mkdir -p "$dir" && chmod 0700 "$dir"
  (
    flock 9
    [ -s "$LAB_SSH_KEY" ] || ssh-keygen -q -t ed25519 -N '' -C slime-lab -f "$LAB_SSH_KEY"
  ) 9>"$dir/.lock"
}
lab_ssh_authorize() {
  lab_ssh_key
  podman exec -i "$(lab_ctr "$1")" sh -c 'umask 077; mkdir -p /root/.ssh; cat >/root/.ssh/authorized_keys' <"$LAB_SSH_KEY.pub"
}

# A teardown that raced another (two down.sh, or podman killed mid-way) can leave the Linux
# bridge of a lab network behind without its podman network; podman then refuses to create the
# network again ("subnet ... is already used on the host or by another config"). Delete the
# bridges of this host that hold an address in CIDR and that no podman network owns, saying
# which: lab_clear_stale_bridges cidr. Interfaces that are not bridges are never touched.
lab_clear_stale_bridges() {
  local cidr=$1 owned dev addr
  owned=" $(podman network ls --format '{{.NetworkInterface}}' | tr '\n' ' ') "
  ip -o -4 addr show | while read -r _ dev _ addr _; do
    [ -d "/sys/class/net/$dev/bridge" ] || continue
    case "$owned" in *" $dev "*) continue ;; esac
    python3 -c 'import ipaddress, sys
sys.exit(not ipaddress.ip_interface(sys.argv[1]).network.overlaps(ipaddress.ip_network(sys.argv[2])))' "$addr" "$cidr" \
      || continue
    echo "lab: removing bridge $dev ($addr): no podman network owns it (left by a teardown that raced another)" >&2
    ip link delete "$dev"
  done
}
