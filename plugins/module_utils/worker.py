# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a bare-metal Slurm worker is made of, computed once.

``plan(model, node)`` turns the cluster model (with its ``worker`` settings) and one node (name,
features, its own overrides of the worker settings) into everything the host needs: the slurm
user, slurm.key's place, the /etc/hosts entry for the controller's names, the iptables chains and
rules, the pod network routes unit, the slurmd drop-in, the health check program, the package
source, the packages, and the Slurm releases slurmd may have. roles/slurm_node applies it over SSH with modules;
``cloud_config(plan, key_b64)`` is the very same data as cloud-init user-data, which
roles/metal3_hosts hands to Metal3, so both paths make the same host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import hashlib
import re
import shlex

from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model, gres, health, metrics, netfilter, node_features, scontrol, slurmd

NAT_CHAIN = "SLIME-HYBRID-OUT"
FILTER_CHAIN = "SLIME-HYBRID-IN"
DROPIN = "/etc/systemd/system/slurmd.service.d/10-slime-hybrid.conf"
ROUTES_UNIT = "/etc/systemd/system/slime-hybrid-routes.service"
APT_SOURCE = "/etc/apt/sources.list.d/slime-hybrid-slurm.list"
APT_KEY = "/etc/apt/keyrings/slime-hybrid-slurm.asc"
DNF_SOURCE = "/etc/yum.repos.d/slime-hybrid-slurm.repo"
DNF_REPO_ID = "slime-hybrid-slurm"
HOME = "/var/lib/slurm"
SHELL = "/usr/sbin/nologin"
HEADER = "# Managed by slime.hybrid (role slurm_node); a converge replaces local changes."
RULES_PATH = "/etc/iptables/slime-hybrid.rules"
HOSTS_FILE = "/etc/hosts"
SLURMD = "slurmd"
ROUTES_SERVICE = ROUTES_UNIT.rsplit("/", 1)[1]
# EL's default firewall: its nftables table rejects what its zone does not allow, whatever the
# iptables chains accept, so slurmctld could not reach slurmd (6818) nor srun its ports.
FIREWALLD = "firewalld"
FIREWALLD_CONFLICT = ("firewalld is active: it rejects slurmd's port and the srun ports that the role's iptables "
                      "chains accept; open them in its zone and stop it, or set the worker setting manage_firewall "
                      "to false and open them there yourself")

# What plan() reads of a node besides the model: its Slurm name, features and slurmd --conf
# extras, and optionally "worker", its own overrides of the model's worker settings.
NODE_KEYS = ("name", "features", "conf_extra")


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
    oneshot unit so they come back at boot (plan() makes it only when the model has routes)."""
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


HOSTS_MARK = "# slime.hybrid"


def _names_re(names, space=r"\s", start=r"[^#\s]\S*"):
    """A /etc/hosts line (not a comment) that maps one of names."""
    return r"^%s%s+(.*%s)?(%s)(%s|$)" % (start, space, space, "|".join(names), space)


def hosts_plan(model):
    """The /etc/hosts lines of the controller and of each backup the cluster reports an address for:
    "ADDRESS HOST ALIASES # slime.hybrid" (the names slurmd and the commands connect to: every
    SlurmctldHost and SlurmctldAddr). The C library takes a name's first line, so every other line
    that maps one of these names goes, and so does a line of ours no longer wanted (a backup removed).

    entries: [{regexp, line}] as ansible.builtin.lineinfile takes them; stale: the lines to remove
    first (lineinfile state=absent); shell: the same edit for cloud-init."""
    controller = model["controller"]
    entries, names = [], []
    for ctl in [controller] + controller.get("backups", []):
        if ctl["address"]:
            own = [ctl["host"]] + ctl["aliases"]
            names += own
            entries.append({"regexp": _names_re([re.escape(name) for name in own]),
                            "line": " ".join([ctl["address"]] + own + [HOSTS_MARK])})
    ours = [r"^[^#\s]\S*\s.*\s" + re.escape(HOSTS_MARK) + "$"]
    ours_ere = ["^[^#[:space:]]+[[:space:]].*[[:space:]]" + HOSTS_MARK + "$"]
    if names:
        ours.append(_names_re([re.escape(name) for name in names]))
        ours_ere.append(_names_re([name.replace(".", "[.]") for name in names], "[[:space:]]", "[^#[:space:]]+"))
    stale = "(%s)" % "|".join(ours)
    if entries:
        stale = "^(?!(%s)$)%s" % ("|".join(re.escape(entry["line"]) for entry in entries), stale)
    shell = "sed -E -i '/%s/d' /etc/hosts" % "|".join(ours_ere)
    shell += "".join(" && echo %s >>/etc/hosts" % shlex.quote(entry["line"]) for entry in entries)
    return {"entries": entries, "stale": stale, "shell": shell + " && chown root:root /etc/hosts && chmod 0644 /etc/hosts"}


def iptables_restore(model):
    """The rules the SSH path makes with ansible.builtin.iptables, for iptables-restore --noflush:
    same chains, same rules, same comments (each comment spells out its rule)."""
    lines = ["*nat", ":%s - [0:0]" % NAT_CHAIN]
    for rule in model["dnat"]:
        destination = rule["destination"] if "/" in rule["destination"] else rule["destination"] + "/32"
        lines.append('-A %s -d %s -p tcp -m tcp --dport %s -m comment --comment "%s" -j DNAT --to-destination %s'
                     % (NAT_CHAIN, destination, rule["ports"], rule["comment"], rule["to"]))
    lines += ["-A OUTPUT -p tcp -m comment --comment slime.hybrid -j %s" % NAT_CHAIN, "COMMIT",
              "*filter", ":%s - [0:0]" % FILTER_CHAIN]
    for rule in model["inbound"]:
        lines.append('-A %s -p tcp -m tcp --dport %s -m conntrack --ctstate NEW -m comment --comment "%s" -j ACCEPT'
                     % (FILTER_CHAIN, rule["ports"], rule["comment"]))
    lines += ["-I INPUT 1 -p tcp -m comment --comment slime.hybrid -j %s" % FILTER_CHAIN, "COMMIT", ""]
    return "\n".join(lines)


def accepted_releases(slurmctld_version, oldest=None):
    """The major releases (YY.MM) a slurmd may have to join this slurmctld, newest first (none older than
    oldest, the model's slurmd_oldest)."""
    newest = slurmd.release_index(slurmctld_version)
    first = newest - slurmd.releases_behind(slurmctld_version)
    if oldest:
        first = max(first, slurmd.release_index(oldest["release"]))
    names = [slurmd.release_name(index) for index in range(newest, first - 1, -1)]
    return [name for name in names if name]


def slurmd_version_check(slurmctld_version, version_of='slurmd -V | cut -d" " -f2', what="slurmd", oldest=None):
    """A shell command whose status is non-zero, with a message naming both versions, unless the slurmd
    version that version_of prints may join slurmctld: the cloud-init path's version of the SSH path's
    checks (it returns rather than exits, so the caller decides what follows)."""
    accepted = accepted_releases(slurmctld_version, oldest)
    patterns = "|".join("%s.*" % release for release in accepted)
    return ('v=$(%s); case "$v" in %s) true ;; *) echo "slime.hybrid: %s $v cannot join '
            'slurmctld %s (accepted: %s)" >&2; false ;; esac' % (version_of, patterns, what, slurmctld_version, ", ".join(accepted)))


def _dnf_query(which, package):
    """dnf's version-release of package: installed or the newest available (empty output: none)."""
    return ("dnf -q repoquery --%s --latest-limit=1 --qf '%%{version}-%%{release}' %s | tail -n1"
            % (which, shlex.quote(package)))


def index_query(node):
    """A shell command that prints what the package manager knows of the first Slurm package the way
    `apt-cache policy PKG` does ("  Installed: VERSION", "  Candidate: VERSION", "(none)" for none),
    which slurmd.apt_policy_version and slurmd.upgrade_plan read: apt-cache policy itself, or dnf's
    repoquery of the installed and the newest available version-release."""
    package = node["packages"][0]
    if node["package_manager"] == "apt":
        return "apt-cache policy %s" % shlex.quote(package)
    return ("i=$(%s); c=$(%s); printf '%%s:\\n  Installed: %%s\\n  Candidate: %%s\\n' %s \"${i:-(none)}\" \"${c:-(none)}\""
            % (_dnf_query("installed", package), _dnf_query("available", package), shlex.quote(package)))


def slurmd_install_check(slurmctld_version, node, oldest=None):
    """The check before anything is installed, as the SSH path makes it: the pinned version, else the
    Candidate line of index_query (apt's candidate, dnf's newest available)."""
    version_of = ("echo %s" % shlex.quote(node["package_version"]) if node["package_version"]
                  else "{ %s; } | sed -n \"s/^ *Candidate: //p\"" % index_query(node))
    return slurmd_version_check(slurmctld_version, version_of, "the packaged slurmd", oldest)


# How each package manager names a version of a package (apt: slurmd=26.05.5-1; dnf:
# slurm-slurmd-26.05.5-1.el9, globs allowed), installs without weak dependencies (cloud-init's
# command; the SSH path sets the same option on ansible.builtin.apt or .dnf), and refreshes its index.
VERSION_SEPARATOR = {"apt": "=", "dnf": "-"}
INSTALL_COMMAND = {
    "apt": ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "--no-install-recommends"],
    "dnf": ["dnf", "install", "-y", "--setopt=install_weak_deps=False"],
}
REFRESH_COMMAND = {"apt": ["apt-get", "update"], "dnf": ["dnf", "makecache"]}


def package_source(node):
    """The package source file a site names (worker settings apt_repository, or dnf_repository and
    dnf_key_url), None when the host's own sources are used. dnf checks the packages' signatures
    against dnf_key_url, which it imports when it first installs from the repository."""
    if node["package_manager"] == "apt":
        return {"path": APT_SOURCE, "mode": "0644", "content": node["apt_repository"] + "\n"} if node["apt_repository"] else None
    if not node["dnf_repository"]:
        return None
    lines = [HEADER, "[%s]" % DNF_REPO_ID, "name=Slurm for slime.hybrid workers", "baseurl=" + node["dnf_repository"],
             "enabled=1"]
    lines += ["gpgcheck=1", "gpgkey=" + node["dnf_key_url"]] if node["dnf_key_url"] else ["gpgcheck=0"]
    return {"path": DNF_SOURCE, "mode": "0644", "content": "\n".join(lines) + "\n"}


def plan(model, node):
    """Everything the host needs, from the normalized model and the node (NODE_KEYS, "worker")."""
    missing = [key for key in NODE_KEYS if key not in node]
    if missing:
        raise ValueError("node settings lack %s" % ", ".join(missing))
    unknown = sorted(set(node) - set(NODE_KEYS) - {"worker"})
    if unknown:
        raise ValueError("node settings: %s unknown (the worker settings go under worker)" % ", ".join(unknown))
    settings, errors = cluster_model.worker_settings(node.get("worker"), "%s: worker" % node["name"], model["worker"])
    if errors:
        raise ValueError("; ".join(errors))
    settings = cluster_model.effective_worker(settings)
    node = dict(node, **settings)  # validated: uid and gid are ints, the flags booleans
    manager = node["package_manager"]
    gpus = _gpus(model, node)
    checks = health.of(model)
    if gpus:
        node["features"] = gpus["features"]
        node["conf_extra"] = dict(node["conf_extra"], Gres=gpus["gres"]) if gpus["gres"] else node["conf_extra"]
    return {
        "worker": settings,
        # the node's features: the inventory's, and the GPU feature on a node with GPUs (the GPU partition's NodeSet)
        "features": list(node["features"]),
        "gpus": gpus,
        "user": {"name": node["user"], "uid": node["uid"], "gid": node["gid"], "home": HOME, "shell": SHELL},
        "key": {"path": node["key_path"], "owner": node["user"], "group": node["user"], "mode": "0600"},
        "directories": sorted({node["key_path"].rsplit("/", 1)[0], DROPIN.rsplit("/", 1)[0]}
                              | ({health.DIRECTORY} if checks else set())),
        # the health check program slurm.conf names, and its settings for this host (its GPU devices)
        # (none with the model's checks off: the SSH path removes the directory then)
        "health": {"directory": health.DIRECTORY, "reason_prefix": health.REASON_PREFIX,
                   "files": health.files(checks, gpus["files"] if gpus else []) if checks else []},
        "dropin": {"path": DROPIN, "mode": "0644", "content": dropin(model, node)},
        # the distribution's node exporter ({package, service, port}; its port is among the inbound rules), or None
        "node_exporter": metrics.node_exporter(model, manager),
        "package_manager": manager,
        # what to install: package specs (name, or name and version as the package manager writes them)
        "packages": ([VERSION_SEPARATOR[manager].join([package, node["package_version"]]) for package in node["packages"]]
                     if node["package_version"] else list(node["packages"])),
        "version_separator": VERSION_SEPARATOR[manager],
        "index_query": index_query(node),
        "slurmctld_version": model["slurm_version"],
        # the oldest slurmd this cluster's slurm.conf lets join, inside Slurm's window ({release, why} or None)
        "slurmd_oldest": model.get("slurmd_oldest"),
        "slurmd_version_check": slurmd_version_check(model["slurm_version"], oldest=model.get("slurmd_oldest")),
        "slurmd_install_check": slurmd_install_check(model["slurm_version"], node, model.get("slurmd_oldest")),
        "source": package_source(node),
        # apt only: the key a signed-by= option of apt_repository names (dnf's is in the source file)
        "source_key": ({"path": APT_KEY, "url": node["apt_key_url"]}
                       if manager == "apt" and node["apt_key_url"] else None),
        # The controller's names, and in network mode routed the routes to the pod network, are
        # what slurmd needs to reach slurmctld at all: always managed. The firewall flag is
        # about iptables only.
        "hosts": hosts_plan(model),
        "routes": model["routes"],
        "routes_unit": ({"path": ROUTES_UNIT, "mode": "0644", "content": routes_unit(model)}
                        if model["routes"] else None),
        "firewall": {
            "packages": list(node["firewall_packages"]),
            "nat_chain": NAT_CHAIN,
            "filter_chain": FILTER_CHAIN,
            "chains": [{"table": "nat", "chain": NAT_CHAIN}, {"table": "filter", "chain": FILTER_CHAIN}],
            "dnat": model["dnat"],
            "inbound": model["inbound"],
            "wanted_comments": [rule["comment"] for rule in model["dnat"] + model["inbound"]],
            "restore": iptables_restore(model),
            "persist": node["persist_firewall"],
            "rules_file": node["rules_file"],
            # what loads the saved rules at boot (enabled by Debian's package, not by EL's)
            "service": cluster_model.PACKAGE_MANAGERS[manager]["firewall_service"],
        } if node["manage_firewall"] else None,
    }


def _gpus(model, node):
    """The node's GPUs from the model's gpus section (module_utils/gres.py): no groups for a node without
    GPUs; None where the model has no gpus section (the collection then leaves GRES alone)."""
    if not model.get("gpus"):
        return None
    if any(key.lower() == "gres" for key in node["conf_extra"]):
        raise ValueError("%s: conf_extra states Gres and slime_cluster.gpus is set; state GPUs in slime_cluster.gpus "
                         "only (it also writes the controller's gres.conf)" % node["name"])
    groups = gres.node_groups(model["gpus"], node["name"])
    feature = model["gpus"]["feature"]
    return {
        "groups": groups,
        "gres": gres.conf_gres(groups),
        "files": [path for group in groups for path in group["files"]],
        "features": list(node["features"]) + ([feature] if groups and feature not in node["features"] else []),
    }


def device_check(plan):
    """The cloud-init path's version of the SSH path's device check (conflicts()): a shell command that
    ends runcmd's script, with the message, when a declared GPU device file is not a device."""
    files = plan["gpus"]["files"] if plan["gpus"] else []
    if not files:
        return None
    return ('for f in %s; do [ -c "$f" ] || [ -b "$f" ] || { echo "slime.hybrid: the model gives this host the GPU '
            'device $f, which is not a device here (GPU driver not loaded, or its device files not made yet)" >&2; '
            'exit 1; }; done' % " ".join(shlex.quote(path) for path in files))


def conflicts(plan, observed):
    """What the role cannot make right on this host and refuses before changing it."""
    active = observed["units"].get(FIREWALLD, {}).get("ActiveState") == "active"
    out = [FIREWALLD_CONFLICT] if plan["firewall"] and active else []
    return out + (gres.device_problems(plan["gpus"]["groups"], observed["files"]) if plan["gpus"] else [])


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
        files.append({"path": RULES_PATH, "permissions": "0600", "content": firewall["restore"]})
        runcmd += [install + firewall["packages"], ["iptables-restore", "--noflush", RULES_PATH]]
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


# What differs between the host and its plan, read in one call (module slurm_node_info over
# module_utils/host_state.py): the role applies only the parts that differ, so a converged host
# costs one module run instead of one per file, rule and check.


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


def _rule(line):
    """An iptables -S / iptables-restore rule as words, '-I CHAIN N' read as '-A CHAIN'."""
    words = shlex.split(line)
    if words[:1] == ["-I"]:
        words = ["-A", words[1]] + words[3:]
    return words


def _firewall_drift(firewall, observed, db):
    """What firewall.yml would change: a package to install, a chain to create, a wanted rule to add,
    or a chain to flush because a rule in it has a comment the plan does not want (the test of its
    flush task, netfilter.stale_rules)."""
    out = ["package %s is not installed" % name for name in firewall["packages"] if not _installed(db, name)]
    by_table, table = {}, None
    for line in firewall["restore"].splitlines():
        if line.startswith("*"):
            table = line[1:]
        elif line.startswith(("-A ", "-I ")):
            by_table.setdefault(table, []).append(_rule(line))
    for table, rules in sorted(by_table.items()):
        listing = observed["iptables"].get(table)
        if listing is None:
            out.append("iptables -t %s -S failed" % table)
            continue
        present = [_rule(line) for line in listing.splitlines() if line.startswith("-A ")]
        chain = firewall["nat_chain"] if table == "nat" else firewall["filter_chain"]
        if "-N %s" % chain not in listing.splitlines():
            out.append("chain %s/%s is missing" % (table, chain))
        out += ["rule missing: %s" % " ".join(rule) for rule in rules if rule not in present]
        ours = [line for line in listing.splitlines() if line.startswith("-A %s " % chain)]
        out += ["rule not in the plan: %s" % " ".join(_rule(line))
                for line, comment in zip(ours, netfilter.rule_comments("\n".join(ours)))
                if comment not in firewall["wanted_comments"]]
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
