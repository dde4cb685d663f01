# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kube_read: a read module's argument spec, and read() over kubernetes.core's client and K8sService (replaced
here by recording doubles of the two calls it makes; the real ones run in the kube tier)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s import client as k8s_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s import service as k8s_service
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException

from ansible_collections.slime.hybrid.plugins.module_utils import kube_read, slinky, slinky_state


def test_argument_spec_is_the_connection_options_and_the_modules_own():
    spec = kube_read.argument_spec(slinky.INFO_OPTIONS)
    assert set(spec) == set(AUTH_ARG_SPEC) | set(slinky.INFO_OPTIONS)
    assert spec["namespace"] == {"type": "str", "default": "slurm"}
    spec["namespace"]["default"] = "changed"
    assert slinky.INFO_OPTIONS["namespace"]["default"] == "slurm"  # a copy: the module's options stay as they are
    assert set(kube_read.argument_spec(slinky_state.OPTIONS)) == set(AUTH_ARG_SPEC) | set(slinky_state.OPTIONS)


class Service(object):
    def __init__(self, client, module, objects, fail_on=None):
        self.client, self.module, self.objects, self.fail_on = client, module, objects, fail_on
        self.calls = []

    def find(self, kind, api_version, **options):
        self.calls.append((kind, api_version, options))
        if kind == self.fail_on:
            raise CoreException("Forbidden: nodes is forbidden")
        return {"resources": self.objects.get(kind, []), "api_found": True}


@pytest.fixture
def api(monkeypatch):
    made = {}

    def get_api_client(module=None, **kwargs):
        made["client"] = {"module": module, "kwargs": kwargs}
        return "client"

    def service(client, module):
        made["service"] = Service(client, module, made.get("objects", {}), made.get("fail_on"))
        return made["service"]

    monkeypatch.setattr(k8s_client, "get_api_client", get_api_client)
    monkeypatch.setattr(k8s_service, "K8sService", service)
    return made


def test_read_without_a_module_makes_the_client_from_the_params(api):
    api["objects"] = {"Pod": [{"metadata": {"name": "p"}}]}
    params = {"kubeconfig": "/k", "context": None, "namespace": "slurm"}

    def reader(given, find, client):
        return {"pods": find("Pod", "v1", namespace=given["namespace"]), "client": client}, ["a warning"]

    result, warnings = kube_read.read(reader, params)
    assert result == {"pods": [{"metadata": {"name": "p"}}], "client": "client"}
    assert warnings == ["a warning"]
    assert api["client"] == {"module": None, "kwargs": params}
    # K8sService asks its module for params and check mode only; a read gives it both.
    assert api["service"].module.params is params and api["service"].module.check_mode is True
    assert api["service"].calls == [("Pod", "v1", {"namespace": "slurm"})]


def test_read_with_a_module_uses_its_client(api):
    module = object()
    kube_read.read(lambda params, find, client: ({}, []), {}, module)
    assert api["client"] == {"module": module, "kwargs": {}}
    assert api["service"].module is module


def test_a_failed_request_is_a_read_error_naming_its_kind(api):
    api["fail_on"] = "Node"

    def reader(params, find, client):
        find("Pod", "v1")
        find("Node", "v1")

    with pytest.raises(kube_read.ReadError) as exc:
        kube_read.read(reader, {})
    assert str(exc.value) == "Forbidden: nodes is forbidden"
    assert exc.value.kind == "Node"


def test_slinky_info_explains_the_nodes_it_could_not_list(api, fixture_text):
    captured = json.loads(fixture_text(os.path.join("k8s", "slinky_objects.json")))
    api["objects"] = {"Pod": captured["controller_pods"], "Service": captured["services"]}
    api["fail_on"] = "Node"
    params = dict((name, option.get("default")) for name, option in slinky.INFO_OPTIONS.items())
    params["pod_routes"] = True
    with pytest.raises(kube_read.ReadError) as exc:
        kube_read.read(slinky.info, params)
    assert str(exc.value) == ("slinky_info: reading the Nodes for pod_routes (needs list on nodes at cluster scope, "
                              "a ClusterRole): Forbidden: nodes is forbidden")


def test_slinky_info_without_a_controller_says_so(api):
    params = dict((name, option.get("default")) for name, option in slinky.INFO_OPTIONS.items())
    with pytest.raises(kube_read.ReadError) as exc:
        kube_read.read(slinky.info, params)
    assert str(exc.value).startswith("slinky_info: ")
