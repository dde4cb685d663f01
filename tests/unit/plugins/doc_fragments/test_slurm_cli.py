# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doc fragment slime.hybrid.slurm_cli against module_utils/scontrol.py ARGUMENT_SPEC, and the action
group slime.hybrid.slurm of meta/runtime.yml against the modules that take that option."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import os

import yaml

from ansible_collections.slime.hybrid.plugins.doc_fragments.slurm_cli import ModuleDocFragment
from ansible_collections.slime.hybrid.plugins.module_utils import scontrol

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..")


def test_fragment_documents_the_argument_spec():
    documented = yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"]
    assert {name: (entry["type"], entry["default"]) for name, entry in documented.items()} == {
        name: (entry["type"], entry["default"]) for name, entry in scontrol.ARGUMENT_SPEC.items()}
    assert all(entry["description"] for entry in documented.values())


def test_the_slurm_group_is_the_modules_that_take_the_option():
    with open(os.path.join(ROOT, "meta", "runtime.yml")) as handle:
        group = yaml.safe_load(handle)["action_groups"]["slurm"]
    for name in group:
        module = importlib.import_module("ansible_collections.slime.hybrid.plugins.modules." + name)
        assert "slime.hybrid.slurm_cli" in yaml.safe_load(module.DOCUMENTATION)["extends_documentation_fragment"], name
    taking = []
    for filename in sorted(os.listdir(os.path.join(ROOT, "plugins", "modules"))):
        if filename.endswith(".py") and not filename.startswith("_"):
            with open(os.path.join(ROOT, "plugins", "modules", filename)) as handle:
                if "scontrol.ARGUMENT_SPEC" in handle.read():
                    taking.append(filename[:-3])
    assert sorted(group) == taking
