# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm's upgrade order on the Kubernetes side (module_utils/slurm_order.py). Against the real cluster: molecule
kube, verify_accounting.yml (refusals before any change)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.slime.hybrid.plugins.module_utils import slurm_order


def values(ctl="26.05-forky", dbd="26.05-forky", slurmd="26.05-forky", nodesets=None, accounting=True):
    out = {"controller": {"slurmctld": {"image": {"repository": "r/slurmctld", "tag": ctl}}},
           "nodesetDefaults": {"slurmd": {"image": {"repository": "r/slurmd", "tag": slurmd}}},
           "nodesets": nodesets if nodesets is not None else {"slinky": {}}}
    if accounting:
        out["accounting"] = {"enabled": True, "slurmdbd": {"image": {"repository": "r/slurmdbd", "tag": dbd}}}
    return out


def pod(app, tag, name=None):
    return {"metadata": {"name": name or app + "-0", "labels": {"app.kubernetes.io/name": app}},
            "spec": {"containers": [{"name": "logfile", "image": "r/alpine:3"}, {"name": app, "image": "r/%s:%s" % (app, tag)}]}}


@pytest.mark.parametrize("image, release", [
    ({"repository": "r/x", "tag": "26.05-ubuntu26.04"}, "26.05"),
    ({"repository": "r/x", "tag": "25.11.2-rockylinux9"}, "25.11"),
    ({"repository": "r/x"}, "26.05"),                      # the chart's tag
    ("r.example.org:5000/x:24.11", "24.11"),
    ("r.example.org:5000/x@sha256:0f", None),              # a digest names no release
    ({"repository": "r/x", "tag": "latest"}, None),
    ({"repository": "r/x", "tag": "260.5"}, None),
])
def test_image_version(image, release):
    assert slurm_order.image_version(image) == release


def test_targets_merge_the_nodeset_defaults_as_the_chart_does():
    v = values(nodesets={"a": {}, "b": {"slurmd": {"image": {"tag": "25.11-x"}}}, "off": {"enabled": False}})
    assert slurm_order.targets(v) == {"slurmctld": "26.05", "slurmdbd": "26.05", "slurmd": {"a": "26.05", "b": "25.11"}}
    assert slurm_order.targets(values(accounting=False))["slurmdbd"] is None
    external = dict(values(), accounting={"enabled": True, "external": True})
    assert slurm_order.targets(external)["slurmdbd"] is None


def test_in_order_nothing_is_refused():
    assert slurm_order.errors(values(), []) == []
    assert slurm_order.errors(values(), [pod("slurmctld", "26.05-forky"), pod("slurmdbd", "26.05-forky")]) == []
    # slurmdbd first, in a run of its own; then slurmctld; then slurmd
    assert slurm_order.errors(values(ctl="25.11-x", slurmd="25.11-x"), [pod("slurmctld", "25.11-x"), pod("slurmdbd", "25.11-x")]) == []
    assert slurm_order.errors(values(ctl="25.11-x", slurmd="25.05-x"), [pod("slurmctld", "25.11-x"), pod("slurmdbd", "25.11-x")]) == []
    assert slurm_order.slurmdbd_upgrade(values(ctl="25.11-x"), [pod("slurmdbd", "25.11-x")]) == ["25.11", "26.05"]
    assert slurm_order.errors(values(), [pod("slurmctld", "25.11-x"), pod("slurmdbd", "26.05-x")]) == []
    assert slurm_order.slurmdbd_upgrade(values(), [pod("slurmdbd", "26.05-x")]) == []


def test_slurmctld_past_slurmdbd_is_refused_naming_both_versions():
    assert slurm_order.errors(values(ctl="26.05-x", dbd="25.11-x"), []) == [
        "in the values, slurmctld 26.05 is newer than slurmdbd 25.11; slurmctld must not be newer than slurmdbd "
        "(%s)" % slurm_order.UPGRADE_GUIDE]
    # both at once, from 25.11: slurmctld would start before slurmdbd has converted the database
    errors = slurm_order.errors(values(), [pod("slurmctld", "25.11-x"), pod("slurmdbd", "25.11-x")])
    assert errors == ["slurmctld 26.05 would start while slurmdbd 25.11 runs, before slurmdbd 26.05 has converted the "
                      "database: upgrade slurmdbd first, in a run that changes only accounting.slurmdbd.image, then "
                      "slurmctld (%s)" % slurm_order.UPGRADE_GUIDE]


def test_downgrades_and_jumps_past_the_window_are_refused():
    errors = slurm_order.errors(values(ctl="25.11-x", dbd="25.11-x", slurmd="25.11-x"),
                                [pod("slurmctld", "26.05-x"), pod("slurmdbd", "26.05-x")])
    assert [e.split(":")[0] for e in errors] == ["slurmdbd 25.11 would replace slurmdbd 26.05",
                                                 "slurmctld 25.11 would replace slurmctld 26.05"]
    assert "the database" in errors[0] and "the database" not in errors[1]
    jump = slurm_order.errors(values(ctl="24.05-x", dbd="26.05-x", slurmd="24.05-x"), [pod("slurmdbd", "24.05-x")])
    assert jump[-1].startswith("slurmdbd 26.05 would replace slurmdbd 24.05, 4 major releases older: slurmdbd 26.05 "
                               "upgrades from at most 3 releases older; upgrade in steps")


def test_a_nodesets_slurmd_past_slurmctld_is_refused():
    errors = slurm_order.errors(values(slurmd="26.11-x", accounting=False), [])
    assert errors == ["NodeSet slinky: slurmd 26.11 is newer than slurmctld 26.05; slurmd must not be newer than the "
                      "controller (%s)" % slurm_order.UPGRADE_GUIDE]


def test_what_runs_is_read_from_the_daemons_container_and_unknown_tags_are_not_checked():
    assert slurm_order.running([pod("slurmctld", "26.05-x"), pod("slurmd", "27.05-x"), pod("slurmdbd", "sha")]) == {
        "slurmctld": "26.05", "slurmdbd": None}
    # a rollout: the newest counts
    assert slurm_order.running([pod("slurmdbd", "25.11-x", "a"), pod("slurmdbd", "26.05-x", "b")])["slurmdbd"] == "26.05"
    digest = values()
    digest["controller"]["slurmctld"]["image"] = "r/slurmctld@sha256:0f"
    assert slurm_order.errors(digest, [pod("slurmdbd", "25.11-x")]) == []


def test_the_charts_tag_of_every_slurm_image():
    base = os.environ.get("SLIME_VENDOR_DIR") or os.path.join(os.path.dirname(__file__), *[".."] * 6, "shared", "vendor")
    path = os.path.join(base, "slinky-1.2.1", "helm", "slurm", "values.yaml")
    if not os.path.exists(path):
        pytest.skip("the slurm chart 1.2.1 is not here (SLIME_VENDOR_DIR)")
    with open(path) as f:
        chart = yaml.safe_load(f)
    tags = {chart["controller"]["slurmctld"]["image"]["tag"], chart["accounting"]["slurmdbd"]["image"]["tag"],
            chart["nodesetDefaults"]["slurmd"]["image"]["tag"]}
    assert tags == {slurm_order.CHART_TAG}
