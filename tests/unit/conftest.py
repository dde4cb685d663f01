# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make ``ansible_collections.slime.hybrid`` importable for the unit tests; shared fixtures.

The collection is found through ``$SLIME_CACHE/collections`` (default
``~/.cache/slime-hybrid/collections``), which holds
``ansible_collections/slime/hybrid`` -> this repository. Nothing is changed when the
import already works (say, under ansible-test or an ANSIBLE_COLLECTIONS_PATH-aware runner).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import importlib.util
import json
import os
import socket
import sys

import pytest

FIXTURES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def _collection_importable():
    try:
        return importlib.util.find_spec("ansible_collections.slime.hybrid") is not None
    except ImportError:
        return False


def _collections_dir():
    cache = os.environ.get("SLIME_CACHE") or os.path.join("~", ".cache", "slime-hybrid")
    return os.path.join(os.path.expanduser(cache), "collections")


if not _collection_importable():
    sys.path.insert(0, _collections_dir())
    importlib.invalidate_caches()


@pytest.fixture
def fixture_text():
    """Read a file of tests/unit/fixtures as text."""

    def read(name):
        with open(os.path.join(FIXTURES_DIR, name), encoding="utf-8") as handle:
            return handle.read()

    return read


class ModuleRun(object):
    """What one in-process module run produced: exit code, parsed JSON result and raw stdout."""

    def __init__(self, rc, result, stdout):
        self.rc = rc
        self.result = result
        self.stdout = stdout


@pytest.fixture
def module_runner(monkeypatch, capsys):
    """Run a module's main() in-process as Ansible runs it.

    Arguments go in through ansible.module_utils.basic._ANSIBLE_ARGS; the module ends with
    SystemExit after printing its result as JSON. Call as
    ``module_runner(some_module.main, check_mode=False, diff=False, **module_args)``.
    """
    from ansible.module_utils import basic
    from ansible.module_utils.common.text.converters import to_bytes

    def run(main, check_mode=False, diff=False, **args):
        args = dict(args)
        args.setdefault("_ansible_remote_tmp", "/tmp")
        args.setdefault("_ansible_keep_remote_files", False)
        args["_ansible_check_mode"] = check_mode
        args["_ansible_diff"] = diff
        monkeypatch.setattr(basic, "_ANSIBLE_ARGS", to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": args})))
        if hasattr(basic, "_ANSIBLE_PROFILE"):  # ansible-core >= 2.19
            monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy")
        with pytest.raises(SystemExit) as exc:
            main()
        stdout = capsys.readouterr().out
        return ModuleRun(exc.value.code, json.loads(stdout), stdout)

    return run


@pytest.fixture
def listener():
    """A listening TCP socket on 127.0.0.1; yields its port."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


@pytest.fixture
def closed_port():
    """A port that was just bound on 127.0.0.1 and released: nothing listens there."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


@pytest.fixture
def slurm_chart(tmp_path):
    """render(values) -> {(kind, name): object}: Slinky's slurm chart 1.2.1 (SLIME_VENDOR_DIR, or ../shared/vendor)
    rendered by helm with the values; the test is skipped where the chart or helm is not here."""
    import shutil
    import subprocess

    import yaml

    base = os.environ.get("SLIME_VENDOR_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * 3,
                                                              "shared", "vendor")
    chart, helm = os.path.join(base, "slinky-1.2.1", "helm", "slurm"), shutil.which("helm")
    if not os.path.isdir(chart) or not helm:
        pytest.skip("the slurm chart 1.2.1 (SLIME_VENDOR_DIR) or helm is not here")

    def render(values):
        path = tmp_path / "values.yaml"
        path.write_text(yaml.safe_dump(values))
        out = subprocess.run([helm, "template", "slurm", chart, "-n", "slurm", "-f", str(path)],
                             capture_output=True, text=True, check=True).stdout
        return dict(((doc["kind"], doc["metadata"]["name"]), doc) for doc in yaml.safe_load_all(out) if doc)
    return render


@pytest.fixture
def pending_pod():
    """pending(pod) -> a copy of a captured pod as the API shows it before the scheduler found it a node: no node,
    no addresses, PodScheduled False (what the lab's API server says when no node has the pod's hostPorts free)."""
    import copy

    def pending(pod):
        pod = copy.deepcopy(pod)
        del pod["spec"]["nodeName"]
        pod["status"] = {"phase": "Pending", "qosClass": pod["status"]["qosClass"], "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastProbeTime": None,
             "message": "0/3 nodes are available: 3 node(s) didn't have free ports for the requested pod ports.",
             "lastTransitionTime": pod["metadata"]["creationTimestamp"]}]}
        return pod
    return pending
