#!/usr/bin/env bash
# sd_notify stand-in for Slurm daemons run with --systemd under supervisord (slime.hybrid).
#
# Why: with --systemd, `scontrol reconfigure` makes slurmctld/slurmd/sackd start a new process
# that reports itself with MAINPID=<pid> on $NOTIFY_SOCKET, and the old one exits (status 0, so
# supervisord does not restart it). Slinky's images (SlinkyProject/containers @ 05efda0,
# files/usr/local/bin/fakesystemd.sh) listen on that socket and keep a pidproxy whose pidfile
# holds the newest MAINPID, so that stopping the container still signals the running daemon.
# This is our own implementation of that contract.
set -euo pipefail
socket=${NOTIFY_SOCKET:-/tmp/fakesystemd.sock}
pidfile=${PIDFILE:-/tmp/proxy.pid}

say() { printf '[%s] sd-notify-proxy: %s\n' "$(date -Is)" "$*"; }

# pidproxy (from supervisor) forwards the signals it gets to the pid in $pidfile.
say "pidproxy on $pidfile"
pidproxy "$pidfile" /usr/bin/sleep infinity &

while :; do
  # One datagram per socat run; unlink-early replaces a stale socket left by a restart.
  msg=$(socat -u "UNIX-RECVFROM:$socket,unlink-early" - || true)
  pid=$(printf '%s\n' "$msg" | sed -n 's/^MAINPID=\([0-9][0-9]*\)$/\1/p' | tail -n 1)
  if [ -z "$pid" ]; then
    say "notification without MAINPID: $(printf '%s' "$msg" | tr '\n' ' ')"
    continue
  fi
  say "MAINPID=$pid"
  printf '%s\n' "$pid" >"$pidfile"
done
