# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a bare-metal Slurm worker is made of, computed once.

``plan(model, node)`` turns the cluster model and one node's settings into everything the host
needs: the slurm user, slurm.key's place, the /etc/hosts entry for the controller's names, the
iptables chains and rules, the pod network routes unit, the slurmd drop-in, the package source,
the packages, and the Slurm releases slurmd may have. roles/slurm_node applies it over SSH with
modules; its cloud_init entry point renders the very same data as user-data
(templates/cloud-init.yml.j2), so both paths make the same host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import shlex

from ansible_collections.slime.hybrid.plugins.module_utils import slurmd

NAT_CHAIN = "SLIME-HYBRID-OUT"
FILTER_CHAIN = "SLIME-HYBRID-IN"
DROPIN = "/etc/systemd/system/slurmd.service.d/10-slime-hybrid.conf"
ROUTES_UNIT = "/etc/systemd/system/slime-hybrid-routes.service"
APT_SOURCE = "/etc/apt/sources.list.d/slime-hybrid-slurm.list"
APT_KEY = "/etc/apt/keyrings/slime-hybrid-slurm.asc"
HOME = "/var/lib/slurm"
SHELL = "/usr/sbin/nologin"
HEADER = "# Managed by slime.hybrid (role slurm_node); a converge replaces local changes."

# The node settings plan() reads (roles/slurm_node passes its slurm_node_* variables).
NODE_KEYS = ("name", "features", "conf_extra", "user", "uid", "gid", "key_path", "packages", "package_version",
             "apt_repository", "apt_key_url", "firewall_packages", "manage_firewall", "persist_firewall",
             "rules_file")


def slurmd_command(model, node):
    conf = slurmd.slurmd_conf_args(node["features"], node["conf_extra"])
    command = "/usr/sbin/slurmd --systemd -Z --conf-server %s -N %s" % (model["conf_server"], node["name"])
    return command + (' --conf "%s"' % conf if conf else "")


def dropin(model, node):
    return "\n".join([
        HEADER,
        "[Unit]",
        "# Configless node: there is no /etc/slurm/slurm.conf, which Debian's unit may require.",
        "ConditionPathExists=",
        "After=network-online.target netfilter-persistent.service",
        "Wants=network-online.target",
        "",
        "[Service]",
        "ExecStart=",
        "ExecStart=" + slurmd_command(model, node),
        "Restart=on-failure",
        "RestartSec=5",
        "",
    ])


def routes_unit(model):
    """network_mode routed: routes to each Kubernetes node's pod CIDR via that node, in a
    oneshot unit so they come back at boot. None when the mode has no routes."""
    if not model["routes"]:
        return None
    lines = [
        HEADER,
        "# network_mode routed: reach each Kubernetes node's pod CIDR through that node, so pod",
        "# workers and the controller pod are reachable at their pod IPs (no NAT, no NodeAddr fix).",
        "[Unit]",
        "Description=slime.hybrid routes to the Kubernetes pod network",
        "After=network-online.target",
        "Wants=network-online.target",
        "Before=slurmd.service",
        "",
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
    ]
    lines += ["ExecStart=/usr/sbin/ip route replace %s via %s" % (r["cidr"], r["via"]) for r in model["routes"]]
    lines += ["ExecStop=-/usr/sbin/ip route del %s via %s" % (r["cidr"], r["via"]) for r in model["routes"]]
    lines += ["", "[Install]", "WantedBy=multi-user.target", ""]
    return "\n".join(lines)


def hosts_entry(model):
    """The /etc/hosts line "ADDRESS HOST ALIASES"; any other line for HOST is replaced.
    regexp/line as ansible.builtin.lineinfile takes them, and the same edit as a shell command."""
    ctl = model["controller"]
    line = " ".join([ctl["address"], ctl["host"]] + ctl["aliases"])
    host_re = ctl["host"].replace(".", "[.]")
    shell = ("sed -E -i '/^[^#[:space:]]+[[:space:]]+%s([[:space:]]|$)/d' /etc/hosts && echo %s >>/etc/hosts"
             " && chown root:root /etc/hosts && chmod 0644 /etc/hosts" % (host_re, shlex.quote(line)))
    return {"regexp": r"^\S+\s+%s(\s|$)" % ctl["host"].replace(".", r"\."), "line": line, "shell": shell}


def iptables_restore(model):
    """The rules the SSH path makes with ansible.builtin.iptables, for iptables-restore --noflush:
    same chains, same rules, same comments (each comment spells out its rule)."""
    lines = ["*nat", ":%s - [0:0]" % NAT_CHAIN]
    for rule in model["dnat"]:
        lines.append('-A %s -d %s/32 -p tcp -m tcp --dport %s -m comment --comment "%s" -j DNAT --to-destination %s'
                     % (NAT_CHAIN, rule["destination"], rule["ports"], rule["comment"], rule["to"]))
    lines += ["-A OUTPUT -p tcp -m comment --comment slime.hybrid -j %s" % NAT_CHAIN, "COMMIT",
              "*filter", ":%s - [0:0]" % FILTER_CHAIN]
    for rule in model["inbound"]:
        lines.append('-A %s -p tcp -m tcp --dport %s -m conntrack --ctstate NEW -m comment --comment "%s" -j ACCEPT'
                     % (FILTER_CHAIN, rule["ports"], rule["comment"]))
    lines += ["-I INPUT 1 -p tcp -m comment --comment slime.hybrid -j %s" % FILTER_CHAIN, "COMMIT", ""]
    return "\n".join(lines)


def accepted_releases(slurmctld_version):
    """The major releases (YY.MM) a slurmd may have to join this slurmctld, newest first."""
    newest = slurmd.release_index(slurmctld_version)
    out = []
    for index in range(newest, newest - slurmd.releases_behind(slurmctld_version) - 1, -1):
        name = slurmd.release_name(index)
        if name:
            out.append(name)
    return out


def slurmd_version_check(slurmctld_version):
    """A shell command whose status is non-zero, with a message naming both versions, unless the
    installed slurmd may join slurmctld: the cloud-init path's version of the SSH path's check
    after the install (it returns rather than exits, so the caller can stop slurmd)."""
    accepted = accepted_releases(slurmctld_version)
    patterns = "|".join("%s.*" % release for release in accepted)
    return ('v=$(slurmd -V | cut -d" " -f2); case "$v" in %s) true ;; *) echo "slime.hybrid: slurmd $v cannot join '
            'slurmctld %s (accepted: %s)" >&2; false ;; esac' % (patterns, slurmctld_version, ", ".join(accepted)))


def package_specs(node):
    if not node["package_version"]:
        return list(node["packages"])
    return ["%s=%s" % (package, node["package_version"]) for package in node["packages"]]


def plan(model, node):
    """Everything the host needs, from the normalized model and the node settings (NODE_KEYS)."""
    missing = [key for key in NODE_KEYS if key not in node]
    if missing:
        raise ValueError("node settings lack %s" % ", ".join(missing))
    firewall = bool(node["manage_firewall"])
    out = {
        "user": {"name": node["user"], "uid": int(node["uid"]), "gid": int(node["gid"]), "home": HOME, "shell": SHELL},
        "key": {"path": node["key_path"], "owner": node["user"], "group": node["user"], "mode": "0600"},
        "directories": sorted({node["key_path"].rsplit("/", 1)[0], DROPIN.rsplit("/", 1)[0]}),
        "dropin": {"path": DROPIN, "mode": "0644", "content": dropin(model, node)},
        "packages": package_specs(node),
        "slurmd_version_check": slurmd_version_check(model["slurm_version"]),
        "apt_source": ({"path": APT_SOURCE, "mode": "0644", "content": node["apt_repository"] + "\n"}
                       if node["apt_repository"] else None),
        "apt_key": {"path": APT_KEY, "url": node["apt_key_url"]} if node["apt_key_url"] else None,
        # The controller's names, and in network mode routed the routes to the pod network, are
        # what slurmd needs to reach slurmctld at all: always managed. The firewall flag is
        # about iptables only.
        "hosts_entry": hosts_entry(model),
        "routes": model["routes"],
        "routes_unit": None,
        "firewall": None,
    }
    unit = routes_unit(model)
    if unit:
        out["routes_unit"] = {"path": ROUTES_UNIT, "mode": "0644", "content": unit}
    if firewall:
        out["firewall"] = {
            "packages": list(node["firewall_packages"]),
            "nat_chain": NAT_CHAIN,
            "filter_chain": FILTER_CHAIN,
            "chains": [{"table": "nat", "chain": NAT_CHAIN}, {"table": "filter", "chain": FILTER_CHAIN}],
            "dnat": model["dnat"],
            "inbound": model["inbound"],
            "wanted_comments": [rule["comment"] for rule in model["dnat"] + model["inbound"]],
            "restore": iptables_restore(model),
            "persist": bool(node["persist_firewall"]),
            "rules_file": node["rules_file"],
        }
    return out
