# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Remediation of unhealthy bare-metal workers through Metal3: what to do, decided from Slurm's view of
each node and the BareMetalHost behind it.

A bare-metal node that is DOWN or NOT_RESPONDING, or that its health check drained
(module_utils/health.py), for longer than a grace period and running no job, is power-cycled
through its BareMetalHost: the suffixless ``reboot.metal3.io`` annotation, which baremetal-operator
v0.13.2 turns into a power-off, removes once the host is off, and follows with a power-on
(internal/controller/metal3.io/baremetalhost_controller.go, manageHostPower; ``{"mode": "hard"}``:
a hung host does not answer a soft power-off). What was done is kept on the BareMetalHost itself
(annotation LEDGER), so the decision needs no state of its own and any run of it, from anywhere,
sees the same history:
- a node DOWN and not drained is drained first (reason REASON_PREFIX ...), so that it takes no job
  when it comes back until a later decision sees it responding and resumes it; a drain by the
  health check keeps its reason (the check resumes it when it passes again), and any other drain
  is never lifted here;
- nothing is done twice to a host inside the back-off; after ``max_reboots`` power-cycles that did
  not heal it the node is left drained and reported;
- at most ``max_concurrent`` hosts are in remediation at once (Cluster API MachineHealthCheck's
  maxUnhealthy): the others are reported;
- a node with a running job, a node within its grace period, a host that is not a provisioned
  BareMetalHost, and a host outside Metal3 (SSH only) are reported, never touched.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import re
import time

from ansible_collections.slime.hybrid.plugins.module_utils import health, node_state, scontrol

REASON_PREFIX = "slime-remediation:"
LEDGER = "slime.hybrid/remediation"
# The BareMetalHost states where baremetal-operator acts on a reboot annotation (manageHostPower, isProvisioned).
REBOOTABLE = ("provisioned", "externally provisioned")
# The ledger: "reboots=N last=EPOCH reason=TEXT" (not JSON: Ansible would template a JSON text into a mapping,
# and an annotation must be a string).
_LEDGER_RE = re.compile(r"^reboots=(\d+) last=(\d+) reason=(.*)$")
DEFAULTS = {"grace": 600, "backoff": 1800, "max_concurrent": 1, "max_reboots": 3}
# "Reason=... [USER@2026-11-27T11:20:00]": scontrol prints it in its own time zone; the playbook runs it with TZ=UTC.
_STAMP_RE = re.compile(r"\[[^\]@]*@(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\]\s*$")


def policy_errors(policy):
    """Every problem of the remediation policy ({grace, backoff, max_concurrent, max_reboots})."""
    if not isinstance(policy, dict):
        return ["the remediation policy must be a mapping of %s" % ", ".join(sorted(DEFAULTS))]
    errors = ["%s is not a remediation setting; allowed: %s" % (key, ", ".join(sorted(DEFAULTS)))
              for key in sorted(set(policy) - set(DEFAULTS), key=str)]
    for key, low in (("grace", 0), ("backoff", 0), ("max_concurrent", 1), ("max_reboots", 1)):
        value = policy.get(key, DEFAULTS[key])
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            errors.append("%s=%r must be a whole number of at least %d" % (key, value, low))
    return errors


def _epoch(text):
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))


def reason_time(record):
    """When slurmctld recorded the node's reason (epoch seconds, the stamp read as UTC), or None."""
    match = _STAMP_RE.search(record.get("Reason", "") or "")
    return _epoch(match.group(1)) if match else None


def slurmd_start(record):
    """When the node's slurmd last registered a start (SlurmdStartTime, read as UTC), or None."""
    try:
        return _epoch(record.get("SlurmdStartTime", ""))
    except ValueError:
        return None


def ledger(annotations):
    """The remediation ledger of a BareMetalHost ({reboots, last, reason}), or None."""
    match = _LEDGER_RE.match(str((annotations or {}).get(LEDGER) or ""))
    if not match:
        return None
    return {"reboots": int(match.group(1)), "last": int(match.group(2)), "reason": match.group(3)}


def ledger_text(reboots, last, reason):
    return "reboots=%d last=%d reason=%s" % (reboots, last, reason)


def problem(record):
    """(kind, why) of a node's record: kind "down" (DOWN or NOT_RESPONDING), "health" (drained by its
    health check), "back" (drained by a remediation and responding again), or None when nothing is
    wrong that remediation acts on (including a drain by anyone else)."""
    base, flags = scontrol.state_flags(record.get("State", ""))
    reason = node_state.drain_reason(record)
    if base == "DOWN" or "NOT_RESPONDING" in flags:
        return "down", "%s (%s)" % (record.get("State"), reason or "no reason")
    if health.drained_by_check(record):
        return "health", reason
    if "DRAIN" in flags and reason.startswith(REASON_PREFIX):
        return "back", reason
    return None, None


def decide(names, nodes, hosts, now, policy=None):
    """What to do for each named bare-metal node: a list of {node, action, why, ...}, one per node, in
    name order. nodes: {name: scontrol record}; hosts: {name: {name, namespace, state (provisioning),
    annotations}} of the nodes that are BareMetalHosts; now: epoch seconds.

    Actions: reboot (drain: whether the node needs draining first; reboots: this one's number),
    resume (a node a remediation drained, responding again), forget (healthy for a back-off since its
    last power-cycle: its ledger goes), leave (max_reboots power-cycles did not heal it), wait (jobs,
    grace, back-off, or the concurrency limit), report (nothing this can do: no record, no
    BareMetalHost, a BareMetalHost not provisioned), none (healthy)."""
    policy = dict(DEFAULTS, **(policy or {}))
    out, candidates = [], []
    active = sum(1 for name in names if name in hosts and _in_backoff(ledger(hosts[name].get("annotations")), now, policy))
    for name in sorted(names):
        record, host = nodes.get(name), hosts.get(name)
        history = ledger(host.get("annotations")) if host else None
        entry = {"node": name, "host": host and host.get("name"), "namespace": host and host.get("namespace")}
        if record is None:
            out.append(dict(entry, action="report", why="slurmctld has no record of %s" % name))
            continue
        kind, why = problem(record)
        if kind is None:
            if history and not _in_backoff(history, now, policy):
                out.append(dict(entry, action="forget", why="healthy %ds after its last power-cycle" % (now - history["last"])))
            else:
                out.append(dict(entry, action="none", why="healthy"))
            continue
        if kind == "back":
            # right after a power-cycle slurmctld has not noticed yet: the record still looks responding, with
            # the old slurmd's start; back means a slurmd started after the drain and the power-cycle
            started = slurmd_start(record)
            since = max([t for t in (reason_time(record), history and history["last"]) if t] or [0])
            if started is None or started < since:
                out.append(dict(entry, action="wait", why="%s; slurmd has not started since %ds ago"
                                % (why, now - since)))
            else:
                out.append(dict(entry, action="resume", why="responding again after %s" % why))
            continue
        since = reason_time(record)
        if node_state.is_busy(record):
            out.append(dict(entry, action="wait", why="%s, and running jobs: left alone until they end" % why))
        elif host is None:
            out.append(dict(entry, action="report", why="%s, and not a Metal3 host (SSH only): not touched" % why))
        elif since is None or now - since < policy["grace"]:
            out.append(dict(entry, action="wait", why="%s, for %s of a %ds grace period"
                            % (why, "%ds" % (now - since) if since is not None else "an unknown time", policy["grace"])))
        elif _in_backoff(history, now, policy):
            out.append(dict(entry, action="wait", why="%s, power-cycled %ds ago (back-off %ds)"
                            % (why, now - history["last"], policy["backoff"])))
        elif history and history["reboots"] >= policy["max_reboots"]:
            out.append(dict(entry, action="leave", why="%s, and %d power-cycles did not heal it: left drained"
                            % (why, history["reboots"])))
        elif host.get("state") not in REBOOTABLE:
            out.append(dict(entry, action="report", why="%s, and its BareMetalHost is %s, not provisioned: not touched"
                            % (why, host.get("state") or "in no state")))
        else:
            reboots = (history["reboots"] if history else 0) + 1
            candidates.append(dict(entry, action="reboot", why=why, since=since, reboots=reboots,
                                   drain=not node_state.is_drain(record),
                                   reason="%s power-cycle %d of %d: %s" % (REASON_PREFIX, reboots, policy["max_reboots"], why),
                                   ledger=ledger_text(reboots, now, why)))
    room = max(0, policy["max_concurrent"] - active)
    for index, candidate in enumerate(sorted(candidates, key=lambda c: (c["since"], c["node"]))):
        if index >= room:
            candidate = dict((k, v) for k, v in candidate.items() if k in ("node", "host", "namespace", "why"))
            candidate.update(action="wait", why="%s; %d host(s) in remediation already (max_concurrent %d)"
                             % (candidate["why"], active + room, policy["max_concurrent"]))
        out.append(candidate)
    return sorted(out, key=lambda entry: entry["node"])


def _in_backoff(history, now, policy):
    return bool(history) and now - history["last"] < policy["backoff"]
