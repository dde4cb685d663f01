# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tcp_probe module, run in-process (see module_runner in tests/unit/conftest.py) against loopback sockets."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import time

import pytest

from ansible_collections.slime.hybrid.plugins.modules import tcp_probe as tcp_probe_module


@pytest.fixture
def run_module(module_runner):
    return functools.partial(module_runner, tcp_probe_module.main)


def test_probes_a_local_listener(run_module, listener):
    start = time.time()
    run = run_module(checks=[{"name": "conf server", "host": "127.0.0.1", "port": listener, "hint": "check the NodePort"}],
                     timeout=2.0)
    outside = time.time() - start
    assert run.rc == 0
    assert run.result["changed"] is False
    assert run.result["failed_checks"] == 0
    (result,) = run.result["results"]
    assert {key: result[key] for key in ("name", "host", "port", "expected", "observed", "ok", "hint")} == {
        "name": "conf server", "host": "127.0.0.1", "port": listener, "expected": "open", "observed": "open",
        "ok": True, "hint": "check the NodePort"}
    # the probe's own seconds (rounded to ms), taken within the run
    assert isinstance(result["seconds"], float) and 0 <= result["seconds"] <= round(outside, 3)


def test_failed_checks_counts_observed_differing_from_expected(run_module, listener, closed_port):
    run = run_module(checks=[
        {"host": "127.0.0.1", "port": listener},
        {"host": "127.0.0.1", "port": closed_port},
        {"host": "127.0.0.1", "port": closed_port, "expect": "refused"},
        {"host": "127.0.0.1", "port": listener, "expect": "refused"},
    ], timeout=2.0)
    assert run.rc == 0
    assert "failed" not in run.result or run.result["failed"] is False  # broken paths do not fail the task
    assert run.result["failed_checks"] == 2
    assert [(r["name"], r["expected"], r["observed"], r["ok"], r["hint"]) for r in run.result["results"]] == [
        ("127.0.0.1:%d" % listener, "open", "open", True, ""),
        ("127.0.0.1:%d" % closed_port, "open", "refused", False, ""),
        ("127.0.0.1:%d" % closed_port, "refused", "refused", True, ""),
        ("127.0.0.1:%d" % listener, "refused", "open", False, ""),
    ]


def test_port_given_as_a_string_is_converted(run_module, listener):
    run = run_module(checks=[{"host": "127.0.0.1", "port": str(listener)}], timeout=2.0)
    assert run.result["results"][0]["port"] == listener
    assert run.result["results"][0]["observed"] == "open"


def test_runs_in_check_mode(run_module, listener):
    run = run_module(check_mode=True, checks=[{"host": "127.0.0.1", "port": listener}], timeout=2.0)
    assert run.rc == 0
    assert run.result["changed"] is False
    assert run.result["results"][0]["observed"] == "open"


def test_an_unresolvable_name_is_a_broken_path_not_a_failure(run_module):
    run = run_module(checks=[{"host": "no-such-host.invalid", "port": 6817}], timeout=0.5)
    assert run.rc == 0
    assert run.result["failed_checks"] == 1
    assert run.result["results"][0]["observed"].startswith("error: cannot resolve no-such-host.invalid")


def test_missing_host_fails(run_module):
    run = run_module(checks=[{"name": "conf server", "port": 30017}])
    assert run.rc == 1
    assert run.result["failed"] is True
    assert "missing required arguments: host" in run.result["msg"]
    assert "checks" in run.result["msg"]
    assert "results" not in run.result


def test_missing_checks_fails(run_module):
    run = run_module(timeout=1.0)
    assert run.rc == 1
    assert run.result["failed"] is True
    assert "missing required arguments: checks" in run.result["msg"]


def test_unknown_expect_fails(run_module):
    run = run_module(checks=[{"host": "127.0.0.1", "port": 6817, "expect": "closed"}])
    assert run.rc == 1
    assert run.result["failed"] is True
    assert "expect" in run.result["msg"]
    assert "closed" in run.result["msg"]


def test_non_numeric_port_fails(run_module):
    run = run_module(checks=[{"host": "127.0.0.1", "port": "slurmctld"}])
    assert run.rc == 1
    assert run.result["failed"] is True
    assert "port" in run.result["msg"]
