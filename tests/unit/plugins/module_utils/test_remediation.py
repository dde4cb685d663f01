# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What remediation does with each unhealthy bare-metal node (module_utils/remediation.py), from
records as `scontrol show node --oneliner` prints them (Slurm 26.05, seen on the lab)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import time

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import remediation, scontrol

NOW = calendar.timegm(time.strptime("2026-11-27T12:00:00", "%Y-%m-%dT%H:%M:%S"))
POLICY = {"grace": 600, "backoff": 1800, "max_concurrent": 1, "max_reboots": 3}


def record(name, state, reason=None, at="2026-11-27T11:40:00", alloc=0, started="2026-11-27T11:59:00"):
    line = "NodeName=%s Arch=x86_64 CPUAlloc=%d CPUTot=2 State=%s NodeAddr=10.127.0.61 SlurmdStartTime=%s" % (
        name, alloc, state, started)
    if reason:
        line += " Reason=%s [slurm@%s]" % (reason, at)
    return scontrol.parse_node_line(line)


def host(name, state="provisioned", reboots=None, last=None):
    annotations = {remediation.LEDGER: remediation.ledger_text(reboots, last, "x")} if reboots else {}
    return {"name": name, "namespace": "metal3", "state": state, "annotations": annotations}


def decide(nodes, hosts, policy=None, now=NOW):
    out = remediation.decide(sorted(nodes), dict((r["NodeName"], r) for r in nodes.values()), hosts, now, policy or POLICY)
    return dict((entry["node"], entry) for entry in out)


def test_the_reason_time_is_read_as_utc():
    assert remediation.reason_time(record("n", "DOWN*", "Not responding", "2026-11-27T11:50:00")) == NOW - 600
    assert remediation.reason_time(record("n", "IDLE")) is None


def test_a_down_node_past_its_grace_is_drained_and_power_cycled():
    nodes = {"bm-1": record("bm-1", "DOWN*+DYNAMIC_NORM", "Not responding")}
    (entry,) = decide(nodes, {"bm-1": host("bm-1")}).values()
    assert entry["action"] == "reboot" and entry["drain"] is True and entry["reboots"] == 1
    assert entry["reason"] == "slime-remediation: power-cycle 1 of 3: DOWN*+DYNAMIC_NORM (Not responding)"
    assert entry["ledger"] == "reboots=1 last=%d reason=DOWN*+DYNAMIC_NORM (Not responding)" % NOW
    assert remediation.ledger({remediation.LEDGER: entry["ledger"]}) == {
        "reboots": 1, "last": NOW, "reason": "DOWN*+DYNAMIC_NORM (Not responding)"}
    assert (entry["host"], entry["namespace"]) == ("bm-1", "metal3")


def test_a_node_its_health_check_drained_keeps_that_drain():
    nodes = {"bm-1": record("bm-1", "IDLE+DRAIN+DYNAMIC_NORM", "slime-health: /tmp has 16 MiB free (at least 1024 wanted)")}
    entry = decide(nodes, {"bm-1": host("bm-1")})["bm-1"]
    assert entry["action"] == "reboot" and entry["drain"] is False
    assert entry["why"] == "slime-health: /tmp has 16 MiB free (at least 1024 wanted)"


@pytest.mark.parametrize("state, reason, alloc, hosts, why", [
    ("DOWN*", "Not responding", 0, {}, "DOWN* (Not responding), and not a Metal3 host (SSH only): not touched"),
    ("MIXED+DRAIN", "slime-health: GPU device /dev/nvidia1 is not a device", 1, None,
     "slime-health: GPU device /dev/nvidia1 is not a device, and running jobs: left alone until they end"),
    ("MIXED+DRAIN", "slime-health: /tmp is not a directory", 1, {},
     "slime-health: /tmp is not a directory, and running jobs: left alone until they end"),
    ("DOWN*", "Not responding", 0, {"bm-1": host("bm-1", state="provisioning")},
     "DOWN* (Not responding), and its BareMetalHost is provisioning, not provisioned: not touched"),
])
def test_what_is_never_touched(state, reason, alloc, hosts, why):
    nodes = {"bm-1": record("bm-1", state, reason, alloc=alloc)}
    entry = decide(nodes, {"bm-1": host("bm-1")} if hosts is None else hosts)["bm-1"]
    assert entry["action"] in ("report", "wait") and entry["why"] == why


def test_grace_backoff_and_the_last_reboot():
    down = {"bm-1": record("bm-1", "DOWN*", "Not responding", "2026-11-27T11:55:00")}
    assert decide(down, {"bm-1": host("bm-1")})["bm-1"]["why"] == "DOWN* (Not responding), for 300s of a 600s grace period"
    down = {"bm-1": record("bm-1", "DOWN*", "Not responding")}
    entry = decide(down, {"bm-1": host("bm-1", reboots=1, last=NOW - 60)})["bm-1"]
    assert (entry["action"], entry["why"]) == ("wait", "DOWN* (Not responding), power-cycled 60s ago (back-off 1800s)")
    entry = decide(down, {"bm-1": host("bm-1", reboots=2, last=NOW - 1800)})["bm-1"]
    assert (entry["action"], entry["reboots"], entry["reason"][:39]) == ("reboot", 3, "slime-remediation: power-cycle 3 of 3: ")
    entry = decide(down, {"bm-1": host("bm-1", reboots=3, last=NOW - 1800)})["bm-1"]
    assert (entry["action"], entry["why"]) == ("leave", "DOWN* (Not responding), and 3 power-cycles did not heal it: left drained")


def test_k_plus_one_failing_hosts_k_remediated_oldest_first_the_rest_wait():
    nodes = {"bm-1": record("bm-1", "DOWN*", "Not responding", "2026-11-27T11:30:00"),
             "bm-2": record("bm-2", "DOWN*", "Not responding", "2026-11-27T11:20:00"),
             "bm-3": record("bm-3", "IDLE+DRAIN", "slime-health: /tmp is not a directory", "2026-11-27T11:25:00")}
    hosts = dict((name, host(name)) for name in nodes)
    out = decide(nodes, hosts, dict(POLICY, max_concurrent=2))
    assert [out[n]["action"] for n in sorted(out)] == ["wait", "reboot", "reboot"]
    assert out["bm-1"]["why"] == "DOWN* (Not responding); 2 host(s) in remediation already (max_concurrent 2)"
    # a host still in its back-off counts as in remediation
    hosts["bm-4"] = host("bm-4", reboots=1, last=NOW - 100)
    nodes["bm-4"] = record("bm-4", "IDLE")
    out = decide(nodes, hosts, dict(POLICY, max_concurrent=2))
    assert [out[n]["action"] for n in sorted(out)] == ["wait", "reboot", "wait", "none"]


def test_back_after_a_power_cycle_resume_then_forget():
    back = {"bm-1": record("bm-1", "IDLE+DRAIN+DYNAMIC_NORM", "slime-remediation: power-cycle 1 of 3: DOWN* (Not responding)")}
    entry = decide(back, {"bm-1": host("bm-1", reboots=1, last=NOW - 120)})["bm-1"]
    assert entry["action"] == "resume"
    # seen on the lab: right after the restart the record still looks responding, with the old slurmd's start
    entry = decide(back, {"bm-1": host("bm-1", reboots=1, last=NOW - 30)})["bm-1"]
    assert (entry["action"], entry["why"]) == (
        "wait", "slime-remediation: power-cycle 1 of 3: DOWN* (Not responding); slurmd has not started since 30s ago")
    # without a record of the power-cycle (a drain with this reason by hand), the drain's time is the mark
    late = {"bm-1": record("bm-1", "IDLE+DRAIN", "slime-remediation: power-cycle 1 of 3: x", "2026-11-27T11:59:30")}
    assert decide(late, {})["bm-1"]["action"] == "wait"
    # an operator's drain is not remediation's to lift, nor a problem it acts on
    ops = {"bm-1": record("bm-1", "IDLE+DRAIN", "disk swap, ticket 42")}
    assert decide(ops, {"bm-1": host("bm-1")})["bm-1"]["action"] == "none"
    healthy = {"bm-1": record("bm-1", "IDLE+DYNAMIC_NORM")}
    assert decide(healthy, {"bm-1": host("bm-1", reboots=1, last=NOW - 120)})["bm-1"]["action"] == "none"
    assert decide(healthy, {"bm-1": host("bm-1", reboots=1, last=NOW - 1800)})["bm-1"]["action"] == "forget"


def test_no_record_and_a_bad_ledger():
    entry = remediation.decide(["bm-9"], {}, {}, NOW, POLICY)[0]
    assert (entry["action"], entry["why"]) == ("report", "slurmctld has no record of bm-9")
    assert remediation.ledger({remediation.LEDGER: "not json"}) is None
    assert remediation.ledger({remediation.LEDGER: '{"reboots": 1, "last": 5}'}) is None


def test_policy_errors_name_the_value_and_what_is_allowed():
    assert remediation.policy_errors(POLICY) == []
    assert remediation.policy_errors({"grace": -1, "max_concurrent": 0, "max_reboot": 2}) == [
        "max_reboot is not a remediation setting; allowed: backoff, grace, max_concurrent, max_reboots",
        "grace=-1 must be a whole number of at least 0",
        "max_concurrent=0 must be a whole number of at least 1"]


def test_the_filter_reads_bare_metal_hosts_as_the_operator_writes_them():
    from ansible.errors import AnsibleFilterError
    from ansible_collections.slime.hybrid.plugins.filter import metal3 as metal3_filter
    plan = metal3_filter.FilterModule().filters()["metal3_remediation_plan"]
    bmhs = [{"apiVersion": "metal3.io/v1alpha1", "kind": "BareMetalHost",
             "metadata": {"name": "bm-1", "namespace": "metal3", "annotations": {"inspect.metal3.io": "disabled"}},
             "status": {"provisioning": {"state": "provisioned"}, "poweredOn": True}},
            {"metadata": {"name": "bm-2", "namespace": "metal3"}, "status": {"provisioning": {"state": "available"}}}]
    nodes = {"bm-1": record("bm-1", "DOWN*", "Not responding"), "bm-2": record("bm-2", "DOWN*", "Not responding"),
             "bm-3": record("bm-3", "IDLE")}
    out = plan(bmhs, nodes, ["bm-3"], None, NOW)
    assert [(entry["node"], entry["action"]) for entry in out] == [("bm-1", "reboot"), ("bm-2", "report"), ("bm-3", "none")]
    assert out[1]["why"].endswith("its BareMetalHost is available, not provisioned: not touched")
    with pytest.raises(AnsibleFilterError, match="invalid remediation policy: max_reboots=0 must be a whole number of at least 1"):
        plan(bmhs, nodes, [], {"max_reboots": 0})
