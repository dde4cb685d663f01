# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""slinky_state: the slinky role's one read (over a find() that serves objects as the API does) and which of
its parts differ from what the role wants."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import copy
import gzip
import io
import json
import os
import re
import tarfile

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import slinky_state as ss

CONTROLLER = {"service": {"spec": {"type": "NodePort", "externalTrafficPolicy": "Local"}, "port": 6817, "nodePort": 30017},
              "extraConfMap": {"SrunPortRange": "60001-60100", "SlurmdTimeout": 20}}
VALUES = {"controller": CONTROLLER, "nodesets": {"slinky": {"replicas": 2}}}
SLURM_CONF = "ClusterName=kube\nSrunPortRange=60001-60100\nSlurmdTimeout=20\n"


def release_secret(name, revision, values, chart="slurm", version="1.2.1", status="deployed", app_version="26.05",
                   compress=True):
    """A release Secret as Helm's secrets driver writes it (pkg/storage/driver/secrets.go and util.go; the real one
    on the lab's cluster is read by tests/unit fixture helm_release_secret.json below)."""
    release = {"name": name, "version": revision, "info": {"status": status},
               "chart": {"metadata": {"name": chart, "version": version, "appVersion": app_version}}, "config": values}
    raw = json.dumps(release).encode()
    helm = base64.b64encode(gzip.compress(raw) if compress else raw)
    return {"type": ss.HELM_RELEASE_TYPE, "data": {"release": base64.b64encode(helm).decode()},
            "metadata": {"name": "sh.helm.release.v1.%s.v%d" % (name, revision),
                         "labels": {"owner": "helm", "name": name, "status": status, "version": str(revision)}}}


def pod(name, app, ready=True, image="localhost/slime-kube/slinkyproject/slurmctld:26.05-forky"):
    return {"metadata": {"name": name, "labels": {"app.kubernetes.io/name": app}, "uid": "x",
                         "ownerReferences": [{"apiVersion": "slinky.slurm.net/v1beta1", "kind": "NodeSet", "name": "ns",
                                              "uid": "u1", "controller": True, "blockOwnerDeletion": True}]},
            "spec": {"containers": [{"name": app, "image": image, "env": [{"name": "A", "value": "b"}]}]},
            "status": {"phase": "Running", "podIP": "10.0.0.1",
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False", "lastProbeTime": None}]}}


STS = {"metadata": {"name": "slurm-controller", "generation": 3},
       "spec": {"replicas": 1, "template": {"spec": {"volumes": [
           {"name": "etc", "projected": {"sources": [{"configMap": {"name": "slurm-config"}}]}}]}}},
       "status": {"observedGeneration": 3, "updateRevision": "r1", "currentRevision": "r1", "updatedReplicas": 1,
                  "readyReplicas": 1}}


class Cluster(object):
    """Objects by (kind, namespace, name); find() as the module's over kubernetes.core's K8sService."""

    def __init__(self):
        self.objects = {
            ("Namespace", None, "slurm"): {"metadata": {"name": "slurm"}},
            ("Namespace", None, "slinky"): {"metadata": {"name": "slinky", "annotations": {"a": "b"}}},
            ("Secret", "slurm", "slurm-auth-slurm"): {"metadata": {"name": "slurm-auth-slurm", "labels": {"m": "s"}},
                                                      "data": {"slurm.key": "c2VjcmV0"}},
            ("Secret", "slurm", "r1"): release_secret("slurm", 1, {"old": True}, status="superseded"),
            ("Secret", "slurm", "r2"): release_secret("slurm", 2, VALUES),
            ("Pod", "slurm", "slurm-controller-0"): pod("slurm-controller-0", "slurmctld"),
            ("Pod", "slurm", "slurm-worker-slinky-0"): pod("slurm-worker-slinky-0", "slurmd"),
            ("Pod", "slurm", "slurm-worker-slinky-1"): pod("slurm-worker-slinky-1", "slurmd"),
            ("Service", "slurm", "slurm-controller"): {"metadata": {"name": "slurm-controller",
                                                                    "labels": {"app.kubernetes.io/name": "slurmctld"}},
                                                       "spec": {"type": "NodePort", "externalTrafficPolicy": "Local",
                                                                "ports": [{"port": 6817, "nodePort": 30017}]}},
            ("StatefulSet", "slurm", "slurm-controller"): dict(STS, metadata=dict(STS["metadata"], labels={
                "app.kubernetes.io/name": "slurmctld"})),
            ("ConfigMap", "slurm", "slurm-config"): {"metadata": {"name": "slurm-config"},
                                                     "data": {"slurm.conf": SLURM_CONF, "other": "x"}},
            ("Deployment", "slinky", "slurm-operator"): {"status": {"conditions": [{"type": "Available", "status": "True"}]}},
        }
        self.calls = []

    @staticmethod
    def _matches(obj, selectors):
        labels = (obj.get("metadata") or {}).get("labels") or {}
        for selector in selectors or []:
            if " in (" in selector:
                key, values = selector.split(" in (")
                if labels.get(key) not in [v.strip() for v in values.rstrip(")").split(",")]:
                    return False
            else:
                key, value = selector.split("=")
                if labels.get(key) != value:
                    return False
        return True

    def find(self, kind, api_version, name=None, namespace=None, label_selectors=None):
        self.calls.append((kind, namespace, name))
        return [copy.deepcopy(obj) for (k, ns, n), obj in sorted(self.objects.items(), key=lambda i: str(i[0]))
                if k == kind and (namespace is None or ns == namespace) and (name is None or n == name)
                and self._matches(obj, label_selectors)]


def read(cluster, **options):
    args = dict(namespaces=["slurm", "slinky", "cert-manager"], secrets=["slurm-auth-slurm", "slurm-auth-jwt"],
                releases=[{"name": "slurm", "namespace": "slurm", "chart_ref": "oci://ghcr.io/slinkyproject/charts/slurm",
                           "chart_version": "1.2.1"}],
                apis=["cert-manager.io/v1", "apps/v1"])
    args.update(options)
    return ss.read(cluster.find, "slurm", "slinky", "slurm-operator", **args)


WANT = {"namespaces": {"slurm": {}, "slinky": {"a": "b"}}, "secrets": ["slurm-auth-slurm"], "objects": [],
        "releases": {"slurm": VALUES}, "controller": CONTROLLER, "workers": 2, "accounting": False, "values": VALUES}


def test_a_converged_cluster_differs_in_nothing():
    state = read(Cluster())
    drift = ss.drift(state, WANT)
    assert drift == {"namespaces": [], "secrets": [], "objects": [], "releases": {}, "service": [], "wait": [], "summary": []}


def test_the_read_keeps_no_secret_data_and_only_what_the_role_uses():
    state = read(Cluster())
    text = json.dumps(state)
    assert "c2VjcmV0" not in text and "sh.helm.release" not in text
    assert state["secrets"] == {"slurm-auth-slurm": {"labels": {"m": "s"}, "keys": ["slurm.key"]}}
    assert state["releases"]["slurm"] == {"revision": 2, "status": "deployed", "chart": "slurm", "version": "1.2.1",
                                          "app_version": "26.05", "values": VALUES}
    assert state["charts"]["slurm"] == {"chart": "slurm", "version": "1.2.1", "app_version": None}
    assert state["config_map"] == {"metadata": {"name": "slurm-config"}, "data": {"slurm.conf": SLURM_CONF}}
    assert state["workers"][0] == {"metadata": {"name": "slurm-worker-slinky-0", "labels": {"app.kubernetes.io/name": "slurmd"},
                                                "ownerReferences": [{"kind": "NodeSet", "name": "ns", "uid": "u1"}]},
                                   "spec": {"hostname": None, "nodeName": None,
                                            "containers": [{"name": "slurmd", "image": pod("", "")["spec"]["containers"][0]["image"]}]},
                                   "status": {"phase": "Running", "hostIP": None, "podIP": "10.0.0.1",
                                              "conditions": [{"type": "Ready", "status": "True"}]}}
    assert state["apis"] == ["apps/v1", "cert-manager.io/v1"] and state["operator"] == {"available": True}


def test_each_part_names_what_differs():
    cluster = Cluster()
    del cluster.objects[("Namespace", None, "slinky")]
    cluster.objects[("Pod", "slurm", "slurm-worker-slinky-1")]["status"]["conditions"][0]["status"] = "False"
    cluster.objects[("Service", "slurm", "slurm-controller")]["spec"]["ports"][0]["nodePort"] = 30018
    values = copy.deepcopy(VALUES)
    values["controller"]["extraConfMap"]["SlurmdTimeout"] = 30
    want = dict(WANT, releases={"slurm": values, "slurm-operator": {}}, secrets=["slurm-auth-slurm", "slurm-auth-jwt"],
                controller=values["controller"])
    state = read(cluster, releases=[{"name": n, "namespace": "slurm", "chart_ref": "oci://x/" + n, "chart_version": "1.2.1"}
                                    for n in ("slurm", "slurm-operator")])
    drift = ss.drift(state, want)
    assert drift["namespaces"] == ["slinky"] and drift["secrets"] == ["slurm-auth-jwt"]
    assert drift["releases"] == {"slurm": ["values differ at controller.extraConfMap.SlurmdTimeout"],
                                 "slurm-operator": ["not installed"]}
    assert drift["service"] == ["nodePort 30018, wants 30017"]
    # without the operator's namespace nothing there is read; the ConfigMap lacks the new line; one worker is not ready
    assert drift["wait"] == ["the operator's Deployment is missing", "slurm.conf lacks SlurmdTimeout=30", "1 of 2 NodeSet pods ready"]
    assert len(drift["summary"]) == 6 and drift["summary"][0] == "namespaces slinky"
    assert ss.drift(state, dict(want, wait=False))["wait"] == []


def test_a_release_differs_as_kubernetes_core_helm_finds_it(tmp_path):
    record = ss.helm_release(release_secret("slurm", 4, VALUES))
    chart = {"chart": "slurm", "version": "1.2.1", "app_version": "26.05"}
    assert ss.release_drift(record, chart, json.loads(json.dumps(VALUES))) == []
    assert ss.release_drift(record, dict(chart, version="1.3.0"), VALUES) == ["chart slurm-1.2.1, wants slurm-1.3.0"]
    assert ss.release_drift(record, dict(chart, app_version="26.11"), VALUES) == ["appVersion 26.05, wants 26.11"]
    assert ss.release_drift(record, dict(chart, app_version=None), VALUES) == []  # a remote chart's is not known
    failed = ss.helm_release(release_secret("slurm", 5, VALUES, status="failed"))
    assert ss.release_drift(failed, chart, VALUES) == ["its last revision 5 is failed"]
    empty = ss.helm_release(release_secret("crds", 1, None, compress=False))
    assert empty["values"] == {} and ss.release_drift(empty, dict(chart, chart="slurm"), {}) == []
    assert ss.release_drift(None, chart, {}) == ["not installed"]


def test_the_chart_a_release_comes_from(tmp_path):
    chart_dir = tmp_path / "slurm"
    chart_dir.mkdir()
    (chart_dir / "Chart.yaml").write_text("apiVersion: v2\nname: slurm\nversion: 1.2.1\nappVersion: '26.05'\n")
    assert ss.chart_info(str(chart_dir)) == {"chart": "slurm", "version": "1.2.1", "app_version": "26.05"}
    archive = tmp_path / "slurm-1.2.1.tgz"
    with tarfile.open(str(archive), "w:gz") as tar:
        data = b"name: slurm\nversion: 1.2.1\n"
        info = tarfile.TarInfo("slurm/Chart.yaml")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    assert ss.chart_info(str(archive)) == {"chart": "slurm", "version": "1.2.1", "app_version": ""}
    assert ss.chart_info("jetstack/cert-manager", "v1.19.1") == {"chart": "cert-manager", "version": "v1.19.1", "app_version": None}
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "Chart.yaml").write_text("name: x\n")
    with pytest.raises(ss.SlinkyStateError, match="Chart.yaml.*needs name and version"):
        ss.chart_info(str(tmp_path / "bad"))


def test_a_secret_that_holds_no_release_is_named():
    with pytest.raises(ss.SlinkyStateError, match="Secret sh.helm.release.v1.x.v1 does not hold a Helm release"):
        ss.helm_release({"metadata": {"name": "sh.helm.release.v1.x.v1"}, "data": {"release": "bm90IGJhc2U2NA=="}})


def test_objects_differ_when_missing_or_when_applying_would_change_them():
    scc = {"apiVersion": "security.openshift.io/v1", "kind": "SecurityContextConstraints", "metadata": {"name": "a"},
           "runAsUser": {"type": "MustRunAs", "uid": 401}, "users": []}
    live = dict(copy.deepcopy(scc), metadata={"name": "a", "uid": "1", "resourceVersion": "5"}, priority=None)
    assert ss.object_drift([scc], [live]) == []
    assert ss.object_drift([scc], [None]) == ["SecurityContextConstraints/a"]
    changed = copy.deepcopy(live)
    changed["runAsUser"]["uid"] = 402
    assert ss.object_drift([scc], [changed]) == ["SecurityContextConstraints/a"]
    cluster = Cluster()
    state = read(cluster, objects=[scc], objects_api="security.openshift.io/v1")
    assert state["objects"] == [None] and ("SecurityContextConstraints", None, "a") not in cluster.calls
    cluster.objects[("SecurityContextConstraints", None, "a")] = live
    state = read(cluster, objects=[scc], objects_api="security.openshift.io/v1", apis=["security.openshift.io/v1"])
    assert state["objects"] == [live]


def test_accounting_waits_for_slurmdbd_of_the_release_asked_for():
    cluster = Cluster()
    cluster.objects[("Pod", "slurm", "slurm-accounting-0")] = pod(
        "slurm-accounting-0", "slurmdbd", image="localhost/slime-kube/slinkyproject/slurmdbd:25.11-forky")
    values = dict(VALUES, accounting={"enabled": True, "slurmdbd": {"image": {"tag": "26.05-forky"}}})
    state = read(cluster)
    assert ss.not_ready(state, dict(WANT, accounting=True, values=values)) == ["slurmdbd not yet of the release the values ask for"]
    cluster.objects[("Pod", "slurm", "slurm-accounting-0")]["status"]["conditions"][0]["status"] = "False"
    assert ss.not_ready(read(cluster), dict(WANT, accounting=True, values=values)) == ["slurmdbd not ready"]


FACTS = {"port": 6817, "service_name": None, "with_nodeport": True, "with_pod_routes": False,
         "key_secret": "slurm-auth-slurm", "key_name": "slurm.key"}


def test_the_read_also_holds_what_slinky_info_would_return():
    cluster = Cluster()
    cluster.objects[("Pod", "slurm", "slurm-controller-0")]["status"]["hostIP"] = "10.127.0.31"
    state = read(cluster, facts=FACTS)
    facts = state["facts"]
    assert facts["cluster"]["nodeport"] == {"address": "10.127.0.31", "port": 30017, "service": "slurm-controller",
                                            "external_traffic_policy": "Local"}
    assert facts["cluster"]["slurm_version"] == "26.05" and facts["slurm_key_b64"] == "c2VjcmV0" and facts["warnings"] == []
    assert state["facts_error"] is None
    # slinky_info reads the same objects the same way (module_utils/slinky.py read_facts)
    assert ss.slinky.read_facts(cluster.find, "slurm", **FACTS)[0] == {k: v for k, v in facts.items() if k != "warnings"}


def test_no_ready_controller_leaves_the_facts_to_a_later_read():
    cluster = Cluster()
    cluster.objects[("Pod", "slurm", "slurm-controller-0")]["status"]["conditions"][0]["status"] = "False"
    state = read(cluster, facts=FACTS)
    assert state["facts"] is None and state["facts_error"].startswith("no running and ready controller pod")
    assert ss.drift(state, WANT)["wait"] == ["no ready controller pod"]


def test_both_modules_read_the_facts_with_the_same_keywords():
    given = {name: spec.get("default") for name, spec in ss.slinky.FACTS_OPTIONS.items()}
    assert ss.slinky.facts_keywords(dict(given, include_key=True)) == FACTS
    assert ss.slinky.facts_keywords(given)["key_secret"] is None


# --------------------------------------------------------------------------- immutable_changes


def _deployed(values):
    return {"releases": {"slurm": ss.helm_release(release_secret("slurm", 3, values))}}


def test_nothing_is_refused_for_a_release_not_installed_or_unchanged():
    wanted = dict(VALUES, clusterName="kube")
    assert ss.immutable_changes({"releases": {}}, "slurm", wanted, "slurm") == []
    assert ss.immutable_changes(_deployed(wanted), "slurm", wanted, "slurm") == []


def test_the_chart_defaults_stand_for_what_a_release_was_not_given():
    # slurm chart 1.2.1: clusterName null -> Controller.ClusterName() namespace_name; slurmKey/jwtKey secretRef
    # empty -> FULLNAME-auth-slurm, FULLNAME-auth-jwt/jwt.key; controller.persistence.enabled true
    stated = dict(VALUES, clusterName="slurm_slurm",
                  slurmKey={"secretRef": {"name": "slurm-auth-slurm", "key": "slurm.key"}},
                  jwtKey={"secretRef": {"name": "slurm-auth-jwt", "key": "jwt.key"}},
                  controller=dict(CONTROLLER, persistence={"enabled": True}))
    assert ss.immutable_changes(_deployed(VALUES), "slurm", stated, "slurm") == []
    # a release named without the chart's name: FULLNAME is RELEASE-slurm
    assert ss.immutable_fields({}, "hpc", "ns")["slurmKey.secretRef.name"] == "hpc-slurm-auth-slurm"
    assert ss.immutable_fields({}, "hpc", "ns")["clusterName"] == "ns_hpc-slurm"


def test_each_refused_change_names_the_input_the_wanted_and_the_running_value():
    running = dict(VALUES, clusterName="kube", jwtKey={"secretRef": {"name": "slurm-auth-jwt", "key": "jwt.key"}},
                   nodesets={"slinky": {"replicas": 2, "volumeClaimTemplates": []}})
    wanted = dict(VALUES, clusterName="kube2", jwtKey={"secretRef": {"name": "slurm-auth-jwt-new", "key": "jwt.key"}},
                  slurmKey={"secretRef": {"name": "other-key"}},
                  controller=dict(CONTROLLER, persistence={"enabled": False}),
                  nodesets={"slinky": {"replicas": 2, "volumeClaimTemplates": [{"metadata": {"name": "scratch"}}]},
                            "cpu": {"replicas": 1, "volumeClaimTemplates": [{"metadata": {"name": "new"}}]}})
    assert ss.immutable_changes(_deployed(running), "slurm", wanted, "slurm") == [
        'slime_cluster.name (clusterName): "kube2", the running cluster has "kube"',
        'slinky_slurm_values.controller.persistence (controller.persistence.enabled): false, the running cluster has true',
        'slinky_jwt_key_secret (jwtKey.secretRef): "slurm-auth-jwt-new/jwt.key", the running cluster has "slurm-auth-jwt/jwt.key"',
        'slinky_nodesets.slinky.volumeClaimTemplates (nodesets.slinky.volumeClaimTemplates): [{"metadata": {"name": "scratch"}}],'
        ' the running cluster has []',
        'slinky_slurm_key_secret (slurmKey.secretRef.name): "other-key", the running cluster has "slurm-auth-slurm"',
    ]


def test_the_refused_fields_are_those_of_the_operators_webhooks():
    """Held to slurm-operator v1.2.1's source where the vendored copy is at hand (../shared/vendor)."""
    here = os.path.dirname(os.path.abspath(__file__))
    vendor = os.environ.get("SLIME_VENDOR_DIR") or os.path.join(here, *[".."] * 5, "shared", "vendor")
    archive = os.path.join(vendor, "src", "slurm-operator-1.2.1.tar.gz")
    if not os.path.exists(archive):
        pytest.skip("no vendored slurm-operator 1.2.1 (SLIME_VENDOR_DIR)")
    with tarfile.open(archive) as source:
        def read(suffix):
            member = next(m for m in source.getmembers() if m.name.endswith(suffix))
            return source.extractfile(member).read().decode()
        controller = read("internal/webhook/controller_webhook.go")
        nodeset = read("internal/webhook/nodeset_webhook.go")
    update = controller[controller.index("func (r *ControllerWebhook) ValidateUpdate"):]
    refused = re.findall(r"errors\.New\(\"([^\"]*after deployment)\"\)", update)
    assert refused == ["cannot change ClusterName after deployment", "cannot change SlurmKeyRef after deployment",
                       "the value of JwtKeyRef or JwtHs256KeyRef cannot be modified after deployment",
                       "cannot change persistence.enabled after deployment"]
    assert "cannot change volumeClaimTemplates after deployment" in nodeset
    assert [path for path, unused in ss.IMMUTABLE] == ["clusterName", "slurmKey.secretRef.name", "jwtKey.secretRef",
                                                       "controller.persistence.enabled"]


# --------------------------------------------------------------------------- network_mode_change


def _values_of(mode):
    """The slurm chart's values chart_values() gives a model in that network mode (one NodeSet)."""
    model = ss.slinky.cluster_model.normalize_intent({"name": "kube", "network_mode": mode, "nodeport": {"port": 30017},
                                                     "srun_port_range": "60001-60100"})
    return ss.slinky.chart_values(model, nodesets={"slinky": {"replicas": 2}})


@pytest.mark.parametrize("running", ["nat", "hostnetwork", "routed"])
def test_the_running_network_mode_is_read_from_the_values_the_release_was_given(running):
    expected = "routed" if running == "routed" else "nat or hostnetwork"
    assert ss.running_network_mode(_deployed(_values_of(running)), "slurm") == expected
    assert ss.running_network_mode({"releases": {}}, "slurm") is None
    assert ss.running_network_mode(_deployed({"controller": {}}), "slurm") is None  # not written by the collection


@pytest.mark.parametrize("running,wanted", [(a, b) for a in ("nat", "hostnetwork", "routed")
                                            for b in ("nat", "hostnetwork", "routed")])
def test_a_move_between_routed_and_the_nodeport_modes_is_refused_naming_both(running, wanted):
    refused = ss.network_mode_change(_deployed(_values_of(running)), "slurm", wanted)
    if (running == "routed") == (wanted == "routed"):
        assert refused == []  # nat <-> hostnetwork: the NodeSets' hostNetwork default, rolled out by the operator
        return
    assert len(refused) == 1
    have, service = ("routed", "ClusterIP") if running == "routed" else ("nat or hostnetwork", "NodePort")
    assert refused[0].startswith("slime_cluster.network_mode=%s, but the running cluster is in %s (the controller "
                                 "Service of release slurm is a %s)" % (wanted, have, service))
    assert "set network_mode back" in refused[0] and "uninstall the release slurm" in refused[0]


def test_no_network_mode_is_refused_before_the_first_install():
    assert ss.network_mode_change({"releases": {}}, "slurm", "routed") == []
