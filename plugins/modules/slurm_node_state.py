#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: slurm_node_state
short_description: Drain Slurm nodes, wait for their jobs, remove their dynamic node records, or wait until they are available
version_added: 0.2.0
description:
  - Scale-in without losing a job. O(state=drained) sets C(State=DRAIN) on the nodes (one C(scontrol update)
    for all of them), so they take no new job, and waits until none of them runs a job any more.
    Running jobs are never cancelled or requeued. A node runs a job while C(squeue) lists one there that is
    not pending, or it is completing; a record that still says ALLOCATED or MIXED without either is an
    allocation slurmctld failed to free (Slurm 26.05 keeps the GRES of a job that ended after its node
    registered fewer of it), not a job to wait for.
  - O(state=absent) does the same, then deletes the nodes' dynamic node records (C(scontrol delete)).
    Stop slurmd on the hosts between the two (playbooks/scale_in.yml does), or it registers again.
  - O(state=resumed) clears the drain (undo); with O(only_reason=true), only of the nodes drained for O(reason),
    so a drain an operator set for another cause stays (playbooks/upgrade.yml resumes what it drained).
  - When the jobs do not finish within O(timeout), the module fails naming the nodes and their jobs, and leaves
    the nodes drained.
  - O(state=available) changes nothing; it waits until slurmctld lists every named node as available (registered,
    responding, not down or drained; with O(version), at that release), and fails after O(timeout) naming each
    node that is not, with its state. C(scontrol) failing meanwhile (a configless host before slurmd first fetched
    its configuration) counts as not yet available. In check mode it reads once and does not wait.
  - Nodes slurmctld does not know are already absent; they are reported in RV(missing).
  - C(scontrol)/C(squeue) run on the host the module runs on; delegate it to a host that reaches slurmctld.
options:
  names:
    description: Slurm node names.
    type: list
    elements: str
    required: true
  state:
    description: Wanted state.
    type: str
    choices: [drained, absent, resumed, available]
    default: drained
  reason:
    description: Drain reason recorded by slurmctld.
    type: str
    default: slime.hybrid scale-in
  only_reason:
    description: With O(state=resumed), resume only the nodes whose drain reason is O(reason).
    type: bool
    default: false
    version_added: 0.2.0
  version:
    description: With O(state=available), the Slurm release each node must have registered with (C(Version) of its record).
    type: str
    version_added: 0.2.0
  drained_ok:
    description: With O(state=available), count a drained node that is otherwise available (an upgrade's node before its resume).
    type: bool
    default: false
    version_added: 0.2.0
  drain_reason_ok:
    description:
      - With O(state=available), count a drained node that is otherwise available when its drain reason starts with this
        (the health check's drains, which start with C(slime-health) and a colon; the node registered, and its health is
        reported, not waited for).
    type: str
    version_added: 0.2.0
  wait:
    description: Wait until the nodes run no job (always done before a delete).
    type: bool
    default: true
  timeout:
    description: Seconds to wait for running jobs to finish (O(state=available) - for the nodes to be available).
    type: int
    default: 3600
  poll:
    description: Seconds between two reads of the node states.
    type: int
    default: 5
  squeue:
    description: Path of squeue (confirms a busy node runs a job; names the jobs in a timeout message).
    type: str
    default: squeue
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - slime.hybrid.slurm_cli
attributes:
  check_mode:
    support: full
    details: In check mode the module reports which nodes it would drain, resume or delete, and does not wait.
  diff_mode:
    support: full
  platform:
    platforms: posix
author:
  - slime.hybrid contributors (@slime-hpc)
"""

EXAMPLES = r"""
- name: Drain bm-7, wait for its jobs, remove its node record
  slime.hybrid.slurm_node_state:
    names: [bm-7]
    state: absent
    timeout: 7200
  delegate_to: "{{ groups['slurm_baremetal'][0] }}"

- name: Wait until slurmctld lists bm-7 at 26.05.5 (an upgrade's drained node counts)
  slime.hybrid.slurm_node_state:
    names: [bm-7]
    state: available
    version: 26.05.5
    drained_ok: true
    timeout: 120
    poll: 2
"""

RETURN = r"""
drained:
  description: Nodes this run set to DRAIN.
  type: list
  elements: str
  returned: always
resumed:
  description: Nodes this run resumed.
  type: list
  elements: str
  returned: always
deleted:
  description: Nodes whose records this run deleted.
  type: list
  elements: str
  returned: always
missing:
  description: Named nodes slurmctld does not know.
  type: list
  elements: str
  returned: always
waited:
  description: Seconds spent waiting for running jobs.
  type: float
  returned: always
jobs:
  description: Jobs that were running on the nodes when the wait began (id, state, nodes).
  type: list
  elements: dict
  returned: always
nodes:
  description: With O(state=available), slurmctld's record of each named node it lists (C(State), C(NodeAddr), C(Version), ...).
  type: dict
  returned: when O(state=available)
"""

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.slime.hybrid.plugins.module_utils import node_state, scontrol


def read_jobs(module, names):
    return node_state.parse_jobs(scontrol.run(module, "squeue", ["-h", "-w", ",".join(names), "-o", "%i|%T|%N"]))


def busy_nodes(module, names, current=None):
    """The named nodes that run or finish a job: their record says so, and squeue agrees (node_state.running);
    one squeue for all of them."""
    current = scontrol.show_nodes(module) if current is None else current
    busy = node_state.busy_nodes(current, names)
    return node_state.running(current, busy, read_jobs(module, busy)) if busy else []


def wait_available(module, names, result):
    params = module.params
    started = time.time()
    while True:
        current, problem = scontrol.read_nodes(module, names)  # scontrol failing: slurmd not started yet
        waiting = node_state.unavailable(current, names, params["version"], params["drained_ok"], params["drain_reason_ok"])
        if not waiting or module.check_mode:
            break
        if time.time() - started >= params["timeout"]:
            msg = node_state.unavailable_message(waiting, params["timeout"]) + ("; scontrol: %s" % problem if problem else "")
            module.fail_json(msg=msg, nodes=current, **result)
        time.sleep(max(1, params["poll"]))
    result["waited"] = round(time.time() - started, 1)
    module.exit_json(nodes=current, **result)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            scontrol.ARGUMENT_SPEC,
            names=dict(type="list", elements="str", required=True),
            state=dict(type="str", choices=list(node_state.STATES + node_state.WAIT_STATES), default="drained"),
            reason=dict(type="str", default="slime.hybrid scale-in"),
            only_reason=dict(type="bool", default=False),
            version=dict(type="str"),
            drained_ok=dict(type="bool", default=False),
            drain_reason_ok=dict(type="str"),
            wait=dict(type="bool", default=True),
            timeout=dict(type="int", default=3600),
            poll=dict(type="int", default=5),
            squeue=dict(type="str", default="squeue"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    names = params["names"]
    if params["state"] == "available":
        wait_available(module, names, dict(changed=False, drained=[], resumed=[], deleted=[], missing=[], waited=0.0, jobs=[]))
    current = scontrol.show_nodes(module)
    planned = node_state.plan(current, names, params["state"], params["reason"] if params["only_reason"] else None)
    changed = bool(planned["drain"] or planned["resume"] or planned["delete"])
    result = dict(changed=changed, drained=planned["drain"], resumed=planned["resume"], deleted=planned["delete"],
                  missing=planned["missing"], waited=0.0, jobs=[])
    if module._diff:
        before, after = node_state.diff_text(current, names, planned)
        result["diff"] = dict(before=before, after=after)
    if module.check_mode:
        module.exit_json(**result)

    if planned["resume"]:
        scontrol.run(module, "scontrol", node_state.resume_command(planned["resume"]))
    if planned["drain"]:
        scontrol.run(module, "scontrol", node_state.drain_command(planned["drain"], params["reason"]))

    if params["state"] != "resumed" and (params["wait"] or planned["delete"]):
        busy = busy_nodes(module, planned["present"], current) or busy_nodes(module, planned["present"])
        if busy:
            result["jobs"] = read_jobs(module, busy)
        started = time.time()
        while busy and time.time() - started < params["timeout"]:
            time.sleep(max(1, params["poll"]))
            busy = busy_nodes(module, planned["present"])
        result["waited"] = round(time.time() - started, 1)
        if busy:
            module.fail_json(msg=node_state.timeout_message(busy, read_jobs(module, busy), params["timeout"]), **result)

    if planned["delete"]:
        scontrol.run(module, "scontrol", node_state.delete_command(planned["delete"]))
        left = [name for name in planned["delete"] if name in scontrol.show_nodes(module)]
        if left:
            module.fail_json(msg="slurmctld still lists %s after the delete" % ", ".join(left), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
