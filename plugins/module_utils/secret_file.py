# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Binary secret files (slurm.key, jwt.key) from base64, compared by digest only."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import hashlib
import os
import tempfile

MIN_KEY_BYTES = 32


def decode_key(content_b64, min_bytes=MIN_KEY_BYTES):
    """Decode a base64 key (as a Kubernetes Secret holds it). Raises ValueError without echoing it."""
    if not isinstance(content_b64, str) or not content_b64.strip():
        raise ValueError("the key is empty")
    try:
        data = base64.b64decode("".join(content_b64.split()), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the key is not valid base64")
    if len(data) < min_bytes:
        raise ValueError("the key is %d bytes; at least %d are required" % (len(data), min_bytes))
    return data


def key_input_errors(key_b64, key_src, prefix):
    """What is wrong with a role's slurm.key inputs (PREFIX_slurm_key_b64, PREFIX_slurm_key_src), never the key."""
    if not key_b64 and not key_src:
        return ["no slurm.key given: set slime_slurm_key_src or slime_slurm_key_b64 (or %s_slurm_key_src / %s_slurm_key_b64)"
                % (prefix, prefix)]
    try:
        decode_key(key_b64) if key_b64 else None
    except ValueError as exc:
        return ["%s_slurm_key_b64: %s" % (prefix, exc)]
    return []


def digest(data):
    return hashlib.sha256(data).hexdigest()


def file_digest(path):
    """sha256 of a file's content, or None when it does not exist."""
    try:
        with open(path, "rb") as handle:
            return digest(handle.read())
    except IOError:
        return None


def write_atomic(path, data, mode=0o600):
    """Write data next to path with restrictive permissions from the start, then rename."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".slime-")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.rename(tmp, path)
    except Exception:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
