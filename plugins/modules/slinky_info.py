#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: slinky_info
short_description: Read what bare-metal Slurm workers need from a Slinky cluster
version_added: 0.1.0
description:
  - Returns the controller pod's host address and pod IP, the NodePort of the slurmctld Service,
    and the Slurm version (from the slurmctld image tag), shaped as the C(controller), C(nodeport) and
    C(slurm_version) keys of the C(slime_cluster) model, so that C(playbooks/site.yml) can hand them
    to the C(slurm_node) role.
  - With O(pod_routes=true) also returns C(pod_routes), the route to each Kubernetes node's pod CIDR that
    bare metal needs in network_mode C(routed) (and by which the doctor knows a pod IP in the other modes),
    read from the Node objects.
  - With O(include_key=true) also returns C(slurm.key) as stored in its Secret (base64).
    Use the task with C(no_log) then; the key is never returned otherwise.
  - Uses the Kubernetes connection options of C(kubernetes.core).
options:
  namespace:
    description: Namespace of the slurm chart.
    type: str
    default: slurm
  controller_selector:
    description: Label selectors of the controller pod.
    type: list
    elements: str
    default: [app.kubernetes.io/name=slurmctld]
  service_name:
    description: Name of the controller Service; by default the NodePort Service exposing O(port).
    type: str
  nodeport:
    description: Look up the NodePort Service (not needed in network_mode routed).
    type: bool
    default: true
  port:
    description: slurmctld's port.
    type: int
    default: 6817
  pod_routes:
    description:
      - Also read the Node objects and return C(pod_routes) (C(playbooks/cluster_facts.yml) asks for it in every
        network mode, as routed routes by it and the doctor tells pod IPs by it), one route for
        every IPv4 CIDR of a Node's C(spec.podCIDRs) (else C(spec.podCIDR)) via that Node's IPv4 C(InternalIP).
      - Nodes without a podCIDR (not yet allocated, or a CNI with its own IPAM) or without an IPv4 InternalIP are
        left out, IPv6 CIDRs are skipped; the module warns when no route is found.
      - Needs permission to C(list) C(nodes) at cluster scope (a ClusterRole), beyond the namespaced reads
        of the other keys.
    type: bool
    default: false
  include_key:
    description: Also return the slurm.key (base64). Use C(no_log) on the task.
    type: bool
    default: false
  key_secret:
    description: Secret holding the key.
    type: str
    default: slurm-auth-slurm
  key_name:
    description: Key of the key in the Secret.
    type: str
    default: slurm.key
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - slime.hybrid.kubernetes_auth
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
requirements:
  - kubernetes >= 24.2.0
author:
  - slime.hybrid contributors (@slime-hpc)
"""

EXAMPLES = r"""
- name: Read the cluster facts bare metal needs
  slime.hybrid.slinky_info:
    namespace: slurm
  register: slinky

- name: In network_mode routed, also the routes to the pod CIDRs (needs list on nodes)
  slime.hybrid.slinky_info:
    namespace: slurm
    nodeport: false
    pod_routes: true
  register: slinky_routed

- name: And the key, without logging it
  slime.hybrid.slinky_info:
    namespace: slurm
    include_key: true
  register: slinky_key
  no_log: true
"""

RETURN = r"""
cluster:
  description:
    - Keys of the slime_cluster model read from the cluster.
    - C(controller.host) is the name Slurm connects to, the address part of the first C(SlurmctldHost=NAME(ADDRESS))
      in the slurm.conf the operator rendered (its ConfigMap); C(controller.aliases) holds the name part and
      C(SlurmctldAddr) when set. Bare metal maps them to C(controller.address), the pod the first line names while it
      is ready, else the first ready controller pod.
    - C(controller.backups) holds every other C(SlurmctldHost) line, in order, as C({host, aliases, address, node_address,
      pod}), the address and node of the pod that answers to its name, C(null) when none does.
    - C(pod_routes), only with O(pod_routes=true), is a list of C({cidr, via}) sorted by CIDR, one per IPv4 pod CIDR
      of each Node that has one and an IPv4 InternalIP. A site's own C(slime_cluster.pod_routes) wins over it.
  returned: success
  type: dict
  sample: {"controller": {"host": "slurm-controller.slurm", "aliases": ["slurm-controller-0"], "address": "10.244.1.5", "port": 6817,
                          "pod": "slurm-controller-0", "node": "worker-1", "backups": []},
           "nodeport": {"address": "192.168.1.21", "port": 30017, "service": "slurm-controller",
                        "external_traffic_policy": "Local"},
           "slurm_version": "26.05",
           "pod_routes": [{"cidr": "10.244.0.0/24", "via": "192.168.1.20"},
                          {"cidr": "10.244.1.0/24", "via": "192.168.1.21"}]}
slurm_key_b64:
  description: The slurm.key as base64, only with O(include_key=true).
  returned: when include_key
  type: str
"""

from ansible_collections.slime.hybrid.plugins.module_utils import kube_read, slinky


# Where the task runs on the controller itself, its action plugin (plugins/action/slinky_info.py) makes the same
# read in the controller's process instead.
def main():
    kube_read.run_module(slinky.INFO_OPTIONS, slinky.info)


if __name__ == "__main__":
    main()
