# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What bare metal needs to know about a Slinky cluster, read from its Kubernetes objects.

Pure functions over objects as the Kubernetes API returns them (dicts), so the module that
fetches them stays thin and this logic is unit-tested.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import ipaddress
import json
import re

from ansible_collections.slime.hybrid.plugins.module_utils import accounting, cluster_model, gres, health, kube_read, metrics, names

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
            if entry.get("nodePort") and (entry.get("port") == port or entry.get("targetPort") == port):
                return service["metadata"]["name"], entry["nodePort"], spec.get("externalTrafficPolicy", "Cluster")
    raise SlinkyInfoError("no NodePort Service%s exposes port %d" % ((" named %s" % name) if name else "", port))


def secret_value(secret, key):
    """The base64 value of key in a Secret (as stored; never decoded here)."""
    data = (secret or {}).get("data") or {}
    if key not in data:
        raise SlinkyInfoError("Secret %s has no key %s" % ((secret or {}).get("metadata", {}).get("name"), key))
    return data[key]


def config_map_name(pod):
    """The ConfigMap the controller pod's /etc/slurm comes from (the operator's <controller>-config,
    the first ConfigMap of the pod's projected volume), or None. pod may also be its StatefulSet,
    whose pod template is read."""
    spec = (pod.get("spec") or {})
    spec = (spec.get("template") or {}).get("spec") or spec
    for volume in spec.get("volumes") or []:
        for source in ((volume.get("projected") or {}).get("sources")) or []:
            if (source.get("configMap") or {}).get("name"):
                return source["configMap"]["name"]
    return None


def _conf_values(slurm_conf, key):
    """Every value of key in slurm.conf text, in order (keys are case-insensitive, as Slurm reads them)."""
    values = []
    for line in (slurm_conf or "").splitlines():
        name, sep, value = line.split("#", 1)[0].strip().partition("=")
        if sep and name.strip().lower() == key.lower():
            values.append(value.strip())
    return values


def slurmctld_hosts(slurm_conf):
    """[(NAME, ADDRESS)] of every SlurmctldHost=NAME(ADDRESS) line, in order; ADDRESS is NAME when absent.

    slurm.conf(5): the first is the primary slurmctld, the others its backups, in the order they
    take over. Slinky's operator v1.2.1 writes one, SlurmctldHost=<controller>-0(<service>.<namespace>);
    its next release one per controller replica, <controller>-N(<controller>-N.<controller>-internal.<namespace>)
    (main, internal/builder/controllerbuilder/controller_config.go); a site adds backups through the
    controller's extraConfMap."""
    entries = []
    for value in _conf_values(slurm_conf, "SlurmctldHost"):
        name, _sep, address = value.partition("(")
        entries.append((name.strip(), address.rstrip(")").strip() or name.strip()))
    if not entries:
        raise SlinkyInfoError("slurm.conf has no SlurmctldHost line")
    return entries


def slurmctld_host(slurm_conf):
    """(NAME, ADDRESS) of the first SlurmctldHost line: the primary, which Slurm connects to at ADDRESS."""
    return slurmctld_hosts(slurm_conf)[0]


def slurmctld_addr(slurm_conf):
    """The SlurmctldAddr of slurm.conf, or None. When it is set, every client and slurmd sends its
    requests there instead of to the SlurmctldHost addresses in turn (Slurm 26.05
    src/common/slurm_protocol_api.c, _open_controller: vip_addr); the operator's next release sets it
    to the controller Service."""
    values = _conf_values(slurm_conf, "SlurmctldAddr")
    return values[-1] if values and values[-1] else None


def _is_ipv6(text):
    # IPv4 addresses and networks never hold a ':'; what is neither is left to the model to name.
    return ":" in str(text)


def _route_key(route):
    try:
        return (0, ipaddress.ip_network(route["cidr"], strict=False), route["via"])
    except ValueError:
        return (1, route["cidr"], route["via"])


def _pod_named(pods, name, ready=False):
    for pod in pods or []:
        if name in (pod["metadata"]["name"], (pod.get("spec") or {}).get("hostname")) and (_ready(pod) or not ready):
            return pod
    return None


def _backup(pods, name, address):
    """A backup SlurmctldHost as the model holds it: its pod's address and the address of the node the
    pod runs on, or None for both when no pod answers to its NAME (its slurmctld runs outside the cluster,
    or not at all: the doctor says so)."""
    pod = _pod_named(pods, name) or {}
    status = pod.get("status") or {}
    return {"host": address, "aliases": [name] if name != address else [],
            "address": status.get("podIP"), "node_address": status.get("hostIP"),
            "pod": (pod.get("metadata") or {}).get("name")}


def podinfo(record):
    """What slurm-operator wrote into a pod worker's node record (Comment, JSON: namespace, podName, node, nodeSetName,
    nodeSetUID - v1.2.1 internal/utils/podinfo/podinfo.go, written by slurmcontrol.go UpdateNodeWithPodInfo for a
    healthy pod), or None: a record it did not write (bare metal, a pod never healthy)."""
    try:
        info = json.loads((record or {}).get("Comment") or "")
    except ValueError:
        return None
    return info if isinstance(info, dict) and info.get("nodeSetUID") and info.get("podName") else None


def stale_workers(nodes, nodesets, pods, namespace="slurm"):
    """The Slurm node records of pod workers that no NodeSet backs any more: {name: why}. slurm-operator (v1.2.1 and
    1.3.0-rc1) never deletes a worker's record: a pod scaled in is drained, then its preStop hook sets the node DOWN
    (internal/controller/nodeset/nodeset_sync.go processCondemned; internal/builder/workerbuilder/worker_app.go), and
    the pods of a NodeSet deleted or renamed in the values go with no drain at all; its prune
    (pruneSlurmNodeRecords) is off by default and only for DaemonSet NodeSets. A record whose pod is gone is stale
    when the NodeSet its podinfo names (by UID) is gone, or when that NodeSet already runs as many pods as its
    replicas: the operator picks which pod a scale-in removes (its own sort, not the highest ordinal), and a pod it is
    making again leaves the NodeSet short of its replicas meanwhile. A pod of that name that exists backs the record
    whatever its NodeSet (one made anew under the same name). nodes: parsed `scontrol show node` records; nodesets:
    NodeSet objects of `namespace`; pods: its NodeSet pods (their ownerReferences name their NodeSet)."""
    by_uid = dict(((n.get("metadata") or {}).get("uid"), n) for n in nodesets or [])
    live = set((p.get("metadata") or {}).get("name") for p in pods or [])
    owned = {}
    for pod in pods or []:
        for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
            owned[ref.get("uid")] = owned.get(ref.get("uid"), 0) + 1
    stale = {}
    for name in sorted(nodes or {}):
        info = podinfo(nodes[name])
        if info is None or info.get("namespace") != namespace or info["podName"] in live:
            continue
        nodeset = by_uid.get(info["nodeSetUID"])
        if nodeset is None:
            stale[name] = "no pod backs %s: its NodeSet %s is gone" % (name, info.get("nodeSetName") or "?")
            continue
        replicas = int((nodeset.get("spec") or {}).get("replicas", 1) or 0)
        if owned.get(info["nodeSetUID"], 0) >= replicas:
            stale[name] = "no pod backs %s: its NodeSet %s runs its %d replica(s) without it" % (
                name, (nodeset.get("metadata") or {}).get("name"), replicas)
    return stale


def _internal_ipv4(node):
    """The Node's first IPv4 InternalIP, or None."""
    return next((a.get("address") for a in (node.get("status") or {}).get("addresses") or []
                 if a.get("type") == "InternalIP" and a.get("address") and not _is_ipv6(a["address"])), None)


def node_addresses(nodes):
    """Every Node's IPv4 InternalIP, sorted: where pods with the host's network (OpenShift's hostnetwork mode),
    and pods whose egress the CNI masquerades (network_mode nat), reach bare metal from. Unlike pod_routes, a
    Node without a podCIDR (a CNI with its own IPAM) is not left out."""
    return sorted(set(a for a in (_internal_ipv4(node) for node in nodes or []) if a),
                  key=lambda a: tuple(int(part) for part in a.split(".")))


def pod_routes(nodes):
    """[{cidr, via}] for network_mode routed: each IPv4 CIDR of a Node's spec.podCIDRs (else
    spec.podCIDR) via the Node's IPv4 InternalIP, sorted by network.

    The controller-manager allocates podCIDRs (--allocate-node-cidrs) in registration order, so
    only the running cluster knows them. A Node without a podCIDR yet (just registered, or a CNI
    with its own IPAM) or without an IPv4 InternalIP is left out; IPv6 entries are skipped, as
    the bare-metal side is IPv4 only (cluster_model refuses an IPv6 route by name)."""
    routes = []
    for node in nodes or []:
        spec = node.get("spec") or {}
        cidrs = spec.get("podCIDRs") or ([spec["podCIDR"]] if spec.get("podCIDR") else [])
        via = _internal_ipv4(node)
        if via is None:
            continue
        routes.extend({"cidr": cidr, "via": via} for cidr in cidrs if cidr and not _is_ipv6(cidr))
    return sorted(routes, key=_route_key)


def cluster_facts(pods, services, port=6817, service_name=None, with_nodeport=True, slurm_conf=None, nodes=None):
    """The part of slime_cluster that comes from the cluster: controller, nodeport, slurm_version,
    and pod_routes and node_addresses when nodes (the Node objects) are given.

    with_nodeport=False (network_mode routed) leaves the NodePort out. slurm_conf (the operator's
    rendered slurm.conf): the controller is the pod the first SlurmctldHost (the primary) names, while it
    is ready, else the first ready one; its host is that SlurmctldHost's address part, which Slurm
    connects to, its name part and SlurmctldAddr (when set) are aliases. Every other SlurmctldHost is a
    backup, with its pod's address and node when a pod answers to its name. Without slurm_conf: the
    first ready pod, by its hostname, and no backups."""
    pod = controller_pod(pods)
    entries, vip = [], None
    if slurm_conf is not None:
        entries, vip = slurmctld_hosts(slurm_conf), slurmctld_addr(slurm_conf)
        # The primary's pod is the one its SlurmctldHost names (a StatefulSet pod's hostname is its name).
        pod = _pod_named(pods, entries[0][0], ready=True) or pod
    status = pod.get("status") or {}
    host = (pod.get("spec") or {}).get("hostname") or pod["metadata"]["name"]
    aliases = []
    if entries:
        # Slurm connects to the primary at ADDRESS, or to SlurmctldAddr when set: both name this pod.
        name, host = entries[0]
        aliases = [a for a in (name, vip) if a and a != host]
    facts = {
        "controller": {
            "host": host,
            "aliases": sorted(set(aliases), key=aliases.index),
            "address": status.get("podIP"),
            "port": port,
            "pod": pod["metadata"]["name"],
            "node": (pod.get("spec") or {}).get("nodeName"),
            "backups": [_backup(pods, name, address) for name, address in entries[1:]],
        },
        "slurm_version": slurm_version(pod),
    }
    if with_nodeport:
        svc_name, nodeport, policy = node_port(services, port, service_name)
        facts["nodeport"] = {"address": status.get("hostIP"), "port": nodeport, "service": svc_name,
                             "external_traffic_policy": policy}
    if nodes is not None:
        facts["pod_routes"] = pod_routes(nodes)
        facts["node_addresses"] = node_addresses(nodes)
    return facts


# The options of what module slinky_info reads, which module slinky_state also takes (its option facts): one
# argument spec for both, and the read_facts() keywords they make.
FACTS_OPTIONS = {
    "port": {"type": "int", "default": 6817},
    "service_name": {"type": "str"},
    "nodeport": {"type": "bool", "default": True},
    "pod_routes": {"type": "bool", "default": False},
    "include_key": {"type": "bool", "default": False},
    "key_secret": {"type": "str", "default": "slurm-auth-slurm", "no_log": False},
    "key_name": {"type": "str", "default": "slurm.key", "no_log": False},
}


def facts_keywords(options):
    """read_facts()'s keywords for the FACTS_OPTIONS a module was given (the key only with include_key)."""
    return {"port": options["port"], "service_name": options["service_name"], "with_nodeport": options["nodeport"],
            "with_pod_routes": options["pod_routes"], "key_secret": options["key_secret"] if options["include_key"] else None,
            "key_name": options["key_name"]}


# Module slinky_info's own options (beside kubernetes.core's connection options: kube_read.argument_spec).
INFO_OPTIONS = dict(
    namespace={"type": "str", "default": "slurm"},
    controller_selector={"type": "list", "elements": "str", "default": ["app.kubernetes.io/name=slurmctld"]},
    **FACTS_OPTIONS
)


def info(params, find, client=None):
    """Module slinky_info's read with its validated params (INFO_OPTIONS), over find() (kube_read.read):
    ({cluster, slurm_key_b64}, warnings). Raises kube_read.ReadError."""
    def find_nodes_explained(kind, api_version, **options):
        try:
            return find(kind, api_version, **options)
        except kube_read.ReadError as exc:
            if kind != "Node":
                raise
            raise kube_read.ReadError("slinky_info: reading the Nodes for pod_routes (needs list on nodes at cluster scope, "
                                      "a ClusterRole): %s" % exc, kind=kind)

    try:
        return read_facts(find_nodes_explained, params["namespace"], params["controller_selector"], **facts_keywords(params))
    except SlinkyInfoError as exc:
        raise kube_read.ReadError("slinky_info: %s" % exc)


def read_facts(find, namespace="slurm", controller_selector=("app.kubernetes.io/name=slurmctld",), port=6817,
               service_name=None, with_nodeport=True, with_pod_routes=False, key_secret=None, key_name="slurm.key"):
    """What module slinky_info returns, read through find(kind, api_version, name=None, namespace=None,
    label_selectors=None) (objects as the API returns them): {cluster, slurm_key_b64 (with key_secret)} and the
    warnings to give. The Node objects are read only with with_pod_routes (cluster scope: a ClusterRole)."""
    pods = find("Pod", "v1", namespace=namespace, label_selectors=list(controller_selector))
    services = find("Service", "v1", namespace=namespace)
    slurm_conf, config_name = None, config_map_name(controller_pod(pods))
    if config_name:
        config = find("ConfigMap", "v1", name=config_name, namespace=namespace)
        slurm_conf = ((config or [{}])[0].get("data") or {}).get("slurm.conf")
    nodes = find("Node", "v1") if with_pod_routes else None
    result, warnings = {"cluster": cluster_facts(pods, services, port, service_name, with_nodeport, slurm_conf, nodes)}, []
    if nodes is not None and not result["cluster"]["pod_routes"]:
        warnings.append("no Node has an IPv4 spec.podCIDR and InternalIP (%d Nodes read); with a CNI that allocates "
                        "pod addresses itself, state pod_routes in slime_cluster" % len(nodes))
    policy = result["cluster"].get("nodeport", {}).get("external_traffic_policy")
    if policy not in (None, "Local"):
        warnings.append("Service %s has externalTrafficPolicy %s: kube-proxy SNATs bare-metal registrations and "
                        "slurmctld records the wrong NodeAddr; use Local" % (result["cluster"]["nodeport"]["service"], policy))
    if key_secret:
        secret = find("Secret", "v1", name=key_secret, namespace=namespace)
        if not secret:
            raise SlinkyInfoError("Secret %s/%s not found" % (namespace, key_secret))
        result["slurm_key_b64"] = secret_value(secret[0], key_name)
    return result, warnings


# --------------------------------------------------------------------------- chart values
#
# Checked against Slinky v1.2.1 (helm/slurm/values.yaml and templates/, and the operator's
# internal/builder/): the keys below are the ones the chart passes on and the operator merges.

# ServiceAccounts of the chart's pods, by component. Neither the chart nor the operator makes
# any: without these every pod runs as `default`. The values create them (extraObjects) and
# name them in each pod template, so OpenShift's SCCs can be granted to exactly these. A site's
# slinky_service_accounts names those it wants otherwise (service_account_names).
SERVICE_ACCOUNTS = {"controller": "slurm-controller", "worker": "slurm-worker",
                    "restapi": "slurm-restapi", "login": "slurm-login",
                    "accounting": "slurm-accounting", "database": accounting.MANAGED}

# The partition that holds every node: the NodeSets' pods and the dynamic bare-metal nodes
# (Slurm adds a dynamic node to partitions with Nodes=ALL). The chart enables none by default.
DEFAULT_PARTITIONS = {"all": {"enabled": True, "nodesets": ["ALL"],
                              "configMap": {"Default": "YES", "MaxTime": "UNLIMITED", "State": "UP"}}}


def service_account_names(given=None):
    """The ServiceAccount of every kind of pod: those the site's slinky_service_accounts names, the
    collection's (SERVICE_ACCOUNTS) for the others."""
    return dict(SERVICE_ACCOUNTS, **(given or {}))


def service_account_errors(service_accounts):
    """slinky_service_accounts may name a valid ServiceAccount for any kind of pod."""
    if not isinstance(service_accounts, dict):
        return ["slinky_service_accounts=%r must map kinds of Slinky pods (%s) to names"
                % (service_accounts, ", ".join(sorted(SERVICE_ACCOUNTS)))]
    unknown = sorted(set(service_accounts) - set(SERVICE_ACCOUNTS))
    errors = ["slinky_service_accounts: %s is not a kind of Slinky pod (allowed: %s)"
              % (", ".join(unknown), ", ".join(sorted(SERVICE_ACCOUNTS)))] if unknown else []
    return errors + names.dns_label_errors(
        dict(("slinky_service_accounts.%s" % kind, name) for kind, name in sorted(service_accounts.items())))


def _host_ports(ports):
    return [{"containerPort": port, "hostPort": port, "protocol": "TCP"} for port in ports]


def _pod_set(options, pod_spec):
    """A NodeSet's or LoginSet's values: the user's options, enabled unless they say otherwise,
    their podSpec completed by pod_spec."""
    return dict(options, enabled=options.get("enabled", True), podSpec=dict(options.get("podSpec") or {}, **pod_spec))


FLAGS = ("auto", "true", "false")


def input_errors(inputs):
    """Every problem of the slinky role's inputs at once, read by its `validate` entry point (and so by
    site.yml's first play) before anything changes. inputs: the value of each slinky_NAME under NAME
    (cluster, namespace, operator_namespace, cert_manager_namespace, nodesets, loginsets, service_accounts,
    slurm_values, openshift, install_cert_manager, nodeaddr_sync_interval) and `renamed`: the role's old
    variables the site still sets.

    The checks that need a valid model (the site's chart values against its GPUs and health check)
    wait for the model's own errors to be fixed; the LoginSets need only a valid network mode."""
    intent = inputs.get("cluster")
    model_errors = cluster_model.intent_errors(intent)
    errors = list(model_errors)
    errors += names.dns_label_errors(dict(("slinky_" + key, inputs.get(key))
                                          for key in ("namespace", "operator_namespace", "cert_manager_namespace")))
    errors += names.dns_label_errors(list(inputs.get("nodesets") or {}), "slinky_nodesets")
    errors += names.dns_label_errors(list(inputs.get("loginsets") or {}), "slinky_loginsets")
    errors += service_account_errors(inputs.get("service_accounts"))
    model = None if model_errors else cluster_model.normalize_intent(intent)
    mode = model["network_mode"] if model else dict(cluster_model.DEFAULTS, **(intent if isinstance(intent, dict) else {})).get("network_mode")
    if mode in cluster_model.NETWORK_MODES:
        errors += loginset_errors({"network_mode": mode}, inputs.get("loginsets"))
    if model:
        errors += model_values_errors(model, inputs.get("slurm_values"), inputs.get("nodesets"))
    for key in ("openshift", "install_cert_manager"):
        if str(inputs.get(key)).lower() not in FLAGS:
            errors.append("slinky_%s=%s is not one of %s" % (key, inputs.get(key), ", ".join(FLAGS)))
    interval = inputs.get("nodeaddr_sync_interval")
    if isinstance(interval, bool) or not str(interval).isdigit() or int(interval) < 1:
        errors.append("slinky_nodeaddr_sync_interval=%s must be a whole number of seconds, 1 or more" % interval)
    if "openshift_service_accounts" in (inputs.get("renamed") or []):
        errors.append("slinky_openshift_service_accounts was replaced by slinky_service_accounts ({controller: NAME, worker: "
                      "NAME, restapi: NAME, login: NAME}); the role now creates them")
    return errors


def loginset_errors(model, loginsets):
    """LoginSets need srun's range reachable from bare metal at the login pod's address.

    In network_mode routed the pod IP is reachable; in nat and hostnetwork bare metal would
    answer the login pod's IP, which it cannot route to, so an srun from there hangs."""
    if loginsets and model["network_mode"] != "routed":
        return ["slinky_loginsets=%s: srun or salloc in a login pod cannot reach bare-metal workers in "
                "network_mode %s (slurmd and slurmstepd connect back to the login pod's IP, which bare metal "
                "cannot route to); use network_mode routed, or submit from the controller pod or a bare-metal host"
                % (",".join(sorted(loginsets)), model["network_mode"])]
    return []


# --------------------------------------------------------------------------- NodeAddr sync (nat)
#
# In network_mode nat every registration of a pod worker sets its NodeAddr back to the pod IP
# (Slurm 26.05 src/slurmctld/node_mgr.c, validate_node_specs), including the re-registration
# slurmctld asks of every node about every 20 pings (src/slurmctld/ping_nodes.c). Two pieces keep
# it at the node's address within seconds, with nothing but Slurm's own commands:
# - each NodeSet pod's slurmd container states its node's address (downward API status.hostIP)
#   in the Slurm node's Extra once it has registered (a postStart hook; `scontrol update` as
#   Slinky's own preStop hook does). A registration never clears it: slurmctld applies a
#   registration's Extra only when slurmd sent one and the host rebooted (node_mgr.c,
#   "Apply slurmd-supplied fields"), and the pod's slurmd sends none;
# - a sidecar beside slurmctld (a native sidecar, as Slinky's own `reconfigure`, with the same
#   mounts: slurm.conf and slurmctld's auth socket) reads every node once per interval and
#   points the NodeAddr of each node whose Extra names another address at it, all in one
#   `scontrol update NodeName=a,b NodeAddr=x,y`.

NODEADDR_EXTRA_KEY = "slime.hybrid/nodeaddr"
NODEADDR_CONTAINER = "slime-nodeaddr"
# Seconds between two reads of the node table when nodeaddr_sync names none (the role's default too).
NODEADDR_SYNC_INTERVAL = 2
NODEADDR_HOST_IP_ENV = "SLIME_HOST_IP"

# Every image the slinky role installs, by chart: where the chart's values name it, and the
# repository the chart gives it by default. slurm and slurm-operator: Slinky's charts 1.2.1
# (helm/slurm/values.yaml, helm/slurm-operator/values.yaml; the operator's images take the
# chart's appVersion as tag); cert-manager: jetstack's chart (deploy/charts/cert-manager/values.yaml,
# v1.21.1; a full `repository` wins over its imageRegistry/imageNamespace, and older releases
# name the same repositories). tests/unit compare these with the charts.
CHART_IMAGES = {
    "slurm": {
        "controller.slurmctld.image": "ghcr.io/slinkyproject/slurmctld",
        "controller.reconfigure.image": "ghcr.io/slinkyproject/slurmctld",
        "controller.logfile.image": "docker.io/library/alpine",
        "restapi.slurmrestd.image": "ghcr.io/slinkyproject/slurmrestd",
        "accounting.slurmdbd.image": "ghcr.io/slinkyproject/slurmdbd",
        "loginsetDefaults.login.image": "ghcr.io/slinkyproject/login",
        "loginsetDefaults.initconf.image": "docker.io/library/alpine",
        "nodesetDefaults.slurmd.image": "ghcr.io/slinkyproject/slurmd",
        "nodesetDefaults.logfile.image": "docker.io/library/alpine",
    },
    "slurm-operator": {
        "operator.image": "ghcr.io/slinkyproject/slurm-operator",
        "webhook.image": "ghcr.io/slinkyproject/slurm-operator-webhook",
    },
    "cert-manager": {
        "image": "quay.io/jetstack/cert-manager-controller",
        "webhook.image": "quay.io/jetstack/cert-manager-webhook",
        "cainjector.image": "quay.io/jetstack/cert-manager-cainjector",
        "acmesolver.image": "quay.io/jetstack/cert-manager-acmesolver",
        "startupapicheck.image": "quay.io/jetstack/cert-manager-startupapicheck",
    },
}

# The chart's own default, used when the values name no slurmctld image (slurm chart 1.2.1,
# helm/slurm/values.yaml, controller.slurmctld.image; tests/unit compare it with the chart).
CHART_SLURMCTLD_IMAGE = {"repository": CHART_IMAGES["slurm"]["controller.slurmctld.image"], "tag": "26.05-ubuntu26.04"}

# postStart of a NodeSet pod's slurmd container: until the node exists in slurmctld (slurmd has
# registered), retried for three minutes, never failing the container.
NODEADDR_EXTRA = 'extra="{\\"%s\\":\\"$%s\\"}"' % (NODEADDR_EXTRA_KEY, NODEADDR_HOST_IP_ENV)
NODEADDR_POST_START = (
    NODEADDR_EXTRA + '; i=0; until scontrol update nodename="$(hostname)" extra="$extra" >/dev/null 2>&1; do '
    'i=$((i+1)); [ "$i" -lt 90 ] || exit 0; sleep 2; done')

# What the sidecar's awk reads in `scontrol --oneliner show node`: NodeName, NodeAddr and the
# address in Extra; prints "NODE NODEADDR ADDRESS" for each node whose two addresses differ.
NODEADDR_DRIFT_AWK = r"""{
  name = ""; addr = ""; want = ""
  for (i = 1; i <= NF; i++) {
    if ($i ~ /^NodeName=/) name = substr($i, 10)
    else if ($i ~ /^NodeAddr=/) addr = substr($i, 10)
    else if ($i ~ /^Extra=.*"KEY":"[0-9A-Fa-f.:]+"/) { want = $i; sub(/.*"KEY":"/, "", want); sub(/".*/, "", want) }
  }
  if (name != "" && want != "" && want != addr) print name, addr, want
}""".replace("KEY", NODEADDR_EXTRA_KEY.replace(".", "\\.").replace("/", "\\/"))

# The sidecar: one update for all drifted nodes, a log line per node healed ("NODE: NodeAddr OLD ->
# NEW"), one when slurmctld stops or starts answering.
NODEADDR_SYNC_SCRIPT = r"""set -u
trap 'exit 0' TERM INT
interval="${SLIME_NODEADDR_INTERVAL:-2}"
log() { echo "[$(date -u +%Y-%m-%dT%H:%M:%SZ)] $*"; }
log "NodeAddr of pod workers follows the address in their Extra, checked every ${interval}s"
answering=unknown
while :; do
  if nodes="$(scontrol --oneliner show node 2>&1)"; then
    [ "$answering" = yes ] || log "slurmctld answers"
    answering=yes
    drift="$(printf '%s\n' "$nodes" | awk 'AWK')"
    if [ -n "$drift" ]; then
      names="$(printf '%s\n' "$drift" | awk '{print $1}' | paste -sd, -)"
      addrs="$(printf '%s\n' "$drift" | awk '{print $3}' | paste -sd, -)"
      if out="$(scontrol update nodename="$names" nodeaddr="$addrs" 2>&1)"; then
        printf '%s\n' "$drift" | while read -r name addr want; do log "$name: NodeAddr $addr -> $want"; done
      else
        log "scontrol update nodename=$names nodeaddr=$addrs failed: $out"
      fi
    fi
  else
    [ "$answering" = no ] || log "slurmctld does not answer: $nodes"
    answering=no
  fi
  sleep "$interval" & wait $!
done
""".replace("AWK", NODEADDR_DRIFT_AWK)


def mirrored(repository, registry):
    """An image repository as a mirror that keeps each image's path names it:
    ghcr.io/slinkyproject/slurmd in mirror.example.org/hpc is mirror.example.org/hpc/slinkyproject/slurmd
    (the first part of a name is its registry when it has a '.' or ':' or is localhost; a name
    without one is Docker Hub's: alpine is library/alpine)."""
    first, rest = (repository.split("/", 1) + [""])[:2]
    if rest and ("." in first or ":" in first or first == "localhost"):
        path = rest
    else:
        path = repository if rest else "library/" + repository
    return "%s/%s" % (registry.rstrip("/"), path)


def image_values(chart, registry):
    """Values of `chart` (a key of CHART_IMAGES) that name each of its images in registry
    ({} without one): repositories only, so the chart's tags stay, and values a site states
    (merged over these) win."""
    values = {}
    for path, repository in (CHART_IMAGES[chart].items() if registry else ()):
        node = values
        for key in path.split("."):
            node = node.setdefault(key, {})
        node["repository"] = mirrored(repository, registry)
    return values


def image_ref(image):
    """An image as the chart states it (a string, or repository/tag/digest) as a reference, as the
    chart's own slurm.format-image does (helm/slurm/templates/_helpers.tpl, 1.2.1)."""
    if isinstance(image, str):
        return image
    image = image or {}
    if image.get("digest"):
        return "%s@%s" % (image["repository"], image["digest"])
    return "%s:%s" % (image["repository"], image["tag"])


def nodeaddr_sync_container(image=None, interval=NODEADDR_SYNC_INTERVAL):
    """The sidecar beside slurmctld that keeps pod workers' NodeAddr at their Extra's address."""
    return {
        "name": NODEADDR_CONTAINER,
        # A repository without a tag (an image_registry rewrite) keeps the chart's tag.
        "image": image_ref(image if isinstance(image, str) else dict(CHART_SLURMCTLD_IMAGE, **(image or {}))),
        # A native sidecar (Kubernetes 1.29+), as Slinky's reconfigure container.
        "restartPolicy": "Always",
        "command": ["tini", "-g", "--", "bash", "-c", NODEADDR_SYNC_SCRIPT],
        "env": [{"name": "SLIME_NODEADDR_INTERVAL", "value": str(interval)}],
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        # The operator's volumes of the controller pod (internal/builder/common/const.go).
        "volumeMounts": [{"name": "slurm-etc", "mountPath": "/etc/slurm", "readOnly": True},
                         {"name": "slurm-authsocket", "mountPath": "/run/slurmctld", "readOnly": True}],
    }


def nodeaddr_sync_slurmd(slurmd):
    """A NodeSet's slurmd container values with its node's address stated in Extra (postStart)."""
    lifecycle = dict(slurmd.get("lifecycle") or {})
    lifecycle["postStart"] = {"exec": {"command": ["/bin/sh", "-c", NODEADDR_POST_START]}}
    env = [e for e in slurmd.get("env") or [] if e.get("name") != NODEADDR_HOST_IP_ENV]
    env.append({"name": NODEADDR_HOST_IP_ENV, "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}})
    return dict(slurmd, lifecycle=lifecycle, env=env)


def mirrored_ref(ref, registry):
    """An image reference (repository:tag or repository@digest) in registry (as it is without one)."""
    if not registry:
        return ref
    cut = ref.find("@") if "@" in ref else (ref.rfind(":") if ref.rfind(":") > ref.rfind("/") else len(ref))
    return mirrored(ref[:cut], registry) + ref[cut:]


def chart_values(model, nodesets=None, loginsets=None, service_accounts=None, nodeaddr_sync=None, accounting_database=None):
    """Values for Slinky's `slurm` chart that expose the cluster as the model describes.

    model: a normalized model (cluster_model.normalize()). nodesets / loginsets: {name: chart
    values of that NodeSet/LoginSet}; a NodeSet may also say host_network (default: true in
    network_mode hostnetwork).

    - SrunPortRange goes into the controller's extraConfMap, so every srun (controller, login,
      batch scripts in pod workers) listens inside the range;
    - the controller Service is a NodePort with externalTrafficPolicy: Local, so bare-metal
      registrations reach slurmctld without SNAT;
    - hostPorts publish the srun range of the controller pod, and 6818 + the srun range of
      every NodeSet pod, on their node's address. They go to `controller.slurmctld.ports` and
      `nodesets.<n>.slurmd.ports`, which the operator merges into its own container by port;
      `podSpec.containers` would be APPENDED as a second, image-less container that the API
      server refuses (operator internal/builder/common/pod_template.go, structutils.MergeList);
    - a NodeSet with host_network runs on the node's network instead: NodeAddr is the node IP and
      needs no fix; its srun range is declared as ports all the same, so the scheduler never puts
      it beside a pod that publishes that range as hostPorts;
    - in network_mode routed, pods are reached at their pod IPs: no NodePort, no hostPorts;
    - every pod runs as a ServiceAccount of its own (created by the chart through extraObjects);
    - partition `all` holds every node, pods and bare metal alike;
    - with the model's health checks on, slurm.conf runs the health check program on every node; the
      chart creates its ConfigMap (extraObjects) and every NodeSet's slurmd mounts it where
      HealthCheckProgram names it (module_utils/health.py);
    - nodeaddr_sync ({image, interval}, or None for none): in network_mode nat, with a NodeSet on
      the pod network, each such NodeSet's slurmd states its node's address in Extra and a
      sidecar beside slurmctld keeps NodeAddr at it (above);
    - with the model's accounting on, slurmdbd with the model's database, AccountingStorageTRES, and
      the database the collection runs when the model names none (accounting_database: {image (in the
      model's image_registry), claim, args}; module_utils/accounting.py);
    - with the model's controller metrics on, the chart's controller.metrics (MetricsType; module_utils/metrics.py).
    """
    sas = service_account_names(service_accounts)
    srun = model["srun_port_range"]
    srun_ports = list(range(srun["first"], srun["last"] + 1))
    mode = model["network_mode"]
    controller = {"extraConfMap": {"SrunPortRange": srun["conf"]},
                  "podSpec": {"serviceAccountName": sas["controller"]}}
    if mode != "routed":
        controller["service"] = {
            "spec": {"type": "NodePort", "externalTrafficPolicy": "Local"},
            "port": model["controller"]["port"],
            "nodePort": model["nodeport"]["port"],
        }
        controller["slurmctld"] = {"ports": _host_ports(srun_ports)}
    else:
        # Said, not left out: the operator keeps the type of an existing Service when the
        # values name none (seen switching a cluster from nat to routed).
        controller["service"] = {"spec": {"type": "ClusterIP"}}
    values = {
        "clusterName": model["name"],
        "controller": controller,
        "restapi": {"podSpec": {"serviceAccountName": sas["restapi"]}},
        "partitions": copy.deepcopy(DEFAULT_PARTITIONS),
        "nodesets": {},
        "loginsets": {},
        "extraObjects": [
            {"apiVersion": "v1", "kind": "ServiceAccount", "automountServiceAccountToken": False,
             # No namespace: Helm (and Argo CD, Flux) put it in the release's namespace.
             "metadata": {"name": sas[component], "labels": {"app.kubernetes.io/component": component}}}
            for component in sorted(sas) if component not in _unused_service_accounts(model)
        ],
    }
    nat_nodesets = False
    for name in sorted(nodesets or {}):
        options = dict(nodesets[name] or {})
        host_network = options.pop("host_network", mode == "hostnetwork")
        pod_spec = {"serviceAccountName": sas["worker"]}
        if host_network:
            pod_spec.update(hostNetwork=True, dnsPolicy="ClusterFirstWithHostNet")
            # srun in the pod (a batch script) listens on the node's own ports: declared, the
            # scheduler keeps the pod off a node where another pod publishes the same range as
            # hostPorts (the controller's), whose DNAT would take srun's connections.
            options["slurmd"] = dict(options.get("slurmd") or {}, ports=_host_ports(srun_ports))
        elif mode != "routed":  # routed: pod IPs are reachable as they are
            # The NodeSet's own slurmd settings (image, resources) stay; only the ports are the model's.
            options["slurmd"] = dict(options.get("slurmd") or {},
                                     ports=_host_ports([model["slurmd_port"]] + srun_ports))
            if nodeaddr_sync:
                options["slurmd"] = nodeaddr_sync_slurmd(options["slurmd"])
                nat_nodesets = True
        checks = health.of(model)
        if checks:
            # the health check program where slurm.conf's HealthCheckProgram names it (appended to the site's own)
            options["slurmd"] = dict(options.get("slurmd") or {})
            options["slurmd"]["volumeMounts"] = list(options["slurmd"].get("volumeMounts") or []) + [health.pod_mount()]
            pod_spec["volumes"] = list((options.get("podSpec") or {}).get("volumes") or []) + [health.pod_volume()]
        values["nodesets"][name] = _pod_set(options, pod_spec)
    if health.of(model):
        controller["extraConfMap"].update(health.slurm_conf(model["health"]))
        values["extraObjects"].append(health.config_map(model["health"]))
    if model.get("gpus"):
        _gpu_values(values, model["gpus"])
    if nat_nodesets:
        sidecar = nodeaddr_sync_container(nodeaddr_sync.get("image"), nodeaddr_sync.get("interval", NODEADDR_SYNC_INTERVAL))
        controller["podSpec"]["initContainers"] = [sidecar]
    for name in sorted(loginsets or {}):
        values["loginsets"][name] = _pod_set(loginsets[name] or {}, {"serviceAccountName": sas["login"]})
    database = dict(accounting_database or {})
    if database.get("image"):
        database["image"] = mirrored_ref(database["image"], model.get("image_registry"))
    database["service_account"] = sas["database"]
    metrics.chart_values(values, model)
    return accounting.chart_values(values, model, sas["accounting"], database)


def _unused_service_accounts(model):
    """The kinds of pods the model runs none of: slurmdbd without accounting, the database with none or the site's."""
    section = accounting.of(model)
    return (("accounting", "database") if not section else () if section["managed"] else ("database",))


# The pod template annotation that carries the digest of the gres.conf the values hold: Slinky's operator
# makes the controller pod again when slurm.conf changes (the hash of its own ConfigMap in the pod
# template, internal/builder/controllerbuilder/controller_app.go, getHashes), not when a file of
# configFiles does, and slurmctld hands configless slurmd the gres.conf it read at its start.
GRES_CONF_ANNOTATION = "slime.hybrid/gres-conf"


def _gpu_values(values, gpus):
    """The controller's side of the model's GPUs: GresTypes, the controller's gres.conf (which configless
    slurmd fetches; a line per group of nodes), the digest that makes the controller pod read a changed one,
    and the GPU partition: a slurm.conf NodeSet of the nodes with the GPU feature, which a dynamic node
    joins by its feature (the chart's partitions name only its NodeSets, so the lines go into extraConfMap).
    Partition `all` keeps holding every node."""
    controller = values["controller"]
    # (AccountingStorageTRES=gres/gpu only with accounting, module_utils/accounting.tres: slurmctld 26.05
    # refuses to start with it and no slurmdbd, "slurmdbd is required to run with TRES gres/gpu", seen on the lab.)
    controller["extraConfMap"]["GresTypes"] = gres.NAME
    if gpus["partition"]:
        controller["extraConfMap"]["NodeSet"] = "%s Feature=%s" % (gres.nodeset(gpus), gpus["feature"])
        controller["extraConfMap"]["PartitionName"] = "%s Nodes=%s MaxTime=UNLIMITED State=UP" % (
            gpus["partition"], gres.nodeset(gpus))
    values["configFiles"] = {"gres.conf": gres.gres_conf(gpus)}
    controller["metadata"] = {"annotations": {GRES_CONF_ANNOTATION: gres.gres_conf_digest(gpus)}}


def model_values_errors(model, slurm_values, nodesets=None):
    """What in the site's chart values works against the model: with GPUs, a gres.conf of its own in configFiles
    (the model writes the controller's gres.conf), a GresTypes, NodeSet or PartitionName in extraConfMap, or a
    NodeSet named as the GPU NodeSet; with health checks on, a HealthCheck* setting in extraConfMap; with
    accounting on, what module_utils/accounting.values_errors names."""
    extra = (((slurm_values or {}).get("controller") or {}).get("extraConfMap") or {})
    errors = accounting.values_errors(model, slurm_values)
    if health.of(model):
        errors += ["slinky_slurm_values.controller.extraConfMap.%s is set and slime_cluster.health is on: the collection "
                   "writes %s from slime_cluster.health; set it there, or health.enabled: false to run a program of "
                   "your own" % (key, key) for key in sorted(health.slurm_conf(model["health"])) if key in extra]
    gpus = model.get("gpus")
    if not gpus:
        return errors
    if "gres.conf" in ((slurm_values or {}).get("configFiles") or {}):
        errors.append("slinky_slurm_values.configFiles has a gres.conf and slime_cluster.gpus is set: the collection writes "
                      "the controller's gres.conf from slime_cluster.gpus; state the GPUs there")
    errors += ["slinky_slurm_values.controller.extraConfMap.%s is set and slime_cluster.gpus is set: the collection "
               "writes %s from slime_cluster.gpus" % (key, key) for key in ("GresTypes", "NodeSet", "PartitionName")
               if key in extra]
    if gres.nodeset(gpus) in (nodesets or {}):
        errors.append("slinky_nodesets.%s: the name of the slurm.conf NodeSet of the GPU nodes (slime_cluster.gpus.feature "
                      "%s); name the NodeSet otherwise" % (gres.nodeset(gpus), gpus["feature"]))
    return errors


def service_drift(service, values):
    """How the live controller Service differs from what the chart values ask for ([] when not).

    Slinky's operator v1.2.1 creates the controller Service from the Controller's spec.service
    but never updates it afterwards (internal/utils/objectutils/patch.go, SyncObject with
    shouldUpdate=false), so a changed nodePort, type or traffic policy reaches it only when the
    Service is made again. values: the `controller` values of chart_values()."""
    want = (values or {}).get("service") or {}
    want_spec = dict({"type": "ClusterIP"}, **(want.get("spec") or {}))
    spec = dict({"type": "ClusterIP"}, **((service or {}).get("spec") or {}))  # Kubernetes' default type
    port = (spec.get("ports") or [{}])[0]
    # Compared only where the values name them (the type always).
    return ["%s %s, wants %s" % (key, live.get(key), wanted[key])
            for key, live, wanted in (("type", spec, want_spec), ("externalTrafficPolicy", spec, want_spec),
                                      ("port", port, want), ("nodePort", port, want))
            if key in wanted and live.get(key) != wanted[key]]


def _chart_conf_value(value):
    # sprig's join: a list's items joined by ",", anything else as text (Go's %v: true, 2)
    if isinstance(value, (list, tuple)):
        return ",".join(_chart_conf_value(item) for item in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def config_drift(config_map, values):
    """The lines the controller's values put into slurm.conf that the operator's rendered slurm.conf (its
    ConfigMap) does not hold yet ([] once it does): each extraConfMap entry, as the slurm chart v1.2.1 writes
    it (helm/slurm/templates/_helpers.tpl, slurm._toList: KEY=VALUE, a list joined by ",", an empty
    value left out), or each line of extraConf, which the chart passes instead when it is set
    (templates/controller/_helpers.tpl). The operator renders the ConfigMap, then the StatefulSet whose
    pod template carries the ConfigMap's hash, in one reconcile (controller_sync.go): once this is [],
    the StatefulSet says whether the controller pod is being made again. values: the `controller` values."""
    values = values or {}
    if values.get("extraConf"):
        wanted = [line.strip() for line in str(values["extraConf"]).splitlines() if line.strip()]
    else:
        wanted = ["%s=%s" % (key, _chart_conf_value(value))
                  for key, value in sorted((values.get("extraConfMap") or {}).items()) if value not in (None, "", [], {}, False, 0)]
    conf = ((config_map or {}).get("data") or {}).get("slurm.conf") or ""
    lines = set(line.strip() for line in conf.splitlines())
    return [line for line in wanted if line not in lines]


def rollout_pending(statefulset):
    """Why the controller's StatefulSet has not rolled out its template to ready pods yet ([] when it has)."""
    meta, spec, status = (statefulset.get(key) or {} for key in ("metadata", "spec", "status"))
    replicas = spec.get("replicas", 1)
    reasons = []
    if status.get("observedGeneration") != meta.get("generation"):
        reasons.append("generation %s not observed yet (%s)" % (meta.get("generation"), status.get("observedGeneration")))
    if status.get("updateRevision") != status.get("currentRevision"):
        reasons.append("revision %s rolling out (pods at %s)" % (status.get("updateRevision"), status.get("currentRevision")))
    for key in ("updatedReplicas", "readyReplicas"):
        if status.get(key, 0) != replicas:
            reasons.append("%s %s of %s" % (key, status.get(key, 0), replicas))
    return reasons
