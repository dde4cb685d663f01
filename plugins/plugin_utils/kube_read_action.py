# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin of a read-only Kubernetes module (slinky_info, slinky_state).

Such a module usually runs on the controller (the inventory's cluster API host is localhost, with the controller's
Python). There, a module run is mostly overhead: Ansible builds its payload (every module_utils file it imports,
kubernetes.core's among them, found and zipped: 0.1-0.3 s for slinky_state) and a new interpreter compiles them
again from that zip before the few API requests it makes. Where the module would run on this controller, with this
very interpreter, no `become`, `environment`, `async` or delegation, the plugin validates the task's arguments
against the module's own argument spec and makes the same read (module_utils/kube_read.py) in the worker process
instead. Everywhere else it runs the module.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os
import sys

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.parameters import remove_values
from ansible.module_utils.errors import UnsupportedError
from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

from ansible_collections.slime.hybrid.plugins.module_utils import kube_read


class KubeReadAction(ActionBase):
    """Subclasses name the module (MODULE), its own options (OPTIONS) and its read (READER, see kube_read.read)."""

    MODULE = None
    OPTIONS = None
    READER = None

    _supports_check_mode = True
    _supports_async = True

    def in_process(self, task_vars):
        """Whether the module would run here: the local connection with the interpreter running Ansible."""
        task = self._task
        if (self._connection.transport != "local" or task.delegate_to or task.async_val or self._play_context.become
                or any(task.environment or [])):
            return False
        interpreter = task_vars.get("ansible_python_interpreter")
        if not interpreter:
            return False
        interpreter = self._templar.template(interpreter)
        # Not resolved through links: a virtualenv's python links to the interpreter it was made from.
        if not isinstance(interpreter, str) or os.path.abspath(interpreter) != os.path.abspath(sys.executable):
            return False
        return importlib.util.find_spec("kubernetes") is not None

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(KubeReadAction, self).run(tmp, task_vars)
        if not self.in_process(task_vars):
            # As ansible-core's own action for a module (plugins/action/normal.py).
            wrap_async = self._task.async_val and not self._connection.has_native_async
            result = merge_hash(result, self._execute_module(module_name=self.MODULE, task_vars=task_vars,
                                                             wrap_async=wrap_async))
            if not wrap_async:
                self._remove_tmp_path(self._connection._shell.tmpdir)
            return result
        checked = ArgumentSpecValidator(kube_read.argument_spec(self.OPTIONS)).validate(self._task.args)
        if checked.error_messages:
            msg = checked.errors.msg
            if isinstance(checked.errors[0], UnsupportedError):
                msg = "Unsupported parameters for (%s) module: %s" % (self.MODULE, msg)
            result.update(failed=True, msg=msg)
            return result
        try:
            read, warnings = kube_read.read(self.READER, checked.validated_parameters)
        except kube_read.ReadError as exc:
            result.update(failed=True, msg="%s" % exc)
            return result
        result.update(remove_values(read, checked._no_log_values), changed=False)
        if warnings:
            result["warnings"] = warnings
        return result
