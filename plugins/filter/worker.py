# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over plugins/module_utils/worker.py: what a bare-metal worker is made of, once, for
the SSH path and the cloud-init path alike."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.slime.hybrid.plugins.filter.cluster import model_or_fail
from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model, worker


def _worker_plan(model, node):
    try:
        return worker.plan(model_or_fail(cluster_model.normalize, model), node)
    except ValueError as exc:
        raise AnsibleFilterError("worker_plan: %s" % exc)


class FilterModule(object):
    """slime.hybrid worker filters."""

    def filters(self):
        return {
            "worker_plan": _worker_plan,
        }
