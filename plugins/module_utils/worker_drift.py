# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host side of a bare-metal worker: what differs between the host and its plan (worker.plan, computed
on the control node and handed over as data), read in one call (module slurm_node_info over
host_state.observe()), and what the role cannot make right there. The role applies only the parts that
differ, so a converged host costs one module run instead of one per file, rule and check. It runs on
the host, so it carries neither the cluster model nor the plan's code: the files and units it names
are defined here, and worker.py takes them from here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import hashlib
import re
import shlex

from ansible_collections.slime.hybrid.plugins.module_utils import gres, health, node_features, scontrol, slurmd

DROPIN = "/etc/systemd/system/slurmd.service.d/10-slime-hybrid.conf"
ROUTES_UNIT = "/etc/systemd/system/slime-hybrid-routes.service"
ROUTES_SERVICE = ROUTES_UNIT.rsplit("/", 1)[1]
HOSTS_FILE = "/etc/hosts"
SLURMD = "slurmd"
# EL's default firewall: its nftables table rejects what its zone does not allow, whatever the
# iptables chains accept, so slurmctld could not reach slurmd (6818) nor srun its ports.
FIREWALLD = "firewalld"
FIREWALLD_CONFLICT = ("firewalld is active: it rejects slurmd's port and the srun ports that the role's iptables "
                      "chains accept; open them in its zone and stop it, or set the worker setting manage_firewall "
                      "to false and open them there yourself")


def conflicts(plan, observed):
    """What the role cannot make right on this host and refuses before changing it."""
    active = observed["units"].get(FIREWALLD, {}).get("ActiveState") == "active"
    out = [FIREWALLD_CONFLICT] if plan["firewall"] and active else []
    return out + (gres.device_problems(plan["gpus"]["groups"], observed["files"]) if plan["gpus"] else [])


def observe_targets(plan, node_name):
    """What host_state.observe() reads for this plan."""
    files = [plan["key"]["path"], DROPIN, ROUTES_UNIT, HOSTS_FILE] + plan["directories"]
    files += [part["path"] for part in (plan["source"], plan["source_key"]) if part]
    files += plan["gpus"]["files"] if plan["gpus"] else []
    files += [health.PROGRAM, health.SETTINGS_FILE]
    return {
        "package_manager": plan["package_manager"],
        "files": files,
        "user": plan["user"]["name"],
        "hosts_file": HOSTS_FILE,
        "routes": bool(plan["routes"]),
        "units": ([SLURMD] + ([ROUTES_SERVICE] if plan["routes_unit"] else []) + ([FIREWALLD] if plan["firewall"] else [])
                  + ([plan["node_exporter"]["service"]] if plan["node_exporter"] else [])),
        "iptables_tables": ["nat", "filter"] if plan["firewall"] else [],
        "node": node_name,
    }


def _file_drift(observed, path, owner, group, mode, content=None, sha256=None):
    state = observed["files"].get(path) or {"exists": False}
    if not state["exists"] or state.get("kind") != "file":
        return ["%s is missing" % path]
    out = []
    if sha256 is None and content is not None:
        sha256 = hashlib.sha256(content.encode("utf-8")).hexdigest()
    if sha256 is not None and state.get("sha256") != sha256:
        out.append("%s has other content" % path)
    seen = (state.get("owner"), state.get("group"), state.get("mode"))
    if seen != (owner, group, mode):
        out.append("%s is %s:%s %s, not %s:%s %s" % ((path,) + seen + (owner, group, mode)))
    return out


def _installed(db, name, version=""):
    """Whether the package database (host_state.dpkg or .rpm) has name installed, at version (a glob) if given."""
    found = db["packages"].get(name)
    if not found or found["status"] != "ii":
        return False
    return not version or fnmatch.fnmatch(found["version"], version)


def gpu_record_drift(plan, node_name, record):
    """Why the GPUs of slurmctld's record of the node are not its plan's (gres.record_drift); [] where the
    model has no gpus section: the collection then leaves GRES alone."""
    return gres.record_drift(node_name, plan["gpus"]["groups"], record) if plan["gpus"] else []


def jump_rule(jump):
    """A jump of the plan (worker.JUMPS) as `iptables -t TABLE -S` lists it, in words."""
    return ["-A", jump["chain"], "-p", jump["protocol"], "-m", "comment", "--comment", jump["comment"], "-j", jump["jump"]]


def chain_rules(restore):
    """The chains an iptables-restore file declares, each with its rules in order: {(table, chain): [words]}."""
    chains, table = {}, None
    for line in restore.splitlines():
        if line.startswith("*"):
            table = line[1:]
        elif line.startswith(":"):
            chains[(table, line[1:].split()[0])] = []
        elif line.startswith("-A "):
            words = shlex.split(line)
            chains[(table, words[1])].append(words)
    return chains


def _firewall_drift(firewall, observed, db):
    """What firewall.yml would change: a package to install; a chain of the rules file that is missing, or
    whose rules are not the file's (its restore replaces them all); a jump into a chain to add."""
    out = ["package %s is not installed" % name for name in firewall["packages"] if not _installed(db, name)]
    wanted = chain_rules(firewall["rules"]["content"])
    for table in sorted(set(key[0] for key in wanted)):
        listing = observed["iptables"].get(table)
        if listing is None:
            out.append("iptables -t %s -S failed" % table)
            continue
        lines = listing.splitlines()
        present = [shlex.split(line) for line in lines if line.startswith("-A ")]
        for chain in sorted(key[1] for key in wanted if key[0] == table):
            rules, ours = wanted[(table, chain)], [rule for rule in present if rule[1] == chain]
            if "-N %s" % chain not in lines:
                out.append("chain %s/%s is missing" % (table, chain))
            out += ["rule missing: %s" % " ".join(rule) for rule in rules if rule not in ours]
            out += ["rule not in the plan: %s" % " ".join(rule) for rule in ours if rule not in rules]
            if ours != rules and sorted(ours) == sorted(rules):
                out.append("chain %s/%s holds the plan's rules in another order" % (table, chain))
        jumps = [jump_rule(jump) for jump in firewall["jumps"] if jump["table"] == table]
        out += ["rule missing: %s" % " ".join(rule) for rule in jumps if rule not in present]
    return out


def _unit_drift(observed, name):
    """A unit that is not active and enabled, as systemd_service (state: started, enabled) would find it."""
    unit = observed["units"].get(name, {})
    if unit.get("ActiveState") != "active" or unit.get("UnitFileState") != "enabled":
        return ["%s is %s/%s" % (name, unit.get("ActiveState"), unit.get("UnitFileState"))]
    return []


def _route_drift(plan, observed):
    if plan["routes_unit"] is None:
        return ["%s is left from network_mode routed" % ROUTES_UNIT] if observed["files"][ROUTES_UNIT]["exists"] else []
    part = plan["routes_unit"]
    out = _file_drift(observed, part["path"], "root", "root", part["mode"], part["content"]) + _unit_drift(observed, ROUTES_SERVICE)
    table = (observed["routes"] or "").splitlines()
    for route in plan["routes"]:
        if not any(line.split()[:1] == [route["cidr"]] and ("via %s " % route["via"]) in line + " " for line in table):
            out.append("no route to %s via %s" % (route["cidr"], route["via"]))
    return out


def _node_drift(node_name, features, record):
    if record is None:
        return ["slurmctld does not list %s (or scontrol failed)" % node_name]
    out = []
    # drained by its own health check, the node is registered: its health is reported, not converged
    state = record.get("State", "")
    if not scontrol.is_available(state.replace("+DRAIN", "") if health.drained_by_check(record) else state):
        out.append("%s is %s" % (node_name, state))
    changes = node_features.plan({node_name: record}, {node_name: features})[0]
    if changes:
        out.append("%s has features %s" % (node_name, ",".join(changes[node_name]["before"]["AvailableFeatures"])))
    return out


def drift(plan, observed, node_name, features, key_sha256):
    """{part: [reasons]} for every part of the plan the host does not match; {} when it is converged.
    Parts: dpkg (apt's database only), user, source, packages, directories, key, firewall, hosts, routes, dropin, health, gpus,
    metrics (the node exporter), service, restart (slurmd runs an older key, drop-in or unit than the disk holds: a restart a
    killed run never made), node (slurmctld's record: registered, available, with the wanted features). Each
    says what the role's tasks for that part would find to change, as their modules decide it."""
    db = observed["packages"]
    out = {}
    out["dpkg"] = ["dpkg left %s unfinished" % ", ".join(db["unfinished"])] if db["unfinished"] else []
    if db["journal"]:
        out["dpkg"].append("/var/lib/dpkg/updates holds an unfinished journal")
    user, account = plan["user"], observed["account"]
    if account["group"] is None or account["group"]["gid"] != user["gid"]:
        out["user"] = ["group %s is %s, not gid %d" % (user["name"], account["group"], user["gid"])]
    wanted = {"uid": user["uid"], "gid": user["gid"], "home": user["home"], "shell": user["shell"]}
    if account["user"] != wanted:
        out.setdefault("user", []).append("user %s is %s, not %s" % (user["name"], account["user"], wanted))
    part = plan["source"]
    out["source"] = (_file_drift(observed, part["path"], "root", "root", part["mode"], part["content"])
                     if part else [])
    if plan["source_key"]:
        # get_url fetches the key only when the file is missing, and sets its mode
        key_file = observed["files"][plan["source_key"]["path"]]
        if not key_file["exists"] or key_file.get("mode") != "0644":
            out["source"].append("%s is %s" % (plan["source_key"]["path"], key_file.get("mode", "missing")))
    worker = plan["worker"]
    out["packages"] = ["package %s is not installed" % spec for spec, name in zip(plan["packages"], worker["packages"])
                       if not _installed(db, name, worker["package_version"])]
    if not out["packages"]:
        compat = slurmd.version_compat_error(observed["slurmd_version"] or "none", plan["slurmctld_version"],
                                             plan["slurmd_oldest"])
        out["packages"] = ["slurmd -V: %s" % compat] if compat else []
    out["directories"] = [
        "%s is not a root:root 0755 directory" % path for path in plan["directories"]
        if [observed["files"][path].get(field) for field in ("kind", "owner", "group", "mode")] != ["directory", "root", "root", "0755"]]
    key = plan["key"]
    out["key"] = _file_drift(observed, key["path"], key["owner"], key["group"], key["mode"], sha256=key_sha256)
    out["firewall"] = _firewall_drift(plan["firewall"], observed, db) if plan["firewall"] else []
    out["hosts"] = ["%s has %r, which maps a controller's name otherwise or is no longer wanted" % (HOSTS_FILE, line)
                    for line in observed["hosts_lines"] if re.search(plan["hosts"]["stale"], line)]
    for entry in plan["hosts"]["entries"]:
        if entry["line"] not in observed["hosts_lines"]:
            out["hosts"].append("%s does not map %s as %r" % (HOSTS_FILE, entry["line"].split()[1], entry["line"]))
    if observed["files"][HOSTS_FILE]["exists"]:
        out["hosts"] += _file_drift(observed, HOSTS_FILE, "root", "root", "0644")
    out["routes"] = _route_drift(plan, observed)
    dropin = plan["dropin"]
    out["dropin"] = _file_drift(observed, dropin["path"], "root", "root", dropin["mode"], dropin["content"])
    out["health"] = ([reason for part in plan["health"]["files"]
                      for reason in _file_drift(observed, part["path"], "root", "root", part["mode"], part["content"])]
                     or ["%s is left from health checks now off" % path for path in (health.PROGRAM, health.SETTINGS_FILE)
                         if not plan["health"]["files"] and observed["files"][path]["exists"]])
    exporter = plan["node_exporter"]
    out["metrics"] = ((["package %s is not installed" % exporter["package"]] if not _installed(db, exporter["package"]) else [])
                      + _unit_drift(observed, exporter["service"])) if exporter else []
    unit = observed["units"].get(SLURMD, {})
    out["service"] = _unit_drift(observed, SLURMD)
    out["restart"] = ["systemd has not loaded slurmd's unit as it is on disk"] if unit.get("NeedDaemonReload") == "yes" else []
    newest = max([observed["files"][path].get("mtime", 0) for path in (key["path"], dropin["path"])])
    if unit.get("started") is not None and newest > unit["started"]:
        out["restart"].append("slurmd started before its key or drop-in last changed")
    # A registration that reached slurmctld through SNAT (a NodePort Service with
    # externalTrafficPolicy Cluster, a masquerading hop) leaves slurmctld an address that is not
    # this host's: it stays until slurmd registers again, so only a restart heals it.
    node_addr = (observed["node"] or {}).get("NodeAddr")
    if node_addr and observed.get("addresses") and node_addr not in observed["addresses"]:
        out["restart"].append("slurmctld records NodeAddr %s, not an address of this host (%s): the registration "
                              "was translated on its way" % (node_addr, ", ".join(observed["addresses"])))
    out["node"] = _node_drift(node_name, features, observed["node"])
    # GPUs, where the model has a gpus section: declared device files missing (conflicts() refuses the host),
    # or a record whose GPUs are not the model's (only a new record takes others: tasks/gpus.yml renews it)
    if plan["gpus"]:
        out["gpus"] = (gres.device_problems(plan["gpus"]["groups"], observed["files"])
                       + gpu_record_drift(plan, node_name, observed["node"]))
    return dict((part, reasons) for part, reasons in out.items() if reasons)
