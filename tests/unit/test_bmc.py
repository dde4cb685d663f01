# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""BMC preflight (module_utils/bmc.py and the bmc_preflight module) without a BMC.

Library errors are the real exception classes of sushy, requests and pyghmi where those are
installed (the tests that need them are skipped otherwise); the checks themselves run with
stubbed connections. tests/integration/metal3 runs the same code against sushy-tools and a
fake IPMI BMC.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import socket
import threading
import time

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import bmc
from ansible_collections.slime.hybrid.plugins.module_utils import names
from ansible_collections.slime.hybrid.plugins.module_utils import probe
from ansible_collections.slime.hybrid.plugins.modules import bmc_preflight

SECRET = "s3cr3t-Pw-only-here"
SYS = "/redfish/v1/Systems/4c0a4f3e"


def host(name="node-0", address="redfish+http://127.0.0.1:8001" + SYS, password=SECRET, **kw):
    out = {"name": name, "address": address, "username": "admin", "password": password,
           "disable_certificate_verification": False, "boot_mac": None}
    out.update(kw)
    return out


# --- MAC addresses ----------------------------------------------------------------------------
@pytest.mark.parametrize("raw", ["52:54:00:AA:bb:cc", "52-54-00-aa-bb-cc", "5254.00aa.bbcc", "525400AABBCC",
                                 " 52:54:00:aa:bb:cc "])
def test_canonical_mac_forms(raw):
    assert names.canonical_mac(raw) == "52:54:00:aa:bb:cc"


@pytest.mark.parametrize("raw", [None, "", "   "])
def test_canonical_mac_none(raw):
    assert names.canonical_mac(raw) is None


def test_canonical_mac_keeps_what_is_no_mac():
    assert names.canonical_mac("Not-A-MAC") == "not-a-mac"


def test_mac_present_is_case_and_separator_insensitive():
    reported = ["52:54:00:6C:3C:01", "52-54-00-6c-3c-02"]
    assert bmc.mac_present("52:54:00:6c:3c:01", reported)
    assert bmc.mac_present("525400.6c3c02", reported)
    assert not bmc.mac_present("52:54:00:6c:3c:03", reported)
    assert not bmc.mac_present(None, reported)
    assert not bmc.mac_present("52:54:00:6c:3c:01", None)


# --- messages ---------------------------------------------------------------------------------
def test_scrub_masks_every_secret():
    assert bmc.scrub("user admin pw %s and %s" % (SECRET, SECRET), [SECRET, "", None]) == \
        "user admin pw ******** and ********"


def test_summary_and_fail_message():
    results = [
        {"name": "node-0", "ok": True, "message": "ok, power on"},
        {"name": "node-1", "ok": False, "message": "redfish+http://h" + SYS + ": credentials rejected (HTTP 401)"},
        {"name": "node-2", "ok": False, "message": "127.0.0.1:9: unreachable (connection refused)"},
    ]
    report = bmc.summary(results)
    assert report == {
        "failures": ["node-1: redfish+http://h" + SYS + ": credentials rejected (HTTP 401)",
                     "node-2: 127.0.0.1:9: unreachable (connection refused)"],
        "ok_hosts": ["node-0"],
        "failed_hosts": ["node-1", "node-2"],
    }
    msg = bmc.fail_message(results)
    assert msg.startswith("BMC preflight failed for 2 of 3 host(s), nothing was changed: ")
    assert "node-1: redfish+http://h" + SYS + ": credentials rejected (HTTP 401); node-2: 127.0.0.1:9" in msg


@pytest.mark.parametrize("value, text", [("On", "on"), ("off", "off"), (None, None), ("", None)])
def test_power_text(value, text):
    assert bmc.power_text(value) == text


def test_power_text_enum():
    class PowerState(object):
        value = "On"
    assert bmc.power_text(PowerState()) == "on"


# --- error classification ---------------------------------------------------------------------
class FakeResponse(object):
    def __init__(self, status, body=None):
        self.status_code = status
        self._body = body

    def json(self):
        if self._body is None:
            raise ValueError("no JSON")
        return self._body


def _sushy():
    return pytest.importorskip("sushy.exceptions")


@pytest.mark.parametrize("status", [401, 403])
def test_classify_sushy_access_error(status):
    exc = _sushy().AccessError("GET", "http://h" + SYS, FakeResponse(status, {"error": {"message": "Incorrect username or password"}}))
    assert bmc.classify_exception(exc) == ("credentials", "credentials rejected (HTTP %d)" % status)


def test_classify_sushy_not_found():
    exc = _sushy().ResourceNotFoundError("GET", "http://h" + SYS, FakeResponse(404))
    assert bmc.classify_exception(exc) == ("not_found", "not found (HTTP 404)")


def test_classify_sushy_server_error():
    exc = _sushy().ServerSideError("GET", "http://h" + SYS, FakeResponse(500, {"error": {"message": "boom"}}))
    kind, reason = bmc.classify_exception(exc)
    assert kind == "http" and reason.startswith("HTTP 500 from the BMC (")


def _wrapped(inner):
    """A sushy ConnectionError raised while handling ``inner``, as sushy's connector does."""
    sushy_exc = _sushy()
    try:
        try:
            raise inner
        except Exception as exc:
            raise sushy_exc.ConnectionError(url="http://h/redfish/v1/", error=exc)
    except sushy_exc.ConnectionError as exc:
        return exc


def test_classify_connection_refused():
    requests = pytest.importorskip("requests")
    inner = requests.exceptions.ConnectionError(
        "HTTPConnectionPool(host='h', port=1): Max retries exceeded (Caused by NewConnectionError("
        "'Failed to establish a new connection: [Errno 111] Connection refused'))")
    assert bmc.classify_exception(_wrapped(inner)) == ("unreachable", "unreachable (connection refused)")


def test_classify_errno_refused():
    assert bmc.classify_exception(OSError(errno.ECONNREFUSED, "nope")) == ("unreachable", "unreachable (connection refused)")


def test_classify_connect_timeout():
    requests = pytest.importorskip("requests")
    inner = requests.exceptions.ConnectTimeout("Connection to 192.0.2.1 timed out. (connect timeout=3)")
    assert bmc.classify_exception(_wrapped(inner), 3) == ("timeout", "unreachable (no connection within 3 s)")


def test_classify_read_timeout():
    requests = pytest.importorskip("requests")
    inner = requests.exceptions.ReadTimeout("HTTPConnectionPool(host='h', port=8001): Read timed out. (read timeout=2.5)")
    assert bmc.classify_exception(_wrapped(inner), 2.5) == ("timeout", "no answer within 2.5 s")


def test_classify_tls_verify_failed():
    requests = pytest.importorskip("requests")
    inner = requests.exceptions.SSLError(
        "HTTPSConnectionPool(host='127.0.0.1', port=8002): Max retries exceeded (Caused by SSLError("
        "SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
        "self-signed certificate (_ssl.c:1006)')))")
    kind, reason = bmc.classify_exception(_wrapped(inner))
    assert kind == "tls"
    assert reason == ("TLS certificate verification failed (self-signed certificate); "
                      "trust its CA or set disable_certificate_verification")


def test_classify_tls_plain_http_port():
    requests = pytest.importorskip("requests")
    inner = requests.exceptions.SSLError("Caused by SSLError(SSLError(1, '[SSL: WRONG_VERSION_NUMBER] wrong version number'))")
    kind, reason = bmc.classify_exception(_wrapped(inner))
    assert kind == "tls" and "does not speak HTTPS" in reason and "redfish+http://" in reason


def test_classify_connection_reset():
    requests = pytest.importorskip("requests")
    inner = requests.exceptions.ConnectionError(
        "('Connection aborted.', ConnectionResetError(104, 'Connection reset by peer'))")
    kind, reason = bmc.classify_exception(_wrapped(inner))
    assert kind == "protocol" and "closed the connection" in reason


def test_classify_name_resolution():
    exc = socket.gaierror(-2, "Name or service not known")
    assert bmc.classify_exception(exc) == ("unreachable", "unreachable (cannot resolve the host name)")


def test_classify_ipmi_errors():
    exc_mod = pytest.importorskip("pyghmi.exceptions")
    assert bmc.classify_exception(exc_mod.IpmiException("Incorrect password provided")) == \
        ("credentials", "credentials rejected (Incorrect password provided)")
    assert bmc.classify_exception(exc_mod.IpmiException("Unauthorized name")) == \
        ("credentials", "credentials rejected (Unauthorized name)")
    assert bmc.classify_exception(exc_mod.IpmiException("timeout"), 4)[0] == "timeout"


def test_classify_unknown():
    kind, reason = bmc.classify_exception(RuntimeError("weird"))
    assert (kind, reason) == ("error", "RuntimeError: weird")


# --- one host, stubbed ------------------------------------------------------------------------
def refused(host_, port, timeout):
    return probe.REFUSED, 0.0


def test_redfish_unreachable_line():
    parsed = bmc.metal3.parse_bmc_address("redfish+http://127.0.0.1:9" + SYS)
    res = bmc.check_redfish(host(address=parsed["address"]), parsed, 2, connect=refused)
    assert not res["ok"]
    assert bmc.failure_line(res) == "node-0: 127.0.0.1:9: unreachable (connection refused)"


def test_redfish_default_ports():
    assert bmc.redfish_port(bmc.metal3.parse_bmc_address("redfish://h/redfish/v1/Systems/1")) == 443
    assert bmc.redfish_port(bmc.metal3.parse_bmc_address("redfish+http://h/redfish/v1/Systems/1")) == 80
    assert bmc.redfish_port(bmc.metal3.parse_bmc_address("redfish-virtualmedia+https://h:8443/x")) == 8443


def test_redfish_timeout_line():
    parsed = bmc.metal3.parse_bmc_address("redfish://192.0.2.1" + SYS)
    res = bmc.check_redfish(host(address=parsed["address"]), parsed, 1.5,
                            connect=lambda h, p, t: (probe.TIMEOUT, t))
    assert res["message"] == "192.0.2.1:443: unreachable (no connection within 1.5 s)"


def test_check_mac_found_and_missing():
    res = {"name": "n", "ok": False, "power_state": "on", "macs": ["52:54:00:6c:3c:01"],
           "boot_mac": "52:54:00:6c:3c:01", "boot_mac_checked": False}
    assert bmc._check_mac(dict(res), "system " + SYS)["ok"]
    missing = bmc._check_mac(dict(res, boot_mac="52:54:00:aa:bb:cc"), "system " + SYS)
    assert not missing["ok"] and missing["boot_mac_checked"]
    assert missing["message"] == "boot MAC 52:54:00:aa:bb:cc not on system %s: has [52:54:00:6c:3c:01]" % SYS
    none_given = bmc._check_mac(dict(res, boot_mac=None), "system " + SYS)
    assert none_given["ok"] and not none_given["boot_mac_checked"]


def test_check_host_bad_address_names_value_and_schemes():
    res = bmc.check_host(host(address="idrac://10.0.0.1"), 1)
    assert not res["ok"]
    assert "idrac" in res["message"] and "redfish://" in res["message"] and "ipmi://" in res["message"]


def test_check_host_bad_boot_mac():
    res = bmc.check_host(host(boot_mac="zz:zz"), 1)
    assert not res["ok"] and res["message"].startswith("boot_mac ") and "zz:zz" in res["message"]


def test_ipmi_ok_says_mac_not_checked():
    parsed = bmc.metal3.parse_bmc_address("ipmi://10.0.0.9")
    res = bmc.check_ipmi(host(address="ipmi://10.0.0.9", boot_mac="52:54:00:00:00:01"), parsed, 2,
                         power=lambda h, p: {"powerstate": "on"})
    assert res["ok"] and res["power_state"] == "on" and not res["boot_mac_checked"]
    assert res["message"] == "ok, power on; boot MAC not checked (IPMI does not report NICs)"


def test_ipmi_wrong_password_line_without_password():
    exc_mod = pytest.importorskip("pyghmi.exceptions")

    def power(h, p):
        raise exc_mod.IpmiException("Incorrect password provided")

    parsed = bmc.metal3.parse_bmc_address("ipmi://10.0.0.9:6230")
    res = bmc.check_ipmi(host(address=parsed["address"]), parsed, 2, power=power)
    assert bmc.failure_line(res) == "node-0: ipmi://10.0.0.9:6230: credentials rejected (Incorrect password provided)"


def test_ipmi_hang_is_a_timeout():
    """A session that never answers (it blocks until the test releases it, after the call returned):
    check_ipmi stops waiting for it and says so, while the session is still blocked."""
    called, release, returned = threading.Event(), threading.Event(), threading.Event()

    def power(h, p):
        called.set()
        release.wait(30)  # released only after check_ipmi returned (30 s: only a broken check_ipmi waits that long)
        returned.set()
        return {"powerstate": "on"}

    parsed = bmc.metal3.parse_bmc_address("ipmi://10.0.0.9")
    try:
        res = bmc.check_ipmi(host(address="ipmi://10.0.0.9"), parsed, 0.2, power=power)
        assert not returned.is_set()  # check_ipmi returned while the session still hung
        assert called.wait(60)  # and that session was really asked for
    finally:
        release.set()
    assert res["message"] == "ipmi://10.0.0.9:623: unreachable (no IPMI session within 0.2 s)"
    assert res["ok"] is False and res["power_state"] is None


def test_ipmi_error_answer():
    parsed = bmc.metal3.parse_bmc_address("ipmi://10.0.0.9")
    res = bmc.check_ipmi(host(address="ipmi://10.0.0.9"), parsed, 1, power=lambda h, p: {"error": "Unauthorized name"})
    assert not res["ok"] and "credentials rejected (Unauthorized name)" in res["message"]


def test_password_never_in_message_even_if_the_library_says_it():
    def power(h, p):
        raise RuntimeError("login as admin:%s failed" % SECRET)

    parsed = bmc.metal3.parse_bmc_address("ipmi://10.0.0.9")
    res = bmc.check_ipmi(host(address="ipmi://10.0.0.9"), parsed, 1, power=power)
    assert SECRET not in res["message"] and "********" in res["message"]


def test_run_preflight_is_parallel_and_keeps_order():
    """Each check stamps its own start and end: every check starts before any ends (they run at once),
    and the results come in the hosts' order although the checks end in the reverse order."""
    order = ["node-%d" % i for i in range(6)]
    started, ended = {}, {}
    # All checks meet here before any goes on. Its 10 s only keep a run that is not parallel from
    # hanging: the barrier breaks, each check ends at once, and the asserts below say why.
    together = threading.Barrier(len(order), timeout=10)
    done = dict((name, threading.Event()) for name in order)

    def check(h, timeout):
        started[h["name"]] = time.monotonic()
        try:
            together.wait()
        except threading.BrokenBarrierError:
            pass
        else:
            index = order.index(h["name"])
            if index + 1 < len(order):
                done[order[index + 1]].wait(10)  # node-5 ends first, node-0 last
        ended[h["name"]] = time.monotonic()
        done[h["name"]].set()
        return {"name": h["name"], "ok": True, "message": "ok"}

    results = bmc.run_preflight([host(name=name) for name in order], 1, check=check)
    assert [r["name"] for r in results] == order
    assert sorted(started) == sorted(ended) == sorted(order)
    assert max(started.values()) < min(ended.values()), "a check ended before another started: %s" % sorted(
        [(stamp, name, "start") for name, stamp in started.items()] + [(stamp, name, "end") for name, stamp in ended.items()])
    assert sorted(ended, key=ended.get) == order[::-1]


def test_missing_library(monkeypatch):
    monkeypatch.setattr(bmc, "HAS_SUSHY", False)
    monkeypatch.setattr(bmc, "SUSHY_IMPORT_ERROR", "Traceback: no sushy")
    monkeypatch.setattr(bmc, "HAS_PYGHMI", True)
    assert bmc.missing_library([host(address="ipmi://h")]) == (None, None)
    assert bmc.missing_library([host(address="bad://h"), host()]) == ("sushy", "Traceback: no sushy")
    monkeypatch.setattr(bmc, "HAS_SUSHY", True)
    monkeypatch.setattr(bmc, "HAS_PYGHMI", False)
    monkeypatch.setattr(bmc, "PYGHMI_IMPORT_ERROR", "Traceback: no pyghmi")
    assert bmc.missing_library([host(), host(address="ipmi://h")]) == ("pyghmi", "Traceback: no pyghmi")


# --- the module ---------------------------------------------------------------------------------
def fake_check(h, timeout):
    ok = h["name"] == "good"
    return {"name": h["name"], "address": h["address"], "protocol": "redfish", "ok": ok,
            "message": "ok, power on" if ok else "%s: credentials rejected (HTTP 401)" % h["address"],
            "power_state": "on" if ok else None, "macs": [], "boot_mac": None, "boot_mac_checked": False,
            "seconds": 0.0}


@pytest.fixture
def stubbed(monkeypatch):
    monkeypatch.setattr(bmc, "check_host", fake_check)
    monkeypatch.setattr(bmc, "missing_library", lambda hosts: (None, None))
    orig = bmc.run_preflight
    monkeypatch.setattr(bmc, "run_preflight", lambda hosts, timeout: orig(hosts, timeout, check=fake_check))


def test_module_fails_listing_every_failing_host(module_runner, stubbed):
    run = module_runner(bmc_preflight.main, hosts=[host(name="good"), host(name="bad1"), host(name="bad2")])
    assert run.result["failed"] is True and run.result["changed"] is False
    assert run.result["failed_hosts"] == ["bad1", "bad2"] and run.result["ok_hosts"] == ["good"]
    assert len(run.result["failures"]) == 2
    assert "bad1: " in run.result["msg"] and "bad2: " in run.result["msg"]
    assert SECRET not in run.stdout


def test_module_partial_succeeds_with_warnings(module_runner, stubbed):
    run = module_runner(bmc_preflight.main, partial=True, hosts=[host(name="good"), host(name="bad1")])
    assert not run.result.get("failed") and run.result["changed"] is False
    assert run.result["ok_hosts"] == ["good"] and run.result["failed_hosts"] == ["bad1"]
    assert any("bad1" in w for w in run.result["warnings"])
    assert SECRET not in run.stdout


def test_module_check_mode_runs_the_same(module_runner, stubbed):
    run = module_runner(bmc_preflight.main, check_mode=True, hosts=[host(name="good")])
    assert run.rc == 0 and run.result["ok_hosts"] == ["good"] and run.result["changed"] is False


def test_module_missing_library(module_runner, monkeypatch):
    monkeypatch.setattr(bmc, "missing_library", lambda hosts: ("sushy", "Traceback: no sushy"))
    run = module_runner(bmc_preflight.main, hosts=[host()])
    assert run.result["failed"] and "sushy" in run.result["msg"]


def test_module_real_checks_unreachable(module_runner, closed_port):
    """No stubs: a redfish host on a closed port and one with a bad address, end to end."""
    pytest.importorskip("sushy")
    run = module_runner(bmc_preflight.main, timeout=2, hosts=[
        host(name="node-2", address="redfish+http://127.0.0.1:%d%s" % (closed_port, SYS)),
        host(name="node-3", address="ftp://127.0.0.1/"),
    ])
    assert run.result["failed"]
    assert run.result["failures"][0] == "node-2: 127.0.0.1:%d: unreachable (connection refused)" % closed_port
    assert run.result["failures"][1].startswith("node-3: ")
    assert SECRET not in run.stdout


# --- check_redfish with a stand-in for sushy ----------------------------------------------------
class FakeNic(object):
    def __init__(self, mac):
        self.mac_address = mac


class FakeSystem(object):
    def __init__(self, power, macs):
        self.power_state = power
        self._macs = macs

    @property
    def ethernet_interfaces(self):
        nics = [FakeNic(m) for m in self._macs]

        class Collection(object):
            def get_members(self):
                return nics
        return Collection()


class FakeSushyModule(object):
    """sushy.Sushy stand-in: a BMC with the given systems {path: FakeSystem}, or an error to raise."""

    __version__ = "0.0-test"

    def __init__(self, systems=None, error=None):
        self.systems, self.error, self.calls = systems or {}, error, []
        module = self

        class Sushy(object):
            def __init__(self, endpoint, username=None, password=None, verify=True, **kw):
                module.calls.append({"endpoint": endpoint, "verify": verify, "kw": kw})
                if module.error is not None:
                    raise module.error

            def get_system_collection(self):
                class Collection(object):
                    members_identities = tuple(sorted(module.systems))
                return Collection()

            def get_system(self, identity):
                return module.systems[identity]

        self.Sushy = Sushy


def opened(host_, port, timeout):
    return probe.OPEN, 0.0


def test_redfish_ok_with_only_system_and_mac(monkeypatch):
    fake = FakeSushyModule({SYS: FakeSystem("On", ["52:54:00:6C:3C:01", "52:54:00:6c:3c:99"])})
    monkeypatch.setattr(bmc, "sushy", fake)
    parsed = bmc.metal3.parse_bmc_address("redfish://10.0.0.5:8443")
    res = bmc.check_redfish(host(address=parsed["address"], boot_mac="52-54-00-6c-3c-01"), parsed, 4, connect=opened)
    assert res["ok"], res["message"]
    assert res["system_id"] == SYS and res["power_state"] == "on"
    assert res["macs"] == ["52:54:00:6c:3c:01", "52:54:00:6c:3c:99"]
    assert fake.calls[0]["endpoint"] == "https://10.0.0.5:8443" and fake.calls[0]["verify"] is True
    res = bmc.check_redfish(host(address=parsed["address"], disable_certificate_verification=True), parsed, 4, connect=opened)
    assert fake.calls[-1]["verify"] is False and res["ok"] and not res["boot_mac_checked"]


def test_redfish_disabled_verification_still_failing_says_why(monkeypatch):
    requests = pytest.importorskip("requests")
    inner = requests.exceptions.SSLError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate")
    monkeypatch.setattr(bmc, "sushy", FakeSushyModule(error=_wrapped(inner)))
    parsed = bmc.metal3.parse_bmc_address("redfish://10.0.0.5" + SYS)
    res = bmc.check_redfish(host(address=parsed["address"], disable_certificate_verification=True), parsed, 4, connect=opened)
    assert "although disable_certificate_verification is set" in res["message"]
    assert "sushy 0.0-test" in res["message"] and "REQUESTS_CA_BUNDLE" in res["message"]


def test_redfish_credentials_line_never_has_the_password(monkeypatch):
    sushy_exc = _sushy()
    error = sushy_exc.AccessError("GET", "http://h" + SYS, FakeResponse(401, {"error": {"message": "bad " + SECRET}}))
    monkeypatch.setattr(bmc, "sushy", FakeSushyModule(error=error))
    parsed = bmc.metal3.parse_bmc_address("redfish+http://h" + SYS)
    res = bmc.check_redfish(host(address=parsed["address"]), parsed, 4, connect=opened)
    assert bmc.failure_line(res) == "node-0: redfish+http://h%s: credentials rejected (HTTP 401)" % SYS
