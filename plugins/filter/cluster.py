# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over plugins/module_utils/cluster_model.py: the one model of the cluster, built from the
site's intent and what was discovered, and the checks of what a site writes (features, names).
Each filter is documented in plugins/filter/<name>.yml (ansible-doc -t filter slime.hybrid.<name>)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from jinja2 import Undefined

from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model, names


def model_or_fail(function, *args):
    """function(*args), with an undefined variable or an invalid model reported as a filter error."""
    for arg in args:
        if isinstance(arg, Undefined):
            arg._fail_with_undefined_error()  # report the undefined variable, not a bad model
    try:
        return function(*args)
    except cluster_model.ModelError as exc:
        raise AnsibleFilterError("invalid slime_cluster: %s" % exc)


def _cluster_model(intent, discovered=None):
    return model_or_fail(cluster_model.normalize, intent, discovered)


def _cluster_intent(intent):
    return model_or_fail(cluster_model.normalize_intent, intent)


class FilterModule(object):
    """slime.hybrid cluster model filters."""

    def filters(self):
        return {
            "cluster_model": _cluster_model,
            "cluster_errors": cluster_model.validate,
            "cluster_intent": _cluster_intent,
            "cluster_intent_errors": cluster_model.intent_errors,
            "dns_label_errors": names.dns_label_errors,
            "srun_ports_needed": cluster_model.srun_ports_needed,
        }
