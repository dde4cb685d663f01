# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""preload: a task name that uses it leaves the process that templates it holding the filters and tests."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gc

from ansible.plugins.loader import filter_loader, test_loader

from ansible_collections.slime.hybrid.plugins.filter.preload import preload


def test_it_returns_an_empty_string_whatever_it_is_given():
    assert preload("") == ""
    assert preload(None) == ""
    assert preload({"any": "thing"}) == ""


def test_afterwards_this_process_holds_ansible_cores_own_filters_and_tests():
    for loader in (filter_loader, test_loader):
        loader._cached_non_collection_wrappers.clear()  # as in a process that has templated nothing yet
    preload("")
    # what a worker forked now inherits, instead of loading the plugin files itself
    assert {"to_json", "regex_replace", "combine", "ansible.builtin.to_json"} <= set(filter_loader._cached_non_collection_wrappers)
    assert {"search", "match", "version", "ansible.builtin.search"} <= set(test_loader._cached_non_collection_wrappers)


def test_afterwards_what_this_process_holds_is_out_of_the_collections_of_its_forks():
    gc.unfreeze()
    held = {"a dict this process holds": [1, 2, 3]}
    try:
        preload("")
        assert gc.get_freeze_count() > 0
        # frozen: in none of the generations a collection walks
        assert gc.is_tracked(held) and all(obj is not held for obj in gc.get_objects())
    finally:
        gc.unfreeze()
