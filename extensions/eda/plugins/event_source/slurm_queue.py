# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ansible-rulebook event source: watch Slurm's queue and bare-metal nodes, and say when to
scale the bare-metal side out or in (the rules: plugins/module_utils/autoscale.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
short_description: Scale bare-metal Slurm workers from the queue
description:
  - Polls C(squeue) and C(scontrol show node) every O(interval) seconds through O(command) and
    applies slime.hybrid's autoscaling policy (pending jobs only bare metal can serve, idle time
    by Slurm's own LastBusyTime, cool-down, bounds; see docs/howto-autoscale.md).
  - Emits C({"slurm_autoscale": {"action": "scale_out"|"scale_in", "hosts": [...], "reason": ...}})
    when the policy asks for a change; nothing otherwise.
options:
  command:
    description: How to run Slurm's client commands, as a list put before C(squeue)/C(scontrol),
      e.g. C([kubectl, exec, -n, slurm, slurm-controller-0, -c, slurmctld, --]). Empty runs them here.
    type: list
    elements: str
    default: []
  interval:
    description: Seconds between two polls.
    type: int
    default: 15
  hosts:
    description: The pool, host names C(scale_out.yml) may add and C(scale_in.yml) may release.
    type: list
    elements: str
    required: true
  feature:
    description: The feature of bare-metal nodes, and of jobs only they can serve.
    type: str
    default: baremetal
  partition:
    description:
      - A partition only the pool's nodes are in (a pool of GPU hosts - the model's GPU partition, docs/howto-gpu.md);
        jobs pending there are demand too, also while the partition has no node yet (reason C(PartitionConfig)).
    type: str
  min_nodes:
    description: Bare-metal nodes of the pool kept up.
    type: int
    default: 0
  max_nodes:
    description: At most this many nodes of the pool up or coming; default the whole pool.
    type: int
  cooldown:
    description: Seconds after a scale-out during which nothing is scaled in.
    type: int
    default: 300
  idle_time:
    description: Seconds a node must have been idle before it is released.
    type: int
    default: 600
  in_flight_timeout:
    description: Seconds after which a host asked for and never seen in Slurm is asked for again.
    type: int
    default: 1800
"""

EXAMPLES = r"""
- slime.hybrid.slurm_queue:
    command: [kubectl, exec, -n, slurm, slurm-controller-0, -c, slurmctld, --]
    hosts: [node-3, node-4, node-5]
    min_nodes: 0
    max_nodes: 3
    idle_time: 600
"""

import asyncio
import datetime
import logging
import os
import sys

try:
    from ansible_collections.slime.hybrid.plugins.module_utils import autoscale, scontrol
except ImportError:  # run by ansible-rulebook with runpy: put this collection's root on the path
    sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 7)))
    from ansible_collections.slime.hybrid.plugins.module_utils import autoscale, scontrol

POLICY_KEYS = ("hosts", "feature", "partition", "min_nodes", "max_nodes", "cooldown", "idle_time", "in_flight_timeout")
logger = logging.getLogger(__name__)


async def _run(argv):
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await proc.communicate()
    except asyncio.CancelledError:  # ansible-rulebook stops the source: leave no command behind
        try:
            proc.kill()
        except ProcessLookupError:  # it ended while the cancel came
            pass
        await proc.wait()
        raise
    if proc.returncode != 0:
        raise RuntimeError("%s failed (rc=%d): %s" % (" ".join(argv), proc.returncode, err.decode(errors="replace").strip()))
    return out.decode(errors="replace")


async def poll(command, options, state):
    """One snapshot of Slurm and one decision: (decision, new state)."""
    queue = await _run(list(command) + ["squeue", "-h", "-t", "PENDING,RUNNING,COMPLETING", "-o", autoscale.SQUEUE_FORMAT])
    nodes = await _run(list(command) + ["scontrol", "show", "node", "--oneliner"])
    # Slurm's clock: LastBusyTime is printed in the controller's local time.
    now = datetime.datetime.strptime((await _run(list(command) + ["date", "+%Y-%m-%dT%H:%M:%S"])).strip(), autoscale.SLURM_TIME)
    return autoscale.decide(options, autoscale.parse_squeue(queue), scontrol.parse_nodes(nodes), state, now)


def _number(value):
    """Rulebook variables may arrive as text ("600"): whole numbers become int."""
    return int(value) if isinstance(value, str) and value.strip().isdigit() else value


async def main(queue, args):
    options = autoscale.policy({key: _number(args[key]) for key in POLICY_KEYS if args.get(key) is not None})
    command = list(args.get("command") or [])
    interval = int(args.get("interval", 15))
    state = {}
    while True:
        try:
            decision, state = await poll(command, options, state)
        except (RuntimeError, ValueError) as exc:
            logger.warning("slurm_queue: %s", exc)
        else:
            logger.info("slurm_queue: %s %s (%s)", decision["action"], decision["hosts"], decision["reason"])
            if decision["action"] != "none":
                await queue.put({"slurm_autoscale": decision})
        await asyncio.sleep(interval)


if __name__ == "__main__":
    # Print what the policy would do now, without acting: python slurm_queue.py HOST... (Slurm commands here).

    class _Print:
        async def put(self, event):
            print(event)

    asyncio.run(main(_Print(), {"hosts": sys.argv[1:], "interval": 15}))
