# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every filter of plugins/filter/, by the name roles and playbooks call it (slime.hybrid.<name>)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import os

import pytest

FILTER_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "plugins", "filter")
FILTER_FILES = sorted(name[:-3] for name in os.listdir(FILTER_DIR) if name.endswith(".py") and name != "__init__.py")


def all_filters():
    """{filter name: (file, function)}; a name defined by two files is an error."""
    found = {}
    for file_name in FILTER_FILES:
        module = importlib.import_module("ansible_collections.slime.hybrid.plugins.filter." + file_name)
        for name, function in module.FilterModule().filters().items():
            assert name not in found, "filter %s is defined in %s and %s" % (name, found[name][0], file_name)
            found[name] = (file_name, function)
    return found


@pytest.fixture
def filters():
    return {name: function for name, (_file, function) in all_filters().items()}
