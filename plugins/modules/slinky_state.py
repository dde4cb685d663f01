#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: slinky_state
short_description: Read in one API session everything the slinky role would change or wait for
version_added: 0.2.0
description:
  - The slinky role's one read of the cluster (the bare-metal side's is M(slime.hybrid.slurm_node_info)), so that a
    converged cluster costs the role one module run; the filter C(slime.hybrid.slinky_drift) then says which parts
    differ from what the role wants, and the role runs only those.
  - Reads the API groups the server serves, the namespaces (their annotations), the Secrets named (their names, labels
    and key names, never their data), each Helm release's last revision from Helm's own record (the Secrets of its
    default storage driver - chart, version, appVersion, status and the values it was given), the chart each release
    would be installed from (a chart directory or archive's C(Chart.yaml)), the objects named (OpenShift's SCCs and
    their grants), and what the role waits for - the Slurm daemons' pods, the NodeSet pods, the controller's Service,
    StatefulSet and rendered slurm.conf, and the operator's Deployment.
  - Changes nothing.
options:
  namespace:
    description: Namespace of the slurm chart.
    type: str
    default: slurm
  operator_namespace:
    description: Namespace of the Slinky operator.
    type: str
    default: slinky
  operator_name:
    description: Name of the operator's Deployment.
    type: str
    default: slurm-operator
  namespaces:
    description: Namespaces to read (the role's).
    type: list
    elements: str
    default: []
  secrets:
    description: Secrets of O(namespace) to look for (the keys, the accounting database's password).
    type: list
    elements: str
    default: []
  releases:
    description: Helm releases to read, each with the chart the role would install it from.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Release name.
        type: str
        required: true
      namespace:
        description: Release namespace.
        type: str
        required: true
      chart_ref:
        description: The chart, as kubernetes.core.helm's C(chart_ref) (a directory or archive on this host is read).
        type: str
        required: true
      chart_version:
        description: The chart version asked for (a repository's or an OCI chart).
        type: str
  objects:
    description:
      - Further objects to read as they are, given as the role would apply them (each read by its C(apiVersion), C(kind),
        C(metadata.name) and C(metadata.namespace)); C(objects) in the result holds each, in order, or C(null) where it
        does not exist.
    type: list
    elements: dict
    default: []
  objects_api:
    description: Read O(objects) only where the server serves this API (group/version), e.g. C(security.openshift.io/v1).
    type: str
  facts:
    description:
      - Also read what M(slime.hybrid.slinky_info) returns, with its options of the same names, into C(state.facts)
        (C({cluster, slurm_key_b64, warnings})), or C(null) with C(state.facts_error) while no controller pod is
        ready; C(playbooks/cluster_facts.yml) takes them from a run of the slinky role that changed nothing
        (role output C(slinky_facts)) instead of reading the cluster again.
      - With O(facts.include_key) the result holds the key, use C(no_log) on the task then.
    type: dict
    suboptions:
      port:
        description: slurmctld's port.
        type: int
        default: 6817
      service_name:
        description: Name of the controller Service; by default the NodePort Service exposing O(facts.port).
        type: str
      nodeport:
        description: Look up the NodePort Service (not needed in network_mode routed).
        type: bool
        default: true
      pod_routes:
        description: Also read the Node objects for C(pod_routes) (needs list on nodes at cluster scope).
        type: bool
        default: false
      include_key:
        description: Also return the slurm.key (base64).
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
  controller_selector:
    description: Label selectors of the controller's pods, Service and StatefulSet.
    type: list
    elements: str
    default: [app.kubernetes.io/name=slurmctld]
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
- name: Read what the slinky role would change or wait for
  slime.hybrid.slinky_state:
    namespace: slurm
    namespaces: [slurm, slinky]
    secrets: [slurm-auth-slurm, slurm-auth-jwt]
    releases:
      - {name: slurm, namespace: slurm, chart_ref: oci://ghcr.io/slinkyproject/charts/slurm, chart_version: 1.2.1}
  register: slinky_state

- name: Say which parts differ
  ansible.builtin.debug:
    msg: "{{ slinky_state.state | slime.hybrid.slinky_drift(want) }}"
"""

RETURN = r"""
state:
  description:
    - What was read (plugins/module_utils/slinky_state.py, read()) - C(apis) (group/version), C(namespaces)
      (by name, the existing ones, each with its annotations), C(secrets) (by name, the existing ones, each with its
      labels and key names), C(releases) (by name, the installed ones, each with revision, status, chart, version,
      app_version and values), C(charts) (by release, each with chart, version and app_version), C(objects),
      C(nodesets) (Slinky's NodeSets - name, uid, replicas), C(daemons), C(workers) and C(controllers) (pods - name,
      labels, hostname, node, container images, phase, addresses and conditions), C(services), C(statefulset),
      C(config_map) (its slurm.conf), C(operator) (whether it is available), and with O(facts) C(facts) and
      C(facts_error).
  returned: success
  type: dict
"""

from ansible_collections.slime.hybrid.plugins.module_utils import kube_read, slinky_state


# Where the task runs on the controller itself, its action plugin (plugins/action/slinky_state.py) makes the same
# read in the controller's process instead.
def main():
    kube_read.run_module(slinky_state.OPTIONS, slinky_state.run)


if __name__ == "__main__":
    main()
