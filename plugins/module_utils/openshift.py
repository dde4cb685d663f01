# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OpenShift's side of the slurm chart's values: one SecurityContextConstraints per kind of Slinky pod,
each usable only by that pod's ServiceAccount through an RBAC "use" grant (never `default`, never a
cluster-wide group), read from the values slinky.chart_values made, so nothing is decided twice.

What each pod needs is what slurm-operator v1.2.1 builds (internal/builder/*/..._app.go). Every field
the SCC schema requires (openshift/api security/v1) is present, and none is null: an update is a merge
patch, in which null deletes the field and the API server then refuses the object; [] and priority 0
mean what null means (OpenShift sorts a missing priority as 0).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

MANAGED_BY = {"app.kubernetes.io/managed-by": "slime.hybrid"}
VOLUMES = ["configMap", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"]


def _pods(values, network_mode, service_accounts):
    """{kind of pod: what its SCC allows}, from the chart values."""
    host_ports = network_mode != "routed"
    host_network = any((nodeset or {}).get("podSpec", {}).get("hostNetwork") for nodeset in (values.get("nodesets") or {}).values())
    pods = {
        "controller": {"comment": "slurmctld and its sidecars run as slurm (UID/GID 401), no privileges", "uid": 401,
                       "host_ports": host_ports},
        "worker": {"comment": "slurmd is privileged with BPF, NET_ADMIN, SYS_ADMIN and SYS_NICE (not configurable)",
                   "privileged": True, "host_ports": host_ports, "host_network": host_network},
        "restapi": {"comment": "slurmrestd runs as nobody (UID/GID 65534), no privileges", "uid": 65534},
        "login": {"comment": "the login image runs sshd and sackd as root, unprivileged, with default capabilities",
                  "any_uid": True},
    }
    for kind in pods:
        pods[kind]["sa"] = service_accounts[kind]
    accounting = values.get("accounting") or {}
    if accounting.get("enabled"):
        pods["accounting"] = {"comment": "slurmdbd runs as slurm (UID/GID 401), no privileges", "uid": 401,
                              "sa": accounting["podSpec"]["serviceAccountName"]}
        for obj in values.get("extraObjects") or []:
            if obj.get("kind") == "StatefulSet":
                pods["database"] = {"comment": "MariaDB runs as mysql (UID/GID 999), no privileges", "uid": 999,
                                    "sa": obj["spec"]["template"]["spec"]["serviceAccountName"]}
    return pods


def _constraints(pod):
    if pod.get("privileged"):
        return {"allowPrivilegedContainer": True, "allowPrivilegeEscalation": True,
                "allowedCapabilities": ["BPF", "NET_ADMIN", "SYS_ADMIN", "SYS_NICE"], "defaultAddCapabilities": [],
                "requiredDropCapabilities": [], "runAsUser": {"type": "RunAsAny"}, "seLinuxContext": {"type": "RunAsAny"},
                "fsGroup": {"type": "RunAsAny"}, "supplementalGroups": {"type": "RunAsAny"}}
    if pod.get("any_uid"):
        return {"allowPrivilegedContainer": False, "allowPrivilegeEscalation": True, "allowedCapabilities": [],
                "defaultAddCapabilities": [], "requiredDropCapabilities": ["MKNOD"], "runAsUser": {"type": "RunAsAny"},
                "seLinuxContext": {"type": "MustRunAs"}, "fsGroup": {"type": "RunAsAny"},
                "supplementalGroups": {"type": "RunAsAny"}}
    only = [{"min": pod["uid"], "max": pod["uid"]}]
    return {"allowPrivilegedContainer": False, "allowPrivilegeEscalation": False, "allowedCapabilities": [],
            "defaultAddCapabilities": [], "requiredDropCapabilities": ["ALL"],
            "runAsUser": {"type": "MustRunAs", "uid": pod["uid"]}, "seLinuxContext": {"type": "MustRunAs"},
            "fsGroup": {"type": "MustRunAs", "ranges": only}, "supplementalGroups": {"type": "MustRunAs", "ranges": only}}


def scc_objects(values, namespace, network_mode, service_accounts):
    """The SCCs, their ClusterRoles granting `use` and the RoleBindings to each pod's ServiceAccount, for the
    chart values `values` (slinky.chart_values' output merged with the site's) in `namespace`."""
    out = []
    for kind, pod in _pods(values, network_mode, service_accounts).items():
        name = "slinky-%s-%s" % (namespace, kind)
        scc = {"apiVersion": "security.openshift.io/v1", "kind": "SecurityContextConstraints",
               "metadata": {"name": name, "labels": dict(MANAGED_BY), "annotations": {"kubernetes.io/description": pod["comment"]}},
               "priority": 0, "users": [], "groups": [], "allowHostDirVolumePlugin": False, "allowHostIPC": False,
               "allowHostPID": False, "allowHostNetwork": bool(pod.get("host_network")),
               "allowHostPorts": bool(pod.get("host_ports")), "readOnlyRootFilesystem": False, "volumes": list(VOLUMES)}
        scc.update(_constraints(pod))
        out += [scc,
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                 "metadata": {"name": name + "-scc", "labels": dict(MANAGED_BY)},
                 "rules": [{"apiGroups": ["security.openshift.io"], "resources": ["securitycontextconstraints"],
                            "resourceNames": [name], "verbs": ["use"]}]},
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                 "metadata": {"name": name + "-scc", "namespace": namespace, "labels": dict(MANAGED_BY)},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name + "-scc"},
                 "subjects": [{"kind": "ServiceAccount", "name": pod["sa"], "namespace": namespace}]}]
    return out
