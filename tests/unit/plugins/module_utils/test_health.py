# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The workers' health check (module_utils/health.py): the model's section, slurm.conf, the program
and its settings on bare metal (SSH path and cloud-init alike) and in NodeSet pods. Against real
Slurm, on pods and bare metal: molecule kube, verify_health.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import subprocess

import pytest
import yaml

from ansible_collections.slime.hybrid.plugins.module_utils import cloud_init, cluster_model, health, node_state, slinky, worker, worker_drift

MODEL = {
    "name": "lab",
    "slurm_version": "26.05",
    "controller": {"host": "slurm-controller-0", "address": "10.244.0.5"},
    "nodeport": {"address": "10.127.0.30", "port": 30017},
    "srun_port_range": "60001-60100",
}
NODE = {"name": "bm-1", "features": ["baremetal"], "conf_extra": {}}


def model(**section):
    return cluster_model.normalize(dict(MODEL, health=section) if section else MODEL)


def test_checks_are_on_by_default_and_a_model_is_its_own_input():
    m = model()
    assert m["health"] == dict(health.DEFAULTS, node_state=["ANY"])
    assert health.of(m) is m["health"]
    off = model(enabled=False)
    assert health.of(off) is None
    assert cluster_model.normalize(off) == off and cluster_model.normalize(m) == m


def test_every_error_at_once_names_the_value_and_what_is_allowed():
    errors = cluster_model.validate(dict(MODEL, health={
        "interval": 60, "node_state": ["ANY", "START_ONLY", "BUSY"], "paths": ["tmp", "/a b"],
        "min_free_mb": -1, "enabled": "yes", "timeout": 5}))
    assert errors == [
        "health.timeout is not a setting; allowed: enabled, interval, min_free_inodes, min_free_mb, node_state, paths",
        "health.enabled='yes' must be true or false",
        "health.interval=60 must be above 60, Slurm 26.05's HealthCheckTimeout, or 0 (slurmctld wants the timeout below "
        "the interval; the collection leaves HealthCheckTimeout at its default, as slurmd before 26.05 refuses a "
        "slurm.conf that sets it)",
        "health.node_state: BUSY is not a HealthCheckNodeState; allowed: ALLOC, ANY, CYCLE, IDLE, MIXED, NONDRAINED_IDLE, "
        "REBOOT_ONLY, START_ONLY",
        "health.node_state: START_ONLY stands alone (Slurm ignores the rest)",
        "health.paths=['tmp', '/a b'] must be a list of absolute directory paths without blanks or quotes",
        "health.min_free_mb=-1 must be a whole number of at least 0",
    ]
    assert cluster_model.validate(dict(MODEL, health="on")) == [
        "health='on' must be a mapping of enabled, interval, min_free_inodes, min_free_mb, node_state, paths "
        "(see docs/howto-health.md)"]
    assert cluster_model.validate(dict(MODEL, health={"interval": 0})) == [
        "health.interval=0 runs the check only with node_state START_ONLY or REBOOT_ONLY"]
    assert cluster_model.validate(dict(MODEL, health={"interval": 0, "node_state": "start_only"})) == []


def test_slurm_conf_names_the_program_for_every_node():
    m = model(interval=61, node_state=["idle", "cycle"])
    assert health.slurm_conf(m["health"]) == {"HealthCheckProgram": "/opt/slime-hybrid/health/check",
                                              "HealthCheckInterval": 61, "HealthCheckNodeState": "IDLE,CYCLE"}
    values = slinky.chart_values(m, {"slinky": {"slurmd": {"volumeMounts": [{"name": "home", "mountPath": "/home"}]},
                                                "podSpec": {"volumes": [{"name": "home", "emptyDir": {}}]}}})
    assert dict(values["controller"]["extraConfMap"], SrunPortRange=None) == dict(health.slurm_conf(m["health"]), SrunPortRange=None)
    # the site's own volumes stay, the program's are added
    nodeset = values["nodesets"]["slinky"]
    assert nodeset["slurmd"]["volumeMounts"] == [{"name": "home", "mountPath": "/home"}, health.pod_mount()]
    assert nodeset["podSpec"]["volumes"] == [{"name": "home", "emptyDir": {}}, health.pod_volume()]
    (config_map,) = [o for o in values["extraObjects"] if o["kind"] == "ConfigMap"]
    assert config_map["data"] == {"check": health.SCRIPT, "check.conf": health.settings_file(m["health"])}
    assert "SLIME_HEALTH_DEVICES=''" in config_map["data"]["check.conf"]


def test_checks_off_leave_slurm_conf_and_pods_alone():
    values = slinky.chart_values(model(enabled=False), {"slinky": {}})
    assert values["controller"]["extraConfMap"] == {"SrunPortRange": "60001-60100"}
    assert "volumes" not in values["nodesets"]["slinky"]["podSpec"]
    assert [o["kind"] for o in values["extraObjects"]] == ["ServiceAccount"] * 4


def test_the_program_is_shell_that_parses_and_sets_its_own_path():
    assert health.SCRIPT.startswith("#!/bin/sh\n")
    for shell in ("sh", "bash"):
        subprocess.run([shell, "-n"], input=health.SCRIPT.encode(), check=True)
    # slurmd runs it with SLURMD_NODENAME alone in its environment (slurmd.c run_script_health_check)
    assert "\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nexport PATH\n" in health.SCRIPT
    assert 'settings="${0%/*}/check.conf"' in health.SCRIPT


def test_without_a_controller_the_program_fails_and_says_so(tmp_path):
    """Run for real with a PATH that has no scontrol: the controller check fails first, nothing else runs."""
    program = tmp_path / "check"
    program.write_text(health.SCRIPT)
    program.chmod(0o755)
    (tmp_path / "check.conf").write_text(health.settings_file(model()["health"]))
    run = subprocess.run(["sh", "-c", 'PATH=/nonexistent; exec "$0"', str(program)], env={"SLURMD_NODENAME": "bm-9"},
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1
    assert run.stderr.startswith("slime-health: bm-9: the controller does not answer: ")


def test_bare_metal_gets_the_same_files_over_ssh_and_cloud_init():
    m = model(min_free_mb=2048)
    gpu_model = cluster_model.normalize(dict(MODEL, health={"min_free_mb": 2048},
                                             gpus={"nodes": [{"names": ["bm-1"], "type": "a100", "files": "/dev/nvidia[0-1]"}]}))
    plan = worker.plan(gpu_model, NODE)
    assert plan["health"]["reason_prefix"] == "slime-health:"
    program, settings = plan["health"]["files"]
    assert program == {"path": health.PROGRAM, "mode": "0755", "content": health.SCRIPT}
    assert settings["path"] == health.SETTINGS_FILE and settings["mode"] == "0644"
    assert "SLIME_HEALTH_DEVICES='/dev/nvidia0 /dev/nvidia1'\n" in settings["content"]
    assert "SLIME_HEALTH_MIN_FREE_MB=2048\n" in settings["content"]
    assert health.DIRECTORY in plan["directories"]
    data = cloud_init.cloud_config(plan, "a2V5")
    written = dict((entry["path"], entry) for entry in data["write_files"])
    for part in plan["health"]["files"]:
        assert written[part["path"]] == {"path": part["path"], "permissions": part["mode"], "content": part["content"]}
    assert health.DIRECTORY in data["bootcmd"][2]
    # a node without GPUs checks none
    assert "SLIME_HEALTH_DEVICES=''" in worker.plan(m, NODE)["health"]["files"][1]["content"]


def test_checks_off_install_nothing_and_the_ssh_path_removes_what_was_there():
    plan = worker.plan(model(enabled=False), NODE)
    assert plan["health"] == {"directory": health.DIRECTORY, "reason_prefix": "slime-health:", "files": []}
    assert health.DIRECTORY not in plan["directories"]
    paths = [entry["path"] for entry in cloud_init.cloud_config(plan, "a2V5")["write_files"]]
    assert not [path for path in paths if path.startswith(health.DIRECTORY)]
    assert health.PROGRAM in worker_drift.observe_targets(plan, "bm-1")["files"]


def _record(state, reason=""):
    out = {"NodeName": "bm-1", "State": state, "AvailableFeatures": "baremetal", "ActiveFeatures": "baremetal"}
    if reason:
        out["Reason"] = reason
    return out


@pytest.mark.parametrize("record, drifts", [
    (_record("IDLE+DYNAMIC_NORM"), False),
    (_record("IDLE+DRAIN+DYNAMIC_NORM", "slime-health: /tmp has 16 MiB free (at least 1024 wanted) [root@2026-11-27T11:20:00]"), False),
    (_record("IDLE+DRAIN+DYNAMIC_NORM", "disk swap, ticket 42 [root@2026-11-27T11:20:00]"), True),
    (_record("DOWN*+DRAIN+DYNAMIC_NORM", "slime-health: /tmp is not a directory [root@2026-11-27T11:20:00]"), True),
])
def test_a_node_drained_by_its_health_check_is_registered_not_drifted(record, drifts):
    """The role reports a node its own health check drained; it neither converges it nor waits for it."""
    assert bool(worker_drift._node_drift("bm-1", ["baremetal"], record)) is drifts
    assert health.drained_by_check(record) is (record.get("Reason", "").startswith("slime-health:") and "DRAIN" in record["State"])
    waiting = node_state.unavailable({"bm-1": record}, ["bm-1"], drain_reason_ok=health.REASON_PREFIX)
    assert bool(waiting) is drifts
    if waiting and "Reason" in record:
        assert waiting["bm-1"] == "State=%s Reason=%s" % (record["State"], record["Reason"])


def test_the_config_map_is_yaml_the_chart_passes_on():
    text = yaml.safe_dump(health.config_map(model()["health"]))
    assert yaml.safe_load(text)["data"]["check"] == health.SCRIPT
    assert "{{" not in health.SCRIPT  # the chart renders extraObjects through tpl


def test_site_values_that_set_the_health_check_are_refused():
    site = {"controller": {"extraConfMap": {"HealthCheckProgram": "/usr/sbin/nhc", "HealthCheckInterval": 300}}}
    assert slinky.model_values_errors(model(), site) == [
        "slinky_slurm_values.controller.extraConfMap.%s is set and slime_cluster.health is on: the collection writes %s "
        "from slime_cluster.health; set it there, or health.enabled: false to run a program of your own" % (key, key)
        for key in ("HealthCheckInterval", "HealthCheckProgram")]
    assert slinky.model_values_errors(model(enabled=False), site) == []


def test_a_health_drain_counts_for_its_own_node_only():
    nodes = {"bm-1": _record("IDLE+DRAIN+DYNAMIC_NORM", "slime-health: /tmp is not a directory [root@2026-11-27T11:20:00]"),
             "bm-2": _record("IDLE+DRAIN+DYNAMIC_NORM", "disk swap [root@2026-11-27T11:20:00]")}
    assert sorted(node_state.unavailable(nodes, ["bm-1", "bm-2"], drain_reason_ok=health.REASON_PREFIX)) == ["bm-2"]
