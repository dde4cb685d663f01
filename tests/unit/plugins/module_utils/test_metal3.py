# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Metal3 host validation and the objects derived from a host (module_utils/metal3.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import copy

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import metal3

GOOD = {
    "name": "node-0",
    "bmc": {"address": "redfish+http://192.168.111.1:8000/redfish/v1/Systems/abc", "username": "admin",
            "password": "s3cret"},
    "boot_mac": "00:5C:52:31:3A:9C",
    "image": {"url": "http://172.22.0.1/images/img.qcow2", "checksum": "http://172.22.0.1/images/img.qcow2.sha256sum"},
}


def host(**changes):
    out = copy.deepcopy(GOOD)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key].update(value)
        else:
            out[key] = value
    return out


@pytest.mark.parametrize("address, driver, boot, endpoint, system", [
    ("redfish://10.0.0.1/redfish/v1/Systems/1", "redfish", "ipxe", "https://10.0.0.1", "/redfish/v1/Systems/1"),
    ("redfish+http://10.0.0.1:8000/redfish/v1/Systems/x", "redfish", "ipxe", "http://10.0.0.1:8000", "/redfish/v1/Systems/x"),
    ("redfish+https://bmc.example.com/redfish/v1/", "redfish", "ipxe", "https://bmc.example.com", None),
    ("redfish-virtualmedia://10.0.0.1/redfish/v1/Systems/1", "redfish", "redfish-virtual-media", "https://10.0.0.1",
     "/redfish/v1/Systems/1"),
    ("redfish-virtualmedia+http://[fd00::1]:8000/redfish/v1/Systems/1", "redfish", "redfish-virtual-media",
     "http://[fd00::1]:8000", "/redfish/v1/Systems/1"),
])
def test_parse_redfish(address, driver, boot, endpoint, system):
    parsed = metal3.parse_bmc_address(address)
    assert (parsed["driver"], parsed["boot_interface"], parsed["endpoint"], parsed["system_id"]) == (driver, boot, endpoint, system)
    assert parsed["protocol"] == "redfish"


# What baremetal-operator v0.13.2 enrolls for each scheme (pkg/hardwareutils/bmc/*.go: Driver(),
# BootInterface(), and for iDRAC ManagementInterface()/PowerInterface()/VendorInterface()).
@pytest.mark.parametrize("scheme, driver, boot, vendor, protocol", [
    ("ipmi", "ipmi", "ipxe", None, "ipmi"),
    ("libvirt", "ipmi", "ipxe", None, "ipmi"),
    ("redfish", "redfish", "ipxe", None, "redfish"),
    ("redfish-virtualmedia", "redfish", "redfish-virtual-media", None, "redfish"),
    ("redfish-uefihttp", "redfish", "redfish-https", None, "redfish"),
    ("ilo5-redfish", "redfish", "ipxe", None, "redfish"),
    ("ilo5-virtualmedia", "redfish", "redfish-virtual-media", None, "redfish"),
    ("idrac-redfish", "idrac", "ipxe", "idrac-redfish", "redfish"),
    ("idrac-virtualmedia", "idrac", "idrac-redfish-virtual-media", "idrac-redfish", "redfish"),
])
def test_every_scheme_of_the_operator(scheme, driver, boot, vendor, protocol):
    path = "/redfish/v1/Systems/1" if protocol == "redfish" else ""
    parsed = metal3.parse_bmc_address("%s://10.0.0.1%s" % (scheme, path))
    assert (parsed["driver"], parsed["boot_interface"], parsed["vendor_interface"], parsed["protocol"]) == (driver, boot, vendor, protocol)
    if protocol == "redfish":
        for transport in ("http", "https"):
            assert metal3.parse_bmc_address("%s+%s://10.0.0.1%s" % (scheme, transport, path))["endpoint"] == "%s://10.0.0.1" % transport
    else:
        assert parsed["port"] == 623


def test_inspection_and_cleaning():
    hosts, errors = metal3.normalize_hosts([host()])
    assert errors == [] and hosts[0]["inspect"] is True and hosts[0]["automated_cleaning_mode"] == "metadata"
    bmh = metal3.bare_metal_host(hosts[0], "ns", "c")
    assert "annotations" not in bmh["metadata"] and bmh["spec"]["automatedCleaningMode"] == "metadata"
    hosts, errors = metal3.normalize_hosts([host(inspect=False, automated_cleaning_mode="disabled")])
    bmh = metal3.bare_metal_host(hosts[0], "ns", "c")
    assert errors == [] and bmh["metadata"]["annotations"] == {"inspect.metal3.io": "disabled"}
    assert bmh["spec"]["automatedCleaningMode"] == "disabled"
    _hosts, errors = metal3.normalize_hosts([host(inspect="no", automated_cleaning_mode="all")])
    assert errors == ["host node-0: inspect='no' must be true or false",
                      "host node-0: automated_cleaning_mode='all' is not one of metadata, disabled"]


def test_parse_ipmi_default_port():
    parsed = metal3.parse_bmc_address("ipmi://192.168.111.1")
    assert (parsed["driver"], parsed["host"], parsed["port"], parsed["endpoint"]) == ("ipmi", "192.168.111.1", 623, None)
    assert metal3.parse_bmc_address("ipmi://192.168.111.1:6230")["port"] == 6230


@pytest.mark.parametrize("address, message", [
    ("idrac://10.0.0.1", "BMC driver 'idrac'"),
    ("10.0.0.1", "has no scheme"),
    ("ipmi+http://10.0.0.1", "ipmi takes no +transport"),
    ("libvirt+https://10.0.0.1", "libvirt takes no +transport"),
    ("redfish+ftp://10.0.0.1/redfish/v1/Systems/1", "transport 'ftp'"),
    ("redfish://:8000/redfish/v1/Systems/1", "has no host"),
    ("redfish://10.0.0.1:99999/redfish/v1", "invalid port"),
])
def test_parse_refuses(address, message):
    with pytest.raises(ValueError) as exc:
        metal3.parse_bmc_address(address)
    assert message in str(exc.value)
    assert "allowed" in str(exc.value) or "transport" in str(exc.value) or "host" in str(exc.value) or "port" in str(exc.value)


def test_normalize_good_host():
    hosts, errors = metal3.normalize_hosts([GOOD])
    assert errors == []
    (norm,) = hosts
    assert norm["boot_mac"] == "00:5c:52:31:3a:9c"
    assert norm["boot_mode"] == "UEFI" and norm["features"] == ["baremetal"] and norm["online"] is True
    assert norm["image"]["checksum_type"] == "auto" and norm["image"]["format"] == "qcow2"


@pytest.mark.parametrize("hosts, message", [
    ([host(name="Node_0")], "name='Node_0' is not a valid host name"),
    ([GOOD, host(bmc={"address": "redfish+http://192.168.111.1:8000/redfish/v1/Systems/other"}, boot_mac="00:5c:52:31:3a:9d")],
     "host name 'node-0' is used twice"),
    ([host(boot_mac="00:5c:52:31:3a")], "boot_mac '00:5c:52:31:3a' is not a MAC address"),
    ([host(image={"url": "http://x/img.qcow2", "checksum": ""})], "image http://x/img.qcow2 has no checksum"),
    ([host(image={"checksum": "abc123"})], "6 hex digits"),
    ([host(image={"checksum": "d41d8cd98f00b204e9800998ecf8427e", "checksum_type": "sha256"})], "(md5) but checksum_type is sha256"),
    ([host(image={"checksum_type": "crc32"})], "checksum_type='crc32'"),
    ([host(image={"format": "iso"})], "image.format='iso'"),
    ([host(image={"url": "file:///img"})], "must be an http(s) URL"),
    ([host(bmc={"address": "idrac://10.0.0.1"})], "BMC driver 'idrac'"),
    ([host(bmc={"password": ""})], "bmc.password is required"),
    ([host(bmc={"address": "ipmi://10.0.0.1"}, boot_mac=None)], "boot_mac is required with an IPMI BMC"),
    ([host(bmc={"address": "ipmi://10.0.0.1"}, boot_mode="UEFISecureBoot")], "UEFISecureBoot needs a Redfish BMC"),
    ([host(boot_mode="uefi")], "boot_mode='uefi' is not one of UEFI, UEFISecureBoot, legacy"),
    ([host(root_device_hints={"size": 10})], "root_device_hints.size is not a Metal3 hint"),
    ([host(root_device_hints={"minSizeGigabytes": "10"})], "must be a positive integer"),
    ([host(features=["gpu,a100"])], "'gpu,a100' is not a valid Slurm feature name"),
    ([GOOD, host(name="node-1")], "boot_mac 00:5c:52:31:3a:9c is also used by host node-0"),
    ("node-0", "must be a list"),
    (["node-0"], "must be a mapping"),
])
def test_normalize_refuses(hosts, message):
    errors = metal3.normalize_hosts(hosts)[1]
    assert any(message in error for error in errors), errors


def test_errors_are_all_reported():
    errors = metal3.normalize_hosts([host(boot_mac="zz", boot_mode="bios", image={"checksum": ""})])[1]
    assert len(errors) == 3


def test_objects():
    (norm,) = metal3.normalize_hosts([host(root_device_hints={"deviceName": "/dev/sda"})])[0]
    cred = metal3.credentials_secret(norm, "metal3", "c1")
    assert cred["metadata"]["name"] == "node-0-bmc-secret"
    assert base64.b64decode(cred["data"]["password"]) == b"s3cret"
    user = metal3.user_data_secret(norm, "metal3", "c1", "#cloud-config\n")
    assert base64.b64decode(user["data"]["userData"]) == b"#cloud-config\n"
    bmh = metal3.bare_metal_host(norm, "metal3", "c1")
    assert bmh["spec"]["bmc"] == {"address": GOOD["bmc"]["address"], "credentialsName": "node-0-bmc-secret",
                                  "disableCertificateVerification": None}  # null: the operator drops a false
    assert bmh["spec"]["bootMACAddress"] == "00:5c:52:31:3a:9c" and bmh["spec"]["online"] is True
    assert bmh["spec"]["image"] == {"url": GOOD["image"]["url"], "format": "qcow2", "checksum": GOOD["image"]["checksum"],
                                    "checksumType": "auto"}
    assert bmh["spec"]["userData"] == {"name": "node-0-user-data", "namespace": "metal3"}
    assert bmh["spec"]["rootDeviceHints"] == {"deviceName": "/dev/sda"}
    assert bmh["metadata"]["labels"]["slime.hybrid/cluster"] == "c1"
    released = metal3.bare_metal_host(norm, "metal3", "c1", provision=False)
    assert released["spec"]["image"] is None and released["spec"]["userData"] is None and released["spec"]["online"] is False


def _bmh(name, state, **status):
    status = dict(status, provisioning={"state": state})
    return {"metadata": {"name": name}, "status": status}


def test_progress_and_report():
    failed = _bmh("b", "registering", operationalStatus="error", errorType="registration error", errorMessage="401")
    objs = [_bmh("a", "provisioned", poweredOn=True), failed, _bmh("c", "provisioning")]
    progress = metal3.host_progress(objs, ["a", "b", "c", "d"], ["provisioned"])
    assert progress == {"done": ["a"], "failed": ["b"], "waiting": ["c", "d"]}
    assert metal3.host_report(objs, ["a", "b", "d"]) == [
        "a: provisioned, powered on", "b: registering, error registration error: 401", "d: no BareMetalHost"]


def test_an_error_of_a_host_given_another_image_is_not_this_runs_until_metal3_counts_another():
    hosts = metal3.normalize_hosts([GOOD])[0]
    fixed = metal3.bare_metal_host(hosts[0], "metal3", "c1")
    failed = dict(_bmh("node-0", "provisioning", operationalStatus="error", errorType="provisioning error",
                       errorMessage="Image provisioning failed: ... HTTP code 404", errorCount=1),
                  spec=dict(fixed["spec"], image=dict(fixed["spec"]["image"], url="http://172.22.0.1/images/none.qcow2")))
    retried = metal3.errors_retried([failed], hosts, "metal3", "c1")
    assert retried == {"node-0": 1}
    # the operator deprovisions it, its error kept: waiting; provisioned with the new image: done
    assert metal3.host_progress([dict(failed, status=dict(failed["status"], provisioning={"state": "deprovisioning"}))],
                                ["node-0"], ["provisioned"], retried)["waiting"] == ["node-0"]
    assert metal3.host_progress([_bmh("node-0", "provisioned")], ["node-0"], ["provisioned"], retried)["done"] == ["node-0"]
    # another error counted after it: this run's
    again = dict(failed, status=dict(failed["status"], errorCount=2))
    assert metal3.host_progress([again], ["node-0"], ["provisioned"], retried)["failed"] == ["node-0"]
    # the same spec applied again, or a host without an error: its error stays its failure
    same = [dict(hosts[0], image=dict(hosts[0]["image"], url="http://172.22.0.1/images/none.qcow2"))]
    assert metal3.errors_retried([failed], same, "metal3", "c1") == {}
    assert metal3.errors_retried([_bmh("node-0", "provisioned")], hosts, "metal3", "c1") == {}
    assert metal3.host_progress([failed], ["node-0"], ["provisioned"])["failed"] == ["node-0"]


def test_image_preflight_asks_each_url_once_and_refuses_the_hosts_of_an_http_error():
    image = {"url": "http://172.22.0.1/images/a.qcow2", "checksum": "http://172.22.0.1/images/a.qcow2.sha256sum"}
    hosts = [{"name": "node-0", "image": image}, {"name": "node-1", "image": dict(image, checksum="ab" * 32)},
             {"name": "node-2", "image": {"url": "http://172.22.0.1/images/missing.qcow2", "checksum": "ab" * 32}}]
    assert metal3.image_urls(hosts) == ["http://172.22.0.1/images/a.qcow2", "http://172.22.0.1/images/a.qcow2.sha256sum",
                                        "http://172.22.0.1/images/missing.qcow2"]
    checks = [{"item": "http://172.22.0.1/images/a.qcow2", "status": 200},
              {"item": "http://172.22.0.1/images/a.qcow2.sha256sum", "status": -1, "msg": "Connection refused"},
              {"item": "http://172.22.0.1/images/missing.qcow2", "status": 404, "msg": "HTTP Error 404: Not Found"}]
    found = metal3.image_refusals(hosts, checks)
    assert found["refused"] == {"node-2": ["image http://172.22.0.1/images/missing.qcow2 answers HTTP 404 to HEAD"]}
    assert found["lines"] == ["node-2: image http://172.22.0.1/images/missing.qcow2 answers HTTP 404 to HEAD"]
    # no HTTP answer from the control node says nothing of what Ironic sees: a warning, not a refusal
    assert found["unverified"] == ["http://172.22.0.1/images/a.qcow2.sha256sum (Connection refused)"]
    # a check mode or preflight-off run checked nothing
    assert metal3.image_refusals(hosts, [{"item": u, "skipped": True} for u in metal3.image_urls(hosts)]) == {
        "refused": {}, "unverified": [], "lines": []}


def test_stale_user_data():
    hosts = metal3.normalize_hosts([GOOD, host(name="node-1", boot_mac="00:5c:52:31:3a:9d",
                                               bmc={"address": "redfish+http://192.168.111.1:8000/redfish/v1/Systems/b"})])[0]
    bmhs = [_bmh("node-0", "provisioned"), _bmh("node-1", "provisioning")]
    secrets = [metal3.user_data_secret(h, "ns", "c", "old") for h in hosts]
    assert metal3.stale_user_data(hosts, bmhs, secrets, {"node-0": "new", "node-1": "new"}) == ["node-0"]
    assert metal3.stale_user_data(hosts, bmhs, secrets, {"node-0": "old", "node-1": "new"}) == []


def test_a_host_has_its_node_settings_and_worker_overrides():
    hosts, errors = metal3.normalize_hosts([host(conf_extra={"Weight": 10}, worker={"package_version": "26.05.5-1"})])
    assert errors == [] and hosts[0]["conf_extra"] == {"Weight": 10} and hosts[0]["worker"] == {"package_version": "26.05.5-1"}
    assert metal3.normalize_hosts([host()])[0][0]["worker"] == {}
    errors = metal3.normalize_hosts([host(conf_extra="Weight=10", worker={"version": "1", "uid": "x"})])[1]
    assert errors == [
        "host node-0: conf_extra='Weight=10' must be a mapping of slurmd --conf settings",
        "host node-0: worker.version is not a worker setting; allowed: apt_key_url, apt_repository, dnf_key_url, "
        "dnf_repository, firewall_packages, gid, key_path, manage_firewall, package_manager, package_version, packages, "
        "persist_firewall, rules_file, uid, user",
        "host node-0: worker.uid='x' must be a number from 1 to 65534",
    ]
