# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The model's GPUs and what Slurm makes of them (module_utils/gres.py), the plan and cloud-init of a
GPU worker, the controller's chart values and the doctor's rows. Against real Slurm: molecule kube,
verify_gpu.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import subprocess

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import cloud_init, cluster_model, doctor, gres, host_state, names, slinky, worker, worker_drift

MODEL = {
    "name": "lab",
    "slurm_version": "26.05",
    "controller": {"host": "slurm-controller-0", "address": "10.244.0.5"},
    "nodeport": {"address": "10.127.0.30", "port": 30017},
    "srun_port_range": "60001-60100",
}
FAKE = {"names": ["bm-[1-2]"], "type": "fake", "files": "/dev/nvidia[0-1]"}


def model(gpus):
    return cluster_model.normalize(dict(MODEL, gpus=gpus))


def node(name="bm-1", **changes):
    return dict({"name": name, "features": ["baremetal"], "conf_extra": {}}, **changes)


@pytest.mark.parametrize("text, expected", [
    ("bm-1", ["bm-1"]),
    ("gpu-[01-03,7]", ["gpu-01", "gpu-02", "gpu-03", "gpu-7"]),
    ("/dev/nvidia[0-1]", ["/dev/nvidia0", "/dev/nvidia1"]),
    ("n[8-10]x", ["n8x", "n9x", "n10x"]),
])
def test_expand_reads_one_bracket_range_as_slurm_writes_it(text, expected):
    assert names.expand(text) == expected


@pytest.mark.parametrize("text, why", [("a[1-2]b[3]", "bracket"), ("a[2-1]", "inverted"), ("a[x]", "bracket"),
                                       ("a[1-]", "range '1-'"), ("", "not a name")])
def test_expand_refuses_what_it_cannot_read(text, why):
    with pytest.raises(ValueError, match=why.replace("[", r"\[")):
        names.expand(text)


def test_a_declared_group_is_expanded_counted_and_its_own_output():
    out = model({"nodes": [FAKE]})
    assert out["gpus"] == {"partition": "gpu", "feature": "gpu", "nodes": [
        {"names": ["bm-1", "bm-2"], "type": "fake", "count": 2, "files": ["/dev/nvidia0", "/dev/nvidia1"], "autodetect": None}]}
    assert cluster_model.normalize(out) == out
    assert cluster_model.normalize(MODEL)["gpus"] is None


def test_every_error_of_the_gpus_section_at_once():
    errors = cluster_model.validate(dict(MODEL, gpus={
        "partition": "all", "feature": "a,b", "typo": 1,
        "nodes": [{"names": ["bm-1"], "files": "/dev/nvidia[0-1]", "count": 3},
                  {"names": ["bm-2"], "autodetect": "nvm"},
                  {"names": ["bm-3"], "type": "a:b", "files": "/etc/passwd"},
                  {"names": ["bm-4"], "type": "t4"},
                  {"names": ["bm-5"], "type": "t4", "files": "/dev/nvidia0", "autodetect": "nvidia"},
                  {"names": [], "type": "t4", "files": "/dev/nvidia0"},
                  {"names": ["bm-6"], "type": "t4", "files": ["/dev/nvidia0", "/dev/nvidia0"], "size": 1}]}))
    assert errors == [
        "gpus.typo is not a setting of slime_cluster (gpus); allowed: feature, nodes, partition",
        "gpus.partition='all' must be empty (no GPU partition) or a partition name (letters, digits, '_', '-'), "
        "not all (the partition of every node)",
        "gpus.feature='a,b' is not a Slurm feature name (letters, digits, '_', '.', '-')",
        "gpus.nodes[0].type is required with files (the GRES type jobs ask for, e.g. a100)",
        "gpus.nodes[0].count=3 but files name 2 devices (Slurm stops on a count that does not match File)",
        "gpus.nodes[1].autodetect='nvm' is not a GPU detection of Slurm 26.05; allowed: nvidia, nvml, full, rsmi, oneapi, nrt",
        "gpus.nodes[2].type='a:b' is not a GRES type Slurm takes (letters, digits, '_', '.', '-'; no ':' or ',')",
        "gpus.nodes[2].files: '/etc/passwd' is not a device file under /dev",
        "gpus.nodes[3]: no devices: give files (the GPUs' device files) or autodetect (nvidia, nvml, full, rsmi, oneapi, nrt)",
        "gpus.nodes[4]: files and autodetect both given; state the device files, or let slurmd detect them, not both",
        "gpus.nodes[5].names=[] must be a list of Slurm node names (hostlist ranges allowed, e.g. gpu-[01-16])",
        "gpus.nodes[6].size is not a setting of a GPU group; allowed: names, type, count, files, autodetect",
        "gpus.nodes[6].files: /dev/nvidia0 named twice (Slurm stops on a device named twice)",
    ]


def test_a_host_with_two_kinds_of_gpus_needs_a_type_for_each_and_devices_of_its_own():
    mixed = [{"names": ["bm-1"], "type": "a100", "files": "/dev/nvidia[0-1]"},
             {"names": ["bm-1"], "type": "t4", "files": "/dev/nvidia2"}]
    out = model({"nodes": mixed})
    groups = gres.node_groups(out["gpus"], "bm-1")
    assert gres.conf_gres(groups) == "gpu:a100:2,gpu:t4:1"
    assert cluster_model.validate(dict(MODEL, gpus={"nodes": [mixed[0], dict(mixed[1], type="a100", files="/dev/nvidia1")]})) == [
        "gpus: bm-1 has GPUs of 2 groups: each needs a type of its own (a count without a type on a host with more than one "
        "kind of GPU)", "gpus: bm-1 has /dev/nvidia1 in more than one group"]
    assert cluster_model.validate(dict(MODEL, gpus={"nodes": [mixed[0], {"names": ["bm-1"], "autodetect": "nvidia"}]})) == [
        "gpus: bm-1 is in 2 groups and one detects its GPUs; a node whose GPUs slurmd detects is in one group"]


def test_the_controllers_gres_conf_has_a_line_per_group():
    out = model({"nodes": [FAKE, {"names": ["dgx-[01-02]"], "autodetect": "nvidia", "type": "h100", "count": 8}]})
    assert gres.gres_conf(out["gpus"]).splitlines()[1:] == [
        "NodeName=bm-1,bm-2 Name=gpu Type=fake File=/dev/nvidia0,/dev/nvidia1",
        "NodeName=dgx-01,dgx-02 AutoDetect=nvidia",
    ]
    # a detected node states no gpu in --conf: slurmd detects only then (slurmd.c, autofill)
    assert gres.conf_gres(gres.node_groups(out["gpus"], "dgx-01")) == ""


def test_gres_conf_changes_name_the_nodes_whose_running_gpu_jobs_slurmctld_would_kill():
    both = gres.gres_conf(model({"nodes": [FAKE]})["gpus"])
    one = gres.gres_conf(model({"nodes": [dict(FAKE, names=["bm-1"]), {"names": ["bm-2"], "type": "fake", "files": "/dev/nvidia0"}]})["gpus"])
    more = gres.gres_conf(model({"nodes": [FAKE, {"names": ["dgx-01"], "autodetect": "nvidia"}]})["gpus"])
    assert gres.conf_changes(both, one) == ["bm-2"]   # bm-1's line is split off, the same words: unchanged
    assert gres.conf_changes(both, both) == [] and gres.conf_changes(both, more) == []   # dgx-01 is new: no job of it
    assert gres.conf_changes(more, both) == ["dgx-01"]   # its line goes away
    assert gres.conf_changes("", both) == [] and gres.conf_changes(both, "") == ["bm-1", "bm-2"]
    # hostlists as a site's gres.conf would write them, and words in another order
    assert gres.conf_changes("NodeName=n[1-2,4] Name=gpu File=/dev/nvidia0\n", "NodeName=n1,n2 File=/dev/nvidia0 Name=gpu\n") == ["n4"]
    # the filter reads configFiles of the chart values
    values = {"configFiles": {"gres.conf": one}}
    assert slinky_filters()["gres_conf_changes"]({"configFiles": {"gres.conf": both}}, values) == ["bm-2"]
    assert slinky_filters()["gres_conf_changes"]({}, values) == [] and slinky_filters()["gres_conf_changes"](None, values) == []


def slinky_filters():
    from ansible_collections.slime.hybrid.plugins.filter.slinky import FilterModule
    return FilterModule().filters()


@pytest.mark.parametrize("text, found", [
    ("gpu:fake:2", {"fake": 2}), ("gpu:fake:2(S:0-1)", {"fake": 2}), ("(null)", {}), (None, {}),
    ("gpu:a100:4(S:0),gpu:t4:1,shard:8", {"a100": 4, "t4": 1}), ("gpu:2", {"": 2}),
])
def test_parse_record(text, found):
    assert gres.parse_record(text) == found


DECLARED = model({"nodes": [FAKE]})["gpus"]["nodes"]
DETECTED = model({"nodes": [{"names": ["bm-1"], "autodetect": "nvidia", "type": "h100", "count": 8}]})["gpus"]["nodes"]
LOOSE = model({"nodes": [{"names": ["bm-1"], "autodetect": "nvidia"}]})["gpus"]["nodes"]
# What slurmd 26.05.5 registered with AutoDetect=nvidia on a real NVIDIA H200 (driver 580.159.04),
# benchmarks/gpu-check-chroot.sh, 2026-11-27: the type is the driver's model name, not "h200".
H200_RECORD = {"Gres": "gpu:nvidia_h200:1(S:0)", "State": "IDLE+DYNAMIC_NORM"}
H200 = model({"nodes": [{"names": ["bm-1"], "autodetect": "nvidia", "type": "nvidia_h200", "count": 1}]})["gpus"]["nodes"]
H200_SHORT = model({"nodes": [{"names": ["bm-1"], "autodetect": "nvidia", "type": "h200"}]})["gpus"]["nodes"]


@pytest.mark.parametrize("groups, record, reasons", [
    (DECLARED, None, []),
    (DECLARED, {"Gres": "gpu:fake:2(S:0)", "State": "IDLE+DYNAMIC_NORM"}, []),
    (DECLARED, {"Gres": "(null)", "State": "IDLE"}, ["bm-1 has Gres=(null) in slurmctld, the model says gpu:fake:2"]),
    (DECLARED, {"Gres": "gpu:fake:1", "State": "IDLE"}, ["bm-1 has Gres=gpu:fake:1 in slurmctld, the model says gpu:fake:2"]),
    (DECLARED, {"Gres": "gpu:fake:2", "State": "IDLE+DRAIN+DYNAMIC_NORM+INVALID_REG",
                "Reason": "gres/gpu count reported lower than configured (1 < 2)"},
     ["bm-1 is IDLE+DRAIN+DYNAMIC_NORM+INVALID_REG in slurmctld (gres/gpu count reported lower than configured (1 < 2)): "
      "it registered with fewer GPUs than it states"]),
    ([], {"Gres": "gpu:fake:2", "State": "IDLE"}, ["bm-1 has Gres=gpu:fake:2 in slurmctld, the model says no GPUs"]),
    ([], {"Gres": "(null)", "State": "IDLE+INVALID_REG"}, []),
    (DETECTED, {"Gres": "gpu:h100:8(S:0-1)"}, []),
    (DETECTED, {"Gres": "gpu:h100:7(S:0-1)"}, ["bm-1 has Gres=gpu:h100:7(S:0-1) in slurmctld, the model says gpu:h100:8"]),
    (DETECTED, {"Gres": "gpu:nvidia_h100:8"}, ["bm-1 has Gres=gpu:nvidia_h100:8 in slurmctld, the model says gpu:h100:8"]),
    (LOOSE, {"Gres": "gpu:nvidia_h100_80gb_hbm3:8"}, []),
    (LOOSE, {"Gres": "(null)"}, ["bm-1 has Gres=(null) in slurmctld, the model says gpu:(detected):(detected)"]),
    (LOOSE, H200_RECORD, []),
    (H200, H200_RECORD, []),
    (H200_SHORT, H200_RECORD, ["bm-1 has Gres=gpu:nvidia_h200:1(S:0) in slurmctld, the model says gpu:h200:(detected)"]),
])
def test_record_drift(groups, record, reasons):
    assert gres.record_drift("bm-1", groups, record) == reasons


def test_device_problems_read_the_kind_host_state_sees():
    # /dev/null is a character device on every Linux; a regular file is no device
    files = {"/dev/null": host_state.file_state("/dev/null"), "/etc/hostname": host_state.file_state("/etc/hostname")}
    assert files["/dev/null"]["kind"] == "char" and "sha256" not in files["/dev/null"]
    groups = [{"type": "fake", "count": 2, "files": ["/dev/null", "/etc/hostname"]}]
    assert gres.device_problems(groups, files) == [
        "the model gives this host 2 GPUs of type fake at /dev/null,/etc/hostname, and /etc/hostname is not a device here "
        "(GPU driver not loaded, or its device files not made yet: nvidia-persistenced or nvidia-modprobe make them)"]
    assert gres.device_problems([dict(groups[0], files=["/dev/null"])], files) == []


def test_the_plan_of_a_gpu_worker_states_its_gres_and_feature():
    out = model({"nodes": [FAKE]})
    plan = worker.plan(out, node(conf_extra={"Weight": 5}))
    assert plan["features"] == ["baremetal", "gpu"]
    assert plan["gpus"]["gres"] == "gpu:fake:2" and plan["gpus"]["files"] == ["/dev/nvidia0", "/dev/nvidia1"]
    assert '-N bm-1 --conf "Feature=baremetal,gpu Gres=gpu:fake:2 Weight=5"' in plan["dropin"]["content"]
    assert "/dev/nvidia1" in worker_drift.observe_targets(plan, "bm-1")["files"]
    other = worker.plan(out, node("bm-3"))
    assert other["gpus"]["groups"] == [] and other["features"] == ["baremetal"] and cloud_init.device_check(other) is None
    assert "Gres" not in other["dropin"]["content"]
    for name in ("bm-1", "bm-3"):  # with gpus, GPUs are the model's only
        with pytest.raises(ValueError, match="%s: conf_extra states Gres and slime_cluster.gpus is set" % name):
            worker.plan(out, node(name, conf_extra={"Gres": "gpu:2"}))
    # without gpus the collection leaves GRES alone: a site's own Gres in conf_extra is no drift
    plain = worker.plan(cluster_model.normalize(MODEL), node(conf_extra={"Gres": "gpu:2"}))
    assert plain["gpus"] is None and 'Gres=gpu:2"' in plain["dropin"]["content"]


@pytest.mark.parametrize("devices, ok", [(["/dev/null"], True), (["/dev/null", "/nonexistent/nvidia1"], False)])
def test_cloud_init_checks_the_devices_before_anything_changes(devices, ok):
    out = model({"nodes": [{"names": ["bm-1"], "type": "fake", "files": ["/dev/nvidia0"]}]})
    plan = worker.plan(out, node())
    plan["gpus"]["files"] = devices  # devices this machine has, or not
    runcmd = cloud_init.cloud_config(plan, "a2V5")["runcmd"]
    check = cloud_init.device_check(plan)
    assert runcmd[1] == check  # after the firewalld check, before the first change
    run = subprocess.run(["sh", "-c", check + "; echo reached"], capture_output=True, text=True, check=False)
    assert ("reached" in run.stdout) is ok
    assert ok or "slime.hybrid: the model gives this host the GPU device /nonexistent/nvidia1" in run.stderr


def test_conflicts_name_a_missing_device():
    plan = worker.plan(model({"nodes": [FAKE]}), node())
    observed = {"units": {}, "files": {"/dev/nvidia0": {"exists": True, "kind": "char"}, "/dev/nvidia1": {"exists": False}}}
    assert worker_drift.conflicts(dict(plan, firewall=None), observed) == [
        "the model gives this host 2 GPUs of type fake at /dev/nvidia0,/dev/nvidia1, and /dev/nvidia1 is not a device here "
        "(GPU driver not loaded, or its device files not made yet: nvidia-persistenced or nvidia-modprobe make them)"]


def test_chart_values_carry_gres_types_gres_conf_its_digest_and_the_gpu_partition():
    intent = dict(MODEL, gpus={"nodes": [FAKE]})
    values = slinky.chart_values(cluster_model.normalize_intent(intent), {"slinky": {}})
    extra = values["controller"]["extraConfMap"]
    assert extra["GresTypes"] == "gpu"
    assert extra["NodeSet"] == "slime-gpu Feature=gpu"
    assert extra["PartitionName"] == "gpu Nodes=slime-gpu MaxTime=UNLIMITED State=UP"
    assert values["configFiles"]["gres.conf"].endswith("NodeName=bm-1,bm-2 Name=gpu Type=fake File=/dev/nvidia0,/dev/nvidia1\n")
    digest = values["controller"]["metadata"]["annotations"][slinky.GRES_CONF_ANNOTATION]
    changed = slinky.chart_values(cluster_model.normalize_intent(dict(MODEL, gpus={"nodes": [dict(FAKE, files="/dev/nvidia0")]})))
    assert changed["controller"]["metadata"]["annotations"][slinky.GRES_CONF_ANNOTATION] != digest
    # the partition all keeps holding every node; no GPU partition when the model says so
    assert values["partitions"]["all"]["nodesets"] == ["ALL"]
    bare = slinky.chart_values(cluster_model.normalize_intent(dict(MODEL, gpus={"partition": "", "nodes": [FAKE]})))
    assert "PartitionName" not in bare["controller"]["extraConfMap"] and bare["controller"]["extraConfMap"]["GresTypes"] == "gpu"
    plain = slinky.chart_values(cluster_model.normalize_intent(MODEL))
    assert "GresTypes" not in plain["controller"]["extraConfMap"] and "configFiles" not in plain


def test_site_values_that_would_override_the_models_gpus_are_refused():
    out = cluster_model.normalize_intent(dict(MODEL, gpus={"nodes": [FAKE]}))
    site = {"configFiles": {"gres.conf": "AutoDetect=nvml\n", "cgroup.conf": ""}, "controller": {"extraConfMap": {"GresTypes": "gpu,mps"}}}
    assert slinky.model_values_errors(out, site, {"slime-gpu": {}}) == [
        "slinky_slurm_values.configFiles has a gres.conf and slime_cluster.gpus is set: the collection writes the controller's "
        "gres.conf from slime_cluster.gpus; state the GPUs there",
        "slinky_slurm_values.controller.extraConfMap.GresTypes is set and slime_cluster.gpus is set: the collection writes "
        "GresTypes from slime_cluster.gpus",
        "slinky_nodesets.slime-gpu: the name of the slurm.conf NodeSet of the GPU nodes (slime_cluster.gpus.feature gpu); "
        "name the NodeSet otherwise"]
    assert slinky.model_values_errors(cluster_model.normalize_intent(MODEL), site, {}) == []


def test_the_doctor_reports_the_gpus_of_each_gpu_node():
    out = model({"nodes": [FAKE]})
    nodes = {
        "bm-1": {"NodeName": "bm-1", "NodeAddr": "10.127.0.61", "State": "IDLE+DYNAMIC_NORM", "Gres": "gpu:fake:2(S:0)"},
        "bm-2": {"NodeName": "bm-2", "NodeAddr": "10.127.0.62", "State": "IDLE+DRAIN+DYNAMIC_NORM+INVALID_REG",
                 "Gres": "gpu:fake:2", "Reason": "gres/gpu count reported lower than configured (1 < 2)"},
        "slinky-0": {"NodeName": "slinky-0", "NodeAddr": "10.244.1.4", "State": "IDLE", "Gres": "(null)"},
    }
    rows = dict((row["name"], row) for row in doctor.controller_findings(nodes, out))
    assert rows["slurmctld GPUs of bm-1"]["ok"] and rows["slurmctld GPUs of bm-1"]["expected"] == "gpu:fake:2"
    broken = rows["slurmctld GPUs of bm-2"]
    assert not broken["ok"] and broken["observed"] == "gpu:fake:2 IDLE+DRAIN+DYNAMIC_NORM+INVALID_REG"
    assert broken["hint"] == ("bm-2 is IDLE+DRAIN+DYNAMIC_NORM+INVALID_REG in slurmctld (gres/gpu count reported lower than "
                              "configured (1 < 2)): it registered with fewer GPUs than it states: check the GPUs and their "
                              "driver on the host, then re-run site.yml, which renews the node's record")
    assert "slurmctld GPUs of slinky-0" not in rows
    assert [row["name"] for row in doctor.controller_findings(nodes)] == [
        "slurmctld -> slurmd bm-1 (NodeAddr 10.127.0.61)", "slurmctld -> slurmd bm-2 (NodeAddr 10.127.0.62)",
        "slurmctld -> slurmd slinky-0 (NodeAddr 10.244.1.4)"]


def test_the_gpu_drift_filter_reads_a_plan_and_a_record():
    from ansible_collections.slime.hybrid.plugins.filter.worker import FilterModule
    gpu_drift = FilterModule().filters()["gpu_drift"]
    plan = worker.plan(model({"nodes": [{"names": ["bm-1"], "autodetect": "nvidia", "count": 8}]}), node())
    assert gpu_drift({"Gres": "gpu:nvidia_h100:8(S:0-1)", "State": "IDLE"}, plan, "bm-1") == []
    assert gpu_drift({"Gres": "(null)", "State": "IDLE"}, plan, "bm-1") == [
        "bm-1 has Gres=(null) in slurmctld, the model says gpu:(detected):8"]
    # a node without GPUs in a model with gpus: a record with GPUs is a difference, none is not
    plain = worker.plan(model({"nodes": []}), node())
    assert gpu_drift({"Gres": "(null)"}, plain, "bm-1") == [] and gpu_drift({}, plain, "bm-1") == []
    assert gpu_drift({"Gres": "gpu:t4:1"}, plain, "bm-1") == ["bm-1 has Gres=gpu:t4:1 in slurmctld, the model says no GPUs"]
    # a model without gpus leaves a site's own GRES alone
    assert gpu_drift({"Gres": "gpu:t4:1"}, worker.plan(cluster_model.normalize(MODEL), node()), "bm-1") == []
