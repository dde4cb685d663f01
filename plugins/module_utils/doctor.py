# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The paths a hybrid Slurm cluster needs, per network mode, and the doctor's report.

Pure functions: which TCP paths a member must be able to open (built from the cluster model
and slurmctld's node table), and how to print what the probes saw.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import math
import re
import shlex

from ansible_collections.slime.hybrid.plugins.module_utils import gres, scontrol
from ansible_collections.slime.hybrid.plugins.module_utils.worker import SOURCES_CHAIN, iptables_restore
from ansible_collections.slime.hybrid.plugins.module_utils.worker_drift import chain_rules


def _in_cidrs(address, cidrs):
    try:
        addr = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(addr in ipaddress.ip_network(cidr, strict=False) for cidr in cidrs)


def share(names, members, member):
    """The nodes of `names` that `member` probes when the probes are spread over `members` (the
    bare-metal hosts running the doctor): every node is probed from exactly one member, never
    from itself, and each member probes len(names) / len(members) of them, give or take one,
    instead of all of them. The same inputs give the same share on every member."""
    members = sorted(set(members))
    if member not in members:
        raise ValueError("%s is not one of the members %s" % (member, ", ".join(members)))
    mine = []
    for index, name in enumerate(sorted(names)):
        prober = members[index % len(members)]
        if prober == name:  # never from itself: the next member takes it
            prober = members[(index + 1) % len(members)]
        if prober == member and name != member:  # (a lone member has no next one)
            mine.append(name)
    return mine


def baremetal_checks(model, nodes, member, peers=None):
    """TCP paths a bare-metal member must open: conf server, slurmctld, every other slurmd (or
    only those of peers, a share() of them).

    model: normalized cluster model (its pod_cidrs explain a NodeAddr bare metal cannot route
    to); nodes: parsed `scontrol show node` ({name: record}); member: this host's Slurm node name.
    """
    mode = model["network_mode"]
    ctl = model["controller"]
    pod_cidrs = model["pod_cidrs"]
    checks = [{
        "name": "%s -> conf server %s" % (member, model["conf_server"]),
        "host": model["conf_server_address"],
        "port": model["conf_server_port"],
        "hint": ("slurmctld's conf server does not answer: check the controller Service (NodePort %d, "
                 "externalTrafficPolicy: Local) and that the controller pod runs on %s"
                 % (model["nodeport"]["port"], model["nodeport"]["address"])) if mode != "routed" else
                ("the controller pod %s is not reachable: check this host's route to the pod network "
                 "(slurm_node routes) and that the CNI forwards external traffic to pods" % ctl["address"]),
    }, {
        "name": "%s -> slurmctld %s:%d" % (member, ctl["host"], ctl["port"]),
        "host": ctl["host"],
        "port": ctl["port"],
        "hint": ("%s must resolve to %s and reach slurmctld: re-run site.yml (tags firewall) to restore "
                 "/etc/hosts and %s" % (ctl["host"], ctl["address"],
                                        "the route to the pod network" if mode == "routed" else "the OUTPUT DNAT")),
    }]
    for name in sorted(nodes):
        if name == member or (peers is not None and name not in peers):
            continue
        addr = nodes[name].get("NodeAddr", "")
        if mode == "nat" and _in_cidrs(addr, pod_cidrs):
            hint = ("%s's NodeAddr %s is a pod IP bare metal cannot route to: run playbooks/fix_nodeaddr.yml "
                    "(and on a timer: a re-registration resets it)" % (name, addr))
        elif mode == "routed" and _in_cidrs(addr, pod_cidrs):
            hint = "no path to pod IP %s of %s: check the route to its node's pod CIDR" % (addr, name)
        else:
            hint = ("slurmd on %s does not answer at NodeAddr %s:%d: check that it runs, the hostPort "
                    "or firewall for %d, and that its NodeAddr is the address it is reachable at"
                    % (name, addr, model["slurmd_port"], model["slurmd_port"]))
        checks.append({"name": "%s -> slurmd %s (NodeAddr %s:%d)" % (member, name, addr, model["slurmd_port"]),
                       "host": addr, "port": model["slurmd_port"], "hint": hint})
    return checks


# What a bare-metal host whose /etc/hosts (and OUTPUT DNAT) still name the controller pod's old
# address keeps, per network mode, once the pod was rescheduled with a new pod IP (lab-tested in
# nat and routed: fault g of molecule faults and routed; docs/faults.md).
_VIA_NODEPORT = ("this host still reaches slurmctld through the old address's DNAT to the NodePort, which "
                 "follows the pod as long as it runs on the node at {node}; if the pod moved to another node, "
                 "that path is gone too")
MOVED_CONTROLLER = {
    "nat": _VIA_NODEPORT,
    "hostnetwork": _VIA_NODEPORT,
    "routed": ("this host reaches no slurmctld at the old address: slurmd cannot register, the end of its jobs "
               "cannot be reported (they stay unfinished) and srun from here fails"),
}


def _row(name, expected, observed, ok, hint):
    """A report row that is not a probe's; its hint only when the path is broken."""
    return {"name": name, "expected": expected, "observed": observed, "ok": ok, "hint": "" if ok else hint}


def _addresses(getent_output):
    """The addresses `getent ahostsv4 NAME` printed, sorted, each once."""
    return sorted({line.split()[0] for line in (getent_output or "").splitlines() if line.strip()})


def controller_address(model, resolved, member):
    """Report row: the controller's name, as this host resolves it (`getent ahostsv4` output), must
    be the controller pod's address the cluster reports now (it changes when the pod is rescheduled)."""
    ctl = model["controller"]
    found = _addresses(resolved)
    return _row("%s: %s resolves to the controller pod" % (member, ctl["host"]), ctl["address"],
                ",".join(found) or "unresolved", found == [ctl["address"]],
                "%s resolves to %s on %s, but the controller pod is at %s now (rescheduled with a new pod IP?): run "
                "site.yml, which rewrites /etc/hosts and the OUTPUT DNAT from what it discovers. Until then %s"
                % (ctl["host"], ",".join(found) or "nothing", member, ctl["address"],
                   MOVED_CONTROLLER[model["network_mode"]].format(node=(model.get("nodeport") or {}).get("address"))))


def controller_addresses(model, resolved, member):
    """Report rows: each controller's name as this host resolves it. resolved: {name: `getent ahostsv4 name`
    output} for controller.host and each backup's host. The controller's and every backup's with a pod
    must be their pods' addresses now; a backup no pod answers to (a slurmctld outside the cluster, or
    none) is not mapped here, so its name must resolve some other way."""
    resolved = resolved if isinstance(resolved, dict) else {model["controller"]["host"]: resolved}
    rows = [controller_address(model, resolved.get(model["controller"]["host"], ""), member)]
    for backup in model["controller"]["backups"]:
        found = _addresses(resolved.get(backup["host"]))
        observed = ",".join(found) or "unresolved"
        if backup["address"]:
            rows.append(_row("%s: %s resolves to the backup controller's pod" % (member, backup["host"]), backup["address"],
                             observed, found == [backup["address"]],
                             "%s resolves to %s on %s, but the backup controller's pod is at %s now: run site.yml, which "
                             "rewrites /etc/hosts and the OUTPUT DNAT from what it discovers"
                             % (backup["host"], ",".join(found) or "nothing", member, backup["address"])))
        else:
            rows.append(_row("%s: %s (a backup SlurmctldHost) resolves" % (member, backup["host"]),
                             "an address (no pod answers to it)", observed, bool(found),
                             "slurm.conf names the backup slurmctld %s, but no controller pod answers to %s and the "
                             "name resolves to nothing on %s: bare metal cannot fail over to it, and every Slurm command "
                             "there waits for the lookup first (Debian's packages retry it ten times, a second apart). "
                             "Run its pod (the controller's replicas), give the name an address (DNS), or remove the "
                             "SlurmctldHost line" % (backup["host"], " or ".join([backup["host"]] + backup["aliases"]), member)))
    return rows


_PING_RE = re.compile(r"^Slurmctld\((\S+)\) at (\S+) is (UP|DOWN)$", re.M)


def controller_ping(output, model, member):
    """Report rows from `scontrol ping` on a bare-metal host: Slurm pings each SlurmctldHost at its ADDRESS,
    never through SlurmctldAddr, and prints "Slurmctld(primary|backup|backupN) at NAME is UP|DOWN" per
    entry (Slurm 26.05 src/scontrol/scontrol.c, _print_ping). Each must be UP: a backup in standby answers."""
    ctl = model["controller"]
    entries = [ctl] + ctl["backups"]
    seen = _PING_RE.findall(output or "")
    rows = []
    for mode, name, state in seen:
        entry = next((e for e in entries if name in [e["host"]] + e["aliases"]), None)
        if entry is ctl:
            hint = "the primary slurmctld does not answer %s at %s: see its conf server and slurmctld paths" % (member, name)
        elif entry is None:
            hint = "slurm.conf names controller %s, which the cluster model does not know: run site.yml" % name
        elif entry["address"]:
            hint = ("backup slurmctld %s (pod at %s, node %s) does not answer %s through the DNAT to its node's NodePort: "
                    "its pod must run, be Ready and be selected by the controller Service (externalTrafficPolicy Local "
                    "answers on the pod's own node only)" % (name, entry["address"], entry["node_address"], member))
        else:
            hint = ("no controller pod answers to backup slurmctld %s and nothing answers for it from %s: the cluster cannot "
                    "fail over to it from here" % (name, member))
        rows.append(_row("%s: scontrol ping, %s slurmctld %s" % (member, mode, name), "UP", state, state == "UP", hint))
    if len(seen) != len(entries):
        rows.append(_row("%s: scontrol ping answers for every SlurmctldHost" % member, "%d controllers" % len(entries),
                         "%d" % len(seen), False,
                         "scontrol ping on %s listed %d controllers, the cluster's slurm.conf names %d: %s"
                         % (member, len(seen), len(entries), (output or "no output").strip()[:200])))
    return rows


def controller_findings(nodes, model=None, stale=None):
    """What slurmctld itself reports: nodes it cannot reach (NOT_RESPONDING) are broken paths; with the
    model, each node of its gpus section whose record has other GPUs than the model's, or that slurmctld
    drained for a registration that did not match its configuration (INVALID_REG: fewer GPUs found than
    stated), is one too. stale: {name: why} of the pod workers' records no NodeSet backs any more
    (slinky.stale_workers): each is said to be that, not a node slurmctld cannot reach."""
    stale = stale or {}
    findings = [_row("slurmctld record %s" % name, "a pod backs it", "no pod", False, "%s: site.yml removes it" % stale[name])
                for name in sorted(stale) if name in (nodes or {})]
    nodes = dict((name, record) for name, record in (nodes or {}).items() if name not in stale)
    for name in sorted(nodes) if model and model.get("gpus") else []:
        groups = gres.node_groups(model["gpus"], name)  # the model's GPU nodes (pod workers have none there)
        if not groups:
            continue
        drift = gres.record_drift(name, groups, nodes[name])  # INVALID_REG included
        observed = "%s %s" % (nodes[name].get("Gres", "(null)"), nodes[name].get("State", ""))
        findings.append(_row("slurmctld GPUs of %s" % name, gres.stated(groups), observed, not drift,
                             "%s: check the GPUs and their driver on the host, then re-run site.yml, which renews "
                             "the node's record" % "; ".join(drift)))
    for name in sorted(nodes):
        state = nodes[name].get("State", "")
        base, flags = scontrol.state_flags(state)
        ok = "NOT_RESPONDING" not in flags and base not in ("DOWN", "UNKNOWN")
        findings.append(_row("slurmctld -> slurmd %s (NodeAddr %s)" % (name, nodes[name].get("NodeAddr", "")),
                             "responding", "responding" if ok else state, ok,
                             "slurmctld cannot reach %s at NodeAddr %s:6818 (state %s, reason: %s)"
                             % (name, nodes[name].get("NodeAddr", ""), state, nodes[name].get("Reason", "-"))))
    return findings


def gpu_devices(stats, model, member):
    """Report rows: the GPU device files the model gives this host, as ansible.builtin.stat found them (the
    results of a loop over gres.node_groups' files): a missing one stops slurmd (Slurm 26.05 waits 20 s for a
    gres.conf File=, then exits), so the node stops responding; [] for a host without GPUs."""
    files = [path for group in gres.node_groups(model.get("gpus"), member) for path in group["files"]]
    if not files:
        return []
    found = dict((result.get("item"), result.get("stat") or {}) for result in stats or [])
    missing = [path for path in files if not (found.get(path, {}).get("ischr") or found.get(path, {}).get("isblk"))]
    return [_row("%s GPU devices" % member, ",".join(files), "not devices: " + ",".join(missing) if missing else "devices",
                 not missing, "%s: %s not a device (the GPU driver not loaded, or its device files not made): slurmd does "
                 "not start without them; fix the host, then re-run site.yml" % (member, ", ".join(missing)))]


REPORT_COLUMN_MAX = 60


def report(results):
    """(table text, broken results) for probe results and findings."""
    rows = [("PATH", "EXPECTED", "OBSERVED", "")]
    for result in results:
        rows.append((result["name"], result["expected"], result["observed"], "ok" if result["ok"] else "BROKEN"))
    # A long value (a host's list of sources) runs past its column instead of widening it for every row.
    widths = [max([len(row[column]) for row in rows if len(row[column]) <= REPORT_COLUMN_MAX] or [0]) for column in range(3)]
    lines = ["  ".join(row[column].ljust(widths[column]) for column in range(3)) + "  " + row[3] for row in rows]
    broken = [result for result in results if not result["ok"]]
    return "\n".join(line.rstrip() for line in lines), broken


# The share of SrunPortRange in use on a submit host from which the doctor reports it: the
# next sruns there (3 ports and more each, docs/cluster-model.md) are about to fail.
SRUN_PORTS_NEAR_FULL = 0.8


def srun_port_use(listening, model, member, near_full=SRUN_PORTS_NEAR_FULL):
    """Report row: the ports of SrunPortRange that listen on a submit host, read with `ss -Htln`
    (listening: that command's result, rc and stdout), against the range. Slurm reports this
    nowhere; srun fails at once when none is left ("all ports in range ... exhausted"). Broken
    from near_full of the range on; a host where ss could not run is reported, not broken."""
    srun = model["srun_port_range"]
    name = "%s: srun ports listening (SrunPortRange %s)" % (member, srun["conf"])
    limit = int(math.ceil(round(srun["size"] * near_full, 6)))
    expected = "fewer than %d of %d" % (limit, srun["size"])
    if not listening or listening.get("rc") != 0:
        detail = ((listening or {}).get("stderr") or (listening or {}).get("msg") or "").strip() or "no output"
        return _row(name, expected, "not read (ss: %s)" % detail.splitlines()[-1][:80], True, "")
    used = set()
    for line in (listening.get("stdout") or "").splitlines():
        fields = line.split()
        port = fields[3].rsplit(":", 1)[-1] if len(fields) > 3 else ""
        if port.isdigit() and srun["first"] <= int(port) <= srun["last"]:
            used.add(int(port))  # a port bound on IPv4 and IPv6 is one port
    return _row(name, expected, "%d of %d" % (len(used), srun["size"]), len(used) < limit,
                "%d of the %d ports of SrunPortRange listen on %s (each running srun holds 3 or more): the next "
                "sruns there fail at once with 'all ports in range exhausted'. Raise srun_concurrency and "
                "srun_port_range together (docs/cluster-model.md, Sizing SrunPortRange) or spread the sruns "
                "over more submit hosts" % (len(used), srun["size"], member))


def inbound_sources(listing, model, member, chain=SOURCES_CHAIN):
    """Report row: the sources this host lets in to slurmd's port, the srun range and the node exporter
    (`iptables -S` of the sources chain: listing is that command's result), against the model's. The chain must hold
    the rules the plan writes (worker.iptables_restore), in their order, as the drift read compares them; any other
    rule (an accept with no source added by hand) breaks the row. A host where iptables could not be read is
    reported, not broken."""
    name = "%s: sources let in to slurmd's and srun's ports" % member
    expected = ", ".join("%s %s" % (source["kind"], source["cidr"]) for source in model["sources"]) + "; others refused"
    if not model["worker"]["manage_firewall"]:
        return _row(name, "any (worker.manage_firewall false: the site's own rules)", "not read", True, "")
    if not listing or listing.get("rc") != 0:
        detail = ((listing or {}).get("stderr") or (listing or {}).get("msg") or "").strip() or "no output"
        return _row(name, expected, "not read (iptables: %s)" % detail.splitlines()[-1][:80], True, "")
    present = [shlex.split(line) for line in (listing.get("stdout") or "").splitlines() if line.startswith("-A %s " % chain)]
    ok = present == chain_rules(iptables_restore(model)).get(("filter", chain), [])
    found = []
    for words in present:
        if words[-1] != "ACCEPT" or "-i" in words:  # the refusal, and the host itself
            continue
        comment = words[words.index("--comment") + 1].split() if "--comment" in words else []
        kind = comment[1] if len(comment) > 1 and comment[0] == "slime.hybrid/src" else "unnamed"
        found.append("%s %s" % (kind, words[words.index("-s") + 1] if "-s" in words else "any"))
    refused = any(words[-4:] == ["-j", "REJECT", "--reject-with", "tcp-reset"] for words in present)
    observed = "the same" if ok else (", ".join(found) or "none") + ("; others refused" if refused else "; others not refused")
    return _row(name, expected, observed, ok,
                "%s lets in other sources than the model's (chain %s): re-run site.yml (tags firewall); a source that must "
                "reach these ports goes in slime_cluster.inbound_sources" % (member, chain))


def srun_results(command_results, member):
    """Results of `srun -N1 -w NODE true` launched from member (Ansible loop results) as report rows."""
    rows = []
    for result in command_results or []:
        node = result.get("item")
        ok = result.get("rc") == 0
        detail = (result.get("stderr") or result.get("msg") or "").strip().splitlines()
        rows.append(_row("%s -> srun step on %s (slurmd there, srun ports back here)" % (member, node),
                         "completed", "completed" if ok else "failed rc=%s" % result.get("rc"), ok,
                         "a job step from %s cannot run on %s (%s): check NodeAddr of %s, its 6818 and the "
                         "SrunPortRange in both directions (hostPorts, firewall, routes)"
                         % (member, node, detail[-1] if detail else "no output", node)))
    return rows
