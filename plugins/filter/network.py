# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over plugins/module_utils/node_addr.py: the addresses pod workers are reached at, and which of them
slurmctld does not have."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.slime.hybrid.plugins.module_utils import node_addr


class FilterModule(object):
    """slime.hybrid network filters."""

    def filters(self):
        return {
            "pod_host_addresses": node_addr.pod_host_addresses,
            "node_addr_pending": node_addr.pending,
        }
