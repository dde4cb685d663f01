# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over plugins/module_utils/metal3.py: Metal3 host validation and the objects derived from a host."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

import time

from ansible_collections.slime.hybrid.plugins.module_utils import metal3, remediation


def _hosts(hosts):
    normalized, errors = metal3.normalize_hosts(hosts)
    if errors:
        raise AnsibleFilterError("invalid metal3_hosts_list: %s" % "; ".join(errors))
    return normalized


def _errors(hosts):
    return metal3.normalize_hosts(hosts)[1]


def _preflight_hosts(hosts):
    """The bmc_preflight module's input for normalized hosts."""
    return [{"name": host["name"], "address": host["bmc"]["address"], "username": host["bmc"]["username"],
             "password": host["bmc"]["password"], "boot_mac": host["boot_mac"],
             "disable_certificate_verification": host["bmc"]["disable_certificate_verification"]} for host in hosts]


def _secrets(hosts, namespace, cluster_name, user_data):
    """The BMC credentials Secret and the userData Secret of every host (user_data: {name: text})."""
    return [secret for host in hosts
            for secret in (metal3.credentials_secret(host, namespace, cluster_name),
                           metal3.user_data_secret(host, namespace, cluster_name, user_data[host["name"]]))]


def _remediation_plan(bare_metal_hosts, nodes, names=None, policy=None, now=None):
    """What remediation does for each bare-metal node (module_utils/remediation.py): the named nodes and every
    BareMetalHost given (its name is the Slurm node's), from slurmctld's records of them."""
    errors = remediation.policy_errors(policy or {})
    if errors:
        raise AnsibleFilterError("invalid remediation policy: %s" % "; ".join(errors))
    hosts = {}
    for obj in bare_metal_hosts or []:
        metadata = obj.get("metadata") or {}
        hosts[metadata["name"]] = {"name": metadata["name"], "namespace": metadata.get("namespace"),
                                   "state": ((obj.get("status") or {}).get("provisioning") or {}).get("state"),
                                   "annotations": metadata.get("annotations") or {}}
    return remediation.decide(sorted(set(names or []) | set(hosts)), nodes or {}, hosts,
                              int(now) if now is not None else int(time.time()), policy)


class FilterModule(object):
    """slime.hybrid Metal3 filters."""

    def filters(self):
        return {
            "metal3_hosts": _hosts,
            "metal3_host_errors": _errors,
            "metal3_hosts_input_errors": metal3.input_errors,
            "metal3_preflight_hosts": _preflight_hosts,
            "metal3_secrets": _secrets,
            "metal3_bare_metal_host": metal3.bare_metal_host,
            "metal3_stale_user_data": metal3.stale_user_data,
            "metal3_host_report": metal3.host_report,
            "metal3_host_progress": metal3.host_progress,
            "metal3_errors_retried": metal3.errors_retried,
            "metal3_image_urls": metal3.image_urls,
            "metal3_image_refusals": metal3.image_refusals,
            "metal3_remediation_plan": _remediation_plan,
        }
