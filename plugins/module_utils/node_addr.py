# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Planning NodeAddr/NodeHostname updates of Slurm nodes.

slurmctld resets a dynamic node's NodeAddr to the source address of each registration,
so the fix for pod workers is re-applied whenever it drifts. Everything here is pure:
it compares what `scontrol show node --oneliner` says with what is wanted and produces
the batched `scontrol update` commands.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re

from ansible_collections.slime.hybrid.plugins.module_utils.names import HOSTNAME_RE


def address_error(value):
    """None for an IPv4 address or a host name Slurm can resolve, else why not.

    IPv6 literals are refused because the bare-metal side of the cluster is IPv4 in this
    release (cluster_model), and a pod worker's NodeAddr is for bare metal to reach; Slurm 26.05
    itself takes them, also in one batched update (docs/cluster-model.md, "IPv6").
    """
    text = str(value).strip() if value is not None else ""
    if not text:
        return "empty address"
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        if re.match(r"^[0-9.]+$", text) or not HOSTNAME_RE.match(text):
            return "%r is neither an IPv4 address nor a host name" % (value,)
        return None
    if addr.version != 4:
        return "%r is IPv6; give an IPv4 address or a host name" % (value,)
    return None


def normalize_desired(nodes):
    """{name: addr | {address, hostname}} -> ({name: {"NodeAddr": .., "NodeHostName": ..|None}}, errors)."""
    desired, errors = {}, []
    for name in sorted(nodes or {}):
        spec = nodes[name]
        if isinstance(spec, dict):
            addr, hostname = spec.get("address"), spec.get("hostname")
        else:
            addr, hostname = spec, None
        field, problem = "address", address_error(addr)
        if not problem and hostname is not None:
            field, problem = "hostname", address_error(hostname)
        if problem:
            errors.append("%s: %s %s" % (name, field, problem))
            continue
        desired[name] = {"NodeAddr": str(addr).strip(), "NodeHostName": str(hostname).strip() if hostname else None}
    return desired, errors


def select_nodes(current, features=None, names=None):
    """Names of nodes in `current` (parsed scontrol output) that have every feature and are listed in names."""
    wanted = set(features or [])
    return sorted(name for name, record in current.items() if (not names or name in names)
                  and wanted.issubset(filter(None, record.get("AvailableFeatures", "").split(","))))


def wanted(current, nodes=None, features=None, names=None, address_map=None):
    """What an update of NodeAddr wants of `current` (parsed scontrol output): (spec, selected, unknown, missing) - the
    addresses by node ({name: addr | {address, hostname}}, normalize_desired()'s input), the nodes selected (`nodes`
    given: those; else those of `current` with every feature and, with `names`, listed), the listed names slurmctld does
    not know, and the selected nodes `address_map` has no address for."""
    if nodes is not None:
        return nodes, sorted(nodes), [], []
    selected = select_nodes(current, features, names)
    mapping = address_map or {}
    return (dict((name, mapping[name]) for name in selected if name in mapping), selected,
            sorted(set(names or []) - set(current)), [name for name in selected if name not in mapping])


def pending(current, address_map, features=None, names=None):
    """The nodes an update of NodeAddr (module slurm_node_addr, from the same selection) would change or refuse,
    sorted: none when every selected node has its address - the update can be skipped."""
    spec, _selected, unknown, missing = wanted(current, None, features, names, address_map)
    desired, errors = normalize_desired(spec)
    changes, absent = plan(current, desired)
    return sorted(set(unknown) | set(missing) | set(absent) | set(changes)
                  | set(error.split(":", 1)[0] for error in errors))


def plan(current, desired):
    """Compare and return (changes, unknown).

    changes: {name: {"before": {...}, "after": {...}}} for nodes whose NodeAddr or
    (when wanted) NodeHostName differ; unknown: wanted names slurmctld does not know.
    """
    changes, unknown = {}, []
    for name, want in sorted(desired.items()):
        record = current.get(name)
        if record is None:
            unknown.append(name)
            continue
        before = {"NodeAddr": record.get("NodeAddr"), "NodeHostName": record.get("NodeHostName")}
        after = dict(before, NodeAddr=want["NodeAddr"], NodeHostName=want.get("NodeHostName") or before["NodeHostName"])
        if after != before:
            changes[name] = {"before": before, "after": after}
    return changes, unknown


def update_commands(changes):
    """The scontrol argument lists that apply every change: one per kind of update.

    scontrol accepts a node list with a matching list of addresses
    (NodeName=a,b NodeAddr=x,y), so any number of nodes costs one RPC.
    """
    with_host = sorted(n for n, c in changes.items() if c["after"]["NodeHostName"] != c["before"]["NodeHostName"])
    addr_only = sorted(n for n in changes if n not in with_host)
    commands = []
    if addr_only:
        commands.append(["update", "NodeName=" + ",".join(addr_only),
                         "NodeAddr=" + ",".join(changes[n]["after"]["NodeAddr"] for n in addr_only)])
    if with_host:
        commands.append(["update", "NodeName=" + ",".join(with_host),
                         "NodeAddr=" + ",".join(changes[n]["after"]["NodeAddr"] for n in with_host),
                         "NodeHostname=" + ",".join(changes[n]["after"]["NodeHostName"] for n in with_host)])
    return commands


def diff_text(changes, key):
    """Lines for Ansible's diff: one `name NodeAddr=.. NodeHostName=..` line per changed node."""
    return "".join("%s NodeAddr=%s NodeHostName=%s\n" % (name, change[key]["NodeAddr"], change[key]["NodeHostName"])
                   for name, change in sorted(changes.items()))


def pod_host_addresses(pods):
    """{Slurm node name: status.hostIP} for pod objects (dicts as the Kubernetes API returns them).

    A Slinky pod's Slurm node name is its hostname: spec.hostname when set, else the pod name.
    Pods without a hostIP (not scheduled yet) are left out.
    """
    out = {}
    for pod in pods or []:
        host_ip = (pod.get("status") or {}).get("hostIP")
        if not host_ip:
            continue
        name = (pod.get("spec") or {}).get("hostname") or (pod.get("metadata") or {}).get("name")
        if name:
            out[name] = host_ip
    return out
