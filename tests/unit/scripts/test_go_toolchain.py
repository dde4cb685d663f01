# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/go_toolchain.py: go.sum's h1 hash, and the toolchain taken from a module proxy only
when its hash is the pinned one."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import http.server
import os
import sys
import threading
import zipfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts"))
import go_toolchain  # noqa: E402  pylint: disable=wrong-import-position

FILES = {"bin/go": b"#!/bin/sh\necho go\n", "VERSION": b"go1.0.0\n", "pkg/tool/linux_amd64/compile": b"\x7fELF"}


def make_zip(path, prefix):
    with zipfile.ZipFile(str(path), "w") as archive:
        for name, content in FILES.items():
            archive.writestr(prefix + name, content)


def test_hash1_is_go_sums_h1(tmp_path):
    # The expected value is what golang.org/x/mod/sumdb/dirhash.HashZip(zip, dirhash.Hash1)
    # prints for this zip (computed once with Go; the same holds for the real go1.26.8 toolchain
    # zip, whose go.sum line the script pins).
    make_zip(tmp_path / "m.zip", "example.org/m@v0.0.1-go1.0.0.linux-amd64/")
    with zipfile.ZipFile(str(tmp_path / "m.zip")) as archive:
        assert go_toolchain.hash1(archive) == "h1:5WOEvfHKCQf3pg6FtUEXb+uMzZ8/T0sWpkNLO6wxqqc="


@pytest.fixture
def proxy(tmp_path, monkeypatch):
    """A module proxy serving a toolchain zip of version 1.0.0 for this machine."""
    target = "linux-" + go_toolchain.ARCHES.get(go_toolchain.platform.machine(), go_toolchain.platform.machine())
    version = "v0.0.1-go1.0.0.%s" % target
    served = tmp_path / "proxy" / "golang.org" / "toolchain" / "@v"
    served.mkdir(parents=True)
    make_zip(served / (version + ".zip"), "golang.org/toolchain@%s/" % version)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "proxy"))
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("GOPROXY", "http://127.0.0.1:%d,direct" % server.server_port)
    monkeypatch.setattr(go_toolchain, "GO_VERSION", "1.0.0")
    monkeypatch.setattr(go_toolchain, "system_go", lambda: None)
    with zipfile.ZipFile(str(served / (version + ".zip"))) as archive:
        good = go_toolchain.hash1(archive)
    yield target, good
    server.shutdown()


def test_a_toolchain_with_the_pinned_hash_is_unpacked_with_its_programs_executable(proxy, tmp_path, monkeypatch, capsys):
    target, good = proxy
    monkeypatch.setattr(go_toolchain, "SUMS", {target: good})
    go_toolchain.main(str(tmp_path / "dest"))
    root = tmp_path / "dest" / "go1.0.0"
    assert capsys.readouterr().out.strip() == str(root / "bin")
    assert os.access(str(root / "bin" / "go"), os.X_OK)
    assert os.access(str(root / "pkg" / "tool" / "linux_amd64" / "compile"), os.X_OK)
    assert not os.access(str(root / "VERSION"), os.X_OK)
    assert (root / "VERSION").read_bytes() == FILES["VERSION"]


def test_a_toolchain_with_another_hash_is_refused_and_nothing_unpacked(proxy, tmp_path, monkeypatch):
    target, _good = proxy
    monkeypatch.setattr(go_toolchain, "SUMS", {target: "h1:5WOEvfHKCQf3pg6FtUEXb+uMzZ8/T0sWpkNLO6wxqqc="})
    with pytest.raises(SystemExit, match="go.sum says h1:5WOEv.*: refused"):
        go_toolchain.main(str(tmp_path / "dest"))
    assert not (tmp_path / "dest" / "go1.0.0").exists()


def test_an_unreachable_proxy_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("GOPROXY", "http://127.0.0.1:9")
    monkeypatch.setattr(go_toolchain, "system_go", lambda: None)
    with pytest.raises(SystemExit, match="cannot download the Go .* toolchain from http://127.0.0.1:9/golang.org/toolchain/"):
        go_toolchain.main(str(tmp_path / "dest"))


@pytest.mark.parametrize("text, expected", [("go1.26.8", (1, 26, 8)), ("go1.27", (1, 27, 0)), ("go1.27rc1", None), ("devel", None)])
def test_version_tuple(text, expected):
    assert go_toolchain.version_tuple(text) == expected
