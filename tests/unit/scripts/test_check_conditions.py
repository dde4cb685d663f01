# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/check_conditions.py: conditions YAML read as mappings are found; this tree has none."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts"))
import check_conditions  # noqa: E402  pylint: disable=wrong-import-position

TOP = os.path.join(os.path.dirname(__file__), "..", "..", "..")


def test_a_colon_in_a_plain_condition_is_found():
    document = yaml.safe_load("""
- name: check
  ansible.builtin.assert:
    that:
      - out is search('error: x')
      - "out is search('error: y')"
  when:
    - ready: yes
  until: done
""")
    assert check_conditions.bad_conditions(document) == [{"out is search('error": "x')"}, {"ready": True}]


def test_the_collection_has_no_such_condition(capsys):
    assert check_conditions.main(TOP) == 0, capsys.readouterr().out


def test_a_file_that_does_not_parse_is_reported_unless_a_template(tmp_path, capsys):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "templates").mkdir()
    (tmp_path / "tasks" / "broken.yml").write_text("- name: x\n  when: [a\n")
    (tmp_path / "templates" / "values.yml").write_text("a: {{ b }\n")
    assert check_conditions.main(str(tmp_path)) == 1
    out = capsys.readouterr().out
    assert "tasks/broken.yml does not parse as YAML, so its conditions are unchecked" in out
    assert "templates" not in out
