# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over plugins/module_utils/slinky.py: the Slinky charts' values and the checks of the
objects the operator made."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.slime.hybrid.plugins.filter.cluster import model_or_fail
from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model, gres, openshift, slinky, slinky_state, slurm_order


def _chart_values(intent, nodesets=None, loginsets=None, service_accounts=None, nodeaddr_sync=None, accounting_database=None):
    return slinky.chart_values(model_or_fail(cluster_model.normalize_intent, intent), nodesets, loginsets, service_accounts,
                               nodeaddr_sync, accounting_database)


def _chart_images(intent, chart):
    return slinky.image_values(chart, model_or_fail(cluster_model.normalize_intent, intent)["image_registry"])


def _openshift_sccs(values, namespace, network_mode, service_accounts):
    return openshift.scc_objects(values, namespace, network_mode, slinky.service_account_names(service_accounts))


def _gres_conf_changes(before, after):
    """Nodes whose lines of the controller's gres.conf change: before and after are chart values (configFiles)."""
    def conf(values):
        return ((values or {}).get("configFiles") or {}).get("gres.conf") or ""
    return gres.conf_changes(conf(before), conf(after))


class FilterModule(object):
    """slime.hybrid Slinky filters."""

    def filters(self):
        return {
            "chart_images": _chart_images,
            "chart_values": _chart_values,
            "config_drift": slinky.config_drift,
            "config_map_name": slinky.config_map_name,
            "gres_conf_changes": _gres_conf_changes,
            "openshift_sccs": _openshift_sccs,
            "rollout_pending": slinky.rollout_pending,
            "service_drift": slinky.service_drift,
            "slinky_drift": slinky_state.drift,
            "slinky_immutable_changes": slinky_state.immutable_changes,
            "slinky_input_errors": slinky.input_errors,
            "slinky_network_mode_change": slinky_state.network_mode_change,
            "slinky_stale_workers": slinky.stale_workers,
            "slurm_order_errors": slurm_order.errors,
            "slurmdbd_upgrade": slurm_order.slurmdbd_upgrade,
        }
