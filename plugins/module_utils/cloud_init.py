# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A worker's plan (worker.plan) as cloud-init user-data: the very same data the SSH path applies
(roles/slurm_node), which roles/metal3_hosts hands to Metal3, so both paths make the same host."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import shlex

from ansible_collections.slime.hybrid.plugins.module_utils.worker import INSTALL_COMMAND, REFRESH_COMMAND, jump_command
from ansible_collections.slime.hybrid.plugins.module_utils.worker_drift import FIREWALLD, FIREWALLD_CONFLICT, ROUTES_SERVICE


def device_check(plan):
    """The cloud-init path's version of the SSH path's device check (conflicts()): a shell command that
    ends runcmd's script, with the message, when a declared GPU device file is not a device."""
    files = plan["gpus"]["files"] if plan["gpus"] else []
    if not files:
        return None
    return ('for f in %s; do [ -c "$f" ] || [ -b "$f" ] || { echo "slime.hybrid: the model gives this host the GPU '
            'device $f, which is not a device here (GPU driver not loaded, or its device files not made yet)" >&2; '
            'exit 1; }; done' % " ".join(shlex.quote(path) for path in files))


def cloud_config(plan, key_b64):
    """The plan as cloud-init user-data (the dict under #cloud-config), in the SSH path's order: the
    slurm user, slurm.key, the network, the slurmd drop-in, then, if the packaged slurmd may join
    slurmctld, the packages (Debian's postinst starts slurmd at once), then slurmd, only if the
    installed release may join slurmctld; last, the node exporter."""
    user = plan["user"]
    install = INSTALL_COMMAND[plan["package_manager"]]
    files = [{"path": plan["key"]["path"], "encoding": "b64", "content": key_b64,
              "owner": "%s:%s" % (plan["key"]["owner"], plan["key"]["group"]), "permissions": plan["key"]["mode"]}]
    files += [{"path": part["path"], "permissions": part["mode"], "content": part["content"]}
              for part in [plan["dropin"], plan["routes_unit"], plan["source"]] + plan["health"]["files"] if part]
    firewall = plan["firewall"]
    # conflicts() first; a string, not a command list: its exit ends runcmd's script before anything changes
    runcmd = ["if systemctl is-active --quiet %s; then echo %s >&2; exit 1; fi"
              % (FIREWALLD, shlex.quote("slime.hybrid: " + FIREWALLD_CONFLICT))] if firewall else []
    check = device_check(plan)
    runcmd += [check] if check else []
    runcmd.append(["sh", "-c", plan["hosts"]["shell"]])
    if plan["source_key"]:
        path = plan["source_key"]["path"]
        runcmd.append(["sh", "-c", "mkdir -p %s && curl -fsSL -o %s %s"
                       % (path.rsplit("/", 1)[0], path, shlex.quote(plan["source_key"]["url"]))])
    runcmd.append(list(REFRESH_COMMAND[plan["package_manager"]]))
    if firewall:
        rules = firewall["rules"]
        files.append({"path": rules["path"], "permissions": rules["mode"], "content": rules["content"]})
        runcmd += [install + firewall["packages"], ["iptables-restore", "--noflush", rules["path"]]]
        runcmd += [["sh", "-c", jump_command(jump)] for jump in firewall["jumps"]]
        if firewall["persist"]:
            runcmd.append(["sh", "-c", "iptables-save >%s" % shlex.quote(firewall["rules_file"])])
            if plan["package_manager"] == "dnf":  # EL's iptables.service loads the file only when enabled
                runcmd.append(["systemctl", "enable", firewall["service"]])
    if plan["routes_unit"]:
        runcmd.append(["systemctl", "enable", "--now", ROUTES_SERVICE])
    # a string, not a command list: its exit ends runcmd's script, so nothing is installed
    runcmd += [plan["slurmd_install_check"] + " || exit 1", install + plan["packages"], ["systemctl", "daemon-reload"],
               ["sh", "-c", plan["slurmd_version_check"] + " && systemctl enable slurmd && systemctl restart slurmd"
                " || { systemctl disable --now slurmd; exit 1; }"]]
    exporter = plan["node_exporter"]
    if exporter:
        runcmd += [install + [exporter["package"]], ["systemctl", "enable", "--now", exporter["service"]]]
    return {
        "bootcmd": [
            ["sh", "-c", "getent group %s >/dev/null || groupadd --system --gid %d %s" % (user["name"], user["gid"], user["name"])],
            ["sh", "-c", "getent passwd %s >/dev/null || useradd --system --uid %d --gid %d --home-dir %s --no-create-home "
             "--shell %s %s" % (user["name"], user["uid"], user["gid"], user["home"], user["shell"], user["name"])],
            ["install", "-d", "-m", "0755", "-o", "root", "-g", "root"] + plan["directories"],
        ],
        "write_files": files,
        "runcmd": runcmd,
    }
