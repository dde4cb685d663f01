# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""BMC preflight before Metal3 enrolls a host: reachable, credentials accepted, boot MAC present.

Redfish through sushy (the client Ironic itself uses), IPMI through pyghmi. Both libraries are
optional at import time (``HAS_SUSHY``, ``HAS_PYGHMI``): the module says which one is missing
only when a host needs it. Every failure becomes one line naming the host and what went wrong;
passwords never appear in a message (they are also scrubbed from library error texts).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import inspect
import logging
import re
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.slime.hybrid.plugins.module_utils import metal3
from ansible_collections.slime.hybrid.plugins.module_utils import probe
from ansible_collections.slime.hybrid.plugins.module_utils.names import canonical_mac, normalize_mac

try:
    import sushy
    from sushy import exceptions as sushy_exc
    SUSHY_IMPORT_ERROR = None
except ImportError:  # pragma: no cover - depends on the environment
    sushy = sushy_exc = None
    SUSHY_IMPORT_ERROR = traceback.format_exc()
HAS_SUSHY = sushy is not None

try:
    from pyghmi.ipmi import command as ipmi_command
    PYGHMI_IMPORT_ERROR = None
except ImportError:  # pragma: no cover - depends on the environment
    ipmi_command = None
    PYGHMI_IMPORT_ERROR = traceback.format_exc()
HAS_PYGHMI = ipmi_command is not None

# sushy logs warnings (and Python's last-resort handler would print them to the module's
# stderr); the preflight reports what matters itself.
for _name in ("sushy", "pyghmi"):
    logging.getLogger(_name).addHandler(logging.NullHandler())

IPMI_NO_NICS = "not checked (IPMI does not report NICs)"
MASK = "********"


# --- MAC addresses ----------------------------------------------------------------------------
def mac_present(mac, macs):
    """True when ``mac`` is one of ``macs`` (case and separators do not matter)."""
    want = canonical_mac(mac)
    return want is not None and want in set(canonical_mac(m) for m in macs or [])


# --- messages ---------------------------------------------------------------------------------
def scrub(text, secrets):
    """Replace every non-empty secret in text by ********."""
    text = "%s" % (text,)
    for secret in secrets or []:
        if secret:
            text = text.replace(secret, MASK)
    return text


def failure_line(result):
    """'node-1: redfish+http://h/redfish/v1/Systems/x: credentials rejected (HTTP 401)'."""
    return "%s: %s" % (result["name"], result["message"])


def summary(results):
    """Lines of the failing hosts, names of ok and failing hosts."""
    failed = [r for r in results if not r["ok"]]
    return {
        "failures": [failure_line(r) for r in failed],
        "ok_hosts": [r["name"] for r in results if r["ok"]],
        "failed_hosts": [r["name"] for r in failed],
    }


def fail_message(results):
    """The module's msg when hosts fail: how many, then every failing host's line."""
    failed = [r for r in results if not r["ok"]]
    return "BMC preflight failed for %d of %d host(s), nothing was changed: %s" % (
        len(failed), len(results), "; ".join(failure_line(r) for r in failed))


def power_text(value):
    """sushy's PowerState (enum or string, any case) or pyghmi's 'on'/'off' -> 'on', 'off', ..."""
    if value is None:
        return None
    return str(getattr(value, "value", value)).strip().lower() or None


# --- error classification ---------------------------------------------------------------------
def _chain(exc):
    """exc, its __cause__/__context__ and the wrapped errors requests/urllib3 keep in args/reason."""
    seen, todo, out = set(), [exc], []
    while todo:
        cur = todo.pop(0)
        if cur is None or id(cur) in seen or not isinstance(cur, BaseException):
            continue
        seen.add(id(cur))
        out.append(cur)
        todo.extend([cur.__cause__, cur.__context__, getattr(cur, "reason", None), getattr(cur, "error", None)])
        todo.extend(a for a in getattr(cur, "args", ()) if isinstance(a, BaseException))
    return out


def classify_exception(exc, timeout=None):
    """A library exception -> (kind, reason) for a failure line.

    kind: unreachable, timeout, tls, protocol, credentials, not_found, http, error.
    """
    chain = _chain(exc)
    text = " | ".join("%s" % e for e in chain)
    lowered = text.lower()
    status = next((e.status_code for e in chain if isinstance(getattr(e, "status_code", None), int)), None)
    if status in (401, 403):
        return "credentials", "credentials rejected (HTTP %d)" % status
    if status == 404:
        return "not_found", "not found (HTTP 404)"
    names = set(cls.__name__ for e in chain for cls in type(e).__mro__)
    if "SSLError" in names or "SSLCertVerificationError" in names or "certificate verify failed" in lowered:
        if "certificate verify failed" in lowered or "SSLCertVerificationError" in names:
            detail = re.search(r"certificate verify failed: ([^()'\"|]+)", text)
            return "tls", "TLS certificate verification failed (%s); trust its CA or set disable_certificate_verification" % (
                detail.group(1).strip() if detail else "untrusted certificate")
        code = re.search(r"\[SSL: ([A-Z0-9_]+)\]", text)
        if code and code.group(1) == "WRONG_VERSION_NUMBER":
            return "tls", "TLS handshake failed (WRONG_VERSION_NUMBER): the BMC does not speak HTTPS on this port; try redfish+http://"
        return "tls", "TLS handshake failed (%s)" % (code.group(1) if code else _short(text))
    if "ConnectTimeout" in names or "connect timeout" in lowered or "connection to" in lowered and "timed out" in lowered:
        return "timeout", "unreachable (no connection within %s s)" % _secs(timeout)
    if "ReadTimeout" in names or "read timed out" in lowered:
        return "timeout", "no answer within %s s" % _secs(timeout)
    if any(getattr(e, "errno", None) == errno.ECONNREFUSED for e in chain) or "connection refused" in lowered:
        return "unreachable", "unreachable (connection refused)"
    if "ConnectionResetError" in names or "connection reset" in lowered or "connection aborted" in lowered \
            or "RemoteDisconnected" in names:
        return "protocol", "the BMC closed the connection (if it serves HTTPS on this port, use redfish:// or redfish+https://)"
    if "name or service not known" in lowered or "nodename nor servname" in lowered or "temporary failure in name resolution" in lowered:
        return "unreachable", "unreachable (cannot resolve the host name)"
    if "no route to host" in lowered or "network is unreachable" in lowered:
        return "unreachable", "unreachable (no route to host)"
    if "incorrect password" in lowered or "unauthorized name" in lowered or "invalid rakp" in lowered:
        return "credentials", "credentials rejected (%s)" % _short(text.split(" | ", 1)[0])
    if "timeout" in lowered or "timed out" in lowered or "session failed to initialize" in lowered:
        return "timeout", "no answer within %s s" % _secs(timeout)
    if isinstance(status, int):
        return "http", "HTTP %d from the BMC (%s)" % (status, _short(getattr(exc, "detail", None) or text))
    return "error", "%s: %s" % (type(exc).__name__, _short(text))


def _short(text, limit=200):
    text = " ".join(("%s" % text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _secs(timeout):
    return "?" if timeout is None else "%g" % float(timeout)


# --- one host ---------------------------------------------------------------------------------
def _result(host, parsed=None, message=""):
    return {
        "name": host.get("name") or host.get("address"),
        "address": host.get("address"),
        "protocol": parsed["protocol"] if parsed else None,
        "system_id": parsed.get("system_id") if parsed else None,
        "ok": False,
        "message": message,
        "power_state": None,
        "macs": [],
        "boot_mac": canonical_mac(host.get("boot_mac")),
        "boot_mac_checked": False,
        "seconds": 0.0,
    }


def redfish_port(parsed):
    return parsed.get("port") or (443 if parsed.get("transport", "https") == "https" else 80)


def _sushy_kwargs(timeout):
    """Keyword arguments for sushy.Sushy that this sushy version knows: one attempt, short timeouts."""
    want = {"read_timeout": timeout, "connect_timeout": timeout,
            "server_side_retries": 1, "server_side_retries_delay": 1}
    params = inspect.signature(sushy.Sushy.__init__).parameters
    return dict((k, v) for k, v in want.items() if k in params)


def check_redfish(host, parsed, timeout, connect=None):
    """Redfish: TCP, then the root service with auth, the system, its power state and NICs."""
    res = _result(host, parsed)
    address = parsed["address"]
    port = redfish_port(parsed)
    state, _seconds = (connect or probe.tcp_probe)(parsed["host"], port, timeout)
    if state != probe.OPEN:
        why = {probe.REFUSED: "connection refused", probe.TIMEOUT: "no connection within %s s" % _secs(timeout),
               probe.UNREACHABLE: "no route to host"}.get(state, state)
        res["message"] = "%s:%s: unreachable (%s)" % (parsed["host"], port, why)
        return res
    system_id = parsed.get("system_id")
    client = None  # set once the root service answered: a 404 after that is the system's
    try:
        client = sushy.Sushy(parsed["endpoint"], username=host.get("username"), password=host.get("password"),
                             verify=not host.get("disable_certificate_verification", False), **_sushy_kwargs(timeout))
        if not system_id:
            members = client.get_system_collection().members_identities
            if len(members) != 1:
                res["message"] = "%s: the address names no system and the BMC has %d (%s); add one to the address" % (
                    address, len(members), ", ".join(sorted(members)) or "none")
                return res
            system_id = members[0]
        system = client.get_system(system_id)
        res["power_state"] = power_text(system.power_state)
        try:
            nics = system.ethernet_interfaces.get_members()
        except sushy_exc.MissingAttributeError:  # the system has no EthernetInterfaces
            nics = None
    except Exception as exc:  # sushy wraps requests' errors; classify whatever came out
        kind, reason = classify_exception(exc, timeout)
        if kind == "not_found" and client is not None:
            reason = "system %s not found (HTTP 404)" % (system_id or "?")
        if kind == "tls" and "verification failed" in reason and host.get("disable_certificate_verification"):
            # sushy < 4.6 sets verify=False on its requests session only, and requests lets
            # REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE override that (psf/requests#3829).
            reason = ("TLS certificate verification failed although disable_certificate_verification is set: "
                      "sushy %s lets REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE override it; use sushy >= 4.6 or unset them"
                      % getattr(sushy, "__version__", "?"))
        reason = scrub(reason, [host.get("password")])
        res["message"] = "%s: %s" % (address, reason)
        return res
    res["system_id"] = system_id
    if nics is None:
        return _ok(res, "boot MAC not checked (the system reports no EthernetInterfaces)")
    res["macs"] = sorted(set(m for m in (canonical_mac(getattr(n, "mac_address", None)) for n in nics) if m))
    return _check_mac(res, "system %s" % system_id)


def _ok(res, detail):
    """res passed: 'ok, power <state>; <detail>'."""
    res["ok"] = True
    res["message"] = "ok, power %s; %s" % (res["power_state"], detail)
    return res


def _check_mac(res, where):
    boot_mac = res["boot_mac"]
    if not boot_mac:
        return _ok(res, "no boot MAC given (%s has %s)" % (where, _macs(res["macs"])))
    res["boot_mac_checked"] = True
    if mac_present(boot_mac, res["macs"]):
        return _ok(res, "boot MAC %s on %s" % (boot_mac, where))
    res["message"] = "boot MAC %s not on %s: has %s" % (boot_mac, where, _macs(res["macs"]))
    return res


def _macs(macs):
    return "[%s]" % ", ".join(macs) if macs else "no MAC addresses"


def _ipmi_power(host, parsed):
    cmd = ipmi_command.Command(bmc=parsed["host"], userid=host.get("username"), password=host.get("password"),
                               port=int(parsed["port"]), keepalive=False)
    try:
        return cmd.get_power()
    finally:
        try:
            cmd.ipmi_session.logout()
        except Exception:  # pragma: no cover - best effort
            pass


def check_ipmi(host, parsed, timeout, power=None):
    """IPMI: open a session (proves reachability and credentials) and read the power state.

    pyghmi has no timeout argument, so the session runs in a thread we stop waiting for.
    """
    res = _result(host, parsed)
    target = "ipmi://%s:%s" % (parsed["host"], parsed["port"])
    box = {}

    def work():
        try:
            box["power"] = (power or _ipmi_power)(host, parsed)
        except Exception as exc:  # pyghmi raises IpmiException (and socket errors)
            box["error"] = exc

    worker = threading.Thread(target=work, name="ipmi-%s" % parsed["host"], daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        res["message"] = "%s: unreachable (no IPMI session within %s s)" % (target, _secs(timeout))
        return res
    raised = box.get("error")
    answer = box.get("power") or {}
    # pyghmi raised (a timeout there means no IPMI answer), or it answered {"error": ...}
    if raised is not None or isinstance(answer, dict) and answer.get("error"):
        kind, reason = classify_exception(Exception(answer["error"]) if raised is None else raised, timeout)
        if kind == "timeout" and raised is not None:
            reason = "unreachable (no IPMI answer within %s s)" % _secs(timeout)
        res["message"] = "%s: %s" % (target, scrub(reason, [host.get("password")]))
        return res
    res["power_state"] = power_text(answer.get("powerstate") if isinstance(answer, dict) else answer)
    return _ok(res, "boot MAC %s" % IPMI_NO_NICS)


def missing_library(hosts):
    """(library, import traceback) the given hosts need but cannot import, or (None, None)."""
    for host in hosts:
        try:
            protocol = metal3.parse_bmc_address(host.get("address"))["protocol"]
        except ValueError:
            continue
        if protocol == "redfish" and not HAS_SUSHY:
            return "sushy", SUSHY_IMPORT_ERROR
        if protocol == "ipmi" and not HAS_PYGHMI:
            return "pyghmi", PYGHMI_IMPORT_ERROR
    return None, None


def check_host(host, timeout=10.0):
    """Preflight one host {name, address, username, password, disable_certificate_verification, boot_mac}."""
    start = time.time()
    try:
        parsed = metal3.parse_bmc_address(host.get("address"))
    except ValueError as exc:
        return _result(host, message=scrub(exc, [host.get("password")]))
    if host.get("boot_mac") not in (None, ""):
        try:
            normalize_mac(host["boot_mac"])
        except ValueError as exc:
            return _result(host, parsed, "boot_mac %s" % exc)
    check = check_redfish if parsed["protocol"] == "redfish" else check_ipmi
    try:
        res = check(host, parsed, timeout)
    except Exception as exc:  # pragma: no cover - a bug or an unforeseen library error: still one line
        reason = scrub(classify_exception(exc, timeout)[1], [host.get("password")])
        res = _result(host, parsed, "%s: %s" % (parsed["address"], reason))
    res["seconds"] = round(time.time() - start, 3)
    return res


def run_preflight(hosts, timeout=10.0, check=check_host, parallel=8):
    """Check every host (in parallel, order kept); list of per-host results."""
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        return list(pool.map(lambda host: check(host, timeout), hosts))
