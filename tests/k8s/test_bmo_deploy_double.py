"""tests/k8s/bmo_deploy_double.py against the source it is derived from.

The double takes over one transition of baremetal-operator v0.13.2 (provisioning -> provisioned,
when Ironic waits for the deploy ramdisk's callback) and hands the host back for everything else.
Each fact it relies on is read here from the operator's source (the upstream tarball in
$SLIME_VENDOR_DIR/src, default ../shared/vendor beside the checkout) and from the Ironic the
tier runs, so an upgrade of either that changes one of them fails this test, not the tier.
"""

import importlib.util
import os
import re
import tarfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(os.path.dirname(HERE))
VENDOR = os.environ.get("SLIME_VENDOR_DIR") or os.path.join(PROJECT, "..", "shared", "vendor")
TARBALL = os.path.join(VENDOR, "src", "baremetal-operator-0.13.2.tar.gz")
CACHE = os.environ.get("SLIME_CACHE") or os.path.expanduser("~/.cache/slime-hybrid")

spec = importlib.util.spec_from_file_location("bmo_deploy_double", os.path.join(HERE, "bmo_deploy_double.py"))
double = importlib.util.module_from_spec(spec)
spec.loader.exec_module(double)


@pytest.fixture(scope="module")
def source():
    """path inside the operator's tree -> text."""
    assert os.path.isfile(TARBALL), "%s missing (set SLIME_VENDOR_DIR)" % TARBALL
    files = {}
    with tarfile.open(TARBALL) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".go"):
                path = member.name.split("/", 1)[1]
                files[path] = tar.extractfile(member).read().decode("utf-8")
    return files


def function(text, name):
    """The body of Go function NAME (up to the next top-level func)."""
    start = re.search(r"^func [^\n]*\b%s\(" % re.escape(name), text, re.M)
    assert start, "func %s not found" % name
    end = re.search(r"^func ", text[start.end():], re.M)
    return text[start.start(): start.end() + (end.start() if end else len(text))]


def test_paused_annotation_is_the_operators(source):
    types = source["apis/metal3.io/v1alpha1/baremetalhost_types.go"]
    assert 'PausedAnnotation = "%s"' % double.PAUSED_ANNOTATION in types
    reconcile = function(source["internal/controller/metal3.io/baremetalhost_controller.go"], "Reconcile")
    # a paused host: the reconciler returns before it touches anything
    paused = reconcile[reconcile.index("metal3api.PausedAnnotation"):]
    assert re.match(r"[^\n]*\]; ok \{\n\s*reqLogger.Info\(\"host is paused, no work to do\"\)\n\s*return ctrl.Result\{Requeue: false\}, nil",
                    paused), paused[:300]
    assert reconcile.index("PausedAnnotation") < reconcile.index("reconcileHostData")


def test_state_names(source):
    types = source["apis/metal3.io/v1alpha1/baremetalhost_types.go"]
    assert 'StateProvisioning ProvisioningState = "%s"' % double.STATE_PROVISIONING in types
    assert 'StateProvisioned ProvisioningState = "%s"' % double.STATE_PROVISIONED in types


def test_the_transition_it_makes_is_the_operators(source):
    hsm = source["internal/controller/metal3.io/host_state_machine.go"]
    assert "metal3api.StateProvisioning:" in function(hsm, "handlers") and "hsm.handleProvisioning" in hsm
    body = function(hsm, "handleProvisioning")
    # on a completed provisioning action: provisioned, error count reset (what provisioned_status writes)
    assert re.search(r"if _, complete := actResult.\(actionComplete\); complete \{\n\s*hsm.NextState = metal3api.StateProvisioned\n"
                     r"\s*hsm.Host.Status.ErrorCount = 0", body), body
    action = function(source["internal/controller/metal3.io/baremetalhost_controller.go"], "actionProvisioning")
    assert "info.host.Status.Provisioning.Image = *(info.host.Spec.Image)" in action
    assert "clearError(info.host)" in action
    status = double.provisioned_status({"spec": {"image": {"url": "u"}}}, {"power_state": "power on"})
    assert status["provisioning"] == {"state": "provisioned", "image": {"url": "u"}}
    assert status["errorCount"] == 0 and status["operationalStatus"] == "OK" and status["errorType"] is None
    assert status["poweredOn"] is True


def test_it_hands_back_what_the_operator_can_deprovision(source):
    hsm = source["internal/controller/metal3.io/host_state_machine.go"]
    assert re.search(r"if hsm.provisioningCancelled\(\) \{\n\s*hsm.NextState = metal3api.StateDeprovisioning",
                     function(hsm, "handleProvisioned"))
    deprovision = function(source["pkg/provisioner/ironic/ironic.go"], "Deprovision")
    case = deprovision[deprovision.index("case nodes.Active, nodes.DeployFail, nodes.DeployWait:"):]
    assert "nodes.ProvisionStateOpts{Target: nodes.TargetDeleted}" in case[:case.index("default:")]


def test_ironic_node_name_and_wait_state(source):
    ironic = source["pkg/provisioner/ironic/ironic.go"]
    assert "return objMeta.Namespace + nameSeparator + objMeta.Name" in function(ironic, "ironicNodeName")
    assert re.search(r'nameSeparator\s+= "~"', ironic)
    states = [os.path.join(root, "states.py") for root, _dirs, files in os.walk(os.path.join(CACHE, "metal3", "ironic-venv"))
              if root.endswith(os.path.join("ironic", "common")) and "states.py" in files]
    assert states, "Ironic (tests/integration/metal3/metal3-test-services.sh install) is not installed under %s" % CACHE
    with open(states[0]) as f:
        assert "DEPLOYWAIT = '%s'" % double.IRONIC_WAITING in f.read()


def host(state="provisioning", image=True, annotations=None, deleting=False, error=None, done_image=None):
    meta = {"name": "n", "namespace": "ns", "annotations": annotations or {}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec = {"image": {"url": "http://i"}} if image else {}
    status = {"provisioning": {"state": state}}
    if done_image:
        status["provisioning"]["image"] = done_image
    if error:
        status["errorType"] = error
    return {"metadata": meta, "spec": spec, "status": status}


WAITING = {"provision_state": "wait call-back"}
OURS = {double.PAUSED_ANNOTATION: double.PAUSED_BY}


@pytest.mark.parametrize("obj,node,expected", [
    (host(), WAITING, "take"),
    (host(), {"provision_state": "deploying"}, None),      # Ironic not yet waiting
    (host(), {"provision_state": "deploy failed"}, None),  # a real failure stays the operator's
    (host(), None, None),
    (host(state="available"), WAITING, None),
    (host(error="provisioning error"), WAITING, None),
    (host(image=False), WAITING, None),
    (host(deleting=True), WAITING, None),
    (host(annotations={double.PAUSED_ANNOTATION: ""}), WAITING, None),  # paused by someone else
    (host(state="provisioned", annotations=OURS, done_image={"url": "http://i"}), WAITING, None),
    (host(state="provisioned", annotations=OURS, image=False, done_image={"url": "http://i"}), WAITING, "hand back"),
    (host(state="provisioned", annotations=OURS, done_image={"url": "http://old"}), WAITING, "hand back"),
    (host(state="provisioned", annotations=OURS, deleting=True, done_image={"url": "http://i"}), WAITING, "hand back"),
])
def test_action(obj, node, expected):
    assert double.action(obj, node) == expected
