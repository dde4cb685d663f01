# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The operations' knobs (role slime's entry points, declared in its meta/argument_specs.yml) as a user
meets them: each playbook run with a bad value stops in its checks, naming the value and what is
allowed, before any task reaches a host; a good value gets past them. The inventory's hosts listen
nowhere (127.0.0.1, port 9), so a run that got past the checks fails UNREACHABLE at its first task on a
host, and one that did not never tries to connect."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

INVENTORY = """
all:
  vars:
    ansible_host: 127.0.0.1
    ansible_port: 9
    ansible_connection: ssh
    ansible_ssh_common_args: -o ConnectTimeout=2
  children:
    slurm_baremetal:
      hosts:
        bm-1: {}
        bm-2: {}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Run playbooks/PLAYBOOK with extra vars; return (rc, output)."""
    base = tmp_path_factory.mktemp("knobs")
    collections = base / "ansible_collections" / "slime"
    collections.mkdir(parents=True)
    os.symlink(ROOT, str(collections / "hybrid"))
    inventory = base / "hosts.yml"
    inventory.write_text(INVENTORY)
    env = dict(os.environ)
    env.update(
        ANSIBLE_COLLECTIONS_PATH=os.pathsep.join([str(base)] + [p for p in [os.environ.get("ANSIBLE_COLLECTIONS_PATH")] if p]),
        ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_SSH_CONTROL_PATH_DIR=str(base / "cp"),
    )

    def play(playbook, extra):
        proc = subprocess.run(
            ["ansible-playbook", "-i", str(inventory), os.path.join(ROOT, "playbooks", playbook), "-e", json.dumps(extra)],
            capture_output=True, text=True, env=env, cwd=str(base), timeout=300, check=False,
        )
        return proc.returncode, proc.stdout + proc.stderr

    return play


# What doctor.yml needs to get to its probe with no cluster API in the inventory: the model as the site states it.
CLUSTER = {"network_mode": "nat", "nodeport": {"port": 30817, "address": "10.0.0.5"}, "srun_port_range": "60001-60100",
           "controller": {"address": "10.0.0.5"}}

KEY = "c2xpbWUtaHlicmlkIHVuaXQgdGVzdCBrZXkgb2YgMzIgYnl0ZXMh"  # 39 bytes of text, no cluster's key

REFUSED = [
    ("scale_in.yml", {}, ["missing required arguments: slime_scale_in"]),
    ("scale_in.yml", {"slime_scale_in": "bm-1"}, ["slime_scale_in=bm-1 must be a non-empty list of Slurm node names"]),
    ("scale_in.yml", {"slime_scale_in": ["bm_1!"]}, ["must be a non-empty list of Slurm node names"]),
    ("scale_in.yml", {"slime_scale_in": ["bm-1"], "slime_scale_in_timeout": "soon"},
     ["argument 'slime_scale_in_timeout' is of type", "to int"]),
    ("scale_in.yml", {"slime_scale_in": ["bm-1"], "slime_scontrol_host": "bm-typo"},
     ["slime_scontrol_host=bm-typo, which must be an inventory host"]),
    ("scale_in.yml", {"slime_scale_in": ["bm-1", "bm-2"]},
     ["slime_scontrol_host=(none), which must be an inventory host that reaches slurmctld and is not being removed"]),
    ("scale_out.yml", {"slime_scale_out": ["bm-9"]}, ["(unknown: bm-9)"]),
    ("scale_out.yml", {"slime_scale_out": ["bm-2"], "slime_scale_out_register_timeout": "later"},
     ["argument 'slime_scale_out_register_timeout' is of type"]),
    ("fix_nodeaddr.yml", {"slime_nodeaddr_source": "dns"},
     ["value of slime_nodeaddr_source must be one of: kubernetes, inventory, got: dns"]),
    ("fix_nodeaddr.yml", {"slime_nodeaddr_settle": "a while"}, ["argument 'slime_nodeaddr_settle' is of type"]),
    ("fix_nodeaddr.yml", {"slime_nodeaddr_scontrol_host": "bm-1"}, ["was renamed slime_scontrol_host"]),
    ("doctor.yml", {"slime_cluster": CLUSTER, "slime_doctor_probe": "most"},
     ["value of slime_doctor_probe must be one of: all, spread, got: most"]),
    ("doctor.yml", {"slime_cluster": CLUSTER, "slime_doctor_timeout": "3s"}, ["argument 'slime_doctor_timeout' is of type"]),
    ("upgrade.yml", {"slime_upgrade_batch": 0}, ["slime_upgrade_batch=0 must be a number of hosts"]),
    # the knobs of stages site.yml runs after the Slinky and bare-metal ones, refused in its first plays
    ("site.yml", {"slime_nodeaddr_settle": "a while", "slime_stale_workers_timeout": "long"},
     ["argument 'slime_nodeaddr_settle' is of type", "argument 'slime_stale_workers_timeout' is of type",
      "PLAY [Refuse the run with every problem found]"]),
    ("upgrade.yml", {"slime_upgrade_batch": "150%"}, ["slime_upgrade_batch=150% must be a number of hosts"]),
]


@pytest.mark.parametrize("playbook,extra,expect", REFUSED, ids=["%s %s" % (p, json.dumps(e)) for p, e, unused in REFUSED])
def test_refused_before_any_host_is_reached(run, playbook, extra, expect):
    rc, out = run(playbook, extra)
    assert rc != 0, out
    for text in expect:
        assert text in " ".join(out.split()), out
    assert "UNREACHABLE" not in out, out


ACCEPTED = [
    ("scale_in.yml", {"slime_scale_in": ["bm-2"], "slime_scale_in_timeout": "60"}, "Drain the nodes and wait"),
    ("scale_out.yml", {"slime_scale_out": ["bm-2"]}, "Run scontrol on bm-1"),
    ("fix_nodeaddr.yml", {"slime_pod_workers": {"slinky-0": "10.0.0.1"}, "slime_cluster": {
        "network_mode": "nat", "nodeport": {"port": 30817}, "srun_port_range": "60001-60100"}}, "Set NodeAddr"),
    ("upgrade.yml", {"slime_upgrade_batch": "25%"}, "PLAY [Check the inputs of the role"),
    ("site.yml", {"slime_nodeaddr_settle": 10, "slime_stale_workers_timeout": "60", "slurm_node_slurm_key_b64": KEY,
                  "slime_cluster": dict(CLUSTER, controller={"address": "10.0.0.5", "host": "slurm-controller"},
                                        slurm_version="26.05")},
     "PLAY [Check where scontrol runs]"),
    ("doctor.yml", {"slime_cluster": CLUSTER, "slime_doctor_probe": "spread"}, "Know each host by its Slurm node name"),
]


@pytest.mark.parametrize("playbook,extra,reached", ACCEPTED, ids=["%s %s" % (p, json.dumps(e)) for p, e, unused in ACCEPTED])
def test_good_values_pass_the_checks(run, playbook, extra, reached):
    """A good value is not refused: the run goes on to the play or task named (where it fails, later,
    on hosts that listen nowhere or on inputs this test leaves out)."""
    rc, out = run(playbook, extra)
    assert rc != 0, out  # no real host
    assert reached in out, out
    assert "argument_errors" not in out and "must be a" not in out, out
