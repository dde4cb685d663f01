# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import os

import pytest
from ansible.errors import AnsibleFilterError


# Every filter the roles call as slime.hybrid.<name>.
ROLE_FILTERS = [
    "cluster_model", "cluster_errors", "cluster_intent", "cluster_intent_errors", "slurm_compat_error", "srun_ports_needed",
    "slurmd_conf", "key_error", "apt_policy_version", "scontrol_nodes",
    "slurm_node_available", "slurm_node_input_errors", "metal3_hosts_input_errors", "worker_plan", "worker_user_data",
]

# Filters playbooks/ call as slime.hybrid.<name>.
PLAYBOOK_FILTERS = ["pod_host_addresses", "scontrol_host"]

MODEL = {
    "controller": {"host": "slurm-controller", "address": "10.126.0.11"},
    "nodeport": {"address": "10.127.0.50", "port": 30017},
    "srun_port_range": "60001-60100",
    "slurm_version": "26.05",
}


@pytest.mark.parametrize("users, names", [("roles", ROLE_FILTERS), ("playbooks", PLAYBOOK_FILTERS)])
def test_filters_used_by_roles_and_playbooks_exist_and_are_callable(filters, users, names):
    assert set(names) <= set(filters), users
    assert all(callable(filters[name]) for name in names)


def test_cluster_model(filters):
    out = filters["cluster_model"](MODEL)
    assert out["conf_server"] == "10.127.0.50:30017"
    assert [rule["comment"] for rule in out["dnat"]] == [
        "slime.hybrid/slurmctld 10.126.0.11:6817>10.127.0.50:30017",
        "slime.hybrid/controller-srun 10.126.0.11:60001:60100>10.127.0.50",
    ]


@pytest.mark.parametrize(
    "changes, fragment",
    [
        ({"nodeport": {"address": "10.127.0.50", "port": 80}}, "nodeport.port=80"),
        ({"srun_port_range": "6810-6817"}, "srun_port_range=6810-6817 contains controller.port 6817"),
        ({"slurm_version": "latest"}, "'latest'"),
    ],
)
def test_cluster_model_raises_filter_error_naming_the_bad_value(filters, changes, fragment):
    with pytest.raises(AnsibleFilterError) as exc:
        filters["cluster_model"](dict(MODEL, **changes))
    assert "invalid slime_cluster" in str(exc.value)
    assert fragment in str(exc.value)


INTENT = {"nodeport": {"port": 30017}, "srun_port_range": "60001-60100"}
DISCOVERED = {"controller": {"host": "slurm-controller.slurm", "aliases": ["slurm-controller-0"], "address": "10.244.1.5"},
              "nodeport": {"address": "192.168.10.2", "port": 30017, "service": "slurm-controller"},
              "slurm_version": "26.05"}


def test_cluster_model_completes_the_intent_with_what_was_discovered(filters):
    out = filters["cluster_model"](INTENT, DISCOVERED)
    assert out["conf_server"] == "192.168.10.2:30017"
    assert out["controller"]["host"] == "slurm-controller.slurm"
    assert filters["cluster_model"](out) == out
    assert filters["cluster_errors"](INTENT, DISCOVERED) == []
    assert len(filters["cluster_errors"](INTENT)) == 4


def test_cluster_intent(filters):
    assert filters["cluster_intent_errors"](INTENT) == []
    assert filters["cluster_intent"](INTENT)["srun_port_range"]["conf"] == "60001-60100"
    with pytest.raises(AnsibleFilterError, match="nodeport.port=80 is outside"):
        filters["cluster_intent"](dict(INTENT, nodeport={"port": 80}))


def test_cluster_errors(filters):
    assert filters["cluster_errors"](MODEL) == []
    errors = filters["cluster_errors"](dict(MODEL, network_mode="mesh"))
    assert len(errors) == 1 and "network_mode='mesh'" in errors[0]


def test_slurm_node_input_errors_are_every_problem_of_a_host_at_once(filters):
    key = base64.b64encode(b"k" * 32).decode()
    inputs = {"host": "bm-1", "cluster": MODEL, "before_discovery": False, "slurm_key_b64": key, "slurm_key_src": "",
              "features": ["baremetal"], "worker": {}, "renamed": ["features", "preflight_timeout"]}
    assert filters["slurm_node_input_errors"](inputs) == []
    errors = filters["slurm_node_input_errors"](dict(
        inputs, cluster=dict(MODEL, network_mode="mesh"), slurm_key_b64="c2hvcnQ=", features=["gpu,big"],
        worker={"version": "26.05", "uid": "slurm"}, renamed=["package_version", "firewall_rules_file"]))
    assert [error.split(":")[0].split("=")[0] for error in errors] == [
        "network_mode", "slurm_node_slurm_key_b64", "bm-1", "bm-1", "bm-1", "bm-1", "bm-1"]
    assert errors[2].startswith("bm-1: slurm_node_features: 'gpu,big' is not a valid Slurm feature name")
    assert errors[-2:] == [
        "bm-1: slurm_node_firewall_rules_file was replaced by slime_cluster.worker.rules_file (or slurm_node_worker for one host)",
        "bm-1: slurm_node_package_version was replaced by slime_cluster.worker.package_version (or slurm_node_worker for one host)"]
    assert key not in str(errors) and "c2hvcnQ=" not in str(errors)


def test_slurm_node_input_errors_before_the_cluster_is_read(filters):
    """Before cluster_facts.yml (a Kubernetes API in the inventory): the intent alone; slurm.key comes
    from the cluster unless given."""
    intent = {"name": "kube", "nodeport": {"port": 30017}, "srun_port_range": "60001-60100"}
    inputs = {"host": "bm-1", "cluster": intent, "before_discovery": True, "slurm_key_b64": "", "slurm_key_src": "",
              "features": [], "worker": {}, "renamed": []}
    assert filters["slurm_node_input_errors"](inputs) == []
    assert filters["slurm_node_input_errors"](dict(inputs, before_discovery=False))  # the controller is unknown, no key
    assert filters["slurm_node_input_errors"](dict(inputs, slurm_key_b64="c2hvcnQ=")) == [
        "slurm_node_slurm_key_b64: the key is 5 bytes; at least 32 are required"]


def test_slurm_compat_error(filters):
    assert filters["slurm_compat_error"]("slurm 26.05.5", "26.05") == ""
    assert filters["slurm_compat_error"]("25.05.3-1", "26.05") == ""
    assert filters["slurm_compat_error"]("24.11.6", "26.05") == ""  # three releases: inside the 24.11+ window
    assert "24.05.8" in filters["slurm_compat_error"]("24.05.8", "26.05")
    assert "newer than slurmctld" in filters["slurm_compat_error"]("26.11.0", "26.05")


@pytest.mark.parametrize("nodes, pty, expected", [(1, False, 4), (97, False, 8), (48, True, 5)])
def test_srun_ports_needed(filters, nodes, pty, expected):
    assert filters["srun_ports_needed"](nodes, pty) == expected


def test_slurmd_conf(filters):
    assert filters["slurmd_conf"](["baremetal", "gpu"], {"Weight": 10}) == "Feature=baremetal,gpu Weight=10"
    assert filters["slurmd_conf"]([]) == ""


def test_key_error_is_empty_for_a_good_key(filters):
    assert filters["key_error"](base64.b64encode(b"\x00\x01" * 32).decode()) == ""
    assert filters["key_error"](base64.b64encode(b"k" * 32).decode() + "\n") == ""


@pytest.mark.parametrize(
    "value, message",
    [
        ("", "the key is empty"),
        ("not base64!", "the key is not valid base64"),
        (base64.b64encode(b"short-secret").decode(), "the key is 12 bytes; at least 32 are required"),
    ],
)
def test_key_error_explains_without_the_key(filters, value, message):
    error = filters["key_error"](value)
    assert error == message
    if value:
        assert value not in error


def test_apt_policy_version(filters):
    policy = "slurmd:\n  Installed: (none)\n  Candidate: 26.05.5-1\n  Version table:\n"
    assert filters["apt_policy_version"](policy) == "26.05.5-1"
    assert filters["apt_policy_version"](policy, "26.05.4-1") == "26.05.4-1"
    assert filters["apt_policy_version"]("") == ""


def test_scontrol_nodes_and_slurm_node_available(filters, fixture_text):
    nodes = filters["scontrol_nodes"](fixture_text("scontrol_show_node_26.05.txt"))
    assert filters["slurm_node_available"](nodes["bm-1"]["State"]) is True
    assert filters["slurm_node_available"](nodes["bm-2"]["State"]) is False
    assert filters["slurm_node_available"]("") is False  # register.yml's default('')


def test_pod_host_addresses(filters, fixture_text):
    # the lab's NodeSet pods (tests/unit/fixtures/k8s/capture.sh): Slurm nodes slinky-0 and slinky-1
    pods = json.loads(fixture_text(os.path.join("k8s", "slurm_worker_pods.json")))["worker_pods"]
    host_ips = dict((pod["metadata"]["name"], pod["status"]["hostIP"]) for pod in pods)
    assert filters["pod_host_addresses"](pods) == {"slinky-0": host_ips["slurm-worker-slinky-0"],
                                                   "slinky-1": host_ips["slurm-worker-slinky-1"]}
    assert filters["pod_host_addresses"]([]) == {}


def test_scontrol_host(filters):
    assert filters["scontrol_host"](["bm-1", "bm-2", "bm-3"], ["bm-1"]) == "bm-2"
    assert filters["scontrol_host"](["bm-1", "bm-2"]) == "bm-1"
    assert filters["scontrol_host"](["bm-1"], ["bm-1"]) == ""
