# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over plugins/module_utils/scontrol.py: scontrol's node table as data."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.slime.hybrid.plugins.module_utils import scontrol


def _scontrol_host(hosts, leaving=None):
    """The first of hosts (the slurm_baremetal group) that is not leaving, '' when none stays: where the
    scale playbooks run scontrol unless slime_scontrol_host names a host."""
    return next((host for host in hosts if host not in (leaving or [])), "")


class FilterModule(object):
    """slime.hybrid scontrol filters."""

    def filters(self):
        return {
            "scontrol_nodes": scontrol.parse_nodes,
            "scontrol_record": scontrol.parse_node_line,
            "slurm_node_available": scontrol.is_available,
            "scontrol_host": _scontrol_host,
        }
