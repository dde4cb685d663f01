# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that expose the cluster model (plugins/module_utils/cluster_model.py) to roles and templates."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from jinja2 import Undefined

from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model, doctor, netfilter, node_addr, scontrol, secret_file, slinky


def _normalized(function, *args):
    for arg in args:
        if isinstance(arg, Undefined):
            arg._fail_with_undefined_error()  # report the undefined variable, not a bad model
    try:
        return function(*args)
    except cluster_model.ModelError as exc:
        raise AnsibleFilterError("invalid slime_cluster: %s" % exc)


def _cluster_model(intent, discovered=None):
    """The model: slime_cluster completed by what slinky_info discovered (its ``cluster``)."""
    return _normalized(cluster_model.normalize, intent, discovered)


def _cluster_intent(intent):
    """slime_cluster before the cluster exists: discovered fields may be missing."""
    return _normalized(cluster_model.normalize_intent, intent)


def _chart_values(intent, nodesets=None, loginsets=None, service_accounts=None):
    return slinky.chart_values(_cluster_intent(intent), nodesets, loginsets, service_accounts)


def _loginset_errors(intent, loginsets):
    """Problems of the LoginSets; [] while the intent itself is invalid (cluster_intent_errors says why)."""
    try:
        return slinky.loginset_errors(cluster_model.normalize_intent(intent), loginsets)
    except cluster_model.ModelError:
        return []


def _doctor_checks(model, nodes, member):
    return doctor.baremetal_checks(_cluster_model(model), nodes, member)


def _doctor_report(results):
    table, broken = doctor.report(results)
    return {"table": table.splitlines(), "broken": broken}


def _slurm_compat_error(slurmd_version, slurmctld_version):
    return cluster_model.version_compat_error(slurmd_version, slurmctld_version) or ""


def _key_error(content_b64):
    """'' for a usable base64 key, else why not (never the key itself)."""
    try:
        secret_file.decode_key(content_b64)
    except ValueError as exc:
        return str(exc)
    return ""


class FilterModule(object):
    def filters(self):
        return {
            "cluster_model": _cluster_model,
            "cluster_errors": cluster_model.validate,
            "cluster_intent": _cluster_intent,
            "cluster_intent_errors": cluster_model.intent_errors,
            "chart_values": _chart_values,
            "loginset_errors": _loginset_errors,
            "service_drift": slinky.service_drift,
            "service_account_errors": slinky.service_account_errors,
            "feature_errors": cluster_model.feature_errors,
            "dns_label_errors": cluster_model.dns_label_errors,
            "slurm_compat_error": _slurm_compat_error,
            "srun_ports_needed": cluster_model.srun_ports_needed,
            "slurmd_conf": cluster_model.slurmd_conf_args,
            "key_error": _key_error,
            "apt_policy_version": cluster_model.apt_policy_version,
            "scontrol_nodes": scontrol.parse_nodes,
            "scontrol_record": scontrol.parse_node_line,
            "iptables_stale": netfilter.stale_rules,
            "pod_host_addresses": node_addr.pod_host_addresses,
            "doctor_checks": _doctor_checks,
            "doctor_findings": doctor.controller_findings,
            "doctor_report": _doctor_report,
            "doctor_srun_results": doctor.srun_results,
            "slurm_node_available": scontrol.is_available,
        }
