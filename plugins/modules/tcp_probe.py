#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: tcp_probe
short_description: Probe TCP paths from the host the module runs on
version_added: 0.1.0
description:
  - Connects once to each given host and port and reports what it saw (V(open), V(refused),
    V(timeout), V(unreachable)) next to what was expected. Used by C(playbooks/doctor.yml) to check
    the paths a hybrid Slurm cluster needs, from each member.
  - Read-only; never fails because a path is broken (the caller decides), only for bad arguments.
options:
  checks:
    description: The paths to probe.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: Label of the path in the report.
        type: str
      host:
        description: Address or name to connect to.
        type: str
        required: true
      port:
        description: TCP port.
        type: int
        required: true
      expect:
        description: The state that means the path is fine.
        type: str
        choices: [open, refused, timeout, unreachable]
        default: open
      hint:
        description: What to tell the operator when the path is broken.
        type: str
        default: ""
  timeout:
    description: Seconds to wait for each connection.
    type: float
    default: 3.0
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
author:
  - slime.hybrid contributors (@slime-hpc)
"""

EXAMPLES = r"""
- name: Can this bare-metal host reach slurmctld through the NodePort?
  slime.hybrid.tcp_probe:
    checks:
      - {name: "conf server", host: 10.127.0.50, port: 30017}
  register: probe
"""

RETURN = r"""
results:
  description: One entry per check.
  returned: always
  type: list
  elements: dict
  sample: [{"name": "conf server", "host": "10.127.0.50", "port": 30017, "expected": "open",
            "observed": "open", "ok": true, "seconds": 0.001, "hint": ""}]
failed_checks:
  description: Number of checks whose observed state differs from the expected one.
  returned: always
  type: int
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.slime.hybrid.plugins.module_utils import probe


def main():
    module = AnsibleModule(
        argument_spec=dict(
            checks=dict(type="list", elements="dict", required=True, options=dict(
                name=dict(type="str"),
                host=dict(type="str", required=True),
                port=dict(type="int", required=True),
                expect=dict(type="str", default="open", choices=["open", "refused", "timeout", "unreachable"]),
                hint=dict(type="str", default=""),
            )),
            timeout=dict(type="float", default=3.0),
        ),
        supports_check_mode=True,
    )
    results = probe.run_checks(module.params["checks"], module.params["timeout"])
    module.exit_json(changed=False, results=results, failed_checks=sum(1 for r in results if not r["ok"]))


if __name__ == "__main__":
    main()
