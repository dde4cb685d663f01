# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm_node_state module, in-process, against a fake slurmctld behind run_command."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.module_utils import basic

from ansible_collections.slime.hybrid.plugins.modules import slurm_node_state


class FakeSlurmctld(object):
    """Node states and running jobs; a job ends after `job_polls` node reads."""

    def __init__(self, states, jobs=None, job_polls=2, reasons=None, leaked=()):
        self.states = dict(states)
        self.leaked = set(leaked)  # nodes whose record says MIXED with no job: an allocation never freed
        self.reasons = dict(reasons or {})  # node -> drain reason, printed as slurmctld does
        self.jobs = dict(jobs or {})  # node -> job id
        self.job_polls = job_polls
        self.calls = []

    def _tick(self):
        for node in list(self.jobs):
            if self.job_polls is not None and self.job_polls <= 0:
                del self.jobs[node]
        if self.job_polls is not None:
            self.job_polls -= 1

    def state(self, node):
        base = "ALLOCATED" if node in self.jobs else "MIXED" if node in self.leaked else "IDLE"
        flags = self.states[node]
        return "+".join([base] + flags)

    def run_command(self, args, **kwargs):
        args = list(args)
        self.calls.append(args)
        if args[1:] == ["show", "node", "--oneliner"]:
            self._tick()
            return 0, "".join("NodeName=%s NodeAddr=%s State=%s%s\n" % (
                n, n, self.state(n), " Reason=%s [root@2026-11-24T14:00:00]" % self.reasons[n] if n in self.reasons else "")
                for n in self.states), ""
        if args[0] == "squeue":
            nodes = args[args.index("-w") + 1].split(",")
            return 0, "".join("%s|RUNNING|%s\n" % (self.jobs[n], n) for n in nodes if n in self.jobs), ""
        if args[1] == "update":
            names = args[2].split("=", 1)[1].split(",")
            for name in names:
                if args[3] == "State=DRAIN":
                    self.states[name].append("DRAIN")
                    self.reasons[name] = args[4].split("=", 1)[1]
                elif args[3] == "State=RESUME":
                    self.states[name] = [f for f in self.states[name] if f != "DRAIN"]
                    self.reasons.pop(name, None)
            return 0, "", ""
        if args[1] == "delete":
            names = args[2].split("=", 1)[1].split(",")
            if any(n in self.jobs for n in names):
                return 1, "", "scontrol: error: Node has running jobs"
            for name in names:
                del self.states[name]
            return 0, "", ""
        return 1, "", "unexpected %s" % args


@pytest.fixture
def slurm(monkeypatch):
    def make(*args, **kwargs):
        fake = FakeSlurmctld(*args, **kwargs)
        monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, cmd, **kw: fake.run_command(cmd, **kw))
        monkeypatch.setattr(slurm_node_state.time, "sleep", lambda seconds: None)
        return fake
    return make


def test_absent_waits_for_the_job_then_deletes(slurm, module_runner):
    fake = slurm({"bm-1": ["DYNAMIC_NORM"], "bm-2": ["DYNAMIC_NORM"]}, jobs={"bm-2": "42"}, job_polls=3)
    run = module_runner(slurm_node_state.main, names=["bm-2"], state="absent", poll=1)
    assert run.rc == 0 and run.result["changed"]
    assert run.result["drained"] == ["bm-2"] and run.result["deleted"] == ["bm-2"]
    assert run.result["jobs"] == [{"id": "42", "state": "RUNNING", "nodes": "bm-2"}]
    assert "bm-2" not in fake.states and "bm-1" in fake.states
    # drain happened before the delete, and no job was cancelled or requeued on the way
    verbs = [c[1] for c in fake.calls if c[0] == "scontrol" and c[1] != "show"]
    assert verbs == ["update", "delete"]
    assert not any(c[0] in ("scancel",) or "requeue" in c for c in fake.calls)


def test_absent_past_an_allocation_no_job_holds(slurm, module_runner):
    # the record says MIXED once its job ended (Slurm 26.05 kept the job's GRES): squeue lists no job there
    fake = slurm({"bm-2": ["DYNAMIC_NORM", "INVALID_REG"]}, jobs={"bm-2": "42"}, job_polls=3, leaked=["bm-2"])
    run = module_runner(slurm_node_state.main, names=["bm-2"], state="absent", poll=1, timeout=3600)
    assert run.rc == 0 and run.result["deleted"] == ["bm-2"] and "bm-2" not in fake.states
    assert run.result["jobs"] == [{"id": "42", "state": "RUNNING", "nodes": "bm-2"}]
    # it waited for job 42 (squeue read after each node read until it ended), then no longer
    assert [c[0] for c in fake.calls].count("squeue") >= 3


def test_one_squeue_a_poll_for_every_busy_node(slurm, module_runner):
    fake = slurm({"bm-1": ["DYNAMIC_NORM"], "bm-2": ["DYNAMIC_NORM"]}, jobs={"bm-1": "41", "bm-2": "42"}, job_polls=3)
    run = module_runner(slurm_node_state.main, names=["bm-1", "bm-2"], state="drained", poll=1)
    assert run.rc == 0 and run.result["drained"] == ["bm-1", "bm-2"]
    reads = [c for c in fake.calls if c[0] == "squeue"]
    assert reads and all(c[c.index("-w") + 1] in ("bm-1,bm-2", "bm-1", "bm-2") for c in reads)
    assert len(reads) <= len([c for c in fake.calls if c[1:] == ["show", "node", "--oneliner"]]) + 1


def test_absent_is_idempotent(slurm, module_runner):
    slurm({"bm-1": ["DYNAMIC_NORM"]})
    run = module_runner(slurm_node_state.main, names=["bm-2"], state="absent")
    assert run.rc == 0 and not run.result["changed"] and run.result["missing"] == ["bm-2"]


def test_timeout_leaves_the_node_drained(slurm, module_runner, monkeypatch):
    fake = slurm({"bm-2": ["DYNAMIC_NORM"]}, jobs={"bm-2": "7"}, job_polls=None)
    clock = iter(range(0, 10000, 10))
    monkeypatch.setattr(slurm_node_state.time, "time", lambda: next(clock))
    run = module_runner(slurm_node_state.main, names=["bm-2"], state="absent", timeout=30, poll=1)
    assert run.rc == 1
    assert "bm-2 still running job(s) after 30s: 7 (RUNNING on bm-2)" in run.result["msg"]
    assert fake.states["bm-2"] == ["DYNAMIC_NORM", "DRAIN"]
    assert not any(c[1:2] == ["delete"] for c in fake.calls)


def test_check_mode_and_diff_change_nothing(slurm, module_runner):
    fake = slurm({"bm-2": ["DYNAMIC_NORM"]}, jobs={"bm-2": "7"}, job_polls=None)
    run = module_runner(slurm_node_state.main, check_mode=True, diff=True, names=["bm-2"], state="absent")
    assert run.rc == 0 and run.result["changed"]
    assert run.result["diff"]["after"] == "bm-2 (absent)\n"
    assert fake.states["bm-2"] == ["DYNAMIC_NORM"]
    assert [c[1] for c in fake.calls] == ["show"]


def test_drained_then_resumed(slurm, module_runner):
    fake = slurm({"bm-2": ["DYNAMIC_NORM"]})
    assert module_runner(slurm_node_state.main, names=["bm-2"], state="drained").result["drained"] == ["bm-2"]
    assert not module_runner(slurm_node_state.main, names=["bm-2"], state="drained").result["changed"]
    run = module_runner(slurm_node_state.main, names=["bm-2"], state="resumed")
    assert run.result["resumed"] == ["bm-2"] and fake.states["bm-2"] == ["DYNAMIC_NORM"]


def test_resumed_only_for_its_reason_leaves_an_operators_drain(slurm, module_runner):
    fake = slurm({"bm-1": ["DRAIN", "DYNAMIC_NORM"], "bm-2": ["DRAIN", "DYNAMIC_NORM"], "bm-3": ["DYNAMIC_NORM"]},
                 reasons={"bm-1": "slime.hybrid upgrade", "bm-2": "bad DIMM"})
    run = module_runner(slurm_node_state.main, names=["bm-1", "bm-2", "bm-3"], state="resumed",
                        reason="slime.hybrid upgrade", only_reason=True)
    assert run.rc == 0 and run.result["changed"] and run.result["resumed"] == ["bm-1"]
    assert fake.states == {"bm-1": ["DYNAMIC_NORM"], "bm-2": ["DRAIN", "DYNAMIC_NORM"], "bm-3": ["DYNAMIC_NORM"]}
    again = module_runner(slurm_node_state.main, names=["bm-1", "bm-2", "bm-3"], state="resumed",
                          reason="slime.hybrid upgrade", only_reason=True)
    assert again.rc == 0 and not again.result["changed"] and again.result["resumed"] == []


# slurmctld 26.05's record of a dynamic node, as `scontrol show node --oneliner bm-1` prints it on a lab host
RECORD = ("NodeName=bm-1 Arch=x86_64 CoresPerSocket=2  CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=0.18 AvailableFeatures=baremetal "
          "ActiveFeatures=baremetal Gres=(null) NodeAddr=10.127.0.61 NodeHostName=bm-1 Version=26.05.5 OS=Linux 6.18.44 "
          "RealMemory=24105 AllocMem=0 FreeMem=22316 Sockets=1 Boards=1 State=IDLE+DYNAMIC_NORM ThreadsPerCore=1 TmpDisk=0 "
          "Weight=1 Owner=N/A MCS_label=N/A Partitions=all\n")


@pytest.fixture
def answers(monkeypatch):
    """scontrol answers the module gets in turn (rc, stdout, stderr); the last one repeats."""
    def make(*replies):
        calls = []

        def run_command(self, cmd, **kwargs):
            calls.append(list(cmd))
            return replies[min(len(calls), len(replies)) - 1]
        monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
        monkeypatch.setattr(slurm_node_state.time, "sleep", lambda seconds: None)
        return calls
    return make


def test_available_waits_through_scontrol_errors_and_an_old_release(answers, module_runner):
    calls = answers((1, "", "slurm_load_node error: Unable to contact slurm controller (connect failure)"),
                    (0, RECORD.replace("Version=26.05.5", "Version=24.11.5").replace("IDLE+", "IDLE+DRAIN+"), ""),
                    (0, RECORD.replace("IDLE+", "IDLE+DRAIN+"), ""))
    run = module_runner(slurm_node_state.main, names=["bm-1"], state="available", version="26.05.5", drained_ok=True, poll=1)
    assert run.rc == 0 and not run.result["changed"]
    assert run.result["nodes"]["bm-1"]["NodeAddr"] == "10.127.0.61"
    assert len(calls) == 3 and calls[0] == ["scontrol", "show", "node", "--oneliner", "bm-1"]


def test_available_fails_naming_each_node_and_changes_nothing(answers, module_runner, monkeypatch):
    calls = answers((0, RECORD.replace("IDLE+", "IDLE+DRAIN+"), ""))
    clock = iter(range(0, 10000, 10))
    monkeypatch.setattr(slurm_node_state.time, "time", lambda: next(clock))
    run = module_runner(slurm_node_state.main, names=["bm-1"], state="available", timeout=30)
    assert run.rc == 1 and run.result["msg"] == "not available after 30s: bm-1 State=IDLE+DRAIN+DYNAMIC_NORM"
    assert all(call[1] == "show" for call in calls)
    answers((1, "", "scontrol: error: Node bm-9 not found"))
    clock = iter(range(0, 10000, 10))
    run = module_runner(slurm_node_state.main, names=["bm-9"], state="available", timeout=30)
    assert run.result["msg"] == "not available after 30s: bm-9 not listed by slurmctld; scontrol: scontrol: error: Node bm-9 not found"


def test_available_in_check_mode_reads_once(answers, module_runner):
    calls = answers((0, RECORD.replace("IDLE+", "DOWN+"), ""))
    run = module_runner(slurm_node_state.main, check_mode=True, names=["bm-1"], state="available")
    assert run.rc == 0 and not run.result["changed"] and len(calls) == 1
