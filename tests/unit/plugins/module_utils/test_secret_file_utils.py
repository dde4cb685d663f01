# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import hashlib
import os
import stat

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import secret_file

KEY = bytes(range(256))[:48]
KEY_B64 = base64.b64encode(KEY).decode("ascii")


def test_decode_key_valid():
    assert secret_file.decode_key(KEY_B64) == KEY


def test_decode_key_exactly_min_bytes():
    key = b"k" * secret_file.MIN_KEY_BYTES
    assert secret_file.decode_key(base64.b64encode(key).decode()) == key


@pytest.mark.parametrize(
    "text",
    [
        KEY_B64 + "\n",
        "\n".join(KEY_B64[i:i + 8] for i in range(0, len(KEY_B64), 8)),  # wrapped like `base64` output
        "  " + " ".join(KEY_B64[i:i + 4] for i in range(0, len(KEY_B64), 4)) + "\t\r\n",
    ],
    ids=["trailing-newline", "wrapped", "spaces-tabs-crlf"],
)
def test_decode_key_ignores_whitespace(text):
    assert secret_file.decode_key(text) == KEY


@pytest.mark.parametrize("value", ["", "   \n\t", None], ids=["empty", "blank", "none"])
def test_decode_key_empty(value):
    with pytest.raises(ValueError, match="^the key is empty$"):
        secret_file.decode_key(value)


@pytest.mark.parametrize("value", [KEY, 12345], ids=["bytes", "int"])
def test_decode_key_refuses_non_strings_without_echoing_them(value):
    with pytest.raises(ValueError) as exc:
        secret_file.decode_key(value)
    assert repr(value) not in str(exc.value) and str(value) not in str(exc.value)


BAD_BASE64 = [
    "this is not base64 at all!",
    KEY_B64[:-1],  # bad padding
    KEY_B64.replace("+", "-").replace("/", "_") + "-_",  # URL-safe alphabet
    "Zm9v@YmFy" * 8,
    "ключключключключключключключключключключ",
]


@pytest.mark.parametrize("value", BAD_BASE64, ids=["prose", "padding", "urlsafe", "symbol", "non-ascii"])
def test_decode_key_not_base64(value):
    with pytest.raises(ValueError) as exc:
        secret_file.decode_key(value)
    assert str(exc.value) == "the key is not valid base64"
    assert value not in str(exc.value)


@pytest.mark.parametrize("length", [1, 16, 31])
def test_decode_key_too_short(length):
    short = bytes(range(65, 65 + length))  # printable, so a leak would show
    short_b64 = base64.b64encode(short).decode()
    with pytest.raises(ValueError) as exc:
        secret_file.decode_key(short_b64)
    message = str(exc.value)
    assert message == "the key is %d bytes; at least 32 are required" % length
    assert short_b64 not in message
    assert short.decode() not in message


def test_decode_key_custom_minimum():
    assert secret_file.decode_key(KEY_B64, min_bytes=48) == KEY
    with pytest.raises(ValueError, match="the key is 48 bytes; at least 64 are required"):
        secret_file.decode_key(KEY_B64, min_bytes=64)


@pytest.mark.parametrize(
    "data, expected",
    [
        (b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (b"foo", "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"),
        (KEY, hashlib.sha256(KEY).hexdigest()),
    ],
)
def test_digest(data, expected):
    assert secret_file.digest(data) == expected


def test_file_digest(tmp_path):
    path = tmp_path / "slurm.key"
    path.write_bytes(KEY)
    assert secret_file.file_digest(str(path)) == secret_file.digest(KEY)


def test_file_digest_missing_file(tmp_path):
    assert secret_file.file_digest(str(tmp_path / "absent.key")) is None
    assert secret_file.file_digest(str(tmp_path / "no-such-dir" / "absent.key")) is None


def _mode(path):
    return stat.S_IMODE(os.stat(str(path)).st_mode)


def test_write_atomic_creates_file_0600(tmp_path):
    path = tmp_path / "slurm.key"
    secret_file.write_atomic(str(path), KEY)
    assert path.read_bytes() == KEY
    assert _mode(path) == 0o600
    assert os.listdir(str(tmp_path)) == ["slurm.key"]  # no temporary file left behind


def test_write_atomic_mode_does_not_depend_on_umask(tmp_path):
    path = tmp_path / "slurm.key"
    old = os.umask(0)
    try:
        secret_file.write_atomic(str(path), KEY)
    finally:
        os.umask(old)
    assert _mode(path) == 0o600


def test_write_atomic_custom_mode(tmp_path):
    path = tmp_path / "jwt.key"
    secret_file.write_atomic(str(path), KEY, mode=0o640)
    assert _mode(path) == 0o640


def test_write_atomic_replaces_existing_file(tmp_path):
    path = tmp_path / "slurm.key"
    path.write_bytes(b"old key material")
    os.chmod(str(path), 0o644)
    old_inode = os.stat(str(path)).st_ino
    secret_file.write_atomic(str(path), KEY)
    assert path.read_bytes() == KEY
    assert _mode(path) == 0o600
    assert os.stat(str(path)).st_ino != old_inode  # renamed over, not rewritten in place
    assert os.listdir(str(tmp_path)) == ["slurm.key"]


def test_write_atomic_removes_temporary_file_on_failure(tmp_path):
    target = tmp_path / "slurm.key"
    target.mkdir()  # a directory cannot be replaced by a file
    with pytest.raises(OSError):
        secret_file.write_atomic(str(target), KEY)
    assert os.listdir(str(tmp_path)) == ["slurm.key"]
    assert target.is_dir()


def test_write_atomic_relative_path(tmp_path, monkeypatch):
    monkeypatch.chdir(str(tmp_path))
    secret_file.write_atomic("slurm.key", KEY)
    assert (tmp_path / "slurm.key").read_bytes() == KEY


def test_key_input_errors_name_the_variable_never_the_key():
    assert secret_file.key_input_errors(KEY_B64, "", "metal3_hosts") == []
    assert secret_file.key_input_errors("", "/etc/slurm.key", "metal3_hosts") == []
    assert secret_file.key_input_errors("", "", "slurm_node") == [
        "no slurm.key given: set slime_slurm_key_src or slime_slurm_key_b64 (or slurm_node_slurm_key_src / slurm_node_slurm_key_b64)"]
    assert secret_file.key_input_errors("c2hvcnQ=", "", "slurm_node") == [
        "slurm_node_slurm_key_b64: the key is 5 bytes; at least 32 are required"]
