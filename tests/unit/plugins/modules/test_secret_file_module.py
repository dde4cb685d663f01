# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The secret_file module, run in-process as Ansible runs it (arguments through
ansible.module_utils.basic._ANSIBLE_ARGS, result as JSON on stdout, SystemExit)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import functools
import hashlib
import os
import stat

import pytest

from ansible_collections.slime.hybrid.plugins.modules import secret_file as secret_file_module

# Printable on purpose: if the key leaked into the output, these assertions would see it.
KEY = b"slime-hybrid-test-slurm-key-0123456789-ABCDEFGHIJ"
KEY_B64 = base64.b64encode(KEY).decode("ascii")
KEY_SHA256 = hashlib.sha256(KEY).hexdigest()


@pytest.fixture
def run_module(module_runner):
    """Run the secret_file module (see module_runner in tests/unit/conftest.py)."""
    return functools.partial(module_runner, secret_file_module.main)


def _mode(path):
    return stat.S_IMODE(os.stat(str(path)).st_mode)


def _assert_no_key(run):
    assert KEY_B64 not in run.stdout
    assert KEY.decode("ascii") not in run.stdout
    assert KEY.hex() not in run.stdout


def test_creates_file_0600_with_exact_bytes(tmp_path, run_module):
    path = tmp_path / "slurm.key"
    run = run_module(path=str(path), content_b64=KEY_B64)
    assert run.rc == 0
    assert run.result["changed"] is True
    assert run.result["sha256"] == KEY_SHA256
    assert run.result["path"] == str(path)
    assert path.read_bytes() == KEY
    assert _mode(path) == 0o600
    assert "diff" not in run.result
    _assert_no_key(run)


def test_second_run_is_not_changed(tmp_path, run_module):
    path = tmp_path / "slurm.key"
    assert run_module(path=str(path), content_b64=KEY_B64).result["changed"] is True
    run = run_module(path=str(path), content_b64=KEY_B64)
    assert run.rc == 0
    assert run.result["changed"] is False
    assert run.result["sha256"] == KEY_SHA256
    assert path.read_bytes() == KEY


def test_wrapped_base64_is_the_same_key(tmp_path, run_module):
    path = tmp_path / "slurm.key"
    run_module(path=str(path), content_b64=KEY_B64)
    wrapped = "\n".join(KEY_B64[i:i + 16] for i in range(0, len(KEY_B64), 16)) + "\n"
    assert run_module(path=str(path), content_b64=wrapped).result["changed"] is False


def test_replaces_a_different_key(tmp_path, run_module):
    path = tmp_path / "slurm.key"
    path.write_bytes(b"an older key of thirty-two bytes!!")
    os.chmod(str(path), 0o644)
    run = run_module(path=str(path), content_b64=KEY_B64)
    assert run.result["changed"] is True
    assert path.read_bytes() == KEY
    assert _mode(path) == 0o600


def test_applies_the_requested_mode(tmp_path, run_module):
    path = tmp_path / "jwt.key"
    run = run_module(path=str(path), content_b64=KEY_B64, mode="0640")
    assert run.result["changed"] is True
    assert _mode(path) == 0o640
    assert run_module(path=str(path), content_b64=KEY_B64, mode="0640").result["changed"] is False
    # only the mode differs: still a change, content untouched
    assert run_module(path=str(path), content_b64=KEY_B64, mode="0600").result["changed"] is True
    assert _mode(path) == 0o600
    assert path.read_bytes() == KEY


def test_check_mode_does_not_write(tmp_path, run_module):
    path = tmp_path / "slurm.key"
    run = run_module(check_mode=True, path=str(path), content_b64=KEY_B64)
    assert run.rc == 0
    assert run.result["changed"] is True
    assert not path.exists()
    assert os.listdir(str(tmp_path)) == []


def test_check_mode_does_not_replace_a_different_key(tmp_path, run_module):
    path = tmp_path / "slurm.key"
    path.write_bytes(b"an older key of thirty-two bytes!!")
    run = run_module(check_mode=True, path=str(path), content_b64=KEY_B64)
    assert run.result["changed"] is True
    assert path.read_bytes() == b"an older key of thirty-two bytes!!"


def test_check_mode_reports_no_change_for_the_same_key(tmp_path, run_module):
    path = tmp_path / "slurm.key"
    run_module(path=str(path), content_b64=KEY_B64)
    assert run_module(check_mode=True, path=str(path), content_b64=KEY_B64).result["changed"] is False


def test_diff_shows_digests_only(tmp_path, run_module):
    path = tmp_path / "slurm.key"
    run = run_module(diff=True, path=str(path), content_b64=KEY_B64)
    assert run.result["diff"] == {"before": "sha256: (absent)\n", "after": "sha256: %s\n" % KEY_SHA256}
    _assert_no_key(run)

    old = b"an older key of thirty-two bytes!!"
    path.write_bytes(old)
    run = run_module(diff=True, check_mode=True, path=str(path), content_b64=KEY_B64)
    assert run.result["diff"] == {
        "before": "sha256: %s\n" % hashlib.sha256(old).hexdigest(),
        "after": "sha256: %s\n" % KEY_SHA256,
    }
    assert old.decode() not in run.stdout
    _assert_no_key(run)


@pytest.mark.parametrize("length", [8, 31])
def test_short_key_fails_without_showing_it(tmp_path, run_module, length):
    short = KEY[:length]
    short_b64 = base64.b64encode(short).decode()
    path = tmp_path / "slurm.key"
    run = run_module(path=str(path), content_b64=short_b64)
    assert run.rc == 1
    assert run.result["failed"] is True
    assert run.result["msg"] == "%s: the key is %d bytes; at least 32 are required" % (path, length)
    assert short_b64 not in run.stdout
    assert short.decode() not in run.stdout
    assert not path.exists()


def test_min_bytes_option(tmp_path, run_module):
    path = tmp_path / "slurm.key"
    run = run_module(path=str(path), content_b64=KEY_B64, min_bytes=len(KEY) + 1)
    assert run.rc == 1
    assert "at least %d are required" % (len(KEY) + 1) in run.result["msg"]
    assert run_module(path=str(path), content_b64=KEY_B64, min_bytes=len(KEY)).rc == 0


def test_invalid_base64_fails_without_showing_it(tmp_path, run_module):
    bad = "this is not base64 but a leaked secret"
    run = run_module(path=str(tmp_path / "slurm.key"), content_b64=bad)
    assert run.rc == 1
    assert run.result["msg"].endswith(": the key is not valid base64")
    assert bad not in run.stdout


@pytest.mark.parametrize("check_mode, diff", [(False, False), (True, True), (False, True)])
def test_content_b64_never_appears_in_the_result(tmp_path, run_module, check_mode, diff):
    run = run_module(check_mode=check_mode, diff=diff, path=str(tmp_path / "slurm.key"), content_b64=KEY_B64)
    assert run.rc == 0
    _assert_no_key(run)
    # the invocation echo masks the no_log argument
    assert run.result["invocation"]["module_args"]["content_b64"] == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"


def test_unwritable_destination_fails(tmp_path, run_module):
    run = run_module(path=str(tmp_path / "missing-dir" / "slurm.key"), content_b64=KEY_B64)
    assert run.rc == 1
    assert run.result["msg"].startswith("cannot write %s" % (tmp_path / "missing-dir" / "slurm.key"))
    _assert_no_key(run)
