# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Draining and removing Slurm nodes without losing a job (scale-in), and waiting for nodes to
be available (registration, upgrade, scale-out).

A drained node takes no new job and keeps running the ones it has; only when none is left
is its dynamic node record deleted. Nothing here cancels or requeues a job.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.slime.hybrid.plugins.module_utils import scontrol
from ansible_collections.slime.hybrid.plugins.module_utils.names import hostlist

STATES = ("drained", "absent", "resumed")
# Not a change of the nodes: the module waits for it (unavailable()) and plan() refuses it.
WAIT_STATES = ("available",)
_BUSY = ("ALLOCATED", "MIXED", "COMPLETING")
_STAMP_RE = re.compile(r"\s*\[[^\]]*@[^\]]*\]$")


def is_drain(record):
    return "DRAIN" in scontrol.state_flags(record.get("State", ""))[1]


def is_busy(record):
    """Running or finishing a job (a node that is DRAINING rather than DRAINED)."""
    base, flags = scontrol.state_flags(record.get("State", ""))
    return base in _BUSY or "COMPLETING" in flags


def drain_reason(record):
    """The reason a node was drained, without the '[user@time]' slurmctld appends."""
    return _STAMP_RE.sub("", record.get("Reason", "")).strip()


def plan(current, names, state, only_reason=None):
    """What to do for the named nodes: {"present", "missing", "drain", "resume", "delete"}.
    With only_reason, state=resumed resumes only nodes drained for that reason: a drain an
    operator set for another cause stays."""
    if state not in STATES:
        raise ValueError("state=%r; allowed: %s" % (state, ", ".join(STATES)))
    present = [name for name in names if name in current]
    out = {"present": present, "missing": [name for name in names if name not in current],
           "drain": [], "resume": [], "delete": []}
    if state == "resumed":
        out["resume"] = [name for name in present if is_drain(current[name])
                         and (only_reason is None or drain_reason(current[name]) == only_reason)]
    else:
        out["drain"] = [name for name in present if not is_drain(current[name])]
        if state == "absent":
            out["delete"] = list(present)
    return out


def drain_command(names, reason):
    return ["update", "NodeName=%s" % ",".join(names), "State=DRAIN", "Reason=%s" % reason]


def resume_command(names):
    return ["update", "NodeName=%s" % ",".join(names), "State=RESUME"]


def delete_command(names):
    return ["delete", "NodeName=%s" % ",".join(names)]


def busy_nodes(current, names):
    return [name for name in names if name in current and is_busy(current[name])]


def running(current, busy, jobs):
    """The nodes of `busy` (whose records say busy, busy_nodes) that still run a job: COMPLETING, or on
    the node list of a job squeue lists that is not PENDING (jobs: parse_jobs of `squeue -w BUSY`; a
    list it cannot read counts as all of them). A record that says ALLOCATED or MIXED of a node that
    runs none is an allocation slurmctld never frees, which no job will end: Slurm 26.05 keeps the GRES
    of a job that ended after its node registered fewer of that GRES (INVALID_REG, "gres/gpu count
    reported lower than configured")."""
    with_jobs = set()
    for job in jobs:
        if job["state"] != "PENDING":
            try:
                with_jobs.update(hostlist(job["nodes"]))
            except ValueError:
                with_jobs.update(busy)
    return [name for name in busy if name in with_jobs or _completing(current[name])]


def _completing(record):
    base, flags = scontrol.state_flags(record.get("State", ""))
    return "COMPLETING" in [base] + flags


def parse_jobs(text):
    """`squeue -h -o '%i|%T|%N'` output -> [{"id", "state", "nodes"}]."""
    jobs = []
    for line in (text or "").splitlines():
        parts = line.strip().split("|")
        if len(parts) == 3 and parts[0]:
            jobs.append({"id": parts[0], "state": parts[1], "nodes": parts[2]})
    return jobs


def timeout_message(busy, jobs, timeout):
    running = ", ".join("%s (%s on %s)" % (job["id"], job["state"], job["nodes"]) for job in jobs) or "unknown jobs"
    names = ",".join(busy)
    return ("%s still running job(s) after %ds: %s. The node(s) stay drained and their hosts stay provisioned; "
            "wait and run again, or undo with: scontrol update NodeName=%s State=RESUME" % (names, timeout, running, names))


def diff_text(current, names, planned):
    before, after = [], []
    for name in names:
        record = current.get(name)
        now = record.get("State", "?") if record else "(absent)"
        before.append("%s State=%s" % (name, now))
        if name in planned["drain"]:
            now += "+DRAIN"
        elif name in planned["resume"]:
            now = now.replace("+DRAIN", "")
        after.append("%s (absent)" % name if name in planned["delete"] else "%s State=%s" % (name, now))
    return "\n".join(before) + "\n", "\n".join(after) + "\n"


def unavailable(current, names, version=None, drained_ok=False, drain_reason_ok=None):
    """{name: why} for the named nodes slurmctld does not list as available yet: unknown to it, not
    responding, down, drained (unless drained_ok: a node an upgrade drained, back before its resume;
    or drained with a reason that starts with drain_reason_ok: the health check's own drain of a node
    that registered), or, with version, registered at another release."""
    out = {}
    for name in names:
        record = current.get(name)
        if record is None:
            out[name] = "not listed by slurmctld"
            continue
        state = record.get("State", "")
        reason = record.get("Reason", "")
        drain_ok = drained_ok or bool(drain_reason_ok and reason.startswith(drain_reason_ok))
        if not scontrol.is_available(state.replace("+DRAIN", "") if drain_ok else state):
            out[name] = "State=%s" % state + (" Reason=%s" % reason if reason else "")
        elif version and record.get("Version") != version:
            out[name] = "Version=%s, not %s" % (record.get("Version"), version)
    return out


def unavailable_message(waiting, timeout):
    return "not available after %ds: %s" % (timeout, "; ".join("%s %s" % item for item in sorted(waiting.items())))
