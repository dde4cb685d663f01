# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""worker_user_data: the cloud-init path renders the plan the SSH path applies."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.slime.hybrid.plugins.module_utils import cloud_init, cluster_model, health, worker, worker_drift

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "cloud-init")
with open(os.path.join(FIXTURES, "key.b64")) as key_file:
    KEY = key_file.read().strip()

MODEL = {
    "name": "lab", "slurm_version": "26.05", "srun_port_range": "60001-60100",
    "controller": {"host": "slurm-controller.slurm", "aliases": ["slurm-controller-0"], "address": "10.126.0.11"},
    "nodeport": {"address": "10.127.0.50", "port": 30017},
}
REPOSITORY = "deb [signed-by=/etc/apt/keyrings/slime-hybrid-slurm.asc] https://repo.example.org/slurm bookworm main"
# What roles/slurm_node/templates/cloud-init.yml.j2 rendered for these models and nodes with the
# fixture's key (template-CASE.cloud-config, captured before worker.cloud_config, now cloud_init.cloud_config, replaced that
# template): the Python rendering gives cloud-init the same data, plus one command the template
# lacked, the SSH path's check of the packaged slurmd before the packages are installed.
CASES = {
    "nat": ({}, {}),
    "routed": ({"network_mode": "routed", "pod_routes": [{"cidr": "10.126.0.0/24", "via": "10.127.0.50"}]}, {}),
    "nofw": ({"worker": {"manage_firewall": False}}, {}),
    "apt": ({"worker": {"apt_repository": REPOSITORY, "apt_key_url": "https://repo.example.org/k.asc",
                        "package_version": "26.05.5-1"}},
            {"worker": {"persist_firewall": False, "uid": 500}, "features": ["baremetal", "gpu"], "conf_extra": {"Weight": 10}}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_user_data_is_what_the_template_rendered(filters, case):
    model_changes, node = CASES[case]
    name = "bm-" + case
    text = filters["worker_user_data"]([dict(node, name=name)], dict(MODEL, **model_changes), KEY)[name]
    assert text.startswith("#cloud-config\n")
    data = yaml.safe_load(text)
    plan = worker.plan(cluster_model.normalize(dict(MODEL, **model_changes)), dict({"features": ["baremetal"], "conf_extra": {}}, **dict(node, name=name)))
    if plan["firewall"]:  # worker_drift.conflicts(): an active firewalld ends the script before anything changes
        assert data["runcmd"].pop(0).startswith("if systemctl is-active --quiet firewalld; then echo 'slime.hybrid: ")
    check = data["runcmd"].index(plan["slurmd_install_check"] + " || exit 1")
    assert data["runcmd"][check + 1][-len(plan["packages"]):] == plan["packages"]  # right before the Slurm packages
    del data["runcmd"][check]
    with open(os.path.join(FIXTURES, "template-%s.cloud-config" % case)) as fixture:
        rendered = yaml.safe_load(fixture)
    # The /etc/hosts edit has since become the plan's: it removes every line for any of the controller's
    # names and ours (the template's, those for its first name only), then adds the line, marked as ours.
    assert data["runcmd"][0] == ["sh", "-c", plan["hosts"]["shell"]]
    (line,) = [entry["line"] for entry in plan["hosts"]["entries"]]
    assert "echo '%s' >>/etc/hosts" % line.replace(" # slime.hybrid", "") in rendered["runcmd"][0][2]
    data["runcmd"][0] = rendered["runcmd"][0]
    # The health check program came after the template: its files and directory are the plan's.
    health_files = [entry for entry in data["write_files"] if entry["path"].startswith(health.DIRECTORY + "/")]
    assert health_files == [{"path": part["path"], "permissions": part["mode"], "content": part["content"]}
                            for part in plan["health"]["files"]]
    data["write_files"] = [entry for entry in data["write_files"] if entry not in health_files]
    data["bootcmd"][2].remove(health.DIRECTORY)
    if plan["firewall"]:
        # The rules file has since become the one both paths apply: the template's, less its two jumps into
        # the chains, which follow its restore as commands of their own (each added unless it is there).
        (ours,) = [entry for entry in data["write_files"] if entry["path"] == worker.RULES_PATH]
        (theirs,) = [entry for entry in rendered["write_files"] if entry["path"] == worker.RULES_PATH]
        jumps = [line for line in theirs["content"].splitlines() if line.startswith(("-A OUTPUT ", "-I INPUT 1 "))]
        # And the inbound rules, which accepted any source, now send a new connection to the sources chain, which
        # accepts the model's sources (the model's own test says which) and refuses any other.
        sources = [line for line in ours["content"].splitlines() if worker.SOURCES_CHAIN + " " in line and "-j " + worker.SOURCES_CHAIN not in line]
        assert sources[0] == ":SLIME-HYBRID-SRC - [0:0]" and sources[-1].endswith("-j REJECT --reject-with tcp-reset")
        assert [line.replace("-j " + worker.SOURCES_CHAIN, "-j ACCEPT") for line in ours["content"].splitlines() if line not in sources] == [
            line for line in theirs["content"].splitlines() if line not in jumps]
        restore = data["runcmd"].index(["iptables-restore", "--noflush", worker.RULES_PATH])
        assert data["runcmd"][restore + 1:restore + 3] == [["sh", "-c", worker.jump_command(jump)] for jump in plan["firewall"]["jumps"]]
        assert [" ".join(worker_drift.jump_rule(jump)) for jump in plan["firewall"]["jumps"]] == [
            line.replace("-I INPUT 1 ", "-A INPUT ") for line in jumps]
        del data["runcmd"][restore + 1:restore + 3]
        ours["content"] = theirs["content"]
    assert data == rendered


def test_user_data_is_the_plan(filters):
    model = cluster_model.normalize(MODEL)
    node = {"name": "bm-1", "features": ["baremetal"], "conf_extra": {}}
    plan = worker.plan(model, node)
    data = yaml.safe_load(filters["worker_user_data"]([{"name": "bm-1"}], MODEL, KEY)["bm-1"])
    files = dict((entry["path"], entry) for entry in data["write_files"])
    assert files[plan["dropin"]["path"]]["content"] == plan["dropin"]["content"]
    assert files[worker.RULES_PATH]["content"] == plan["firewall"]["rules"]["content"]
    assert files[plan["key"]["path"]] == {"path": "/etc/slurm/slurm.key", "encoding": "b64", "content": KEY,
                                          "owner": "slurm:slurm", "permissions": "0600"}
    assert data["runcmd"][0] == "if systemctl is-active --quiet firewalld; then echo %s >&2; exit 1; fi" % (
        "'slime.hybrid: firewalld is active: it rejects slurmd'\"'\"'s port and the srun ports that the role'\"'\"'s iptables "
        "chains accept; open them in its zone and stop it, or set the worker setting manage_firewall to false and open "
        "them there yourself'")
    assert ["sh", "-c", plan["hosts"]["shell"]] == data["runcmd"][1]
    assert data["runcmd"][-1][2].startswith(plan["slurmd_version_check"] + " && systemctl enable slurmd")


def test_user_data_refuses_a_bad_key_or_node_without_the_key(filters):
    with pytest.raises(AnsibleFilterError, match="worker_user_data: slurm.key: the key is 5 bytes") as exc:
        filters["worker_user_data"]([{"name": "bm-1"}], MODEL, "c2hvcnQ=")
    assert "c2hvcnQ" not in str(exc.value)
    with pytest.raises(AnsibleFilterError, match=r"bm-1: worker.uid=0 must be a number from 1 to 65534") as exc:
        filters["worker_user_data"]([{"name": "bm-1", "worker": {"uid": 0}}], MODEL, KEY)
    assert KEY not in str(exc.value)


def test_metal3_hosts_input_errors(filters):
    """The metal3_hosts role's checks in one call: the hosts, the model (the intent before the cluster is
    read, or to release), the namespace, slurm.key (not before the cluster is read), the names asked for."""
    inputs = {"hosts": [], "names": [], "cluster": MODEL, "namespace": "metal3", "slurm_key_b64": KEY, "slurm_key_src": "",
              "intent_only": False}
    assert filters["metal3_hosts_input_errors"](inputs) == []
    bad = dict(inputs, hosts=[{"name": "node-1"}], names=["node-1", "node-9"], cluster=dict(MODEL, network_mode="mesh"),
               namespace="Metal3_NS", slurm_key_b64="c2hvcnQ=")
    errors = filters["metal3_hosts_input_errors"](bad)
    assert errors[-4:] == [
        "network_mode='mesh' is not supported; allowed: nat, routed, hostnetwork",
        "metal3_hosts_namespace='Metal3_NS' is not a valid Kubernetes name (lowercase letters, digits and '-', starting and "
        "ending with a letter or digit, at most 63)",
        "metal3_hosts_slurm_key_b64: the key is 5 bytes; at least 32 are required",
        "metal3_hosts_names: node-9 not in metal3_hosts_list"]
    assert errors[0].startswith("host node-1") and "c2hvcnQ" not in str(errors)
    # before the cluster is read: no key needed yet
    assert filters["metal3_hosts_input_errors"](dict(inputs, slurm_key_b64="", intent_only=True)) == []
    assert filters["metal3_hosts_input_errors"](dict(inputs, slurm_key_b64="")) == [
        "no slurm.key given: set slime_slurm_key_src or slime_slurm_key_b64 (or metal3_hosts_slurm_key_src / metal3_hosts_slurm_key_b64)"]


def test_user_data_from_the_values_ansible_hands_over(filters):
    # templated variables arrive as Ansible's own str/dict/list subclasses (unsafe values)
    from ansible.utils.unsafe_proxy import wrap_var
    plain = filters["worker_user_data"]([{"name": "bm-1"}], MODEL, KEY)
    assert filters["worker_user_data"](wrap_var([{"name": "bm-1"}]), wrap_var(MODEL), wrap_var(KEY)) == plain
    assert "\n- [apt-get, update]\n" in plain["bm-1"] and "\n  content: |\n" in plain["bm-1"]


def test_user_data_errors_never_quote_the_data(filters, monkeypatch):
    monkeypatch.setattr(cloud_init, "cloud_config", lambda plan, key: {"write_files": [{"content": key, "bad": object()}]})
    with pytest.raises(AnsibleFilterError, match=r"^worker_user_data: bm-1: cannot write the user-data \(RepresenterError\)$"):
        filters["worker_user_data"]([{"name": "bm-1"}], MODEL, KEY)
