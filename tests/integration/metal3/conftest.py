# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Metal3 test tier: sushy-tools' fake Redfish BMCs and a fake IPMI BMC (Ironic and FakeIPA are not started here).

``tests/integration/metal3/metal3-test-services.sh up`` runs once per session (it installs what is missing,
then starts what is not running) and ``down`` at the end; SLIME_METAL3_KEEP=1 leaves the
services running for the next session. The collection is imported as in tests/unit (through
``$SLIME_CACHE/collections``, see ``make collection``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(ROOT, "tests", "integration", "metal3", "metal3-test-services.sh")
CACHE = os.path.expanduser(os.environ.get("SLIME_CACHE") or os.path.join("~", ".cache", "slime-hybrid"))
COLLECTIONS = os.path.join(CACHE, "collections")


def _collection_importable():
    try:
        return importlib.util.find_spec("ansible_collections.slime.hybrid") is not None
    except ImportError:
        return False


if not _collection_importable():
    sys.path.insert(0, COLLECTIONS)
    importlib.invalidate_caches()


@pytest.fixture(scope="session")
def metal3():
    """Start the services; the contents of endpoints.json plus 'up_seconds'."""
    # the BMCs alone: no test here talks to Ironic (the Metal3 tier and kube-faults provision through it)
    env = dict(os.environ, SLIME_CACHE=CACHE, METAL3_BMCS_ONLY="1")
    start = time.time()
    proc = subprocess.run([SCRIPT, "up"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    if proc.returncode != 0:
        pytest.fail("tests/integration/metal3/metal3-test-services.sh up failed (rc %d):\n%s" % (proc.returncode, proc.stdout))
    with open(os.path.join(CACHE, "metal3", "endpoints.json")) as handle:
        data = json.load(handle)
    data["up_seconds"] = round(time.time() - start, 1)
    sys.stderr.write("\nmetal3 services up in %.1f s\n" % data["up_seconds"])
    yield data
    if not os.environ.get("SLIME_METAL3_KEEP"):
        subprocess.run([SCRIPT, "down"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


class Playbook(object):
    """Result of one ansible-playbook run."""

    def __init__(self, rc, output, seconds):
        self.rc = rc
        self.output = output
        self.seconds = seconds

    def task_result(self, task_name):
        """With the json callback: the result of task_name on localhost."""
        data = json.loads(self.output[self.output.index("{"):])
        for play in data["plays"]:
            for task in play["tasks"]:
                if task["task"]["name"] == task_name:
                    return task["hosts"]["localhost"]
        raise KeyError(task_name)


@pytest.fixture
def run_playbook(tmp_path):
    """run_playbook(playbook, extra_vars, callback='json', verbosity=0, check=False) -> Playbook.

    Variables go in through a 0600 vars file (as a vault would hand them over), never on the
    command line; localhost runs with this interpreter, which has sushy and pyghmi.
    """
    bindir = os.path.dirname(sys.executable)
    exe = shutil.which("ansible-playbook", path=bindir + os.pathsep + os.environ.get("PATH", ""))
    if not exe:
        pytest.fail("ansible-playbook not found (run scripts/install-deps.sh)")
    if not os.path.exists(os.path.join(COLLECTIONS, "ansible_collections", "slime", "hybrid")):
        pytest.fail("the collection is not linked under %s (run `make collection`)" % COLLECTIONS)
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("localhost ansible_connection=local ansible_python_interpreter=%s\n" % sys.executable)

    def run(playbook, extra_vars, callback="json", verbosity=0, check=False):
        varsfile = tmp_path / "vars.json"
        fd = os.open(str(varsfile), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(extra_vars, handle)
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
                   ANSIBLE_STDOUT_CALLBACK=callback, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
                   ANSIBLE_RETRY_FILES_ENABLED="0")
        cmd = [exe, "-i", str(inventory), os.path.join(HERE, playbook), "-e", "@%s" % varsfile]
        if verbosity:
            cmd.append("-" + "v" * verbosity)
        if check:
            cmd.append("--check")
        start = time.time()
        proc = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, check=False)
        return Playbook(proc.returncode, proc.stdout, time.time() - start)

    return run
