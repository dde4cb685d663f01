#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: bmc_preflight
short_description: Check the BMCs of bare-metal hosts before Metal3 enrolls them
version_added: 0.2.0
description:
  - For each host, checks that its BMC is reachable, that the credentials work and that the boot
    MAC address exists on the system, before any BareMetalHost is created.
  - Redfish addresses (V(redfish://), V(redfish-virtualmedia://), V(redfish-uefihttp://), the Dell
    V(idrac-redfish://) and V(idrac-virtualmedia://), the HPE V(ilo5-redfish://) and
    V(ilo5-virtualmedia://), each also with V(+http) or V(+https)) are checked with the C(sushy)
    library Ironic uses itself - TCP connection, the root service with authentication, the
    system named by the address (or the only system when the address names none), its power
    state and the MAC addresses of its EthernetInterfaces (compared case-insensitively).
  - IPMI addresses (V(ipmi://host[:port]) and V(libvirt://host[:port]), port 623 by default) are checked with C(pyghmi) - an
    IPMI session is opened and the power state read. IPMI does not report NICs, so the boot MAC
    is not checked there.
  - Each failing host yields one line naming it and what went wrong (unreachable, credentials
    rejected, system not found, TLS verification failed, boot MAC missing). The module fails,
    listing every failing host, unless O(partial=true).
  - Read-only, never changes anything. Passwords are never shown.
options:
  hosts:
    description: The hosts whose BMCs to check.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: Name of the host in the report (the BareMetalHost name).
        type: str
        required: true
      address:
        description: The BMC address as Metal3 takes it, for example
          V(redfish+http://10.0.0.5:8000/redfish/v1/Systems/1) or V(ipmi://10.0.0.6:623).
        type: str
        required: true
      username:
        description: BMC user name.
        type: str
        required: true
      password:
        description: BMC password.
        type: str
        required: true
      disable_certificate_verification:
        description: Do not verify the BMC's TLS certificate (Redfish over HTTPS), as Metal3's
          C(disableCertificateVerification).
        type: bool
        default: false
      boot_mac:
        description: MAC address of the NIC the host boots from (C(bootMACAddress)); checked on
          Redfish systems, not checked over IPMI.
        type: str
  timeout:
    description: Seconds to wait for each BMC (connection, and each request).
    type: float
    default: 10.0
  partial:
    description:
      - Do not fail when some hosts fail; report them in RV(failed_hosts) and as warnings, and
        list the hosts that passed in RV(ok_hosts) so that only those are enrolled.
    type: bool
    default: false
requirements:
  - sushy (for Redfish BMCs)
  - pyghmi (for IPMI BMCs)
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
- name: Check every BMC before creating BareMetalHosts
  slime.hybrid.bmc_preflight:
    hosts:
      - name: node-0
        address: redfish+http://192.168.111.1:8000/redfish/v1/Systems/8a8a0e22-4c4b-4d89-a4a4-3d2b1e7b1d0f
        username: admin
        password: "{{ vault_bmc_password }}"
        boot_mac: "00:5c:52:31:3a:9c"
      - name: node-1
        address: ipmi://192.168.111.1:6231
        username: admin
        password: "{{ vault_bmc_password }}"
    timeout: 10

- name: Enroll only the hosts whose BMC works
  slime.hybrid.bmc_preflight:
    hosts: "{{ my_bmc_list }}"
    partial: true
  register: preflight
"""

RETURN = r"""
results:
  description: One entry per host, in the order given (passwords are never included).
  returned: always
  type: list
  elements: dict
  sample: [{"name": "node-0", "address": "redfish+http://127.0.0.1:8001/redfish/v1/Systems/1",
            "protocol": "redfish", "ok": true, "power_state": "on", "macs": ["52:54:00:6c:3c:01"],
            "boot_mac": "52:54:00:6c:3c:01", "boot_mac_checked": true, "seconds": 0.12,
            "message": "ok, power on; boot MAC 52:54:00:6c:3c:01 on system /redfish/v1/Systems/1"}]
failures:
  description: One line per failing host, naming the host and what went wrong.
  returned: always
  type: list
  elements: str
  sample: ["node-1: redfish+http://127.0.0.1:8001/redfish/v1/Systems/2: credentials rejected (HTTP 401)",
           "node-2: 127.0.0.1:9: unreachable (connection refused)"]
ok_hosts:
  description: Names of the hosts whose BMC passed every check.
  returned: always
  type: list
  elements: str
failed_hosts:
  description: Names of the hosts that failed a check.
  returned: always
  type: list
  elements: str
seconds:
  description: Wall-clock time of all checks (the BMCs are checked in parallel).
  returned: always
  type: float
"""

import time
import warnings

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.slime.hybrid.plugins.module_utils import bmc


def main():
    module = AnsibleModule(
        argument_spec=dict(
            hosts=dict(type="list", elements="dict", required=True, options=dict(
                name=dict(type="str", required=True),
                address=dict(type="str", required=True),
                username=dict(type="str", required=True),
                password=dict(type="str", required=True, no_log=True),
                disable_certificate_verification=dict(type="bool", default=False),
                boot_mac=dict(type="str"),
            )),
            timeout=dict(type="float", default=10.0),
            partial=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    # disable_certificate_verification is the user's choice: no urllib3 warning per request.
    warnings.filterwarnings("ignore", message="Unverified HTTPS request")
    hosts = module.params["hosts"]
    library, error = bmc.missing_library(hosts)
    if library:
        module.fail_json(msg=missing_required_lib(library), exception=error)
    start = time.time()
    results = bmc.run_preflight(hosts, module.params["timeout"])
    report = bmc.summary(results)
    report["seconds"] = round(time.time() - start, 3)
    if report["failures"] and not module.params["partial"]:
        module.fail_json(msg=bmc.fail_message(results), changed=False, results=results, **report)
    for line in report["failures"]:
        module.warn("BMC preflight: %s" % line)
    module.exit_json(changed=False, results=results, **report)


if __name__ == "__main__":
    main()
