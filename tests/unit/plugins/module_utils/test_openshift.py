# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OpenShift SCCs from the slurm chart's values (module_utils/openshift.py), held to the SCC schema of
openshift/api (the vendored CRD). The real SCC admission admits the pods under them in molecule
kube-openshift."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model, openshift, slinky
from ansible_collections.slime.hybrid.tests.unit.plugins.module_utils.test_accounting import DATABASE, MODEL

VENDOR = os.environ.get("SLIME_VENDOR_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * 5, "shared", "vendor")


def objects(mode="nat", accounting=None):
    routes = [{"cidr": "10.244.1.0/24", "via": "192.0.2.11"}] if mode == "routed" else None
    m = cluster_model.normalize(dict(MODEL, network_mode=mode, accounting=accounting, pod_routes=routes))
    values = slinky.chart_values(m, {"slinky": {}}, accounting_database=DATABASE)
    return openshift.scc_objects(values, "slurm", mode, slinky.SERVICE_ACCOUNTS)


def by_kind(objs, kind):
    return dict((obj["metadata"]["name"], obj) for obj in objs if obj["kind"] == kind)


def test_one_scc_per_pod_each_granted_to_its_service_account_only():
    objs = objects(accounting={"enabled": True})
    sccs, bindings = by_kind(objs, "SecurityContextConstraints"), by_kind(objs, "RoleBinding")
    kinds = ["controller", "worker", "restapi", "login", "accounting", "database"]
    assert sorted(sccs) == sorted("slinky-slurm-" + kind for kind in kinds)
    assert dict((name[:-4], binding["subjects"]) for name, binding in bindings.items()) == dict(
        ("slinky-slurm-" + kind, [{"kind": "ServiceAccount", "name": slinky.SERVICE_ACCOUNTS[kind], "namespace": "slurm"}])
        for kind in kinds)
    for name, scc in sccs.items():
        assert scc["users"] == [] and scc["groups"] == [] and by_kind(objs, "ClusterRole")[name + "-scc"]["rules"] == [
            {"apiGroups": ["security.openshift.io"], "resources": ["securitycontextconstraints"], "resourceNames": [name],
             "verbs": ["use"]}]
    assert sorted(by_kind(objects(), "SecurityContextConstraints")) == sorted("slinky-slurm-" + kind for kind in kinds[:4])


def test_what_each_pod_may_do():
    sccs = by_kind(objects(accounting={"enabled": True}), "SecurityContextConstraints")
    worker = sccs["slinky-slurm-worker"]
    assert worker["allowPrivilegedContainer"] and worker["allowedCapabilities"] == ["BPF", "NET_ADMIN", "SYS_ADMIN", "SYS_NICE"]
    assert worker["allowHostPorts"] and not worker["allowHostNetwork"]
    for kind, uid in (("controller", 401), ("restapi", 65534), ("accounting", 401), ("database", 999)):
        scc = sccs["slinky-slurm-" + kind]
        assert scc["runAsUser"] == {"type": "MustRunAs", "uid": uid} and scc["requiredDropCapabilities"] == ["ALL"]
        assert scc["fsGroup"]["ranges"] == scc["supplementalGroups"]["ranges"] == [{"min": uid, "max": uid}]
        assert not scc["allowPrivilegedContainer"] and not scc["allowPrivilegeEscalation"]
    assert sccs["slinky-slurm-controller"]["allowHostPorts"] and not sccs["slinky-slurm-restapi"]["allowHostPorts"]
    assert sccs["slinky-slurm-login"]["runAsUser"] == {"type": "RunAsAny"}
    routed = by_kind(objects("routed"), "SecurityContextConstraints")
    assert not routed["slinky-slurm-worker"]["allowHostPorts"] and not routed["slinky-slurm-controller"]["allowHostPorts"]
    assert by_kind(objects("hostnetwork"), "SecurityContextConstraints")["slinky-slurm-worker"]["allowHostNetwork"]


def _nulls(value, path=""):
    if value is None:
        return [path]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in _nulls(item, "%s.%s" % (path, key))]
    if isinstance(value, list):
        return [found for index, item in enumerate(value) for found in _nulls(item, "%s[%d]" % (path, index))]
    return []


def test_every_field_the_scc_schema_requires_and_no_null():
    crd = os.path.join(VENDOR, "openshift", "securitycontextconstraints.crd.yaml")
    if not os.path.isfile(crd):
        pytest.skip("no %s" % crd)
    with open(crd) as handle:
        schema = yaml.safe_load(handle)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for mode in ("nat", "routed", "hostnetwork"):
        for scc in by_kind(objects(mode, {"enabled": True}), "SecurityContextConstraints").values():
            assert set(schema["required"]) <= set(scc), scc["metadata"]["name"]
            assert set(scc) - {"apiVersion", "kind", "metadata"} <= set(schema["properties"]), scc["metadata"]["name"]
            assert _nulls(scc) == []  # an update is a merge patch: a null would delete the field
