# -*- coding: utf-8 -*-
# Copyright: slime.hybrid contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The option of slime.hybrid's modules that run Slurm's scontrol (module_utils/scontrol.py
ARGUMENT_SPEC, which those modules take into their own argument spec)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  scontrol:
    description:
      - Path of the C(scontrol) command, run on the host the module runs on (delegate the task to a host that reaches
        slurmctld).
      - Set it once for every such module with C(module_defaults) of the action group C(slime.hybrid.slurm).
    type: str
    default: scontrol
"""
