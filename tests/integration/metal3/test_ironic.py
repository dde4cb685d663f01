# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ironic as Metal3 runs it: the node the collection derives for a host (metal3.ironic_node)
enrolls into a standalone Ironic (35.0.0 from PyPI, the API baremetal-operator v0.13.2 needs;
noauth, sqlite), for every Redfish scheme of the operator (Dell iDRAC and HPE iLO 5 included: they
are Redfish, and the emulator answers them), gets its boot MAC as a
port and reaches ``manageable`` - Ironic checks power and management through the BMC on the
way - with the power state the fake BMC reports. Wrong BMC credentials leave it in ``enroll``
with the BMC's refusal in last_error, as baremetal-operator would then report it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import metal3 as m3
from bmo_enroll import ironic_node

requests = pytest.importorskip("requests")

HEADERS = {"X-OpenStack-Ironic-API-Version": "latest", "Content-Type": "application/json"}
SUFFIX = "%x" % (os.getpid() & 0xfff)
IMAGE = {"url": "http://127.0.0.1:8088/images/debian-12.qcow2", "checksum": "0" * 64}


class Ironic(object):
    def __init__(self, url):
        self.url = url.rstrip("/") + "/v1"
        self.created = []

    def call(self, method, path, expect, **kw):
        resp = requests.request(method, self.url + path, headers=HEADERS, timeout=30, **kw)
        assert resp.status_code in expect, "%s %s -> %d %s" % (method, path, resp.status_code, resp.text)
        return resp.json() if resp.content else None

    def enroll(self, node):
        """Create the node and its ports from an ironic_node() dict (bmo_enroll.py), as baremetal-operator does."""
        body = dict((k, v) for k, v in node.items() if k != "ports")
        created = self.call("POST", "/nodes", (201,), json=body)
        self.created.append(created["uuid"])
        for port in node["ports"]:
            self.call("POST", "/ports", (201,), json={"node_uuid": created["uuid"], "address": port["address"]})
        return created

    def manage(self, uuid, timeout=60):
        """Ask for manageable; wait until Ironic is done (manageable, or back in enroll on error)."""
        self.call("PUT", "/nodes/%s/states/provision" % uuid, (202,), json={"target": "manage"})
        deadline = time.time() + timeout
        while True:
            node = self.call("GET", "/nodes/%s" % uuid, (200,))
            if node["target_provision_state"] is None and node["provision_state"] in ("manageable", "enroll"):
                return node
            assert time.time() < deadline, "node %s still %s -> %s after %d s" % (
                uuid, node["provision_state"], node["target_provision_state"], timeout)
            time.sleep(0.3)

    def cleanup(self):
        for uuid in self.created:
            requests.delete("%s/nodes/%s" % (self.url, uuid), headers=HEADERS, timeout=30)


@pytest.fixture
def ironic(metal3):
    client = Ironic(metal3["ironic"]["url"])
    yield client
    client.cleanup()


def inventory_host(name, address, metal3, password=None, boot_mac=None, **bmc):
    """A host as the inventory (metal3_hosts_list) gives it, normalized by the collection."""
    entry = {"name": "%s-%s" % (name, SUFFIX), "boot_mac": boot_mac, "boot_mode": "UEFI", "image": dict(IMAGE),
             "bmc": dict({"address": address, "username": metal3["username"],
                          "password": metal3["password"] if password is None else password}, **bmc)}
    hosts, errors = m3.normalize_hosts([entry])
    assert errors == []
    return hosts[0]


def emulator_power(metal3, endpoint, system_id):
    resp = requests.get(endpoint + system_id, auth=(metal3["username"], metal3["password"]),
                        verify=metal3["redfish_tls"]["ca_file"], timeout=10)
    resp.raise_for_status()
    return "power %s" % resp.json()["PowerState"].lower()


def redfish_case(metal3, name, index, scheme):
    system = metal3["redfish"]["systems"][index]
    address = "%s://%s:%d%s" % (scheme, metal3["redfish"]["host"], metal3["redfish"]["port"], system["system_id"])
    return inventory_host(name, address, metal3, boot_mac=system["macs"][0]), system


@pytest.mark.parametrize("scheme, index, driver, boot_interface", [
    ("redfish+http", 0, "redfish", "ipxe"),
    ("redfish-virtualmedia+http", 1, "redfish", "redfish-virtual-media"),
    ("redfish-uefihttp+http", 2, "redfish", "redfish-https"),
    ("ilo5-redfish+http", 0, "redfish", "ipxe"),
    ("ilo5-virtualmedia+http", 1, "redfish", "redfish-virtual-media"),
    ("idrac-redfish+http", 2, "idrac", "ipxe"),
    ("idrac-virtualmedia+http", 0, "idrac", "idrac-redfish-virtual-media"),
])
def test_redfish_host_reaches_manageable(metal3, ironic, scheme, index, driver, boot_interface):
    host, system = redfish_case(metal3, "bm-%d" % index, index, scheme)
    node = ironic_node(host)
    assert node["driver"] == driver and node["boot_interface"] == boot_interface
    assert node["driver_info"]["redfish_address"] == metal3["redfish"]["endpoint"]
    assert node["driver_info"]["redfish_system_id"] == system["system_id"]
    created = ironic.enroll(node)
    assert created["provision_state"] == "enroll"
    assert created["driver_info"]["redfish_password"] == "******"  # Ironic masks it too

    done = ironic.manage(created["uuid"])
    assert done["provision_state"] == "manageable", done["last_error"]
    assert done["last_error"] is None
    assert done["boot_interface"] == boot_interface
    assert done["power_state"] == emulator_power(metal3, metal3["redfish"]["endpoint"], system["system_id"])
    assert done["power_state"] == "power %s" % system["power_state"].lower()
    ports = ironic.call("GET", "/ports?node_uuid=%s" % created["uuid"], (200,))["ports"]
    assert [p["address"] for p in ports] == system["macs"]


def test_redfish_https_without_verification_reaches_manageable(metal3, ironic):
    tls = metal3["redfish_tls"]
    system = tls["systems"][0]
    host = inventory_host("bm-tls", "redfish://%s:%d%s" % (tls["host"], tls["port"], system["system_id"]), metal3,
                          boot_mac=system["macs"][0], disable_certificate_verification=True)
    node = ironic_node(host)
    assert node["driver_info"]["redfish_verify_ca"] is False
    done = ironic.manage(ironic.enroll(node)["uuid"])
    assert done["provision_state"] == "manageable", done["last_error"]
    assert done["power_state"] == emulator_power(metal3, tls["endpoint"], system["system_id"]) == "power on"


def test_ipmi_host_reaches_manageable(metal3, ironic):
    host = inventory_host("bm-ipmi", metal3["ipmi"]["address"], metal3, boot_mac="52:54:00:00:62:30")
    node = ironic_node(host)
    assert node["driver"] == "ipmi" and node["driver_info"]["ipmi_port"] == str(metal3["ipmi"]["port"])
    done = ironic.manage(ironic.enroll(node)["uuid"])
    assert done["provision_state"] == "manageable", done["last_error"]
    assert done["power_state"] == "power %s" % metal3["ipmi"]["power_state"]


def test_wrong_credentials_stay_in_enroll_with_the_auth_error(metal3, ironic):
    system = metal3["redfish"]["systems"][2]
    wrong = metal3["password"] + "-wrong"
    address = "redfish+http://%s:%d%s" % (metal3["redfish"]["host"], metal3["redfish"]["port"], system["system_id"])
    host = inventory_host("bm-badcreds", address, metal3, password=wrong, boot_mac=system["macs"][0])
    done = ironic.manage(ironic.enroll(ironic_node(host))["uuid"])
    assert done["provision_state"] == "enroll"
    assert done["power_state"] is None
    error = done["last_error"] or ""
    assert "401" in error and "Incorrect username or password" in error, error
    assert wrong not in error and metal3["password"] not in error
