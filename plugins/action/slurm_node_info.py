# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Module slurm_node_info, with the host's plan computed here, on the controller.

Given O(cluster) and O(node) instead of O(plan), the plugin computes the plan as filter worker_plan does
(module_utils/worker.py), hands it to the module that reads the host, returns it with the model, and fails the task
with what stops role slurm_node there (worker.read_problems): the role's plan, read and check in one task per host
instead of three, and the plan never templated into the module's arguments. Given O(plan), the module runs as
ansible-core's own action runs one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model, worker

MODULE = "slime.hybrid.slurm_node_info"
# The options the plugin takes itself (documented with the module's).
OPTIONS = {
    "cluster": {"type": "dict"},
    "node": {"type": "dict"},
    "preflight_timeout": {"type": "float", "default": 5.0},
}


class ActionModule(ActionBase):
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        args = dict(self._task.args)
        own = dict((name, args.pop(name)) for name in list(args) if name in OPTIONS)
        checked = ArgumentSpecValidator(OPTIONS).validate(own)
        if checked.error_messages:
            result.update(failed=True, msg=checked.errors.msg)
            return result
        own = checked.validated_parameters
        model = None
        if own["cluster"] is not None:
            if own["node"] is None or "plan" in args:
                result.update(failed=True, msg="cluster needs node, and excludes plan")
                return result
            try:
                model = cluster_model.normalize(own["cluster"])
            except cluster_model.ModelError as exc:
                result.update(failed=True, msg="invalid slime_cluster: %s" % exc)
                return result
            try:
                plan = worker.plan(model, own["node"])
            except ValueError as exc:
                result.update(failed=True, msg="worker_plan: %s" % exc)
                return result
            args.update(plan=plan, name=own["node"]["name"])
            args.setdefault("features", plan["features"])
            if model["network_mode"] != "routed":
                args["conf_server"] = {"host": model["conf_server_address"], "port": model["conf_server_port"],
                                       "timeout": own["preflight_timeout"]}
        read = self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars)
        self._remove_tmp_path(self._connection._shell.tmpdir)
        result = merge_hash(result, read)
        if model is None or read.get("failed"):
            return result
        result.update(plan=args["plan"], model=model)
        problems = worker.read_problems(model, read, own["preflight_timeout"])
        if problems:
            result.update(failed=True, msg="slurm_node: %s: %s" % (task_vars.get("inventory_hostname"), "; ".join(problems)))
        else:
            result["msg"] = worker.read_summary(args["name"], read)
        return result
