# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor, chart_values, slinky_input_errors and dns_label_errors filters (plugins/filter/), each on a realistic input."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest
from ansible.errors import AnsibleFilterError


FILTERS = ["doctor_checks", "doctor_findings", "doctor_report", "doctor_srun_results", "chart_values", "slinky_input_errors", "dns_label_errors"]

MODEL = {
    "controller": {"host": "slurm-controller", "address": "10.126.0.11"},
    "nodeport": {"address": "10.127.0.50", "port": 30017},
    "srun_port_range": "60001-60100",
    "slurm_version": "26.05",
    "pod_routes": [{"cidr": "10.126.0.0/24", "via": "10.127.0.50"}],
}

SRUN_PORTS = list(range(60001, 60101))


@pytest.fixture
def nodes(filters, fixture_text):
    return filters["scontrol_nodes"](fixture_text("scontrol_show_node_26.05.txt"))


@pytest.mark.parametrize("name", FILTERS)
def test_filter_is_registered_and_callable(filters, name):
    assert callable(filters[name])


def test_doctor_checks_normalizes_the_raw_model(filters, nodes):
    checks = filters["doctor_checks"](MODEL, nodes, "bm-3")
    assert [(check["host"], check["port"]) for check in checks] == [
        ("10.127.0.50", 30017), ("slurm-controller", 6817),
        ("10.127.0.61", 6818), ("10.127.0.62", 6818), ("10.126.0.21", 6818),
    ]
    # The model's pod_routes are the pod CIDRs that explain pod-1's NodeAddr.
    assert "playbooks/fix_nodeaddr.yml" in checks[4]["hint"]
    assert "OUTPUT DNAT" in checks[1]["hint"]


def test_doctor_checks_rejects_an_invalid_model(filters, nodes):
    with pytest.raises(AnsibleFilterError, match="invalid slime_cluster: .*nodeport.port=80"):
        filters["doctor_checks"](dict(MODEL, nodeport={"address": "10.127.0.50", "port": 80}), nodes, "bm-1")


def test_doctor_findings(filters, nodes):
    findings = filters["doctor_findings"](nodes)
    assert [finding["ok"] for finding in findings] == [True, False, True, True]
    assert "NodeAddr 10.127.0.62:6818" in findings[1]["hint"]
    assert "reason: Not responding [slurm@2026-11-22T00:10:00]" in findings[1]["hint"]


def test_doctor_srun_results(filters):
    rows = filters["doctor_srun_results"]([
        {"item": "pod-1", "rc": 0, "stdout": "", "stderr": ""},
        {"item": "bm-2", "rc": 1, "stderr": "srun: error: Unable to create step for job 42: Invalid node name specified"},
    ], "bm-1")
    assert [(row["observed"], row["ok"]) for row in rows] == [("completed", True), ("failed rc=1", False)]
    assert "(srun: error: Unable to create step for job 42: Invalid node name specified)" in rows[1]["hint"]


def test_doctor_report_returns_table_lines_and_broken_rows(filters, nodes):
    results = filters["doctor_findings"](nodes)
    report = filters["doctor_report"](results)
    assert sorted(report) == ["broken", "table"]
    assert isinstance(report["table"], list)
    assert report["table"][0].split() == ["PATH", "EXPECTED", "OBSERVED"]
    assert len(report["table"]) == 5
    assert [line.endswith("BROKEN") for line in report["table"]] == [False, False, True, False, False]
    assert report["broken"] == [results[1]]


def test_chart_values_nat_with_a_pod_and_a_host_network_nodeset(filters):
    nodesets = {"slinky": {"replicas": 2}, "gpu": {"host_network": True, "replicas": 1}}
    before = copy.deepcopy(nodesets)
    values = filters["chart_values"](MODEL, nodesets)
    assert nodesets == before
    controller = values["controller"]
    assert controller["extraConfMap"] == {"SrunPortRange": "60001-60100", "HealthCheckProgram": "/opt/slime-hybrid/health/check",
                                          "HealthCheckInterval": 300, "HealthCheckNodeState": "ANY"}
    assert controller["service"] == {"spec": {"type": "NodePort", "externalTrafficPolicy": "Local"},
                                     "port": 6817, "nodePort": 30017}
    assert [port["hostPort"] for port in controller["slurmctld"]["ports"]] == SRUN_PORTS
    assert "containers" not in controller["podSpec"]
    assert sorted(values["nodesets"]) == ["gpu", "slinky"]
    gpu = values["nodesets"]["gpu"]
    # on the host network: srun's range declared as ports (the scheduler keeps it off the controller's node)
    slurmd = gpu.pop("slurmd")
    assert [port["hostPort"] for port in slurmd["ports"]] == SRUN_PORTS
    # the health check program, from the chart's ConfigMap
    assert slurmd["volumeMounts"] == [{"name": "slime-health", "mountPath": "/opt/slime-hybrid/health", "readOnly": True}]
    assert gpu == {"replicas": 1, "enabled": True,
                   "podSpec": {"serviceAccountName": "slurm-worker", "hostNetwork": True, "dnsPolicy": "ClusterFirstWithHostNet",
                               "volumes": [{"name": "slime-health", "configMap": {"name": "slime-health", "defaultMode": 0o755}}]}}
    slinky = values["nodesets"]["slinky"]
    assert slinky["replicas"] == 2 and slinky["enabled"] is True
    assert [port["hostPort"] for port in slinky["slurmd"]["ports"]] == [6818] + SRUN_PORTS


def test_chart_values_service_accounts_and_loginsets(filters):
    routed = dict(MODEL, network_mode="routed", pod_routes=[{"cidr": "10.244.0.0/24", "via": "192.0.2.10"}])
    values = filters["chart_values"](routed, {}, {"login": {"replicas": 1}}, {"login": "site-login"})
    assert values["loginsets"] == {"login": {"replicas": 1, "enabled": True, "podSpec": {"serviceAccountName": "site-login"}}}
    assert [sa["metadata"]["name"] for sa in values["extraObjects"]] == ["slurm-controller", "site-login", "slurm-restapi", "slurm-worker",
                                                                         "slime-health"]


SLINKY_INPUTS = {"namespace": "slurm", "operator_namespace": "slinky", "cert_manager_namespace": "cert-manager", "nodesets": {},
                 "loginsets": {}, "service_accounts": {"controller": "c", "worker": "w", "restapi": "r", "login": "l"},
                 "slurm_values": {}, "openshift": "auto", "install_cert_manager": "auto", "nodeaddr_sync_interval": 5}


def test_slinky_input_errors_are_every_problem_at_once(filters):
    routed = dict(MODEL, network_mode="routed", pod_routes=[{"cidr": "10.244.0.0/24", "via": "192.0.2.10"}])
    assert filters["slinky_input_errors"](dict(SLINKY_INPUTS, cluster=routed, loginsets={"login": {}})) == []
    (error,) = filters["slinky_input_errors"](dict(SLINKY_INPUTS, cluster=MODEL, loginsets={"login": {}}))
    assert error.startswith("slinky_loginsets=login: srun or salloc in a login pod cannot reach bare-metal workers in network_mode nat")
    # the model's own errors do not hide the others: LoginSets need only the network mode
    errors = filters["slinky_input_errors"](dict(
        SLINKY_INPUTS, cluster=dict(MODEL, srun_port_range="6800-6900", nodeport={"port": 29999}), loginsets={"login": {}},
        namespace="Bad_Namespace", nodesets={"Slinky": {}}, service_accounts={"slurmd": "c"}, openshift="yes",
        install_cert_manager=None, nodeaddr_sync_interval=0, renamed=["openshift_service_accounts"]))
    assert [error.split(" ")[0].split("=")[0].rstrip(";:") for error in errors] == [
        "nodeport.port", "srun_port_range", "srun_port_range", "slinky_namespace", "slinky_nodesets['Slinky']",
        "slinky_service_accounts", "slinky_loginsets", "slinky_openshift", "slinky_install_cert_manager",
        "slinky_nodeaddr_sync_interval", "slinky_openshift_service_accounts"]
    # a network mode that is none: no LoginSet verdict on it, the mode's own error says why
    errors = filters["slinky_input_errors"](dict(SLINKY_INPUTS, cluster=dict(MODEL, network_mode="bgp"), loginsets={"login": {}}))
    assert errors == ["network_mode='bgp' is not supported; allowed: nat, routed, hostnetwork"]


def test_chart_values_rejects_an_invalid_model(filters):
    with pytest.raises(AnsibleFilterError, match="invalid slime_cluster: .*srun_port_range=6810-6817"):
        filters["chart_values"](dict(MODEL, srun_port_range="6810-6817"))


def test_dns_label_errors_dict_form(filters):
    errors = filters["dns_label_errors"]({"slurm_namespace": "Bad_NS", "slurm_operator_namespace": "slinky"})
    assert len(errors) == 1
    assert errors[0].startswith("slurm_namespace='Bad_NS' is not a valid Kubernetes name")
    assert "at most 63" in errors[0]
    assert filters["dns_label_errors"]({"slurm_namespace": "slurm"}) == []


def test_dns_label_errors_list_form_names_the_variable(filters):
    too_long = "a" * 64
    errors = filters["dns_label_errors"](["slurm", "Bad_NS", too_long, "gpu-", "a" * 63, "slinky-2"], "slurm_nodesets")
    assert errors == [
        "slurm_nodesets['Bad_NS']='Bad_NS' is not a valid Kubernetes name (lowercase letters, digits and '-', "
        "starting and ending with a letter or digit, at most 63)",
        "slurm_nodesets[%r]=%r is not a valid Kubernetes name (lowercase letters, digits and '-', "
        "starting and ending with a letter or digit, at most 63)" % (too_long, too_long),
        "slurm_nodesets['gpu-']='gpu-' is not a valid Kubernetes name (lowercase letters, digits and '-', "
        "starting and ending with a letter or digit, at most 63)",
    ]


@pytest.mark.parametrize("name", ["slurm", "s", "slurm-2", "0slurm", "a" * 63])
def test_dns_label_errors_accepts(filters, name):
    assert filters["dns_label_errors"]({"slurm_namespace": name}) == []


@pytest.mark.parametrize("name", ["Bad_NS", "a" * 64, "-slurm", "slurm.ns", "", None, 7])
def test_dns_label_errors_refuses(filters, name):
    (error,) = filters["dns_label_errors"]({"slurm_namespace": name})
    assert error.startswith("slurm_namespace=%r is not a valid Kubernetes name" % (name,))


def test_openshift_sccs_grant_the_collections_service_account_to_a_kind_the_site_left_out(filters):
    values = filters["chart_values"](MODEL, {"slinky": {}}, {}, {"worker": "hpc-worker"})
    objs = filters["openshift_sccs"](values, "slurm", "nat", {"worker": "hpc-worker"})
    subjects = dict((obj["metadata"]["name"], [subject["name"] for subject in obj["subjects"]])
                    for obj in objs if obj["kind"] == "RoleBinding")
    assert subjects == {"slinky-slurm-controller-scc": ["slurm-controller"], "slinky-slurm-worker-scc": ["hpc-worker"],
                        "slinky-slurm-restapi-scc": ["slurm-restapi"], "slinky-slurm-login-scc": ["slurm-login"]}
