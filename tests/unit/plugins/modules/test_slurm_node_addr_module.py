# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm_node_addr module, run in-process against a fake slurmctld behind run_command."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import re

import pytest
from ansible.module_utils import basic

from ansible_collections.slime.hybrid.plugins.modules import slurm_node_addr

FIXTURE = "scontrol_show_node_26.05.txt"
SHOW = ["scontrol", "show", "node", "--oneliner"]
SHOWN_KEYS = ("NodeName", "NodeAddr", "NodeHostName", "State", "AvailableFeatures")
# `scontrol update` takes the keys case-insensitively; `show` prints NodeHostName.
UPDATE_KEYS = {"nodename": "NodeName", "nodeaddr": "NodeAddr", "nodehostname": "NodeHostName"}


class FakeSlurmctld(object):
    """scontrol and slurmctld as far as the module sees them.

    Holds node records; answers `show node --oneliner` with one line per record and applies
    `update NodeName=a,b NodeAddr=x,y [NodeHostname=h,i]` to them. Every call is recorded.
    """

    def __init__(self, lines):
        self.records = {}
        for line in lines:
            record = dict((key, re.search(r"(?:^|\s)%s=(\S*)" % key, line).group(1)) for key in SHOWN_KEYS)
            self.records[record["NodeName"]] = record
        self.calls = []
        self.show_result = None  # (rc, out, err) to answer `show` with instead of the records
        self.update_result = None  # (rc, out, err) to answer `update` with, changing nothing
        self.ignore_updates = False  # answer rc=0 but keep the records (a re-registration won)

    @property
    def updates(self):
        return [call for call in self.calls if call[1:2] == ["update"]]

    def addresses(self):
        return dict((name, record["NodeAddr"]) for name, record in self.records.items())

    def render(self):
        return "".join(" ".join("%s=%s" % (key, record[key]) for key in SHOWN_KEYS) + "\n" for record in self.records.values())

    def run_command(self, args, **kwargs):
        args = list(args)
        self.calls.append(args)
        if args[1:] == ["show", "node", "--oneliner"]:
            return self.show_result or (0, self.render(), "")
        if args[1:2] == ["update"]:
            return self.update_result or self._update(args[2:])
        return 1, "", "scontrol: error: Invalid command: %s" % " ".join(args[1:])

    def _update(self, words):
        fields = {}
        for word in words:
            key, _sep, value = word.partition("=")
            if key.lower() not in UPDATE_KEYS:
                return 1, "", "scontrol: error: Update of this parameter is not supported: %s" % word
            fields[UPDATE_KEYS[key.lower()]] = value.split(",")
        names = fields.pop("NodeName", [])
        for key, values in fields.items():
            if len(values) != len(names):
                return 1, "", "scontrol: error: %s count does not match NodeName count" % key
        for name in names:
            if name not in self.records:
                return 1, "", "slurm_update error: Invalid node name specified"
        if not self.ignore_updates:
            for index, name in enumerate(names):
                for key, values in fields.items():
                    self.records[name][key] = values[index]
        return 0, "", ""


def fixture_lines(fixture_text, extra_pods=1):
    """The real 26.05 fixture plus `extra_pods` pod nodes pod-2.. made from its pod-1 line."""
    lines = fixture_text(FIXTURE).splitlines()
    pod_1 = next(line for line in lines if line.startswith("NodeName=pod-1 "))
    for number in range(2, 2 + extra_pods):
        lines.append(pod_1.replace("pod-1", "pod-%d" % number).replace("10.126.0.21", "10.126.1.%d" % number))
    return lines


@pytest.fixture
def slurmctld(fixture_text, monkeypatch):
    """bm-1 bm-2 bm-3 (baremetal) and pod-1 pod-2 (pod), registered with their pod IPs."""
    fake = FakeSlurmctld(fixture_lines(fixture_text))
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda module, args, **kwargs: fake.run_command(args, **kwargs))
    return fake


@pytest.fixture
def run_module(module_runner):
    """Run the slurm_node_addr module (see module_runner in tests/unit/conftest.py)."""
    return functools.partial(module_runner, slurm_node_addr.main)


POD_ADDRS = {"pod-1": "10.127.0.51", "pod-2": "10.127.0.52"}
UPDATE_PODS = ["scontrol", "update", "NodeName=pod-1,pod-2", "NodeAddr=10.127.0.51,10.127.0.52"]


def test_changes_two_nodes_with_one_update_and_rereads(slurmctld, run_module):
    run = run_module(nodes={"pod-2": "10.127.0.52", "pod-1": "10.127.0.51", "bm-1": "10.127.0.61"})
    assert run.rc == 0
    assert run.result["changed"] is True
    assert run.result["changed_nodes"] == ["pod-1", "pod-2"]
    assert run.result["selected"] == ["bm-1", "pod-1", "pod-2"]
    assert slurmctld.calls == [SHOW, UPDATE_PODS, SHOW]
    assert run.result["commands"] == [UPDATE_PODS]
    assert run.result["nodes"]["pod-2"] == {
        "before": {"NodeAddr": "10.126.1.2", "NodeHostName": "pod-2"},
        "after": {"NodeAddr": "10.127.0.52", "NodeHostName": "pod-2"},
    }
    assert slurmctld.addresses() == dict(
        POD_ADDRS, **{"bm-1": "10.127.0.61", "bm-2": "10.127.0.62", "bm-3": "10.127.0.63"})
    assert "diff" not in run.result


def test_second_run_is_not_changed(slurmctld, run_module):
    assert run_module(nodes=POD_ADDRS).result["changed"] is True
    del slurmctld.calls[:]
    run = run_module(nodes=POD_ADDRS)
    assert run.rc == 0
    assert run.result["changed"] is False
    assert run.result["changed_nodes"] == []
    assert run.result["nodes"] == {}
    assert run.result["commands"] == []
    assert slurmctld.calls == [SHOW]


def test_check_mode_reports_drift_and_updates_nothing(slurmctld, run_module):
    before = slurmctld.addresses()
    run = run_module(check_mode=True, nodes=POD_ADDRS)
    assert run.rc == 0
    assert run.result["changed"] is True
    assert run.result["changed_nodes"] == ["pod-1", "pod-2"]
    assert run.result["commands"] == [UPDATE_PODS]
    assert slurmctld.updates == []
    assert slurmctld.calls == [SHOW]
    assert slurmctld.addresses() == before


def test_check_mode_without_drift(slurmctld, run_module):
    run = run_module(check_mode=True, nodes={"pod-1": "10.126.0.21", "bm-3": "10.127.0.63"})
    assert run.result["changed"] is False
    assert run.result["changed_nodes"] == []
    assert slurmctld.updates == []


@pytest.mark.parametrize("check_mode", [False, True])
def test_diff_before_and_after_lines(slurmctld, run_module, check_mode):
    run = run_module(check_mode=check_mode, diff=True, nodes=dict(POD_ADDRS, **{"bm-1": "10.127.0.61"}))
    assert run.result["diff"] == {
        "before": "pod-1 NodeAddr=10.126.0.21 NodeHostName=pod-1\npod-2 NodeAddr=10.126.1.2 NodeHostName=pod-2\n",
        "after": "pod-1 NodeAddr=10.127.0.51 NodeHostName=pod-1\npod-2 NodeAddr=10.127.0.52 NodeHostName=pod-2\n",
    }
    assert len(slurmctld.updates) == (0 if check_mode else 1)


def test_hostname_changes_go_in_a_second_update(slurmctld, run_module):
    run = run_module(nodes={"pod-1": "10.127.0.51", "pod-2": {"address": "10.127.0.52", "hostname": "k8s-node-2"}})
    assert run.rc == 0
    assert run.result["changed_nodes"] == ["pod-1", "pod-2"]
    assert slurmctld.updates == [
        ["scontrol", "update", "NodeName=pod-1", "NodeAddr=10.127.0.51"],
        ["scontrol", "update", "NodeName=pod-2", "NodeAddr=10.127.0.52", "NodeHostname=k8s-node-2"],
    ]
    assert slurmctld.records["pod-2"]["NodeHostName"] == "k8s-node-2"
    assert slurmctld.records["pod-1"]["NodeHostName"] == "pod-1"
    assert run_module(nodes={"pod-2": {"address": "10.127.0.52", "hostname": "k8s-node-2"}}).result["changed"] is False


def test_unknown_node_fails_naming_it_and_updates_nothing(slurmctld, run_module):
    run = run_module(nodes={"pod-1": "10.127.0.51", "pod-9": "10.127.0.59"})
    assert run.rc == 1
    assert run.result["failed"] is True
    assert run.result["msg"] == "slurmctld does not know node(s): pod-9"
    assert run.result["unknown"] == ["pod-9"]
    assert slurmctld.updates == []
    assert slurmctld.records["pod-1"]["NodeAddr"] == "10.126.0.21"


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ("10.127.0.300", "pod-2: address '10.127.0.300' is neither an IPv4 address nor a host name"),
        ("fd00::52", "pod-2: address 'fd00::52' is IPv6"),
        ("", "pod-2: address empty address"),
        ({"address": "10.127.0.52", "hostname": "bad_host!"}, "pod-2: hostname 'bad_host!'"),
    ],
)
def test_invalid_address_fails_naming_the_node(slurmctld, run_module, spec, fragment):
    run = run_module(nodes={"pod-1": "10.127.0.51", "pod-2": spec})
    assert run.rc == 1
    assert run.result["msg"].startswith("invalid addresses: ")
    assert fragment in run.result["msg"]
    assert "pod-1" not in run.result["msg"]
    assert slurmctld.updates == []


def test_features_select_nodes_addresses_from_address_map(slurmctld, run_module):
    address_map = dict(POD_ADDRS, **{"bm-1": "10.0.0.99"})  # bm-1 is not a pod: its entry is ignored
    run = run_module(features=["pod"], address_map=address_map)
    assert run.rc == 0
    assert run.result["selected"] == ["pod-1", "pod-2"]
    assert run.result["changed_nodes"] == ["pod-1", "pod-2"]
    assert slurmctld.updates == [UPDATE_PODS]
    assert slurmctld.records["bm-1"]["NodeAddr"] == "10.127.0.61"


def test_names_select_nodes(slurmctld, run_module):
    run = run_module(names=["pod-2", "bm-2"], address_map={"pod-2": "10.127.0.52", "bm-2": "10.127.0.62"})
    assert run.rc == 0
    assert run.result["selected"] == ["bm-2", "pod-2"]
    assert run.result["changed_nodes"] == ["pod-2"]
    assert slurmctld.updates == [["scontrol", "update", "NodeName=pod-2", "NodeAddr=10.127.0.52"]]


def test_selected_node_missing_from_address_map_fails(slurmctld, run_module):
    run = run_module(features=["pod"], address_map={"pod-1": "10.127.0.51"})
    assert run.rc == 1
    assert run.result["msg"] == "no address in address_map for selected node(s): pod-2"
    assert run.result["selected"] == ["pod-1", "pod-2"]
    assert slurmctld.updates == []


def test_selected_node_missing_from_address_map_is_skipped(slurmctld, run_module):
    run = run_module(features=["pod"], address_map={"pod-1": "10.127.0.51"}, missing="skip")
    assert run.rc == 0
    assert run.result["selected"] == ["pod-1", "pod-2"]
    assert run.result["changed_nodes"] == ["pod-1"]
    assert slurmctld.updates == [["scontrol", "update", "NodeName=pod-1", "NodeAddr=10.127.0.51"]]
    assert slurmctld.records["pod-2"]["NodeAddr"] == "10.126.1.2"


def test_sixty_four_pods_take_one_update(fixture_text, monkeypatch, run_module):
    fake = FakeSlurmctld(fixture_lines(fixture_text, extra_pods=63))
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda module, args, **kwargs: fake.run_command(args, **kwargs))
    address_map = dict(("pod-%d" % i, "10.127.1.%d" % i) for i in range(1, 65))
    run = run_module(features=["pod"], address_map=address_map)
    assert run.rc == 0
    assert len(run.result["changed_nodes"]) == 64
    assert len(fake.updates) == 1
    assert dict((name, fake.records[name]["NodeAddr"]) for name in address_map) == address_map


def test_show_failure_fails_with_scontrol_stderr(slurmctld, run_module):
    stderr = "slurm_load_node error: Unable to contact slurm controller (connect failure)\n"
    slurmctld.show_result = (1, "", stderr)
    run = run_module(nodes=POD_ADDRS)
    assert run.rc == 1
    assert run.result["msg"] == "scontrol show node --oneliner failed (rc=1): " + stderr.strip()
    assert run.result["stderr"] == stderr
    assert slurmctld.updates == []


def test_update_failure_fails_with_scontrol_stderr(slurmctld, run_module):
    slurmctld.update_result = (1, "", "slurm_update error: Access/permission denied\n")
    run = run_module(nodes=POD_ADDRS)
    assert run.rc == 1
    assert run.result["msg"].startswith("scontrol update NodeName=pod-1,pod-2 NodeAddr=10.127.0.51,10.127.0.52 failed (rc=1)")
    assert "Access/permission denied" in run.result["msg"]
    assert len(slurmctld.updates) == 1


def test_update_that_does_not_take_fails(slurmctld, run_module):
    slurmctld.ignore_updates = True
    run = run_module(nodes=POD_ADDRS)
    assert run.rc == 1
    assert run.result["msg"] == "slurmctld still reports other addresses for: pod-1, pod-2"
    assert run.result["changed_nodes"] == ["pod-1", "pod-2"]
    assert slurmctld.calls == [SHOW, UPDATE_PODS, SHOW]


def test_scontrol_path_option(slurmctld, run_module):
    run = run_module(nodes={"pod-1": "10.127.0.51"}, scontrol="/opt/slurm/bin/scontrol")
    assert run.rc == 0
    update = ["/opt/slurm/bin/scontrol", "update", "NodeName=pod-1", "NodeAddr=10.127.0.51"]
    assert run.result["commands"] == [update]
    assert slurmctld.calls == [["/opt/slurm/bin/scontrol"] + SHOW[1:], update, ["/opt/slurm/bin/scontrol"] + SHOW[1:]]


@pytest.mark.parametrize(
    "args, fragment",
    [
        ({}, "one of the following is required: nodes, features, names"),
        ({"nodes": POD_ADDRS, "features": ["pod"], "address_map": POD_ADDRS}, "mutually exclusive"),
        ({"features": ["pod"]}, "missing parameter(s) required by 'features': address_map"),
        ({"features": ["pod"], "address_map": POD_ADDRS, "missing": "ignore"}, "value of missing must be one of: fail, skip"),
    ],
)
def test_argument_errors_run_no_scontrol(slurmctld, run_module, args, fragment):
    run = run_module(**args)
    assert run.rc == 1
    assert fragment in run.result["msg"]
    assert slurmctld.calls == []


def test_name_unknown_to_slurmctld_fails_naming_it(slurmctld, run_module):
    run = run_module(names=["pod-1", "pod-9"], address_map={"pod-1": "10.127.0.51", "pod-9": "10.127.0.59"})
    assert run.rc == 1
    assert run.result["msg"] == "slurmctld does not know node(s): pod-9"
    assert slurmctld.updates == []


def test_name_unknown_to_slurmctld_is_skipped_on_request(slurmctld, run_module):
    run = run_module(names=["pod-1", "pod-9"], missing="skip",
                     address_map={"pod-1": "10.127.0.51", "pod-9": "10.127.0.59"})
    assert run.rc == 0
    assert run.result["changed_nodes"] == ["pod-1"]
    assert slurmctld.updates == [["scontrol", "update", "NodeName=pod-1", "NodeAddr=10.127.0.51"]]


def test_settle_reads_again_and_leaves_what_healed_meanwhile(slurmctld, run_module, monkeypatch):
    """The NodeAddr sidecar heals a registration within its interval: with settle the module waits,
    reads again, and neither changes nor reports a node healed meanwhile."""
    run_module(nodes=POD_ADDRS)
    slurmctld.records["pod-1"]["NodeAddr"] = "10.126.0.21"  # pod-1 registered again from its pod IP
    slept = []

    def sidecar_heals(seconds):
        slept.append(seconds)
        slurmctld.records["pod-1"]["NodeAddr"] = POD_ADDRS["pod-1"]

    monkeypatch.setattr(slurm_node_addr.time, "sleep", sidecar_heals)
    del slurmctld.calls[:]
    run = run_module(check_mode=True, nodes=POD_ADDRS, settle=5)
    assert slept == [5] and slurmctld.calls == [SHOW, SHOW]
    assert run.result["changed"] is False and run.result["changed_nodes"] == []


def test_settle_changes_what_is_still_wrong_after_it(slurmctld, run_module, monkeypatch):
    monkeypatch.setattr(slurm_node_addr.time, "sleep", lambda seconds: None)
    run = run_module(nodes=POD_ADDRS, settle=5)
    assert run.result["changed_nodes"] == ["pod-1", "pod-2"]
    assert slurmctld.calls == [SHOW, SHOW, UPDATE_PODS, SHOW]
    del slurmctld.calls[:]
    assert run_module(nodes=POD_ADDRS, settle=5).result["changed"] is False
    assert slurmctld.calls == [SHOW]  # nothing differs: no wait, no second read
