# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slinky role's one read of the cluster: everything the role would change or wait for, read in one
process and one API session (module slinky_state), and which parts of it differ from what the role
wants (filter slinky_drift), so that a converged cluster costs the role one module run.

read() takes a ``find(kind, api_version, name=None, namespace=None, label_selectors=None)`` that returns
the objects as the API does (dicts), so that everything here runs in unit tests; the module (and its action
plugin, in the controller's process) passes kubernetes.core's K8sService.find (module_utils/kube_read.py), to
run(), which reads with the module's options (OPTIONS). drift() is pure.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import copy
import gzip
import json
import os
import tarfile

from ansible_collections.slime.hybrid.plugins.module_utils import kube_read, slinky, slurm_order

try:
    import yaml
except ImportError:  # pragma: no cover - ansible-core requires PyYAML
    yaml = None

# Helm 3's default storage driver keeps each revision of a release in a Secret of this type, labelled
# owner=helm, name=RELEASE, status, version=REVISION (helm pkg/storage/driver/secrets.go, newSecretsObject).
HELM_RELEASE_TYPE = "helm.sh/release.v1"
_GZIP_MAGIC = b"\x1f\x8b\x08"
WORKER_SELECTOR = ["app.kubernetes.io/name=slurmd"]
NODESET_API = "slinky.slurm.net/v1beta1"
DAEMON_SELECTOR = ["app.kubernetes.io/name in (slurmctld, slurmdbd)"]


# The module's own options (beside kubernetes.core's connection options: kube_read.argument_spec).
OPTIONS = dict(
    namespace=dict(type="str", default="slurm"),
    operator_namespace=dict(type="str", default="slinky"),
    operator_name=dict(type="str", default="slurm-operator"),
    namespaces=dict(type="list", elements="str", default=[]),
    secrets=dict(type="list", elements="str", default=[], no_log=False),
    releases=dict(type="list", elements="dict", default=[], options=dict(
        name=dict(type="str", required=True), namespace=dict(type="str", required=True),
        chart_ref=dict(type="str", required=True), chart_version=dict(type="str"))),
    objects=dict(type="list", elements="dict", default=[]),
    objects_api=dict(type="str"),
    controller_selector=dict(type="list", elements="str", default=["app.kubernetes.io/name=slurmctld"]),
    facts=dict(type="dict", options=copy.deepcopy(slinky.FACTS_OPTIONS)),
)


class SlinkyStateError(ValueError):
    pass


def helm_release(secret):
    """The release one of Helm's Secrets holds: data.release is the release as JSON, gzipped and base64-encoded
    by Helm (pkg/storage/driver/util.go, encodeRelease), then base64-encoded again as every Secret's data is.
    Returns what kubernetes.core.helm compares (its default_check: chart name-version, appVersion and the
    values the release was given, `helm get values`) with the revision and status."""
    try:
        raw = base64.b64decode(base64.b64decode((secret.get("data") or {})["release"]))
        if raw[:3] == _GZIP_MAGIC:
            raw = gzip.decompress(raw)
        release = json.loads(raw)
    except (KeyError, TypeError, ValueError, OSError) as exc:
        raise SlinkyStateError("Secret %s does not hold a Helm release (%s: %s)"
                               % ((secret.get("metadata") or {}).get("name"), type(exc).__name__, exc))
    meta = (release.get("chart") or {}).get("metadata") or {}
    return {"revision": release.get("version"), "status": (release.get("info") or {}).get("status"),
            "chart": meta.get("name"), "version": meta.get("version"), "app_version": meta.get("appVersion") or "",
            "values": release.get("config") or {}}


def latest_release(secrets):
    """The newest revision among a release's Secrets (Helm keeps up to its history limit), or None."""
    ours = [s for s in secrets or [] if s.get("type") == HELM_RELEASE_TYPE]
    if not ours:
        return None
    newest = max(ours, key=lambda s: int(((s.get("metadata") or {}).get("labels") or {}).get("version") or 0))
    return helm_release(newest)


def _chart_yaml(text, where):
    data = yaml.safe_load(text) if yaml else None
    if not isinstance(data, dict) or not data.get("name") or not data.get("version"):
        raise SlinkyStateError("%s: not a chart's Chart.yaml (it needs name and version)" % where)
    return {"chart": str(data["name"]), "version": str(data["version"]), "app_version": str(data.get("appVersion") or "")}


def chart_info(ref, version=None):
    """The chart a release would be installed from, as kubernetes.core.helm names it: from its Chart.yaml for a
    chart directory or archive on this host; else (a repository's or an OCI chart) the ref's last name and the
    version asked for, appVersion unknown (None: not compared)."""
    if os.path.isdir(ref):
        path = os.path.join(ref, "Chart.yaml")
        try:
            with open(path) as handle:
                return _chart_yaml(handle.read(), path)
        except (IOError, OSError) as exc:
            raise SlinkyStateError("%s: %s" % (path, exc))
    if os.path.isfile(ref):
        try:
            with tarfile.open(ref) as archive:
                member = next(m for m in archive.getmembers() if m.name.count("/") == 1 and m.name.endswith("/Chart.yaml"))
                return _chart_yaml(archive.extractfile(member).read(), ref + ":" + member.name)
        except (StopIteration, tarfile.TarError, IOError, OSError) as exc:
            raise SlinkyStateError("%s: no chart archive with a Chart.yaml (%s)" % (ref, type(exc).__name__))
    return {"chart": ref.rstrip("/").rsplit("/", 1)[-1], "version": version, "app_version": None}


def _pod(pod):
    meta, spec, status = (pod.get(key) or {} for key in ("metadata", "spec", "status"))
    return {"metadata": {"name": meta.get("name"), "labels": meta.get("labels") or {},
                         "ownerReferences": [{"kind": ref.get("kind"), "name": ref.get("name"), "uid": ref.get("uid")}
                                             for ref in meta.get("ownerReferences") or []]},
            "spec": {"hostname": spec.get("hostname"), "nodeName": spec.get("nodeName"),
                     "containers": [{"name": c.get("name"), "image": c.get("image")} for c in spec.get("containers") or []]},
            "status": {"phase": status.get("phase"), "hostIP": status.get("hostIP"), "podIP": status.get("podIP"),
                       "conditions": [{"type": c.get("type"), "status": c.get("status")} for c in status.get("conditions") or []]}}


def _nodeset(nodeset):
    meta = nodeset.get("metadata") or {}
    return {"metadata": {"name": meta.get("name"), "uid": meta.get("uid")},
            "spec": {"replicas": (nodeset.get("spec") or {}).get("replicas", 1)}}


def _statefulset(sts):
    meta, spec = sts.get("metadata") or {}, sts.get("spec") or {}
    template = {"spec": {"volumes": ((spec.get("template") or {}).get("spec") or {}).get("volumes") or []}}
    return {"metadata": {"name": meta.get("name"), "generation": meta.get("generation")},
            "spec": {"replicas": spec.get("replicas", 1), "template": template}, "status": sts.get("status") or {}}


def _available(deployment):
    return any(c.get("type") == "Available" and c.get("status") == "True"
               for c in ((deployment or {}).get("status") or {}).get("conditions") or [])


def read(find, namespace, operator_namespace, operator_name, namespaces=(), secrets=(), releases=(),
         controller_selector=("app.kubernetes.io/name=slurmctld",), objects=(), objects_api=None, apis=None, facts=None):
    """Everything the slinky role would change or wait for. Secrets: their names, labels and key names, never their
    data. releases: [{name, namespace, chart_ref, chart_version}]. objects: definitions as the role would apply them
    (the OpenShift SCCs and their grants), each read as it is by apiVersion, kind, name and namespace; none is read
    (each None) where the server does not serve objects_api (a group/version). apis: the server's group/versions.
    facts: slinky.read_facts()'s options (port, service_name, with_nodeport, with_pod_routes, key_secret, key_name):
    also what module slinky_info would return, as state's facts ({cluster, slurm_key_b64, warnings}, None while no
    controller is ready: facts_error says why), so that a run that changes nothing reads the cluster once."""
    selector = list(controller_selector)
    state = {"apis": sorted(apis or []), "namespaces": {}, "secrets": {}, "releases": {}, "charts": {}, "objects": [],
             "daemons": [], "workers": [], "nodesets": [], "controllers": [], "services": [], "statefulset": None, "config_map": None,
             "operator": None}
    for name in namespaces:
        found = find("Namespace", "v1", name=name)
        if found:
            state["namespaces"][name] = {"annotations": (found[0].get("metadata") or {}).get("annotations") or {}}
    for name in secrets:
        found = find("Secret", "v1", name=name, namespace=namespace)
        if found:
            state["secrets"][name] = {"labels": (found[0].get("metadata") or {}).get("labels") or {},
                                      "keys": sorted((found[0].get("data") or {}).keys())}
    for release in releases:
        records = find("Secret", "v1", namespace=release["namespace"], label_selectors=["owner=helm", "name=" + release["name"]])
        record = latest_release(records)
        if record:
            state["releases"][release["name"]] = record
        state["charts"][release["name"]] = chart_info(release["chart_ref"], release.get("chart_version"))
    served = objects_api is None or objects_api in state["apis"]
    for obj in objects:
        meta = obj.get("metadata") or {}
        found = find(obj["kind"], obj["apiVersion"], name=meta["name"], namespace=meta.get("namespace")) if served else []
        state["objects"].append(found[0] if found else None)
    if namespace in state["namespaces"]:
        state["daemons"] = [_pod(p) for p in find("Pod", "v1", namespace=namespace, label_selectors=DAEMON_SELECTOR)]
        state["workers"] = [_pod(p) for p in find("Pod", "v1", namespace=namespace, label_selectors=WORKER_SELECTOR)]
        if NODESET_API in state["apis"]:
            state["nodesets"] = [_nodeset(n) for n in find("NodeSet", NODESET_API, namespace=namespace)]
        state["controllers"] = [_pod(p) for p in find("Pod", "v1", namespace=namespace, label_selectors=selector)]
        state["services"] = [{"metadata": {"name": s["metadata"]["name"]}, "spec": s.get("spec") or {}}
                             for s in find("Service", "v1", namespace=namespace, label_selectors=selector)]
        sts = find("StatefulSet", "apps/v1", namespace=namespace, label_selectors=selector)
        if sts:
            state["statefulset"] = _statefulset(sts[0])
            config_name = slinky.config_map_name(sts[0])
            config = find("ConfigMap", "v1", name=config_name, namespace=namespace) if config_name else []
            if config:
                state["config_map"] = {"metadata": {"name": config_name},
                                       "data": {"slurm.conf": (config[0].get("data") or {}).get("slurm.conf", "")}}
    if operator_namespace in state["namespaces"]:
        operator = find("Deployment", "apps/v1", name=operator_name, namespace=operator_namespace)
        state["operator"] = {"available": _available(operator[0])} if operator else None
    if facts is not None:
        state["facts"], state["facts_error"] = None, None
        try:
            result, warnings = slinky.read_facts(find, namespace, selector, **facts)
            state["facts"] = dict(result, warnings=warnings)
        except slinky.SlinkyInfoError as exc:
            state["facts_error"] = str(exc)
    return state


def api_groups(client):
    """group/version of every API group the server serves (one request: /apis)."""
    groups = client.client.request("get", "/apis").to_dict().get("groups") or []
    return ["%s" % version["groupVersion"] for group in groups for version in group.get("versions") or []]


def run(params, find, client):
    """The module's read with its validated params (OPTIONS), over find() and the API client (kube_read.read):
    ({state}, warnings). Raises kube_read.ReadError."""
    try:
        facts = slinky.facts_keywords(params["facts"]) if params["facts"] is not None else None
        state = read(find, params["namespace"], params["operator_namespace"], params["operator_name"], params["namespaces"],
                     params["secrets"], params["releases"], params["controller_selector"], params["objects"],
                     params["objects_api"], api_groups(client), facts)
    except SlinkyStateError as exc:
        raise kube_read.ReadError("slinky_state: %s" % exc)
    return {"state": state}, list((state.get("facts") or {}).get("warnings") or [])


def _normal(value):
    """Values as Helm keeps them (JSON): what YAML or Jinja typed alike compares alike."""
    return json.loads(json.dumps(value if value is not None else {}, default=str))


def value_paths(have, want, prefix="", depth=3):
    """The dotted paths where two values trees differ, down to depth levels."""
    if isinstance(have, dict) and isinstance(want, dict) and depth > 0:
        out = []
        for key in sorted(set(have) | set(want), key=str):
            if have.get(key) != want.get(key):
                out.extend(value_paths(have.get(key), want.get(key), "%s%s." % (prefix, key), depth - 1))
        return out
    return [prefix.rstrip(".") or "(all)"] if have != want else []


def release_drift(record, chart, values):
    """Why kubernetes.core.helm would install or upgrade a release ([] when it would not): no release, or its
    default_check (plugins/modules/helm.py: the chart's name-version, its appVersion, the values) differs; a
    last revision that is not deployed (failed, pending-*) also needs the role's install."""
    if record is None:
        return ["not installed"]
    reasons = []
    if record["status"] != "deployed":
        reasons.append("its last revision %s is %s" % (record["revision"], record["status"]))
    have, want = "%s-%s" % (record["chart"], record["version"]), "%s-%s" % (chart["chart"], chart["version"])
    if have != want:
        reasons.append("chart %s, wants %s" % (have, want))
    if chart.get("app_version") is not None and (record.get("app_version") or "") != chart["app_version"]:
        reasons.append("appVersion %s, wants %s" % (record.get("app_version") or "none", chart["app_version"] or "none"))
    paths = value_paths(_normal(record["values"]), _normal(values))
    if paths:
        reasons.append("values differ at " + ", ".join(paths))
    return reasons


def _subset(want, have):
    """Whether applying want (kubernetes.core.k8s state=present: a merge patch) would leave have as it is."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(_subset(value, have.get(key)) for key, value in want.items())
    if isinstance(want, list):
        return isinstance(have, list) and len(want) == len(have) and all(_subset(w, h) for w, h in zip(want, have))
    return want == have


def object_drift(wanted, live):
    """The wanted objects (kind/name) that are missing or that applying would change."""
    return ["%s/%s" % (want["kind"], want["metadata"]["name"])
            for want, have in zip(wanted, live) if have is None or not _subset(_normal(want), have)]


def _ready(pods):
    return [p for p in pods if any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"]["conditions"])]


def _flag(value):
    """A bool as Ansible templates may hand it on (True, 'True', 'true', 1)."""
    return str(value).strip().lower() in ("true", "yes", "on", "1")


def not_ready(state, want):
    """Why the role's waits would wait ([] when each is met now): the operator, the controller's StatefulSet, the
    slurm.conf rendered from the values, its rollout and pod, the NodeSet pods, and slurmdbd with accounting."""
    reasons = []
    if not (state["operator"] or {}).get("available"):
        reasons.append("the operator's Deployment is %s" % ("not available" if state["operator"] else "missing"))
    sts = state["statefulset"]
    if not sts:
        reasons.append("no controller StatefulSet")
    else:
        if slinky.config_map_name(sts) is not None:
            pending = slinky.config_drift(state["config_map"], want["controller"])
            if pending:
                reasons.append("slurm.conf lacks %s" % ", ".join(pending))
        reasons.extend("controller " + reason for reason in slinky.rollout_pending(sts))
    if not _ready(state["controllers"]):
        reasons.append("no ready controller pod")
    ready = len(_ready(state["workers"]))
    workers = int(want["workers"])
    if ready < workers:
        reasons.append("%d of %d NodeSet pods ready" % (ready, workers))
    if _flag(want["accounting"]):
        dbds = [p for p in state["daemons"] if p["metadata"]["labels"].get("app.kubernetes.io/name") == "slurmdbd"]
        if not dbds or len(_ready(dbds)) < len(dbds):
            reasons.append("slurmdbd not ready")
        elif slurm_order.slurmdbd_upgrade(want["values"], dbds):
            reasons.append("slurmdbd not yet of the release the values ask for")
    return reasons


# What Slinky's admission webhooks refuse to change once a cluster is deployed (slurm-operator v1.2.1,
# internal/webhook/controller_webhook.go ValidateUpdate: ClusterName, SlurmKeyRef's name, the JWT key's
# reference, persistence.enabled; nodeset_webhook.go ValidateUpdate: volumeClaimTemplates), each by the value
# of the slurm chart 1.2.1 it comes from (templates/controller/controller-cr.yaml, templates/_slurm.tpl
# authSlurmRef/authJwtRef, values.yaml defaults) and the input of this collection that sets that value.
IMMUTABLE = (
    ("clusterName", "slime_cluster.name"),
    ("slurmKey.secretRef.name", "slinky_slurm_key_secret"),
    ("jwtKey.secretRef", "slinky_jwt_key_secret"),
    ("controller.persistence.enabled", "slinky_slurm_values.controller.persistence"),
)
NODESET_IMMUTABLE = ("volumeClaimTemplates", "slinky_nodesets.%s.volumeClaimTemplates")


def _fullname(release, values):
    """The slurm chart's slurm.fullname (templates/_helpers.tpl): the release's name when it contains the chart's."""
    if values.get("fullnameOverride"):
        return values["fullnameOverride"][:63].rstrip("-")
    name = values.get("nameOverride") or "slurm"
    return (release if name in release else "%s-%s" % (release, name))[:63].rstrip("-")


def immutable_fields(values, release, namespace):
    """{values path: what the operator's Controller or NodeSet gets from it}, the chart's defaults filled in
    (ClusterName: Controller.ClusterName(), namespace_name of the Controller, api/v1beta1/controller_keys.go)."""
    values = _normal(values)
    full = _fullname(release, values)

    def ref(key):
        return (values.get(key) or {}).get("secretRef") or {}

    fields = {
        "clusterName": values.get("clusterName") or "%s_%s" % (namespace, full),
        "slurmKey.secretRef.name": ref("slurmKey").get("name") or full + "-auth-slurm",
        "jwtKey.secretRef": "%s/%s" % (ref("jwtKey").get("name") or full + "-auth-jwt", ref("jwtKey").get("key") or "jwt.key"),
        "controller.persistence.enabled": ((values.get("controller") or {}).get("persistence") or {}).get("enabled", True),
    }
    for name, nodeset in sorted((values.get("nodesets") or {}).items()):
        fields["nodesets.%s.%s" % (name, NODESET_IMMUTABLE[0])] = (nodeset or {}).get(NODESET_IMMUTABLE[0]) or []
    return fields


def immutable_changes(state, release, values, namespace):
    """What the values would change of a deployed release that Slinky's operator refuses after deployment
    ([] for a release not installed): one line each, naming the input, the value wanted and the running one."""
    record = (state.get("releases") or {}).get(release)
    if record is None:
        return []
    have, want = immutable_fields(record["values"], release, namespace), immutable_fields(values, release, namespace)
    inputs = dict(IMMUTABLE)
    out = []
    for path in sorted(set(have) & set(want)):
        if have[path] != want[path]:
            what = inputs.get(path) or NODESET_IMMUTABLE[1] % path.split(".")[1]
            out.append("%s (%s): %s, the running cluster has %s" % (what, path, json.dumps(want[path]), json.dumps(have[path])))
    return out


# The controller Service chart_values() writes in each network mode (stated in both: the operator keeps the type of an
# existing Service), read back as the running mode.
SERVICE_MODES = {"ClusterIP": "routed", "NodePort": "nat or hostnetwork"}


def _controller_service_type(state, release):
    """The controller Service type in the values the deployed release was given (None: not installed, or none)."""
    record = (state.get("releases") or {}).get(release)
    if record is None:
        return None
    return (((_normal(record["values"]).get("controller") or {}).get("service") or {}).get("spec") or {}).get("type")


def running_network_mode(state, release):
    """How the deployed release lets bare metal reach slurmctld, read from the values it was given: 'routed' (the
    controller Service a ClusterIP: bare metal routes to the pod IPs), 'nat or hostnetwork' (a NodePort: bare metal's
    DNAT), or None (not installed, or a Service type chart_values() never writes)."""
    return SERVICE_MODES.get(_controller_service_type(state, release))


def network_mode_change(state, release, mode):
    """A move of a deployed release between network_mode routed and the NodePort modes (nat, hostnetwork), which the
    slinky role refuses ([] or one line naming the value, the running mode and what to do). Such a move re-addresses
    every pod worker and swaps bare metal's DNAT for routes (or back) while jobs run; nat and hostnetwork differ only in
    the NodeSets' hostNetwork default, a rolling update the operator does, and converge."""
    kind = _controller_service_type(state, release)
    running = SERVICE_MODES.get(kind)
    if running is None or (mode == "routed") == (running == "routed"):
        return []
    return ["slime_cluster.network_mode=%s, but the running cluster is in %s (the controller Service of release %s is a %s): "
            "site.yml does not move a running cluster between routed and the NodePort modes (every pod worker "
            "re-addressed, bare metal's DNAT swapped for routes or back, with jobs running); set network_mode back, or "
            "deploy anew: uninstall the release %s (slurmctld's state and the running jobs are lost) and run site.yml"
            % (mode, running, release, kind, release)]


def drift(state, want):
    """Which parts of the slinky role differ from the cluster, each a list of what differs ([] when it does not):
    namespaces (missing, or without an annotation the role sets), secrets (missing: the role adopts an existing
    one, never rewrites it), objects (OpenShift's SCCs and grants), releases ({release: reasons}, only the
    differing ones), service (the controller Service the operator will not update), wait (why the waits would
    wait, unless want's wait is false), and summary: one line per part that differs. want: {namespaces: {name:
    annotations}, secrets, objects, releases: {name: values}, controller (the slurm chart's controller values),
    workers (NodeSet pods), accounting, values (the slurm chart's), wait}."""
    out = {"namespaces": [], "secrets": [], "objects": [], "releases": {}, "service": [], "wait": []}
    for name, annotations in sorted((want.get("namespaces") or {}).items()):
        live = state["namespaces"].get(name)
        if live is None or any(live["annotations"].get(k) != v for k, v in (annotations or {}).items()):
            out["namespaces"].append(name)
    out["secrets"] = [name for name in want.get("secrets") or [] if name not in state["secrets"]]
    out["objects"] = object_drift(want.get("objects") or [], state["objects"])
    for name, values in sorted((want.get("releases") or {}).items()):
        if name not in state["charts"]:
            raise SlinkyStateError("release %s was not read (module slinky_state, option releases)" % name)
        reasons = release_drift(state["releases"].get(name), state["charts"][name], values)
        if reasons:
            out["releases"][name] = reasons
    out["service"] = [reason for service in state["services"]
                      for reason in slinky.service_drift(service, want["controller"])]
    out["wait"] = not_ready(state, want) if _flag(want.get("wait", True)) else []
    out["summary"] = (["namespaces " + ", ".join(out["namespaces"])] if out["namespaces"] else []) \
        + (["missing Secrets " + ", ".join(out["secrets"])] if out["secrets"] else []) \
        + (["objects " + ", ".join(out["objects"])] if out["objects"] else []) \
        + ["release %s: %s" % (name, "; ".join(reasons)) for name, reasons in sorted(out["releases"].items())] \
        + (["controller Service: " + "; ".join(out["service"])] if out["service"] else []) \
        + (["not ready: " + "; ".join(out["wait"])] if out["wait"] else [])
    return out
