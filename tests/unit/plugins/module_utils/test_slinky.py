# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""slinky: the cluster facts bare metal needs, read from Pods, Services and Secrets as the API returns them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import copy
import json
import os
import re
import subprocess

import pytest
import yaml

from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model as cm
from ansible_collections.slime.hybrid.plugins.module_utils import slinky
from ansible_collections.slime.hybrid.plugins.module_utils import health
from ansible_collections.slime.hybrid.plugins.module_utils import scontrol


@pytest.fixture
def objects(fixture_text):
    """The lab's controller pods (one: slurm-controller-0, Running and Ready), every Service of
    namespace slurm and the key Secret (its key a fake), as the API returned them
    (tests/unit/fixtures/k8s/capture.sh)."""
    return json.loads(fixture_text(os.path.join("k8s", "slinky_objects.json")))


# Where a second replica of the controller runs: a node of its own, as the hostPorts of Slurm's pods
# require (lab/kube/env.sh); the lab's three nodes are taken, so a fourth.
OTHER_NODE = {"node": "kube-3", "host_ip": "10.127.0.33", "pod_ip": "10.244.3.5"}


@pytest.fixture
def controllers(objects, pending_pod):
    """Three replicas of the controller StatefulSet, each the captured pod with one change:
    0 Running but not Ready (its slurmctld restarting), 1 Running and Ready on another node,
    2 Pending (not scheduled: no free hostPorts)."""
    captured = objects["controller_pods"][0]
    assert captured["metadata"]["name"] == "slurm-controller-0"
    return [_not_ready(captured), _replica(captured, 1, **OTHER_NODE), pending_pod(_replica(captured, 2))]


def _make_ready(pod):
    pod = copy.deepcopy(pod)
    pod["status"]["phase"] = "Running"
    pod["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    return pod


def _not_ready(pod):
    """The pod Running, its slurmctld container not ready (as the kubelet reports a failing readiness probe)."""
    pod = copy.deepcopy(pod)
    unready = {"status": "False", "reason": "ContainersNotReady", "message": "containers with unready status: [slurmctld]"}
    for condition in pod["status"]["conditions"]:
        if condition["type"] in ("Ready", "ContainersReady"):
            condition.update(unready)
    for container in pod["status"]["containerStatuses"]:
        if container["name"] == "slurmctld":
            container.update(ready=False, restartCount=3)
    return pod


def _renamed(pod, name):
    pod = copy.deepcopy(pod)
    pod["metadata"]["name"] = name
    return pod


def _replica(pod, index, node=None, host_ip=None, pod_ip=None):
    """Replica INDEX of the pod's StatefulSet (its name, hostname and pod labels); on NODE at
    HOST_IP with POD_IP when given, else where the pod is."""
    name = "%s-%d" % (pod["metadata"]["generateName"].rstrip("-"), index)
    pod = _renamed(pod, name)
    pod["spec"]["hostname"] = name
    pod["metadata"]["labels"].update({"statefulset.kubernetes.io/pod-name": name, "apps.kubernetes.io/pod-index": str(index)})
    if node:
        pod["spec"]["nodeName"] = node
        pod["status"]["hostIP"], pod["status"]["hostIPs"] = host_ip, [{"ip": host_ip}]
        pod["status"]["podIP"], pod["status"]["podIPs"] = pod_ip, [{"ip": pod_ip}]
    return pod


def _pod_with_images(*containers):
    return {"metadata": {"name": "slurm-controller-0"},
            "spec": {"containers": [{"name": name, "image": image} for name, image in containers]}}


def _service(name, service_type, ports, policy=None):
    spec = {"type": service_type, "ports": ports}
    if policy:
        spec["externalTrafficPolicy"] = policy
    return {"metadata": {"name": name, "namespace": "slurm"}, "spec": spec}


# --------------------------------------------------------------------------- controller_pod


def test_controller_pod_picks_the_running_and_ready_pod(objects, controllers):
    assert slinky.controller_pod(objects["controller_pods"]) == objects["controller_pods"][0]
    pod = slinky.controller_pod(controllers)
    assert pod["metadata"]["name"] == "slurm-controller-1"


def test_controller_pod_takes_the_first_by_name_among_ready_pods(objects):
    pod = objects["controller_pods"][0]
    later, earlier = _renamed(pod, "slurm-controller-b"), _renamed(pod, "slurm-controller-a")
    earlier["status"]["podIP"] = "10.126.0.99"
    assert slinky.controller_pod([later, earlier])["status"]["podIP"] == "10.126.0.99"
    assert slinky.controller_pod([earlier, later])["status"]["podIP"] == "10.126.0.99"


def test_controller_pod_ignores_a_pending_pod_even_with_a_ready_condition(controllers):
    pending = copy.deepcopy(controllers[2])
    pending["status"]["conditions"].append({"type": "Ready", "status": "True"})
    pending["metadata"]["name"] = "slurm-controller-00"  # would sort first
    pod = slinky.controller_pod([pending] + controllers)
    assert pod["metadata"]["name"] == "slurm-controller-1"


def test_controller_pod_raises_listing_every_pod_when_none_is_ready(controllers):
    pods = [controllers[2], controllers[0]]
    with pytest.raises(slinky.SlinkyInfoError) as exc:
        slinky.controller_pod(pods)
    message = str(exc.value)
    assert "no running and ready controller pod" in message
    assert "pods found: slurm-controller-0, slurm-controller-2" in message


@pytest.mark.parametrize("pods", [[], None])
def test_controller_pod_raises_naming_none_without_pods(pods):
    with pytest.raises(slinky.SlinkyInfoError, match=r"pods found: none"):
        slinky.controller_pod(pods)


def test_controller_pod_is_not_ready_when_the_ready_condition_is_missing(objects):
    pod = copy.deepcopy(objects["controller_pods"][0])
    pod["status"]["conditions"] = [c for c in pod["status"]["conditions"] if c["type"] != "Ready"]
    with pytest.raises(slinky.SlinkyInfoError, match="slurm-controller-0"):
        slinky.controller_pod([pod])


# --------------------------------------------------------------------------- slurm_version


@pytest.mark.parametrize(
    "image, expected",
    [
        ("ghcr.io/slinkyproject/slurmctld:26.05-ubuntu26.04", "26.05"),
        ("ghcr.io/slinkyproject/slurmctld:25.11-rocky9", "25.11"),
        # The patch level is kept when the tag has one; the model accepts YY.MM[.patch].
        ("ghcr.io/slinkyproject/slurmctld:25.11.2-rocky9", "25.11.2"),
        ("ghcr.io/slinkyproject/slurmctld:26.05.5", "26.05.5"),
        # The ':' of a registry port is not the tag separator.
        ("registry:5000/slurmctld:26.05-x", "26.05"),
        ("registry.example.com:5000/slinky/slurmctld:24.11-ubuntu24.04", "24.11"),
        ("slurmctld:26.05", "26.05"),
    ],
)
def test_slurm_version_from_the_image_tag(image, expected):
    assert slinky.slurm_version(_pod_with_images(("slurmctld", image))) == expected


@pytest.mark.parametrize(
    "image",
    [
        "ghcr.io/slinkyproject/slurmctld",
        "registry:5000/slurmctld",  # a port, but no tag
        "ghcr.io/slinkyproject/slurmctld:latest",
        "ghcr.io/slinkyproject/slurmctld:v26.05",
        "",
    ],
)
def test_slurm_version_raises_when_the_tag_has_no_version(image):
    with pytest.raises(slinky.SlinkyInfoError) as exc:
        slinky.slurm_version(_pod_with_images(("slurmctld", image)))
    assert "cannot read a Slurm version from image %r of pod slurm-controller-0" % image == str(exc.value)


def test_slurm_version_from_a_tag_pinned_by_digest():
    image = "ghcr.io/slinkyproject/slurmctld:26.05-ubuntu26.04@sha256:" + "3f" * 32
    assert slinky.slurm_version(_pod_with_images(("slurmctld", image))) == "26.05"


def test_slurm_version_uses_the_container_named_slurmctld():
    pod = _pod_with_images(("logfile", "ghcr.io/slinkyproject/sackd:25.11-ubuntu24.04"),
                           ("slurmctld", "ghcr.io/slinkyproject/slurmctld:26.05-ubuntu26.04"))
    assert slinky.slurm_version(pod) == "26.05"


def test_slurm_version_uses_the_named_container_when_asked():
    pod = _pod_with_images(("slurmctld", "ghcr.io/slinkyproject/slurmctld:26.05-ubuntu26.04"),
                           ("slurmrestd", "ghcr.io/slinkyproject/slurmrestd:25.11-ubuntu24.04"))
    assert slinky.slurm_version(pod, container="slurmrestd") == "25.11"


def test_slurm_version_falls_back_to_the_first_container():
    pod = _pod_with_images(("controller", "ghcr.io/slinkyproject/slurmctld:25.05-ubuntu24.04"),
                           ("reconfigure", "ghcr.io/slinkyproject/slurmctld:26.05-ubuntu26.04"))
    assert slinky.slurm_version(pod) == "25.05"


def test_slurm_version_raises_for_a_pod_without_containers():
    with pytest.raises(slinky.SlinkyInfoError, match="pod slurm-controller-0 has no containers"):
        slinky.slurm_version(_pod_with_images())


def test_slurm_version_of_the_captured_pod(objects):
    # The lab's image, from its own registry: localhost/slime-kube/slinkyproject/slurmctld:26.05-forky;
    # the version the chart labels the pod with.
    pod = objects["controller_pods"][0]
    assert [c["name"] for c in pod["spec"]["containers"]] == ["slurmctld"]
    assert slinky.slurm_version(pod) == pod["metadata"]["labels"]["app.kubernetes.io/version"] == "26.05"


# --------------------------------------------------------------------------- node_port


def test_node_port_of_the_captured_services(objects):
    assert slinky.node_port(objects["services"]) == ("slurm-controller", 30017, "Local")


def test_node_port_ignores_a_clusterip_service_exposing_the_port():
    # A stale nodePort on a ClusterIP Service: only the type makes it ineligible.
    services = [
        _service("slurm-controller-nodeport", "NodePort", [{"port": 6817, "targetPort": 6817, "nodePort": 30017}]),
        _service("slurm-controller", "ClusterIP", [{"port": 6817, "targetPort": 6817, "nodePort": 31000}]),
    ]
    assert slinky.node_port(services) == ("slurm-controller-nodeport", 30017, "Cluster")


def test_node_port_matches_the_target_port_and_accepts_a_loadbalancer():
    services = [_service("slurm-lb", "LoadBalancer", [{"port": 443, "targetPort": 6817, "nodePort": 31443}], "Local")]
    assert slinky.node_port(services) == ("slurm-lb", 31443, "Local")


def test_node_port_skips_ports_of_other_daemons():
    services = [_service("slurm-restapi", "NodePort", [{"port": 6820, "targetPort": 6820, "nodePort": 30820}]),
                _service("slurm-z", "NodePort", [{"port": 6817, "targetPort": 6817, "nodePort": 30017}])]
    assert slinky.node_port(services) == ("slurm-z", 30017, "Cluster")
    assert slinky.node_port(services, port=6820) == ("slurm-restapi", 30820, "Cluster")


def test_node_port_filters_by_name():
    services = [
        _service("slurm-a", "NodePort", [{"port": 6817, "nodePort": 30017}], "Cluster"),
        _service("slurm-b", "NodePort", [{"port": 6817, "nodePort": 30018}], "Local"),
    ]
    assert slinky.node_port(services) == ("slurm-a", 30017, "Cluster")
    assert slinky.node_port(services, name="slurm-b") == ("slurm-b", 30018, "Local")


def test_node_port_raises_when_no_service_exposes_the_port(objects):
    clusterip_only = [s for s in objects["services"] if s["spec"]["type"] == "ClusterIP"]
    with pytest.raises(slinky.SlinkyInfoError) as exc:
        slinky.node_port(clusterip_only)
    assert str(exc.value) == "no NodePort Service exposes port 6817"


def test_node_port_raises_naming_the_service_asked_for(objects):
    with pytest.raises(slinky.SlinkyInfoError) as exc:
        slinky.node_port(objects["services"], name="slurm-accounting")
    assert str(exc.value) == "no NodePort Service named slurm-accounting exposes port 6817"


# --------------------------------------------------------------------------- secret_value


def test_secret_value_returns_the_base64_as_stored(objects):
    secret = objects["secret"]
    assert slinky.secret_value(secret, "slurm.key") == secret["data"]["slurm.key"]
    # capture.sh writes a fake key in place of the lab's
    assert base64.b64decode(secret["data"]["slurm.key"]) == b"slime-hybrid-unit-tests-fake-slurm-key-not-a-real-key"


def test_secret_value_missing_key_names_secret_and_key_but_not_the_data(objects):
    secret = objects["secret"]
    with pytest.raises(slinky.SlinkyInfoError) as exc:
        slinky.secret_value(secret, "jwt_hs256.key")
    message = str(exc.value)
    assert message == "Secret slurm-auth-slurm has no key jwt_hs256.key"
    assert secret["data"]["slurm.key"] not in message
    assert base64.b64decode(secret["data"]["slurm.key"]).decode("ascii") not in message


@pytest.mark.parametrize("secret", [None, {}, {"metadata": {"name": "empty"}, "data": None}])
def test_secret_value_raises_for_a_secret_without_data(secret):
    with pytest.raises(slinky.SlinkyInfoError, match="has no key slurm.key"):
        slinky.secret_value(secret, "slurm.key")


# --------------------------------------------------------------------------- cluster_facts


def test_cluster_facts_end_to_end(objects):
    pod = objects["controller_pods"][0]
    facts = slinky.cluster_facts(objects["controller_pods"], objects["services"])
    assert facts == {
        "controller": {"host": "slurm-controller-0", "aliases": [], "address": pod["status"]["podIP"], "port": 6817,
                       "pod": "slurm-controller-0", "node": pod["spec"]["nodeName"], "backups": []},
        "nodeport": {"address": pod["status"]["hostIP"], "port": 30017, "service": "slurm-controller",
                     "external_traffic_policy": "Local"},
        "slurm_version": "26.05",
    }


def test_cluster_facts_host_falls_back_to_the_pod_name(objects):
    pod = copy.deepcopy(objects["controller_pods"][0])
    del pod["spec"]["hostname"]
    pod["metadata"]["name"] = "ctld-7c9f"
    facts = slinky.cluster_facts([pod], objects["services"])
    assert facts["controller"]["host"] == "ctld-7c9f"
    assert facts["controller"]["pod"] == "ctld-7c9f"


def test_cluster_facts_with_another_port_and_service_name(objects):
    services = objects["services"] + [
        _service("slurm-ctld-alt", "NodePort", [{"name": "slurmctld", "port": 7817, "targetPort": 7817, "nodePort": 30117}]),
    ]
    pod = objects["controller_pods"][0]
    facts = slinky.cluster_facts([pod], services, port=7817, service_name="slurm-ctld-alt")
    assert facts["controller"]["port"] == 7817
    assert facts["controller"]["address"] == pod["status"]["podIP"]
    assert facts["nodeport"] == {"address": pod["status"]["hostIP"], "port": 30117, "service": "slurm-ctld-alt",
                                 "external_traffic_policy": "Cluster"}


# The operator's slurm.conf (slurm-operator v1.2.1, controllerbuilder/controller_config.go), as it
# rendered it on the Kubernetes tier (an earlier molecule k8s, cluster k8stest).
OPERATOR_SLURM_CONF = """#
### GENERAL ###
ClusterName=k8stest
SlurmUser=slurm
SlurmctldHost=slurm-controller-0(slurm-controller.slurm)
SlurmctldPort=6817
"""


def test_cluster_facts_take_the_name_slurm_connects_to_from_the_operators_slurm_conf(objects):
    facts = slinky.cluster_facts(objects["controller_pods"], objects["services"], slurm_conf=OPERATOR_SLURM_CONF)
    assert facts["controller"]["host"] == "slurm-controller.slurm"
    assert facts["controller"]["aliases"] == ["slurm-controller-0"]
    assert slinky.slurmctld_host("SlurmctldHost=ctl\n") == ("ctl", "ctl")
    assert slinky.slurmctld_host("slurmctldhost = a(b.c)\nSlurmctldHost=backup\n") == ("a", "b.c")
    with pytest.raises(slinky.SlinkyInfoError, match="no SlurmctldHost"):
        slinky.slurmctld_host("ClusterName=x\n")


def test_config_map_name_is_the_first_configmap_of_the_projected_volume():
    pod = {"spec": {"volumes": [{"name": "logs", "emptyDir": {}},
                                {"name": "slurm-etc", "projected": {"sources": [
                                    {"configMap": {"name": "slurm-config"}}, {"secret": {"name": "slurm-auth-slurm"}},
                                    {"configMap": {"name": "slurm-config-extra"}}]}}]}}
    assert slinky.config_map_name(pod) == "slurm-config"
    assert slinky.config_map_name({"spec": {}}) is None
    # its StatefulSet: the pod template
    assert slinky.config_map_name({"spec": {"replicas": 1, "template": {"metadata": {}, "spec": pod["spec"]}}}) == "slurm-config"


def test_cluster_facts_raises_without_a_ready_controller(objects, controllers):
    with pytest.raises(slinky.SlinkyInfoError, match="pods found: slurm-controller-0, slurm-controller-2"):
        slinky.cluster_facts([controllers[0], controllers[2]], objects["services"])


# --------------------------------------------------------------------------- pod_routes


def _node(name, internal_ip=None, pod_cidr=None, pod_cidrs=None, extra_addresses=()):
    """A Node as the API returns it (trimmed): spec.podCIDR(s) and status.addresses."""
    spec = {"providerID": "kind://docker/kind/%s" % name}
    if pod_cidr is not None:
        spec["podCIDR"] = pod_cidr
    if pod_cidrs is not None:
        spec["podCIDRs"] = pod_cidrs
    addresses = ([{"type": "InternalIP", "address": internal_ip}] if internal_ip else []) + list(extra_addresses)
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": spec, "status": {"addresses": addresses + [{"type": "Hostname", "address": name}]}}


# As `kubectl get nodes -o json` shows them on the test cluster: the controller-manager gave
# podCIDRs in registration order, so the control plane got the third.
LIVE_NODES = [
    _node("kube-1", "10.127.0.31", "10.244.0.0/24", ["10.244.0.0/24"]),
    _node("kube-2", "10.127.0.32", "10.244.1.0/24", ["10.244.1.0/24"]),
    _node("kube-cp", "10.127.0.30", "10.244.2.0/24", ["10.244.2.0/24"]),
]


def test_pod_routes_of_the_live_nodes():
    assert slinky.pod_routes(LIVE_NODES) == [
        {"cidr": "10.244.0.0/24", "via": "10.127.0.31"},
        {"cidr": "10.244.1.0/24", "via": "10.127.0.32"},
        {"cidr": "10.244.2.0/24", "via": "10.127.0.30"},
    ]


def test_pod_routes_leave_out_a_node_without_a_pod_cidr_yet_and_skip_ipv6():
    nodes = [
        # Dual stack: an IPv6 InternalIP listed first, and an IPv6 podCIDR; only the IPv4 ones count.
        _node("worker-b", pod_cidr="10.244.1.0/24", pod_cidrs=["10.244.1.0/24", "fd00:10:244:1::/64"],
              extra_addresses=[{"type": "InternalIP", "address": "fd00::51"},
                               {"type": "ExternalIP", "address": "203.0.113.51"},
                               {"type": "InternalIP", "address": "192.168.10.51"}]),
        _node("worker-new", "192.168.10.52"),  # just registered: no podCIDR allocated yet
        _node("worker-a", "192.168.10.50", pod_cidr="10.244.0.0/24"),  # only the old singular field
    ]
    assert slinky.pod_routes(nodes) == [
        {"cidr": "10.244.0.0/24", "via": "192.168.10.50"},
        {"cidr": "10.244.1.0/24", "via": "192.168.10.51"},
    ]


def test_pod_routes_leave_out_nodes_without_an_ipv4_internal_ip():
    nodes = [_node("v6-only", pod_cidrs=["10.244.3.0/24"],
                   extra_addresses=[{"type": "InternalIP", "address": "fd00::53"}]),
             _node("external-only", pod_cidrs=["10.244.4.0/24"],
                   extra_addresses=[{"type": "ExternalIP", "address": "203.0.113.54"}]),
             {"metadata": {"name": "bare"}}]
    assert slinky.pod_routes(nodes) == []
    assert slinky.pod_routes([]) == [] and slinky.pod_routes(None) == []


def test_pod_routes_sort_by_network_not_by_text():
    nodes = [_node("n10", "10.127.0.40", pod_cidrs=["10.244.10.0/24"]),
             _node("n2", "10.127.0.32", pod_cidrs=["10.244.2.0/24"])]
    assert [r["cidr"] for r in slinky.pod_routes(nodes)] == ["10.244.2.0/24", "10.244.10.0/24"]


def test_cluster_facts_carry_pod_routes_only_when_nodes_are_given(objects):
    without = slinky.cluster_facts(objects["controller_pods"], objects["services"], with_nodeport=False)
    assert "pod_routes" not in without
    facts = slinky.cluster_facts(objects["controller_pods"], objects["services"], with_nodeport=False, nodes=LIVE_NODES)
    assert facts["pod_routes"] == slinky.pod_routes(LIVE_NODES)
    assert slinky.cluster_facts(objects["controller_pods"], objects["services"], nodes=[])["pod_routes"] == []


def test_discovered_pod_routes_complete_a_routed_intent(objects):
    facts = slinky.cluster_facts(objects["controller_pods"], objects["services"], with_nodeport=False, nodes=LIVE_NODES)
    intent = {"name": "slurm", "network_mode": "routed", "srun_port_range": "60001-60100"}
    assert cm.intent_errors(intent) == []
    model = cm.normalize(intent, facts)
    assert model["routes"] == facts["pod_routes"]
    assert model["conf_server"] == objects["controller_pods"][0]["status"]["podIP"] + ":6817"


# --------------------------------------------------------------------------- chart values

MODEL = {
    "name": "lab", "slurm_version": "26.05", "network_mode": "nat",
    "controller": {"host": "slurm-controller-0", "address": "10.244.0.10", "port": 6817},
    "nodeport": {"address": "192.0.2.10", "port": 30017},
    "slurmd_port": 6818, "srun_port_range": "60001-60100", "max_node_count": 64,
}
ROUTES = [{"cidr": "10.244.0.0/24", "via": "192.0.2.10"}]


def _values(nodesets=None, loginsets=None, nodeaddr_sync=None, **changes):
    return slinky.chart_values(cm.normalize(dict(MODEL, **changes)), nodesets, loginsets, nodeaddr_sync=nodeaddr_sync)


def test_ports_go_where_the_operator_merges_them_never_to_pod_spec_containers():
    values = _values({"slinky": {}})
    ctl, nodeset = values["controller"], values["nodesets"]["slinky"]
    assert [p["hostPort"] for p in ctl["slurmctld"]["ports"]] == list(range(60001, 60101))
    assert all(p["containerPort"] == p["hostPort"] and p["protocol"] == "TCP" for p in ctl["slurmctld"]["ports"])
    assert [p["hostPort"] for p in nodeset["slurmd"]["ports"]] == [6818] + list(range(60001, 60101))
    # podSpec.containers would be appended as a second, image-less container (pod_template.go).
    assert "containers" not in ctl["podSpec"] and "containers" not in nodeset["podSpec"]


@pytest.mark.parametrize("mode, extra, host_network, first_port", [
    ("nat", {}, False, 6818),
    ("nat", {}, True, 60001),  # a NodeSet on its node's network in nat
    ("hostnetwork", {}, None, 60001),
    ("routed", {"pod_routes": ROUTES}, None, None),
])
def test_a_sites_own_settings_survive_what_each_mode_adds(mode, extra, host_network, first_port):
    """A site's image, resources and pod settings of a NodeSet, the controller and a LoginSet are
    merged with what the mode adds (ports, hostNetwork, the sidecar's hook), never replaced."""
    image = {"repository": "mirror.example.org/slinkyproject/slurmd", "tag": "26.05-ubuntu26.04"}
    own = {"image": image, "resources": {"limits": {"cpu": 4}}, "env": [{"name": "A", "value": "1"}]}
    nodeset = {"slurmd": copy.deepcopy(own), "podSpec": {"nodeSelector": {"gpu": "yes"}}}
    if host_network is not None:
        nodeset["host_network"] = host_network
    login = {"login": {"image": "mirror.example.org/slinkyproject/login:26.05", "resources": {"limits": {"cpu": 1}}}}
    values = _values({"gpu": nodeset}, {"login": copy.deepcopy(login)} if mode == "routed" else None,
                     nodeaddr_sync=SYNC, network_mode=mode, **extra)
    slurmd = values["nodesets"]["gpu"]["slurmd"]
    assert slurmd["image"] == image and slurmd["resources"] == own["resources"]
    assert slurmd["env"][0] == own["env"][0]
    assert values["nodesets"]["gpu"]["podSpec"]["nodeSelector"] == {"gpu": "yes"}
    assert [p["hostPort"] for p in slurmd.get("ports", [])][:1] == ([first_port] if first_port else [])
    if mode == "routed":
        assert values["loginsets"]["login"]["login"] == login["login"]


def test_every_pod_runs_as_its_own_service_account_made_by_the_chart():
    values = _values({"slinky": {"podSpec": {"nodeSelector": {"gpu": "yes"}}}})
    assert values["controller"]["podSpec"] == {"serviceAccountName": "slurm-controller"}
    assert values["restapi"]["podSpec"] == {"serviceAccountName": "slurm-restapi"}
    assert values["nodesets"]["slinky"]["podSpec"] == {"nodeSelector": {"gpu": "yes"}, "serviceAccountName": "slurm-worker",
                                                       "volumes": [health.pod_volume()]}
    sas = values["extraObjects"][:-1]
    assert values["extraObjects"][-1] == health.config_map(cm.normalize(MODEL)["health"])
    assert [(sa["kind"], sa["metadata"]["name"], sa["automountServiceAccountToken"]) for sa in sas] == [
        ("ServiceAccount", "slurm-controller", False), ("ServiceAccount", "slurm-login", False),
        ("ServiceAccount", "slurm-restapi", False), ("ServiceAccount", "slurm-worker", False)]
    assert not any("namespace" in sa["metadata"] for sa in sas)  # the release's namespace


def test_partition_all_holds_pods_and_bare_metal():
    assert _values()["partitions"] == {"all": {"enabled": True, "nodesets": ["ALL"],
                                               "configMap": {"Default": "YES", "MaxTime": "UNLIMITED", "State": "UP"}}}


def test_values_follow_the_model():
    values = _values({"a": None}, **{"srun_port_range": "61000-61009", "srun_concurrency": 1, "name": "site"})
    assert values["clusterName"] == "site"
    assert values["controller"]["extraConfMap"]["SrunPortRange"] == "61000-61009"
    assert [p["hostPort"] for p in values["nodesets"]["a"]["slurmd"]["ports"]] == [6818] + list(range(61000, 61010))
    assert _values()["nodesets"] == {}


def test_values_per_network_mode():
    routed = _values({"slinky": {"replicas": 3}}, network_mode="routed", pod_routes=ROUTES)
    assert routed["controller"]["service"] == {"spec": {"type": "ClusterIP"}} and "slurmctld" not in routed["controller"]
    assert routed["nodesets"] == {"slinky": {"enabled": True, "replicas": 3, "slurmd": {"volumeMounts": [health.pod_mount()]},
                                             "podSpec": {"serviceAccountName": "slurm-worker", "volumes": [health.pod_volume()]}}}
    hostnet = _values({"slinky": {}, "pinned": {"host_network": False}}, network_mode="hostnetwork")
    assert hostnet["nodesets"]["slinky"]["podSpec"] == {"serviceAccountName": "slurm-worker", "hostNetwork": True,
                                                        "dnsPolicy": "ClusterFirstWithHostNet", "volumes": [health.pod_volume()]}
    # srun's range declared (hostNetwork: containerPort = hostPort), so the scheduler keeps the pod
    # off the controller's node, whose srun hostPorts would take srun's connections there.
    assert [p["hostPort"] for p in hostnet["nodesets"]["slinky"]["slurmd"]["ports"]] == list(range(60001, 60101))
    assert [p["hostPort"] for p in hostnet["nodesets"]["pinned"]["slurmd"]["ports"]][:1] == [6818]
    assert hostnet["controller"]["service"]["spec"]["externalTrafficPolicy"] == "Local"


def test_loginsets_only_where_bare_metal_reaches_the_login_pod():
    assert slinky.loginset_errors(cm.normalize(dict(MODEL, network_mode="routed", pod_routes=ROUTES)), {"login": {}}) == []
    assert slinky.loginset_errors(cm.normalize(MODEL), {}) == []
    for mode in ("nat", "hostnetwork"):
        (error,) = slinky.loginset_errors(cm.normalize(dict(MODEL, network_mode=mode)), {"b": {}, "a": {}})
        assert error.startswith("slinky_loginsets=a,b: srun or salloc in a login pod cannot reach bare-metal workers "
                                "in network_mode %s" % mode)
        assert "use network_mode routed" in error


def test_service_drift_names_what_the_operator_will_not_update():
    nat = _values()["controller"]
    live = {"spec": {"type": "NodePort", "externalTrafficPolicy": "Local",
                     "ports": [{"name": "slurmctld", "port": 6817, "nodePort": 30017}]}}
    assert slinky.service_drift(live, nat) == []
    moved = {"spec": dict(live["spec"], ports=[{"port": 6817, "nodePort": 30018}])}
    assert slinky.service_drift(moved, nat) == ["nodePort 30018, wants 30017"]
    cluster = {"spec": {"type": "NodePort", "externalTrafficPolicy": "Cluster", "ports": [{"port": 6817, "nodePort": 30017}]}}
    assert slinky.service_drift(cluster, nat) == ["externalTrafficPolicy Cluster, wants Local"]
    routed = _values(network_mode="routed", pod_routes=ROUTES)["controller"]
    assert slinky.service_drift(live, routed) == ["type NodePort, wants ClusterIP"]
    assert slinky.service_drift({"spec": {"type": "ClusterIP", "ports": [{"port": 6817}]}}, routed) == []


def test_service_account_errors():
    assert slinky.service_account_errors(dict(slinky.SERVICE_ACCOUNTS)) == []
    assert slinky.service_account_errors({}) == []  # every kind the collection's
    errors = slinky.service_account_errors({"controller": "Bad_Name", "worker": "w", "restapi": "r", "slurmd": "x"})
    assert errors[0] == ("slinky_service_accounts: slurmd is not a kind of Slinky pod (allowed: accounting, controller, database, "
                         "login, restapi, worker)")
    assert errors[1].startswith("slinky_service_accounts.controller='Bad_Name' is not a valid Kubernetes name")
    assert len(errors) == 2
    assert slinky.service_account_errors(["a"])[0] == ("slinky_service_accounts=['a'] must map kinds of Slinky pods "
                                                       "(accounting, controller, database, login, restapi, worker) to names")


def test_the_role_documents_the_collections_service_accounts_and_keeps_them_in_one_place():
    spec_path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "slinky", "meta", "argument_specs.yml")
    with open(spec_path) as handle:
        option = yaml.safe_load(handle)["argument_specs"]["main"]["options"]["slinky_service_accounts"]
    assert option["default"] == {}  # the names live in slinky.SERVICE_ACCOUNTS only
    description = " ".join(option["description"])
    for kind, name in slinky.SERVICE_ACCOUNTS.items():
        assert "C(%s)" % kind in description and "C(%s)" % name in description


# ---- NodeAddr sync (network_mode nat)

SYNC = {"interval": 2}


def _sidecar(values):
    (container,) = values["controller"]["podSpec"]["initContainers"]
    return container


def test_nat_nodesets_state_their_nodes_address_and_a_sidecar_keeps_nodeaddr_at_it():
    values = _values({"slinky": {}}, nodeaddr_sync=SYNC)
    sidecar = _sidecar(values)
    assert sidecar["name"] == "slime-nodeaddr" and sidecar["restartPolicy"] == "Always"
    assert sidecar["image"] == "ghcr.io/slinkyproject/slurmctld:26.05-ubuntu26.04"
    assert sidecar["command"][:5] == ["tini", "-g", "--", "bash", "-c"]
    assert sidecar["command"][5] == slinky.NODEADDR_SYNC_SCRIPT
    assert sidecar["env"] == [{"name": "SLIME_NODEADDR_INTERVAL", "value": "2"}]
    # Slinky's own reconfigure sidecar mounts these two (controllerbuilder/controller_app.go).
    assert sidecar["volumeMounts"] == [{"name": "slurm-etc", "mountPath": "/etc/slurm", "readOnly": True},
                                       {"name": "slurm-authsocket", "mountPath": "/run/slurmctld", "readOnly": True}]
    assert values["controller"]["podSpec"]["serviceAccountName"] == "slurm-controller"
    slurmd = values["nodesets"]["slinky"]["slurmd"]
    assert slurmd["env"] == [{"name": "SLIME_HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}}]
    assert slurmd["lifecycle"] == {"postStart": {"exec": {"command": ["/bin/sh", "-c", slinky.NODEADDR_POST_START]}}}
    assert [p["hostPort"] for p in slurmd["ports"]][:1] == [6818]
    # The Extra the hook writes, as sh expands it: JSON naming the node's address.
    assert slinky.NODEADDR_POST_START.startswith(slinky.NODEADDR_EXTRA + "; ")
    extra = subprocess.run(["sh", "-c", slinky.NODEADDR_EXTRA + '; printf %s "$extra"'], env={"SLIME_HOST_IP": "192.0.2.7"},
                           capture_output=True, text=True, check=True).stdout
    assert json.loads(extra) == {"slime.hybrid/nodeaddr": "192.0.2.7"}


def test_the_sidecar_takes_the_image_and_interval_given_and_a_nodesets_own_settings_stay():
    own = {"image": "mirror.example.org/slurmd:26.05", "env": [{"name": "A", "value": "1"}],
           "lifecycle": {"preStop": {"exec": {"command": ["true"]}}}}
    values = _values({"gpu": {"slurmd": own}}, nodeaddr_sync={"interval": 7, "image": {
        "repository": "mirror.example.org/slurmctld", "tag": "26.05", "digest": "sha256:ab"}})
    sidecar = _sidecar(values)
    assert sidecar["image"] == "mirror.example.org/slurmctld@sha256:ab"
    assert sidecar["env"] == [{"name": "SLIME_NODEADDR_INTERVAL", "value": "7"}]
    slurmd = values["nodesets"]["gpu"]["slurmd"]
    assert slurmd["image"] == own["image"]
    assert [e["name"] for e in slurmd["env"]] == ["A", "SLIME_HOST_IP"]
    assert sorted(slurmd["lifecycle"]) == ["postStart", "preStop"]
    assert own == {"image": "mirror.example.org/slurmd:26.05", "env": [{"name": "A", "value": "1"}],
                   "lifecycle": {"preStop": {"exec": {"command": ["true"]}}}}  # not changed in place


def test_the_sidecar_reads_only_image_and_interval_of_nodeaddr_sync():
    sidecar = _sidecar(_values({"slinky": {}}, nodeaddr_sync={"interval": 3, "enabled": True}))
    assert sidecar["env"] == [{"name": "SLIME_NODEADDR_INTERVAL", "value": "3"}]
    assert _sidecar(_values({"slinky": {}}, nodeaddr_sync={"image": "r/slurmctld:26.05"}))["env"][0]["value"] == "2"


def test_no_sidecar_where_nodeaddr_needs_no_fix_or_none_is_asked():
    assert "initContainers" not in _values({"slinky": {}})["controller"]["podSpec"]
    assert "initContainers" not in _values({}, nodeaddr_sync=SYNC)["controller"]["podSpec"]
    assert "initContainers" not in _values({"h": {"host_network": True}}, nodeaddr_sync=SYNC)["controller"]["podSpec"]
    for mode, extra in (("routed", {"pod_routes": ROUTES}), ("hostnetwork", {})):
        values = _values({"slinky": {}}, nodeaddr_sync=SYNC, network_mode=mode, **extra)
        assert "initContainers" not in values["controller"]["podSpec"]
        assert "lifecycle" not in (values["nodesets"]["slinky"].get("slurmd") or {})


def _chart_file(*parts):
    """A chart file: under SLIME_CACHE ("cache", ...) or the vendored upstream copies ("vendor", ...)."""
    if parts[0] == "cache":
        base = os.environ.get("SLIME_CACHE") or os.path.expanduser("~/.cache/slime-hybrid")
    else:
        base = os.environ.get("SLIME_VENDOR_DIR") or os.path.join(os.path.dirname(__file__), *[".."] * 6, "shared", "vendor")
    return os.path.join(base, *parts[1:])


@pytest.mark.parametrize("image, ref", [
    ("r.example.org/slurmctld:26.05", "r.example.org/slurmctld:26.05"),
    ({"repository": "r/slurmctld", "tag": "26.05"}, "r/slurmctld:26.05"),
    ({"repository": "r/slurmctld", "tag": "26.05", "digest": "sha256:0f"}, "r/slurmctld@sha256:0f"),
    ({"repository": "r/slurmctld", "tag": "26.05", "digest": None}, "r/slurmctld:26.05"),
])
def test_image_ref_as_the_chart_formats_it(image, ref):
    assert slinky.image_ref(image) == ref


def test_the_default_sidecar_image_is_the_charts_slurmctld_image():
    """CHART_SLURMCTLD_IMAGE against the chart it stands for (helm/slurm/values.yaml, 1.2.1)."""
    values_file = _chart_file("vendor", "slinky-1.2.1", "helm", "slurm", "values.yaml")
    if not os.path.exists(values_file):
        pytest.skip("the slurm chart 1.2.1 is not here (SLIME_VENDOR_DIR)")
    with open(values_file) as f:
        image = yaml.safe_load(f)["controller"]["slurmctld"]["image"]
    assert slinky.image_ref(image) == slinky.image_ref(slinky.CHART_SLURMCTLD_IMAGE)


def _drift(text):
    awk = subprocess.run(["awk", slinky.NODEADDR_DRIFT_AWK], input=text, capture_output=True, text=True, check=True)
    return [line.split() for line in awk.stdout.splitlines()]


def test_the_sidecars_awk_on_what_slurm_prints():
    """A real `scontrol --oneliner show node` of the kube lab (Slurm 26.05.5, network_mode nat, the
    sidecar running): bare-metal nodes without Extra, pod workers whose NodeAddr is the address
    their Extra states. Nothing drifts; with a pod IP as NodeAddr, exactly those nodes do."""
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "scontrol_show_node_extra.txt")) as f:
        lines = f.read().splitlines()
    assert _drift("\n".join(lines)) == []
    pods = [line for line in lines if '"slime.hybrid/nodeaddr":"' in line]
    assert len(pods) == 2 and len(lines) == 4
    moved = [re.sub(r" NodeAddr=\S+ ", " NodeAddr=10.244.9.%d " % n, line) for n, line in enumerate(pods)]
    drift = _drift("\n".join(moved + [line for line in lines if line not in pods]))
    assert [(row[0], row[1]) for row in drift] == [(re.search(r"NodeName=(\S+)", line).group(1), "10.244.9.%d" % n)
                                                   for n, line in enumerate(pods)]
    assert [row[2] for row in drift] == [re.search(r'"slime.hybrid/nodeaddr":"([^"]+)"', line).group(1) for line in pods]


# What Slinky's operator writes from its next release on, one SlurmctldHost per controller replica and
# SlurmctldAddr at the Service (slurm-operator main f2ed3fc5, internal/builder/controllerbuilder/
# controller_config.go), the lines as Slurm reads them (keys in any case, comments).
REPLICAS_SLURM_CONF = """ClusterName=slurm
SlurmctldHost=slurm-controller-0(slurm-controller-0.slurm-controller-internal.slurm)
slurmctldhost = slurm-controller-1(slurm-controller-1.slurm-controller-internal.slurm)
#SlurmctldHost=commented-out
SlurmctldHost=slurm-controller-2(slurm-controller-2.slurm-controller-internal.slurm)  # a comment
SlurmctldAddr=slurm-controller.slurm
"""


def test_slurmctld_hosts_and_addr_as_slurm_reads_them():
    assert slinky.slurmctld_hosts(REPLICAS_SLURM_CONF) == [
        ("slurm-controller-%d" % i, "slurm-controller-%d.slurm-controller-internal.slurm" % i) for i in range(3)]
    assert slinky.slurmctld_addr(REPLICAS_SLURM_CONF) == "slurm-controller.slurm"
    assert slinky.slurmctld_addr(OPERATOR_SLURM_CONF) is None
    assert slinky.slurmctld_hosts("SlurmctldHost=a\nSlurmctldHost=b(10.0.0.2)\n") == [("a", "a"), ("b", "10.0.0.2")]


def test_cluster_facts_with_backups_each_at_its_own_pod(objects, controllers):
    pods = [_make_ready(pod) for pod in controllers[:2]] + controllers[2:]
    facts = slinky.cluster_facts(pods, objects["services"], slurm_conf=REPLICAS_SLURM_CONF)
    ctl = facts["controller"]
    assert (ctl["host"], ctl["aliases"]) == ("slurm-controller-0.slurm-controller-internal.slurm",
                                             ["slurm-controller-0", "slurm-controller.slurm"])
    captured = objects["controller_pods"][0]["status"]
    assert (ctl["pod"], ctl["address"], facts["nodeport"]["address"]) == (
        "slurm-controller-0", captured["podIP"], captured["hostIP"])
    assert ctl["backups"] == [
        {"host": "slurm-controller-1.slurm-controller-internal.slurm", "aliases": ["slurm-controller-1"],
         "address": OTHER_NODE["pod_ip"], "node_address": OTHER_NODE["host_ip"], "pod": "slurm-controller-1"},
        # pending, unscheduled: no address yet
        {"host": "slurm-controller-2.slurm-controller-internal.slurm", "aliases": ["slurm-controller-2"],
         "address": None, "node_address": None, "pod": "slurm-controller-2"},
    ]


def test_while_the_primary_is_not_ready_its_names_go_to_the_first_ready_controller(objects, controllers):
    # slurm-controller-0 is running but not ready (its slurmctld restarting)
    facts = slinky.cluster_facts(controllers, objects["services"], slurm_conf=REPLICAS_SLURM_CONF)
    assert (facts["controller"]["pod"], facts["controller"]["address"]) == ("slurm-controller-1", OTHER_NODE["pod_ip"])
    assert facts["nodeport"]["address"] == OTHER_NODE["host_ip"]
    assert facts["controller"]["backups"][0]["address"] == OTHER_NODE["pod_ip"]


# What the operator v1.2.1 rendered on the kube lab for the controller values below (the end of
# slurm-config's slurm.conf, molecule kube's backup-controller step).
RENDERED_EXTRA = """#
### EXTRA CONFIG ###
ProctrackType=proctrack/linuxproc
ReturnToService=2
SlurmctldAddr=slurm-controller.slurm.svc.cluster.local
SlurmctldHost=slurm-controller-1(slurm-controller-1.slurm-controller-internal.slurm)
SlurmdTimeout=20
SrunPortRange=60001-60100
TaskPlugin=task/affinity
PartitionName=all Nodes=ALL Default=YES MaxTime=UNLIMITED State=UP
"""
RENDERED_VALUES = {"extraConfMap": {
    "ProctrackType": "proctrack/linuxproc", "ReturnToService": 2, "SlurmctldAddr": "slurm-controller.slurm.svc.cluster.local",
    "SlurmctldHost": "slurm-controller-1(slurm-controller-1.slurm-controller-internal.slurm)", "SlurmdTimeout": 20,
    "SrunPortRange": "60001-60100", "TaskPlugin": "task/affinity"}}


def test_config_drift_until_the_operator_rendered_the_values():
    config = {"data": {"slurm.conf": OPERATOR_SLURM_CONF + RENDERED_EXTRA}}
    assert slinky.config_drift(config, RENDERED_VALUES) == []
    changed = {"extraConfMap": dict(RENDERED_VALUES["extraConfMap"], SrunPortRange="61000-61099", SlurmdTimeout=30)}
    assert slinky.config_drift(config, changed) == ["SlurmdTimeout=30", "SrunPortRange=61000-61099"]
    # the chart leaves an empty value out and joins a list (slurm._toList)
    assert slinky.config_drift(config, {"extraConfMap": {"ReturnToService": 0, "X": "", "Y": ["a", "b"]}}) == ["Y=a,b"]
    # extraConf, when set, is passed instead of extraConfMap
    assert slinky.config_drift(config, {"extraConf": "SlurmdTimeout=20\nMaxJobCount=5\n", "extraConfMap": {"Z": 1}}) == [
        "MaxJobCount=5"]
    assert slinky.config_drift({}, {}) == []


def test_rollout_pending():
    sts = {"metadata": {"generation": 3}, "spec": {"replicas": 1},
           "status": {"observedGeneration": 3, "currentRevision": "a", "updateRevision": "a", "updatedReplicas": 1,
                      "readyReplicas": 1}}
    assert slinky.rollout_pending(sts) == []
    rolling = dict(sts, status=dict(sts["status"], updateRevision="b", readyReplicas=0))
    assert slinky.rollout_pending(rolling) == ["revision b rolling out (pods at a)", "readyReplicas 0 of 1"]
    assert slinky.rollout_pending(dict(sts, metadata={"generation": 4}))[0] == "generation 4 not observed yet (3)"


def _walk_images(values, top, path=""):
    """{path of each image dict: its repository} of a chart's values.yaml; top: the chart's values
    (cert-manager renders a repository left empty as imageRegistry/imageNamespace/name)."""
    found = {}
    for key, value in (values or {}).items() if isinstance(values, dict) else ():
        here = path + key
        if key == "image" and isinstance(value, dict):
            found[here] = value.get("repository") or "%s/%s/%s" % (top["imageRegistry"], top["imageNamespace"], value["name"])
        else:
            found.update(_walk_images(value, top, here + "."))
    return found


@pytest.mark.parametrize("chart, values_file", [
    ("slurm", ("vendor", "slinky-1.2.1", "helm", "slurm", "values.yaml")),
    ("slurm-operator", ("vendor", "slinky-1.2.1", "helm", "slurm-operator", "values.yaml")),
    # cert-manager's chart from its Go module (lab/kube/cert-manager-chart.sh puts it there)
    ("cert-manager", ("cache", "k8s", "charts", "cert-manager-v1.21.1", "values.yaml")),
])
def test_chart_images_are_every_image_of_the_chart(chart, values_file):
    """CHART_IMAGES against the charts: every image their values name, at the same path, with the
    repository the chart renders by default (cert-manager: imageRegistry/imageNamespace/name)."""
    path = _chart_file(*values_file)
    if not os.path.exists(path):
        pytest.skip("%s is not here" % path)
    with open(path) as f:
        values = yaml.safe_load(f)
    assert _walk_images(values, values) == slinky.CHART_IMAGES[chart]


@pytest.mark.parametrize("repository, registry, mirrored", [
    ("ghcr.io/slinkyproject/slurmd", "mirror.example.org", "mirror.example.org/slinkyproject/slurmd"),
    ("ghcr.io/slinkyproject/slurmd", "mirror.example.org:5000/hpc/", "mirror.example.org:5000/hpc/slinkyproject/slurmd"),
    ("docker.io/library/alpine", "r.example.org", "r.example.org/library/alpine"),
    ("alpine", "r.example.org", "r.example.org/library/alpine"),
    ("bitnami/mariadb", "r.example.org", "r.example.org/bitnami/mariadb"),
    ("localhost/slime/slurmd", "r.example.org", "r.example.org/slime/slurmd"),
    ("registry:5000/slurmd", "r.example.org", "r.example.org/slurmd"),
])
def test_mirrored_keeps_the_path_under_the_registry(repository, registry, mirrored):
    assert slinky.mirrored(repository, registry) == mirrored


def test_image_values_name_every_image_in_the_registry_and_nothing_without_one():
    assert slinky.image_values("slurm", "") == {}
    values = slinky.image_values("slurm", "mirror.example.org/hpc")
    assert values["controller"]["slurmctld"]["image"] == {"repository": "mirror.example.org/hpc/slinkyproject/slurmctld"}
    assert values["nodesetDefaults"]["logfile"]["image"] == {"repository": "mirror.example.org/hpc/library/alpine"}
    assert sorted(values) == ["accounting", "controller", "loginsetDefaults", "nodesetDefaults", "restapi"]
    cert_manager = slinky.image_values("cert-manager", "mirror.example.org/hpc")
    assert cert_manager["image"]["repository"] == "mirror.example.org/hpc/jetstack/cert-manager-controller"
    assert cert_manager["webhook"]["image"]["repository"] == "mirror.example.org/hpc/jetstack/cert-manager-webhook"


@pytest.mark.parametrize("image, ref", [
    (None, "ghcr.io/slinkyproject/slurmctld:26.05-ubuntu26.04"),
    # a registry rewrite names the repository only: the chart's tag stays
    ({"repository": "mirror.example.org/slinkyproject/slurmctld"}, "mirror.example.org/slinkyproject/slurmctld:26.05-ubuntu26.04"),
    ({"repository": "mirror.example.org/slinkyproject/slurmctld", "tag": "26.05-site"}, "mirror.example.org/slinkyproject/slurmctld:26.05-site"),
    ("r/slurmctld:26.05", "r/slurmctld:26.05"),
])
def test_the_sidecar_image_completes_a_partial_image_with_the_charts(image, ref):
    assert slinky.nodeaddr_sync_container(image)["image"] == ref


def _worker_record(name, pod, nodeset="slurm-worker-slinky", uid="02225b54", namespace="slurm", state="IDLE+DYNAMIC_NORM"):
    """A NodeSet pod's record as slurmctld lists it, with the podinfo slurm-operator v1.2.1 writes (captured on lab/kube)."""
    comment = json.dumps({"namespace": namespace, "podName": pod, "node": "kube-cp", "nodeSetName": nodeset,
                          "nodeSetUID": uid}, separators=(",", ":"))
    return scontrol.parse_nodes("NodeName=%s Arch=x86_64 AvailableFeatures=slinky NodeAddr=10.127.0.31 State=%s "
                                "Comment=%s Version=26.05.5\n" % (name, state, comment))[name]


def test_stale_workers_are_the_records_no_nodeset_backs():
    owner = [{"kind": "NodeSet", "name": "slurm-worker-slinky", "uid": "02225b54"}]
    nodesets = [{"metadata": {"name": "slurm-worker-slinky", "uid": "02225b54"}, "spec": {"replicas": 1}}]
    # scaled in to one: the operator picked slinky-0 to remove (its sort, not the highest ordinal; seen in kube-routed)
    pods = [{"metadata": {"name": "slurm-worker-slinky-1", "ownerReferences": owner}}]
    nodes = {
        "slinky-1": _worker_record("slinky-1", "slurm-worker-slinky-1"),
        # drained by the operator, set DOWN by its preStop hook, its pod gone
        "slinky-0": _worker_record("slinky-0", "slurm-worker-slinky-0", state="DOWN+DRAIN+DYNAMIC_NORM"),
        # renamed in the values: the old NodeSet (another UID) is gone with its pods
        "cpu-0": _worker_record("cpu-0", "slurm-worker-cpu-0", nodeset="slurm-worker-cpu", uid="77aa"),
        # bare metal (slurmd -Z, no podinfo), and another namespace's worker
        "bm-1": scontrol.parse_nodes("NodeName=bm-1 AvailableFeatures=baremetal NodeAddr=10.127.0.61 State=IDLE\n")["bm-1"],
        "other-0": _worker_record("other-0", "slurm-worker-other-0", uid="99", namespace="slurm2"),
    }
    assert slinky.stale_workers(nodes, nodesets, pods, "slurm") == {
        "cpu-0": "no pod backs cpu-0: its NodeSet slurm-worker-cpu is gone",
        "slinky-0": "no pod backs slinky-0: its NodeSet slurm-worker-slinky runs its 1 replica(s) without it"}
    # a pod being made again (the NodeSet short of its replicas meanwhile) keeps its record
    assert slinky.stale_workers(nodes, [dict(nodesets[0], spec={"replicas": 2})], pods, "slurm") == {
        "cpu-0": "no pod backs cpu-0: its NodeSet slurm-worker-cpu is gone"}
    # a NodeSet made anew under the same name (another UID): its pods, which exist, back their records
    assert slinky.stale_workers({"slinky-1": nodes["slinky-1"]}, [{"metadata": {"name": "slurm-worker-slinky", "uid": "new"},
                                                                   "spec": {"replicas": 2}}], pods, "slurm") == {}
    assert slinky.podinfo(nodes["bm-1"]) is None and slinky.podinfo({"Comment": "(null)"}) is None


def test_node_addresses_name_every_node_with_an_ipv4_internal_ip_with_or_without_a_pod_cidr():
    nodes = [_node("worker-new", "192.168.10.52"),  # no podCIDR (a CNI with its own IPAM): still a source
             _node("n10", "192.168.10.100", pod_cidr="10.244.0.0/24"),
             _node("dual", pod_cidrs=["10.244.1.0/24"], extra_addresses=[{"type": "InternalIP", "address": "fd00::51"},
                                                                         {"type": "InternalIP", "address": "192.168.10.51"}]),
             _node("v6-only", extra_addresses=[{"type": "InternalIP", "address": "fd00::53"}]),
             {"metadata": {"name": "bare"}}]
    assert slinky.node_addresses(nodes) == ["192.168.10.51", "192.168.10.52", "192.168.10.100"]
    assert slinky.node_addresses(LIVE_NODES) == ["10.127.0.30", "10.127.0.31", "10.127.0.32"]
    assert slinky.node_addresses(None) == []


def test_cluster_facts_carry_node_addresses_only_when_nodes_are_given(objects):
    assert "node_addresses" not in slinky.cluster_facts(objects["controller_pods"], objects["services"])
    facts = slinky.cluster_facts(objects["controller_pods"], objects["services"], nodes=LIVE_NODES)
    assert facts["node_addresses"] == ["10.127.0.30", "10.127.0.31", "10.127.0.32"]
