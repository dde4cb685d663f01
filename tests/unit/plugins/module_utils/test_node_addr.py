# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Planning of NodeAddr/NodeHostname updates (plugins/module_utils/node_addr.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import node_addr, scontrol

FIXTURE = "scontrol_show_node_26.05.txt"
PODS_FIXTURE = os.path.join("k8s", "slurm_worker_pods.json")


@pytest.fixture
def current(fixture_text):
    return scontrol.parse_nodes(fixture_text(FIXTURE))


@pytest.fixture
def worker_pods(fixture_text):
    """The lab's NodeSet pods as the API returned them (tests/unit/fixtures/k8s/capture.sh):
    slurm-worker-slinky-0 and -1, Running, their Slurm node names slinky-0 and slinky-1 in spec.hostname."""
    return json.loads(fixture_text(PODS_FIXTURE))["worker_pods"]


def _without_hostname(pod):
    pod = copy.deepcopy(pod)
    del pod["spec"]["hostname"]
    return pod


def _unscheduled(pod, index, pending_pod):
    """Replica INDEX of the pod's NodeSet as the API shows it before the scheduler found it a node."""
    pod = pending_pod(pod)
    pod["metadata"]["name"] = "slurm-worker-slinky-%d" % index
    pod["spec"]["hostname"] = "slinky-%d" % index
    return pod


def change(before_addr, after_addr, before_host, after_host=None):
    """One entry of plan()'s changes."""
    return {
        "before": {"NodeAddr": before_addr, "NodeHostName": before_host},
        "after": {"NodeAddr": after_addr, "NodeHostName": after_host or before_host},
    }


def want(addr, hostname=None):
    """One entry of normalize_desired()'s desired."""
    return {"NodeAddr": addr, "NodeHostName": hostname}


# --- address_error ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["10.127.0.51", "192.168.1.1", " 10.0.0.1 ", "k8s-node-2", "pod-1", "localhost", "pod-1.slurm-workers.slurm.svc.cluster.local"],
)
def test_address_error_accepts_ipv4_and_host_names(value):
    assert node_addr.address_error(value) is None


@pytest.mark.parametrize(
    "value, message",
    [
        ("::1", "'::1' is IPv6; give an IPv4 address or a host name"),
        ("2001:db8::5", "'2001:db8::5' is IPv6; give an IPv4 address or a host name"),
        ("10.127.0.300", "'10.127.0.300' is neither an IPv4 address nor a host name"),
        ("10.127.0", "'10.127.0' is neither an IPv4 address nor a host name"),
        ("bad_host!", "'bad_host!' is neither an IPv4 address nor a host name"),
        ("-pod-1", "'-pod-1' is neither an IPv4 address nor a host name"),
        ("10.0.0.1,10.0.0.2", "'10.0.0.1,10.0.0.2' is neither an IPv4 address nor a host name"),
        ("", "empty address"),
        ("   ", "empty address"),
        (None, "empty address"),
    ],
)
def test_address_error_explains_what_is_refused(value, message):
    assert node_addr.address_error(value) == message


# --- normalize_desired -----------------------------------------------------------------------------


def test_normalize_desired_string_and_dict_specs():
    desired, errors = node_addr.normalize_desired({
        "pod-1": "10.127.0.51",
        "pod-2": {"address": " 10.127.0.52 "},
        "pod-3": {"address": "10.127.0.53", "hostname": " k8s-node-3 "},
        "pod-4": {"address": "k8s-node-4.example.org", "hostname": None},
    })
    assert errors == []
    assert desired == {
        "pod-1": want("10.127.0.51"),
        "pod-2": want("10.127.0.52"),
        "pod-3": want("10.127.0.53", "k8s-node-3"),
        "pod-4": want("k8s-node-4.example.org"),
    }


@pytest.mark.parametrize("nodes", [None, {}])
def test_normalize_desired_nothing_wanted(nodes):
    assert node_addr.normalize_desired(nodes) == ({}, [])


def test_normalize_desired_collects_every_error_naming_the_node():
    desired, errors = node_addr.normalize_desired({
        "pod-4": "10.127.0.54",
        "pod-3": {"address": "10.127.0.53", "hostname": "bad_host!"},
        "pod-2": "::1",
        "pod-1": "10.127.0.300",
        "pod-5": {"hostname": "k8s-node-5"},
    })
    assert desired == {"pod-4": want("10.127.0.54")}
    assert errors == [
        "pod-1: address '10.127.0.300' is neither an IPv4 address nor a host name",
        "pod-2: address '::1' is IPv6; give an IPv4 address or a host name",
        "pod-3: hostname 'bad_host!' is neither an IPv4 address nor a host name",
        "pod-5: address empty address",
    ]


# --- select_nodes ----------------------------------------------------------------------------------

SELECT_CURRENT = {
    "gpu-pod": {"AvailableFeatures": "pod,gpu"},
    "pod-1": {"AvailableFeatures": "pod"},
    "bm-1": {"AvailableFeatures": "baremetal"},
    "bare": {"AvailableFeatures": ""},
    "no-key": {},
}


@pytest.mark.parametrize(
    "features, names, expected",
    [
        (None, None, ["bare", "bm-1", "gpu-pod", "no-key", "pod-1"]),
        (["pod"], None, ["gpu-pod", "pod-1"]),
        (["gpu", "pod"], None, ["gpu-pod"]),
        (["pod", "baremetal"], None, []),
        (None, ["pod-1", "bare", "not-registered"], ["bare", "pod-1"]),
        (["pod"], ["pod-1", "bm-1"], ["pod-1"]),
        (["gpu"], ["pod-1"], []),
    ],
)
def test_select_nodes(features, names, expected):
    assert node_addr.select_nodes(SELECT_CURRENT, features, names) == expected


def test_select_nodes_on_the_real_fixture(current):
    assert node_addr.select_nodes(current, ["pod"]) == ["pod-1"]
    assert node_addr.select_nodes(current, ["baremetal"]) == ["bm-1", "bm-2", "bm-3"]
    assert node_addr.select_nodes(current, ["baremetal"], ["bm-3", "pod-1"]) == ["bm-3"]


# --- plan ------------------------------------------------------------------------------------------


def test_plan_no_change_is_empty(current):
    desired = {"pod-1": want("10.126.0.21"), "bm-1": want("10.127.0.61", "bm-1")}
    assert node_addr.plan(current, desired) == ({}, [])


def test_plan_node_addr_differs(current):
    changes, unknown = node_addr.plan(current, {"pod-1": want("10.127.0.51"), "bm-1": want("10.127.0.61")})
    assert unknown == []
    assert changes == {"pod-1": change("10.126.0.21", "10.127.0.51", "pod-1")}


def test_plan_hostname_wanted_and_differs(current):
    changes, unknown = node_addr.plan(current, {"pod-1": want("10.126.0.21", "k8s-node-1")})
    assert unknown == []
    assert changes == {"pod-1": change("10.126.0.21", "10.126.0.21", "pod-1", "k8s-node-1")}


def test_plan_hostname_none_means_dont_care():
    current = {"pod-1": {"NodeName": "pod-1", "NodeAddr": "10.127.0.51", "NodeHostName": "something-else"}}
    assert node_addr.plan(current, {"pod-1": want("10.127.0.51")}) == ({}, [])
    changes, _unknown = node_addr.plan(current, {"pod-1": want("10.127.0.99")})
    assert changes["pod-1"]["after"]["NodeHostName"] == "something-else"


def test_plan_reports_unknown_names_and_still_plans_the_rest(current):
    desired = {"pod-9": want("10.127.0.59"), "pod-1": want("10.127.0.51"), "bm-7": want("10.127.0.67")}
    changes, unknown = node_addr.plan(current, desired)
    assert unknown == ["bm-7", "pod-9"]
    assert list(changes) == ["pod-1"]


# --- wanted, pending -------------------------------------------------------------------------------


def test_wanted_selects_as_the_module_does(current):
    assert node_addr.wanted(current, features=["pod"], address_map={"pod-1": "10.127.0.51", "pod-9": "x"}) == (
        {"pod-1": "10.127.0.51"}, ["pod-1"], [], [])
    assert node_addr.wanted(current, names=["pod-1", "pod-9"], address_map={}) == ({}, ["pod-1"], ["pod-9"], ["pod-1"])
    assert node_addr.wanted(current, nodes={"bm-1": "10.127.0.61"}) == ({"bm-1": "10.127.0.61"}, ["bm-1"], [], [])


def test_pending_is_empty_when_every_pod_worker_has_its_address(current):
    assert node_addr.pending(current, {"pod-1": "10.126.0.21"}, names=["pod-1"]) == []
    assert node_addr.pending(current, {"pod-1": "10.126.0.21"}, features=["pod"]) == []


def test_pending_names_what_the_update_would_change_or_refuse(current):
    assert node_addr.pending(current, {"pod-1": "10.127.0.51"}, names=["pod-1"]) == ["pod-1"]
    # a pod worker slurmctld does not know yet, a selected node without an address, an address that is none
    assert node_addr.pending(current, {"pod-1": "10.126.0.21", "pod-2": "10.127.0.52"}, names=["pod-1", "pod-2"]) == ["pod-2"]
    assert node_addr.pending(current, {}, features=["pod"]) == ["pod-1"]
    assert node_addr.pending(current, {"pod-1": "not an address!"}, names=["pod-1"]) == ["pod-1"]


# --- update_commands -------------------------------------------------------------------------------


def test_update_commands_nothing_to_do():
    assert node_addr.update_commands({}) == []


def test_update_commands_one_command_names_sorted_addresses_aligned():
    changes = {
        "pod-2": change("10.126.0.22", "10.127.0.99", "pod-2"),
        "pod-1": change("10.126.0.21", "10.127.0.51", "pod-1"),
    }
    assert node_addr.update_commands(changes) == [
        ["update", "NodeName=pod-1,pod-2", "NodeAddr=10.127.0.51,10.127.0.99"],
    ]


def test_update_commands_second_command_only_for_hostname_changes():
    changes = {
        "pod-3": change("10.126.0.23", "10.127.0.53", "pod-3", "k8s-node-3"),
        "pod-1": change("10.126.0.21", "10.127.0.51", "pod-1"),
        "pod-2": change("10.127.0.52", "10.127.0.52", "pod-2", "k8s-node-2"),
    }
    assert node_addr.update_commands(changes) == [
        ["update", "NodeName=pod-1", "NodeAddr=10.127.0.51"],
        ["update", "NodeName=pod-2,pod-3", "NodeAddr=10.127.0.52,10.127.0.53", "NodeHostname=k8s-node-2,k8s-node-3"],
    ]


def test_update_commands_only_hostname_changes_give_one_command():
    changes = {"pod-1": change("10.126.0.21", "10.127.0.51", "pod-1", "k8s-node-1")}
    assert node_addr.update_commands(changes) == [
        ["update", "NodeName=pod-1", "NodeAddr=10.127.0.51", "NodeHostname=k8s-node-1"],
    ]


def test_update_commands_64_nodes_still_one_command():
    wanted = dict(("pod-%d" % i, "10.127.%d.%d" % (i // 10, i)) for i in range(64))
    changes = dict((name, change("10.126.0.1", addr, name)) for name, addr in wanted.items())
    commands = node_addr.update_commands(changes)
    assert len(commands) == 1
    verb, names_arg, addrs_arg = commands[0]
    assert verb == "update"
    names = names_arg[len("NodeName="):].split(",")
    addrs = addrs_arg[len("NodeAddr="):].split(",")
    assert names == sorted(wanted)
    assert dict(zip(names, addrs)) == wanted


# --- diff_text -------------------------------------------------------------------------------------


def test_diff_text_empty():
    assert node_addr.diff_text({}, "before") == ""
    assert node_addr.diff_text({}, "after") == ""


def test_diff_text_one_sorted_line_per_node():
    changes = {
        "pod-2": change("10.126.0.22", "10.127.0.52", "pod-2", "k8s-node-2"),
        "pod-1": change("10.126.0.21", "10.127.0.51", "pod-1"),
    }
    assert node_addr.diff_text(changes, "before") == (
        "pod-1 NodeAddr=10.126.0.21 NodeHostName=pod-1\n"
        "pod-2 NodeAddr=10.126.0.22 NodeHostName=pod-2\n"
    )
    assert node_addr.diff_text(changes, "after") == (
        "pod-1 NodeAddr=10.127.0.51 NodeHostName=pod-1\n"
        "pod-2 NodeAddr=10.127.0.52 NodeHostName=k8s-node-2\n"
    )


# --- pod_host_addresses ----------------------------------------------------------------------------


def test_pod_host_addresses_from_kubernetes_pods(worker_pods, pending_pod):
    first, second = worker_pods
    assert [p["spec"]["hostname"] for p in worker_pods] == ["slinky-0", "slinky-1"]
    assert node_addr.pod_host_addresses(worker_pods) == {"slinky-0": first["status"]["hostIP"],
                                                         "slinky-1": second["status"]["hostIP"]}
    # a pod without spec.hostname goes by its name; the Pending pod has no status.hostIP yet.
    pods = [first, _without_hostname(second), _unscheduled(first, 2, pending_pod)]
    assert node_addr.pod_host_addresses(pods) == {"slinky-0": first["status"]["hostIP"],
                                                  "slurm-worker-slinky-1": second["status"]["hostIP"]}


@pytest.mark.parametrize(
    "pod, expected",
    [
        ({"metadata": {"name": "w-0"}, "spec": {"hostname": "pod-1"}, "status": {"hostIP": "10.0.0.1"}}, {"pod-1": "10.0.0.1"}),
        ({"metadata": {"name": "pod-2"}, "spec": {"hostname": None}, "status": {"hostIP": "10.0.0.2"}}, {"pod-2": "10.0.0.2"}),
        ({"metadata": {"name": "pod-2"}, "status": {"hostIP": "10.0.0.2"}}, {"pod-2": "10.0.0.2"}),
        ({"metadata": {"name": "pod-3"}, "status": {"hostIP": ""}}, {}),
        ({"metadata": {"name": "pod-3"}, "status": None}, {}),
        ({"metadata": {"name": "pod-3"}}, {}),
        ({"status": {"hostIP": "10.0.0.4"}}, {}),
    ],
)
def test_pod_host_addresses_one_pod(pod, expected):
    assert node_addr.pod_host_addresses([pod]) == expected


@pytest.mark.parametrize("pods", [None, []])
def test_pod_host_addresses_no_pods(pods):
    assert node_addr.pod_host_addresses(pods) == {}


# --- scontrol.parse_nodes and the whole pipeline ----------------------------------------------------------


def test_parse_current_on_the_real_fixture(current):
    assert list(current) == ["bm-1", "pod-1", "bm-2", "bm-3"]
    seen = dict((name, (r["NodeAddr"], r["NodeHostName"], r["AvailableFeatures"])) for name, r in current.items())
    assert seen == {
        "bm-1": ("10.127.0.61", "bm-1", "baremetal"),
        "pod-1": ("10.126.0.21", "pod-1", "pod"),
        "bm-2": ("10.127.0.62", "bm-2", "baremetal"),
        "bm-3": ("10.127.0.63", "bm-3", "baremetal"),
    }
    assert current["bm-2"]["State"] == "DOWN*+DRAIN+DYNAMIC_NORM"


@pytest.mark.parametrize("text", ["", None, "No nodes in the system\n"])
def test_parse_current_without_nodes(text):
    assert scontrol.parse_nodes(text) == {}


def test_pods_to_update_commands(current, worker_pods):
    """What fix_nodeaddr.yml does: pods' host IPs for the nodes with feature pod."""
    # The scontrol capture's pod node is pod-1: the first captured pod under that hostname.
    pod = copy.deepcopy(worker_pods[0])
    pod["spec"]["hostname"] = "pod-1"
    addresses = node_addr.pod_host_addresses([pod] + worker_pods[1:])
    selected = node_addr.select_nodes(current, ["pod"])
    desired, errors = node_addr.normalize_desired(dict((n, addresses[n]) for n in selected if n in addresses))
    assert errors == []
    changes, unknown = node_addr.plan(current, desired)
    assert unknown == []
    assert node_addr.update_commands(changes) == [["update", "NodeName=pod-1", "NodeAddr=" + pod["status"]["hostIP"]]]
