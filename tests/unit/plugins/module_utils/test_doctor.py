# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""doctor: the TCP paths per network mode, slurmctld's own findings, srun results and the report table."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model, doctor, probe, scontrol

# The fixture's nodes: bm-1 10.127.0.61 (IDLE), pod-1 10.126.0.21 (a pod IP, IDLE),
# bm-2 10.127.0.62 (DOWN*+DRAIN, Reason=Not responding), bm-3 10.127.0.63 (MIXED).
POD_ROUTES = [{"cidr": "10.126.0.0/24", "via": "10.127.0.50"}, {"cidr": "10.126.1.0/24", "via": "10.127.0.51"}]

RAW_MODEL = {
    "name": "slurm",
    "controller": {"host": "slurm-controller", "address": "10.126.0.11"},
    "nodeport": {"address": "10.127.0.50", "port": 30017},
    "srun_port_range": "60001-60100",
    "slurm_version": "26.05",
    "pod_routes": POD_ROUTES,
}


def _model(mode):
    raw = copy.deepcopy(RAW_MODEL)
    raw["network_mode"] = mode
    if mode == "routed":
        del raw["nodeport"]
    return cluster_model.normalize(raw)


@pytest.fixture
def nodes(fixture_text):
    return scontrol.parse_nodes(fixture_text("scontrol_show_node_26.05.txt"))


def _checks(mode, nodes, member="bm-1"):
    model = _model(mode)
    return doctor.baremetal_checks(model, nodes, member)


def _by_target(checks):
    return {check["name"].split(" -> ", 1)[1]: check for check in checks}


# --------------------------------------------------------------------------- baremetal_checks


@pytest.mark.parametrize("mode", ["nat", "hostnetwork"])
def test_conf_server_is_the_nodeport_in_nat_and_hostnetwork(nodes, mode):
    first = _checks(mode, nodes)[0]
    assert first["name"] == "bm-1 -> conf server 10.127.0.50:30017"
    assert (first["host"], first["port"]) == ("10.127.0.50", 30017)
    assert "NodePort 30017" in first["hint"]
    assert "externalTrafficPolicy: Local" in first["hint"]
    assert "controller pod runs on 10.127.0.50" in first["hint"]


def test_conf_server_is_the_controller_pod_ip_in_routed(nodes):
    first = _checks("routed", nodes)[0]
    assert first["name"] == "bm-1 -> conf server 10.126.0.11:6817"
    assert (first["host"], first["port"]) == ("10.126.0.11", 6817)
    assert "controller pod 10.126.0.11 is not reachable" in first["hint"]
    assert "route to the pod network" in first["hint"]
    assert "NodePort" not in first["hint"]


@pytest.mark.parametrize("mode, fix", [
    ("nat", "the OUTPUT DNAT"),
    ("hostnetwork", "the OUTPUT DNAT"),
    ("routed", "the route to the pod network"),
])
def test_slurmctld_check_targets_the_controller_host(nodes, mode, fix):
    check = _checks(mode, nodes)[1]
    assert check["name"] == "bm-1 -> slurmctld slurm-controller:6817"
    assert (check["host"], check["port"]) == ("slurm-controller", 6817)
    assert check["hint"].startswith("slurm-controller must resolve to 10.126.0.11 and reach slurmctld")
    assert check["hint"].endswith(fix)


@pytest.mark.parametrize("mode", ["nat", "routed", "hostnetwork"])
def test_every_other_node_is_probed_at_its_nodeaddr_but_not_the_member(nodes, mode):
    checks = _checks(mode, nodes, member="bm-1")
    assert [check["name"] for check in checks[2:]] == [
        "bm-1 -> slurmd bm-2 (NodeAddr 10.127.0.62:6818)",
        "bm-1 -> slurmd bm-3 (NodeAddr 10.127.0.63:6818)",
        "bm-1 -> slurmd pod-1 (NodeAddr 10.126.0.21:6818)",
    ]
    assert [(check["host"], check["port"]) for check in checks[2:]] == [
        ("10.127.0.62", 6818), ("10.127.0.63", 6818), ("10.126.0.21", 6818)]
    assert not any("10.127.0.61" == check["host"] for check in checks)


def test_a_member_not_yet_registered_probes_every_node(nodes):
    checks = _checks("nat", nodes, member="bm-9")
    assert [check["host"] for check in checks[2:]] == ["10.127.0.61", "10.127.0.62", "10.127.0.63", "10.126.0.21"]


def test_nat_pod_nodeaddr_gets_the_fix_nodeaddr_hint(nodes):
    checks = _by_target(_checks("nat", nodes))
    hint = checks["slurmd pod-1 (NodeAddr 10.126.0.21:6818)"]["hint"]
    assert "pod-1's NodeAddr 10.126.0.21 is a pod IP bare metal cannot route to" in hint
    assert "playbooks/fix_nodeaddr.yml" in hint
    bare_metal_hint = checks["slurmd bm-2 (NodeAddr 10.127.0.62:6818)"]["hint"]
    assert "fix_nodeaddr" not in bare_metal_hint
    assert bare_metal_hint.startswith("slurmd on bm-2 does not answer at NodeAddr 10.127.0.62:6818")


def test_routed_pod_nodeaddr_gets_the_route_hint(nodes):
    checks = _by_target(_checks("routed", nodes))
    hint = checks["slurmd pod-1 (NodeAddr 10.126.0.21:6818)"]["hint"]
    assert hint == "no path to pod IP 10.126.0.21 of pod-1: check the route to its node's pod CIDR"
    assert "fix_nodeaddr" not in hint
    assert checks["slurmd bm-3 (NodeAddr 10.127.0.63:6818)"]["hint"].startswith("slurmd on bm-3 does not answer")


def test_hostnetwork_pod_nodeaddr_gets_the_generic_hint(nodes):
    hint = _by_target(_checks("hostnetwork", nodes))["slurmd pod-1 (NodeAddr 10.126.0.21:6818)"]["hint"]
    assert hint.startswith("slurmd on pod-1 does not answer at NodeAddr 10.126.0.21:6818")
    assert "hostPort or firewall for 6818" in hint
    assert "fix_nodeaddr" not in hint


def test_without_pod_cidrs_no_nodeaddr_is_taken_for_a_pod_ip(nodes):
    raw = copy.deepcopy(RAW_MODEL)
    del raw["pod_routes"]  # the model then knows no pod network
    model = cluster_model.normalize(raw)
    assert model["pod_cidrs"] == []
    checks = _by_target(doctor.baremetal_checks(model, nodes, "bm-1"))
    assert "fix_nodeaddr" not in checks["slurmd pod-1 (NodeAddr 10.126.0.21:6818)"]["hint"]


def test_a_non_ip_nodeaddr_is_not_in_any_cidr(nodes):
    nodes = copy.deepcopy(nodes)
    nodes["pod-1"]["NodeAddr"] = "slurm-worker-slinky-0.slurm-workers"
    model = _model("nat")
    check = _by_target(doctor.baremetal_checks(model, nodes, "bm-1"))[
        "slurmd pod-1 (NodeAddr slurm-worker-slinky-0.slurm-workers:6818)"]
    assert check["host"] == "slurm-worker-slinky-0.slurm-workers"
    assert "fix_nodeaddr" not in check["hint"]


def test_slurmd_port_of_the_model_is_used(nodes):
    # Slinky fixes SlurmdPort (the model refuses another); the checks still read it from the model.
    model = dict(cluster_model.normalize(copy.deepcopy(RAW_MODEL)), slurmd_port=6828)
    checks = doctor.baremetal_checks(model, nodes, "bm-1")
    assert {check["port"] for check in checks[2:]} == {6828}
    assert "firewall for 6828" in checks[2]["hint"]


# --------------------------------------------------------------------------- controller_findings


def test_controller_findings_on_the_fixture(nodes):
    findings = doctor.controller_findings(nodes)
    assert [(f["name"], f["observed"], f["ok"]) for f in findings] == [
        ("slurmctld -> slurmd bm-1 (NodeAddr 10.127.0.61)", "responding", True),
        ("slurmctld -> slurmd bm-2 (NodeAddr 10.127.0.62)", "DOWN*+DRAIN+DYNAMIC_NORM", False),
        ("slurmctld -> slurmd bm-3 (NodeAddr 10.127.0.63)", "responding", True),
        ("slurmctld -> slurmd pod-1 (NodeAddr 10.126.0.21)", "responding", True),
    ]
    assert all(f["expected"] == "responding" for f in findings)
    assert [f["hint"] for f in findings if f["ok"]] == ["", "", ""]
    assert findings[1]["hint"] == ("slurmctld cannot reach bm-2 at NodeAddr 10.127.0.62:6818 "
                                   "(state DOWN*+DRAIN+DYNAMIC_NORM, reason: Not responding [slurm@2026-11-22T00:10:00])")


@pytest.mark.parametrize(
    "state, ok",
    [
        ("IDLE", True),
        ("IDLE+DYNAMIC_NORM", True),
        ("MIXED", True),
        ("ALLOCATED+DRAIN", True),  # draining, but slurmctld reaches it
        ("IDLE*+DYNAMIC_NORM", False),  # '*': not responding
        ("MIXED*", False),
        ("DOWN+DRAIN", False),
        ("DOWN", False),
        ("UNKNOWN", False),
    ],
)
def test_controller_findings_states(state, ok):
    record = scontrol.parse_node_line("NodeName=w1 NodeAddr=10.127.0.70 State=%s Reason=Kill task failed [root@2026-11-22T01:00:00]"
                                      % state)
    (finding,) = doctor.controller_findings({"w1": record})
    assert finding["ok"] is ok
    assert finding["observed"] == ("responding" if ok else state)
    if ok:
        assert finding["hint"] == ""
    else:
        assert "NodeAddr 10.127.0.70:6818" in finding["hint"]
        assert "reason: Kill task failed [root@2026-11-22T01:00:00]" in finding["hint"]


def test_controller_findings_without_a_reason():
    (finding,) = doctor.controller_findings({"w1": {"NodeName": "w1", "NodeAddr": "10.127.0.70", "State": "DOWN*"}})
    assert finding["ok"] is False
    assert finding["hint"].endswith("(state DOWN*, reason: -)")


def test_controller_findings_of_no_nodes():
    assert doctor.controller_findings({}) == []


# --------------------------------------------------------------------------- srun_results


LOOP_RESULTS = [
    {"item": "bm-2", "rc": 0, "cmd": ["srun", "-N1", "-w", "bm-2", "true"], "stdout": "", "stderr": "",
     "changed": True, "failed": False, "ansible_loop_var": "item"},
    {"item": "pod-1", "rc": 1, "cmd": ["srun", "-N1", "-w", "pod-1", "true"], "stdout": "",
     "stderr": ("srun: error: Task launch for StepId=41.0 failed on node pod-1: Communication connection failure\n"
                "srun: error: Application launch failed: Communication connection failure\n"),
     "msg": "non-zero return code", "changed": True, "failed": True, "ansible_loop_var": "item"},
]


def test_srun_results_rc_0_completes_and_rc_1_fails_with_the_last_stderr_line():
    ok, failed = doctor.srun_results(LOOP_RESULTS, "bm-1")
    assert ok == {"name": "bm-1 -> srun step on bm-2 (slurmd there, srun ports back here)", "expected": "completed",
                  "observed": "completed", "ok": True, "hint": ""}
    assert failed["name"] == "bm-1 -> srun step on pod-1 (slurmd there, srun ports back here)"
    assert failed["observed"] == "failed rc=1"
    assert failed["ok"] is False
    assert "a job step from bm-1 cannot run on pod-1 (srun: error: Application launch failed: Communication connection failure)" \
        in failed["hint"]
    assert "Task launch for StepId" not in failed["hint"]
    assert "SrunPortRange" in failed["hint"]


def test_srun_results_falls_back_to_msg_then_to_no_output():
    msg_only, nothing = doctor.srun_results([
        {"item": "bm-3", "rc": 124, "msg": "srun timed out after 30 s"},
        {"item": "bm-4", "rc": 2, "stderr": "", "msg": ""},
    ], "bm-1")
    assert msg_only["observed"] == "failed rc=124"
    assert "(srun timed out after 30 s)" in msg_only["hint"]
    assert "(no output)" in nothing["hint"]


@pytest.mark.parametrize("results", [None, []])
def test_srun_results_without_results(results):
    assert doctor.srun_results(results, "bm-1") == []


# --------------------------------------------------------------------------- report


REPORT_ROWS = [
    {"name": "bm-1 -> conf server 10.127.0.50:30017", "expected": "open", "observed": "open", "ok": True},
    {"name": "bm-1 -> slurmd pod-1 (NodeAddr 10.126.0.21:6818)", "expected": "open", "observed": "timeout", "ok": False},
    {"name": "slurmctld -> slurmd bm-2 (NodeAddr 10.127.0.62)", "expected": "responding",
     "observed": "DOWN*+DRAIN+DYNAMIC_NORM", "ok": False},
    {"name": "bm-1 -> srun step on bm-3", "expected": "completed", "observed": "completed", "ok": True},
]


def test_report_table_has_a_header_and_aligned_columns():
    table, _broken = doctor.report(REPORT_ROWS)
    lines = table.split("\n")
    assert len(lines) == 1 + len(REPORT_ROWS)
    assert lines[0].split() == ["PATH", "EXPECTED", "OBSERVED"]
    name_width = max(len(row["name"]) for row in REPORT_ROWS)
    expected_width = max(len(row["expected"]) for row in REPORT_ROWS)
    observed_width = max(len(row["observed"]) for row in REPORT_ROWS)
    expected_at = name_width + 2
    observed_at = expected_at + expected_width + 2
    marker_at = observed_at + observed_width + 2
    assert lines[0].index("EXPECTED") == expected_at
    assert lines[0].index("OBSERVED") == observed_at
    for line, row in zip(lines[1:], REPORT_ROWS):
        assert line[:expected_at] == row["name"].ljust(expected_at)
        assert line[expected_at:observed_at] == row["expected"].ljust(observed_at - expected_at)
        assert line[observed_at:marker_at] == row["observed"].ljust(marker_at - observed_at)
        assert line[marker_at:] == ("ok" if row["ok"] else "BROKEN")


def test_report_marks_only_broken_rows_and_returns_them():
    table, broken = doctor.report(REPORT_ROWS)
    lines = table.split("\n")
    assert [line.endswith("BROKEN") for line in lines] == [False, False, True, True, False]
    assert table.count("BROKEN") == 2
    assert broken == [REPORT_ROWS[1], REPORT_ROWS[2]]
    assert all(line == line.rstrip() for line in lines)


def test_report_of_nothing_is_the_header_only():
    table, broken = doctor.report([])
    assert table == "PATH  EXPECTED  OBSERVED"
    assert broken == []


def test_report_of_real_checks_findings_and_srun_results(nodes):
    states = {"10.127.0.50": "open", "slurm-controller": "open", "10.127.0.62": "refused",
              "10.127.0.63": "open", "10.126.0.21": "timeout"}
    checks = probe.run_checks(_checks("nat", nodes), probe=lambda host, port, timeout: (states[host], 0.01))
    results = checks + doctor.controller_findings(nodes) + doctor.srun_results(LOOP_RESULTS, "bm-1")
    table, broken = doctor.report(results)
    assert [row["name"] for row in broken] == [
        "bm-1 -> slurmd bm-2 (NodeAddr 10.127.0.62:6818)",
        "bm-1 -> slurmd pod-1 (NodeAddr 10.126.0.21:6818)",
        "slurmctld -> slurmd bm-2 (NodeAddr 10.127.0.62)",
        "bm-1 -> srun step on pod-1 (slurmd there, srun ports back here)",
    ]
    assert "fix_nodeaddr" in broken[1]["hint"]
    assert table.count("BROKEN") == 4
    assert len(table.splitlines()) == len(results) + 1


GETENT_OLD = "10.126.0.11     STREAM slurm-controller\n10.126.0.11     DGRAM  \n10.126.0.11     RAW    \n"


@pytest.mark.parametrize("mode", ["nat", "hostnetwork", "routed"])
def test_controller_address_matches_where_the_pod_is(mode):
    row = doctor.controller_address(_model(mode), GETENT_OLD, "bm-1")
    assert row["ok"] and row["observed"] == row["expected"] == "10.126.0.11" and row["hint"] == ""


@pytest.mark.parametrize("mode,still", [("nat", "still reaches slurmctld through the old address's DNAT to the NodePort, which "
                                                "follows the pod as long as it runs on the node at 10.127.0.50"),
                                        ("hostnetwork", "as long as it runs on the node at 10.127.0.50"),
                                        ("routed", "reaches no slurmctld")])
def test_controller_pod_moved_is_named_with_what_still_works(mode, still):
    model = _model(mode)
    model["controller"]["address"] = "10.126.0.12"   # discovered after the pod was rescheduled
    row = doctor.controller_address(model, GETENT_OLD, "bm-1")
    assert not row["ok"]
    assert (row["expected"], row["observed"]) == ("10.126.0.12", "10.126.0.11")
    assert "resolves to 10.126.0.11 on bm-1, but the controller pod is at 10.126.0.12 now" in row["hint"]
    assert "run site.yml" in row["hint"] and still in row["hint"]


def test_controller_name_that_does_not_resolve():
    row = doctor.controller_address(_model("nat"), "", "bm-1")
    assert not row["ok"] and row["observed"] == "unresolved"


def _with_backups(mode="nat"):
    raw = copy.deepcopy(RAW_MODEL)
    raw["network_mode"] = mode
    raw["controller"]["backups"] = [
        {"host": "ctl-1.internal", "aliases": ["ctl-1"], "address": "10.126.1.7", "node_address": "10.127.0.51"},
        {"host": "ctl-2.internal", "aliases": ["ctl-2"]}]
    return cluster_model.normalize(raw)


def test_each_controllers_name_is_checked():
    model = _with_backups()
    resolved = {model["controller"]["host"]: GETENT_OLD, "ctl-1.internal": "10.126.1.7 STREAM ctl-1.internal\n",
                "ctl-2.internal": ""}
    rows = doctor.controller_addresses(model, resolved, "bm-1")
    assert [(row["name"], row["expected"], row["observed"], row["ok"]) for row in rows] == [
        ("bm-1: %s resolves to the controller pod" % model["controller"]["host"], "10.126.0.11", "10.126.0.11", True),
        ("bm-1: ctl-1.internal resolves to the backup controller's pod", "10.126.1.7", "10.126.1.7", True),
        ("bm-1: ctl-2.internal (a backup SlurmctldHost) resolves", "an address (no pod answers to it)", "unresolved", False),
    ]
    assert "no controller pod answers to ctl-2.internal or ctl-2" in rows[2]["hint"]
    # a backup's pod made again elsewhere: the old address is named
    rows = doctor.controller_addresses(model, dict(resolved, **{"ctl-1.internal": "10.126.1.9 STREAM x\n"}), "bm-1")
    assert not rows[1]["ok"] and "the backup controller's pod is at 10.126.1.7 now" in rows[1]["hint"]
    # a backup outside the cluster, resolved by DNS, is not ours to map
    assert doctor.controller_addresses(model, dict(resolved, **{"ctl-2.internal": "192.0.2.7 STREAM\n"}), "bm-1")[2]["ok"]
    # the single controller's output alone, as before
    assert doctor.controller_addresses(_model("nat"), GETENT_OLD, "bm-1")[0]["ok"]


# Slurm 26.05 src/scontrol/scontrol.c, _print_ping: "backup" with two controllers, "backupN" with more.
PING_THREE = """Slurmctld(primary) at slurm-controller is UP
Slurmctld(backup1) at ctl-1 is UP
Slurmctld(backup2) at ctl-2 is DOWN
*****************************************
** RESTORE SLURMCTLD DAEMON TO SERVICE **
*****************************************
"""


def test_scontrol_ping_row_per_controller():
    rows = doctor.controller_ping(PING_THREE, _with_backups(), "bm-1")
    assert [(row["name"], row["observed"], row["ok"]) for row in rows] == [
        ("bm-1: scontrol ping, primary slurmctld slurm-controller", "UP", True),
        ("bm-1: scontrol ping, backup1 slurmctld ctl-1", "UP", True),
        ("bm-1: scontrol ping, backup2 slurmctld ctl-2", "DOWN", False),
    ]
    assert "no controller pod answers to backup slurmctld ctl-2" in rows[2]["hint"]
    down = doctor.controller_ping(PING_THREE.replace("ctl-1 is UP", "ctl-1 is DOWN"), _with_backups(), "bm-1")
    assert "pod at 10.126.1.7, node 10.127.0.51" in down[1]["hint"] and "externalTrafficPolicy Local" in down[1]["hint"]
    # one controller, as Slinky 1.2.1 writes it
    (row,) = doctor.controller_ping("Slurmctld(primary) at slurm-controller is UP\n", _model("nat"), "bm-1")
    assert row["ok"]
    # scontrol could not read slurm.conf or answered for fewer controllers than the cluster names
    (row,) = doctor.controller_ping("scontrol: error: resolve failure\n", _model("nat"), "bm-1")
    assert not row["ok"] and (row["expected"], row["observed"]) == ("1 controllers", "0")


# --------------------------------------------------------------------------- spread probes

@pytest.mark.parametrize("nodes, members", [
    (["bm-1", "bm-2", "pod-1", "pod-2"], ["bm-1", "bm-2"]),
    (["bm-%d" % i for i in range(1, 33)] + ["pod-%d" % i for i in range(1, 65)], ["bm-%d" % i for i in range(1, 33)]),
    (["bm-1", "bm-2", "bm-3"], ["bm-1", "bm-2", "bm-3"]),
    (["bm-1", "pod-1", "pod-2", "pod-3"], ["bm-1"]),
], ids=["lab", "32-hosts-96-nodes", "only-bare-metal", "one-host"])
def test_spread_probes_every_node_once_never_from_itself_evenly(nodes, members):
    shares = dict((member, doctor.share(nodes, members, member)) for member in members)
    probed = sorted(name for mine in shares.values() for name in mine)
    expected = sorted(name for name in nodes if len(members) > 1 or name not in members)
    assert probed == expected                                   # every node once
    assert all(member not in mine for member, mine in shares.items())
    sizes = [len(mine) for mine in shares.values()]
    assert max(sizes) - min(sizes) <= 2                         # each about len(nodes) / len(members)
    assert shares == dict((m, doctor.share(list(reversed(nodes)), list(reversed(members)), m)) for m in members)


def test_spread_refuses_a_member_not_in_the_list():
    with pytest.raises(ValueError, match="bm-9 is not one of the members bm-1, bm-2"):
        doctor.share(["pod-1"], ["bm-1", "bm-2"], "bm-9")


def test_checks_of_a_share_probe_only_those_slurmd():
    nodes = {"bm-1": {"NodeAddr": "10.127.0.61"}, "bm-2": {"NodeAddr": "10.127.0.62"}, "pod-1": {"NodeAddr": "10.127.0.51"}}
    names = [check["name"] for check in doctor.baremetal_checks(_model("nat"), nodes, "bm-1", ["pod-1"])]
    assert len(names) == 3 and "slurmd pod-1" in names[2] and not any("slurmd bm-2" in name for name in names)


# `ss -Htln` on a lab host (Debian forky's iproute2): three ports of the range on IPv4, one of
# them on IPv6 too, one port above the range on loopback, slurmd's 6818 and sshd.
def test_srun_ports_counts_the_range_once_per_port(fixture_text):
    listening = {"rc": 0, "stdout": fixture_text("ss_Htln_srun_ports.txt")}
    row = doctor.srun_port_use(listening, _model("nat"), "bm-1")
    assert row == {"name": "bm-1: srun ports listening (SrunPortRange 60001-60100)",
                   "expected": "fewer than 80 of 100", "observed": "3 of 100", "ok": True, "hint": ""}


@pytest.mark.parametrize("used, ok", [(79, True), (80, False), (100, False)])
def test_srun_ports_near_full_is_broken_with_a_hint(used, ok):
    lines = ["LISTEN 0      128      0.0.0.0:%d 0.0.0.0:*" % port for port in range(60001, 60001 + used)]
    row = doctor.srun_port_use({"rc": 0, "stdout": "\n".join(lines)}, _model("routed"), "bm-2")
    assert row["observed"] == "%d of 100" % used and row["ok"] is ok
    if not ok:
        assert "all ports in range exhausted" in row["hint"] and "srun_concurrency" in row["hint"]


def test_srun_ports_unread_is_reported_not_broken():
    row = doctor.srun_port_use({"rc": 127, "stdout": "", "stderr": "ss: not found"}, _model("nat"), "bm-1")
    assert row["ok"] is True and row["observed"] == "not read (ss: ss: not found)"
    assert doctor.srun_port_use(None, _model("nat"), "bm-1")["observed"] == "not read (ss: no output)"


# `iptables -w -S SLIME-HYBRID-SRC` on bm-1 of the make demo cluster (network_mode nat): its three Kubernetes
# nodes, its two bare-metal hosts and the three nodes' pod networks, and the refusal of any other source.
LAB_SOURCES = [{"kind": "node", "cidr": "10.127.0.%d/32" % n} for n in (30, 31, 32)] + [
    {"kind": "baremetal", "cidr": "10.127.0.%d/32" % n} for n in (61, 62)] + [
    {"kind": "pods", "cidr": "10.244.%d.0/24" % n} for n in (0, 1, 2)]


def test_inbound_sources_name_what_the_host_lets_in(fixture_text):
    model = dict(_model("nat"), sources=LAB_SOURCES)
    listing = {"rc": 0, "stdout": fixture_text("iptables_S_sources.txt")}
    row = doctor.inbound_sources(listing, model, "bm-1")
    assert row["name"] == "bm-1: sources let in to slurmd's and srun's ports" and row["ok"] is True
    assert row["expected"].startswith("node 10.127.0.30/32, node 10.127.0.31/32, ") and row["expected"].endswith(
        "pods 10.244.2.0/24; others refused")
    assert row["observed"] == "the same"
    # a source opened by hand, one of the model's gone, or no refusal: broken, with the way back
    opened = listing["stdout"].replace("-s 10.127.0.62/32", "-s 0.0.0.0/0")
    row = doctor.inbound_sources({"rc": 0, "stdout": opened}, model, "bm-1")
    assert row["ok"] is False and "baremetal 0.0.0.0/0" in row["observed"] and "site.yml (tags firewall)" in row["hint"]
    # an accept of any source before the refusal, added by hand: the chain is not the plan's
    anyone = listing["stdout"].replace("-A SLIME-HYBRID-SRC -p tcp", "-A SLIME-HYBRID-SRC -j ACCEPT\n-A SLIME-HYBRID-SRC -p tcp")
    row = doctor.inbound_sources({"rc": 0, "stdout": anyone}, model, "bm-1")
    assert row["ok"] is False and row["observed"].startswith("node 10.127.0.30/32") and "unnamed any" in row["observed"]
    open_to_all = "\n".join(line for line in listing["stdout"].splitlines() if "REJECT" not in line)
    row = doctor.inbound_sources({"rc": 0, "stdout": open_to_all}, model, "bm-1")
    assert row["ok"] is False and row["observed"].endswith("; others not refused")
    # not read (no chain, no root): said, not broken; a host the model leaves its firewall to: any source
    row = doctor.inbound_sources({"rc": 1, "stdout": "", "stderr": "iptables: No chain/target/match by that name."}, model, "bm-1")
    assert row["ok"] is True and row["observed"] == "not read (iptables: iptables: No chain/target/match by that name.)"
    unmanaged = dict(model, worker=dict(model["worker"], manage_firewall=False))
    assert doctor.inbound_sources(listing, unmanaged, "bm-1")["expected"].startswith("any")
