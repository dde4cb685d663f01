# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What bare metal needs to know about a Slinky cluster, read from its Kubernetes objects.

Pure functions over objects as the Kubernetes API returns them (dicts), so the module that
fetches them stays thin and this logic is unit-tested.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_TAG_VERSION_RE = re.compile(r"^(\d{2}\.\d{2})(?:\.(\d+))?")


class SlinkyInfoError(ValueError):
    pass


def _ready(pod):
    status = pod.get("status") or {}
    if status.get("phase") != "Running":
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


def controller_pod(pods):
    """The running, ready controller pod (the first by name when there are several)."""
    ready = sorted((p for p in pods or [] if _ready(p)), key=lambda p: p["metadata"]["name"])
    if not ready:
        names = ", ".join(sorted(p["metadata"]["name"] for p in pods or [])) or "none"
        raise SlinkyInfoError("no running and ready controller pod (pods found: %s)" % names)
    return ready[0]


def slurm_version(pod, container="slurmctld"):
    """Slurm version from the slurmctld image tag (Slinky tags images '26.05-ubuntu26.04')."""
    containers = (pod.get("spec") or {}).get("containers") or []
    chosen = [c for c in containers if c.get("name") == container] or containers[:1]
    if not chosen:
        raise SlinkyInfoError("pod %s has no containers" % pod["metadata"]["name"])
    image = chosen[0].get("image", "").split("@", 1)[0]  # drop a pinned digest (@sha256:...)
    tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else ""
    match = _TAG_VERSION_RE.match(tag)
    if not match:
        raise SlinkyInfoError("cannot read a Slurm version from image %r of pod %s" % (image, pod["metadata"]["name"]))
    return match.group(0)


def node_port(services, port=6817, name=None):
    """(service name, nodePort) of the NodePort Service that exposes slurmctld's port."""
    for service in sorted(services or [], key=lambda s: s["metadata"]["name"]):
        if name and service["metadata"]["name"] != name:
            continue
        spec = service.get("spec") or {}
        if spec.get("type") not in ("NodePort", "LoadBalancer"):
            continue
        for entry in spec.get("ports") or []:
            if entry.get("port") == port or entry.get("targetPort") == port:
                if entry.get("nodePort"):
                    return service["metadata"]["name"], entry["nodePort"], spec.get("externalTrafficPolicy", "Cluster")
    raise SlinkyInfoError("no NodePort Service%s exposes port %d" % ((" named %s" % name) if name else "", port))


def secret_value(secret, key):
    """The base64 value of key in a Secret (as stored; never decoded here)."""
    data = (secret or {}).get("data") or {}
    if key not in data:
        raise SlinkyInfoError("Secret %s has no key %s" % ((secret or {}).get("metadata", {}).get("name"), key))
    return data[key]


def cluster_facts(pods, services, port=6817, service_name=None, with_nodeport=True):
    """The part of slime_cluster that comes from the cluster: controller, nodeport, slurm_version.

    with_nodeport=False (network_mode routed) leaves the NodePort out."""
    pod = controller_pod(pods)
    status = pod.get("status") or {}
    facts = {
        "controller": {
            "host": (pod.get("spec") or {}).get("hostname") or pod["metadata"]["name"],
            "address": status.get("podIP"),
            "port": port,
            "pod": pod["metadata"]["name"],
            "node": (pod.get("spec") or {}).get("nodeName"),
        },
        "slurm_version": slurm_version(pod),
    }
    if with_nodeport:
        svc_name, nodeport, policy = node_port(services, port, service_name)
        facts["nodeport"] = {"address": status.get("hostIP"), "port": nodeport, "service": svc_name,
                             "external_traffic_policy": policy}
    return facts
