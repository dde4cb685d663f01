# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TCP reachability probes for the hybrid doctor."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import socket
import time

OPEN = "open"
REFUSED = "refused"
TIMEOUT = "timeout"
UNREACHABLE = "unreachable"
# What a connect failing with this errno says about the path (other errors are reported as they are).
_ERRNO_STATES = {errno.ECONNREFUSED: REFUSED, errno.EHOSTUNREACH: UNREACHABLE, errno.ENETUNREACH: UNREACHABLE,
                 errno.EACCES: UNREACHABLE, errno.EPERM: UNREACHABLE}


def tcp_probe(host, port, timeout=3.0):
    """Connect once; return (state, seconds). state: open, refused, timeout, unreachable or 'error: ...'."""
    start = time.time()
    try:
        infos = socket.getaddrinfo(host, int(port), socket.AF_UNSPEC, socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return "error: cannot resolve %s (%s)" % (host, exc), time.time() - start
    family, socktype, proto, _canon, address = infos[0]
    sock = socket.socket(family, socktype, proto)
    sock.settimeout(timeout)
    try:
        sock.connect(address)
        return OPEN, time.time() - start
    except socket.timeout:
        return TIMEOUT, time.time() - start
    except (IOError, OSError) as exc:
        return _ERRNO_STATES.get(getattr(exc, "errno", None), "error: %s" % exc), time.time() - start
    finally:
        sock.close()


def run_checks(checks, timeout=3.0, probe=tcp_probe):
    """Probe each {name, host, port[, expect]} and say whether what was observed is what was expected."""
    results = []
    for check in checks:
        expect = check.get("expect", OPEN)
        observed, seconds = probe(check["host"], check["port"], timeout)
        results.append({
            "name": check.get("name") or "%s:%s" % (check["host"], check["port"]),
            "host": check["host"],
            "port": int(check["port"]),
            "expected": expect,
            "observed": observed,
            "ok": observed == expect,
            "seconds": round(seconds, 3),
            "hint": check.get("hint", ""),
        })
    return results


def wait_open(host, port, timeout, sleep, probe=tcp_probe, clock=time.time):
    """Probe until the port is open or timeout seconds have passed: {"state", "seconds"} of the last try."""
    start = clock()
    while True:
        left = max(timeout - (clock() - start), 0.1)
        state, _seconds = probe(host, port, min(left, 3.0))
        if state == OPEN or clock() - start >= timeout:
            return {"state": state, "seconds": round(clock() - start, 3)}
        sleep(min(0.5, max(timeout - (clock() - start), 0)))
