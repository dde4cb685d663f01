# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import scontrol

FIXTURE = "scontrol_show_node_26.05.txt"

# Every key Slurm 26.05.5 prints for a dynamic node in `scontrol show node --oneliner`.
NODE_KEYS = [
    "NodeName", "Arch", "CoresPerSocket", "CPUAlloc", "CPUEfctv", "CPUTot", "CPULoad", "AvailableFeatures",
    "ActiveFeatures", "Gres", "NodeAddr", "NodeHostName", "Version", "OS", "RealMemory", "AllocMem", "FreeMem",
    "Sockets", "Boards", "State", "ThreadsPerCore", "TmpDisk", "Weight", "Owner", "MCS_label", "Partitions",
    "BootTime", "SlurmdStartTime", "LastBusyTime", "ResumeAfterTime", "SuspendTime", "CfgTRES", "AllocTRES",
    "CurrentWatts", "AveWatts",
]


@pytest.fixture
def nodes(fixture_text):
    return scontrol.parse_nodes(fixture_text(FIXTURE))


def test_parse_nodes_keys_by_name_in_output_order(nodes):
    assert list(nodes) == ["bm-1", "pod-1", "bm-2", "bm-3"]


def test_parse_nodes_idle_baremetal_node(nodes):
    node = nodes["bm-1"]
    assert list(node) == NODE_KEYS
    assert node["NodeName"] == "bm-1"
    assert node["NodeAddr"] == "10.127.0.61"
    assert node["AvailableFeatures"] == "baremetal"
    assert node["Version"] == "26.05.5"
    assert node["State"] == "IDLE+DYNAMIC_NORM"
    assert node["Gres"] == "(null)"
    assert node["Partitions"] == "all"


def test_parse_nodes_keeps_a_value_with_spaces_whole(nodes):
    assert nodes["bm-1"]["OS"] == "Linux 6.18.44-fc-v595 #1 SMP PREEMPT_DYNAMIC @0"
    # the double space after it does not leak into the neighbours
    assert nodes["bm-1"]["RealMemory"] == "24105"
    assert nodes["bm-1"]["CoresPerSocket"] == "2"


def test_parse_nodes_values_containing_equals_signs(nodes):
    assert nodes["bm-1"]["CfgTRES"] == "cpu=2,mem=24105M,billing=2"
    assert nodes["bm-3"]["AllocTRES"] == "cpu=1,mem=1G"


def test_parse_nodes_empty_value(nodes):
    assert nodes["bm-1"]["AllocTRES"] == ""
    assert nodes["bm-1"]["CurrentWatts"] == "0"


def test_parse_nodes_pod_node(nodes):
    assert nodes["pod-1"]["AvailableFeatures"] == "pod"
    assert nodes["pod-1"]["ActiveFeatures"] == "pod"
    assert nodes["pod-1"]["NodeAddr"] == "10.126.0.21"


def test_parse_nodes_down_node_with_reason(nodes):
    node = nodes["bm-2"]
    assert node["State"] == "DOWN*+DRAIN+DYNAMIC_NORM"
    assert node["Reason"] == "Not responding [slurm@2026-11-22T00:10:00]"
    assert node["AveWatts"] == "0"
    assert list(node) == NODE_KEYS + ["Reason"]


def test_parse_nodes_reason_in_the_middle_of_a_line():
    line = "NodeName=bm-2 State=DOWN*+DRAIN Reason=Not responding [slurm@2026-11-22T00:10:00] Partitions=all"
    assert scontrol.parse_node_line(line) == {
        "NodeName": "bm-2",
        "State": "DOWN*+DRAIN",
        "Reason": "Not responding [slurm@2026-11-22T00:10:00]",
        "Partitions": "all",
    }


@pytest.mark.parametrize(
    "text",
    ["", None, "Node bm-9 not found\n", "\n\n", "No nodes in the system\n"],
)
def test_parse_nodes_without_node_records(text):
    assert scontrol.parse_nodes(text) == {}


def test_parse_nodes_ignores_other_lines(fixture_text):
    text = "\n" + fixture_text(FIXTURE).replace("\nNodeName=pod-1", "\n\nNodeName=pod-1") + "\n"
    assert list(scontrol.parse_nodes(text)) == ["bm-1", "pod-1", "bm-2", "bm-3"]


@pytest.mark.parametrize(
    "state, base, flags",
    [
        ("IDLE+DYNAMIC_NORM", "IDLE", ["DYNAMIC_NORM"]),
        ("DOWN*+DRAIN+DYNAMIC_NORM", "DOWN", ["NOT_RESPONDING", "DRAIN", "DYNAMIC_NORM"]),
        ("MIXED+DYNAMIC_NORM", "MIXED", ["DYNAMIC_NORM"]),
        ("IDLE", "IDLE", []),
        ("IDLE*", "IDLE", ["NOT_RESPONDING"]),
        ("", "", []),
        (None, "", []),
    ],
)
def test_state_flags(state, base, flags):
    assert scontrol.state_flags(state) == (base, flags)


@pytest.mark.parametrize(
    "state, available",
    [
        ("IDLE+DYNAMIC_NORM", True),
        ("MIXED+DYNAMIC_NORM", True),
        ("ALLOCATED+DYNAMIC_NORM", True),
        ("COMPLETING", True),
        ("IDLE", True),
        ("DOWN*+DRAIN+DYNAMIC_NORM", False),
        ("IDLE*+DYNAMIC_NORM", False),
        ("DOWN+DYNAMIC_NORM", False),
        ("IDLE+DRAIN+DYNAMIC_NORM", False),
        ("MIXED+DRAIN", False),
        ("IDLE+FAIL", False),
        ("IDLE+INVALID_REG", False),
        ("IDLE+CLOUD+POWERED_DOWN", False),
        ("IDLE+POWERING_UP", False),
        ("FUTURE+DYNAMIC_FUTURE", False),
        ("UNKNOWN", False),
        ("", False),
    ],
)
def test_is_available(state, available):
    assert scontrol.is_available(state) is available


def test_availability_of_the_fixture_nodes(nodes):
    # What roles/slurm_node/tasks/register.yml waits for: (stdout | scontrol_nodes)[name].State | slurm_node_available
    assert {name: scontrol.is_available(node["State"]) for name, node in nodes.items()} == {
        "bm-1": True, "pod-1": True, "bm-2": False, "bm-3": True,
    }
    assert all("DYNAMIC_NORM" in scontrol.state_flags(node["State"])[1] for node in nodes.values())
