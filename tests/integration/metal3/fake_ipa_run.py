"""Run Metal3's FakeIPA (metal3-io/utility-images fake-ipa/, unchanged) for the Metal3 test tier.

Two things on top of upstream's `fake-ipa` command, without touching its files:

- Werkzeug's reloader off: upstream's main() runs Flask with debug=True, whose reloader forks a
  second process that polls every module file each second (CPU on a 2-core machine, and a child
  `down` would have to find).
- The config drive of every deploy kept: Ironic sends it with the `write_image` deploy step
  (`deploy.execute_deploy_step`, args `configdrive`, the gzipped and base64-encoded ISO9660
  image it built; ironic/drivers/modules/agent.py, write_image). FakeIPA only acknowledges the
  step; this keeps exactly the bytes Ironic sent in SLIME_CONFIGDRIVE_DIR/<node uuid>.b64 (0600:
  the user-data holds secrets) so a test can open it as cloud-init would. Nothing of it is logged.

Usage: fake_ipa_run.py --config FILE   (the same arguments as `fake-ipa`)
"""

import collections
import functools
import json
import logging
import os
import re
import sys

import requests
from flask import request
from fake_ipa import main as fake_ipa_main
from fake_ipa.fake_agent import FakeIronicPythonAgent

app = fake_ipa_main.app


def _keep(path, text):
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


@app.before_request
def keep_configdrive():
    if request.method != "POST" or not request.path.endswith("/v1/commands/"):
        return None
    body = request.get_json(silent=True, force=True) or {}
    params = body.get("params") or {}
    step = params.get("step") or {}
    if body.get("name") != "deploy.execute_deploy_step" or step.get("step") != "write_image":
        return None
    args = step.get("args") or {}
    node = (params.get("node") or {}).get("uuid") or request.path.strip("/").split("/")[0]
    directory = app.config.get("SLIME_CONFIGDRIVE_DIR")
    if not directory:
        return None
    configdrive = args.get("configdrive")
    if isinstance(configdrive, str):
        _keep(os.path.join(directory, node + ".b64"), configdrive)
    info = {k: v for k, v in (args.get("image_info") or {}).items() if k != "configdrive"}
    _keep(os.path.join(directory, node + ".image_info.json"), json.dumps(info, indent=2, sort_keys=True))
    app.logger.info("write_image for node %s: config drive kept (%s characters)", node,
                    len(configdrive) if isinstance(configdrive, str) else "none")
    return None


# A boot thread of FakeIPA sleeps, posts inspection data, then retries its lookup for up to 300 s
# (fake_agent.py boot(), ironic_api_client.py lookup_node()); powering the system off only takes it
# out of the heartbeat queue. A lookup that outlives its boot (after inspection, the node leaves
# "inspect wait" and the lookup is refused until the next ramdisk phase) then succeeds in that
# next phase with the token already handed out ('******'), replaces the live agent, and Ironic's
# next command is refused (401) and fails the step. So: each power-off ends the boots before it.
_generation = collections.Counter()
_remove_from_heartbeater = fake_ipa_main.remove_from_heartbeater
_agent_init = FakeIronicPythonAgent.__init__
_process_lookup_data = FakeIronicPythonAgent.process_lookup_data


class StaleBoot(Exception):
    pass


def _remove_and_forget(uuid):
    _generation[uuid] += 1
    _remove_from_heartbeater(uuid)


def _init(self, system, *args, **kwargs):
    self.slime_generation = _generation[system["uuid"]]
    _agent_init(self, system, *args, **kwargs)


# With virtual media Ironic generates the agent token itself and puts it on the boot ISO's kernel
# command line (ipa-agent-token=...); the lookup then answers '******' and FakeIPA, which reads no
# command line, has no token: every heartbeat is refused ("without an agent token"). The real agent
# reads it from /proc/cmdline; here it is read from the ISO the fake system has inserted (sushy-tools
# keeps a local copy and names it in the system's boot_image; the boot configuration files lie
# uncompressed in the ISO and in its EFI image).
_ISO_TOKEN = re.compile(rb"ipa-agent-token=([A-Za-z0-9_-]+)")


def _token_from_boot_iso(system):
    media = (system.get("boot_image") or {}).get("Cd") or [None]
    location = media[0]
    if not location:
        return None
    if location.startswith(("http://", "https://")):
        data = requests.get(location, timeout=30, verify=False).content
    else:
        with open(location, "rb") as f:
            data = f.read()
    found = set(_ISO_TOKEN.findall(data))
    return found.pop().decode() if len(found) == 1 else None


def _process(self, content):
    if self.slime_generation != _generation[self.system["uuid"]]:
        app.logger.info("lookup of %s from a boot before its last power-off: ignored", self.system["name"])
        raise StaleBoot(self.system["name"])
    config = content.get("config") or {}
    if config.get("agent_token") == "******" and not self.agent_token:
        token = _token_from_boot_iso(self.system)
        if token:
            app.logger.info("agent token of %s read from its virtual media", self.system["name"])
            config["agent_token"] = token
    return _process_lookup_data(self, content)


fake_ipa_main.remove_from_heartbeater = _remove_and_forget
FakeIronicPythonAgent.__init__ = _init
FakeIronicPythonAgent.process_lookup_data = _process

_TOKEN = re.compile(r"""(agent_token['"]?\s*[:=]\s*['"]?)[^'"&\s,}]+""")


class _RedactToken(logging.Filter):
    """Keep Ironic's agent token out of the log (werkzeug's request lines, the lookup result)."""

    def filter(self, record):
        record.msg = _TOKEN.sub(r"\1***", str(record.msg))
        if record.args:
            record.args = tuple(_TOKEN.sub(r"\1***", str(a)) if isinstance(a, (str, dict)) else a
                                for a in record.args)
        return True


if __name__ == "__main__":
    logging.getLogger("werkzeug").addFilter(_RedactToken())
    app.logger.addFilter(_RedactToken())
    app.run = functools.partial(app.run, use_reloader=False)
    sys.exit(fake_ipa_main.main())
