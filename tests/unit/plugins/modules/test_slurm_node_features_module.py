# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm_node_features module, in-process, against a fake slurmctld behind run_command: a host
asking about its own node reads that node's record only, not the whole cluster's."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.module_utils import basic

from ansible_collections.slime.hybrid.plugins.modules import slurm_node_features


class FakeSlurmctld(object):
    """`show node --oneliner [NAMES]` as scontrol answers it (a name it does not know: rc 1,
    "Node X not found"), and `update NodeName=... AvailableFeatures=... ActiveFeatures=...`."""

    def __init__(self, features):
        self.features = dict(features)
        self.calls = []

    def line(self, name):
        value = ",".join(self.features[name]) or "(null)"
        return "NodeName=%s State=IDLE+DYNAMIC_NORM AvailableFeatures=%s ActiveFeatures=%s\n" % (name, value, value)

    def run_command(self, args, **kwargs):
        args = list(args)
        self.calls.append(args[1:])
        if args[1:4] == ["show", "node", "--oneliner"]:
            names = args[4].split(",") if len(args) > 4 else sorted(self.features)
            unknown = [name for name in names if name not in self.features]
            if unknown:
                return 1, "", "Node %s not found\n" % unknown[0]
            return 0, "".join(self.line(name) for name in names), ""
        if args[1] == "update":
            fields = dict(word.split("=", 1) for word in args[2:])
            for name in fields["NodeName"].split(","):
                self.features[name] = [f for f in fields["AvailableFeatures"].split(",") if f]
            return 0, "", ""
        return 1, "", "unexpected %s" % args


@pytest.fixture
def slurmctld(monkeypatch):
    fake = FakeSlurmctld({"bm-1": ["baremetal"], "bm-2": ["baremetal"], "pod-1": ["pod"]})
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, cmd, **kw: fake.run_command(cmd, **kw))
    return fake


def test_a_node_in_step_reads_its_own_record_only(slurmctld, module_runner):
    run = module_runner(slurm_node_features.main, nodes={"bm-2": ["baremetal"]})
    assert run.rc == 0 and not run.result["changed"]
    assert slurmctld.calls == [["show", "node", "--oneliner", "bm-2"]]


def test_a_changed_feature_is_set_and_confirmed(slurmctld, module_runner):
    run = module_runner(slurm_node_features.main, nodes={"bm-2": ["baremetal", "gpu"]})
    assert run.rc == 0 and run.result["changed"] and run.result["changed_nodes"] == ["bm-2"]
    assert slurmctld.features["bm-2"] == ["baremetal", "gpu"]
    assert slurmctld.calls[0] == ["show", "node", "--oneliner", "bm-2"]


def test_an_unknown_node_is_named_after_reading_every_record(slurmctld, module_runner):
    run = module_runner(slurm_node_features.main, nodes={"bm-2": ["baremetal"], "bm-9": ["baremetal"]})
    assert run.rc == 1 and "slurmctld does not know node(s): bm-9" in run.result["msg"]
    assert slurmctld.calls == [["show", "node", "--oneliner", "bm-2,bm-9"], ["show", "node", "--oneliner"]]
