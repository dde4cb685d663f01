# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over plugins/module_utils/metal3_dev_env.py: what roles/metal3_dev_env decides."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.slime.hybrid.plugins.module_utils import metal3_dev_env


class FilterModule(object):
    """slime.hybrid metal3-dev-env filters."""

    def filters(self):
        return {
            "metal3_dev_env_networks": metal3_dev_env.networks,
            "metal3_dev_env_choices": metal3_dev_env.choices,
            "metal3_dev_env_input_errors": metal3_dev_env.input_errors,
            "metal3_dev_env_missing": metal3_dev_env.missing,
            "metal3_dev_env_hosts": metal3_dev_env.hosts,
            "metal3_dev_env_hosts_problem": metal3_dev_env.hosts_problem,
        }
