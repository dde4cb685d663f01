# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurm_node_info module, run in-process on this machine (not a Slurm worker: every part of
the plan differs here), its conf-server wait against loopback sockets, and its refusals."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import functools

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import worker, worker_drift
from ansible_collections.slime.hybrid.plugins.modules import slurm_node_info
from ansible_collections.slime.hybrid.tests.unit.plugins.module_utils.test_host_state import MODEL, SETTINGS, with_worker

KEY = base64.b64encode(b"secret-key-bytes" * 4).decode()


@pytest.fixture
def run_module(module_runner):
    return functools.partial(module_runner, slurm_node_info.main)


def test_reads_this_machine_and_never_returns_the_key(run_module, listener):
    plan = worker.plan(MODEL, with_worker(key_path="/nonexistent/slurm.key"))
    run = run_module(plan=plan, name="bm-1", features=["baremetal"], slurm_key_b64=KEY,
                     conf_server={"host": "127.0.0.1", "port": listener, "timeout": 2})
    assert run.rc == 0 and run.result["changed"] is False
    assert run.result["conf_server"]["state"] == "open"
    drift = run.result["drift"]
    assert drift["key"] == ["/nonexistent/slurm.key is missing"]
    assert drift["dropin"] == ["%s is missing" % worker_drift.DROPIN]
    assert drift["node"] == ["slurmctld does not list bm-1 (or scontrol failed)"]
    assert run.result["node"] is None
    assert KEY not in run.stdout


def test_the_conf_server_wait_reports_what_it_saw(run_module, closed_port):
    plan = worker.plan(MODEL, SETTINGS)
    run = run_module(plan=plan, name="bm-1", slurm_key_b64=KEY, conf_server={"host": "127.0.0.1", "port": closed_port, "timeout": 0.6})
    assert run.rc == 0 and run.result["conf_server"]["state"] == "refused"
    # it went on trying until its timeout had passed (a refused port may open a moment later)
    assert run.result["conf_server"]["seconds"] >= 0.6


def test_refuses_a_bad_key_without_echoing_it_and_a_plan_that_is_not_one(run_module):
    run = run_module(plan=worker.plan(MODEL, SETTINGS), name="bm-1", slurm_key_b64="c2hvcnQ=")
    assert run.rc == 1 and run.result["msg"] == "slurm_key_b64: the key is 5 bytes; at least 32 are required"
    run = run_module(plan={"user": {}}, name="bm-1", slurm_key_b64=KEY)
    assert run.rc == 1 and run.result["msg"].startswith("plan: not a plan of filter slime.hybrid.worker_plan (KeyError")
