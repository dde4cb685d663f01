# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/pack_collection.py: an installed collection packed back into a tarball that
ansible-galaxy installs offline and verifies, also when files FILES.json lists were left out
of the installed copy (as the `ansible` package does); a changed file is refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts"))
import pack_collection  # noqa: E402  pylint: disable=wrong-import-position

GALAXY = """namespace: demo
name: packed
version: 1.2.3
readme: README.md
authors: [test]
"""


def galaxy(*args, **kwargs):
    return subprocess.run(["ansible-galaxy", "collection"] + list(args), capture_output=True, text=True, check=False, **kwargs)


@pytest.fixture
def installed(tmp_path):
    """demo.packed built and installed the way Galaxy would, under tmp_path/installed."""
    src = tmp_path / "src"
    (src / "plugins" / "filter").mkdir(parents=True)
    (src / "tests").mkdir()
    (src / "galaxy.yml").write_text(GALAXY)
    (src / "README.md").write_text("demo\n")
    (src / "plugins" / "filter" / "f.py").write_text("X = 1\n")
    (src / "tests" / "t.txt").write_text("test data\n")
    result = galaxy("build", "--output-path", str(tmp_path), str(src))
    assert result.returncode == 0, result.stderr
    result = galaxy("install", "--offline", "--no-deps", "-p", str(tmp_path / "installed"),
                    str(tmp_path / "demo-packed-1.2.3.tar.gz"))
    assert result.returncode == 0, result.stderr
    return tmp_path / "installed" / "ansible_collections" / "demo" / "packed"


def install_and_verify(tmp_path, tarball):
    dest = tmp_path / "again"
    result = galaxy("install", "--offline", "--no-deps", "--force", "-p", str(dest), str(tarball))
    if result.returncode != 0:
        return result
    return galaxy("verify", "--offline", "-p", str(dest), "demo.packed",
                  env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(dest)))


def test_found_on_the_collections_path_and_installs_again(tmp_path, installed, monkeypatch):
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(tmp_path / "installed"))
    path = pack_collection.find("demo.packed")
    assert path == str(installed)
    assert pack_collection.pack(path, str(tmp_path / "out.tar.gz")) == "demo.packed 1.2.3"
    result = install_and_verify(tmp_path, tmp_path / "out.tar.gz")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "again" / "ansible_collections" / "demo" / "packed" / "plugins" / "filter" / "f.py").read_text() == "X = 1\n"


def test_files_left_out_of_the_installed_copy_are_dropped_from_files_json(tmp_path, installed):
    (installed / "tests" / "t.txt").unlink()
    (installed / "tests").rmdir()
    pack_collection.pack(str(installed), str(tmp_path / "out.tar.gz"))
    result = install_and_verify(tmp_path, tmp_path / "out.tar.gz")
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (tmp_path / "again" / "ansible_collections" / "demo" / "packed" / "tests").exists()


def test_a_file_changed_after_install_is_refused_by_ansible_galaxy(tmp_path, installed):
    (installed / "plugins" / "filter" / "f.py").write_text("X = 2\n")
    pack_collection.pack(str(installed), str(tmp_path / "out.tar.gz"))
    result = install_and_verify(tmp_path, tmp_path / "out.tar.gz")
    assert result.returncode != 0
    assert "f.py" in result.stdout + result.stderr, result.stdout + result.stderr
    assert "checksum" in (result.stdout + result.stderr).lower() or "mismatch" in (result.stdout + result.stderr).lower(), result.stderr


def test_a_collection_that_is_not_installed_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(tmp_path))
    with pytest.raises(SystemExit) as exc:
        pack_collection.find("demo.absent")
    assert "demo.absent is not installed" in str(exc.value)
