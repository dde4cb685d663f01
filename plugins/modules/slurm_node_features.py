#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: slurm_node_features
short_description: Make slurmctld's features of Slurm nodes the wanted ones, in one batched update
version_added: 0.1.0
description:
  - A dynamic node (C(slurmd -Z --conf "Feature=...")) that registers again keeps, in slurmctld, the features of its
    first registration, so a changed feature list reaches slurmd but not the node record jobs are scheduled by.
  - This module reads every node once with C(scontrol show node --oneliner), and sets C(AvailableFeatures) and
    C(ActiveFeatures) of the nodes that differ, one C(scontrol update) per distinct feature list. Jobs keep running.
  - C(scontrol) runs on the host the module runs on (a configless bare-metal worker can run it).
options:
  nodes:
    description: Wanted features per Slurm node name.
    type: dict
    required: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - slime.hybrid.slurm_cli
attributes:
  check_mode:
    support: full
    details: In check mode the module reports which nodes differ and changes nothing.
  diff_mode:
    support: full
  platform:
    platforms: posix
author:
  - slime.hybrid contributors (@slime-hpc)
"""

EXAMPLES = r"""
- name: Give bm-1 the features the inventory says
  slime.hybrid.slurm_node_features:
    nodes:
      bm-1: [baremetal, gpu]
"""

RETURN = r"""
changed_nodes:
  description: Names of the nodes whose features differed (and, outside check mode, were updated).
  returned: always
  type: list
  elements: str
  sample: [bm-1]
nodes:
  description: Per changed node, the features before and after.
  returned: always
  type: dict
  sample: {"bm-1": {"before": {"AvailableFeatures": ["baremetal"], "ActiveFeatures": ["baremetal"]},
                    "after": {"AvailableFeatures": ["baremetal", "gpu"], "ActiveFeatures": ["baremetal", "gpu"]}}}
commands:
  description: The scontrol updates that were (or, in check mode, would be) run.
  returned: always
  type: list
  elements: list
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.slime.hybrid.plugins.module_utils import node_features, scontrol


def main():
    module = AnsibleModule(
        argument_spec=dict(
            scontrol.ARGUMENT_SPEC,
            nodes=dict(type="dict", required=True),
        ),
        supports_check_mode=True,
    )
    wanted = module.params["nodes"]
    not_lists = sorted(name for name, value in wanted.items() if not isinstance(value, list))
    if not_lists:
        module.fail_json(msg="nodes: the features of %s must be a list" % ", ".join(not_lists))
    changes, unknown, errors = node_features.plan(scontrol.show_nodes(module, sorted(wanted)), wanted)
    if errors:
        module.fail_json(msg="; ".join(errors))
    scontrol.converge(module, changes, unknown, node_features, lambda after: node_features.plan(after, wanted)[0], "features")


if __name__ == "__main__":
    main()
