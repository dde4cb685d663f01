# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Metal3 lab role's decisions (lab/metal3-dev-env/roles/metal3_dev_env/filter_plugins/metal3_dev_env.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import os
import re

import pytest

ROLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "lab", "metal3-dev-env", "roles", "metal3_dev_env")
_SPEC = importlib.util.spec_from_file_location("metal3_dev_env_filters", os.path.join(ROLE, "filter_plugins", "metal3_dev_env.py"))
m = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(m)

# The role's defaults (its defaults/main.yml), as the role hands them over.
SETTINGS = {
    "num_nodes": 2, "control_plane_machine_count": 1, "worker_machine_count": 1, "node_memory_mb": 4096,
    "bmc_driver": "redfish", "image_os": "ubuntu", "boot_mode": "legacy", "container_runtime": "auto",
    "ephemeral_cluster": "auto", "ip_stack": "v4", "external_subnet_v4": "192.168.111.0/24",
    "external_subnet_v6": "fd55::/64", "provisioning_network": "172.22.0.0/24", "working_dir": "/opt/metal3-dev-env",
    "base_dir": "", "repo": "https://github.com/metal3-io/metal3-dev-env.git", "version": "254eebd",
    "make_target": "all", "extra_config": {}, "namespace": "metal3",
    "supported_distros": ["centos9", "rhel9", "ubuntu20", "ubuntu22"], "min_cpus": 4, "min_memory_mb": 0,
    "min_disk_gb": 0, "root_device_hints": {"deviceName": "/dev/sda"}, "host_features": ["baremetal"],
}


def settings(**changes):
    out = dict(SETTINGS)
    out.update(changes)
    return out


def test_defaults_are_valid_and_networks_derived():
    assert m.input_errors(SETTINGS, "Debian") == []
    net = m.networks(SETTINGS)
    assert net == {"errors": [], "external_v4_host": "192.168.111.1", "external_v4_prefix": 24,
                   "provisioning_v6": False, "provisioner_url_host": "172.22.0.1"}
    v6 = m.networks(settings(ip_stack="v4v6", provisioning_network="fd00:1::/64"))
    assert v6["external_v6_host"] == "fd55::1" and v6["provisioner_url_host"] == "[fd00:1::1]" and v6["provisioning_v6"]


@pytest.mark.parametrize("changes, message", [
    ({"num_nodes": 0}, "metal3_dev_env_num_nodes=0 is not a whole number from 1 to 63"),
    ({"num_nodes": "two"}, "metal3_dev_env_num_nodes=two is not a whole number"),
    ({"num_nodes": 1, "worker_machine_count": 1}, "is less than metal3_dev_env_control_plane_machine_count (1)"),
    ({"node_memory_mb": 512}, "metal3_dev_env_node_memory_mb=512 is not a whole number of MB of at least 1024"),
    ({"bmc_driver": "idrac"}, "metal3_dev_env_bmc_driver=idrac is not one of mixed, ipmi, redfish"),
    ({"ephemeral_cluster": "kind"}, "needs container runtime docker, but it is podman"),
    ({"boot_mode": "UEFISecureBoot", "bmc_driver": "mixed"}, "UEFISecureBoot needs a Redfish BMC"),
    ({"provisioning_network": "fd00:1::/64"}, "is IPv6, which boots UEFI only"),
    ({"external_subnet_v4": "192.168.111.5/24"}, "is not a network address with a prefix length (did you mean 192.168.111.0/24?)"),
    ({"external_subnet_v4": "192.168.111.0/25"}, "has 126 host addresses; metal3-dev-env uses the first 249"),
    ({"provisioning_network": "192.168.111.0/24"}, "overlaps metal3_dev_env_external_subnet_v4=192.168.111.0/24"),
    ({"external_subnet_v4": "fd55::/64"}, "is an IPv6 network; an IPv4 network is needed"),
    ({"working_dir": "relative"}, "metal3_dev_env_working_dir=relative is not an absolute path"),
    ({"make_target": "all; rm"}, "is not a make target name"),
    ({"extra_config": {"lower": 1, "NUM_NODES": 3}}, "lower not shell variable names"),
    ({"extra_config": {"NUM_NODES": 3}}, "NUM_NODES set by the role from its own variables"),
    ({"extra_config": []}, "must be a mapping of NAME: value"),
    ({"namespace": "Metal3"}, "metal3_dev_env_namespace='Metal3' is not a valid Kubernetes name"),
])
def test_input_errors_name_the_value(changes, message):
    errors = m.input_errors(settings(**changes), "Debian")
    assert any(message in error for error in errors), errors


def test_choices():
    assert m.choices(SETTINGS, "Ubuntu") == {"container_runtime": "docker", "ephemeral_cluster": "kind"}
    assert m.choices(SETTINGS, "CentOS") == {"container_runtime": "podman", "ephemeral_cluster": "minikube"}
    assert m.choices(settings(container_runtime="docker", ephemeral_cluster="tilt"), "") == {
        "container_runtime": "docker", "ephemeral_cluster": "tilt"}


UBUNTU = 'NAME="Ubuntu"\nID=ubuntu\nVERSION_ID="22.04"\n'
GOOD_PROBE = "\n".join([
    "cmd_git=/usr/bin/git", "cmd_make=/usr/bin/make", "cmd_sudo=/usr/bin/sudo", "cmd_virsh=/usr/bin/virsh",
    "cmd_libvirtd=/usr/sbin/libvirtd", "cmd_virtqemud=", "cmd_docker=/usr/bin/docker", "cmd_podman=",
    "kvm=yes", "docker_socket=yes", "sudo_n=yes", "sudo_all=yes", "fs_root=ext4", "disk_path=/opt", "disk_kb=104857600",
])
GOOD_FACTS = {"user_uid": 1000, "user_id": "metal3", "distribution": "Ubuntu", "processor_vcpus": 8, "memtotal_mb": 32000}


def test_a_good_host_lacks_nothing():
    assert m.missing(SETTINGS, UBUNTU, GOOD_PROBE, GOOD_FACTS) == []


def test_this_kind_of_machine_lacks_what_it_lacks():
    debian = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n'
    probe = "\n".join(["cmd_git=/usr/bin/git", "cmd_make=", "cmd_sudo=", "kvm=no", "docker_socket=no",
                       "fs_root=overlay", "disk_path=/", "disk_kb=10485760"])
    facts = {"user_uid": 0, "user_id": "root", "distribution": "Debian", "processor_vcpus": 2, "memtotal_mb": 24000}
    assert m.missing(SETTINGS, debian, probe, facts) == [
        "supported OS: debian12 is not one of centos9, rhel9, ubuntu20, ubuntu22 (lib/common.sh SUPPORTED_DISTROS)",
        "KVM: /dev/kvm is missing (the VMs and minikube need hardware virtualisation)",
        "libvirt: virsh and libvirtd (or virtqemud) are not installed, and metal3-dev-env installs them only on "
        "centos9, rhel9, ubuntu20, ubuntu22",
        "container runtime podman (CONTAINER_RUNTIME): podman is not installed, and metal3-dev-env installs it only on "
        "centos9, rhel9, ubuntu20, ubuntu22",
        "make: not installed (the bring-up runs make)",
        "a non-root user: connected as root (uid 0), which 01_prepare_host.sh refuses; connect as a user with passwordless sudo",
        "sudo: not installed (metal3-dev-env runs its privileged steps with sudo)",
        "CPUs: 2, at least 4 needed",
        "disk: 10.0 GB free at /, at least 40 GB needed for the images and 2 node disk(s)",
        "filesystem: / is overlay, lib/common.sh accepts ext4, btrfs, xfs",
    ]


def test_docker_without_its_socket_and_sudo_without_nopasswd():
    probe = GOOD_PROBE.replace("docker_socket=yes", "docker_socket=no").replace("sudo_all=yes", "sudo_all=no")
    centos = 'ID="centos"\nVERSION_ID="9"\n'
    out = m.missing(settings(container_runtime="docker"), centos, probe, dict(GOOD_FACTS, memtotal_mb=8000))
    assert out == [
        "container runtime docker (CONTAINER_RUNTIME): docker is installed but its daemon socket /var/run/docker.sock "
        "is missing, and metal3-dev-env installs docker only on Ubuntu",
        "passwordless sudo: sudo -n -l of metal3 does not grant (ALL) NOPASSWD: ALL (lib/common.sh requires it)",
        "memory: 8000 MB, at least 12288 MB needed for 2 node(s) of 4096 MB and the management cluster",
    ]


NODES = {"nodes": [
    {"name": "node-0", "driver_info": {"address": "redfish+http://192.168.111.1:8000/redfish/v1/Systems/a",
                                       "username": "admin", "password": "pw", "redfish_verify_ca": "False"},
     "ports": [{"address": "00:5c:52:31:3a:9c"}]},
    {"name": "node-1", "driver_info": {"address": "ipmi://192.168.111.1:6231", "username": "admin", "password": "pw"},
     "ports": [{"address": "00:5c:52:31:3a:9d"}]},
]}


def test_hosts_read_back():
    url = "http://172.22.0.1/images/CENTOS_9-raw.img"
    hosts = m.hosts(json.dumps(NODES), SETTINGS, url, "sha256sum")
    assert [h["name"] for h in hosts] == ["node-0", "node-1"]
    assert hosts[0]["bmc"] == {"address": NODES["nodes"][0]["driver_info"]["address"], "username": "admin", "password": "pw",
                               "disable_certificate_verification": True}
    assert hosts[1]["bmc"]["disable_certificate_verification"] is False
    assert hosts[0]["image"] == {"url": url, "checksum": url + ".sha256sum", "checksum_type": "sha256", "format": "raw"}
    assert hosts[0]["boot_mac"] == "00:5c:52:31:3a:9c" and hosts[0]["boot_mode"] == "legacy"
    assert m.hosts_problem(hosts) == ""
    assert m.hosts_problem([]) == "no nodes"
    broken = m.hosts({"nodes": [{"name": "x", "driver_info": {}}, {"driver_info": {"address": "ipmi://h"}}]}, SETTINGS, url, "md5sum")
    assert broken[0]["image"]["checksum_type"] == "md5"
    assert m.hosts_problem(broken) == "nodes without a name, BMC address or boot MAC: ?, x, x"


def test_the_role_finds_every_filter_it_calls():
    """The filters the role's tasks and vars call are the ones its filter plugin registers."""
    registered = m.FilterModule().filters()
    called = set()
    for folder in ("tasks", "vars"):
        for name in os.listdir(os.path.join(ROLE, folder)):
            with open(os.path.join(ROLE, folder, name)) as handle:
                called.update(re.findall(r"\|\s*(metal3_dev_env_\w+)", handle.read()))
    assert called == set(registered)
    assert registered["metal3_dev_env_networks"] is m.networks
