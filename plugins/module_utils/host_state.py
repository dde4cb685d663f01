# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading, in one pass, what a bare-metal Slurm worker is made of on the host itself.

``observe(targets, run)`` returns plain data about files, the slurm user, the packages (dpkg or rpm), iptables,
routes, systemd units, slurmd and slurmctld's record of the node (parsed); worker_drift.drift() compares it
with the plan. Nothing here changes the host. ``run(argv)`` runs a command and returns
(rc, stdout, stderr): AnsibleModule.run_command in the module, a fake in the unit tests.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import grp
import os
import pwd
import stat
import time

from ansible_collections.slime.hybrid.plugins.module_utils.scontrol import parse_nodes
from ansible_collections.slime.hybrid.plugins.module_utils.secret_file import file_digest

SYSTEMD_PROPERTIES = ("ActiveState", "UnitFileState", "MainPID", "NeedDaemonReload")


def file_state(path):
    """exists, kind (file, directory, char, block), sha256 (files), mode as '0644', owner, group, mtime;
    {'exists': False} if absent."""
    try:
        st = os.stat(path)
    except OSError:
        return {"exists": False}
    out = {
        "exists": True,
        "kind": ("directory" if stat.S_ISDIR(st.st_mode) else "char" if stat.S_ISCHR(st.st_mode)
                 else "block" if stat.S_ISBLK(st.st_mode) else "file"),
        "mode": "%04o" % stat.S_IMODE(st.st_mode),
        "owner": _name(pwd.getpwuid, st.st_uid),
        "group": _name(grp.getgrgid, st.st_gid),
        "mtime": int(st.st_mtime),
    }
    if out["kind"] == "file":
        out["sha256"] = file_digest(path)
    return out


def _entry(lookup, key):
    """lookup(key), a pwd or grp entry; None when there is none."""
    try:
        return lookup(key)
    except KeyError:
        return None


def _name(lookup, number):
    entry = _entry(lookup, number)
    return entry[0] if entry else str(number)


def account(user, group):
    """The passwd entry of user and the group entry of group (None when absent)."""
    entry, group_entry = _entry(pwd.getpwnam, user), _entry(grp.getgrnam, group)
    return {
        "user": ({"uid": entry.pw_uid, "gid": entry.pw_gid, "home": entry.pw_dir, "shell": entry.pw_shell}
                 if entry else None),
        "group": {"gid": group_entry.gr_gid} if group_entry else None,
    }


def dpkg(run):
    """{package: {"status": 'ii', "version": ...}} for every package dpkg knows, and the packages an
    interrupted dpkg left unfinished (the test dpkg_recovery.yml makes: status half-installed,
    unpacked, half-configured, triggers awaited/pending, or reinstall required), and whether
    /var/lib/dpkg/updates holds journal entries."""
    rc, out, _err = run(["dpkg-query", "-W", "-f", "${db:Status-Abbrev}|${binary:Package}|${Version}\n"])
    packages, unfinished = {}, []
    for line in (out if rc == 0 else "").splitlines():
        abbrev, _sep, rest = line.partition("|")
        name, _sep, version = rest.partition("|")
        name = name.split(":", 1)[0]
        packages[name] = {"status": abbrev.strip(), "version": version}
        if abbrev[1:2] in ("H", "U", "F", "W", "t") or abbrev[2:3] == "R":
            unfinished.append(name)
    try:
        journal = bool(os.listdir("/var/lib/dpkg/updates"))
    except OSError:
        journal = False
    return {"packages": packages, "unfinished": sorted(unfinished), "journal": journal}


def rpm(run):
    """What dpkg() returns, from the RPM database: every installed package at its version-release
    (status 'ii', as dpkg's installed ones; for a name installed twice, e.g. kernels, the last
    listed). rpm leaves no half-configured packages for a later run to finish: unfinished is empty."""
    rc, out, _err = run(["rpm", "-qa", "--qf", "%{NAME}|%{VERSION}-%{RELEASE}\\n"])
    packages = {}
    for line in (out if rc == 0 else "").splitlines():
        name, _sep, version = line.partition("|")
        if name and version:
            packages[name] = {"status": "ii", "version": version}
    return {"packages": packages, "unfinished": [], "journal": False}


PACKAGE_DBS = {"apt": dpkg, "dnf": rpm}


def command_output(run, argv):
    """stdout of a command, or None when it fails or does not exist."""
    try:
        rc, out, _err = run(argv)
    except (OSError, IOError):
        return None
    return out if rc == 0 else None


def systemd_unit(run, unit):
    """ActiveState, UnitFileState, MainPID, NeedDaemonReload of a unit, and when its main process
    started (epoch seconds, whole, as `ps -o etimes` gives it), None when it has none."""
    out = command_output(run, ["systemctl", "show", "-p", ",".join(SYSTEMD_PROPERTIES), unit]) or ""
    props = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    props["started"] = process_started(int(props.get("MainPID") or 0))
    return props


def process_started(pid):
    """Epoch second a process started (now minus its elapsed whole seconds), None without one."""
    if pid <= 0:
        return None
    try:
        with open("/proc/%d/stat" % pid) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as handle:
            uptime = float(handle.read().split()[0])
    except (OSError, IOError, IndexError, ValueError):
        return None
    elapsed = uptime - int(fields[19]) / float(os.sysconf("SC_CLK_TCK"))
    return int(time.time()) - int(elapsed)


def addresses(ip_addr):
    """The IPv4 addresses of `ip -4 -o addr show` output."""
    return sorted(set(field.split("/")[0] for line in ip_addr.splitlines()
                      for kind, field in zip(line.split(), line.split()[1:]) if kind == "inet"))


def observe(targets, run, scontrol="scontrol", all_nodes=False):
    """Everything worker_drift.drift() compares, read once. targets: worker_drift.observe_targets(plan);
    scontrol: the command that reads slurmctld's record of the node. all_nodes: read every node's record in
    the same scontrol run (observed "nodes", for the host that also runs the pod workers' NodeAddr stage)."""
    name = targets["node"]
    records = None
    if name:
        argv = [scontrol, "show", "node", "--oneliner"] + ([] if all_nodes else [name])
        records = parse_nodes(command_output(run, argv) or "")
    observed = {
        "files": dict((path, file_state(path)) for path in targets["files"]),
        "account": account(targets["user"], targets["user"]),
        "packages": PACKAGE_DBS[targets["package_manager"]](run),
        "hosts_lines": _lines(targets["hosts_file"]),
        "routes": command_output(run, ["ip", "-4", "route", "show"]) if targets["routes"] else "",
        "addresses": addresses(command_output(run, ["ip", "-4", "-o", "addr", "show"]) or ""),
        "units": dict((unit, systemd_unit(run, unit)) for unit in targets["units"]),
        "slurmd_version": (command_output(run, ["slurmd", "-V"]) or "").strip(),
        "iptables": dict((table, command_output(run, ["iptables", "-w", "-t", table, "-S"]))
                         for table in targets["iptables_tables"]),
        # slurmctld's record of the node, parsed; None when scontrol fails or does not list it
        "node": records.get(name) if records is not None else None,
    }
    if all_nodes:
        observed["nodes"] = records or {}
    return observed


def _lines(path):
    try:
        with open(path) as handle:
            return handle.read().splitlines()
    except (OSError, IOError):
        return []
