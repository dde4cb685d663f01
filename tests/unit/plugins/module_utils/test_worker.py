# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import subprocess

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import cloud_init, cluster_model, slurmd, worker

MODEL = {
    "name": "lab",
    "slurm_version": "26.05",
    "controller": {"host": "slurm-controller.slurm", "aliases": ["slurm-controller-0"], "address": "10.126.0.11"},
    "nodeport": {"address": "10.127.0.50", "port": 30017},
    "srun_port_range": "60001-60100",
}
ROUTES = [{"cidr": "10.126.0.0/24", "via": "10.127.0.50"}]
NODE = {"name": "bm-1", "features": ["baremetal", "gpu"], "conf_extra": {"Weight": 10}}


def plan(model_changes=None, **worker_overrides):
    """The plan of NODE with its own overrides of the model's worker settings."""
    model = cluster_model.normalize(dict(MODEL, **(model_changes or {})))
    return worker.plan(model, dict(NODE, worker=worker_overrides))


def test_plan_of_a_nat_worker():
    out = plan()
    assert out["user"] == {"name": "slurm", "uid": 401, "gid": 401, "home": "/var/lib/slurm", "shell": "/usr/sbin/nologin"}
    assert out["key"] == {"path": "/etc/slurm/slurm.key", "owner": "slurm", "group": "slurm", "mode": "0600"}
    assert out["directories"] == ["/etc/slurm", "/etc/systemd/system/slurmd.service.d", "/opt/slime-hybrid/health"]
    command = worker.slurmd_command(cluster_model.normalize(MODEL), NODE)
    assert out["worker"] == dict(cluster_model.WORKER_DEFAULTS, packages=["slurmd", "slurm-client"],
                                 firewall_packages=["iptables", "iptables-persistent"], rules_file="/etc/iptables/rules.v4")
    assert command == ('/usr/sbin/slurmd --systemd -Z --conf-server 10.127.0.50:30017 -N bm-1 '
                       '--conf "Feature=baremetal,gpu Weight=10"')
    assert "ExecStart=\nExecStart=" + command + "\n" in out["dropin"]["content"]
    assert out["dropin"]["path"] == "/etc/systemd/system/slurmd.service.d/10-slime-hybrid.conf"
    assert out["packages"] == ["slurmd", "slurm-client"]
    assert worker.accepted_releases("26.05") == ["26.05", "25.11", "25.05", "24.11"]
    assert "26.05.*|25.11.*|25.05.*|24.11.*)" in out["slurmd_version_check"]
    assert [e["line"] for e in out["hosts"]["entries"]] == ["10.126.0.11 slurm-controller.slurm slurm-controller-0 # slime.hybrid"]
    assert out["routes"] == [] and out["routes_unit"] is None
    assert out["source"] is None and out["source_key"] is None
    assert out["firewall"]["rules"]["path"] == "/etc/iptables/slime-hybrid.rules" and out["firewall"]["rules"]["mode"] == "0600"
    assert [(jump["table"], jump["chain"], jump["rule_num"], jump["jump"]) for jump in out["firewall"]["jumps"]] == [
        ("nat", "OUTPUT", None, "SLIME-HYBRID-OUT"), ("filter", "INPUT", 1, "SLIME-HYBRID-IN")]


def test_slurmd_is_told_where_slurm_key_is_when_it_is_not_in_etc_slurm():
    # Slurm's auth/slurm looks in the directory of slurm.conf, /etc/slurm for a configless slurmd, unless
    # SLURM_SACK_KEY names the file; the default place needs no line (the drop-in of every converged host stays).
    assert "SLURM_SACK_KEY" not in plan()["dropin"]["content"]
    moved = plan(key_path="/etc/slurm-keys/slurm.key")
    assert moved["key"]["path"] == "/etc/slurm-keys/slurm.key" and "/etc/slurm-keys" in moved["directories"]
    assert "[Service]\nEnvironment=SLURM_SACK_KEY=/etc/slurm-keys/slurm.key\nExecStart=\n" in moved["dropin"]["content"]


def test_the_rules_file_holds_the_chains_and_their_rules_only():
    restore = plan()["firewall"]["rules"]["content"].splitlines()
    assert restore == [
        "*nat",
        ":SLIME-HYBRID-OUT - [0:0]",
        '-A SLIME-HYBRID-OUT -d 10.126.0.11/32 -p tcp -m tcp --dport 6817 -m comment --comment '
        '"slime.hybrid/slurmctld 10.126.0.11:6817>10.127.0.50:30017" -j DNAT --to-destination 10.127.0.50:30017',
        '-A SLIME-HYBRID-OUT -d 10.126.0.11/32 -p tcp -m tcp --dport 60001:60100 -m comment --comment '
        '"slime.hybrid/controller-srun 10.126.0.11:60001:60100>10.127.0.50" -j DNAT --to-destination 10.127.0.50',
        "COMMIT",
        "*filter",
        ":SLIME-HYBRID-IN - [0:0]",
        ":SLIME-HYBRID-SRC - [0:0]",
        # a new connection to slurmd's port or the srun range: accepted from the model's sources only
        '-A SLIME-HYBRID-IN -p tcp -m tcp --dport 6818 -m conntrack --ctstate NEW -m comment --comment '
        '"slime.hybrid/in-slurmd tcp:6818" -j SLIME-HYBRID-SRC',
        '-A SLIME-HYBRID-IN -p tcp -m tcp --dport 60001:60100 -m conntrack --ctstate NEW -m comment --comment '
        '"slime.hybrid/in-srun tcp:60001:60100" -j SLIME-HYBRID-SRC',
        '-A SLIME-HYBRID-SRC -i lo -m comment --comment "slime.hybrid/src this host" -j ACCEPT',
        '-A SLIME-HYBRID-SRC -s 10.126.0.11/32 -m comment --comment "slime.hybrid/src controller 10.126.0.11/32" -j ACCEPT',
        '-A SLIME-HYBRID-SRC -s 10.127.0.50/32 -m comment --comment "slime.hybrid/src node 10.127.0.50/32" -j ACCEPT',
        '-A SLIME-HYBRID-SRC -p tcp -m comment --comment "slime.hybrid/src none other" -j REJECT --reject-with tcp-reset',
        "COMMIT",
    ]


def test_each_jump_is_added_unless_it_is_there():
    nat, filter_ = plan()["firewall"]["jumps"]
    assert worker.jump_command(nat) == (
        "iptables -w -t nat -C OUTPUT -p tcp -m comment --comment slime.hybrid -j SLIME-HYBRID-OUT 2>/dev/null"
        " || iptables -w -t nat -A OUTPUT -p tcp -m comment --comment slime.hybrid -j SLIME-HYBRID-OUT")
    assert worker.jump_command(filter_) == (
        "iptables -w -t filter -C INPUT -p tcp -m comment --comment slime.hybrid -j SLIME-HYBRID-IN 2>/dev/null"
        " || iptables -w -t filter -I INPUT 1 -p tcp -m comment --comment slime.hybrid -j SLIME-HYBRID-IN")


def test_iptables_restore_takes_a_pod_cidr_as_it_is():
    restore = plan({"pod_routes": ROUTES})["firewall"]["rules"]["content"].splitlines()
    assert restore[4] == ('-A SLIME-HYBRID-OUT -d 10.126.0.0/24 -p tcp -m tcp --dport 6818 -m comment --comment '
                          '"slime.hybrid/pod-slurmd 10.126.0.0/24:6818>10.127.0.50" -j DNAT --to-destination 10.127.0.50')
    assert len([line for line in restore if "pod-slurmd" in line]) == len(ROUTES)


def test_routed_worker_gets_the_routes_unit_and_no_dnat():
    out = plan({"network_mode": "routed", "pod_routes": ROUTES})
    assert out["routes"] == ROUTES
    unit = out["routes_unit"]["content"]
    assert "ExecStart=/usr/sbin/ip route replace 10.126.0.0/24 via 10.127.0.50\n" in unit
    assert "ExecStop=-/usr/sbin/ip route del 10.126.0.0/24 via 10.127.0.50\n" in unit
    assert "DNAT" not in out["firewall"]["rules"]["content"]
    assert "--conf-server 10.126.0.11:6817 " in out["dropin"]["content"]


def test_without_the_firewall_the_hosts_entry_and_routes_stay():
    out = plan({"network_mode": "routed", "pod_routes": ROUTES}, manage_firewall=False)
    assert out["firewall"] is None
    assert out["hosts"]["entries"][0]["line"].startswith("10.126.0.11 ")
    assert out["routes_unit"] is not None


def test_package_version_repository_and_key():
    out = plan(package_version="24.11.5-1", apt_repository="deb [signed-by=/etc/apt/keyrings/slime-hybrid-slurm.asc] "
               "https://repo.example.org/slurm trixie main", apt_key_url="https://repo.example.org/key.asc")
    assert out["packages"] == ["slurmd=24.11.5-1", "slurm-client=24.11.5-1"]
    assert out["source"] == {"path": "/etc/apt/sources.list.d/slime-hybrid-slurm.list", "mode": "0644",
                             "content": "deb [signed-by=/etc/apt/keyrings/slime-hybrid-slurm.asc] "
                                        "https://repo.example.org/slurm trixie main\n"}
    assert out["source_key"] == {"path": "/etc/apt/keyrings/slime-hybrid-slurm.asc", "url": "https://repo.example.org/key.asc"}


def test_plan_names_missing_and_misplaced_node_settings():
    node = dict(NODE)
    del node["features"], node["conf_extra"]
    with pytest.raises(ValueError, match="node settings lack features, conf_extra"):
        worker.plan(cluster_model.normalize(MODEL), node)
    with pytest.raises(ValueError, match=r"node settings: uid unknown \(the worker settings go under worker\)"):
        worker.plan(cluster_model.normalize(MODEL), dict(NODE, uid=401))
    with pytest.raises(ValueError, match=r"bm-1: worker.uid='x' must be a number from 1 to 65534"):
        worker.plan(cluster_model.normalize(MODEL), dict(NODE, worker={"uid": "x"}))


def test_the_model_sets_every_worker_and_a_node_overrides_it():
    model = cluster_model.normalize(dict(MODEL, worker={"uid": 500, "packages": ["slurmd"], "package_version": "26.05.5-1"}))
    site = worker.plan(model, NODE)
    assert site["user"]["uid"] == 500 and site["packages"] == ["slurmd=26.05.5-1"]
    assert site["worker"] == dict(cluster_model.WORKER_DEFAULTS, uid=500, packages=["slurmd"], package_version="26.05.5-1",
                                  firewall_packages=["iptables", "iptables-persistent"], rules_file="/etc/iptables/rules.v4")
    own = worker.plan(model, dict(NODE, worker={"package_version": ""}))
    assert own["user"]["uid"] == 500 and own["packages"] == ["slurmd"]
    # the model's own output reads back the same (normalize(normalize(x)) == normalize(x))
    assert cluster_model.normalize(model) == model


HOSTS = """127.0.0.1 localhost
10.9.9.9 slurm-controller.slurm old-alias
# 10.8.8.8 slurm-controller.slurm (a comment stays)
10.1.1.1 slurm-controller.slurmXslurm other
10.2.2.2 db.example.org
10.7.7.7 other slurm-controller-0
10.126.0.12 slurm-controller-1.slurm-backup.slurm slurm-controller-1
10.126.0.14 gone-backup # slime.hybrid
"""

BACKUP = {"host": "slurm-controller-1.slurm-backup.slurm", "aliases": ["slurm-controller-1"],
          "address": "10.126.0.12", "node_address": "10.127.0.51"}


def _edit_hosts(tmp_path, hosts, text=HOSTS):
    """The cloud-init path's edit, on a copy instead of /etc/hosts: the lines after."""
    path = tmp_path / "hosts"
    path.write_text(text)
    script = hosts["shell"].replace("/etc/hosts", str(path)).replace("chown root:root", "true")
    subprocess.run(["sh", "-c", script], check=True)
    return path.read_text().splitlines()


def _lineinfile(hosts, text=HOSTS):
    """The SSH path's edits as ansible.builtin.lineinfile makes them: every line stale matches removed,
    then each line replaces the last match of its regexp, else is appended."""
    lines = [line for line in text.splitlines() if not re.search(hosts["stale"], line)]
    for entry in hosts["entries"]:
        matches = [i for i, line in enumerate(lines) if re.search(entry["regexp"], line)]
        if matches:
            lines[matches[-1]] = entry["line"]
        else:
            lines.append(entry["line"])
    return lines


KEPT = ["127.0.0.1 localhost", "# 10.8.8.8 slurm-controller.slurm (a comment stays)",
        "10.1.1.1 slurm-controller.slurmXslurm other", "10.2.2.2 db.example.org"]


def test_hosts_regexps_and_shell_edit_agree(tmp_path):
    hosts = plan()["hosts"]
    after = _edit_hosts(tmp_path, hosts)
    # every line for one of the controller's names goes (not a comment, not a longer name), and ours
    # for a controller no longer there; the SSH path removes the same lines
    assert after == KEPT + ["10.126.0.12 slurm-controller-1.slurm-backup.slurm slurm-controller-1",
                            "10.126.0.11 slurm-controller.slurm slurm-controller-0 # slime.hybrid"]
    assert _lineinfile(hosts) == after
    assert _lineinfile(hosts, "\n".join(after)) == after


def test_hosts_of_a_backup_with_a_pod_and_one_without(tmp_path):
    model = cluster_model.normalize(dict(MODEL, controller=dict(
        MODEL["controller"], backups=[BACKUP, {"host": "ctl-2.example.org", "aliases": ["ctl-2"]}])))
    hosts = worker.plan(model, NODE)["hosts"]
    # the backup without a pod has no address: nothing to map
    lines = [e["line"] for e in hosts["entries"]]
    assert lines == ["10.126.0.11 slurm-controller.slurm slurm-controller-0 # slime.hybrid",
                     "10.126.0.12 slurm-controller-1.slurm-backup.slurm slurm-controller-1 # slime.hybrid"]
    after = _edit_hosts(tmp_path, hosts)
    assert after == KEPT + lines
    assert sorted(_lineinfile(hosts)) == sorted(after)
    # converged: nothing is stale, every line is there
    assert _lineinfile(hosts, "\n".join(after)) == after
    assert not [line for line in after if re.search(hosts["stale"], line)]


@pytest.mark.parametrize("installed, starts", [("26.05.5", True), ("24.11.5", True), ("24.05.8", False), ("26.11.0", False)])
def test_slurmd_version_check_of_the_cloud_init_path(installed, starts):
    check = worker.slurmd_version_check("26.05")
    result = subprocess.run(["sh", "-c", "slurmd() { echo 'slurm %s'; }; %s" % (installed, check)],
                            capture_output=True, text=True, check=False)
    assert (result.returncode == 0) is starts
    if not starts:
        assert result.stderr.strip() == ("slime.hybrid: slurmd %s cannot join slurmctld 26.05 (accepted: 26.05, 25.11, "
                                         "25.05, 24.11)" % installed)


@pytest.mark.parametrize("oldest", [None, {"release": "25.11", "why": "a setting of 25.11"}])
def test_the_cloud_init_check_accepts_what_the_ssh_path_accepts(oldest):
    """One window, two executors: the shell `case` of the cloud-init path starts slurmd exactly where the SSH
    path's check (slurmd.version_compat_error, filter slurm_compat_error) lets it join."""
    versions = ["%02d.%02d.%d" % (year, month, patch) for year in range(22, 28) for month in (5, 11) for patch in (0, 7)]
    check = worker.slurmd_version_check("26.05", oldest=oldest)
    script = "; ".join("slurmd() { echo 'slurm %s'; }; if %s 2>/dev/null; then echo yes; else echo no; fi" % (version, check)
                       for version in versions)
    starts = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout.split()
    joins = ["yes" if slurmd.version_compat_error(version, "26.05", oldest) is None else "no" for version in versions]
    assert dict(zip(versions, starts)) == dict(zip(versions, joins))
    assert starts.count("yes") == (8 if oldest is None else 4)


@pytest.mark.parametrize("pin, candidate, installs", [
    ("", "26.05.5-1", True), ("", "24.05.8-1", False), ("", "(none)", False), ("25.11.2-1", "27.05.0-1", True),
    ("26.11.0-1", "26.05.5-1", False)])
def test_install_check_of_the_cloud_init_path(tmp_path, pin, candidate, installs):
    """The packaged slurmd is checked before anything is installed, as the SSH path does: the pin, else
    apt's candidate (the lines of apt-cache policy's output the check reads)."""
    check = plan(package_version=pin)["slurmd_install_check"]
    fake = tmp_path / "apt-cache"  # not a shell function: sh refuses '-' in function names
    fake.write_text("#!/bin/sh\nprintf 'slurmd:\\n  Installed: (none)\\n  Candidate: %s\\n  Version table:\\n'\n" % candidate)
    fake.chmod(0o755)
    result = subprocess.run(["sh", "-c", check + " || exit 1; echo installed"], capture_output=True, text=True, check=False,
                            env={"PATH": "%s:/usr/bin:/bin" % tmp_path})
    assert (result.stdout == "installed\n") is installs
    if not installs:
        assert result.returncode == 1
        assert result.stderr.strip() == ("slime.hybrid: the packaged slurmd %s cannot join slurmctld 26.05 (accepted: 26.05, "
                                         "25.11, 25.05, 24.11)" % (pin or candidate))


def test_a_dnf_worker_gets_els_names_a_repo_file_and_dnf_commands():
    out = plan(package_manager="dnf", dnf_repository="https://repo.example.org/slurm/el9",
               dnf_key_url="https://repo.example.org/slurm/RPM-GPG-KEY")
    assert out["worker"]["packages"] == ["slurm-slurmd", "slurm"] and out["packages"] == ["slurm-slurmd", "slurm"]
    assert out["firewall"]["packages"] == ["iptables-nft", "iptables-nft-services"]
    assert out["firewall"]["rules_file"] == "/etc/sysconfig/iptables" and out["firewall"]["service"] == "iptables"
    assert out["source"] == {"path": "/etc/yum.repos.d/slime-hybrid-slurm.repo", "mode": "0644", "content": (
        worker.HEADER + "\n[slime-hybrid-slurm]\nname=Slurm for slime.hybrid workers\n"
        "baseurl=https://repo.example.org/slurm/el9\nenabled=1\ngpgcheck=1\ngpgkey=https://repo.example.org/slurm/RPM-GPG-KEY\n")}
    assert out["source_key"] is None  # dnf imports the key named in the source file
    assert out["index_query"].startswith("i=$(dnf -q repoquery --installed --latest-limit=1 --qf '%{version}-%{release}' "
                                         "slurm-slurmd | tail -n1); c=$(dnf -q repoquery --available")
    assert "dnf -q repoquery --available --latest-limit=1 --qf '%{version}-%{release}' slurm-slurmd" in out["slurmd_install_check"]
    # without a key dnf does not check signatures
    assert "gpgcheck=0\n" in plan(package_manager="dnf", dnf_repository="https://repo.example.org/el9")["source"]["content"]
    # a pinned version as dnf spells it (NAME-VERSION, globs allowed)
    pinned = plan(package_manager="dnf", package_version="26.05.5-1.el9")
    assert pinned["packages"] == ["slurm-slurmd-26.05.5-1.el9", "slurm-26.05.5-1.el9"] and pinned["version_separator"] == "-"
    assert pinned["source"] is None
    assert plan()["version_separator"] == "="


def test_a_host_that_states_dnf_gets_dnfs_defaults_over_a_model_of_apt():
    model = cluster_model.normalize(dict(MODEL, worker={"uid": 500}))
    assert model["worker"]["packages"] is None and model["worker"]["package_manager"] == "apt"
    el = worker.plan(model, dict(NODE, worker={"package_manager": "dnf"}))
    assert el["worker"]["packages"] == ["slurm-slurmd", "slurm"] and el["user"]["uid"] == 500
    # a site's own names win (SchedMD's Debian packages)
    smd = worker.plan(model, dict(NODE, worker={"packages": ["slurm-smd-slurmd", "slurm-smd-client"]}))
    assert smd["packages"] == ["slurm-smd-slurmd", "slurm-smd-client"] and smd["index_query"] == "apt-cache policy slurm-smd-slurmd"


def test_a_dnf_workers_cloud_config_installs_with_dnf_and_enables_iptables_service():
    config = cloud_init.cloud_config(plan(package_manager="dnf", dnf_repository="https://repo.example.org/el9"), "a2V5")
    runcmd = config["runcmd"]
    assert ["dnf", "makecache"] in runcmd and ["apt-get", "update"] not in runcmd
    assert ["dnf", "install", "-y", "--setopt=install_weak_deps=False", "iptables-nft", "iptables-nft-services"] in runcmd
    assert ["dnf", "install", "-y", "--setopt=install_weak_deps=False", "slurm-slurmd", "slurm"] in runcmd
    save = runcmd.index(["sh", "-c", "iptables-save >/etc/sysconfig/iptables"])
    assert runcmd[save + 1] == ["systemctl", "enable", "iptables"]
    assert "/etc/yum.repos.d/slime-hybrid-slurm.repo" in [part["path"] for part in config["write_files"]]
    # apt's path is unchanged: no service to enable (Debian's package enables netfilter-persistent)
    assert ["systemctl", "enable", "netfilter-persistent"] not in cloud_init.cloud_config(plan(), "a2V5")["runcmd"]
