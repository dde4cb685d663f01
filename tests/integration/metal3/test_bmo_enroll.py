# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The enrollment double (bmo_enroll.py) against baremetal-operator v0.13.2's own source: the driver_info
keys of DriverInfo in pkg/hardwareutils/bmc/redfish.go and ipmi.go, and the capabilities strings of
pkg/provisioner/ironic/capabilities.go, read from the vendored tarball (skipped where it is absent)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import tarfile

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import metal3
from bmo_enroll import ironic_node

VENDOR = os.environ.get("SLIME_VENDOR_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "shared", "vendor")
TARBALL = os.path.join(VENDOR, "src", "baremetal-operator-0.13.2.tar.gz")
# a Redfish host as metal3_hosts_list states it
REDFISH = {"name": "node-0", "boot_mac": "00:5C:52:31:3A:9C", "image": {"url": "http://172.22.0.1/img.qcow2", "checksum": "0" * 64},
           "bmc": {"address": "redfish+http://192.168.111.1:8000/redfish/v1/Systems/abc", "username": "admin", "password": "s3cret"}}


def host(bmc=None, **changes):
    """A host as metal3.normalize_hosts returns it: REDFISH with changes, bmc's keys over its BMC's."""
    hosts, errors = metal3.normalize_hosts([dict(REDFISH, bmc=dict(REDFISH["bmc"], **(bmc or {})), **changes)])
    assert errors == []
    return hosts[0]


def test_redfish_and_ipmi():
    node = ironic_node(host(bmc={"disable_certificate_verification": True}, boot_mode="UEFISecureBoot"))
    assert node["driver"] == "redfish" and node["boot_interface"] == "ipxe"
    assert node["driver_info"] == {"redfish_address": "http://192.168.111.1:8000", "redfish_system_id": "/redfish/v1/Systems/abc",
                                   "redfish_username": "admin", "redfish_password": "s3cret", "redfish_verify_ca": False}
    assert node["properties"]["capabilities"] == "boot_mode:uefi,secure_boot:true"
    assert node["ports"] == [{"address": "00:5c:52:31:3a:9c"}]
    node = ironic_node(host(bmc={"address": "ipmi://10.0.0.9:6230"}, boot_mode="legacy"))
    assert node["driver"] == "ipmi"
    assert node["driver_info"] == {"ipmi_address": "10.0.0.9", "ipmi_port": "6230", "ipmi_username": "admin",
                                   "ipmi_password": "s3cret", "ipmi_priv_level": "ADMINISTRATOR"}
    assert node["properties"]["capabilities"] == "boot_mode:bios"


@pytest.mark.parametrize("scheme, vendor", [("idrac-redfish", "idrac-redfish"), ("redfish", None), ("ipmi", None)])
def test_vendor_interfaces(scheme, vendor):
    path = "" if scheme == "ipmi" else "/redfish/v1/Systems/1"
    node = ironic_node(host(bmc={"address": "%s://10.0.0.1%s" % (scheme, path)}))
    if vendor:
        assert node["management_interface"] == node["power_interface"] == node["vendor_interface"] == vendor
    else:
        assert "management_interface" not in node


def _source(name):
    if not os.path.isfile(TARBALL):
        pytest.skip("no %s" % TARBALL)
    with tarfile.open(TARBALL) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith(name))
        return tar.extractfile(member).read().decode("utf-8")


def test_the_keys_are_the_operators():
    redfish, ipmi = _source("pkg/hardwareutils/bmc/redfish.go"), _source("pkg/hardwareutils/bmc/ipmi.go")
    for key in ironic_node(host(bmc={"disable_certificate_verification": True}))["driver_info"]:
        assert '"%s"' % key in redfish, key
    for key in ironic_node(host(bmc={"address": "ipmi://10.0.0.9"}))["driver_info"]:
        assert '"%s"' % key in ipmi, key
    capabilities = _source("pkg/provisioner/ironic/capabilities.go")
    for mode in ("UEFI", "UEFISecureBoot", "legacy"):
        written = ironic_node(host(boot_mode=mode))["properties"]["capabilities"]
        assert re.search(r':\s+"%s"' % re.escape(written), capabilities), written
