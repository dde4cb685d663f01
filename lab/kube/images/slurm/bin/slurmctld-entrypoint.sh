#!/usr/bin/env bash
# slurmctld container entrypoint (slime.hybrid), keeping the contract of Slinky's image
# (SlinkyProject/containers @ 05efda0, files/usr/local/bin/slurmctld-entrypoint.sh) that
# slurm-operator v1.2.1 relies on (internal/builder/controllerbuilder/controller_app.go):
# - the container's args (chart: controller.slurmctld.args) and $SLURMCTLD_OPTIONS become
#   slurmctld's options;
# - it runs as SlurmUser 401 (pod securityContext), with /run an emptyDir and /run/slurmctld
#   (the auth socket directory the reconfigure sidecar shares) another one;
# - slurm.conf comes from /etc/slurm (projected, read-only); logs go to the FIFO the logfile
#   sidecar reads (SlurmctldLogFile=/var/log/slurm/slurmctld.log in the operator's slurm.conf);
# - probes are slurmctld's own HTTP /livez and /readyz on its port 6817.
set -euo pipefail
export SLURMCTLD_OPTIONS="${SLURMCTLD_OPTIONS:-} $*"
mkdir -p /run/slurmctld
exec supervisord -c /etc/supervisor/supervisord.conf
