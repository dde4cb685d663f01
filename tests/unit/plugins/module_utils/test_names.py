# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared name rules (plugins/module_utils/names.py): MAC addresses as BMCs and users write them,
and the modules that run on hosts carry these rules, not the cluster model."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import names

MODULE_UTILS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "plugins", "module_utils")


@pytest.mark.parametrize("raw", ["52:54:00:aa:bb:cc", "52-54-00-AA-BB-CC", "5254.00aa.bbcc", "525400AABBCC", " 52:54:00:AA:bb:cc "])
def test_normalize_mac_reads_every_form_a_bmc_or_user_writes(raw):
    assert names.normalize_mac(raw) == names.canonical_mac(raw) == "52:54:00:aa:bb:cc"


@pytest.mark.parametrize("raw", ["52:54:00:6c:3c", "", None, "not-a-mac", "52:54:00:aa:bb:cc:dd", "zz:54:00:aa:bb:cc"])
def test_normalize_mac_refuses_what_is_not_a_mac(raw):
    with pytest.raises(ValueError, match="is not a MAC address"):
        names.normalize_mac(raw)


def test_host_side_rules_do_not_bring_the_cluster_model():
    # node_addr and node_features ship with host modules (slurm_node_addr, slurm_node_features)
    for name in ("node_addr.py", "node_features.py", "names.py"):
        with open(os.path.join(MODULE_UTILS, name)) as handle:
            assert not re.search(r"module_utils(\.| import )cluster_model", handle.read()), name
