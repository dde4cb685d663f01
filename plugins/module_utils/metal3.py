# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bare-metal hosts provisioned through Metal3: validation and the objects derived from them.

One host definition (inventory ``metal3_hosts_list``) yields its BMC credentials Secret, its
BareMetalHost and the names of both. What baremetal-operator then enrolls in Ironic is read from
Ironic by molecule/metal3, once the real operator has enrolled them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import re
from urllib.parse import urlsplit

from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model, secret_file
from ansible_collections.slime.hybrid.plugins.module_utils.cluster_model import worker_settings
from ansible_collections.slime.hybrid.plugins.module_utils.names import DNS_LABEL_RE, dns_label_errors, feature_errors, normalize_mac

# Every BMC address scheme Metal3's baremetal-operator v0.13.2 registers (pkg/hardwareutils/bmc:
# ipmi.go, redfish.go, redfish_virtualmedia.go, redfish_https.go, idrac_virtualmedia.go;
# RegisterFactory) and what it enrolls in Ironic for it (AccessDetails.Driver, BootInterface and the
# vendor's ManagementInterface/PowerInterface/VendorInterface): scheme -> (Ironic driver, boot
# interface, vendor interface or None, protocol). ilo5-* enroll as plain redfish; idrac-* as the
# idrac hardware type with its Redfish interfaces. The Redfish ones also take +http / +https.
DRIVERS = {
    "ipmi": ("ipmi", "ipxe", None, "ipmi"),
    "libvirt": ("ipmi", "ipxe", None, "ipmi"),
    "redfish": ("redfish", "ipxe", None, "redfish"),
    "redfish-virtualmedia": ("redfish", "redfish-virtual-media", None, "redfish"),
    "redfish-uefihttp": ("redfish", "redfish-https", None, "redfish"),
    "ilo5-redfish": ("redfish", "ipxe", None, "redfish"),
    "ilo5-virtualmedia": ("redfish", "redfish-virtual-media", None, "redfish"),
    "idrac-redfish": ("idrac", "ipxe", "idrac-redfish", "redfish"),
    "idrac-virtualmedia": ("idrac", "idrac-redfish-virtual-media", "idrac-redfish", "redfish"),
}
AUTOMATED_CLEANING_MODES = ("metadata", "disabled")
BOOT_MODES = ("UEFI", "UEFISecureBoot", "legacy")
CHECKSUM_TYPES = ("auto", "md5", "sha256", "sha512")
IMAGE_FORMATS = ("raw", "qcow2", "vdi", "vmdk", "live-iso")
ROOT_DEVICE_HINTS = {
    "deviceName": str, "hctl": str, "model": str, "vendor": str, "serialNumber": str,
    "minSizeGigabytes": int, "wwn": str, "wwnWithExtension": str, "wwnVendorExtension": str,
    "rotational": bool,
}

_HEX_RE = re.compile(r"^[0-9a-fA-F]+$")
_HEX_LENGTHS = {32: "md5", 64: "sha256", 128: "sha512"}


def _allowed():
    return ", ".join("%s://" % scheme for scheme in sorted(DRIVERS)) + " (the Redfish ones also as SCHEME+http:// or SCHEME+https://)"


def parse_bmc_address(address):
    """A Metal3 BMC address -> its parts; ValueError naming the value and what is allowed.

    redfish://H[:P]/redfish/v1/Systems/ID (https), redfish+http://..., redfish+https://..., the same
    for every Redfish scheme of DRIVERS; ipmi://H[:P] and libvirt://H[:P] (port 623 by default).
    """
    text = str(address or "").strip()
    if "://" not in text:
        raise ValueError("BMC address %r has no scheme; allowed: %s" % (address, _allowed()))
    parts = urlsplit(text)
    base, _plus, transport = parts.scheme.partition("+")
    if base not in DRIVERS:
        raise ValueError("BMC driver %r (address %r) is not supported; allowed: %s" % (parts.scheme, address, _allowed()))
    driver, boot_interface, vendor_interface, protocol = DRIVERS[base]
    if protocol == "ipmi" and transport:
        raise ValueError("BMC address %r: %s takes no +transport; use %s://HOST[:PORT]" % (address, base, base))
    if transport and transport not in ("http", "https"):
        raise ValueError("BMC address %r: transport %r is not http or https" % (address, transport))
    try:
        port = parts.port
    except ValueError:
        raise ValueError("BMC address %r has an invalid port" % (address,))
    if not parts.hostname:
        raise ValueError("BMC address %r has no host" % (address,))
    out = {
        "address": text, "scheme": base, "driver": driver, "boot_interface": boot_interface,
        "vendor_interface": vendor_interface, "protocol": protocol,
        "host": parts.hostname, "port": port, "system_id": None, "endpoint": None, "transport": None,
    }
    if protocol == "redfish":
        out["transport"] = transport or "https"
        netloc = "[%s]" % parts.hostname if ":" in parts.hostname else parts.hostname
        if port:
            netloc = "%s:%d" % (netloc, port)
        out["endpoint"] = "%s://%s" % (out["transport"], netloc)
        path = parts.path.rstrip("/")
        if path.strip("/") not in ("", "redfish/v1"):
            out["system_id"] = path
    else:
        out["port"] = port or 623
    return out


def checksum_error(image):
    """None when the image's checksum is usable, else why not."""
    checksum = str(image.get("checksum") or "").strip()
    kind = image.get("checksum_type") or "auto"
    if image.get("format") == "live-iso":
        return None
    if not checksum:
        return "has no checksum (a hex digest or the URL of a checksum file is required unless format is live-iso)"
    if kind not in CHECKSUM_TYPES:
        return "checksum_type=%r is not one of %s" % (kind, ", ".join(CHECKSUM_TYPES))
    if checksum.startswith(("http://", "https://")):
        return None
    if not _HEX_RE.match(checksum):
        return "checksum %r is neither a hex digest nor an http(s) URL of a checksum file" % checksum
    expected = _HEX_LENGTHS.get(len(checksum))
    if expected is None:
        return "checksum has %d hex digits, which is no md5, sha256 or sha512 digest" % len(checksum)
    if kind != "auto" and kind != expected:
        return "checksum has %d hex digits (%s) but checksum_type is %s" % (len(checksum), expected, kind)
    return None


def _one_of(errors, label, field, value, allowed):
    """Reports value unless it is one of allowed."""
    if value not in allowed:
        errors.append("%s: %s=%r is not one of %s" % (label, field, value, ", ".join(allowed)))


def _unique(errors, seen, label, what, value):
    """Reports value when an earlier host already uses it (seen: value -> that host's label)."""
    if value in seen:
        errors.append("%s: %s %s is also used by %s" % (label, what, value, seen[value]))
    seen.setdefault(value, label)


def normalize_hosts(hosts):
    """Validate the host list; returns (normalized hosts, errors). Every problem is reported."""
    if not isinstance(hosts, list):
        return [], ["metal3_hosts_list=%r must be a list of hosts" % (hosts,)]
    out, errors, seen_names, seen_macs, seen_bmcs = [], [], {}, {}, {}
    for index, host in enumerate(hosts):
        label = "metal3_hosts_list[%d]" % index
        if not isinstance(host, dict):
            errors.append("%s=%r must be a mapping (name, bmc, boot_mac, image, ...)" % (label, host))
            continue
        name = host.get("name")
        if not isinstance(name, str) or not DNS_LABEL_RE.match(name):
            errors.append("%s.name=%r is not a valid host name (lowercase letters, digits and '-', at most 63; "
                          "it names the BareMetalHost and the Slurm node)" % (label, name))
        else:
            if name in seen_names:
                errors.append("host name %r is used twice (%s and %s)" % (name, seen_names[name], label))
            seen_names.setdefault(name, label)
            label = "host %s" % name
        norm = {"name": name, "online": bool(host.get("online", True))}

        bmc = host.get("bmc")
        if not isinstance(bmc, dict):
            errors.append("%s: bmc=%r must be a mapping with address, username, password" % (label, bmc))
            bmc = {}
        try:
            parsed = parse_bmc_address(bmc.get("address"))
        except ValueError as exc:
            errors.append("%s: %s" % (label, exc))
            parsed = None
        for field in ("username", "password"):
            if not bmc.get(field):
                errors.append("%s: bmc.%s is required" % (label, field))
        if parsed:
            _unique(errors, seen_bmcs, label, "BMC address", parsed["address"])
        norm["bmc"] = dict(parsed or {}, username=str(bmc.get("username") or ""), password=str(bmc.get("password") or ""),
                           disable_certificate_verification=bool(bmc.get("disable_certificate_verification", False)))

        mac = host.get("boot_mac")
        norm["boot_mac"] = None
        if mac in (None, ""):
            if parsed and parsed["protocol"] == "ipmi":
                errors.append("%s: boot_mac is required with an IPMI BMC (it cannot report the host's NICs)" % label)
        else:
            try:
                norm["boot_mac"] = normalize_mac(mac)
            except ValueError as exc:
                errors.append("%s: boot_mac %s" % (label, exc))
            else:
                _unique(errors, seen_macs, label, "boot_mac", norm["boot_mac"])

        norm["boot_mode"] = host.get("boot_mode", "UEFI")
        _one_of(errors, label, "boot_mode", norm["boot_mode"], BOOT_MODES)
        if norm["boot_mode"] == "UEFISecureBoot" and parsed and parsed["protocol"] == "ipmi":
            errors.append("%s: boot_mode=UEFISecureBoot needs a Redfish BMC; IPMI cannot set secure boot" % label)

        # Inspection boots the deploy ramdisk to read the hardware; automated cleaning wipes the
        # disks' metadata before and after each use (Metal3's defaults: on, metadata).
        norm["inspect"] = host.get("inspect", True)
        if not isinstance(norm["inspect"], bool):
            errors.append("%s: inspect=%r must be true or false" % (label, norm["inspect"]))
        norm["automated_cleaning_mode"] = host.get("automated_cleaning_mode", "metadata")
        _one_of(errors, label, "automated_cleaning_mode", norm["automated_cleaning_mode"], AUTOMATED_CLEANING_MODES)

        image = host.get("image")
        if not isinstance(image, dict) or not image.get("url"):
            errors.append("%s: image=%r must be a mapping with url and checksum" % (label, image))
            image = {}
        image = {"url": str(image.get("url") or ""), "checksum": str(image.get("checksum") or ""),
                 "checksum_type": image.get("checksum_type") or "auto", "format": image.get("format") or "qcow2"}
        if image["url"] and not image["url"].startswith(("http://", "https://")):
            errors.append("%s: image.url=%r must be an http(s) URL Ironic can download" % (label, image["url"]))
        _one_of(errors, label, "image.format", image["format"], IMAGE_FORMATS)
        if image["url"] and image["format"] in IMAGE_FORMATS:
            problem = checksum_error(image)
            if problem:
                errors.append("%s: image %s %s" % (label, image["url"], problem))
        norm["image"] = image

        hints = host.get("root_device_hints") or {}
        if not isinstance(hints, dict):
            errors.append("%s: root_device_hints=%r must be a mapping" % (label, hints))
            hints = {}
        for key, value in sorted(hints.items()):
            kind = ROOT_DEVICE_HINTS.get(key)
            if kind is None:
                errors.append("%s: root_device_hints.%s is not a Metal3 hint; allowed: %s"
                              % (label, key, ", ".join(sorted(ROOT_DEVICE_HINTS))))
            elif kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                errors.append("%s: root_device_hints.%s=%r must be a positive integer" % (label, key, value))
            elif kind is not int and not isinstance(value, kind):
                errors.append("%s: root_device_hints.%s=%r must be a %s" % (label, key, value, kind.__name__))
        norm["root_device_hints"] = dict(hints)
        # The Slurm node: features, slurmd --conf extras, and this host's overrides of the model's
        # worker settings (the same keys as slime_cluster.worker; merged over it by worker.plan()).
        norm["features"] = host.get("features", ["baremetal"])
        errors.extend(feature_errors(norm["features"], "%s: features" % label))
        norm["conf_extra"] = host.get("conf_extra") or {}
        if not isinstance(norm["conf_extra"], dict):
            errors.append("%s: conf_extra=%r must be a mapping of slurmd --conf settings" % (label, norm["conf_extra"]))
        norm["worker"] = host.get("worker") or {}
        errors.extend(worker_settings(norm["worker"], "%s: worker" % label)[1])
        out.append(norm)
    return out, errors


def credentials_secret_name(host):
    return "%s-bmc-secret" % host["name"]


def user_data_secret_name(host):
    return "%s-user-data" % host["name"]


def _b64(text):
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def labels(cluster_name):
    return {"app.kubernetes.io/managed-by": "slime.hybrid", "slime.hybrid/cluster": cluster_name}


def _secret(name, namespace, cluster_name, **data):
    """An Opaque Secret of this cluster holding data (key: text), base64-encoded."""
    return {
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": name, "namespace": namespace, "labels": labels(cluster_name)},
        "data": dict((key, _b64(text)) for key, text in data.items()),
    }


def credentials_secret(host, namespace, cluster_name):
    """The BMC credentials Secret (baremetal-operator reads keys username and password)."""
    return _secret(credentials_secret_name(host), namespace, cluster_name,
                   username=host["bmc"]["username"], password=host["bmc"]["password"])


def user_data_secret(host, namespace, cluster_name, user_data):
    """The cloud-init Secret the BareMetalHost's spec.userData points at (key userData)."""
    return _secret(user_data_secret_name(host), namespace, cluster_name, userData=user_data)


def bare_metal_host(host, namespace, cluster_name, provision=True):
    """The BareMetalHost; provision=False leaves out image and userData (deprovisioned, powered off)."""
    spec = {
        "online": bool(host["online"]) and provision,
        "bootMode": host["boot_mode"],
        "automatedCleaningMode": host["automated_cleaning_mode"],
        # false is sent as null: baremetal-operator writes the host back without the field
        # (omitempty), so a false here would be a change on every run; null removes a true.
        "bmc": {"address": host["bmc"]["address"], "credentialsName": credentials_secret_name(host),
                "disableCertificateVerification": True if host["bmc"]["disable_certificate_verification"] else None},
    }
    if host.get("boot_mac"):
        spec["bootMACAddress"] = host["boot_mac"]
    if host.get("root_device_hints"):
        spec["rootDeviceHints"] = dict(host["root_device_hints"])
    if provision:
        image = host["image"]
        spec["image"] = {"url": image["url"], "format": image["format"]}
        if image["checksum"]:
            spec["image"].update(checksum=image["checksum"], checksumType=image["checksum_type"])
        spec["userData"] = {"name": user_data_secret_name(host), "namespace": namespace}
    else:
        # null removes the fields in the merge patch: the operator deprovisions the host.
        spec["image"] = spec["userData"] = None
    metadata = {"name": host["name"], "namespace": namespace, "labels": labels(cluster_name)}
    if not host["inspect"]:
        # baremetal-operator skips inspection for this annotation (apis/metal3.io/v1alpha1
        # baremetalhost_types.go, InspectAnnotationPrefix; value "disabled").
        metadata["annotations"] = {"inspect.metal3.io": "disabled"}
    return {"apiVersion": "metal3.io/v1alpha1", "kind": "BareMetalHost", "metadata": metadata, "spec": spec}


def stale_user_data(hosts, bare_metal_hosts, secrets, user_data):
    """Names of hosts already provisioned whose stored userData differs from the new one.

    bare_metal_hosts, secrets: the objects read from the cluster; user_data: {name: new text}."""
    provisioned = set(obj["metadata"]["name"] for obj in bare_metal_hosts or [] if _state(obj) == "provisioned")
    stored = dict((obj["metadata"]["name"], (obj.get("data") or {}).get("userData", "")) for obj in secrets or [])
    stale = []
    for host in hosts:
        old = stored.get(user_data_secret_name(host))
        if host["name"] in provisioned and old is not None and old != _b64(user_data[host["name"]]):
            stale.append(host["name"])
    return stale


def _image_urls(host):
    """(what, URL) Ironic fetches for a host's deploy: the image, and its checksum where that is a URL."""
    image = host.get("image") or {}
    urls = [("image", image.get("url") or "")]
    if str(image.get("checksum") or "").startswith(("http://", "https://")):
        urls.append(("checksum", image["checksum"]))
    return [(what, url) for what, url in urls if url.startswith(("http://", "https://"))]


def image_urls(hosts):
    """Every http(s) URL Ironic fetches to deploy the hosts (images, checksum files), each once, sorted."""
    return sorted(set(url for host in hosts or [] for _what, url in _image_urls(host)))


def image_refusals(hosts, checks):
    """What the image preflight found: checks are ansible.builtin.uri's results of a HEAD of each image_urls() URL
    (item, status, msg). {"refused": {host: [reason, ...]}: a URL whose server answered with an HTTP error - Ironic's
    deploy would fail on it; "unverified": [URL and why]: no HTTP answer from here (another network, a certificate
    this node does not trust), which says nothing of what Ironic sees; "lines": "host: reasons" for each refused host}."""
    by_url = dict((check.get("item"), check) for check in checks or [] if not check.get("skipped"))
    refused, unverified = {}, []
    for url in sorted(by_url):
        check = by_url[url]
        if int(check.get("status") or -1) < 100:
            unverified.append("%s (%s)" % (url, (check.get("msg") or "no answer").strip()[:200]))
    for host in hosts or []:
        reasons = ["%s %s answers HTTP %s to HEAD" % (what, url, by_url[url]["status"])
                   for what, url in _image_urls(host)
                   if url in by_url and int(by_url[url].get("status") or -1) >= 400]
        if reasons:
            refused[host["name"]] = reasons
    return {"refused": refused, "unverified": unverified,
            "lines": ["%s: %s" % (name, "; ".join(reasons)) for name, reasons in sorted(refused.items())]}


def _state(obj):
    return (((obj or {}).get("status") or {}).get("provisioning") or {}).get("state") or ""


def host_failed(obj):
    status = (obj or {}).get("status") or {}
    return status.get("operationalStatus") == "error" or bool(status.get("errorType"))


def _error_count(obj):
    return int(((obj or {}).get("status") or {}).get("errorCount") or 0)


def errors_retried(existing, hosts, namespace, cluster_name):
    """{name: errorCount} of the hosts Metal3 reported an error for that this run gives another image or power state
    (hosts: normalized, as this run applies them with bare_metal_host(); existing: the BareMetalHosts as read before;
    only a failed one's definition is built, the role's wait reads this at every poll). baremetal-operator tries such
    a host again with the new spec (a failed deploy: deprovisioned, then provisioned anew; its error stays in the
    status meanwhile): its error is this run's only once Metal3 counts another (host_progress)."""
    failed = dict((obj["metadata"]["name"], obj) for obj in existing or [] if host_failed(obj))
    retried = {}
    for host in hosts or []:
        name = host["name"]
        obj = failed.get(name)
        if obj is None:
            continue
        have, want = obj.get("spec") or {}, bare_metal_host(host, namespace, cluster_name)["spec"]
        image_have, image_want = have.get("image") or {}, want.get("image") or {}
        if (have.get("online") != want.get("online")
                or any(image_have.get(key) != image_want.get(key) for key in ("url", "checksum"))):
            retried[name] = _error_count(obj)
    return retried


def host_progress(objects, names, wanted, retried=None):
    """Sort the named hosts into done (state in wanted), failed (Metal3 reports an error) and waiting. retried: {name:
    errorCount} of errors_retried(): such a host fails only on an error Metal3 counted after that one."""
    by_name = dict((obj["metadata"]["name"], obj) for obj in objects or [])
    retried = retried or {}
    out = {"done": [], "failed": [], "waiting": []}
    for name in names:
        obj = by_name.get(name)
        done = obj is not None and _state(obj) in wanted
        # host_failed(None) is False: a host with no BareMetalHost yet is waiting.
        failed = host_failed(obj) and not (name in retried and _error_count(obj) <= int(retried[name]))
        out["failed" if failed else "done" if done else "waiting"].append(name)
    return out


def host_report(objects, names):
    """One line per named host: 'node-0: provisioned', 'node-1: registering, error registration error: ...'."""
    by_name = dict((obj["metadata"]["name"], obj) for obj in objects or [])
    lines = []
    for name in names:
        obj = by_name.get(name)
        if obj is None:
            lines.append("%s: no BareMetalHost" % name)
            continue
        status = obj.get("status") or {}
        line = "%s: %s" % (name, _state(obj) or "(no state yet)")
        if status.get("poweredOn") is not None:
            line += ", powered %s" % ("on" if status["poweredOn"] else "off")
        if host_failed(obj):
            line += ", error %s: %s" % (status.get("errorType") or "-", status.get("errorMessage") or "(no message)")
        lines.append(line)
    return lines


def input_errors(inputs):
    """Every problem of the metal3_hosts role's inputs at once (its `validate` entry point, which site.yml
    and scale_out.yml run first). inputs: {hosts (metal3_hosts_list), names (metal3_hosts_names),
    cluster, namespace, slurm_key_b64, slurm_key_src, intent_only}.

    intent_only: releasing hosts (the cluster's name labels the objects), or a check before the
    cluster's facts are read: the model as the site states it, and no slurm.key (it comes from the
    cluster later); provisioning renders user-data from the whole model and the key."""
    hosts, intent_only = inputs.get("hosts"), inputs.get("intent_only")
    errors = normalize_hosts(hosts)[1]
    cluster = inputs.get("cluster")
    errors += cluster_model.intent_errors(cluster) if intent_only else cluster_model.validate(cluster)
    errors += dns_label_errors({"metal3_hosts_namespace": inputs.get("namespace")})
    if not intent_only:
        errors += secret_file.key_input_errors(inputs.get("slurm_key_b64"), inputs.get("slurm_key_src"), "metal3_hosts")
    known = [host.get("name", "") for host in (hosts if isinstance(hosts, list) else []) if isinstance(host, dict)]
    unknown = [name for name in inputs.get("names") or [] if name not in known]
    if unknown:
        errors.append("metal3_hosts_names: %s not in metal3_hosts_list" % ", ".join(unknown))
    return errors
