# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fake IPMI BMC (pyghmi's server side, as virtualbmc uses it) for the Metal3 test tier.

Started by tests/integration/metal3/metal3-test-services.sh:
    python fake_ipmi_bmc.py --address 127.0.0.1 --port 6230 --user admin --password-file FILE --power on
It answers IPMI 2.0 sessions (RMCP+) for one user and keeps a power state in memory.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import sys

from pyghmi.ipmi import bmc
from pyghmi.ipmi.private import serversession

_open_session_response = serversession.ServerSession.create_open_session_response


def _cipher_suite_3_only(self, request):
    """Refuse what pyghmi's server cannot do, as a real BMC does.

    pyghmi's server answers every RMCP+ open-session request with cipher suite 3 (HMAC-SHA1),
    even when the client proposed SHA-256 (suite 17, pyghmi's client's first choice), and the
    client then fails with a struct error on RAKP2. A BMC without suite 17 answers "no cipher
    suite match" (0x11), after which pyghmi retries with suite 3 (and so do ipmitool and Ironic).
    """
    if len(request) > 12 and request[12] != 1:  # authentication algorithm != RAKP-HMAC-SHA1
        return bytearray([request[0], 0x11, 0, 0]) + bytearray(request[4:8])
    return _open_session_response(self, request)


serversession.ServerSession.create_open_session_response = _cipher_suite_3_only


class FakeBmc(bmc.Bmc):
    def __init__(self, authdata, port, address, power):
        super(FakeBmc, self).__init__(authdata, port=port, address=address)
        self.powerstate = power
        self.bootdevice = "default"

    def get_boot_device(self):
        return self.bootdevice

    def set_boot_device(self, bootdevice):
        self.bootdevice = bootdevice

    def cold_reset(self):
        pass

    def get_power_state(self):
        return self.powerstate

    def power_off(self):
        self.powerstate = "off"

    def power_on(self):
        self.powerstate = "on"

    def power_reset(self):
        pass

    def power_shutdown(self):
        self.powerstate = "off"

    def is_active(self):
        return self.powerstate == "on"


def main():
    parser = argparse.ArgumentParser(prog="fake_ipmi_bmc")
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=6230)
    parser.add_argument("--user", default="admin")
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--power", choices=["on", "off"], default="off")
    args = parser.parse_args()
    with open(args.password_file) as handle:
        password = handle.readline().rstrip("\n")
    # pyghmi binds with an IPv6 socket; give it the IPv4-mapped form of an IPv4 address.
    address = args.address if ":" in args.address else "::ffff:" + args.address
    FakeBmc({args.user: password}, args.port, address, args.power).listen()
    return 0


if __name__ == "__main__":
    sys.exit(main())
