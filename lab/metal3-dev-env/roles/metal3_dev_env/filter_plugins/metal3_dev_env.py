# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the metal3_dev_env role decides, as plain functions and the role's filters: its inputs'
errors, the networks metal3-dev-env derives from them, the host prerequisites it lacks, and the
hosts it created. The role is the Metal3 lab's, not the collection's (lab/metal3-dev-env/README.md),
so these filters are the role's own (no slime.hybrid. prefix); tests/unit/lab/ tests them.

``settings`` is the role's variables without the ``metal3_dev_env_`` prefix (num_nodes,
boot_mode, ...). Where a rule comes from metal3-dev-env, the file of metal3-io/metal3-dev-env
that makes it is named (at the commit the role pins).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import json
import re

from ansible_collections.slime.hybrid.plugins.module_utils.names import dns_label_errors

BMC_DRIVERS = ("mixed", "ipmi", "redfish", "redfish-virtualmedia", "redfish-uefihttp")  # vars.md, ironic_nodes.json.j2
IMAGE_OSES = ("centos", "ubuntu", "flatcar", "leap", "cirros")                      # lib/images.sh
BOOT_MODES = ("legacy", "UEFI", "UEFISecureBoot")                                   # lib/network.sh, make-bm-worker
CONTAINER_RUNTIMES = ("auto", "docker", "podman")                                   # lib/common.sh
EPHEMERAL_CLUSTERS = ("auto", "kind", "minikube", "tilt")                           # config_example.sh
IP_STACKS = ("v4", "v6", "v4v6")                                                    # lib/network.sh
MAX_NODES = 63               # vm-setup/library/generate_macs.py: at most 127 MACs, two networks per node
FILESYSTEMS = ("ext4", "btrfs", "xfs")                                              # lib/common.sh (FILESYSTEM=/)
# The names the role writes into config_USER.sh itself; extra_config may not set them.
MANAGED_NAMES = (
    "WORKING_DIR", "NUM_NODES", "CONTROL_PLANE_MACHINE_COUNT", "WORKER_MACHINE_COUNT", "TARGET_NODE_MEMORY",
    "DEFAULT_HOSTS_MEMORY", "IMAGE_OS", "IMAGE_NAME", "IMAGE_LOCATION", "IMAGE_USERNAME", "BMC_DRIVER", "BOOT_MODE",
    "CONTAINER_RUNTIME", "EPHEMERAL_CLUSTER", "IP_STACK", "EXTERNAL_SUBNET_V4", "EXTERNAL_SUBNET_V4_HOST",
    "EXTERNAL_SUBNET_V6", "BARE_METAL_PROVISIONER_NETWORK", "BARE_METAL_PROVISIONER_SUBNET_IPV6_ONLY", "NAMESPACE",
    "CONFIG",
)
_WHOLE = re.compile(r"^[0-9]+$")
_PATH = re.compile(r"^/[A-Za-z0-9._/-]+$")
_SHELL_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
_TARGET = re.compile(r"^[A-Za-z0-9_.-]+$")


def _whole(value):
    return bool(_WHOLE.match(str(value)))


def _network(errors, label, value, version, need_hosts):
    """value as an IP network of the version given (None: its own, IPv4 when it does not parse)
    with need_hosts host addresses, else None and the error appended."""
    try:
        net = ipaddress.ip_network(str(value).strip(), strict=False)
    except ValueError:
        version = version or 4
        errors.append("%s=%r is not an IPv%d network in CIDR notation (e.g. %s)"
                      % (label, value, version, "192.168.111.0/24" if version == 4 else "fd55::/64"))
        return None
    version = version or net.version
    if net.version != version:
        errors.append("%s=%r is an IPv%d network; an IPv%d network is needed" % (label, value, net.version, version))
        return None
    if "/" not in str(value) or net.network_address != ipaddress.ip_address(str(value).partition("/")[0].strip()):
        errors.append("%s=%r is not a network address with a prefix length (did you mean %s?)" % (label, value, net))
        return None
    hosts = net.num_addresses - (2 if net.version == 4 else 1)
    if hosts < need_hosts:
        errors.append("%s=%s has %d host addresses; metal3-dev-env uses the first %d (lib/network.sh): use a /%d or larger"
                      % (label, net, max(hosts, 0), need_hosts, 24 if version == 4 else 120))
        return None
    return net


def networks(settings):
    """The networks as metal3-dev-env uses them: {"errors": [...], external_v4_host, external_v4_prefix,
    external_v6_host, provisioning_v6, provisioner_url_host}. lib/network.sh takes the 249th host of the
    external subnet (CLUSTER_APIENDPOINT_IP) and the 200th of the provisioning network (IPAM pool end)."""
    errors, out, found = [], {}, {}
    for version, stacks in ((4, ("v4", "v4v6")), (6, ("v6", "v4v6"))):
        if settings.get("ip_stack") in stacks:
            label = "metal3_dev_env_external_subnet_v%d" % version
            found[label] = net = _network(errors, label, settings.get("external_subnet_v%d" % version), version, 249)
            if net is not None:  # its first host address (next(net.hosts()) too: _network allows no /31 or /32)
                out["external_v%d_host" % version] = str(net.network_address + 1)
                if version == 4:
                    out["external_v4_prefix"] = net.prefixlen
    prov_value = str(settings.get("provisioning_network")).strip()  # stripped, as the messages show it
    prov = _network(errors, "metal3_dev_env_provisioning_network", prov_value, None, 200)  # either version
    for label, other in sorted(found.items()):
        if prov is not None and other is not None and prov.overlaps(other):
            errors.append("metal3_dev_env_provisioning_network=%s overlaps %s=%s" % (prov, label, other))
    if prov is not None:
        first = prov.network_address + 1
        out["provisioning_v6"] = prov.version == 6
        out["provisioner_url_host"] = ("[%s]" % first) if prov.version == 6 else str(first)
    out["errors"] = errors
    return out


def choices(settings, distribution):
    """The auto choices as lib/common.sh makes them: CONTAINER_RUNTIME docker on Ubuntu, podman elsewhere;
    EPHEMERAL_CLUSTER kind with docker, minikube otherwise."""
    chosen = settings.get("container_runtime")
    if chosen == "auto":
        chosen = "docker" if str(distribution or "").lower() == "ubuntu" else "podman"
    ephemeral = settings.get("ephemeral_cluster")
    if ephemeral == "auto":
        ephemeral = "kind" if chosen == "docker" else "minikube"
    return {"container_runtime": chosen, "ephemeral_cluster": ephemeral}


def input_errors(settings, distribution=""):
    """Every problem with the role's inputs at once, each naming the variable, its value and what is allowed."""
    net = networks(settings)
    errors = list(net["errors"])
    nodes, cp, workers = settings.get("num_nodes"), settings.get("control_plane_machine_count"), settings.get("worker_machine_count")
    if not (_whole(nodes) and 1 <= int(nodes) <= MAX_NODES):
        errors.append("metal3_dev_env_num_nodes=%s is not a whole number from 1 to %d (NUM_NODES; vm-setup generates MAC "
                      "addresses for at most %d nodes)" % (nodes, MAX_NODES, MAX_NODES))
    for name in ("control_plane_machine_count", "worker_machine_count"):
        if not _whole(settings.get(name)):
            errors.append("metal3_dev_env_%s=%s is not a whole number" % (name, settings.get(name)))
    if _whole(nodes) and _whole(cp) and _whole(workers) and 1 <= int(nodes) < int(cp) + int(workers):
        errors.append("metal3_dev_env_num_nodes=%s is less than metal3_dev_env_control_plane_machine_count (%s) + "
                      "metal3_dev_env_worker_machine_count (%s); lib/common.sh refuses that" % (nodes, cp, workers))
    memory = settings.get("node_memory_mb")
    if not (_whole(memory) and int(memory) >= 1024):
        errors.append("metal3_dev_env_node_memory_mb=%s is not a whole number of MB of at least 1024" % memory)
    for name, allowed in (("bmc_driver", BMC_DRIVERS), ("image_os", IMAGE_OSES), ("boot_mode", BOOT_MODES),
                          ("container_runtime", CONTAINER_RUNTIMES), ("ephemeral_cluster", EPHEMERAL_CLUSTERS),
                          ("ip_stack", IP_STACKS)):
        if settings.get(name) not in allowed:
            errors.append("metal3_dev_env_%s=%s is not one of %s" % (name, settings.get(name), ", ".join(allowed)))
    chosen_runtime = choices(settings, distribution)["container_runtime"]
    if settings.get("ephemeral_cluster") in ("kind", "tilt") and chosen_runtime != "docker":
        errors.append("metal3_dev_env_ephemeral_cluster=%s needs container runtime docker, but it is %s (lib/common.sh "
                      "runs minikube with any other runtime)" % (settings.get("ephemeral_cluster"), chosen_runtime))
    if settings.get("boot_mode") == "UEFISecureBoot" and settings.get("bmc_driver") in ("ipmi", "mixed"):
        errors.append("metal3_dev_env_boot_mode=UEFISecureBoot needs a Redfish BMC, but metal3_dev_env_bmc_driver=%s "
                      "gives (some) hosts IPMI" % settings.get("bmc_driver"))
    if net.get("provisioning_v6") and settings.get("boot_mode") != "UEFI":
        errors.append("metal3_dev_env_provisioning_network=%s is IPv6, which boots UEFI only (lib/network.sh); "
                      "metal3_dev_env_boot_mode=%s would be overridden" % (settings.get("provisioning_network"), settings.get("boot_mode")))
    if not _PATH.match(str(settings.get("working_dir"))):
        errors.append("metal3_dev_env_working_dir=%s is not an absolute path of letters, digits, ., _, - and /"
                      % settings.get("working_dir"))
    base = str(settings.get("base_dir") or "")
    if base and not _PATH.match(base):
        errors.append("metal3_dev_env_base_dir=%s is not empty or an absolute path of letters, digits, ., _, - and /" % base)
    if not (str(settings.get("version") or "") and str(settings.get("repo") or "")):
        errors.append("metal3_dev_env_repo and metal3_dev_env_version must name a repository and a commit, tag or branch")
    if not _TARGET.match(str(settings.get("make_target"))):
        errors.append("metal3_dev_env_make_target=%s is not a make target name" % settings.get("make_target"))
    extra = settings.get("extra_config")
    if not isinstance(extra, dict):
        errors.append("metal3_dev_env_extra_config must be a mapping of NAME: value")
        extra = {}
    bad = [name for name in extra if not _SHELL_NAME.match(str(name))]
    if bad:
        errors.append("metal3_dev_env_extra_config: %s not shell variable names (A-Z, 0-9, _)" % ", ".join(bad))
    managed = [name for name in extra if name in MANAGED_NAMES]
    if managed:
        errors.append("metal3_dev_env_extra_config: %s set by the role from its own variables (see meta/argument_specs.yml)"
                      % ", ".join(managed))
    return errors + dns_label_errors({"metal3_dev_env_namespace": settings.get("namespace")})


def key_values(text):
    """KEY=value lines (os-release, or the probe's output) -> dict, quotes around values removed."""
    out = {}
    for line in str(text or "").splitlines():
        match = re.match(r"^([A-Za-z_]+)=(.*)$", line)
        if match:
            out[match.group(1)] = match.group(2).strip().strip('"').strip("'")
    return out


def missing(settings, os_release, probe, facts):
    """The prerequisites of metal3-dev-env the host lacks, one phrase each.

    os_release: the text of /etc/os-release; probe: the KEY=value output of the role's probe
    (cmd_<name>, kvm, docker_socket, sudo_n, sudo_all, fs_root, disk_path, disk_kb); facts: Ansible
    facts (user_uid, user_id, distribution, processor_vcpus, memtotal_mb)."""
    osr, found = key_values(os_release), key_values(probe)
    os_id = osr.get("ID", "unknown")
    distro = os_id + osr.get("VERSION_ID", "").split(".")[0]
    supported = list(settings.get("supported_distros") or [])
    os_ok = distro in supported
    chosen = choices(settings, facts.get("distribution"))["container_runtime"]
    have = dict((name, bool(found.get("cmd_" + name))) for name in
                ("git", "make", "sudo", "virsh", "libvirtd", "virtqemud", "docker", "podman"))
    root = int(facts.get("user_uid", -1)) == 0
    user = facts.get("user_id", "?")
    out = []
    if not os_ok:
        out.append("supported OS: %s is not one of %s (lib/common.sh SUPPORTED_DISTROS)" % (distro, ", ".join(supported)))
    if found.get("kvm") != "yes":
        out.append("KVM: /dev/kvm is missing (the VMs and minikube need hardware virtualisation)")
    if not (have["virsh"] and (have["libvirtd"] or have["virtqemud"])) and not os_ok:
        out.append("libvirt: virsh and libvirtd (or virtqemud) are not installed, and metal3-dev-env installs them only on %s"
                   % ", ".join(supported))
    if chosen == "docker":
        runtime_ok = have["docker"] and found.get("docker_socket") == "yes"
        installable = os_ok and os_id == "ubuntu"  # 01_prepare_host.sh installs docker-ce on Ubuntu only
        why = ("docker is installed but its daemon socket /var/run/docker.sock is missing" if have["docker"]
               else "docker is not installed") + ", and metal3-dev-env installs docker only on Ubuntu"
    else:
        runtime_ok, installable = have["podman"], os_ok
        why = "podman is not installed, and metal3-dev-env installs it only on %s" % ", ".join(supported)
    if not (runtime_ok or installable):
        out.append("container runtime %s (CONTAINER_RUNTIME): %s" % (chosen, why))
    if not have["git"]:
        out.append("git: not installed (the checkout needs it)")
    if not have["make"]:
        out.append("make: not installed (the bring-up runs make)")
    if root:
        out.append("a non-root user: connected as %s (uid 0), which 01_prepare_host.sh refuses; connect as a user with "
                   "passwordless sudo" % user)
    if not have["sudo"]:
        out.append("sudo: not installed (metal3-dev-env runs its privileged steps with sudo)")
    elif not root and not (found.get("sudo_n") == "yes" and found.get("sudo_all") == "yes"):
        out.append("passwordless sudo: sudo -n -l of %s does not grant (ALL) NOPASSWD: ALL (lib/common.sh requires it)" % user)
    cpus = facts.get("processor_vcpus")
    if int(cpus or 0) < int(settings["min_cpus"]):
        out.append("CPUs: %s, at least %s needed" % (cpus if cpus is not None else "unknown", settings["min_cpus"]))
    memory, need = facts.get("memtotal_mb"), int(settings.get("min_memory_mb") or 0)
    if need <= 0:  # README: VMs of TARGET_NODE_MEMORY each, and 4096 MB for the management cluster (minikube)
        need = int(settings["num_nodes"]) * int(settings["node_memory_mb"]) + 4096
    if int(memory or 0) < need:
        out.append("memory: %s MB, at least %d MB needed for %s node(s) of %s MB and the management cluster"
                   % (memory if memory is not None else "unknown", need, settings["num_nodes"], settings["node_memory_mb"]))
    disk_gb, need_gb = round(int(found.get("disk_kb") or 0) / 1048576.0, 1), int(settings.get("min_disk_gb") or 0)
    if need_gb <= 0:
        need_gb = 20 + 10 * int(settings["num_nodes"])
    if disk_gb < need_gb:
        out.append("disk: %s GB free at %s, at least %d GB needed for the images and %s node disk(s)"
                   % (disk_gb, found.get("disk_path", "?"), need_gb, settings["num_nodes"]))
    fs_root = found.get("fs_root", "unknown")
    if fs_root not in FILESYSTEMS:
        out.append("filesystem: / is %s, lib/common.sh accepts %s" % (fs_root, ", ".join(FILESYSTEMS)))
    return out


def hosts(nodes_json, settings, image_url, checksum_kind):
    """metal3-dev-env's NODES_FILE (vm-setup's ironic_nodes.json.j2; lib/common.sh list_nodes reads name,
    driver_info.address/username/password and ports[0].address) -> hosts in the metal3_hosts_list format."""
    nodes = (json.loads(nodes_json) if isinstance(nodes_json, str) else nodes_json or {}).get("nodes") or []
    out = []
    for node in nodes:
        info = node.get("driver_info") or {}
        port = (node.get("ports") or [{}])[0] or {}
        out.append({
            "name": node.get("name") or "",
            "bmc": {"address": info.get("address") or "", "username": info.get("username") or "",
                    "password": info.get("password") or "",
                    "disable_certificate_verification": str(info.get("redfish_verify_ca", "True")).lower() == "false"},
            "boot_mac": port.get("address") or "",
            "boot_mode": settings["boot_mode"],
            "image": {"url": image_url, "checksum": "%s.%s" % (image_url, checksum_kind),
                      "checksum_type": checksum_kind.replace("sum", ""), "format": "raw"},
            "root_device_hints": settings["root_device_hints"],
            "features": settings["host_features"],
        })
    return out


def hosts_problem(found):
    """'' when every host read has a name, a BMC address and a boot MAC, else what is wrong."""
    if not found:
        return "no nodes"
    bad = [host["name"] or "?" for host in found if not host["name"]]
    bad += [host["name"] for host in found if host["name"] and not host["bmc"]["address"]]
    bad += [host["name"] for host in found if host["name"] and not host["boot_mac"]]
    return "nodes without a name, BMC address or boot MAC: %s" % ", ".join(bad) if bad else ""


class FilterModule(object):
    """The metal3_dev_env role's filters."""

    def filters(self):
        return dict(("metal3_dev_env_" + function.__name__, function)
                    for function in (networks, choices, input_errors, missing, hosts, hosts_problem))
