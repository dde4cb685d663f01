# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over plugins/module_utils/doctor.py: what the hybrid doctor probes and how it reports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.slime.hybrid.plugins.filter.cluster import model_or_fail
from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model, doctor


def _doctor_checks(model, nodes, member, members=None, stale=None):
    nodes = dict((name, record) for name, record in (nodes or {}).items() if name not in (stale or {}))
    peers = doctor.share(nodes, members, member) if members else None
    return doctor.baremetal_checks(model_or_fail(cluster_model.normalize, model), nodes, member, peers)


def _doctor_controller_address(resolved, model, member):
    return doctor.controller_addresses(model_or_fail(cluster_model.normalize, model), resolved, member)


def _doctor_controller_ping(output, model, member):
    return doctor.controller_ping(output, model_or_fail(cluster_model.normalize, model), member)


def _doctor_srun_ports(listening, model, member):
    return doctor.srun_port_use(listening, model_or_fail(cluster_model.normalize, model), member)


def _doctor_inbound_sources(listing, model, member):
    return doctor.inbound_sources(listing, model_or_fail(cluster_model.normalize, model), member)


def _doctor_findings(nodes, model=None, stale=None):
    return doctor.controller_findings(nodes, model_or_fail(cluster_model.normalize, model) if model else None, stale)


def _doctor_gpu_devices(stats, model, member):
    return doctor.gpu_devices(stats, model_or_fail(cluster_model.normalize, model), member)


def _doctor_report(results):
    table, broken = doctor.report(results)
    return {"table": table.splitlines(), "broken": broken}


class FilterModule(object):
    """slime.hybrid doctor filters."""

    def filters(self):
        return {
            "doctor_checks": _doctor_checks,
            "doctor_controller_address": _doctor_controller_address,
            "doctor_controller_ping": _doctor_controller_ping,
            "doctor_findings": _doctor_findings,
            "doctor_inbound_sources": _doctor_inbound_sources,
            "doctor_gpu_devices": _doctor_gpu_devices,
            "doctor_report": _doctor_report,
            "doctor_share": doctor.share,
            "doctor_srun_ports": _doctor_srun_ports,
            "doctor_srun_results": doctor.srun_results,
        }
