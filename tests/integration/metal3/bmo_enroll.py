# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What baremetal-operator enrolls in Ironic for a BareMetalHost the metal3_hosts role writes: a double of
its enrollment, for test_ironic.py to enroll the same node in the real Ironic without running the operator.

Derived from baremetal-operator v0.13.2 (vendored source): pkg/hardwareutils/bmc/redfish.go and ipmi.go
(DriverInfo: redfish_address/system_id/username/password/verify_ca; ipmi_address/port/username/password,
ipmi_priv_level ADMINISTRATOR by default), pkg/hardwareutils/bmc/access.go (the driver and interfaces of each
address scheme, which metal3.parse_bmc_address reads the same way) and pkg/provisioner/ironic/capabilities.go
(boot_mode:uefi, boot_mode:uefi,secure_boot:true, boot_mode:bios). test_bmo_enroll.py holds it to them; the
real Ironic takes what it builds (test_ironic.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def ironic_node(host):
    """The Ironic node baremetal-operator enrolls for a host (driver, driver_info, boot interface, port);
    host as metal3.normalize_hosts returns it."""
    bmc = host["bmc"]
    if bmc["protocol"] == "redfish":
        info = {"redfish_address": bmc["endpoint"], "redfish_username": bmc["username"],
                "redfish_password": bmc["password"]}
        if bmc["system_id"]:
            info["redfish_system_id"] = bmc["system_id"]
        if bmc["disable_certificate_verification"]:
            info["redfish_verify_ca"] = False
    else:
        info = {"ipmi_address": bmc["host"], "ipmi_port": str(bmc["port"]), "ipmi_username": bmc["username"],
                "ipmi_password": bmc["password"], "ipmi_priv_level": "ADMINISTRATOR"}
    capabilities = "boot_mode:%s" % ("bios" if host["boot_mode"] == "legacy" else "uefi")
    if host["boot_mode"] == "UEFISecureBoot":
        capabilities += ",secure_boot:true"
    node = {"name": host["name"], "driver": bmc["driver"], "driver_info": info,
            "boot_interface": bmc["boot_interface"], "properties": {"capabilities": capabilities}, "ports": []}
    if bmc.get("vendor_interface"):
        for kind in ("management", "power", "vendor", "bios", "raid"):
            node["%s_interface" % kind] = bmc["vendor_interface"]
    if host.get("boot_mac"):
        node["ports"].append({"address": host["boot_mac"]})
    return node
