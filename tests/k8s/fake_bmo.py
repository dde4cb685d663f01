"""Stand-in for Metal3's baremetal-operator in the API-server test tier.

The test API server runs no operator, so nothing would ever move a BareMetalHost. This loop
does what baremetal-operator reports, one step per pass, through the status subresource:

  (none) -> registering -> inspecting -> available -> provisioning -> provisioned   (spec.image set)
  provisioned -> deprovisioning -> available                                         (spec.image removed)
  status.poweredOn follows spec.online once the host is registered.

Failures it reports, as baremetal-operator does (operationalStatus error, errorType, errorMessage):
  - registration error when the credentials Secret is missing or lacks username/password;
  - registration error when the BMC host is 192.0.2.99 (this test double's "unreachable BMC");
  - provisioned registration error when the userData Secret named by spec.userData is missing.
"""

import base64
import sys
import time

from kubernetes import client, config
from kubernetes.client.rest import ApiException

GROUP, VERSION, PLURAL = "metal3.io", "v1alpha1", "baremetalhosts"
UNREACHABLE = "192.0.2.99"


def secret(core, namespace, name):
    try:
        return core.read_namespaced_secret(name, namespace)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def registration_error(core, host):
    spec, namespace = host.get("spec") or {}, host["metadata"]["namespace"]
    bmc = spec.get("bmc") or {}
    creds = secret(core, namespace, bmc.get("credentialsName", ""))
    if creds is None:
        return "failed to read BMC credentials secret %s/%s: not found" % (namespace, bmc.get("credentialsName"))
    data = creds.data or {}
    if not data.get("username") or not data.get("password"):
        return "BMC credentials secret %s/%s: missing username or password" % (namespace, bmc.get("credentialsName"))
    if UNREACHABLE in bmc.get("address", ""):
        return "Failed to get power state for node: Unable to connect to %s" % bmc.get("address")
    base64.b64decode(data["password"])  # what the operator hands to Ironic must decode
    return None


def step(core, host):
    """The next status for a host, or None when it is where its spec wants it."""
    spec = host.get("spec") or {}
    status = dict(host.get("status") or {})
    state = (status.get("provisioning") or {}).get("state", "")
    wants_image = bool((spec.get("image") or {}).get("url"))
    error = None
    if state in ("", "registering"):
        error = registration_error(core, host)
        nxt = "registering" if error else ("inspecting" if state == "registering" else "registering")
        error_type = "registration error"
    elif state == "inspecting":
        nxt = "available"
    elif state == "available" and wants_image:
        nxt = "provisioning"
    elif state == "provisioning":
        user_data = spec.get("userData") or {}
        if user_data and secret(core, user_data.get("namespace") or host["metadata"]["namespace"], user_data.get("name")) is None:
            error, error_type, nxt = "userData secret %s not found" % user_data.get("name"), "provisioning error", "provisioning"
        else:
            nxt = "provisioned"
    elif state == "provisioned" and not wants_image:
        nxt = "deprovisioning"
    elif state == "deprovisioning":
        nxt = "available"
    else:
        nxt = state
    powered = bool(spec.get("online")) if nxt not in ("", "registering") else False
    if nxt == "available" and not spec.get("online"):
        powered = False
    # Shaped by the real BareMetalHost schema (baremetal-operator v0.13.2): errorCount and
    # provisioning.ID are required, errorType is an enum (absent when there is no error).
    provisioning = {"state": nxt, "ID": host["metadata"]["uid"], "bootMode": spec.get("bootMode", "UEFI")}
    if (spec.get("image") or {}).get("url"):
        provisioning["image"] = spec["image"]
    new = {
        "provisioning": provisioning,
        "poweredOn": powered,
        "operationalStatus": "error" if error else "OK",
        "errorType": error_type if error else None,
        "errorMessage": error or "",
        "errorCount": 1 if error else 0,
        "goodCredentials": {} if error else {"credentials": {"name": (spec.get("bmc") or {}).get("credentialsName")}},
    }
    old = {key: status.get(key) for key in new}
    return None if old == new else new


def main(kubeconfig):
    config.load_kube_config(kubeconfig)
    core, custom = client.CoreV1Api(), client.CustomObjectsApi()
    while True:
        try:
            hosts = custom.list_cluster_custom_object(GROUP, VERSION, PLURAL)["items"]
        except ApiException:
            hosts = []  # CRD not there (yet)
        for host in hosts:
            new = step(core, host)
            if new is not None:
                meta = host["metadata"]
                custom.patch_namespaced_custom_object_status(GROUP, VERSION, meta["namespace"], PLURAL, meta["name"],
                                                             {"status": new})
        time.sleep(0.5)


if __name__ == "__main__":
    main(sys.argv[1])
