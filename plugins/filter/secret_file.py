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


def _slurm_key_errors(key_b64, key_src, prefix):
    """What is wrong with a role's slurm.key inputs (PREFIX_slurm_key_b64, PREFIX_slurm_key_src), never the key."""
    if not key_b64 and not key_src:
        return ["no slurm.key given: set slime_slurm_key_src or slime_slurm_key_b64 (or %s_slurm_key_src / %s_slurm_key_b64)"
                % (prefix, prefix)]
    problem = _key_error(key_b64) if key_b64 else ""
    return ["%s_slurm_key_b64: %s" % (prefix, problem)] if problem else []


class FilterModule(object):
    """slime.hybrid key filters."""

    def filters(self):
        return {
            "key_error": _key_error,
            "slurm_key_errors": _slurm_key_errors,
        }
