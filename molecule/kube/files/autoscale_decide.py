# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The autoscaler's decision (plugins/module_utils/autoscale.py, what the event source slurm_queue
decides each poll) on what the real cluster printed: a JSON object on stdin with the policy
options, `squeue -h -t PENDING,RUNNING,COMPLETING -o SQUEUE_FORMAT` and `scontrol --oneliner show
node` output and slurmctld's clock (date +%Y-%m-%dT%H:%M:%S); prints the decision as JSON.
The collection is imported from ANSIBLE_COLLECTIONS_PATH (make collection)."""

from __future__ import absolute_import, division, print_function

import datetime
import json
import sys

from ansible_collections.slime.hybrid.plugins.module_utils import autoscale, scontrol

snapshot = json.load(sys.stdin)
decision = autoscale.decide(autoscale.policy(snapshot["options"]), autoscale.parse_squeue(snapshot["squeue"]),
                            scontrol.parse_nodes(snapshot["nodes"]), {},
                            datetime.datetime.strptime(snapshot["now"].strip(), autoscale.SLURM_TIME))[0]
print(json.dumps(decision))
