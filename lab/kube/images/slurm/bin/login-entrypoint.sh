#!/usr/bin/env bash
# login container entrypoint (slime.hybrid), keeping the contract of Slinky's login image
# (SlinkyProject/containers @ 05efda0, files/usr/local/bin/login-entrypoint.sh) that
# slurm-operator v1.2.1 relies on (internal/builder/loginbuilder/login_app.go):
# - sackd with $SACKD_OPTIONS (the operator sets "--conf-server <controller>:6817") as slurm in
#   /run/slurm (an emptyDir), so that the readiness probe `test -S /run/slurm/sack.socket` passes;
#   /etc/slurm (slurm.key, copied there with uid 401 by the initconf init container);
# - sshd with the operator's sshd_config, host keys and /root/.ssh/authorized_keys (mounted);
#   keys missing are generated.
# Not here: sssd (Debian forky has no sssd packages), so users come from the image's
# /etc/passwd only; the mounted /etc/sssd/sssd.conf is unused.
set -euo pipefail
export SACKD_OPTIONS="${SACKD_OPTIONS:-} $*"
export SSHD_OPTIONS="${SSHD_OPTIONS:-}"
mkdir -p /run/sshd /run/slurm
chmod 0755 /run/sshd
chown slurm:slurm /run/slurm
ssh-keygen -A >/dev/null
exec supervisord -c /etc/supervisor/supervisord.conf
