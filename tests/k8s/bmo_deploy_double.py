"""The one step of Metal3's state machine this machine cannot run: the deploy ramdisk calling back.

Everything else is real: baremetal-operator v0.13.2 registers each BareMetalHost in Ironic
(Ironic 35.0.0, standalone), Ironic talks to sushy-tools' Redfish emulator or the IPMI BMC,
the host becomes available, and on provisioning the operator hands Ironic the image and the
config drive; Ironic validates the image URL, builds the boot configuration (iPXE, or the
virtual-media ISO), powers the host on and waits for the ironic-python-agent of the deploy
ramdisk to call back: Ironic's provision_state "wait call-back", BareMetalHost state
"provisioning". Without a machine to boot (no KVM here, no ramdisk) nothing calls back, and
after [conductor]deploy_callback_timeout Ironic would fail the deploy.

At exactly that point, and only there, this double does what baremetal-operator does when
Ironic reports the deploy done (internal/controller/metal3.io/host_state_machine.go,
handleProvisioning: actionProvisioning complete -> NextState = StateProvisioned, ErrorCount = 0;
baremetalhost_controller.go, actionProvisioning: Status.Provisioning.Image = Spec.Image, and
clearError: operationalStatus OK, no errorType/errorMessage). So that the operator does not
undo it, it first pauses the host with the operator's own annotation
(apis/metal3.io/v1alpha1/baremetalhost_types.go, PausedAnnotation; the reconciler returns at
once for a paused host). It hands the host back (removes the annotation) as soon as the spec
no longer asks for that image or the host is being deleted: from there the real operator
deprovisions it (Ironic accepts "deleted" from "wait call-back"; pkg/provisioner/ironic/
ironic.go, Deprovision: case nodes.Active, nodes.DeployFail, nodes.DeployWait).

Every take-over is appended to REPORT (one JSON object per line: host, the Ironic node's state,
power and last error, the BareMetalHost state) so a test can prove where the real chain stopped.
tests/k8s/test_bmo_deploy_double.py checks these facts against the operator's source.

Usage: bmo_deploy_double.py KUBECONFIG IRONIC_URL REPORT
"""

import json
import sys
import time
import urllib.error
import urllib.request

from kubernetes import client, config
from kubernetes.client.rest import ApiException

GROUP, VERSION, PLURAL = "metal3.io", "v1alpha1", "baremetalhosts"
PAUSED_ANNOTATION = "baremetalhost.metal3.io/paused"
PAUSED_BY = "slime.hybrid/deploy-double"
IRONIC_WAITING = "wait call-back"
STATE_PROVISIONING, STATE_PROVISIONED = "provisioning", "provisioned"


def ironic_node(ironic_url, namespace, name):
    """The Ironic node baremetal-operator made for the host (named NAMESPACE~NAME), or None."""
    url = "%s/v1/nodes/%s~%s" % (ironic_url.rstrip("/"), namespace, name)
    request = urllib.request.Request(url, headers={"X-OpenStack-Ironic-API-Version": "latest"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise


def action(host, node):
    """What to do with a host: 'take' (deploy waits for a callback), 'hand back', or None."""
    meta, spec, status = host["metadata"], host.get("spec") or {}, host.get("status") or {}
    ours = (meta.get("annotations") or {}).get(PAUSED_ANNOTATION) == PAUSED_BY
    if ours:
        wanted = spec.get("image")
        done = (status.get("provisioning") or {}).get("image")
        if meta.get("deletionTimestamp") or not wanted or wanted != done:
            return "hand back"
        return None
    if PAUSED_ANNOTATION in (meta.get("annotations") or {}) or meta.get("deletionTimestamp"):
        return None  # paused by someone else, or going away
    state = (status.get("provisioning") or {}).get("state")
    if state != STATE_PROVISIONING or status.get("errorType") or not spec.get("image"):
        return None
    if node is None or node.get("provision_state") != IRONIC_WAITING:
        return None
    return "take"


def provisioned_status(host, node):
    """The status fields the operator changes when Ironic reports the deploy done (and the power
    state it reads from Ironic in the provisioned state, actionManageSteadyState)."""
    return {
        "provisioning": {"state": STATE_PROVISIONED, "image": host["spec"]["image"]},
        "poweredOn": node.get("power_state") == "power on",
        "operationalStatus": "OK",
        "errorType": None,
        "errorMessage": "",
        "errorCount": 0,
    }


def record(report, host, action, **fields):
    """One line of REPORT for a take-over or a hand-back, and the same on stdout."""
    meta = host["metadata"]
    entry = dict(fields, time=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 host="%s/%s" % (meta["namespace"], meta["name"]), action=action)
    with open(report, "a") as f:
        f.write(json.dumps(entry) + "\n")
    print("%s %s" % (action, entry["host"]), flush=True)


def take(custom, host, node, report):
    meta = host["metadata"]
    ns, name = meta["namespace"], meta["name"]
    custom.patch_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, name,
                                          {"metadata": {"annotations": {PAUSED_ANNOTATION: PAUSED_BY}}})
    custom.patch_namespaced_custom_object_status(GROUP, VERSION, ns, PLURAL, name,
                                                 {"status": provisioned_status(host, node)})
    record(report, host, "take",
           bmh_state=(host.get("status") or {}).get("provisioning", {}).get("state"),
           ironic_provision_state=node.get("provision_state"),
           ironic_target_provision_state=node.get("target_provision_state"),
           ironic_power_state=node.get("power_state"), ironic_last_error=node.get("last_error"),
           boot_interface=node.get("boot_interface"), driver=node.get("driver"))


def hand_back(custom, host, report):
    meta = host["metadata"]
    custom.patch_namespaced_custom_object(GROUP, VERSION, meta["namespace"], PLURAL, meta["name"],
                                          {"metadata": {"annotations": {PAUSED_ANNOTATION: None}}})
    record(report, host, "hand back")


def main(kubeconfig, ironic_url, report):
    config.load_kube_config(kubeconfig)
    custom = client.CustomObjectsApi()
    while True:
        try:
            hosts = custom.list_cluster_custom_object(GROUP, VERSION, PLURAL)["items"]
        except ApiException:
            hosts = []  # CRD not there (yet)
        for host in hosts:
            meta = host["metadata"]
            try:
                node = ironic_node(ironic_url, meta["namespace"], meta["name"])
                what = action(host, node)
                if what == "take":
                    take(custom, host, node, report)
                elif what == "hand back":
                    hand_back(custom, host, report)
            except (ApiException, urllib.error.URLError, OSError) as exc:
                print("%s/%s: %s" % (meta["namespace"], meta["name"], exc), flush=True)
        time.sleep(1)


if __name__ == "__main__":
    main(*sys.argv[1:4])
