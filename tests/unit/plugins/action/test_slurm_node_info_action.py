# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""slurm_node_info's action plugin: the plan computed on the controller from the model and the node, handed to the
module, returned with the model; what stops role slurm_node refused with the host named; a plan given runs the module
as it is."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task
from ansible.template import Templar

from ansible_collections.slime.hybrid.plugins.action import slurm_node_info
from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model, worker

INTENT = {
    "name": "lab", "slurm_version": "26.05", "srun_port_range": "60001-60100",
    "controller": {"host": "slurm-controller.slurm", "aliases": ["slurm-controller-0"], "address": "10.126.0.11"},
    "nodeport": {"address": "10.127.0.50", "port": 30017},
}
NODE = {"name": "bm-1", "features": ["baremetal"], "conf_extra": {}, "worker": {}}
RECORD = {"State": "IDLE+DYNAMIC_NORM", "NodeAddr": "10.127.0.61", "AvailableFeatures": "baremetal", "Version": "26.05.5"}
TASK_VARS = {"inventory_hostname": "bm-1"}


class Shell(object):
    tmpdir = "/tmp/made-already"  # ActionBase.run() makes none then


class Connection(object):
    transport = "ssh"
    _shell = Shell()


def action(args):
    task = Task.load({"action": "slime.hybrid.slurm_node_info", "args": args})
    loader = DataLoader()
    return slurm_node_info.ActionModule(task, Connection(), PlayContext(), loader, Templar(loader), None)


class Runs(list):
    """The module's runs (their arguments); each returns answer."""

    def __init__(self):
        super(Runs, self).__init__()
        self.answer = {"changed": False, "drift": {}, "conflicts": [], "node": RECORD,
                       "conf_server": {"state": "open", "seconds": 0.01}}


@pytest.fixture
def module_runs(monkeypatch):
    runs = Runs()

    def execute_module(self, module_name=None, module_args=None, task_vars=None, **kwargs):
        assert module_name == "slime.hybrid.slurm_node_info"
        runs.append(module_args)
        return dict(runs.answer)

    monkeypatch.setattr(slurm_node_info.ActionModule, "_execute_module", execute_module)
    monkeypatch.setattr(slurm_node_info.ActionModule, "_remove_tmp_path", lambda self, path: None)
    return runs


def test_the_plan_is_computed_here_and_handed_to_the_module(module_runs):
    result = action({"cluster": INTENT, "node": NODE, "slurm_key_b64": "a2V5", "preflight_timeout": 2}).run(task_vars=TASK_VARS)
    model = cluster_model.normalize(INTENT)
    plan = worker.plan(model, NODE)
    assert len(module_runs) == 1
    args = module_runs[0]
    # the plan filter worker_plan would give, the node's name and features, the model's conf server
    assert args["plan"] == plan and args["name"] == "bm-1" and args["features"] == plan["features"]
    assert args["conf_server"] == {"host": "10.127.0.50", "port": 30017, "timeout": 2.0}
    assert not set(args) & {"cluster", "node", "preflight_timeout"}
    assert result["plan"] == plan and result["model"] == model and "failed" not in result
    assert result["msg"] == "bm-1: State=IDLE+DYNAMIC_NORM NodeAddr=10.127.0.61 Features=baremetal Version=26.05.5"


def test_what_differs_is_said(module_runs):
    module_runs.answer["drift"] = {"firewall": ["rule missing"], "service": ["inactive"]}
    result = action({"cluster": INTENT, "node": NODE, "slurm_key_b64": "a2V5"}).run(task_vars=TASK_VARS)
    assert result["msg"] == "bm-1: differs - firewall, service" and "failed" not in result


def test_a_conf_server_that_does_not_answer_and_a_conflict_refuse_the_host(module_runs):
    module_runs.answer.update(conflicts=["firewalld is active"], conf_server={"state": "timeout", "seconds": 5.0})
    result = action({"cluster": INTENT, "node": NODE, "slurm_key_b64": "a2V5"}).run(task_vars=TASK_VARS)
    assert result["failed"] is True
    assert result["msg"] == ("slurm_node: bm-1: firewalld is active; conf server 10.127.0.50:30017 (slime_cluster.nodeport)"
                             " is not reachable from this host within 5s (timeout)")


def test_routed_mode_waits_for_no_conf_server(module_runs):
    intent = dict(INTENT, network_mode="routed", pod_routes=[{"cidr": "10.244.1.0/24", "via": "10.127.0.21"}])
    del module_runs.answer["conf_server"]
    result = action({"cluster": intent, "node": NODE, "slurm_key_b64": "a2V5"}).run(task_vars=TASK_VARS)
    assert "conf_server" not in module_runs[0] and "failed" not in result


def test_a_plan_given_runs_the_module_as_it_is(module_runs):
    args = {"plan": {"features": ["x"]}, "name": "bm-1", "slurm_key_b64": "a2V5"}
    result = action(dict(args)).run(task_vars=TASK_VARS)
    assert module_runs[0] == args
    assert "plan" not in result and "msg" not in result and "failed" not in result


@pytest.mark.parametrize("args, message", [
    ({"cluster": INTENT}, "cluster needs node, and excludes plan"),
    ({"cluster": INTENT, "node": NODE, "plan": {}}, "cluster needs node, and excludes plan"),
    ({"cluster": dict(INTENT, network_mode="mesh"), "node": NODE}, "invalid slime_cluster: "),
    ({"cluster": INTENT, "node": {"name": "bm-1"}}, "worker_plan: node settings lack "),
    ({"cluster": INTENT, "node": NODE, "preflight_timeout": "soon"}, "preflight_timeout"),
])
def test_bad_options_fail_before_the_host_is_read(module_runs, args, message):
    result = action(dict(args, slurm_key_b64="a2V5")).run(task_vars=TASK_VARS)
    assert result["failed"] is True and message in result["msg"]
    assert len(module_runs) == 0


def test_a_failed_read_is_returned_as_it_is(module_runs):
    module_runs.answer.update(failed=True, msg="slurm_key_b64: not base64")
    result = action({"cluster": INTENT, "node": NODE, "slurm_key_b64": "a2V5"}).run(task_vars=TASK_VARS)
    assert result["failed"] is True and result["msg"] == "slurm_key_b64: not base64" and "plan" not in result
