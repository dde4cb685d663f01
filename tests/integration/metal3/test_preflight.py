# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""slime.hybrid.bmc_preflight against real Redfish endpoints (sushy-tools, fake systems driver)
and a fake IPMI BMC: one good BMC, one with a wrong password, one unreachable."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import bmc
from ansible_collections.slime.hybrid.plugins.module_utils import metal3 as metal3_utils

TASK = "Check the BMCs"
WRONG_MAC = "52:54:00:aa:bb:cc"


def redfish_host(metal3, name, index, password=None, port=None, scheme="redfish+http", **kw):
    system = metal3["redfish"]["systems"][index]
    out = {"name": name,
           "address": "%s://%s:%d%s" % (scheme, metal3["redfish"]["host"], port or metal3["redfish"]["port"],
                                        system["system_id"]),
           "username": metal3["username"],
           "password": metal3["password"] if password is None else password}
    out.update(kw)
    return out


@pytest.fixture
def three(metal3):
    """node-0 good (with its boot MAC, in upper case), node-1 wrong password, node-2 unreachable."""
    good = metal3["redfish"]["systems"][0]
    return [
        redfish_host(metal3, "node-0", 0, boot_mac=good["macs"][0].upper()),
        redfish_host(metal3, "node-1", 1, password=metal3["password"] + "-wrong"),
        redfish_host(metal3, "node-2", 2, port=metal3["closed_port"]),
    ]


def test_three_bmcs_fail_with_one_line_per_failing_host(metal3, three, run_playbook):
    run = run_playbook("preflight.yml", {"bmc_hosts": three})
    assert run.rc != 0, run.output
    result = run.task_result(TASK)
    assert result["failed"] is True and result["changed"] is False
    node1 = three[1]["address"]
    assert result["failures"] == [
        "node-1: %s: credentials rejected (HTTP 401)" % node1,
        "node-2: %s:%d: unreachable (connection refused)" % (metal3["redfish"]["host"], metal3["closed_port"]),
    ]
    assert result["ok_hosts"] == ["node-0"] and result["failed_hosts"] == ["node-1", "node-2"]
    good = result["results"][0]
    assert good["ok"] and good["boot_mac_checked"]
    assert good["power_state"] == metal3["redfish"]["systems"][0]["power_state"].lower() == "on"
    assert good["macs"] == metal3["redfish"]["systems"][0]["macs"]
    assert "node-1" in result["msg"] and "node-2" in result["msg"] and "node-0" not in result["msg"]
    assert metal3["password"] not in run.output
    sys.stderr.write("\nBMC preflight, 3 BMCs: module %.2f s, ansible-playbook %.2f s\n" % (result["seconds"], run.seconds))


def test_password_not_in_verbose_output(metal3, three, run_playbook):
    run = run_playbook("preflight.yml", {"bmc_hosts": three}, callback="default", verbosity=3)
    assert run.rc != 0
    assert "credentials rejected (HTTP 401)" in run.output and "unreachable (connection refused)" in run.output
    assert "<127.0.0.1>" in run.output or "ESTABLISH LOCAL CONNECTION" in run.output  # it was -vvv
    assert metal3["password"] not in run.output
    assert (metal3["password"] + "-wrong") not in run.output


def test_partial_succeeds_and_names_the_good_host(metal3, three, run_playbook):
    run = run_playbook("preflight.yml", {"bmc_hosts": three, "bmc_partial": True})
    assert run.rc == 0, run.output
    result = run.task_result(TASK)
    assert not result.get("failed") and result["changed"] is False
    assert result["ok_hosts"] == ["node-0"] and result["failed_hosts"] == ["node-1", "node-2"]
    assert len(result["warnings"]) == 2 and all("BMC preflight: node-" in w for w in result["warnings"])
    assert metal3["password"] not in run.output


def test_wrong_boot_mac_on_the_good_bmc(metal3, run_playbook):
    system = metal3["redfish"]["systems"][0]
    run = run_playbook("preflight.yml", {"bmc_hosts": [redfish_host(metal3, "node-0", 0, boot_mac=WRONG_MAC)]})
    assert run.rc != 0
    result = run.task_result(TASK)
    assert result["failures"] == ["node-0: boot MAC %s not on system %s: has [%s]"
                                  % (WRONG_MAC, system["system_id"], system["macs"][0])]


def test_check_mode_changes_nothing(metal3, three, run_playbook):
    run = run_playbook("preflight.yml", {"bmc_hosts": three[:1]}, check=True)
    assert run.rc == 0, run.output
    result = run.task_result(TASK)
    assert result["changed"] is False and result["ok_hosts"] == ["node-0"]


# --- the same code, called directly: the other cases the module classifies --------------------
def test_system_not_found(metal3):
    host = redfish_host(metal3, "node-x", 0)
    host["address"] = host["address"].rsplit("/", 1)[0] + "/no-such-system"
    res = bmc.check_host(host, 5)
    assert not res["ok"]
    assert res["message"].endswith("system /redfish/v1/Systems/no-such-system not found (HTTP 404)")


def test_address_without_system_and_several_systems(metal3):
    res = bmc.check_host({"name": "n", "address": "redfish+http://%s:%d" % (metal3["redfish"]["host"], metal3["redfish"]["port"]),
                          "username": metal3["username"], "password": metal3["password"]}, 5)
    assert not res["ok"] and "the address names no system and the BMC has %d" % len(metal3["redfish"]["systems"]) in res["message"]


def test_tls_verification(metal3):
    tls = metal3["redfish_tls"]
    host = {"name": "node-tls", "address": "redfish://%s:%d" % (tls["host"], tls["port"]),
            "username": metal3["username"], "password": metal3["password"], "boot_mac": tls["systems"][0]["macs"][0]}
    res = bmc.check_host(host, 5)
    assert not res["ok"]
    assert res["message"] == ("%s: TLS certificate verification failed (self-signed certificate); "
                              "trust its CA or set disable_certificate_verification" % host["address"])
    # Without verification (Metal3's disableCertificateVerification), and with no system in the
    # address: the only system is used.
    res = bmc.check_host(dict(host, disable_certificate_verification=True), 5)
    assert res["ok"], res["message"]
    assert res["system_id"] == tls["systems"][0]["system_id"] and res["power_state"] == "on"


def test_https_on_a_plain_http_port(metal3):
    host = redfish_host(metal3, "node-0", 0, scheme="redfish-virtualmedia+https")
    res = bmc.check_host(host, 5)
    assert not res["ok"] and "does not speak HTTPS" in res["message"]


def test_ipmi_good_and_wrong_password(metal3):
    ipmi = metal3["ipmi"]
    good = {"name": "node-ipmi", "address": ipmi["address"], "username": metal3["username"],
            "password": metal3["password"], "boot_mac": "52:54:00:00:62:30"}
    res = bmc.check_host(good, 5)
    assert res["ok"], res["message"]
    assert res["power_state"] == ipmi["power_state"]
    assert res["message"] == "ok, power on; boot MAC not checked (IPMI does not report NICs)"
    res = bmc.check_host(dict(good, password="wrong-password"), 5)
    assert not res["ok"]
    assert res["message"] == "%s: credentials rejected (Incorrect password provided)" % ipmi["address"]


def test_ipmi_unreachable(metal3):
    res = bmc.check_host({"name": "n", "address": "ipmi://127.0.0.1:%d" % metal3["closed_port"],
                          "username": "admin", "password": "x"}, 1)
    assert not res["ok"]
    assert res["message"] == "ipmi://127.0.0.1:%d: unreachable (no IPMI session within 1 s)" % metal3["closed_port"]


# Every BMC scheme baremetal-operator v0.13.2 registers (metal3.DRIVERS): the Redfish ones
# (Dell iDRAC and HPE iLO 5 included) are checked against the Redfish emulator, the IPMI ones
# (ipmi, libvirt = virtualbmc) against the IPMI BMC; a wrong password fails each of them.
@pytest.mark.parametrize("scheme", sorted(metal3_utils.DRIVERS))
def test_every_scheme_of_the_operator_is_preflighted(metal3, scheme):
    if scheme in ("ipmi", "libvirt"):
        host = {"name": "n", "address": "%s://%s:%d" % (scheme, metal3["ipmi"]["host"], metal3["ipmi"]["port"]),
                "username": metal3["username"], "password": metal3["password"]}
        expect = "ok, power %s" % metal3["ipmi"]["power_state"]
    else:
        system = metal3["redfish"]["systems"][0]
        host = redfish_host(metal3, "n", 0, scheme=scheme + "+http", boot_mac=system["macs"][0])
        expect = "ok, power on"
    res = fresh_check(host)
    assert res["ok"] and res["message"].startswith(expect), res["message"]
    res = fresh_check(dict(host, password="not-the-password"))
    assert not res["ok"] and "credentials rejected" in res["message"], res["message"]


def fresh_check(host):
    """bmc.check_host in a new Python process, as each run of the module is: pyghmi keeps IPMI
    sessions per process, and one refused earlier in this test session would be reused."""
    code = ("import json, sys; from ansible_collections.slime.hybrid.plugins.module_utils import bmc; "
            "print(json.dumps(bmc.check_host(json.loads(sys.argv[1]), 5)))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code, json.dumps(host)], stdout=subprocess.PIPE, check=True, env=env)
    return json.loads(out.stdout.decode().strip().splitlines()[-1])
