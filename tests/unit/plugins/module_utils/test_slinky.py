# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""slinky: the cluster facts bare metal needs, read from Pods, Services and Secrets as the API returns them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import copy
import json

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import slinky


@pytest.fixture
def objects(fixture_text):
    """Controller pods (0: Running not Ready, 1: Running Ready, 2: Pending), Services and the key Secret."""
    return json.loads(fixture_text("k8s_slinky_objects.json"))


def _make_ready(pod):
    pod = copy.deepcopy(pod)
    pod["status"]["phase"] = "Running"
    pod["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    return pod


def _renamed(pod, name):
    pod = copy.deepcopy(pod)
    pod["metadata"]["name"] = name
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


def test_controller_pod_picks_the_running_and_ready_pod(objects):
    pod = slinky.controller_pod(objects["controller_pods"])
    assert pod["metadata"]["name"] == "slurm-controller-1"


def test_controller_pod_takes_the_first_by_name_among_ready_pods(objects):
    pods = objects["controller_pods"]
    later, earlier = _renamed(pods[1], "slurm-controller-b"), _renamed(pods[1], "slurm-controller-a")
    earlier["status"]["podIP"] = "10.126.0.99"
    assert slinky.controller_pod([later, earlier])["status"]["podIP"] == "10.126.0.99"
    assert slinky.controller_pod([earlier, later])["status"]["podIP"] == "10.126.0.99"


def test_controller_pod_ignores_a_pending_pod_even_with_a_ready_condition(objects):
    pending = copy.deepcopy(objects["controller_pods"][2])
    pending["status"]["conditions"].append({"type": "Ready", "status": "True"})
    pending["metadata"]["name"] = "slurm-controller-00"  # would sort first
    pod = slinky.controller_pod([pending] + objects["controller_pods"])
    assert pod["metadata"]["name"] == "slurm-controller-1"


def test_controller_pod_raises_listing_every_pod_when_none_is_ready(objects):
    pods = [objects["controller_pods"][2], objects["controller_pods"][0]]
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
    pod = copy.deepcopy(objects["controller_pods"][1])
    pod["status"]["conditions"] = [c for c in pod["status"]["conditions"] if c["type"] != "Ready"]
    with pytest.raises(slinky.SlinkyInfoError, match="slurm-controller-1"):
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


def test_slurm_version_of_the_fixture_pod(objects):
    assert slinky.slurm_version(objects["controller_pods"][1]) == "26.05"


# --------------------------------------------------------------------------- node_port


def test_node_port_of_the_fixture_services(objects):
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
    facts = slinky.cluster_facts(objects["controller_pods"], objects["services"])
    assert facts == {
        "controller": {"host": "slurm-controller-1", "address": "10.126.1.7", "port": 6817,
                       "pod": "slurm-controller-1", "node": "k8s-node-2"},
        "nodeport": {"address": "10.127.0.51", "port": 30017, "service": "slurm-controller",
                     "external_traffic_policy": "Local"},
        "slurm_version": "26.05",
    }


def test_cluster_facts_host_falls_back_to_the_pod_name(objects):
    pod = copy.deepcopy(objects["controller_pods"][1])
    del pod["spec"]["hostname"]
    pod["metadata"]["name"] = "ctld-7c9f"
    facts = slinky.cluster_facts([pod], objects["services"])
    assert facts["controller"]["host"] == "ctld-7c9f"
    assert facts["controller"]["pod"] == "ctld-7c9f"


def test_cluster_facts_with_another_port_and_service_name(objects):
    services = objects["services"] + [
        _service("slurm-ctld-alt", "NodePort", [{"name": "slurmctld", "port": 7817, "targetPort": 7817, "nodePort": 30117}]),
    ]
    facts = slinky.cluster_facts([_make_ready(objects["controller_pods"][0])], services, port=7817,
                                 service_name="slurm-ctld-alt")
    assert facts["controller"]["port"] == 7817
    assert facts["controller"]["address"] == "10.126.0.11"
    assert facts["nodeport"] == {"address": "10.127.0.50", "port": 30117, "service": "slurm-ctld-alt",
                                 "external_traffic_policy": "Cluster"}


def test_cluster_facts_raises_without_a_ready_controller(objects):
    with pytest.raises(slinky.SlinkyInfoError, match="pods found: slurm-controller-0, slurm-controller-2"):
        slinky.cluster_facts([objects["controller_pods"][0], objects["controller_pods"][2]], objects["services"])
