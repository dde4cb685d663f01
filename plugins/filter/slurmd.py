# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over plugins/module_utils/slurmd.py: the Slurm release a bare-metal slurmd may run
beside slurmctld, the version apt leaves installed, slurmd's --conf arguments, and what a
rolling upgrade does to a host."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.slime.hybrid.plugins.module_utils import slurmd


def _slurm_compat_error(slurmd_version, slurmctld_version, oldest=None):
    return slurmd.version_compat_error(slurmd_version, slurmctld_version, oldest) or ""


class FilterModule(object):
    """slime.hybrid slurmd filters."""

    def filters(self):
        return {
            "slurm_compat_error": _slurm_compat_error,
            "apt_policy_version": slurmd.apt_policy_version,
            "slurmd_conf": slurmd.slurmd_conf_args,
            "slurmd_upgrade": slurmd.upgrade_plan,
        }
