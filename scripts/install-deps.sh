#!/usr/bin/env bash
# Install what the lab and the test tiers need on a fresh Debian 12 machine (run as root).
# Idempotent: a second run only checks. Python tools go into a venv under ~/.cache so
# the system Python is left alone.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
venv=$cache/venv

need_apt=()
for pkg in podman runc netavark aardvark-dns debootstrap iptables iproute2 python3-venv make rsync shellcheck openssh-client; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
done
# ansible-rulebook (the autoscaling rulebook's tests) runs rules in a JVM: Java 17 or newer.
java_major=$( (java -XshowSettings:properties -version 2>&1 || true) | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p')
if [ "${java_major:-0}" -lt 17 ]; then
  need_apt+=(default-jre-headless)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# podman on this machine kind: crun refuses the hybrid cgroup layout, and the default
# nofile/nproc ulimits are above what the sandbox allows.
conf=/etc/containers/containers.conf
if ! grep -q '^# slime.hybrid' "$conf" 2>/dev/null; then
  mkdir -p /etc/containers
  cat >"$conf" <<'EOF'
# slime.hybrid: settings for a host without systemd as PID 1 and with cgroup v1 hybrid
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
[network]
network_backend = "netavark"
EOF
fi
modprobe br_netfilter 2>/dev/null || true
sysctl -qw net.ipv4.ip_forward=1 || true

# The venv (--system: everything but it, which is all the cluster builds need, so that make
# test installs the venv beside them). One install at a time: a second run waits for the first.
if [ "${1:-}" != --system ]; then
  mkdir -p "$cache"
  exec 9>"$cache/.venv.lock"
  flock 9
  # The interpreter for the venv: the one on PATH (pyenv here), else Debian's.
  py=$(command -v python3)
  if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
  fi
  stamp=$venv/.requirements.sha
  want=$(cat "$here/requirements.txt" "$here/requirements-test.txt" | sha256sum | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    "$venv/bin/pip" install -q --upgrade pip
    # --no-compile: no bytecode for the ~24,000 modules installed (the `ansible` package's
    # collections are most of them, and most are never imported); Python writes it for what is
    # imported, on first use. 30 CPU-seconds less on a cold run here.
    "$venv/bin/pip" install -q --no-compile -r "$here/requirements.txt" -r "$here/requirements-test.txt"
    echo "$want" >"$stamp"
  fi
  exec 9>&-
fi
# Go for the Kubernetes tier's builds: the system Go when it is new enough, else the pinned
# toolchain from the Go module proxy, checked against its go.sum hash (scripts/go_toolchain.py).
# Only the Kubernetes tier needs Go: without one, that tier fails and says why
# (SKIP_TIERS=k8s leaves it out); everything else still installs.
if ! gobin=$(python3 "$here/scripts/go_toolchain.py" "$cache/go"); then
  gobin="none (the k8s tier will fail; SKIP_TIERS=k8s leaves it out)"
fi
venv_note=$venv
[ "${1:-}" != --system ] || venv_note="not checked (--system)"
echo "install-deps: ok (venv $venv_note, go $gobin)"
