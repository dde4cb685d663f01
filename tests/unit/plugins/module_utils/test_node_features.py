# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.slime.hybrid.plugins.module_utils import node_features, scontrol


def test_features_of_reads_lists_and_null():
    assert node_features.features_of({"AvailableFeatures": "pod,slinky"}, "AvailableFeatures") == ["pod", "slinky"]
    assert node_features.features_of({"AvailableFeatures": "(null)"}, "AvailableFeatures") == []
    assert node_features.features_of({}, "ActiveFeatures") == []


def test_plan_on_real_scontrol_output(fixture_text):
    current = scontrol.parse_nodes(fixture_text("scontrol_show_node_26.05.txt"))
    name = sorted(current)[0]
    have = node_features.features_of(current[name], "AvailableFeatures")
    # What slurmctld already has: nothing to do.
    assert node_features.plan(current, {name: list(reversed(have))}) == ({}, [], [])
    changes, unknown, errors = node_features.plan(current, {name: have + ["fault-d3"], "gone-1": ["x"]})
    assert unknown == ["gone-1"] and errors == []
    assert changes == {name: {"before": {"AvailableFeatures": have, "ActiveFeatures": node_features.features_of(current[name], "ActiveFeatures")},
                              "after": {"AvailableFeatures": sorted(have + ["fault-d3"]), "ActiveFeatures": sorted(have + ["fault-d3"])}}}


def test_plan_catches_active_features_that_lag():
    current = {"bm-1": {"AvailableFeatures": "baremetal,gpu", "ActiveFeatures": "baremetal"}}
    changes, _unknown, _errors = node_features.plan(current, {"bm-1": ["gpu", "baremetal"]})
    assert changes["bm-1"]["after"] == {"AvailableFeatures": ["baremetal", "gpu"], "ActiveFeatures": ["baremetal", "gpu"]}


def test_plan_refuses_bad_feature_names():
    _changes, _unknown, errors = node_features.plan({"bm-1": {}}, {"bm-1": ["ok", "a,b"]})
    assert errors == ["features of bm-1: 'a,b' is not a valid Slurm feature name (allowed: letters, digits, '_', '.', '-')"]


def test_update_commands_batch_nodes_with_the_same_features():
    changes = {name: {"after": {"AvailableFeatures": feats, "ActiveFeatures": feats}}
               for name, feats in (("bm-1", ["baremetal", "gpu"]), ("bm-2", ["baremetal", "gpu"]), ("bm-3", ["baremetal"]))}
    assert node_features.update_commands(changes) == [
        ["update", "NodeName=bm-3", "AvailableFeatures=baremetal", "ActiveFeatures=baremetal"],
        ["update", "NodeName=bm-1,bm-2", "AvailableFeatures=baremetal,gpu", "ActiveFeatures=baremetal,gpu"],
    ]
    assert node_features.diff_text({"bm-3": {"before": {"AvailableFeatures": ["x"], "ActiveFeatures": []}}}, "before") \
        == "bm-3: AvailableFeatures=x ActiveFeatures=\n"
