# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One read of the Kubernetes API for the collection's read-only modules (slinky_info, slinky_state): their
options beside kubernetes.core's connection options, the client, and find() over kubernetes.core's K8sService.

The same code serves the module, run on the cluster's API host, and the module's action plugin
(plugins/plugin_utils/kube_read_action.py), which runs it in the controller's own process when the module would
run there anyway: a read then builds no module payload and starts no interpreter. kubernetes.core is imported
only when a read is made, so the filters that import the collection's module_utils on the controller never load
the Kubernetes client."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC


class ReadError(Exception):
    """A read that failed: the message the module fails with (kind: the kind that was being read, if any)."""

    def __init__(self, msg, kind=None):
        super(ReadError, self).__init__(msg)
        self.kind = kind


def argument_spec(options):
    """A read module's argument spec: kubernetes.core's connection options (the action group's module_defaults set
    them once per play) and the module's own options."""
    spec = copy.deepcopy(AUTH_ARG_SPEC)
    spec.update(copy.deepcopy(options))
    return spec


class _Options(object):
    """What kubernetes.core's K8sService asks of a module outside of changes: its params and check mode."""

    check_mode = True

    def __init__(self, params):
        self.params = params


def read(reader, params, module=None):
    """reader(params, find, client) -> (result, warnings), over a client made from params (or the module's, whose
    failures to find a dependency it reports itself). find(kind, api_version, **options) returns the objects found
    (kubernetes.core's K8sService.find). Raises ReadError."""
    # Imported here: the Kubernetes client is a large import that only a read needs.
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService

    try:
        client = get_api_client(module) if module is not None else get_api_client(**params)
        service = K8sService(client, module if module is not None else _Options(params))
    except CoreException as exc:
        raise ReadError("%s" % exc)

    def find(kind, api_version, **options):
        try:
            return service.find(kind, api_version, **options)["resources"]
        except CoreException as exc:
            raise ReadError("%s" % exc, kind=kind)

    return reader(params, find, client)


def run_module(options, reader):
    """A read module's main(): its argument spec, the read (as read() above, with the module's client), its
    warnings, and the result or the read's failure."""
    from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule

    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argument_spec(options), supports_check_mode=True)
    try:
        result, warnings = read(reader, module.params, module)
    except ReadError as exc:
        module.fail_json(msg="%s" % exc)
    for warning in warnings:
        module.warn(warning)
    module.exit_json(changed=False, **result)
