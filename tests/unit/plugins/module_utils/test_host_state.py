# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_state.observe() with commands answered by output captured on a converged lab host (bm-1,
Debian forky, slurmd 26.05.5, iptables 1.8.13), and worker_drift.drift() over what it read."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import grp
import os
import pwd

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model, host_state, scontrol, worker, worker_drift
from ansible_collections.slime.hybrid.plugins.module_utils.secret_file import digest

NAT = """-P PREROUTING ACCEPT
-P INPUT ACCEPT
-P OUTPUT ACCEPT
-P POSTROUTING ACCEPT
-N SLIME-HYBRID-OUT
-A OUTPUT -p tcp -m comment --comment "slime.hybrid" -j SLIME-HYBRID-OUT
-A SLIME-HYBRID-OUT -d 10.126.0.11/32 -p tcp -m tcp --dport 6817 -m comment --comment "slime.hybrid/slurmctld 10.126.0.11:6817>10.127.0.50:30017" -j DNAT --to-destination 10.127.0.50:30017
-A SLIME-HYBRID-OUT -d 10.126.0.11/32 -p tcp -m tcp --dport 60001:60100 -m comment --comment "slime.hybrid/controller-srun 10.126.0.11:60001:60100>10.127.0.50" -j DNAT --to-destination 10.127.0.50
"""  # noqa: E501
FILTER = """-P INPUT ACCEPT
-P FORWARD ACCEPT
-P OUTPUT ACCEPT
-N SLIME-HYBRID-IN
-N SLIME-HYBRID-SRC
-A INPUT -p tcp -m comment --comment "slime.hybrid" -j SLIME-HYBRID-IN
-A SLIME-HYBRID-IN -p tcp -m tcp --dport 6818 -m conntrack --ctstate NEW -m comment --comment "slime.hybrid/in-slurmd tcp:6818" -j SLIME-HYBRID-SRC
-A SLIME-HYBRID-IN -p tcp -m tcp --dport 60001:60100 -m conntrack --ctstate NEW -m comment --comment "slime.hybrid/in-srun tcp:60001:60100" -j SLIME-HYBRID-SRC
-A SLIME-HYBRID-SRC -i lo -m comment --comment "slime.hybrid/src this host" -j ACCEPT
-A SLIME-HYBRID-SRC -s 10.126.0.11/32 -m comment --comment "slime.hybrid/src controller 10.126.0.11/32" -j ACCEPT
-A SLIME-HYBRID-SRC -s 10.127.0.50/32 -m comment --comment "slime.hybrid/src node 10.127.0.50/32" -j ACCEPT
-A SLIME-HYBRID-SRC -p tcp -m comment --comment "slime.hybrid/src none other" -j REJECT --reject-with tcp-reset
"""  # noqa: E501
ROUTES = """default via 10.127.0.1 dev eth0 proto static metric 100
10.127.0.0/24 dev eth0 proto kernel scope link src 10.127.0.61
"""
ADDRS = """1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever
2: eth0    inet 10.127.0.61/24 brd 10.127.0.255 scope global eth0\\       valid_lft forever preferred_lft forever
"""
SYSTEMCTL = "ActiveState=active\nUnitFileState=enabled\nNeedDaemonReload=no\nMainPID=%d\n" % os.getpid()
NODE = ("NodeName=bm-1 Arch=x86_64 CoresPerSocket=2  CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=0.18 AvailableFeatures=baremetal "
        "ActiveFeatures=baremetal Gres=(null) NodeAddr=10.127.0.61 NodeHostName=bm-1 Version=26.05.5 OS=Linux 6.18.44 "
        "RealMemory=24105 AllocMem=0 FreeMem=22316 Sockets=1 Boards=1 State=IDLE+DYNAMIC_NORM ThreadsPerCore=1 TmpDisk=0 "
        "Weight=1 Owner=N/A MCS_label=N/A Partitions=all\n")
DPKG = ("ii |iptables|1.8.13-1\nii |iptables-persistent|1.0.24\nii |libc6:amd64|2.43-7\nii |slurm-client|26.05.5-1\n"
        "ii |slurmd|26.05.5-1\n")
KEY = base64.b64encode(b"k" * 64).decode()
MODEL = cluster_model.normalize({
    "name": "lab", "slurm_version": "26.05",
    "controller": {"host": "slurm-controller.slurm", "aliases": ["slurm-controller-0"], "address": "10.126.0.11"},
    "nodeport": {"address": "10.127.0.50", "port": 30017}, "srun_port_range": "60001-60100",
})
SETTINGS = {"name": "bm-1", "features": ["baremetal"], "conf_extra": {}}


def with_worker(**settings):
    """The node with its own overrides of the model's worker settings."""
    return dict(SETTINGS, worker=settings)


def answers(override=None):
    table = {
        ("dpkg-query",): (0, DPKG, ""), ("iptables", "nat"): (0, NAT, ""), ("iptables", "filter"): (0, FILTER, ""),
        ("ip", "route"): (0, ROUTES, ""), ("ip", "addr"): (0, ADDRS, ""), ("systemctl",): (0, SYSTEMCTL, ""), ("slurmd",): (0, "slurm-wlm 26.05.5\n", ""),
        ("scontrol",): (0, NODE, ""),
    }
    table.update(override or {})

    def run(argv):
        key = (argv[0], argv[3]) if argv[0] == "iptables" else (argv[0], argv[-2]) if argv[0] == "ip" else (argv[0],)
        if table[key] is OSError:
            raise OSError(2, "No such file or directory: %s" % argv[0])
        return table[key]
    return run


def converged_files(plan):
    """What file_state() reads on a converged host (owners and modes as the role sets them)."""
    def f(content=None, owner="root", mode="0644", sha256=None):
        return {"exists": True, "kind": "file", "mode": mode, "owner": owner, "group": owner, "mtime": 100,
                "sha256": sha256 or (digest(content.encode()) if content is not None else "x")}
    files = {path: {"exists": True, "kind": "directory", "mode": "0755", "owner": "root", "group": "root", "mtime": 1}
             for path in plan["directories"]}
    files[plan["key"]["path"]] = f(owner="slurm", mode="0600", sha256=digest(base64.b64decode(KEY)))
    files[plan["dropin"]["path"]] = f(plan["dropin"]["content"])
    files[worker_drift.ROUTES_UNIT] = {"exists": False}
    files[worker_drift.HOSTS_FILE] = f("")
    for part in plan["health"]["files"]:
        files[part["path"]] = f(part["content"], mode=part["mode"])
    return files


def observed(plan, **override):
    run = answers(override.pop("run", {}))
    out = {
        "files": converged_files(plan),
        "account": {"user": {"uid": 401, "gid": 401, "home": "/var/lib/slurm", "shell": "/usr/sbin/nologin"},
                    "group": {"gid": 401}},
        "packages": host_state.dpkg(run),
        "hosts_lines": ["127.0.0.1 localhost", plan["hosts"]["entries"][0]["line"]],
        "routes": host_state.command_output(run, ["ip", "-4", "route", "show"]),
        "addresses": host_state.addresses(host_state.command_output(run, ["ip", "-4", "-o", "addr", "show"])),
        "units": {"slurmd": host_state.systemd_unit(run, "slurmd")},
        "slurmd_version": (host_state.command_output(run, ["slurmd", "-V"]) or "").strip(),
        "iptables": {table: host_state.command_output(run, ["iptables", "-w", "-t", table, "-S"]) for table in ("nat", "filter")},
        "node": scontrol.parse_nodes(host_state.command_output(run, ["scontrol", "show", "node", "--oneliner", "bm-1"]) or "").get("bm-1"),
    }
    out.update(override)
    return out


def drift(plan, seen, features=("baremetal",)):
    return worker_drift.drift(plan, seen, "bm-1", list(features), digest(base64.b64decode(KEY)))


@pytest.fixture
def plan():
    return worker.plan(MODEL, SETTINGS)


def test_a_converged_host_has_no_drift(plan):
    seen = observed(plan)
    assert seen["packages"]["packages"]["libc6"] == {"status": "ii", "version": "2.43-7"}
    assert seen["units"]["slurmd"]["started"] <= seen["units"]["slurmd"]["started"] + 1
    assert drift(plan, seen) == {}


def test_the_real_iptables_listing_matches_the_plan_and_each_loss_is_named(plan):
    nat = NAT.replace('-A OUTPUT -p tcp -m comment --comment "slime.hybrid" -j SLIME-HYBRID-OUT\n', "")
    out = drift(plan, observed(plan, run={("iptables", "nat"): (0, nat, "")}))
    assert out == {"firewall": ["rule missing: -A OUTPUT -p tcp -m comment --comment slime.hybrid -j SLIME-HYBRID-OUT"]}
    stale = FILTER + '-A SLIME-HYBRID-IN -p tcp -m tcp --dport 7000 -m comment --comment "slime.hybrid/old" -j ACCEPT\n'
    out = drift(plan, observed(plan, run={("iptables", "filter"): (0, stale, "")}))
    assert out["firewall"] == ["rule not in the plan: -A SLIME-HYBRID-IN -p tcp -m tcp --dport 7000 -m comment "
                               "--comment slime.hybrid/old -j ACCEPT"]
    flushed = "-P INPUT ACCEPT\n"
    out = drift(plan, observed(plan, run={("iptables", "filter"): (0, flushed, "")}))
    assert out["firewall"][:2] == ["chain filter/SLIME-HYBRID-IN is missing", "rule missing: -A SLIME-HYBRID-IN -p tcp -m tcp --dport "
                                   "6818 -m conntrack --ctstate NEW -m comment --comment slime.hybrid/in-slurmd tcp:6818 -j SLIME-HYBRID-SRC"]
    assert out["firewall"][3:5] == ["chain filter/SLIME-HYBRID-SRC is missing", "rule missing: -A SLIME-HYBRID-SRC -i lo -m comment "
                                    "--comment slime.hybrid/src this host -j ACCEPT"]
    assert len(out["firewall"]) == 9  # both chains and their 2 + 5 rules, and the jump
    # a source the model does not have, added by hand, is named; one of the model's taken away too
    opened = FILTER.replace("-A SLIME-HYBRID-SRC -s 10.127.0.50/32", "-A SLIME-HYBRID-SRC -s 0.0.0.0/0")
    out = drift(plan, observed(plan, run={("iptables", "filter"): (0, opened, "")}))
    assert out["firewall"] == ["rule missing: -A SLIME-HYBRID-SRC -s 10.127.0.50/32 -m comment --comment slime.hybrid/src node "
                               "10.127.0.50/32 -j ACCEPT",
                               "rule not in the plan: -A SLIME-HYBRID-SRC -s 0.0.0.0/0 -m comment --comment slime.hybrid/src node "
                               "10.127.0.50/32 -j ACCEPT"]
    out = drift(plan, observed(plan, run={("iptables", "nat"): (1, "", "iptables: not found")}))
    assert out["firewall"] == ["iptables -t nat -S failed"]
    moved = NAT.replace("30017", "30018")  # the rules of a NodePort the Service no longer has
    out = drift(plan, observed(plan, run={("iptables", "nat"): (0, moved, "")}))
    assert [line.split(" -d ")[0] + " " + line.split()[-1] for line in out["firewall"]] == [
        "rule missing: -A SLIME-HYBRID-OUT 10.127.0.50:30017", "rule not in the plan: -A SLIME-HYBRID-OUT 10.127.0.50:30018"]
    lines = FILTER.splitlines()
    swapped = "\n".join(lines[:6] + [lines[7], lines[6]] + lines[8:]) + "\n"  # DNAT and ACCEPT take the first rule that matches
    out = drift(plan, observed(plan, run={("iptables", "filter"): (0, swapped, "")}))
    assert out["firewall"] == ["chain filter/SLIME-HYBRID-IN holds the plan's rules in another order"]
    refused_first = "\n".join(lines[:8] + [lines[-1]] + lines[8:-1]) + "\n"  # the refusal before the sources it refuses
    out = drift(plan, observed(plan, run={("iptables", "filter"): (0, refused_first, "")}))
    assert out["firewall"] == ["chain filter/SLIME-HYBRID-SRC holds the plan's rules in another order"]


def test_without_the_firewall_iptables_is_not_compared(plan):
    quiet = worker.plan(MODEL, with_worker(manage_firewall=False))
    assert worker_drift.observe_targets(quiet, "bm-1")["iptables_tables"] == []
    assert drift(quiet, observed(quiet, run={("iptables", "nat"): (0, "", "")})) == {}


def test_each_part_names_what_differs(plan):
    files = converged_files(plan)
    files[plan["key"]["path"]] = dict(files[plan["key"]["path"]], sha256="other", mode="0640")
    files[plan["dropin"]["path"]] = {"exists": False}
    files["/etc/slurm"] = dict(files["/etc/slurm"], owner="slurm")
    seen = observed(plan, files=files, hosts_lines=["10.0.0.9 slurm-controller.slurm", "# " + plan["hosts"]["entries"][0]["line"]],
                    account={"user": {"uid": 64030, "gid": 64030, "home": "/nonexistent", "shell": "/bin/sh"}, "group": None})
    out = drift(plan, seen)
    assert out["key"] == ["/etc/slurm/slurm.key has other content", "/etc/slurm/slurm.key is slurm:slurm 0640, not slurm:slurm 0600"]
    assert out["dropin"] == ["%s is missing" % worker_drift.DROPIN]
    assert out["directories"] == ["/etc/slurm is not a root:root 0755 directory"]
    assert out["hosts"] == ["/etc/hosts has '10.0.0.9 slurm-controller.slurm', which maps a controller's name otherwise "
                            "or is no longer wanted",
                            "/etc/hosts does not map slurm-controller.slurm as '%s'" % plan["hosts"]["entries"][0]["line"]]
    assert out["user"][0] == "group slurm is None, not gid 401" and "user slurm is {'uid': 64030" in out["user"][1]
    assert set(out) == {"key", "dropin", "directories", "hosts", "user"}


def test_hosts_entry_every_line_for_the_names_counts(plan):
    """The C library takes a name's first line in /etc/hosts: any other line for one of the controller's
    names is drift (the SSH path removes it), wherever it stands."""
    line = plan["hosts"]["entries"][0]["line"]
    assert drift(plan, observed(plan, hosts_lines=["10.0.0.9 other.example.org", line])) == {}
    assert "hosts" in drift(plan, observed(plan, hosts_lines=["10.0.0.9 slurm-controller.slurm", line]))
    assert "hosts" in drift(plan, observed(plan, hosts_lines=[line, "10.0.0.9 x slurm-controller-0"]))
    assert "hosts" in drift(plan, observed(plan, hosts_lines=[line, "10.0.0.9 gone-backup # slime.hybrid"]))


@pytest.mark.parametrize("dpkg_out, part, reason", [
    ("iU |slurmd|26.05.5-1\nii |slurm-client|26.05.5-1\n", "dpkg", "dpkg left slurmd unfinished"),
    ("ii |slurm-client|26.05.5-1\n", "packages", "package slurmd is not installed"),
    ("rc |slurmd|26.05.5-1\nii |slurm-client|26.05.5-1\n", "packages", "package slurmd is not installed"),
])
def test_packages_and_dpkg(plan, dpkg_out, part, reason):
    out = drift(plan, observed(plan, run={("dpkg-query",): (0, dpkg_out + "ii |iptables|1\nii |iptables-persistent|1\n", "")}))
    assert reason in out[part]


def test_a_pinned_version_and_the_compatibility_window(plan):
    pinned = worker.plan(MODEL, with_worker(package_version="26.05.5-*"))
    assert drift(pinned, observed(pinned)) == {}
    pinned = worker.plan(MODEL, with_worker(package_version="26.05.4-1"))
    assert drift(pinned, observed(pinned))["packages"] == ["package slurmd=26.05.4-1 is not installed",
                                                           "package slurm-client=26.05.4-1 is not installed"]
    older = worker.plan(cluster_model.normalize(dict(MODEL, slurm_version="25.11")), SETTINGS)
    assert drift(older, observed(older))["packages"] == [
        "slurmd -V: slurmd slurm-wlm 26.05.5 is newer than slurmctld 25.11; slurmd must not be newer than the controller"]
    assert "packages" in drift(plan, observed(plan, run={("slurmd",): OSError}))


def test_a_registration_translated_on_its_way_owes_a_restart(plan):
    # externalTrafficPolicy Cluster: kube-proxy SNATs the registration to the node's cni0 address
    assert host_state.addresses(ADDRS) == ["10.127.0.61", "127.0.0.1"]
    assert "restart" not in drift(plan, observed(plan))
    seen = observed(plan, run={("scontrol",): (0, NODE.replace("NodeAddr=10.127.0.61", "NodeAddr=10.244.1.1"), "")})
    assert drift(plan, seen)["restart"] == [
        "slurmctld records NodeAddr 10.244.1.1, not an address of this host (10.127.0.61, 127.0.0.1): the "
        "registration was translated on its way"]


def test_service_drift(plan):
    stopped = observed(plan, run={("systemctl",): (0, "ActiveState=inactive\nUnitFileState=disabled\nMainPID=0\n", "")})
    assert drift(plan, stopped)["service"] == ["slurmd is inactive/disabled"]
    reload = observed(plan, run={("systemctl",): (0, SYSTEMCTL.replace("NeedDaemonReload=no", "NeedDaemonReload=yes"), "")})
    assert drift(plan, reload)["restart"] == ["systemd has not loaded slurmd's unit as it is on disk"]
    seen = observed(plan)
    seen["files"][worker_drift.DROPIN]["mtime"] = seen["units"]["slurmd"]["started"] + 1
    assert drift(plan, seen)["restart"] == ["slurmd started before its key or drop-in last changed"]
    seen["files"][worker_drift.DROPIN]["mtime"] = seen["units"]["slurmd"]["started"]
    assert drift(plan, seen) == {}


def test_node_record(plan):
    assert drift(plan, observed(plan), features=["baremetal", "gpu"])["node"] == ["bm-1 has features baremetal"]
    down = NODE.replace("State=IDLE+DYNAMIC_NORM", "State=DOWN+DYNAMIC_NORM+NOT_RESPONDING")
    assert drift(plan, observed(plan, run={("scontrol",): (0, down, "")}))["node"] == ["bm-1 is DOWN+DYNAMIC_NORM+NOT_RESPONDING"]
    gone = observed(plan, run={("scontrol",): (1, "", "Node bm-1 not found")})
    assert drift(plan, gone)["node"] == ["slurmctld does not list bm-1 (or scontrol failed)"]


def test_routed_mode_routes_and_unit():
    model = cluster_model.normalize(dict(MODEL, network_mode="routed", pod_routes=[{"cidr": "10.126.0.0/24", "via": "10.127.0.50"}]))
    plan = worker.plan(model, SETTINGS)
    assert worker_drift.observe_targets(plan, "bm-1")["units"] == ["slurmd", "slime-hybrid-routes.service", "firewalld"]
    files = converged_files(plan)
    files[worker_drift.ROUTES_UNIT] = {"exists": True, "kind": "file", "mode": "0644", "owner": "root", "group": "root",
                                       "mtime": 1, "sha256": digest(plan["routes_unit"]["content"].encode())}
    units = {"slurmd": {"ActiveState": "active", "UnitFileState": "enabled", "started": None},
             "slime-hybrid-routes.service": {"ActiveState": "active", "UnitFileState": "enabled"}}
    routed = ROUTES + "10.126.0.0/24 via 10.127.0.50 dev eth0\n"
    nat = "\n".join(NAT.splitlines()[:6]) + "\n"  # routed: the chain and its jump, no DNAT
    # and the controller pod's address is one of the pod network's, which its one rule accepts
    pods = FILTER.replace("-s 10.126.0.11/32 -m comment --comment \"slime.hybrid/src controller 10.126.0.11/32\"",
                          "-s 10.126.0.0/24 -m comment --comment \"slime.hybrid/src pods 10.126.0.0/24\"")
    seen = observed(plan, files=files, units=units, routes=routed, run={("iptables", "nat"): (0, nat, ""), ("iptables", "filter"): (0, pods, "")})
    assert drift(plan, seen) == {}
    seen["routes"] = ROUTES
    assert drift(plan, seen)["routes"] == ["no route to 10.126.0.0/24 via 10.127.0.50"]
    # back to nat: the unit left behind is drift
    nat = worker.plan(MODEL, SETTINGS)
    assert drift(nat, observed(nat, files=dict(converged_files(nat), **{worker_drift.ROUTES_UNIT: files[worker_drift.ROUTES_UNIT]}))) == {
        "routes": ["%s is left from network_mode routed" % worker_drift.ROUTES_UNIT]}


def test_file_state_and_account_read_the_real_files(tmp_path):
    path = tmp_path / "f"
    path.write_text("x")
    os.chmod(str(path), 0o640)
    state = host_state.file_state(str(path))
    me, group = pwd.getpwuid(os.getuid())[0], grp.getgrgid(os.getgid())[0]
    assert state == {"exists": True, "kind": "file", "mode": "0640", "owner": me, "group": group,
                     "mtime": int(os.stat(str(path)).st_mtime), "sha256": digest(b"x")}
    assert host_state.file_state(str(tmp_path))["kind"] == "directory"
    assert host_state.file_state(str(tmp_path / "none")) == {"exists": False}
    assert host_state.account(me, group)["user"]["uid"] == os.getuid()
    assert host_state.account("no-such-user-x", "no-such-group-x") == {"user": None, "group": None}


def test_observe_reads_every_target(plan, tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n" + plan["hosts"]["entries"][0]["line"] + "\n")
    targets = dict(worker_drift.observe_targets(plan, "bm-1"), hosts_file=str(hosts))
    seen = host_state.observe(targets, answers())
    assert seen["hosts_lines"][-1] == plan["hosts"]["entries"][0]["line"]
    assert seen["node"] == scontrol.parse_nodes(NODE)["bm-1"] and seen["iptables"]["nat"] == NAT and seen["slurmd_version"] == "slurm-wlm 26.05.5"
    assert set(seen["files"]) == set(targets["files"]) and seen["units"]["slurmd"]["ActiveState"] == "active"
    assert seen["routes"] == ""  # nat mode: the routing table is not read


def test_observe_reads_every_node_in_the_same_scontrol_run(plan, tmp_path):
    asked = []

    def run(argv):
        asked.append(argv)
        return answers()(argv)

    seen = host_state.observe(worker_drift.observe_targets(plan, "bm-1"), run, all_nodes=True)
    assert [argv for argv in asked if argv[0] == "scontrol"] == [["scontrol", "show", "node", "--oneliner"]]
    assert seen["nodes"] == scontrol.parse_nodes(NODE) and seen["node"] == seen["nodes"]["bm-1"]
    assert "nodes" not in host_state.observe(worker_drift.observe_targets(plan, "bm-1"), answers())


def test_package_source_and_its_key():
    plan = worker.plan(MODEL, with_worker(apt_repository="deb http://repo.example/slurm forky main",
                                          apt_key_url="https://repo.example/key.asc"))
    assert set(worker_drift.observe_targets(plan, "bm-1")["files"]) >= {worker.APT_SOURCE, worker.APT_KEY}
    files = converged_files(plan)
    files[worker.APT_SOURCE] = {"exists": False}
    files[worker.APT_KEY] = {"exists": False}
    assert drift(plan, observed(plan, files=files))["source"] == [
        "%s is missing" % worker.APT_SOURCE, "%s is missing" % worker.APT_KEY]
    files[worker.APT_SOURCE] = {"exists": True, "kind": "file", "mode": "0644", "owner": "root", "group": "root", "mtime": 1,
                                "sha256": digest(plan["source"]["content"].encode())}
    files[worker.APT_KEY] = dict(files[worker.APT_SOURCE], sha256="any: get_url leaves a key in place")
    assert drift(plan, observed(plan, files=files)) == {}
    files[worker.APT_KEY] = dict(files[worker.APT_KEY], mode="0600")
    assert drift(plan, observed(plan, files=files))["source"] == ["%s is 0600" % worker.APT_KEY]


def test_rpm_reads_the_database_as_dpkg_does(fixture_text):
    db = host_state.rpm(answers({("rpm",): (0, fixture_text("dnf/rpm_qa.txt"), "")}))
    assert db == {"packages": {"slurm-slurmd": {"status": "ii", "version": "26.05.3-1.el9"},
                               "slurm": {"status": "ii", "version": "26.05.3-1.el9"}},
                  "unfinished": [], "journal": False}
    assert host_state.rpm(answers({("rpm",): (1, "", "error")}))["packages"] == {}


def test_a_dnf_host_is_read_through_rpm_and_its_packages_compared(fixture_text):
    plan = worker.plan(MODEL, with_worker(package_manager="dnf", package_version="26.05.3*", manage_firewall=False))
    targets = worker_drift.observe_targets(plan, "bm-1")
    assert targets["package_manager"] == "dnf"
    run = answers({("rpm",): (0, fixture_text("dnf/rpm_qa.txt"), ""), ("dpkg-query",): OSError})
    seen = observed(plan, packages=host_state.PACKAGE_DBS[targets["package_manager"]](run))
    assert drift(plan, seen) == {}
    newer = worker.plan(MODEL, with_worker(package_manager="dnf", package_version="26.05.5-1.el9", manage_firewall=False))
    assert drift(newer, seen)["packages"] == ["package slurm-slurmd-26.05.5-1.el9 is not installed",
                                              "package slurm-26.05.5-1.el9 is not installed"]


def test_an_active_firewalld_is_a_conflict_where_the_role_manages_iptables(plan):
    inactive = {"slurmd": {"ActiveState": "active"}, "firewalld": {"ActiveState": "inactive"}}
    assert worker_drift.conflicts(plan, observed(plan, units=inactive)) == []
    active = dict(inactive, firewalld={"ActiveState": "active"})
    assert worker_drift.conflicts(plan, observed(plan, units=active)) == [worker_drift.FIREWALLD_CONFLICT]
    unmanaged = worker.plan(MODEL, with_worker(manage_firewall=False))
    assert "firewalld" not in worker_drift.observe_targets(unmanaged, "bm-1")["units"]
    assert worker_drift.conflicts(unmanaged, observed(unmanaged, units=active)) == []


def test_the_node_exporter_part():
    """slime_cluster.metrics.node_exporter: the package and its running, enabled unit (module_utils/metrics.py)."""
    exporter_plan = worker.plan(cluster_model.normalize(dict(MODEL, metrics={"node_exporter": True})), SETTINGS)
    seen = observed(exporter_plan)
    assert drift(exporter_plan, seen)["metrics"] == ["package prometheus-node-exporter is not installed",
                                                     "prometheus-node-exporter is None/None"]
    run = answers({("dpkg-query",): (0, DPKG + "ii |prometheus-node-exporter|1.10.2-1\n", "")})
    seen = observed(exporter_plan, packages=host_state.dpkg(run),
                    units={"slurmd": host_state.systemd_unit(run, "slurmd"),
                           "prometheus-node-exporter": host_state.systemd_unit(run, "prometheus-node-exporter")})
    assert "metrics" not in drift(exporter_plan, seen)
    # its port among the rules the real iptables listing must have
    assert "rule missing" in " ".join(drift(exporter_plan, seen).get("firewall", []))
