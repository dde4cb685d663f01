# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a bare-metal Slurm worker is made of, computed once.

``plan(model, node)`` turns the cluster model (with its ``worker`` settings) and one node (name,
features, its own overrides of the worker settings) into everything the host needs: the slurm
user, slurm.key's place, the /etc/hosts entry for the controller's names, the iptables chains and
rules, the pod network routes unit, the slurmd drop-in, the health check program, the package
source, the packages, and the Slurm releases slurmd may have. roles/slurm_node applies it over SSH with modules;
cloud_init.py renders the very same data as cloud-init user-data, which roles/metal3_hosts hands
to Metal3, so both paths make the same host; worker_drift.py compares a host with it, on the host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import shlex

from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model, gres, health, metrics, names, secret_file, slurmd
# the files and units a plan names on the host (the host side, worker_drift.py, reads them there)
from ansible_collections.slime.hybrid.plugins.module_utils.worker_drift import DROPIN, ROUTES_UNIT, jump_rule

NAT_CHAIN = "SLIME-HYBRID-OUT"
FILTER_CHAIN = "SLIME-HYBRID-IN"
# The sources a new connection to slurmd's port, the srun range or the node exporter comes from: the model's
# (cluster_model.inbound_sources) and the host itself are accepted, any other refused (TCP reset).
SOURCES_CHAIN = "SLIME-HYBRID-SRC"
APT_SOURCE = "/etc/apt/sources.list.d/slime-hybrid-slurm.list"
APT_KEY = "/etc/apt/keyrings/slime-hybrid-slurm.asc"
DNF_SOURCE = "/etc/yum.repos.d/slime-hybrid-slurm.repo"
DNF_REPO_ID = "slime-hybrid-slurm"
HOME = "/var/lib/slurm"
SHELL = "/usr/sbin/nologin"
HEADER = "# Managed by slime.hybrid (role slurm_node); a converge replaces local changes."
RULES_PATH = "/etc/iptables/slime-hybrid.rules"
# What plan() reads of a node besides the model: its Slurm name, features and slurmd --conf
# extras, and optionally "worker", its own overrides of the model's worker settings.
NODE_KEYS = ("name", "features", "conf_extra")


def slurmd_command(model, node):
    conf = slurmd.slurmd_conf_args(node["features"], node["conf_extra"])
    command = "/usr/sbin/slurmd --systemd -Z --conf-server %s -N %s" % (model["conf_server"], node["name"])
    return command + (' --conf "%s"' % conf if conf else "")


def dropin(model, node):
    # Slurm's auth/slurm reads slurm.key from the directory of slurm.conf, /etc/slurm for a configless slurmd,
    # unless SLURM_SACK_KEY names the file (src/plugins/auth/slurm/internal.c init_internal, and
    # src/common/fetch_config.c, which 24.11 to 26.05 read before the configuration is fetched).
    key_path = node.get("key_path") or cluster_model.WORKER_DEFAULTS["key_path"]
    key_env = [] if key_path == cluster_model.WORKER_DEFAULTS["key_path"] else ["Environment=SLURM_SACK_KEY=" + key_path]
    return "\n".join([
        HEADER,
        "[Unit]",
        "# Configless node: there is no /etc/slurm/slurm.conf, which Debian's unit may require.",
        "ConditionPathExists=",
        "After=network-online.target netfilter-persistent.service",
        "Wants=network-online.target",
        "",
        "[Service]",
    ] + key_env + [
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


# The worker settings' variables before they moved into the model (slime_cluster.worker): slurm_node_NAME
# became worker.NAME, slurm_node_firewall_rules_file worker.rules_file.
RENAMED_VARIABLES = ("user", "uid", "gid", "key_path", "packages", "package_version", "apt_repository", "apt_key_url",
                     "firewall_packages", "manage_firewall", "persist_firewall", "firewall_rules_file")


def input_errors(inputs):
    """Every problem of the slurm_node role's inputs for one host, at once (its `validate` entry point,
    which site.yml runs first). inputs: {host, cluster, before_discovery, slurm_key_b64, slurm_key_src,
    features, worker, renamed (the old variables the host still has, without slurm_node_)}.

    The cluster model and slurm.key first: before the cluster's facts are read (before_discovery) the
    model is the site's intent, and slurm.key, unless given, comes from the cluster later. Then the
    host's own, each after the host's name: its features, its worker overrides, its old variables."""
    cluster, before = inputs.get("cluster"), inputs.get("before_discovery")
    errors = cluster_model.intent_errors(cluster) if before else cluster_model.validate(cluster)
    key_b64, key_src = inputs.get("slurm_key_b64"), inputs.get("slurm_key_src")
    if key_b64 or key_src or not before:
        errors = errors + secret_file.key_input_errors(key_b64, key_src, "slurm_node")
    own = names.feature_errors(inputs.get("features"), "slurm_node_features")
    own += cluster_model.worker_settings(inputs.get("worker"), "slurm_node_worker")[1]
    own += ["slurm_node_%s was replaced by slime_cluster.worker.%s (or slurm_node_worker for one host)"
            % (name, "rules_file" if name == "firewall_rules_file" else name)
            for name in sorted(inputs.get("renamed") or []) if name in RENAMED_VARIABLES]
    return errors + ["%s: %s" % (inputs.get("host"), error) for error in own]


def iptables_restore(model):
    """The slime.hybrid chains and their rules as one file for `iptables-restore --noflush`, which both
    paths apply as it is (roles/slurm_node with community.general.iptables_state, cloud-init with
    iptables-restore): a chain the file declares is created, or emptied, and refilled in one commit per
    table, so a changed model replaces the rules instead of piling up beside stale ones, and no other
    chain is touched. The jumps into the chains (JUMPS) are not in it: --noflush keeps the built-in
    chains, where the file would add them again on every apply."""
    lines = ["*nat", ":%s - [0:0]" % NAT_CHAIN]
    for rule in model["dnat"]:
        destination = rule["destination"] if "/" in rule["destination"] else rule["destination"] + "/32"
        lines.append('-A %s -d %s -p tcp -m tcp --dport %s -m comment --comment "%s" -j DNAT --to-destination %s'
                     % (NAT_CHAIN, destination, rule["ports"], rule["comment"], rule["to"]))
    lines += ["COMMIT", "*filter", ":%s - [0:0]" % FILTER_CHAIN, ":%s - [0:0]" % SOURCES_CHAIN]
    for rule in model["inbound"]:
        lines.append('-A %s -p tcp -m tcp --dport %s -m conntrack --ctstate NEW -m comment --comment "%s" -j %s'
                     % (FILTER_CHAIN, rule["ports"], rule["comment"], SOURCES_CHAIN))
    lines.append('-A %s -i lo -m comment --comment "slime.hybrid/src this host" -j ACCEPT' % SOURCES_CHAIN)
    for source in model["sources"]:
        lines.append('-A %s -s %s -m comment --comment "slime.hybrid/src %s %s" -j ACCEPT'
                     % (SOURCES_CHAIN, source["cidr"], source["kind"], source["cidr"]))
    lines.append('-A %s -p tcp -m comment --comment "slime.hybrid/src none other" -j REJECT --reject-with tcp-reset'
                 % SOURCES_CHAIN)
    lines += ["COMMIT", ""]
    return "\n".join(lines)


# The two rules that send traffic through the chains: locally made TCP (the DNAT to the NodePort), and
# inbound TCP, first in INPUT (rule_num 1) so that no earlier rule of the host's drops slurmd's or srun's
# ports. Applied by ansible.builtin.iptables (SSH) and jump_command (cloud-init), both with -C first.
JUMPS = ({"table": "nat", "chain": "OUTPUT", "rule_num": None, "protocol": "tcp", "comment": "slime.hybrid",
          "jump": NAT_CHAIN},
         {"table": "filter", "chain": "INPUT", "rule_num": 1, "protocol": "tcp", "comment": "slime.hybrid",
          "jump": FILTER_CHAIN})


def jump_command(jump):
    """A shell command that adds the jump unless it is there (-C, quiet: its "Bad rule" only means absent), as
    ansible.builtin.iptables does."""
    spec = " ".join(shlex.quote(word) for word in jump_rule(jump)[2:])
    add = "-I %s %d" % (jump["chain"], jump["rule_num"]) if jump["rule_num"] else "-A %s" % jump["chain"]
    return "iptables -w -t {0} -C {1} {2} 2>/dev/null || iptables -w -t {0} {3} {2}".format(jump["table"], jump["chain"], spec, add)


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
            # one file, applied as it is by both paths (iptables_restore), and the jumps into its chains
            "rules": {"path": RULES_PATH, "mode": "0600", "content": iptables_restore(model)},
            "jumps": [dict(jump) for jump in JUMPS],
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


def read_problems(model, read, timeout):
    """What stops role slurm_node on a host, from module slurm_node_info's result (read): what the role cannot make
    right there (its conflicts), and a conf server that did not answer (not checked in network_mode routed: the routes
    to it are the role's own, added later). Each as the role's refusal words it."""
    problems = list(read.get("conflicts") or [])
    server = read.get("conf_server")
    if model["network_mode"] != "routed" and (server or {}).get("state") != "open":
        problems.append("conf server %s (slime_cluster.nodeport) is not reachable from this host within %ss (%s)"
                        % (model["conf_server"], _seconds(timeout), (server or {}).get("state", "not checked")))
    return problems


def read_summary(name, read):
    """One line of what the read found: the node as slurmctld records it when nothing differs, else the parts."""
    if read.get("drift"):
        return "%s: differs - %s" % (name, ", ".join(read["drift"]))
    node = read.get("node") or {}
    return "%s: State=%s NodeAddr=%s Features=%s Version=%s" % (
        name, node.get("State"), node.get("NodeAddr"), node.get("AvailableFeatures"), node.get("Version"))


def _seconds(value):
    """5 for 5.0, 2.5 as it is: as the role's preflight_timeout is written."""
    return int(value) if float(value).is_integer() else value
