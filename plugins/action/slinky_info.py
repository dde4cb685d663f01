# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Module slinky_info's read, made in the controller's process where the module would run on the controller
(plugins/plugin_utils/kube_read_action.py); elsewhere the module runs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.slime.hybrid.plugins.module_utils import slinky
from ansible_collections.slime.hybrid.plugins.plugin_utils.kube_read_action import KubeReadAction


class ActionModule(KubeReadAction):
    MODULE = "slime.hybrid.slinky_info"
    OPTIONS = slinky.INFO_OPTIONS
    READER = staticmethod(slinky.info)
