# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Health checks of every worker: the model's ``health`` section and the program Slurm runs.

Slurm runs slurm.conf's HealthCheckProgram on every node, pods and bare metal alike: slurmd runs
it once at its start (before it registers) and whenever slurmctld asks, every
HealthCheckInterval seconds on the nodes in HealthCheckNodeState (Slurm 26.05,
src/slurmd/slurmd/slurmd.c run_script_health_check, src/slurmd/slurmd/req.c). Facts from that
source that shape the program:
- it is run with no arguments and an environment of SLURMD_NODENAME only (and
  SLURM_NODE_IS_HEALTHY when slurmctld knows), so it sets its own PATH and reads its settings
  from a file beside it;
- configless slurmd fetches slurm.conf, gres.conf, ... and relative Prolog/Epilog paths from
  slurmctld (src/common/fetch_config.c), never the health check program: it must exist on every
  node at the same absolute path. Bare metal gets it from the worker plan (SSH and cloud-init
  alike), NodeSet pods from a ConfigMap the chart creates and mounts there;
- slurmd only logs a failing program; draining is the program's own job (as LBNL NHC does):
  it drains its node with a reason that starts with REASON_PREFIX and names what failed, and
  resumes only a node whose reason starts so, when every check passes again. A drain by anyone
  else (an operator, slurmctld, the remediation) is never lifted here, and a node it drained
  keeps its first reason and time while it stays unhealthy (the remediation's grace period
  counts from there).

LBNL NHC, the checker sites use, is packaged neither by Debian (forky) nor on PyPI: the program
is a POSIX shell script of the checks a bare-metal worker needs and a pod worker can run too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.slime.hybrid.plugins.module_utils import node_state

DIRECTORY = "/opt/slime-hybrid/health"
PROGRAM = DIRECTORY + "/check"
SETTINGS_FILE = DIRECTORY + "/check.conf"
REASON_PREFIX = "slime-health:"
# The ConfigMap and volume that carry the program and the pods' settings into NodeSet pods.
CONFIG_MAP = "slime-health"
VOLUME = "slime-health"
# HealthCheckNodeState words of Slurm 26.05 (src/common/read_config.c, _health_node_state);
# START_ONLY and REBOOT_ONLY stand alone.
NODE_STATES = ("ALLOC", "ANY", "CYCLE", "IDLE", "MIXED", "NONDRAINED_IDLE", "REBOOT_ONLY", "START_ONLY")
ALONE = ("REBOOT_ONLY", "START_ONLY")
# SlurmdSpoolDir as Slinky's operator writes it (internal/builder/common/const.go), and Debian's.
SPOOL = "/var/spool/slurmd"
# Slurm 26.05's HealthCheckTimeout default (src/common/read_config.h), which slurmctld wants below the
# interval. The collection never writes HealthCheckTimeout: slurmd before 26.05, which the
# compatibility window lets join, does not know the key and refuses the whole slurm.conf it fetches
# (src/common/parse_config.c, "Parsing error at unrecognized key"; seen with a Debian trixie host's
# slurmd 24.11 on the lab).
SLURM_TIMEOUT = 60
DEFAULTS = {"enabled": True, "interval": 300, "node_state": ["ANY"],
            "paths": [SPOOL, "/tmp"], "min_free_mb": 1024, "min_free_inodes": 1000}
KEYS = tuple(sorted(DEFAULTS))

# The program. Each check adds a problem; the drain reason lists them all.
SCRIPT = r"""#!/bin/sh
# slime.hybrid worker health check: slurm.conf HealthCheckProgram on pod and bare-metal workers
# alike (plugins/module_utils/health.py). Managed by slime.hybrid; a converge replaces local changes.
# Drains this node with a reason that starts with "%(prefix)s" when a check fails, and resumes
# it when every check passes and the drain was its own; never touches a drain by anyone else.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
SLIME_HEALTH_PATHS=
SLIME_HEALTH_MIN_FREE_MB=0
SLIME_HEALTH_MIN_FREE_INODES=0
SLIME_HEALTH_DEVICES=
settings="${0%%/*}/check.conf"
node=${SLURMD_NODENAME:-$(hostname -s)}
problems=
problem() { problems="${problems:+$problems; }$*"; }

if [ -r "$settings" ]; then
  . "$settings"
else
  problem "$settings is missing"
fi

# The controller: every drain goes through it, so without it there is nothing to do but say so.
if ! answer=$(timeout 10 scontrol ping 2>&1) || ! printf '%%s\n' "$answer" | grep -q 'is UP'; then
  echo "%(prefix)s $node: the controller does not answer: $(printf '%%s' "$answer" | tr '\n' ' ')" >&2
  exit 1
fi

for path in $SLIME_HEALTH_PATHS; do
  if [ ! -d "$path" ]; then
    problem "$path is not a directory"
    continue
  fi
  probe=$(mktemp "$path/.slime-health.XXXXXX" 2>/dev/null) && rm -f "$probe" || problem "$path is not writable"
  free=$(df -Pk "$path" | awk 'NR == 2 { print int($4 / 1024) }')
  [ "${free:-0}" -ge "$SLIME_HEALTH_MIN_FREE_MB" ] || problem "$path has ${free:-no} MiB free (at least $SLIME_HEALTH_MIN_FREE_MB wanted)"
  # a file system without inode counts (btrfs) reports 0 inodes in all
  inodes=$(df -Pi "$path" | awk 'NR == 2 { print ($2 == 0 ? -1 : $4) }')
  [ "${inodes:-0}" -lt 0 ] || [ "${inodes:-0}" -ge "$SLIME_HEALTH_MIN_FREE_INODES" ] \
    || problem "$path has ${inodes:-no} inodes free (at least $SLIME_HEALTH_MIN_FREE_INODES wanted)"
done

for device in $SLIME_HEALTH_DEVICES; do
  [ -c "$device" ] || [ -b "$device" ] || problem "GPU device $device is not a device"
done

# slurmctld's record of this node (none yet while slurmd starts: it runs this before it registers),
# a field or two per line: "   State=IDLE+DRAIN+DYNAMIC_NORM ThreadsPerCore=1 ...", "   Reason=TEXT [USER@TIME]"
record=$(scontrol show node "$node" 2>/dev/null) || record=
state=$(printf '%%s\n' "$record" | sed -n 's/^ *State=\([^ ]*\).*/\1/p')
reason=$(printf '%%s\n' "$record" | sed -n 's/^ *Reason=\(.*\) \[[^]]*\]$/\1/p')
case "+$state+" in *+DRAIN*) drained=yes ;; *) drained=no ;; esac

if [ -n "$problems" ]; then
  echo "%(prefix)s $node: $problems" >&2
  if [ -n "$record" ] && [ "$drained" = no ]; then
    scontrol update NodeName="$node" State=DRAIN Reason="%(prefix)s $problems" >&2
  fi
  exit 1
fi
case "$reason" in
  "%(prefix)s"*)
    if [ "$drained" = yes ]; then
      echo "%(prefix)s $node: every check passes; resuming the node this check drained ($reason)"
      scontrol update NodeName="$node" State=RESUME
    fi ;;
esac
exit 0
""" % {"prefix": REASON_PREFIX}


def _int(errors, label, value, low):
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        errors.append("health.%s=%r must be a whole number of at least %d" % (label, value, low))
        return None
    return value


def settings(raw):
    """(section, errors): the model's health section with defaults (enabled: false included, so that a
    model is its own input); every error at once."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return None, ["health=%r must be a mapping of %s (see docs/howto-health.md)" % (raw, ", ".join(KEYS))]
    errors = ["health.%s is not a setting; allowed: %s" % (key, ", ".join(KEYS)) for key in sorted(set(raw) - set(KEYS), key=str)]
    section = dict(DEFAULTS, **dict((k, v) for k, v in raw.items() if v is not None))
    if not isinstance(section["enabled"], bool):
        errors.append("health.enabled=%r must be true or false" % (section["enabled"],))
    interval = _int(errors, "interval", section["interval"], 0)
    if interval and interval <= SLURM_TIMEOUT:
        errors.append("health.interval=%d must be above %d, Slurm 26.05's HealthCheckTimeout, or 0 (slurmctld wants the "
                      "timeout below the interval; the collection leaves HealthCheckTimeout at its default, as slurmd "
                      "before 26.05 refuses a slurm.conf that sets it)" % (interval, SLURM_TIMEOUT))
    states = section["node_state"]
    states = [states] if isinstance(states, str) else states
    if not isinstance(states, list) or not states or [s for s in states if not isinstance(s, str)]:
        errors.append("health.node_state=%r must be a list of %s" % (section["node_state"], ", ".join(NODE_STATES)))
    else:
        states = [s.upper() for s in states]
        errors += ["health.node_state: %s is not a HealthCheckNodeState; allowed: %s" % (s, ", ".join(NODE_STATES))
                   for s in states if s not in NODE_STATES]
        alone = [s for s in states if s in ALONE]
        if alone and len(states) > 1:
            errors.append("health.node_state: %s stands alone (Slurm ignores the rest)" % alone[0])
        if interval == 0 and not alone:
            errors.append("health.interval=0 runs the check only with node_state START_ONLY or REBOOT_ONLY")
    paths = section["paths"]
    if not isinstance(paths, list) or [p for p in paths if not isinstance(p, str) or not p.startswith("/") or
                                       [c for c in p if c.isspace() or c in "'\"\\$`"]]:
        errors.append("health.paths=%r must be a list of absolute directory paths without blanks or quotes" % (paths,))
    _int(errors, "min_free_mb", section["min_free_mb"], 0)
    _int(errors, "min_free_inodes", section["min_free_inodes"], 0)
    if errors:
        return None, errors
    return dict(section, node_state=states, paths=list(paths)), []


def of(model):
    """The model's health section where the checks are on, else None."""
    section = model.get("health")
    return section if section and section["enabled"] else None


def slurm_conf(health):
    """The controller's slurm.conf lines (extraConfMap) for the health section."""
    return {"HealthCheckProgram": PROGRAM, "HealthCheckInterval": health["interval"],
            "HealthCheckNodeState": ",".join(health["node_state"])}


def settings_file(health, devices=()):
    """check.conf: the settings the program reads, for one node (its GPU device files)."""
    return "\n".join([
        "# slime.hybrid health check settings (slime_cluster.health); managed, a converge replaces local changes.",
        "SLIME_HEALTH_PATHS='%s'" % " ".join(health["paths"]),
        "SLIME_HEALTH_MIN_FREE_MB=%d" % health["min_free_mb"],
        "SLIME_HEALTH_MIN_FREE_INODES=%d" % health["min_free_inodes"],
        "SLIME_HEALTH_DEVICES='%s'" % " ".join(devices),
        "",
    ])


def files(health, devices=()):
    """The program and its settings as {path, mode, content} (a bare-metal host's files)."""
    return [{"path": PROGRAM, "mode": "0755", "content": SCRIPT},
            {"path": SETTINGS_FILE, "mode": "0644", "content": settings_file(health, devices)}]


def config_map(health):
    """The ConfigMap that carries the program and the pods' settings into NodeSet pods (no namespace:
    the chart's extraObjects put it in the release's)."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": CONFIG_MAP, "labels": {"app.kubernetes.io/component": "health"}},
            "data": {"check": SCRIPT, "check.conf": settings_file(health)}}


def pod_volume():
    """The NodeSet pods' volume of the ConfigMap: the program executable, every file world-readable."""
    return {"name": VOLUME, "configMap": {"name": CONFIG_MAP, "defaultMode": 0o755}}


def pod_mount():
    return {"name": VOLUME, "mountPath": DIRECTORY, "readOnly": True}


def drained_by_check(record):
    """Whether a node record (scontrol's fields) is drained by the health check."""
    return node_state.is_drain(record) and str(record.get("Reason", "")).startswith(REASON_PREFIX)
