# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Draining and removing nodes (module_utils/node_state.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import node_state

NODES = {
    "idle": {"State": "IDLE+DYNAMIC_NORM"},
    "busy": {"State": "ALLOCATED+DYNAMIC_NORM"},
    "draining": {"State": "MIXED+DRAIN+DYNAMIC_NORM"},
    "drained": {"State": "IDLE+DRAIN+DYNAMIC_NORM"},
    "down": {"State": "DOWN*+DRAIN+DYNAMIC_NORM"},
    "completing": {"State": "IDLE+COMPLETING+DRAIN"},
}


@pytest.mark.parametrize("name, drain, busy", [
    ("idle", False, False), ("busy", False, True), ("draining", True, True), ("drained", True, False),
    ("down", True, False), ("completing", True, True),
])
def test_classify(name, drain, busy):
    assert node_state.is_drain(NODES[name]) is drain
    assert node_state.is_busy(NODES[name]) is busy


def test_plan_drained_and_absent():
    planned = node_state.plan(NODES, ["idle", "drained", "gone"], "drained")
    assert planned == {"present": ["idle", "drained"], "missing": ["gone"], "drain": ["idle"], "resume": [], "delete": []}
    planned = node_state.plan(NODES, ["busy", "drained"], "absent")
    assert planned["drain"] == ["busy"] and planned["delete"] == ["busy", "drained"]
    assert node_state.plan(NODES, ["gone"], "absent")["delete"] == []


def test_plan_resumed():
    assert node_state.plan(NODES, ["idle", "drained", "down"], "resumed")["resume"] == ["drained", "down"]


OURS = {
    "upgrading": {"State": "IDLE+DRAIN+DYNAMIC_NORM", "Reason": "slime.hybrid upgrade [root@2026-11-24T14:00:00]"},
    "dimm": {"State": "IDLE+DRAIN+DYNAMIC_NORM", "Reason": "bad DIMM, ticket 42 [admin@2026-11-24T13:00:00]"},
    "unstamped": {"State": "IDLE+DRAIN+DYNAMIC_NORM", "Reason": "slime.hybrid upgrade"},
    "idle": {"State": "IDLE+DYNAMIC_NORM"},
}


def test_drain_reason_drops_the_user_and_time():
    assert node_state.drain_reason(OURS["upgrading"]) == "slime.hybrid upgrade"
    assert node_state.drain_reason(OURS["dimm"]) == "bad DIMM, ticket 42"
    assert node_state.drain_reason(OURS["unstamped"]) == "slime.hybrid upgrade"
    assert node_state.drain_reason(OURS["idle"]) == ""


def test_plan_resumed_only_for_a_reason_keeps_other_drains():
    names = ["upgrading", "dimm", "unstamped", "idle"]
    assert node_state.plan(OURS, names, "resumed", "slime.hybrid upgrade")["resume"] == ["upgrading", "unstamped"]
    assert node_state.plan(OURS, names, "resumed")["resume"] == ["upgrading", "dimm", "unstamped"]


def test_plan_refuses_unknown_state():
    with pytest.raises(ValueError) as exc:
        node_state.plan(NODES, ["idle"], "deleted")
    assert "state='deleted'" in str(exc.value) and "drained, absent, resumed" in str(exc.value)


def test_commands():
    assert node_state.drain_command(["a", "b"], "scale in") == ["update", "NodeName=a,b", "State=DRAIN", "Reason=scale in"]
    assert node_state.resume_command(["a"]) == ["update", "NodeName=a", "State=RESUME"]
    assert node_state.delete_command(["a", "b"]) == ["delete", "NodeName=a,b"]


def test_busy_and_jobs():
    assert node_state.busy_nodes(NODES, ["idle", "busy", "draining", "gone"]) == ["busy", "draining"]
    jobs = node_state.parse_jobs("12|RUNNING|bm-2\n13|COMPLETING|bm-[2-3]\n\nbad line\n")
    assert jobs == [{"id": "12", "state": "RUNNING", "nodes": "bm-2"}, {"id": "13", "state": "COMPLETING", "nodes": "bm-[2-3]"}]
    message = node_state.timeout_message(["bm-2"], jobs[:1], 30)
    assert "bm-2 still running job(s) after 30s: 12 (RUNNING on bm-2)" in message
    assert "scontrol update NodeName=bm-2 State=RESUME" in message and "stay drained" in message


@pytest.mark.parametrize("state, jobs, runs", [
    # a job squeue lists there, suspended ones too, and jobs over several nodes (squeue's %N a hostlist)
    ("MIXED+DRAIN+DYNAMIC_NORM", "12|RUNNING|bm-2\n", True),
    ("ALLOCATED+DRAIN", "12|SUSPENDED|bm-2\n", True),
    ("ALLOCATED+DRAIN", "14|RUNNING|slinky-[0-1],bm-[1-3]\n", True),
    ("ALLOCATED+DRAIN", "14|RUNNING|bm-[1,3]\n", False),
    # a node list it cannot read counts as every node asked about
    ("ALLOCATED+DRAIN", "15|RUNNING|r[1-2]n[1-2]\n", True),
    # finishing: the node is COMPLETING (as base state or flag) whatever squeue says
    ("IDLE+COMPLETING+DRAIN", "", True),
    ("COMPLETING", "", True),
    # seen on Slurm 26.05 (molecule kube, verify_gpu.yml): the job ended, the GRES it held never freed
    ("MIXED+DRAIN+DYNAMIC_NORM+INVALID_REG", "", False),
    # a job that only waits for the node runs nothing there
    ("MIXED+DRAIN", "13|PENDING|\n", False),
])
def test_running(state, jobs, runs):
    current = {"bm-2": {"State": state}, "bm-3": {"State": "ALLOCATED"}}
    assert ("bm-2" in node_state.running(current, ["bm-2"], node_state.parse_jobs(jobs))) is runs


def test_diff():
    planned = node_state.plan(NODES, ["idle", "gone"], "absent")
    before, after = node_state.diff_text(NODES, ["idle", "gone"], planned)
    assert before == "idle State=IDLE+DYNAMIC_NORM\ngone State=(absent)\n"
    assert after == "idle (absent)\ngone State=(absent)\n"


def test_unavailable_names_why_each_node_waits():
    current = {
        "bm-1": {"State": "IDLE+DYNAMIC_NORM", "Version": "26.05.5"},
        "bm-2": {"State": "IDLE+DRAIN+DYNAMIC_NORM", "Version": "26.05.5"},
        "bm-3": {"State": "IDLE+DYNAMIC_NORM", "Version": "24.11.5"},
        "bm-4": {"State": "DOWN+DYNAMIC_NORM+NOT_RESPONDING", "Version": "26.05.5"},
    }
    names = ["bm-1", "bm-2", "bm-3", "bm-4", "bm-5"]
    assert node_state.unavailable(current, names) == {
        "bm-2": "State=IDLE+DRAIN+DYNAMIC_NORM", "bm-4": "State=DOWN+DYNAMIC_NORM+NOT_RESPONDING",
        "bm-5": "not listed by slurmctld"}
    assert node_state.unavailable(current, names, version="26.05.5", drained_ok=True) == {
        "bm-3": "Version=24.11.5, not 26.05.5", "bm-4": "State=DOWN+DYNAMIC_NORM+NOT_RESPONDING",
        "bm-5": "not listed by slurmctld"}
    with pytest.raises(ValueError, match="state='available'; allowed: drained, absent, resumed"):
        node_state.plan(current, ["bm-2"], "available")  # a wait, not a change: never planned
