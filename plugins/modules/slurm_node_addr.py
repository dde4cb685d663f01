#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: slurm_node_addr
short_description: Set NodeAddr/NodeHostname of Slurm nodes in one batched update
version_added: 0.1.0
description:
  - Pod workers register with their pod IP, which hosts outside the pod network cannot route to.
    This module points their C(NodeAddr) at an address that is reachable, typically the IP of the
    Kubernetes node that exposes the pod's slurmd and srun ports as hostPorts.
  - It reads every node once with C(scontrol show node --oneliner), changes only the nodes that differ,
    and applies all changes with one C(scontrol update NodeName=a,b NodeAddr=x,y) call.
  - slurmctld resets a dynamic node's NodeAddr to the source address of each registration, so the fix
    decays when a slurmd restarts or slurmctld re-polls its nodes. Run the module again (for example from
    C(playbooks/fix_nodeaddr.yml) on a timer); in check mode it reports the drift without fixing it.
  - C(scontrol) runs on the host the module runs on. Delegate the task to a host where C(scontrol)
    reaches slurmctld (the controller or a login node/pod, a bare-metal worker).
options:
  nodes:
    description:
      - Wanted address per Slurm node name, either the address itself or a dict with C(address) and
        optional C(hostname).
      - Mutually exclusive with O(features)/O(names).
    type: dict
  features:
    description: Select the nodes that have all these features (for example C(pod)); addresses come from O(address_map).
    type: list
    elements: str
  names:
    description: Select these node names; addresses come from O(address_map).
    type: list
    elements: str
  address_map:
    description:
      - Address per node name for the nodes chosen by O(features)/O(names), for example built from the
        pods' C(status.hostIP).
    type: dict
  missing:
    description:
      - What to do with a selected node that has no entry in O(address_map), and with a name in
        O(names) that slurmctld does not know (a pod worker that is gone, for example).
    type: str
    choices: [fail, skip]
    default: fail
  settle:
    description:
      - Seconds to wait, when some node differs, before reading the nodes once more and deciding on that
        reading; C(0) decides on the first.
      - With the NodeAddr sidecar beside slurmctld (role C(slime.hybrid.slinky), C(slinky_nodeaddr_sync)), a
        node that has just registered is at its pod IP until the sidecar's next read; more than its interval
        lets it heal the node first, so that neither a change nor drift is reported for what heals itself.
    type: int
    default: 0
    version_added: 0.2.0
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - slime.hybrid.slurm_cli
attributes:
  check_mode:
    support: full
    details: In check mode the module reports which nodes differ (drift) and changes nothing.
  diff_mode:
    support: full
  platform:
    platforms: posix
author:
  - slime.hybrid contributors (@slime-hpc)
"""

EXAMPLES = r"""
- name: Point pod workers at the hosts that publish their hostPorts
  slime.hybrid.slurm_node_addr:
    nodes:
      slurm-worker-0: 10.0.0.21
      slurm-worker-1: {address: 10.0.0.22, hostname: k8s-node-2}
  delegate_to: slurm-login-0

- name: Every node with feature "pod", addresses from the pods' host IPs
  slime.hybrid.slurm_node_addr:
    features: [pod]
    address_map: "{{ pods.resources | items2dict(key_name='metadata', value_name='status') }}"
  delegate_to: "{{ groups['slurm_baremetal'][0] }}"

- name: Drift check (changes nothing, reports nodes whose NodeAddr is wrong)
  slime.hybrid.slurm_node_addr:
    features: [pod]
    address_map: "{{ pod_host_ips }}"
  check_mode: true
  register: drift
"""

RETURN = r"""
changed_nodes:
  description: Names of the nodes whose NodeAddr/NodeHostName differed (and, outside check mode, were updated).
  returned: always
  type: list
  elements: str
  sample: [pod-1, pod-2]
nodes:
  description: Per changed node, the values before and after.
  returned: always
  type: dict
  sample: {"pod-1": {"before": {"NodeAddr": "10.126.0.21", "NodeHostName": "pod-1"},
                     "after": {"NodeAddr": "10.127.0.51", "NodeHostName": "pod-1"}}}
selected:
  description: Names of all nodes the module looked at.
  returned: always
  type: list
  elements: str
commands:
  description: The scontrol updates that were (or, in check mode, would be) run.
  returned: always
  type: list
  elements: list
"""

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.slime.hybrid.plugins.module_utils import node_addr, scontrol


def wanted(module, current):
    params = module.params
    spec, selected, unknown, missing = node_addr.wanted(current, params["nodes"], params["features"], params["names"],
                                                        params["address_map"])
    if unknown and params["missing"] == "fail":
        module.fail_json(msg="slurmctld does not know node(s): %s" % ", ".join(unknown), unknown=unknown)
    if missing and params["missing"] == "fail":
        module.fail_json(msg="no address in address_map for selected node(s): %s" % ", ".join(missing),
                         selected=selected)
    return spec, selected


def main():
    module = AnsibleModule(
        argument_spec=dict(
            scontrol.ARGUMENT_SPEC,
            nodes=dict(type="dict"),
            features=dict(type="list", elements="str"),
            names=dict(type="list", elements="str"),
            address_map=dict(type="dict"),
            missing=dict(type="str", choices=["fail", "skip"], default="fail"),
            settle=dict(type="int", default=0),
        ),
        mutually_exclusive=[("nodes", "features"), ("nodes", "names"), ("nodes", "address_map")],
        required_one_of=[("nodes", "features", "names")],
        required_by={"features": "address_map", "names": "address_map"},
        supports_check_mode=True,
    )
    current = scontrol.show_nodes(module)
    spec, selected = wanted(module, current)
    desired, errors = node_addr.normalize_desired(spec)
    if errors:
        module.fail_json(msg="invalid addresses: " + "; ".join(errors))
    changes, unknown = node_addr.plan(current, desired)
    if changes and not unknown and module.params["settle"] > 0:
        time.sleep(module.params["settle"])
        changes, unknown = node_addr.plan(scontrol.show_nodes(module), desired)
    scontrol.converge(module, changes, unknown, node_addr, lambda after: node_addr.plan(after, desired)[0], "addresses",
                      selected=selected)


if __name__ == "__main__":
    main()
