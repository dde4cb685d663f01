# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The read modules' action plugins (plugin_utils/kube_read_action.py): where the read runs in the controller's
process and where the module runs, argument checks as the module's, and the result."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import sys

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task
from ansible.template import Templar

from ansible_collections.slime.hybrid.plugins.action import slinky_info, slinky_state
from ansible_collections.slime.hybrid.plugins.module_utils import kube_read


class Shell(object):
    tmpdir = "/tmp/made-already"  # ActionBase.run() makes none then


class Connection(object):
    has_native_async = False

    def __init__(self, transport):
        self.transport = transport
        self._shell = Shell()


def action(plugin=slinky_info, args=None, transport="local", become=False, task_vars=None, **task_fields):
    task = Task.load(dict({"action": "slime.hybrid.slinky_info", "args": args or {}}, **task_fields))
    context = PlayContext()
    context.become = become
    loader = DataLoader()
    # The task's templar holds the task's variables (TaskExecutor makes it so).
    return plugin.ActionModule(task, Connection(transport), context, loader, Templar(loader, variables=task_vars or HERE), None)


HERE = {"ansible_python_interpreter": sys.executable}


@pytest.fixture
def module_runs(monkeypatch):
    runs = []

    def execute_module(self, module_name=None, task_vars=None, wrap_async=False, **kwargs):
        runs.append(module_name)
        return {"changed": False, "ran": "module"}

    monkeypatch.setattr(slinky_info.ActionModule, "_execute_module", execute_module)
    monkeypatch.setattr(slinky_info.ActionModule, "_remove_tmp_path", lambda self, path: runs.append("removed " + path))
    return runs


@pytest.fixture
def reads(monkeypatch):
    made = []

    def read(reader, params, module=None):
        made.append((reader, params))
        return {"cluster": {"slurm_version": "26.05"}, "token": params.get("api_key")}, ["a warning"]

    monkeypatch.setattr(kube_read, "read", read)
    return made


def test_the_read_runs_here_with_this_interpreter_on_the_local_connection(reads, module_runs):
    result = action(args={"namespace": "hpc"}).run(task_vars=dict(HERE))
    assert module_runs == [] and len(reads) == 1
    reader, params = reads[0]
    assert reader is slinky_info.ActionModule.READER
    # validated as the module validates: defaults filled, kubernetes.core's options beside the module's own
    assert params["namespace"] == "hpc" and params["port"] == 6817 and "kubeconfig" in params
    assert result["cluster"] == {"slurm_version": "26.05"} and result["changed"] is False
    assert result["warnings"] == ["a warning"] and "failed" not in result


@pytest.mark.parametrize("case", [
    {"transport": "ssh"},
    {"become": True},
    {"delegate_to": "api-host"},
    {"environment": {"K8S_AUTH_CONTEXT": "other"}},
    {"async": 30, "poll": 5},
    {"vars": {"ansible_python_interpreter": "/usr/bin/python3"}},  # another interpreter, other libraries
    {"vars": {}},  # to be discovered on the host
])
def test_the_module_runs_everywhere_else(reads, module_runs, case):
    vars_ = case.pop("vars", HERE)
    transport = case.pop("transport", "local")
    become = case.pop("become", False)
    result = action(transport=transport, become=become, task_vars=vars_, **case).run(task_vars=dict(vars_))
    assert reads == [] and result["ran"] == "module"
    # as ansible-core's action for a module: the temporary directory removed, unless the module runs on in the background
    assert module_runs == ["slime.hybrid.slinky_info"] + ([] if case.get("async") else ["removed /tmp/made-already"])


def test_the_interpreter_is_templated(reads, module_runs):
    task_vars = {"ansible_python_interpreter": "{{ ansible_playbook_python }}", "ansible_playbook_python": sys.executable}
    action(task_vars=task_vars).run(task_vars=task_vars)
    assert len(reads) == 1 and module_runs == []


def test_bad_arguments_fail_as_the_module_would(reads, module_runs):
    result = action(args={"namespace": "hpc", "nonsense": 1}).run(task_vars=dict(HERE))
    assert result["failed"] is True and reads == []
    assert result["msg"].startswith("Unsupported parameters for (slime.hybrid.slinky_info) module: nonsense. Supported parameters")
    # the first problem, as AnsibleModule says it
    result = action(args={"port": "a port", "nonsense": 1}).run(task_vars=dict(HERE))
    assert result["failed"] is True and result["msg"].startswith("argument 'port' is of type <class 'str'>")


def test_a_failed_read_fails_the_task_with_its_message(monkeypatch):
    def read(reader, params, module=None):
        raise kube_read.ReadError("slinky_info: no running and ready controller pod (pods found: none)")

    monkeypatch.setattr(kube_read, "read", read)
    result = action().run(task_vars=dict(HERE))
    assert result["failed"] is True and result["msg"] == "slinky_info: no running and ready controller pod (pods found: none)"


def test_values_of_no_log_options_never_reach_the_result(reads):
    result = action(args={"api_key": "s3cr3t-token"}).run(task_vars=dict(HERE))
    assert "s3cr3t-token" not in repr(result) and result["token"] == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"


def test_slinky_state_takes_its_own_options(reads, module_runs):
    result = action(slinky_state, args={"releases": [{"name": "slurm", "namespace": "slurm", "chart_ref": "x"}],
                                        "facts": {"include_key": True}}).run(task_vars=dict(HERE))
    reader, params = reads[0]
    assert reader is slinky_state.ActionModule.READER and "failed" not in result
    assert params["releases"] == [{"name": "slurm", "namespace": "slurm", "chart_ref": "x", "chart_version": None}]
    assert params["facts"]["key_secret"] == "slurm-auth-slurm" and params["operator_namespace"] == "slinky"
