# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over plugins/module_utils/worker.py: what a bare-metal worker is made of, once, for
the SSH path (worker_plan) and the cloud-init path (worker_user_data) alike."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.slime.hybrid.plugins.filter.cluster import model_or_fail
from ansible_collections.slime.hybrid.plugins.module_utils import cloud_init, cluster_model, secret_file, worker, worker_drift


class _UserDataDumper(yaml.SafeDumper):
    """Readable user-data: files' contents as literal blocks, each command on one line."""


def _text(dumper, text):
    return dumper.represent_scalar("tag:yaml.org,2002:str", str.__str__(text), style="|" if "\n" in text else None)


def _mapping(dumper, data):
    return dumper.represent_mapping("tag:yaml.org,2002:map", list(data.items()), flow_style=False)


def _sequence(dumper, data):
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=all(isinstance(item, str) for item in data))


# The types themselves, and (multi) the subclasses Ansible hands over (unsafe and tagged values).
for _type, _represent in ((str, _text), (dict, _mapping), (list, _sequence)):
    _UserDataDumper.add_representer(_type, _represent)
    _UserDataDumper.add_multi_representer(_type, _represent)


def _worker_plan(model, node):
    try:
        return worker.plan(model_or_fail(cluster_model.normalize, model), node)
    except ValueError as exc:
        raise AnsibleFilterError("worker_plan: %s" % exc)


def _worker_user_data(nodes, model, key_b64):
    """{name: cloud-init user-data} for nodes ({name, features, conf_extra, worker}) of the model."""
    try:
        secret_file.decode_key(key_b64)
    except ValueError as exc:
        raise AnsibleFilterError("worker_user_data: slurm.key: %s" % exc)
    out = {}
    for node in nodes:
        node = {"name": node["name"], "features": node.get("features", ["baremetal"]),
                "conf_extra": node.get("conf_extra") or {}, "worker": node.get("worker") or {}}
        data = cloud_init.cloud_config(_worker_plan(model, node), key_b64)
        try:
            text = yaml.dump(data, Dumper=_UserDataDumper, width=1 << 16)
        except yaml.YAMLError as exc:  # the message would quote the data, slurm.key included
            raise AnsibleFilterError("worker_user_data: %s: cannot write the user-data (%s)" % (node["name"], type(exc).__name__))
        out[node["name"]] = "\n".join([
            "#cloud-config",
            "# slime.hybrid: Slurm worker %s (plugins/module_utils/worker.py, the plan roles/slurm_node" % node["name"],
            "# applies over SSH), in its order: slurm user, slurm.key, network, slurmd drop-in, packages, slurmd.",
            text])
    return out


def _gpu_drift(record, plan, name):
    """Why the GPUs of slurmctld's record of the node (scontrol_record or slurm_node_state's) are not the plan's."""
    return worker_drift.gpu_record_drift(plan, name, record or None)


class FilterModule(object):
    """slime.hybrid worker filters."""

    def filters(self):
        return {
            "gpu_drift": _gpu_drift,
            "slurm_node_input_errors": worker.input_errors,
            "worker_plan": _worker_plan,
            "worker_user_data": _worker_user_data,
        }
