# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""probe: TCP reachability against real sockets on the loopback, and run_checks with a fake probe."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import socket
import time

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import probe


@pytest.fixture
def full_backlog_port():
    """A loopback listener whose accept queue is full: further SYNs are dropped, so a connect times out."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    fillers = []
    try:
        for _index in range(8):
            client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            client.setblocking(False)
            client.connect_ex(("127.0.0.1", port))
            fillers.append(client)
        yield port
    finally:
        for client in fillers:
            client.close()
        server.close()


def _timed_probe(host, port, timeout):
    """tcp_probe, and the seconds the call took as seen from outside (its own clock, time.time)."""
    start = time.time()
    state, seconds = probe.tcp_probe(host, port, timeout=timeout)
    return state, seconds, time.time() - start


def test_tcp_probe_open(listener):
    state, seconds, outside = _timed_probe("127.0.0.1", listener, 2.0)
    assert state == probe.OPEN == "open"
    assert 0 <= seconds <= outside  # the seconds are the probe's own, taken within the call


def test_tcp_probe_accepts_the_port_as_a_string(listener):
    assert probe.tcp_probe("127.0.0.1", str(listener), timeout=2.0)[0] == "open"


def test_tcp_probe_refused(closed_port):
    state, seconds, outside = _timed_probe("127.0.0.1", closed_port, 2.0)
    assert state == probe.REFUSED == "refused"  # the connect's own answer, not the timeout
    assert 0 <= seconds <= outside


def test_tcp_probe_unresolvable_name():
    state, _seconds = probe.tcp_probe("no-such-host.invalid", 6817, timeout=0.3)
    assert state.startswith("error: cannot resolve no-such-host.invalid (")


def test_tcp_probe_timeout_on_a_listener_that_drops_syns(full_backlog_port):
    state, seconds, outside = _timed_probe("127.0.0.1", full_backlog_port, 0.3)
    assert state == probe.TIMEOUT == "timeout"
    assert 0.3 <= seconds <= outside  # it waited the whole timeout before it said so


def test_tcp_probe_non_routable_address_is_not_open():
    state, seconds, outside = _timed_probe("10.255.255.1", 6817, 0.3)
    if state == probe.OPEN:
        pytest.skip("this environment answers connections to 10.255.255.1 (an intercepting proxy?)")
    assert state in (probe.TIMEOUT, probe.UNREACHABLE)
    # a timeout only after the whole timeout; an unreachable network may answer at once
    assert (0.3 if state == probe.TIMEOUT else 0) <= seconds <= outside


class _FailingSocket(object):
    """Stands in for socket.socket; connect raises the given error; records close()."""

    instances = []

    def __init__(self, error, *args):
        self.error = error
        self.closed = False
        self.timeout = None
        _FailingSocket.instances.append(self)

    def settimeout(self, value):
        self.timeout = value

    def connect(self, address):
        raise self.error

    def close(self):
        self.closed = True


@pytest.mark.parametrize(
    "error, expected",
    [
        (socket.timeout("timed out"), "timeout"),
        (OSError(errno.ECONNREFUSED, "Connection refused"), "refused"),
        (OSError(errno.EHOSTUNREACH, "No route to host"), "unreachable"),
        (OSError(errno.ENETUNREACH, "Network is unreachable"), "unreachable"),
        (OSError(errno.EACCES, "Permission denied"), "unreachable"),  # a firewall REJECT with admin-prohibited
        (OSError(errno.EPERM, "Operation not permitted"), "unreachable"),
        (OSError(errno.ECONNRESET, "Connection reset by peer"), "error: [Errno %d] Connection reset by peer" % errno.ECONNRESET),
    ],
)
def test_tcp_probe_classifies_connect_errors_and_closes_the_socket(monkeypatch, error, expected):
    _FailingSocket.instances = []
    monkeypatch.setattr(probe.socket, "socket", lambda *args: _FailingSocket(error, *args))
    state, _seconds = probe.tcp_probe("127.0.0.1", 6817, timeout=0.7)
    assert state == expected
    (sock,) = _FailingSocket.instances
    assert sock.timeout == 0.7
    assert sock.closed is True


def _fake_probe(answers, calls):
    def fake(host, port, timeout):
        calls.append((host, port, timeout))
        return answers[(host, int(port))], 0.12345

    return fake


def test_run_checks_compares_observed_with_expected():
    answers = {("10.127.0.50", 30017): "open", ("10.126.0.21", 6818): "timeout", ("10.127.0.62", 6818): "refused"}
    calls = []
    checks = [
        {"name": "conf server", "host": "10.127.0.50", "port": 30017, "hint": "check the NodePort"},
        {"host": "10.126.0.21", "port": "6818", "hint": "run fix_nodeaddr"},
        {"name": "closed on purpose", "host": "10.127.0.62", "port": 6818, "expect": "refused"},
    ]
    results = probe.run_checks(checks, timeout=1.5, probe=_fake_probe(answers, calls))
    assert calls == [("10.127.0.50", 30017, 1.5), ("10.126.0.21", "6818", 1.5), ("10.127.0.62", 6818, 1.5)]
    assert results == [
        {"name": "conf server", "host": "10.127.0.50", "port": 30017, "expected": "open", "observed": "open",
         "ok": True, "seconds": 0.123, "hint": "check the NodePort"},
        {"name": "10.126.0.21:6818", "host": "10.126.0.21", "port": 6818, "expected": "open", "observed": "timeout",
         "ok": False, "seconds": 0.123, "hint": "run fix_nodeaddr"},
        {"name": "closed on purpose", "host": "10.127.0.62", "port": 6818, "expected": "refused", "observed": "refused",
         "ok": True, "seconds": 0.123, "hint": ""},
    ]


def test_run_checks_expected_refused_but_open_is_not_ok():
    results = probe.run_checks([{"host": "h", "port": 1, "expect": "refused"}], probe=lambda h, p, t: ("open", 0.0))
    assert results[0]["expected"] == "refused"
    assert results[0]["observed"] == "open"
    assert results[0]["ok"] is False


def test_run_checks_default_timeout_is_passed_to_the_probe():
    calls = []
    probe.run_checks([{"host": "h", "port": 1}], probe=lambda h, p, t: calls.append(t) or ("open", 0.0))
    assert calls == [3.0]


def test_run_checks_without_checks():
    assert probe.run_checks([], probe=lambda h, p, t: pytest.fail("no probe expected")) == []


def test_run_checks_with_the_real_probe(listener, closed_port):
    results = probe.run_checks([{"name": "up", "host": "127.0.0.1", "port": listener},
                                {"name": "down", "host": "127.0.0.1", "port": closed_port}], timeout=2.0)
    assert [(r["name"], r["observed"], r["ok"]) for r in results] == [("up", "open", True), ("down", "refused", False)]


def test_wait_open_retries_until_open_or_timeout():
    now = [0.0]
    seen = iter([("refused", 0.0), ("refused", 0.0), ("open", 0.0)])

    def sleep(seconds):
        now[0] += seconds

    assert probe.wait_open("h", 1, 5, sleep, probe=lambda h, p, t: next(seen), clock=lambda: now[0]) == {"state": "open", "seconds": 1.0}
    assert probe.wait_open("h", 1, 2, sleep, probe=lambda h, p, t: ("refused", 0.0), clock=lambda: now[0]) == {
        "state": "refused", "seconds": 2.0}
