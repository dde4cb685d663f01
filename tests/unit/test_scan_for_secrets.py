# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/secrets/scan_for_secrets.py, the scan the verify playbooks run over a -vvv run's output:
positive controls, each a file holding a secret as the collection writes it (the Metal3 user-data
Secret made by the collection's own filter and module_utils, at each alignment of the key in the
document), which the scan must flag, and clean files it must not."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import hashlib
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.slime.hybrid.plugins.filter.worker import FilterModule
from ansible_collections.slime.hybrid.plugins.module_utils import metal3

SCANNER = os.path.join(os.path.dirname(__file__), "..", "secrets", "scan_for_secrets.py")
sys.path.insert(0, os.path.dirname(SCANNER))
import scan_for_secrets  # noqa: E402  pylint: disable=wrong-import-position

MODEL = {
    "name": "lab", "slurm_version": "26.05", "srun_port_range": "60001-60100",
    "controller": {"host": "slurm-controller.slurm", "aliases": ["slurm-controller-0"], "address": "10.126.0.11"},
    "nodeport": {"address": "10.127.0.50", "port": 30017},
}


def key_bytes(size, seed=b"slurm.key"):
    """size bytes that look random (a slurm.key), the same on every run."""
    out = b""
    while len(out) < size:
        out += hashlib.sha256(seed + str(len(out)).encode()).digest()
    return out[:size]


KEYS = {"32 bytes": key_bytes(32), "48 bytes": key_bytes(48), "1024 bytes": key_bytes(1024)}


def user_data(name, key_b64):
    """The user-data document roles/metal3_hosts hands to Metal3 for host `name` (filter worker_user_data)."""
    return FilterModule().filters()["worker_user_data"]([{"name": name}], MODEL, key_b64)[name]


def user_data_secret(name, key_b64):
    """The userData Secret as roles/metal3_hosts creates it (metal3.user_data_secret), as JSON, the way
    a -vvv run or a --diff shows a Kubernetes object."""
    return json.dumps(metal3.user_data_secret({"name": name}, "metal3", "lab", user_data(name, key_b64)))


def aligned_host(key_b64, alignment):
    """A host name whose user-data document holds the key's base64 at a byte offset of `alignment`
    modulo 3 (the name comes before the key in the document: its length moves the key)."""
    for name in ("bm-1", "bm-12", "bm-123"):
        if user_data(name, key_b64).encode("utf-8").index(key_b64.encode()) % 3 == alignment:
            return name
    raise AssertionError("no host name puts the key at alignment %d" % alignment)


def scan(tmp_path, capsys, secret, content):
    """Run the scanner's main() on one file holding content: (exit code, the kinds it reported)."""
    secret_file, scanned = tmp_path / "secret", tmp_path / "scanned.txt"
    secret_file.write_bytes(secret)
    scanned.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    rc = scan_for_secrets.main([str(secret_file), "--", str(scanned)])
    out = capsys.readouterr().out
    assert base64.b64encode(secret).decode() not in out and secret.decode("latin-1") not in out  # never the secret itself
    kinds = []
    for line in out.splitlines():
        if line.startswith("LEAK: "):
            prefix, suffix = "LEAK: %s holds " % scanned, " of %s" % secret_file
            assert line.startswith(prefix) and line.endswith(suffix), line
            kinds += line[len(prefix):-len(suffix)].split(", ")
    assert out.splitlines()[-1] == "scanned 1 file(s) for 1 secret(s): %s" % ("LEAKS FOUND" if rc else "clean")
    return rc, kinds


def test_the_host_names_give_the_three_alignments():
    key_b64 = base64.b64encode(KEYS["32 bytes"]).decode()
    assert sorted(user_data(name, key_b64).encode("utf-8").index(key_b64.encode()) % 3
                  for name in ("bm-1", "bm-12", "bm-123")) == [0, 1, 2]


@pytest.mark.parametrize("alignment", [0, 1, 2])
@pytest.mark.parametrize("size", sorted(KEYS))
def test_the_metal3_user_data_secret_is_found_at_each_alignment(tmp_path, capsys, size, alignment):
    """The key's base64 inside the base64 of the document: only the new kind for this alignment finds
    it (none of raw bytes, base64, base64 block, hex does)."""
    secret = KEYS[size]
    key_b64 = base64.b64encode(secret).decode()
    name = aligned_host(key_b64, alignment)
    stored = json.loads(user_data_secret(name, key_b64))["data"]["userData"]
    assert key_b64 in base64.b64decode(stored).decode()  # the document the Secret holds has the key as base64 text
    rc, kinds = scan(tmp_path, capsys, secret, user_data_secret(name, key_b64))
    assert (rc, kinds) == (1, ["base64 in base64 (alignment %d)" % alignment])


@pytest.mark.parametrize("size", sorted(KEYS))
def test_the_user_data_document_itself_is_found(tmp_path, capsys, size):
    secret = KEYS[size]
    rc, kinds = scan(tmp_path, capsys, secret, user_data("bm-1", base64.b64encode(secret).decode()))
    assert rc == 1 and "base64" in kinds


def wrapped(secret):
    """The key's base64 as `base64` prints it: lines of 76 chars (a slime_slurm_key_b64 read from such a file)."""
    text = base64.b64encode(secret).decode()
    return "".join(text[start:start + 76] + "\n" for start in range(0, len(text), 76))


@pytest.mark.parametrize("name", ["bm-1", "bm-12", "bm-123"])
def test_a_wrapped_key_is_found_in_the_document_and_in_its_secret(tmp_path, capsys, name):
    """A 1024-byte key given in 76-char lines goes into the document so (a literal block): its lines
    sit at every alignment; its first line holds the first 64-char block of the key's base64."""
    secret = KEYS["1024 bytes"]
    document = user_data(name, wrapped(secret))
    assert base64.b64encode(secret).decode() not in document  # not as one piece: wrapped
    rc, kinds = scan(tmp_path, capsys, secret, document)
    assert (rc, kinds) == (1, ["base64 block"])  # its first line holds the base64 of the key's first 48 bytes
    rc, kinds = scan(tmp_path, capsys, secret, user_data_secret(name, wrapped(secret)))
    assert rc == 1 and kinds == sorted(kinds) and kinds
    assert set(kinds) <= {"base64 in base64 (alignment %d)" % alignment for alignment in range(3)}


def test_another_keys_user_data_secret_is_clean(tmp_path, capsys):
    other = base64.b64encode(key_bytes(1024, seed=b"another key")).decode()
    for secret in KEYS.values():
        assert scan(tmp_path, capsys, secret, user_data_secret("bm-12", other) + user_data("bm-1", other)) == (0, [])
        assert scan(tmp_path, capsys, secret, user_data_secret("bm-12", wrapped(key_bytes(1024, seed=b"x")))) == (0, [])


# --- the controls the scanner had: raw, whole base64 (as molecule's control file: base64 -w0), blocks, hex ---
@pytest.mark.parametrize("size", sorted(KEYS))
def test_whole_base64_file_is_found(tmp_path, capsys, size):
    secret = KEYS[size]
    rc, kinds = scan(tmp_path, capsys, secret, base64.b64encode(secret))
    assert rc == 1 and "base64" in kinds


def test_raw_window_hex_and_base64_block_are_found(tmp_path, capsys):
    secret = KEYS["1024 bytes"]
    assert scan(tmp_path, capsys, secret, b"log: " + secret[100:120] + b" end") == (1, ["raw bytes"])
    assert scan(tmp_path, capsys, secret, b"dump " + binascii.hexlify(secret[:32])) == (1, ["hex"])
    rc, kinds = scan(tmp_path, capsys, secret, b"x" + base64.b64encode(b"abc" + secret[:96] + b"tail"))
    assert rc == 1 and "base64 block" in kinds


def test_the_command_line_is_unchanged(tmp_path):
    secret_file, clean, leak = tmp_path / "slurm.key", tmp_path / "clean.txt", tmp_path / "leak.txt"
    secret_file.write_bytes(KEYS["48 bytes"])
    clean.write_text("nothing here\n")
    leak.write_text(user_data_secret(aligned_host(base64.b64encode(KEYS["48 bytes"]).decode(), 2),
                                     base64.b64encode(KEYS["48 bytes"]).decode()))
    run = subprocess.run([sys.executable, SCANNER, str(secret_file), "--", str(clean), str(leak)],
                         stdout=subprocess.PIPE, universal_newlines=True, check=False)
    assert run.returncode == 1
    assert run.stdout.splitlines() == ["LEAK: %s holds base64 in base64 (alignment 2) of %s" % (leak, secret_file),
                                       "scanned 2 file(s) for 1 secret(s): LEAKS FOUND"]
    run = subprocess.run([sys.executable, SCANNER, str(secret_file), "--", str(clean)], stdout=subprocess.PIPE, check=False)
    assert run.returncode == 0
    assert subprocess.run([sys.executable, SCANNER, str(secret_file)], stdout=subprocess.PIPE, check=False).returncode == 2
