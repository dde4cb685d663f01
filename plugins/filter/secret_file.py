# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over plugins/module_utils/secret_file.py: whether a key is usable, never the key."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.slime.hybrid.plugins.module_utils import secret_file


def _key_error(content_b64):
    """'' for a usable base64 key, else why not (never the key itself)."""
    try:
        secret_file.decode_key(content_b64)
    except ValueError as exc:
        return str(exc)
    return ""


class FilterModule(object):
    """slime.hybrid key filters."""

    def filters(self):
        return {
            "key_error": _key_error,
        }
