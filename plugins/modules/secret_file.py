#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: secret_file
short_description: Install a binary key (slurm.key, jwt.key) given as base64
version_added: 0.1.0
description:
  - Writes the bytes of a base64 string, as a Kubernetes Secret holds them, to a file with
    restrictive permissions. M(ansible.builtin.copy) cannot do this, because its O(ansible.builtin.copy#module:content)
    is text and random key bytes are not.
  - The key is never returned or shown in a diff; changes are detected by comparing SHA-256 digests.
  - The file is created with its final mode before any byte is written.
options:
  path:
    description: Destination file.
    type: path
    required: true
  content_b64:
    description: The key, base64-encoded. Use it with C(no_log) in the task too.
    type: str
    required: true
  min_bytes:
    description: Refuse keys shorter than this many bytes.
    type: int
    default: 32
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.files
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: The diff shows digests, never the key.
  platform:
    platforms: posix
author:
  - slime.hybrid contributors (@slime-hpc)
"""

EXAMPLES = r"""
- name: Install the cluster's slurm.key
  slime.hybrid.secret_file:
    path: /etc/slurm/slurm.key
    content_b64: "{{ slurm_key_b64 }}"
    owner: slurm
    group: slurm
    mode: "0600"
  no_log: true
"""

RETURN = r"""
sha256:
  description: SHA-256 of the installed key (safe to log; identifies the key without revealing it).
  returned: success
  type: str
  sample: 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.slime.hybrid.plugins.module_utils import secret_file


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            content_b64=dict(type="str", required=True, no_log=True),
            min_bytes=dict(type="int", default=secret_file.MIN_KEY_BYTES),
        ),
        add_file_common_args=True,
        supports_check_mode=True,
    )
    path = module.params["path"]
    try:
        data = secret_file.decode_key(module.params["content_b64"], module.params["min_bytes"])
    except ValueError as exc:
        module.fail_json(msg="%s: %s" % (path, exc))

    want = secret_file.digest(data)
    have = secret_file.file_digest(path)
    changed = want != have
    result = dict(changed=changed, path=path, sha256=want)
    if module._diff:
        result["diff"] = dict(before="sha256: %s\n" % (have or "(absent)"), after="sha256: %s\n" % want)
    if changed and not module.check_mode:
        try:
            secret_file.write_atomic(path, data)
        except (IOError, OSError) as exc:
            module.fail_json(msg="cannot write %s: %s" % (path, exc))
    if have is not None or not module.check_mode:
        # owner/group/mode as asked; in check mode this only reports.
        file_args = module.load_file_common_arguments(module.params)
        result["changed"] = module.set_fs_attributes_if_different(file_args, result["changed"])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
