#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: slurm_node_info
short_description: Read in one call how a bare-metal Slurm worker differs from its plan
version_added: 0.1.0
description:
  - Reads, on the host, everything role C(slime.hybrid.slurm_node) manages (the slurm user, slurm.key, the slurmd
    drop-in, the package source, the packages (dpkg or the RPM database) and what dpkg left unfinished, the C(/etc/hosts) entry, the iptables
    chains, the pod network routes, slurmd's unit and when slurmd started, and slurmctld's record of the node) and
    compares it with the plan (filter C(slime.hybrid.worker_plan)).
  - Returns, per part, why the host differs; the role applies only those parts, so a converged host costs one
    module run instead of one per file, rule and check.
  - Optionally waits for a TCP port (the conf server) to answer, as the role's preflight.
  - Read-only, it never changes the host.
  - Given O(cluster) and O(node) instead of O(plan), the module's action plugin computes the plan on the controller
    (as filter C(slime.hybrid.worker_plan) does), waits for the conf server in network modes V(nat) and V(hostnetwork),
    returns the plan and the model (RV(plan), RV(model)), and fails the task with what role C(slime.hybrid.slurm_node)
    refuses a host for (RV(conflicts), a conf server that does not answer), the host named; the role's plan, read and
    check in one task.
options:
  plan:
    description: The host's plan, as filter C(slime.hybrid.worker_plan) computes it. One of O(plan) and O(cluster) is
      required.
    type: dict
  name:
    description: The Slurm node name of the host; with O(node), its C(name).
    type: str
  cluster:
    description: The cluster model or the site's intent (C(slime_cluster), what filter C(slime.hybrid.cluster_model)
      takes); with O(node), the plan is computed from it.
    type: dict
  node:
    description: This host's settings, as filter C(slime.hybrid.worker_plan) takes them (C(name), C(features),
      C(conf_extra), C(worker)); with O(cluster).
    type: dict
  preflight_timeout:
    description: With O(cluster), seconds to wait for the conf server (the model's) to accept a connection.
    type: float
    default: 5
  features:
    description: The features slurmctld's record of the node must have.
    type: list
    elements: str
    default: []
  slurm_key_b64:
    description: slurm.key, base64; only its digest is compared with the file's, and neither is returned.
    type: str
    required: true
  all_nodes:
    description:
      - Read every node's record in the same C(scontrol show node) run and return them as RV(nodes), for the host that
        runs the pod workers' NodeAddr stage; filter P(slime.hybrid.node_addr_pending#filter) then says whether that
        stage has anything to do.
    type: bool
    default: false
  conf_server:
    description: Wait up to O(conf_server.timeout) seconds for this TCP port to accept a connection.
    type: dict
    suboptions:
      host:
        description: Address of the conf server.
        type: str
        required: true
      port:
        description: Its port.
        type: int
        required: true
      timeout:
        description: Seconds to wait.
        type: float
        default: 5
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - slime.hybrid.slurm_cli
attributes:
  check_mode:
    support: full
    details: The module only reads.
  diff_mode:
    support: none
  platform:
    platforms: debian
author:
  - slime.hybrid contributors (@slime-hpc)
"""

EXAMPLES = r"""
- name: Plan, read and check this host in one task (as role slime.hybrid.slurm_node does)
  slime.hybrid.slurm_node_info:
    cluster: "{{ slime_model }}"
    node: {name: bm-1, features: [baremetal], conf_extra: {}, worker: {}}
    slurm_key_b64: "{{ slurm_key_b64 }}"
  register: state

- name: Read how this host differs from its plan
  slime.hybrid.slurm_node_info:
    plan: "{{ __slurm_node_plan }}"
    name: bm-1
    features: [baremetal]
    slurm_key_b64: "{{ slurm_key_b64 }}"
  register: state
"""

RETURN = r"""
drift:
  description: Per part of the plan the host does not match, the reasons; empty when the host is converged.
  returned: always
  type: dict
  sample: {"firewall": ["rule missing: -A OUTPUT -p tcp -m comment --comment slime.hybrid -j SLIME-HYBRID-OUT"]}
conflicts:
  description: What the role cannot make right on this host and refuses before changing it (an active firewalld where
    the role manages iptables).
  returned: always
  type: list
  elements: str
  sample: []
node:
  description: slurmctld's record of the node (C(scontrol show node NAME) on the host), the fields the role reports; null when
    slurmctld does not list it or scontrol fails.
  returned: always
  type: dict
  sample: {"State": "IDLE+DYNAMIC_NORM", "NodeAddr": "10.127.0.61", "AvailableFeatures": "baremetal", "Version": "26.05.5"}
nodes:
  description: Every node's record as C(scontrol show node --oneliner) gives it, parsed, by node name.
  returned: with O(all_nodes)
  type: dict
  sample: {"slinky-0": {"NodeName": "slinky-0", "NodeAddr": "10.127.0.31", "AvailableFeatures": "slinky"}}
plan:
  description: The plan computed from O(cluster) and O(node).
  returned: with O(cluster)
  type: dict
model:
  description: The cluster model the plan was computed from (O(cluster), normalized).
  returned: with O(cluster)
  type: dict
msg:
  description: With O(cluster), the node as slurmctld records it when nothing differs, else the parts that differ; or
    why the host is refused.
  returned: with O(cluster)
  type: str
  sample: "bm-1: State=IDLE+DYNAMIC_NORM NodeAddr=10.127.0.61 Features=baremetal Version=26.05.5"
conf_server:
  description: What the wait for O(conf_server) saw (V(open), V(refused), V(timeout), ...) and after how many seconds.
  returned: when O(conf_server) is given
  type: dict
  sample: {"state": "open", "seconds": 0.002}
"""

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.slime.hybrid.plugins.module_utils import host_state, probe, scontrol, worker_drift
from ansible_collections.slime.hybrid.plugins.module_utils.secret_file import decode_key, digest

REPORTED = ("State", "NodeAddr", "AvailableFeatures", "Version")


def main():
    module = AnsibleModule(
        argument_spec=dict(
            scontrol.ARGUMENT_SPEC,
            plan=dict(type="dict"),
            name=dict(type="str"),
            # The action plugin's own (plugins/action/slurm_node_info.py): it computes plan and name from them.
            cluster=dict(type="dict"),
            node=dict(type="dict"),
            preflight_timeout=dict(type="float", default=5.0),
            features=dict(type="list", elements="str", default=[]),
            all_nodes=dict(type="bool", default=False),
            slurm_key_b64=dict(type="str", required=True, no_log=True),
            conf_server=dict(type="dict", options=dict(
                host=dict(type="str", required=True),
                port=dict(type="int", required=True),
                timeout=dict(type="float", default=5.0),
            )),
        ),
        required_one_of=[("plan", "cluster")],
        mutually_exclusive=[("plan", "cluster")],
        required_together=[("cluster", "node")],
        supports_check_mode=True,
    )
    params = module.params
    if params["plan"] is None or params["name"] is None:
        module.fail_json(msg="plan and name are required (cluster and node are taken by the action plugin)")
    try:
        key_sha256 = digest(decode_key(params["slurm_key_b64"]))
    except ValueError as exc:
        module.fail_json(msg="slurm_key_b64: %s" % exc)
    result = {"changed": False}
    server = params["conf_server"]
    if server:
        result["conf_server"] = probe.wait_open(server["host"], server["port"], server["timeout"], time.sleep)
    try:
        observed = host_state.observe(worker_drift.observe_targets(params["plan"], params["name"]),
                                      lambda argv: module.run_command(argv, handle_exceptions=False), params["scontrol"],
                                      params["all_nodes"])
        result["drift"] = worker_drift.drift(params["plan"], observed, params["name"], params["features"], key_sha256)
        result["conflicts"] = worker_drift.conflicts(params["plan"], observed)
        record = observed["node"]
        result["node"] = dict((key, record.get(key)) for key in REPORTED) if record else None
        if params["all_nodes"]:
            result["nodes"] = observed["nodes"]
    except (KeyError, TypeError) as exc:
        module.fail_json(msg="plan: not a plan of filter slime.hybrid.worker_plan (%s: %s)" % (type(exc).__name__, exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
