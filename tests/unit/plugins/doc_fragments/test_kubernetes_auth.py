# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doc fragment slime.hybrid.kubernetes_auth against the connection options of the installed
kubernetes.core (module_utils/args_common.py AUTH_ARG_SPEC), which slinky_info takes as its
argument spec: every option documented, none more, each with its type, aliases and suboptions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
import yaml

from ansible_collections.slime.hybrid.plugins.doc_fragments.kubernetes_auth import ModuleDocFragment

args_common = pytest.importorskip("ansible_collections.kubernetes.core.plugins.module_utils.args_common")


def _shape(spec):
    """name -> (type, aliases, elements, suboptions' shape) of an argument spec or of documented options."""
    out = {}
    for name, entry in spec.items():
        subs = entry.get("options") or entry.get("suboptions")
        out[name] = (
            entry.get("type", "str"),
            sorted(entry.get("aliases", [])),
            entry.get("elements"),
            _shape(subs) if subs else None,
        )
    return out


def test_fragment_documents_kubernetes_core_auth_arg_spec():
    documented = yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"]
    assert _shape(documented) == _shape(args_common.AUTH_ARG_SPEC)


def test_every_option_has_a_description():
    documented = yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"]
    for name, entry in documented.items():
        assert entry.get("description"), name
        for sub, subentry in (entry.get("suboptions") or {}).items():
            assert subentry.get("description"), (name, sub)
