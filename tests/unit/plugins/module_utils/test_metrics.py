# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Metrics (module_utils/metrics.py): the model's section, the slurmd it lets join (MetricsType), the node
exporter on bare metal (SSH path, cloud-init and drift alike), and the chart's values (rendered by the real
chart 1.2.1 with helm where it is here). Against a real Prometheus, slurmctld and node exporters: molecule
kube, verify_metrics.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import cloud_init, cluster_model, metrics, slinky, slurmd, worker, worker_drift

MODEL = {
    "name": "lab", "slurm_version": "26.05", "network_mode": "nat",
    "controller": {"host": "slurm-controller.slurm", "address": "10.244.0.10", "port": 6817},
    "nodeport": {"address": "192.0.2.10", "port": 30017},
    "slurmd_port": 6818, "srun_port_range": "60001-60100", "max_node_count": 64,
}
NODE = {"name": "bm-1", "features": ["baremetal"], "conf_extra": {}}


def model(section=None, **changes):
    return cluster_model.normalize(dict(MODEL, metrics=section, **changes) if section is not None else dict(MODEL, **changes))


def test_off_by_default_and_a_model_is_its_own_input():
    m = model()
    assert m["metrics"] == {"controller": False, "node_exporter": False} and m["slurmd_oldest"] is None
    on = model({"controller": True, "node_exporter": True})
    assert on["slurmd_oldest"] == metrics.OLDEST
    assert cluster_model.normalize(on) == on and cluster_model.normalize(m) == m


def test_every_error_at_once():
    with pytest.raises(cluster_model.ModelError) as error:
        model({"controller": "yes", "exporter": True})
    assert ("metrics.exporter is not a setting; allowed: controller, node_exporter; "
            "metrics.controller='yes' must be true or false") in str(error.value)
    with pytest.raises(cluster_model.ModelError) as error:
        model({"controller": True}, slurm_version="25.05")
    assert ("metrics.controller is on and slurmctld is 25.05: slurm.conf's MetricsType (slime_cluster.metrics.controller) "
            "is new in Slurm 25.11, which slurmctld 25.05 does not know") in str(error.value)


def test_with_slurmctlds_metrics_no_slurmd_older_than_25_11_joins():
    oldest = model({"controller": True})["slurmd_oldest"]
    assert slurmd.version_compat_error("24.11.7-1", "26.05") is None
    assert slurmd.version_compat_error("24.11.7-1", "26.05", oldest) == (
        "slurmd 24.11.7-1 is older than 25.11: slurm.conf's MetricsType (slime_cluster.metrics.controller) is new in "
        "Slurm 25.11 (slurmd would refuse the slurm.conf it fetches)")
    assert slurmd.version_compat_error("25.11.2-1", "26.05", oldest) is None
    # Slurm's own rules first
    assert slurmd.version_compat_error("26.11.0", "26.05", oldest).startswith("slurmd 26.11.0 is newer than slurmctld")
    assert worker.accepted_releases("26.05") == ["26.05", "25.11", "25.05", "24.11"]
    assert worker.accepted_releases("26.05", oldest) == ["26.05", "25.11"]
    plan = worker.plan(model({"controller": True}), NODE)
    assert plan["slurmd_oldest"] == oldest
    assert "(accepted: 26.05, 25.11)" in plan["slurmd_version_check"] and "25.05.*" not in plan["slurmd_install_check"]
    policy = "slurmd:\n  Installed: 24.11.7-1\n  Candidate: 25.05.5-1\n"
    assert slurmd.upgrade_plan(policy, "26.05", oldest=oldest)["error"].startswith("slurmd 25.05.5-1 is older than 25.11")
    assert slurmd.upgrade_plan(policy, "26.05")["error"] == ""


def test_the_node_exporter_over_ssh_and_cloud_init_alike_and_its_firewall_rule():
    m = model({"node_exporter": True})
    rule = {"name": "node-exporter", "ports": "9100", "comment": "slime.hybrid/in-node-exporter tcp:9100"}
    assert m["inbound"][-1] == rule
    plan = worker.plan(m, NODE)
    assert plan["node_exporter"] == {"package": "prometheus-node-exporter", "service": "prometheus-node-exporter", "port": 9100}
    assert ('-A SLIME-HYBRID-IN -p tcp -m tcp --dport 9100 -m conntrack --ctstate NEW -m comment --comment '
            '"slime.hybrid/in-node-exporter tcp:9100" -j SLIME-HYBRID-SRC') in plan["firewall"]["rules"]["content"].splitlines()
    runcmd = cloud_init.cloud_config(plan, "a2V5")["runcmd"]
    assert runcmd[-2:] == [worker.INSTALL_COMMAND["apt"] + ["prometheus-node-exporter"],
                           ["systemctl", "enable", "--now", "prometheus-node-exporter"]]
    assert "prometheus-node-exporter" in worker_drift.observe_targets(plan, "bm-1")["units"]
    off = worker.plan(model(), NODE)
    assert off["node_exporter"] is None and "9100" not in off["firewall"]["rules"]["content"]
    assert "prometheus-node-exporter" not in str(cloud_init.cloud_config(off, "a2V5")["runcmd"])
    with pytest.raises(ValueError) as error:
        worker.plan(m, dict(NODE, worker={"package_manager": "dnf"}))
    assert "no node exporter package for package_manager dnf (supported: apt)" in str(error.value)


def test_chart_values_and_what_the_real_chart_renders_of_them(slurm_chart):
    """The Controller resource the real chart renders carries metrics and the ServiceMonitor's endpoints, which the
    operator turns into MetricsType and (where the Prometheus Operator's API is served) a ServiceMonitor."""
    values = slinky.chart_values(model({"controller": True}), {"slinky": {}})
    assert values["controller"]["metrics"] == {"enabled": True, "serviceMonitor": {"enabled": True}}
    assert "metrics" not in slinky.chart_values(model(), {"slinky": {}})["controller"]
    spec = slurm_chart(values)[("Controller", "slurm")]["spec"]["metrics"]
    assert spec["enabled"] is True and spec["serviceMonitor"]["enabled"] is True
    assert [e["path"] for e in spec["serviceMonitor"]["endpoints"]] == list(metrics.ENDPOINTS[:4])
