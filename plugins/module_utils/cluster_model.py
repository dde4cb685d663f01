# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one model of a hybrid Slurm cluster.

Every role, filter and template of the collection reads the cluster through
``normalize(intent, discovered)``: the site's ``slime_cluster`` (intent) and what
slinky_info read from the running cluster (DISCOVERED) go in, a validated dict with
derived values (conf server, NAT rules, port lists) comes out. A change of the
NodePort or the srun range is therefore a one-line change in the inventory.
Before the cluster exists (the Slinky role), ``normalize_intent()`` checks what the
site states and leaves the discovered fields empty.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re

from ansible_collections.slime.hybrid.plugins.module_utils import accounting, gres, health, metrics
from ansible_collections.slime.hybrid.plugins.module_utils.names import HOSTNAME_RE
from ansible_collections.slime.hybrid.plugins.module_utils.slurmd import parse_slurm_version, release_index

# Kubernetes' default --service-node-port-range (a cluster may set another: nodeport.range; its
# lower "static" band, static_band(), is what KEP-3668 keeps for manually chosen NodePorts).
NODEPORT_RANGE = (30000, 32767)

# The ports Slinky's operator fixes: it writes SlurmctldPort=6817 and SlurmdPort=6818 into the
# slurm.conf it renders, and gives the containers those ports, whatever the chart values say
# (slurm-operator v1.2.1: internal/builder/common/const.go, controllerbuilder/controller_config.go).
# Bare metal's slurmd follows that slurm.conf (configless), so another port in the model would
# open the firewall and point the DNAT at a port nothing uses.
SLINKY_PORTS = (("controller.port", 6817, "SlurmctldPort"), ("slurmd_port", 6818, "SlurmdPort"))

# nat: NodePort + OUTPUT DNAT for the controller, hostPorts + NodeAddr fix for pod workers.
# hostnetwork: as nat for the controller; NodeSet pods on the node network (durable NodeAddr).
# routed: bare metal routes to the pod CIDRs; everything is reached at its pod IP, no NAT.
NETWORK_MODES = ("nat", "routed", "hostnetwork")

DEFAULTS = {
    "name": "slurm",
    "network_mode": "nat",
    "controller": {"port": 6817},
    "slurmd_port": 6818,
    "max_node_count": 64,
    "srun_concurrency": 4,
    "image_registry": "",
}

# The settings of every bare-metal worker (section "worker"), whichever path makes it: the SSH
# path (roles/slurm_node, per-host overrides in slurm_node_worker) and Metal3's cloud-init
# (roles/metal3_hosts, per-host overrides in a host's "worker"). The slurm user must match the
# controller's (Slinky's images: 401/401).
WORKER_DEFAULTS = {
    "user": "slurm",
    "uid": 401,
    "gid": 401,
    "key_path": "/etc/slurm/slurm.key",
    "package_manager": "apt",
    "packages": None,
    "package_version": "",
    "apt_repository": "",
    "apt_key_url": "",
    "dnf_repository": "",
    "dnf_key_url": "",
    "manage_firewall": True,
    "persist_firewall": True,
    "firewall_packages": None,
    "rules_file": None,
}

# What the worker settings left at None (null) mean, per package manager: the Slurm packages of
# the distribution's own names (Debian and Ubuntu: the slurm-wlm source's slurmd and slurm-client;
# EL: SchedMD's slurm.spec, whose slurm-slurmd requires slurm, the commands and plugins), what
# keeps iptables rules for the next boot and where (Debian's netfilter-persistent reads
# rules.v4; EL 9's iptables.service, from iptables-nft-services, reads /etc/sysconfig/iptables and
# runs only when enabled). SchedMD's own Debian packages (debian/control in the release tarball) are
# named slurm-smd-slurmd and slurm-smd-client: a site that builds them states them in packages.
PACKAGE_MANAGERS = {
    "apt": {"packages": ["slurmd", "slurm-client"], "firewall_packages": ["iptables", "iptables-persistent"],
            "rules_file": "/etc/iptables/rules.v4", "firewall_service": "netfilter-persistent"},
    "dnf": {"packages": ["slurm-slurmd", "slurm"], "firewall_packages": ["iptables-nft", "iptables-nft-services"],
            "rules_file": "/etc/sysconfig/iptables", "firewall_service": "iptables"},
}

_USER_RE = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
_PACKAGE_RE = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")
_VERSION_RE = re.compile(r"^[0-9][A-Za-z0-9.+~:*-]*$")
# A registry, optionally with a path under it, as an image reference starts (no scheme, tag or digest):
# distribution's reference grammar (domain[:port]/path), lower case.
_REGISTRY_RE = re.compile(r"^(?=.{1,255}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:[0-9]{1,5})?"
                          r"(/[a-z0-9]+([._-][a-z0-9]+)*)*$")
_BOOLS = {True: True, False: False, "true": True, "false": False, "yes": True, "no": False}


class ModelError(ValueError):
    """Raised with every problem found, one per line."""

    def __init__(self, errors):
        self.errors = list(errors)
        super(ModelError, self).__init__("; ".join(self.errors))


def _plain(value):
    """A plain copy of nested dicts and lists. What Ansible hands a filter may be its own lazy
    containers (ansible-core 2.19 templates their values when they are read); copy.deepcopy of one
    breaks it ("The filter plugin 'default' failed to load"), reading its items does not."""
    if isinstance(value, dict):
        return dict((key, _plain(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _merge(base, override):
    out = _plain(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def parse_port_range(value):
    """'60001-60100' (or 60001:60100, [60001, 60100], or the model's {first, last}) -> (60001, 60100).
    Raises ValueError."""
    if isinstance(value, dict) and "first" in value and "last" in value:
        first, last = value["first"], value["last"]
    elif isinstance(value, (list, tuple)) and len(value) == 2:
        first, last = value
    else:
        text = str(value).strip()
        match = re.match(r"^(\d+)\s*[-:]\s*(\d+)$", text)
        if not match:
            raise ValueError("%r is not a port range of the form FIRST-LAST" % (value,))
        first, last = match.groups()
    first, last = int(first), int(last)
    if not (1 <= first <= 65535 and 1 <= last <= 65535):
        raise ValueError("%r has a port outside 1-65535" % (value,))
    if first > last:
        raise ValueError("%r is inverted (first port above last)" % (value,))
    return first, last


def _positive_int(errors, key, value, what=None):
    """value as an int of at least 1, else None and an error naming key (and what it is)."""
    try:
        if isinstance(value, bool):
            raise TypeError
        number = int(value)
        if number < 1 or (isinstance(value, float) and value != number):
            raise ValueError
    except (TypeError, ValueError):
        errors.append("%s=%r must be a positive integer%s" % (key, value, " (%s)" % what if what else ""))
        return None
    return number


def srun_ports_needed(nodes, pty=False):
    """Ports one srun listens on (slurm.conf(5), SrunPortRange): 4, plus 2 for every
    48 hosts beyond the first 48, plus 1 with --pty."""
    nodes = int(nodes)
    if nodes < 1:
        raise ValueError("node count must be at least 1, got %d" % nodes)
    extra_blocks = (max(0, nodes - 48) + 47) // 48
    return 4 + 2 * extra_blocks + (1 if pty else 0)


# The bare-metal side of the model is IPv4: iptables (not ip6tables) DNAT and accept rules,
# `ip -4` routes, rules.v4, and slurm_node_addr's NodeAddr check. An IPv6 address is refused
# by name here rather than accepted and then not applied.
_IPV4_ONLY = ("is IPv6; the bare-metal side (iptables DNAT, routes to pod CIDRs, NodeAddr) is IPv4 only "
              "in this release: give the IPv4 address")


def _check_ip(errors, label, value, parse=ipaddress.ip_address, what="an IP address"):
    """The IPv4 address (or, with parse=ipaddress.ip_network, network) value names, as text; else None
    and the problem in errors."""
    try:
        address = parse(str(value).strip())
    except ValueError:
        errors.append("%s=%r is not %s" % (label, value, what))
        return None
    if address.version != 4:
        errors.append("%s=%r %s" % (label, value, _IPV4_ONLY))
        return None
    return str(address)


def static_band(first, last):
    """The lower band of a NodePort range that Kubernetes keeps for NodePorts chosen by hand
    (KEP-3668): its size is the range's size / 32, at least 16 and at most 128 ports; none in a
    range of 16 ports or fewer (Kubernetes v1.36 pkg/registry/core/service/portallocator/allocator.go,
    calculateRangeOffset). (30000, 32767) -> (30000, 30085)."""
    size = last - first + 1
    if size <= 16:
        return None
    return first, first + min(max(16, size // 32), 128) - 1


def _check_port(errors, label, value, low=1, high=65535):
    try:
        port = int(value)
    except (TypeError, ValueError):
        errors.append("%s=%r is not a port number" % (label, value))
        return None
    if not low <= port <= high:
        errors.append("%s=%d is outside %d-%d" % (label, port, low, high))
        return None
    return port


def _optional(errors, label, value, required, why, check, *args):
    """check(errors, label, value, *args) for a value given; for one absent (None or ""), None and,
    when required, the error "label is required (why)"."""
    if value in (None, ""):
        if required:
            errors.append("%s is required (%s)" % (label, why))
        return None
    return check(errors, label, value, *args)


_BAD = object()


def _matching(pattern, empty=False):
    return lambda value: value if isinstance(value, str) and ((empty and value == "") or pattern.match(value)) else _BAD


def _account_id(value):
    return int(value) if not isinstance(value, bool) and str(value).isdigit() and 1 <= int(value) <= 65534 else _BAD


def _package_list(empty):
    return lambda value: (list(value) if isinstance(value, list) and (empty or value)
                          and all(isinstance(p, str) and _PACKAGE_RE.match(p) for p in value) else _BAD)


def _or_default(check):
    """check, with None (the package manager's default, PACKAGE_MANAGERS) let through."""
    return lambda value: None if value is None else check(value)


def _flag(value):
    return _BOOLS.get(value.lower() if isinstance(value, str) else value, _BAD) if isinstance(value, (bool, str)) else _BAD


_PATH_RE = re.compile(r"^/[^\s]*[^/\s]$")
_URL_RE = re.compile(r"^https?://\S+$")
# Each worker setting: how a value is checked (and converted), and what the message says is allowed.
_WORKER_CHECKS = {
    "user": (_matching(_USER_RE), "is not a user name (lowercase letters, digits, '_', '-')"),
    "uid": (_account_id, "must be a number from 1 to 65534"),
    "gid": (_account_id, "must be a number from 1 to 65534"),
    "key_path": (_matching(_PATH_RE), "must be an absolute file path"),
    "package_manager": (lambda value: value if value in PACKAGE_MANAGERS else _BAD,
                        "is not a package manager this role drives; allowed: %s" % ", ".join(sorted(PACKAGE_MANAGERS))),
    "packages": (_or_default(_package_list(empty=False)), "must be null (the package manager's own names) or a list of "
                 "package names, not empty"),
    "package_version": (_matching(_VERSION_RE, empty=True), "must be empty (what the source offers) or a package "
                        "version such as 26.05.5-1 or 26.05.5-1.el9 (a trailing * allowed)"),
    "apt_repository": (_matching(re.compile(r"^deb(-src)? [^\n]*\Z"), empty=True),
                       "must be empty or one sources.list line (deb [OPTIONS] URI SUITE COMPONENT...)"),
    "apt_key_url": (_matching(_URL_RE, empty=True), "must be empty or an http(s) URL"),
    "dnf_repository": (_matching(_URL_RE, empty=True), "must be empty or the repository's http(s) URL (its baseurl)"),
    "dnf_key_url": (_matching(_URL_RE, empty=True), "must be empty or an http(s) URL"),
    "manage_firewall": (_flag, "must be true or false"),
    "persist_firewall": (_flag, "must be true or false"),
    "firewall_packages": (_or_default(_package_list(empty=True)), "must be null (the package manager's own) or a list of "
                          "package names"),
    "rules_file": (_or_default(_matching(_PATH_RE)), "must be null (the package manager's own) or an absolute file path"),
}
# The settings that name a source of one package manager only.
_SOURCE_SETTINGS = {"apt": ("apt_repository", "apt_key_url"), "dnf": ("dnf_repository", "dnf_key_url")}


def worker_settings(raw, label="worker", base=None):
    """(settings, errors): the worker settings raw states over base (default WORKER_DEFAULTS), checked,
    with every problem named by label.KEY and what is allowed."""
    base = WORKER_DEFAULTS if base is None else base
    raw = {} if raw in (None, "") else raw
    allowed = ", ".join(sorted(WORKER_DEFAULTS))
    if not isinstance(raw, dict):
        return None, ["%s=%r must be a mapping of worker settings (%s)" % (label, raw, allowed)]
    errors = ["%s.%s is not a worker setting; allowed: %s" % (label, key, allowed) for key in sorted(set(raw) - set(WORKER_DEFAULTS))]
    out = {}
    for key in WORKER_DEFAULTS:
        value = raw.get(key, base.get(key, WORKER_DEFAULTS[key]))
        check, rule = _WORKER_CHECKS[key]
        out[key] = check(value)
        if out[key] is _BAD:
            errors.append("%s.%s=%r %s" % (label, key, value, rule))
    for manager, keys in sorted(_SOURCE_SETTINGS.items()):
        errors += ["%s.%s=%r is a source for package_manager %s, and this worker's is %s"
                   % (label, key, out[key], manager, out["package_manager"])
                   for key in keys if out.get(key) not in (None, "", _BAD) and out["package_manager"] in PACKAGE_MANAGERS
                   and out["package_manager"] != manager]
    return (None, errors) if errors else (out, [])


def effective_worker(settings):
    """Worker settings (worker_settings' output) with what was left at None filled in from the
    package manager's own (PACKAGE_MANAGERS), as a host gets them. The model keeps the None, so
    that a host which states another package_manager gets that one's defaults."""
    own = PACKAGE_MANAGERS[settings["package_manager"]]
    return dict(settings, **dict((key, list(own[key]) if isinstance(own[key], list) else own[key])
                                 for key in ("packages", "firewall_packages", "rules_file") if settings[key] is None))


# What a site with a Kubernetes API does not write down: slinky_info reads it from the running
# cluster (the controller pod's address and names, its backups (the other SlurmctldHost entries), the
# node behind the NodePort, the Slurm release of the slurmctld image, and in network_mode routed each
# Node's pod CIDR and address).
# A site without one (the local lab) states it in slime_cluster.
# cluster_facts.yml adds what the inventory knows: the addresses Ansible reaches the bare-metal hosts at
# (baremetal_addresses), which the other workers accept connections from.
DISCOVERED = ("controller.host", "controller.aliases", "controller.address", "controller.backups", "nodeport.address",
              "slurm_version", "pod_routes", "node_addresses", "baremetal_addresses")

# Discovered keys where what the site states wins: a site may route differently from what the
# Nodes say (a subset, or through a gateway). Every other discovered key wins over the intent
# (the cluster is what it is: the Service's real nodePort, the controller pod's current address).
# An empty list states nothing. nodeport.address: the address bare metal reaches the controller's
# node at, where that is not the node's InternalIP (a second network, a VIP that follows the node).
SITE_WINS = ("pod_routes", "nodeport.address")

# What slime_cluster may state, per section (worker: WORKER_DEFAULTS); an unknown key (a typo) is
# refused with these. DERIVED: what the model adds, accepted back so that a model is its own input.
SETTINGS = {
    "": ("name", "network_mode", "controller", "nodeport", "slurmd_port", "srun_port_range", "max_node_count",
         "srun_concurrency", "pod_routes", "slurm_version", "worker", "image_registry", "gpus", "health",
         "accounting", "metrics", "inbound_sources", "node_addresses", "baremetal_addresses"),
    "controller": ("host", "aliases", "address", "port", "backups"),
    "nodeport": ("address", "port", "range"),
}
DERIVED = {
    "": ("routes", "pod_cidrs", "inbound", "sources", "dnat", "conf_server", "conf_server_address", "conf_server_port",
         "slurmd_oldest"),
    "controller": (),
    "nodeport": ("static_band",),
}


def validate(intent, discovered=None):
    """Every problem of the model built from intent and discovered facts ([] when valid)."""
    return _model(intent, discovered)[1]


def normalize(intent, discovered=None):
    """The model: intent (slime_cluster) completed by discovered facts (slinky_info's
    ``cluster``), validated, with derived values. Raises ModelError listing every problem.
    Reads its own output: normalize(normalize(x)) == normalize(x)."""
    result, errors = _model(intent, discovered)
    if errors:
        raise ModelError(errors)
    return result


def intent_errors(intent):
    """Problems of what a site states (everything but DISCOVERED): what the Slinky role needs
    before the cluster exists, when nothing can be discovered yet."""
    return _stated(intent, intent, require_discovered=False)[1]


def normalize_intent(intent):
    """The intent validated, with derived values; DISCOVERED fields may be absent (None)."""
    result, errors = _stated(intent, intent, require_discovered=False)
    if errors:
        raise ModelError(errors)
    return result


def _stated(intent, raw, require_discovered=True):
    """_build(raw), with an error for every key the site's intent states that is no setting (the
    discovered facts merged into raw may carry more)."""
    unknown = _unknown(intent) if isinstance(intent, dict) else []
    result, errors = _build(raw, require_discovered)
    return (None, unknown + errors) if unknown else (result, errors)


def _model(intent, discovered):
    if discovered not in (None, {}) and not isinstance(discovered, dict):
        return None, ["the discovered facts must be a dict (slinky_info's cluster), got %s" % type(discovered).__name__]
    raw = intent
    if discovered and isinstance(intent, dict):
        # Copies of the mappings only, never deep copies (Ansible's lazy templated values refuse them).
        discovered = dict(discovered)
        for key in SITE_WINS:
            section, name = key.rpartition(".")[::2]
            stated = (intent.get(section) if section else intent) or {}
            if not isinstance(stated, dict) or stated.get(name) in (None, "", []):
                continue
            if not section:
                discovered.pop(name, None)
            elif isinstance(discovered.get(section), dict):
                discovered[section] = dict((k, v) for k, v in discovered[section].items() if k != name)
        raw = _merge(intent, discovered)
    return _stated(intent, raw)


def _unknown(raw):
    """An error for every key of slime_cluster (and of its controller and nodeport sections) that
    is not a setting, with the settings allowed there."""
    errors = []
    for section in ("", "controller", "nodeport"):
        mapping = raw.get(section) if section else raw
        if not isinstance(mapping, dict):
            continue
        known = set(SETTINGS[section]) | set(DERIVED[section])
        for key in sorted(set(mapping) - known, key=str):
            errors.append("%s is not a setting of slime_cluster%s; allowed: %s"
                          % ("%s.%s" % (section, key) if section else key, " (%s)" % section if section else "",
                             ", ".join(sorted(SETTINGS[section]))))
    return errors


def _build(raw, require_discovered=True):
    errors = []
    if not isinstance(raw, dict):
        return None, ["slime_cluster must be a dict, got %s" % type(raw).__name__]
    for section in ("controller", "nodeport", "worker"):
        if raw.get(section) is not None and not isinstance(raw.get(section), dict):
            errors.append("%s=%r must be a mapping (see docs/cluster-model.md)" % (section, raw.get(section)))
    if errors:
        return None, errors
    m = _merge(DEFAULTS, raw)
    ctl = m.get("controller") or {}
    nodeport = m.get("nodeport") or {}

    name = str(m.get("name", ""))
    if not re.match(r"^[A-Za-z0-9_-]{1,40}$", name):
        errors.append("name=%r is not a valid ClusterName (letters, digits, '_', '-'; at most 40)" % name)

    mode = m.get("network_mode")
    if mode not in NETWORK_MODES:
        errors.append("network_mode=%r is not supported; allowed: %s" % (mode, ", ".join(NETWORK_MODES)))

    host = ctl.get("host")
    if host in (None, "") and not require_discovered:
        host = None
    elif not host or not HOSTNAME_RE.match(str(host)):
        errors.append("controller.host=%r is not a host name (the SlurmctldHost of slurm.conf)" % (host,))
    ctl_addr = _optional(errors, "controller.address", ctl.get("address"), require_discovered,
                         "the address bare metal maps controller.host to", _check_ip)
    aliases = ctl.get("aliases") or []
    if not _host_names(aliases):
        errors.append("controller.aliases=%r must be a list of host names (other names of the controller, "
                      "e.g. both parts of SlurmctldHost=NAME(ADDRESS))" % (aliases,))
    backups = _check_backups(errors, ctl.get("backups"))
    names = list(set(n for n in [host] + (aliases if isinstance(aliases, list) else []) if n))
    names += [n for backup in backups for n in set([backup["host"]] + backup["aliases"])]
    twice = sorted(set(n for n in names if names.count(n) > 1))
    if twice:
        errors.append("controller: %s named by more than one SlurmctldHost (each controller needs names of its own)"
                      % ", ".join(map(str, twice)))
    ctl_port = _check_port(errors, "controller.port", ctl.get("port"))
    slurmd_port = _check_port(errors, "slurmd_port", m.get("slurmd_port"))
    for (label, fixed, conf), port in zip(SLINKY_PORTS, (ctl_port, slurmd_port)):
        if port is not None and port != fixed:
            errors.append("%s=%d: Slinky's operator writes %s=%d into slurm.conf whatever the chart says, and "
                          "bare metal's slurmd follows slurm.conf; allowed: %d" % (label, port, conf, fixed, fixed))

    np_range = NODEPORT_RANGE
    if nodeport.get("range") not in (None, ""):
        try:
            np_range = parse_port_range(nodeport.get("range"))
        except ValueError as exc:
            errors.append("nodeport.range: %s (the cluster's --service-node-port-range, e.g. 30000-32767)" % exc)
    needs_nodeport = mode != "routed"
    np_addr = _optional(errors, "nodeport.address", nodeport.get("address"), needs_nodeport and require_discovered,
                        "the Kubernetes node that hosts the controller pod", _check_ip)
    np_port = _optional(errors, "nodeport.port", nodeport.get("port"), needs_nodeport,
                        "the controller Service's nodePort, %d-%d" % np_range, _check_port, *np_range)
    band = static_band(*np_range)

    routes = _check_routes(errors, m.get("pod_routes"), required=(mode == "routed" and require_discovered))
    site_sources = _check_networks(errors, "inbound_sources", m.get("inbound_sources"),
                                   "the site's own sources of slurmd's, srun's and the node exporter's connections "
                                   "(login hosts, monitoring; 0.0.0.0/0 lets anyone in)")
    node_addresses = _check_networks(errors, "node_addresses", m.get("node_addresses"),
                                     "the Kubernetes Nodes' InternalIPs (read from the cluster)", hosts=True)
    baremetal_addresses = _check_networks(errors, "baremetal_addresses", m.get("baremetal_addresses"),
                                          "the bare-metal workers' addresses (read from the inventory)", hosts=True)
    worker, worker_errors = worker_settings(m.get("worker"))
    errors += worker_errors
    gpus, gpu_errors = gres.settings(m.get("gpus"))
    errors += gpu_errors
    health_checks, health_errors = health.settings(m.get("health"))
    errors += health_errors
    accounting_section, accounting_errors = accounting.settings(m.get("accounting"))
    errors += accounting_errors
    metrics_section, metrics_errors = metrics.settings(m.get("metrics"))
    errors += metrics_errors

    max_nodes = _positive_int(errors, "max_node_count", m.get("max_node_count"))
    concurrency = _positive_int(errors, "srun_concurrency", m.get("srun_concurrency"),
                                "the sruns one submit host runs at once")

    srun = None
    raw_range = m.get("srun_port_range")
    if raw_range is None:
        errors.append("srun_port_range is required (SrunPortRange, e.g. 60001-60100)")
    else:
        try:
            first, last = parse_port_range(raw_range)
        except ValueError as exc:
            errors.append("srun_port_range: %s" % exc)
        else:
            srun = {"first": first, "last": last, "size": last - first + 1,
                    "conf": "%d-%d" % (first, last), "iptables": "%d:%d" % (first, last)}
            for label, port in (("controller.port", ctl_port), ("slurmd_port", slurmd_port)):
                if port is not None and first <= port <= last:
                    errors.append("srun_port_range=%s contains %s %d; srun would collide with the daemon"
                                  % (srun["conf"], label, port))
            if first <= np_range[1] and last >= np_range[0]:
                errors.append("srun_port_range=%s overlaps the Kubernetes NodePort range %d-%d; hostPorts there "
                              "collide with Services" % ((srun["conf"],) + np_range))
            if first < 1024:
                errors.append("srun_port_range=%s starts below 1024 (privileged ports)" % srun["conf"])
            if max_nodes and concurrency:
                each = srun_ports_needed(max_nodes, pty=True)
                if srun["size"] < concurrency * each:
                    errors.append("srun_port_range=%s has %d ports; srun_concurrency=%d sruns at once on a submit host, "
                                  "each --pty over max_node_count=%d nodes (%d ports), need %d"
                                  % (srun["conf"], srun["size"], concurrency, max_nodes, each, concurrency * each))

    version = m.get("slurm_version")
    if version is None:
        if require_discovered:
            errors.append("slurm_version is required (the slurmctld version, e.g. 26.05)")
    else:
        try:
            parse_slurm_version(version)
            oldest = metrics.oldest_slurmd(metrics_section)
            if oldest and release_index(version) < release_index(oldest["release"]):
                errors.append("metrics.controller is on and slurmctld is %s: %s, which slurmctld %s does not know"
                              % (version, oldest["why"], version))
        except ValueError as exc:
            errors.append("slurm_version: %s" % exc)

    registry = m.get("image_registry") or ""
    if registry and not (isinstance(registry, str) and _REGISTRY_RE.match(registry)):
        errors.append("image_registry=%r is not a registry (HOST[:PORT][/PATH], lower case, no scheme, tag or digest; "
                      "e.g. mirror.example.org:5000/hpc)" % (registry,))

    if errors:
        return None, errors

    out = {
        "name": name,
        "network_mode": mode,
        "slurm_version": None if version is None else str(version),
        "max_node_count": max_nodes,
        "srun_concurrency": concurrency,
        "controller": {"host": None if host is None else str(host), "aliases": [a for a in aliases if a != host],
                       "address": ctl_addr, "port": ctl_port, "backups": backups},
        "nodeport": {"address": np_addr, "port": np_port, "range": "%d-%d" % np_range,
                     "static_band": np_port is not None and band is not None and band[0] <= np_port <= band[1]},
        "slurmd_port": slurmd_port,
        "srun_port_range": srun,
        "pod_routes": routes,
        # Routes are installed only in routed mode; the pod CIDRs also explain other modes' failures.
        "routes": routes if mode == "routed" else [],
        "pod_cidrs": [route["cidr"] for route in routes],
        "worker": worker,
        "image_registry": registry,
        # GPUs of bare-metal workers (module_utils/gres.py), None when the site states none
        "gpus": gpus,
        # the workers' health check (module_utils/health.py; health.of(model) is None when it is off)
        "health": health_checks,
        # Slurm accounting (module_utils/accounting.py; accounting.of(model) is None when it is off)
        "accounting": accounting_section,
        # slurmctld's OpenMetrics and the bare-metal node exporter (module_utils/metrics.py)
        "metrics": metrics_section,
        # the oldest slurmd this slurm.conf lets join ({release, why}), None for Slurm's window alone
        "slurmd_oldest": metrics.oldest_slurmd(metrics_section),
    }
    # Each rule's comment spells out the whole rule, so a rule the model no longer
    # produces (say, after a NodePort change) is recognised as stale and replaced.
    out["inbound"] = [{"name": name_, "ports": ports, "comment": "slime.hybrid/in-%s tcp:%s" % (name_, ports)}
                      for name_, ports in (("slurmd", str(slurmd_port)), ("srun", srun["iptables"]))]
    out["inbound"] += metrics.inbound(metrics_section)
    out["inbound_sources"] = site_sources
    out["node_addresses"] = node_addresses
    out["baremetal_addresses"] = baremetal_addresses
    out["sources"] = inbound_sources(
        [("site", site_sources), ("node", node_addresses + [a for a in [np_addr] if a]
                                  + [b["node_address"] for b in backups if b["node_address"]]
                                  + [route["via"] for route in routes]),
         ("pods", [route["cidr"] for route in routes]),
         ("controller", [a for a in [ctl_addr] if a] + [b["address"] for b in backups if b["address"]]),
         ("baremetal", baremetal_addresses)])
    # Routed: bare metal reaches the controller pod at its pod IP through the routes. Otherwise only through its node.
    address, port = (ctl_addr, ctl_port) if mode == "routed" else (np_addr, np_port)
    if ctl_addr is None or address is None:
        # Intent only: nothing is known yet about where the controller runs.
        out["conf_server_address"] = out["conf_server_port"] = out["conf_server"] = None
        out["dnat"] = []
        return out, []
    out["conf_server_address"], out["conf_server_port"] = address, port
    conf_server = "%s:%d" % (address, port)
    # Without routes, slurmd talks to SlurmctldHost:port once it has the config, so that is rewritten
    # to the NodePort; srun/slurmstepd traffic back to an srun in the controller pod goes to its hostPorts.
    out["dnat"] = [] if mode == "routed" else [
        {"name": "slurmctld", "destination": ctl_addr, "ports": str(ctl_port), "to": conf_server},
        {"name": "controller-srun", "destination": ctl_addr, "ports": srun["iptables"], "to": np_addr},
    ]
    if mode != "routed":
        # A backup's pod through its own node: with externalTrafficPolicy Local the NodePort there
        # reaches the controller pods of that node only, and its hostPorts that pod.
        for backup in backups:
            if backup["address"] and backup["node_address"]:
                out["dnat"] += [
                    {"name": "slurmctld", "destination": backup["address"], "ports": str(ctl_port),
                     "to": "%s:%d" % (backup["node_address"], np_port)},
                    {"name": "controller-srun", "destination": backup["address"], "ports": srun["iptables"],
                     "to": backup["node_address"]},
                ]
    if mode == "nat":
        # A pod worker's NodeAddr is its pod IP from each of its registrations until the NodeAddr
        # sidecar (or fix_nodeaddr) points it at its node: meanwhile a step launched from bare metal
        # reaches its slurmd through the node whose pod CIDR holds that IP (hostPort slurmd_port).
        out["dnat"] += [{"name": "pod-slurmd", "destination": route["cidr"], "ports": str(slurmd_port), "to": route["via"]}
                        for route in routes]
    out["conf_server"] = conf_server
    rules = {}
    for rule in out["dnat"]:
        rule["comment"] = "slime.hybrid/%s %s:%s>%s" % (rule["name"], rule["destination"], rule["ports"], rule["to"])
        rules.setdefault(rule["comment"], rule)  # a backup's pod that is the controller's too: one rule
    out["dnat"] = list(rules.values())
    return out, []


def inbound_sources(groups):
    """The sources bare metal accepts slurmd's, srun's and the node exporter's connections from:
    [{cidr, kind}] from groups [(kind, [address or CIDR, ...]), ...] (the first kind that names a
    network wins), without a network another one holds (a bare-metal host inside the site's network is
    accepted by that network's rule), sorted by address."""
    kinds = {}
    for kind, values in groups:
        for value in values:
            kinds.setdefault(ipaddress.ip_network(value), kind)
    kept = [net for net in kinds if not any(other != net and net.subnet_of(other) for other in kinds)]
    return [{"cidr": str(net), "kind": kinds[net]} for net in sorted(kept, key=lambda n: (int(n.network_address), n.prefixlen))]


def _check_networks(errors, label, value, what, hosts=False):
    """A list of IPv4 networks as canonical CIDR text (10.0.0.5 -> 10.0.0.5/32), or with hosts=True of
    IPv4 addresses as text; [] for none."""
    if value in (None, "", []):
        return []
    kind = "address" if hosts else "address or network (e.g. 192.0.2.10, 192.0.2.0/24)"
    if not isinstance(value, list):
        errors.append("%s=%r must be a list of %s, %s" % (
            label, value, "IPv4 addresses" if hosts else "IPv4 addresses or networks (e.g. 192.0.2.10, 192.0.2.0/24)", what))
        return []
    out = []
    for index, item in enumerate(value):
        text = str(item).strip()
        try:
            net = ipaddress.ip_address(text) if hosts else ipaddress.ip_network(text)
        except ValueError as exc:
            hint = ""
            if not hosts and "host bits set" in str(exc):
                hint = "; the network is %s" % ipaddress.ip_network(text, strict=False)
            errors.append("%s[%d]=%r is not an IPv4 %s%s" % (label, index, item, kind, hint))
            continue
        if net.version != 4:
            errors.append("%s[%d]=%r %s" % (label, index, item, _IPV4_ONLY))
            continue
        out.append(str(net if hosts else ipaddress.ip_network(net)))
    return sorted(set(out), key=out.index)


def _host_names(value):
    """value is a list of host names."""
    return isinstance(value, list) and all(isinstance(name, str) and HOSTNAME_RE.match(name) for name in value)


def _check_backups(errors, value):
    """controller.backups: the backup SlurmctldHost entries, in the order they take over:
    [{host, aliases, address, node_address}]. host is the name Slurm connects to (ADDRESS of
    SlurmctldHost=NAME(ADDRESS)); address the backup's pod IP, node_address the node it runs on;
    both absent when no pod answers to it (nothing to map: the doctor reports it)."""
    if value in (None, []):
        return []
    if not isinstance(value, list) or not all(isinstance(b, dict) for b in value):
        errors.append("controller.backups=%r must be a list of mappings {host, aliases, address, node_address} "
                      "(the backup SlurmctldHost entries of slurm.conf)" % (value,))
        return []
    backups = []
    for index, backup in enumerate(value):
        label = "controller.backups[%d]" % index
        host = backup.get("host")
        if not host or not HOSTNAME_RE.match(str(host)):
            errors.append("%s.host=%r is not a host name (ADDRESS of a backup SlurmctldHost=NAME(ADDRESS))" % (label, host))
        aliases = backup.get("aliases") or []
        if not _host_names(aliases):
            errors.append("%s.aliases=%r must be a list of host names" % (label, aliases))
            aliases = []
        address = _optional(errors, label + ".address", backup.get("address"), False, "", _check_ip)
        node_address = _optional(errors, label + ".node_address", backup.get("node_address"), False, "", _check_ip)
        backups.append({"host": str(host), "aliases": [a for a in aliases if a != host],
                        "address": address, "node_address": node_address})
    return backups


def _check_routes(errors, value, required):
    """pod_routes: [{cidr: 10.244.1.0/24, via: NODE_IP}, ...] (a Node's spec.podCIDRs and its address)."""
    if value in (None, "", []):
        if required:
            errors.append("pod_routes is required with network_mode=routed ([{cidr: POD_CIDR, via: NODE_IP}, ...] "
                          "from each Node's spec.podCIDRs)")
        return []
    if not isinstance(value, list):
        errors.append("pod_routes=%r must be a list of {cidr, via}" % (value,))
        return []
    routes = []
    for index, route in enumerate(value):
        label = "pod_routes[%d]" % index
        if not isinstance(route, dict):
            errors.append("%s=%r must be a mapping with cidr and via" % (label, route))
            continue
        cidr = _check_ip(errors, "%s.cidr" % label, route.get("cidr"), ipaddress.ip_network,
                         "a network address in CIDR form (e.g. 10.244.1.0/24)")
        if cidr is None:
            continue
        via = _check_ip(errors, "%s.via" % label, route.get("via"))
        if via:
            routes.append({"cidr": cidr, "via": via})
    return routes
