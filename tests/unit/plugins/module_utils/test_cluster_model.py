# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model as cm
from ansible_collections.slime.hybrid.plugins.module_utils import names


def valid_model(**changes):
    """A complete, valid slime_cluster; ``changes`` maps dotted keys to new values
    (the value ``DELETE`` removes the key)."""
    model = {
        "name": "slurm",
        "controller": {"host": "slurm-controller", "address": "10.126.0.11"},
        "nodeport": {"address": "10.127.0.50", "port": 30017},
        "srun_port_range": "60001-60100",
        "slurm_version": "26.05",
    }
    for dotted, value in changes.items():
        *parents, leaf = dotted.split(".")
        target = model
        for key in parents:
            target = target.setdefault(key, {})
        if value is DELETE:
            target.pop(leaf, None)
        else:
            target[leaf] = value
    return model


DELETE = object()


# --------------------------------------------------------------------------- ports


@pytest.mark.parametrize(
    "value, expected",
    [
        ("60001-60100", (60001, 60100)),
        ("60001:60100", (60001, 60100)),
        (" 60001 - 60100 ", (60001, 60100)),
        ([60001, 60100], (60001, 60100)),
        ((60001, 60100), (60001, 60100)),
        (["60001", "60100"], (60001, 60100)),
        ("60001-60001", (60001, 60001)),
        ("1-65535", (1, 65535)),
    ],
)
def test_parse_port_range_ok(value, expected):
    assert cm.parse_port_range(value) == expected


@pytest.mark.parametrize(
    "value, message",
    [
        ("60100-60001", "inverted"),
        ([60100, 60001], "inverted"),
        ("0-100", "outside 1-65535"),
        ("60001-65536", "outside 1-65535"),
        ("60001", "not a port range"),
        ("60001-", "not a port range"),
        ("abc-def", "not a port range"),
        ("60001..60100", "not a port range"),
        ("", "not a port range"),
        (None, "not a port range"),
        ([60001, 60050, 60100], "not a port range"),
    ],
)
def test_parse_port_range_rejects(value, message):
    with pytest.raises(ValueError, match=message):
        cm.parse_port_range(value)


@pytest.mark.parametrize(
    "nodes, pty, expected",
    [
        (1, False, 4),
        (48, False, 4),
        (49, False, 6),
        (96, False, 6),
        (97, False, 8),
        (144, False, 8),
        (145, False, 10),
        (1, True, 5),
        (49, True, 7),
        ("64", False, 6),
    ],
)
def test_srun_ports_needed(nodes, pty, expected):
    assert cm.srun_ports_needed(nodes, pty=pty) == expected


@pytest.mark.parametrize("nodes", [0, -1])
def test_srun_ports_needed_rejects_fewer_than_one_node(nodes):
    with pytest.raises(ValueError, match="at least 1"):
        cm.srun_ports_needed(nodes)


# srun_concurrency sruns, each --pty over max_node_count nodes: 5 ports up to 48 nodes, 7 at 64,
# 47 at 1024 (test_srun_ports_needed)
@pytest.mark.parametrize("concurrency, max_nodes, size, fits", [
    (4, 64, 28, True),
    (4, 64, 27, False),
    (1, 64, 7, True),
    (20, 48, 100, True),    # the lab's 100 ports hold 20 at 48 nodes or fewer
    (21, 48, 100, False),
    (8, 1024, 376, True),
    (8, 1024, 375, False),
])
def test_srun_range_sized_for_the_concurrency(concurrency, max_nodes, size, fits):
    model = valid_model(srun_port_range="60001-%d" % (60000 + size), srun_concurrency=concurrency,
                        max_node_count=max_nodes)
    errors = cm.validate(model)
    assert (not errors) == fits, errors
    if fits:
        assert cm.normalize(model)["srun_concurrency"] == concurrency
    else:
        assert errors == ["srun_port_range=60001-%d has %d ports; srun_concurrency=%d sruns at once on a submit host, "
                          "each --pty over max_node_count=%d nodes (%d ports), need %d"
                          % (60000 + size, size, concurrency, max_nodes, cm.srun_ports_needed(max_nodes, pty=True),
                             concurrency * cm.srun_ports_needed(max_nodes, pty=True))]


def test_srun_concurrency_defaults_to_four():
    assert cm.normalize(valid_model())["srun_concurrency"] == 4


# --------------------------------------------------------------------------- the model


def test_normalize_valid_model():
    out = cm.normalize(valid_model())
    assert out["conf_server"] == "10.127.0.50:30017"
    assert out["name"] == "slurm"
    assert out["network_mode"] == "nat"
    assert out["slurm_version"] == "26.05"
    assert out["max_node_count"] == 64
    assert out["controller"] == {"host": "slurm-controller", "aliases": [], "address": "10.126.0.11", "port": 6817,
                                 "backups": []}
    assert out["nodeport"] == {"address": "10.127.0.50", "port": 30017, "range": "30000-32767", "static_band": True}


def test_controller_aliases():
    out = cm.normalize(valid_model(**{"controller.host": "slurm-controller.slurm",
                                      "controller.aliases": ["slurm-controller-0", "slurm-controller.slurm"]}))
    assert out["controller"]["aliases"] == ["slurm-controller-0"]  # the host itself is not repeated
    for bad in ("slurm-controller-0", ["bad name"], [3]):
        (error,) = cm.validate(valid_model(**{"controller.aliases": bad}))
        assert error.startswith("controller.aliases=") and "must be a list of host names" in error
    assert out["slurmd_port"] == 6818
    assert out["srun_port_range"] == {
        "first": 60001, "last": 60100, "size": 100, "conf": "60001-60100", "iptables": "60001:60100",
    }
    assert out["dnat"] == [
        {"name": "slurmctld", "destination": "10.126.0.11", "ports": "6817", "to": "10.127.0.50:30017",
         "comment": "slime.hybrid/slurmctld 10.126.0.11:6817>10.127.0.50:30017"},
        {"name": "controller-srun", "destination": "10.126.0.11", "ports": "60001:60100", "to": "10.127.0.50",
         "comment": "slime.hybrid/controller-srun 10.126.0.11:60001:60100>10.127.0.50"},
    ]
    assert out["inbound"] == [
        {"name": "slurmd", "ports": "6818", "comment": "slime.hybrid/in-slurmd tcp:6818"},
        {"name": "srun", "ports": "60001:60100", "comment": "slime.hybrid/in-srun tcp:60001:60100"},
    ]
    assert cm.validate(valid_model()) == []


@pytest.mark.parametrize("srun_range", ["60001:60100", [60001, 60100], " 60001 - 60100 "])
def test_normalize_accepts_every_range_form(srun_range):
    assert cm.normalize(valid_model(srun_port_range=srun_range)) == cm.normalize(valid_model())


def test_normalize_accepts_strings_for_numbers_and_strips_addresses():
    out = cm.normalize(valid_model(**{"nodeport.port": "30017", "nodeport.address": " 10.127.0.50 ",
                                      "max_node_count": "64"}))
    assert out == cm.normalize(valid_model())


def test_normalize_follows_a_nodeport_change_everywhere():
    out = cm.normalize(valid_model(**{"nodeport.port": 31000}))
    assert out["conf_server"] == "10.127.0.50:31000"
    assert out["nodeport"]["static_band"] is False
    assert out["dnat"][0]["to"] == "10.127.0.50:31000"
    assert out["dnat"][0]["comment"] == "slime.hybrid/slurmctld 10.126.0.11:6817>10.127.0.50:31000"


def test_normalize_custom_srun_range():
    out = cm.normalize(valid_model(**{"srun_port_range": "40001-40020", "max_node_count": 8}))
    assert out["dnat"][1]["ports"] == "40001:40020"
    assert [rule["ports"] for rule in out["inbound"]] == ["6818", "40001:40020"]


def test_ports_slinky_fixes_are_refused_when_changed():
    # slurm-operator v1.2.1 writes SlurmctldPort=6817 and SlurmdPort=6818 (common/const.go) into
    # its slurm.conf: another port in the model would DNAT and open a port nobody uses.
    errors = cm.validate(valid_model(**{"controller.port": 7817, "slurmd_port": 7818}))
    assert errors == [
        "controller.port=7817: Slinky's operator writes SlurmctldPort=6817 into slurm.conf whatever the chart says, "
        "and bare metal's slurmd follows slurm.conf; allowed: 6817",
        "slurmd_port=7818: Slinky's operator writes SlurmdPort=6818 into slurm.conf whatever the chart says, "
        "and bare metal's slurmd follows slurm.conf; allowed: 6818",
    ]
    assert cm.validate(valid_model(**{"controller.port": "6817", "slurmd_port": 6818})) == []


@pytest.mark.parametrize("changes, label", [
    ({"nodeport.address": "fd00:0::50"}, "nodeport.address='fd00:0::50'"),
    ({"controller.address": "fd00::11"}, "controller.address='fd00::11'"),
    ({"network_mode": "routed", "pod_routes": [{"cidr": "fd00:10::/64", "via": "10.127.0.50"}]}, "pod_routes[0].cidr='fd00:10::/64'"),
    ({"network_mode": "routed", "pod_routes": [{"cidr": "10.126.0.0/24", "via": "fd00::50"}]}, "pod_routes[0].via='fd00::50'"),
])
def test_ipv6_is_refused_by_name_not_accepted_and_left_unapplied(changes, label):
    errors = cm.validate(valid_model(**changes))
    assert len(errors) == 1, errors
    assert errors[0].startswith(label + " is IPv6; the bare-metal side")
    assert "IPv4 only" in errors[0]


def test_normalize_does_not_modify_input_or_defaults():
    model = valid_model()
    before = copy.deepcopy(model)
    defaults = copy.deepcopy(cm.DEFAULTS)
    cm.normalize(model)
    cm.normalize(valid_model(**{"nodeport.port": 31000}))
    assert model == before
    assert cm.DEFAULTS == defaults


INVALID_CASES = [
    # id, changes, substrings of the one expected error
    ("srun-contains-slurmctld-port", {"srun_port_range": "6790-6817"},
     ["srun_port_range=6790-6817", "controller.port 6817"]),
    ("srun-contains-slurmd-port", {"srun_port_range": "6818-6900"},
     ["srun_port_range=6818-6900", "slurmd_port 6818"]),
    ("srun-inverted", {"srun_port_range": "60100-60001"},
     ["srun_port_range", "'60100-60001'", "inverted"]),
    ("srun-garbage", {"srun_port_range": "lots"}, ["srun_port_range", "'lots'"]),
    ("srun-too-small", {"srun_port_range": "60001-60003"},
     ["srun_port_range=60001-60003", "3 ports", "srun_concurrency=4", "max_node_count=64", "(7 ports)", "need 28"]),
    ("srun-too-small-for-100-nodes", {"srun_port_range": "60001-60030", "max_node_count": 100},
     ["srun_port_range=60001-60030", "30 ports", "max_node_count=100", "(9 ports)", "need 36"]),
    ("srun-too-small-for-the-concurrency", {"srun_port_range": "60001-60100", "srun_concurrency": 15},
     ["srun_port_range=60001-60100", "100 ports", "srun_concurrency=15", "(7 ports)", "need 105"]),
    ("srun-concurrency-zero", {"srun_concurrency": 0}, ["srun_concurrency=0", "positive integer", "at once"]),
    ("srun-concurrency-word", {"srun_concurrency": "many"}, ["srun_concurrency='many'", "positive integer"]),
    ("srun-concurrency-bool", {"srun_concurrency": True}, ["srun_concurrency=True", "positive integer"]),
    ("srun-concurrency-fraction", {"srun_concurrency": 2.5}, ["srun_concurrency=2.5", "positive integer"]),
    ("srun-overlaps-nodeports", {"srun_port_range": "30000-30100"},
     ["srun_port_range=30000-30100", "NodePort range 30000-32767"]),
    ("srun-overlaps-nodeports-low-edge", {"srun_port_range": "29950-30000"},
     ["srun_port_range=29950-30000", "NodePort range"]),
    ("srun-overlaps-nodeports-high-edge", {"srun_port_range": "32767-32800"},
     ["srun_port_range=32767-32800", "NodePort range"]),
    ("srun-privileged", {"srun_port_range": "1000-1100"}, ["srun_port_range=1000-1100", "below 1024"]),
    ("srun-missing", {"srun_port_range": DELETE}, ["srun_port_range is required"]),
    ("nodeport-80", {"nodeport.port": 80}, ["nodeport.port=80", "30000-32767"]),
    ("nodeport-32768", {"nodeport.port": 32768}, ["nodeport.port=32768", "30000-32767"]),
    ("nodeport-not-a-number", {"nodeport.port": "http"}, ["nodeport.port='http'", "not a port number"]),
    ("nodeport-port-missing", {"nodeport.port": DELETE}, ["nodeport.port is required"]),
    ("nodeport-address-hostname", {"nodeport.address": "k8s-node-1"},
     ["nodeport.address='k8s-node-1'", "not an IP address"]),
    ("nodeport-address-empty", {"nodeport.address": ""}, ["nodeport.address is required"]),
    ("nodeport-address-missing", {"nodeport.address": DELETE}, ["nodeport.address is required"]),
    ("controller-address-bad", {"controller.address": "10.126.0.300"},
     ["controller.address='10.126.0.300'", "not an IP address"]),
    ("controller-address-missing", {"controller.address": DELETE}, ["controller.address is required"]),
    ("controller-host-underscore", {"controller.host": "slurm_controller"},
     ["controller.host='slurm_controller'"]),
    ("controller-host-missing", {"controller.host": DELETE}, ["controller.host=None"]),
    ("controller-port-70000", {"controller.port": 70000}, ["controller.port=70000", "outside 1-65535"]),
    ("controller-port-slurmd-port", {"controller.port": 6818},
     ["controller.port=6818: Slinky's operator writes SlurmctldPort=6817", "allowed: 6817"]),
    ("network-mode", {"network_mode": "mesh"}, ["network_mode='mesh'", "not supported", "nat, routed, hostnetwork"]),
    ("name-space", {"name": "my cluster"}, ["name='my cluster'", "ClusterName"]),
    ("name-too-long", {"name": "c" * 41}, ["name='%s'" % ("c" * 41)]),
    ("slurm-version-garbage", {"slurm_version": "latest"}, ["slurm_version", "'latest'", "not a Slurm version"]),
    ("slurm-version-missing", {"slurm_version": DELETE}, ["slurm_version is required"]),
    ("max-node-count-zero", {"max_node_count": 0}, ["max_node_count=0", "positive integer"]),
    ("max-node-count-text", {"max_node_count": "many"}, ["max_node_count='many'", "positive integer"]),
]


@pytest.mark.parametrize("changes, expected", [case[1:] for case in INVALID_CASES],
                         ids=[case[0] for case in INVALID_CASES])
def test_validate_names_the_offending_key_and_value(changes, expected):
    errors = cm.validate(valid_model(**changes))
    assert len(errors) == 1, errors
    for fragment in expected:
        assert fragment in errors[0]
    with pytest.raises(cm.ModelError) as exc:
        cm.normalize(valid_model(**changes))
    assert exc.value.errors == errors


def test_srun_range_containing_both_daemon_ports_reports_both():
    errors = cm.validate(valid_model(srun_port_range="6800-6900"))
    assert len(errors) == 2
    assert "controller.port 6817" in errors[0]
    assert "slurmd_port 6818" in errors[1]


@pytest.mark.parametrize("raw", [None, [], "slurm", 42])
def test_validate_rejects_a_model_that_is_not_a_dict(raw):
    assert cm.validate(raw) == ["slime_cluster must be a dict, got %s" % type(raw).__name__]


def test_normalize_raises_model_error_listing_every_problem():
    model = valid_model(**{"nodeport.port": 80, "controller.address": DELETE, "network_mode": "mesh"})
    with pytest.raises(cm.ModelError) as exc:
        cm.normalize(model)
    assert isinstance(exc.value, ValueError)
    assert len(exc.value.errors) == 3
    assert str(exc.value) == "; ".join(exc.value.errors)
    message = str(exc.value)
    assert "nodeport.port=80" in message
    assert "controller.address is required" in message
    assert "network_mode='mesh'" in message


def test_validate_rejects_empty_controller_address():
    errors = cm.validate(valid_model(**{"controller.address": ""}))
    assert any("controller.address" in error for error in errors)


@pytest.mark.parametrize("section, value", [("nodeport", "10.127.0.50:30017"), ("controller", "slurm-controller")])
def test_validate_reports_a_section_that_is_not_a_mapping(section, value):
    errors = cm.validate(valid_model(**{section: value}))
    assert any(section in error for error in errors)


# --------------------------------------------------------------------------- features


@pytest.mark.parametrize("features", [[], ["baremetal"], ["baremetal", "gpu.a100", "rack_7", "ib-hdr"], ("pod",)])
def test_feature_errors_accepts_valid_names(features):
    assert names.feature_errors(features) == []


@pytest.mark.parametrize("bad", ["a,b", "gpu&big", "gpu|big", "has space", "", "ü", 5, None])
def test_feature_errors_names_each_bad_feature(bad):
    errors = names.feature_errors(["baremetal", bad], label="slurm_node_features")
    assert len(errors) == 1
    assert errors[0].startswith("slurm_node_features: %r " % (bad,))
    assert "not a valid Slurm feature name" in errors[0]


def test_feature_errors_reports_every_bad_feature():
    assert len(names.feature_errors(["a,b", "ok", "c d"])) == 2


@pytest.mark.parametrize("features", ["baremetal", {"gpu": 1}, None])
def test_feature_errors_requires_a_list(features):
    assert names.feature_errors(features, "slurm_node_features") == [
        "slurm_node_features=%r must be a list of feature names" % (features,)
    ]


# --------------------------------------------------------------------------- network modes

ROUTES = [{"cidr": "10.126.0.0/24", "via": "10.127.0.50"}, {"cidr": "10.126.1.0/24", "via": "10.127.0.51"}]


def test_routed_mode_reaches_the_controller_pod_directly():
    model = cm.normalize(valid_model(**{"network_mode": "routed", "pod_routes": ROUTES,
                                        "nodeport.address": DELETE, "nodeport.port": DELETE}))
    assert model["conf_server"] == "10.126.0.11:6817"
    assert model["dnat"] == []
    assert model["routes"] == ROUTES
    assert model["pod_cidrs"] == ["10.126.0.0/24", "10.126.1.0/24"]
    assert [rule["ports"] for rule in model["inbound"]] == ["6818", "60001:60100"]


@pytest.mark.parametrize("routes, fragment", [
    (DELETE, "pod_routes is required with network_mode=routed"),
    ([], "pod_routes is required with network_mode=routed"),
    ("10.126.0.0/24", "pod_routes='10.126.0.0/24' must be a list"),
    ([{"cidr": "10.126.0.1/24", "via": "10.127.0.50"}], "pod_routes[0].cidr='10.126.0.1/24' is not a network address"),
    ([{"cidr": "10.126.0.0/24", "via": "node-1"}], "pod_routes[0].via='node-1' is not an IP address"),
    (["10.126.0.0/24"], "pod_routes[0]='10.126.0.0/24' must be a mapping"),
])
def test_routed_mode_refuses_bad_routes(routes, fragment):
    errors = cm.validate(valid_model(**{"network_mode": "routed", "pod_routes": routes}))
    assert len(errors) == 1 and fragment in errors[0], errors


def test_nat_reaches_pod_ips_on_slurmd_port_through_the_node_of_their_pod_cidr():
    """A pod worker's NodeAddr is its pod IP from each registration until the NodeAddr sidecar heals
    it: a step from bare metal meanwhile reaches its slurmd through its node's hostPort."""
    model = cm.normalize(valid_model(**{"network_mode": "nat", "pod_routes": ROUTES, "slurmd_port": "6818"}))
    assert model["routes"] == []  # no route installed: the pod IP itself is still not routed
    assert model["dnat"][2:] == [
        {"name": "pod-slurmd", "destination": route["cidr"], "ports": "6818", "to": route["via"],
         "comment": "slime.hybrid/pod-slurmd %s:6818>%s" % (route["cidr"], route["via"])} for route in ROUTES]
    for mode in ("hostnetwork", "routed"):
        model = cm.normalize(valid_model(**{"network_mode": mode, "pod_routes": ROUTES}))
        assert [rule for rule in model["dnat"] if rule["name"] == "pod-slurmd"] == []


def test_nat_and_hostnetwork_need_the_nodeport_but_not_routes():
    for mode in ("nat", "hostnetwork"):
        model = cm.normalize(valid_model(network_mode=mode))
        assert model["routes"] == [] and model["conf_server"] == "10.127.0.50:30017"
        assert [rule["name"] for rule in model["dnat"]] == ["slurmctld", "controller-srun"]
        errors = cm.validate(valid_model(**{"network_mode": mode, "nodeport.port": DELETE}))
        assert errors == ["nodeport.port is required (the controller Service's nodePort, 30000-32767)"]


# --------------------------------------------------------------------------- intent and discovery

# What slinky_info returns as ``cluster`` (plugins/module_utils/slinky.py cluster_facts).
DISCOVERED = {"controller": {"host": "slurm-controller.slurm", "aliases": ["slurm-controller-0"],
                             "address": "10.244.1.5", "port": 6817},
              "nodeport": {"address": "192.168.10.2", "port": 30017, "service": "slurm-controller",
                           "external_traffic_policy": "Local"},
              "slurm_version": "26.05"}


def intent(**changes):
    """What a site with a Kubernetes API writes: valid_model() without the DISCOVERED fields."""
    gone = {key: DELETE for key in cm.DISCOVERED}
    gone.update(changes)
    return valid_model(**gone)


@pytest.mark.parametrize("mode, extra", [
    ("nat", {}),
    ("hostnetwork", {"srun_port_range": [61000, 61099]}),
    ("routed", {"pod_routes": ROUTES, "nodeport.address": DELETE, "nodeport.port": DELETE}),
])
def test_normalize_reads_its_own_output(mode, extra):
    once = cm.normalize(valid_model(network_mode=mode, **extra))
    assert cm.validate(once) == []
    assert cm.normalize(once) == once
    assert cm.normalize(cm.normalize(once)) == once


def test_intent_without_discovered_fields_is_valid_intent_but_not_a_model():
    assert cm.intent_errors(intent(**{"controller.port": 6817})) == []
    model = cm.normalize_intent(intent(**{"controller.port": 6817}))
    assert model["controller"] == {"host": None, "aliases": [], "address": None, "port": 6817, "backups": []}
    assert model["nodeport"]["address"] is None and model["slurm_version"] is None
    assert model["conf_server"] is None and model["dnat"] == []
    # The intent still holds everything chart values need.
    assert model["srun_port_range"]["conf"] == "60001-60100" and model["nodeport"]["port"] == 30017
    # A model for bare metal needs what only the running cluster knows.
    assert cm.validate(intent()) == [
        "controller.host=None is not a host name (the SlurmctldHost of slurm.conf)",
        "controller.address is required (the address bare metal maps controller.host to)",
        "nodeport.address is required (the Kubernetes node that hosts the controller pod)",
        "slurm_version is required (the slurmctld version, e.g. 26.05)",
    ]


def test_intent_errors_still_checks_what_is_given():
    errors = cm.intent_errors(intent(**{"controller.address": "not-an-ip", "nodeport.port": 80}))
    assert errors == ["controller.address='not-an-ip' is not an IP address", "nodeport.port=80 is outside 30000-32767"]


def test_intent_completed_by_discovery_is_the_model():
    model = cm.normalize(intent(**{"controller.port": 6817}), DISCOVERED)
    assert model["controller"] == {"host": "slurm-controller.slurm", "aliases": ["slurm-controller-0"],
                                   "address": "10.244.1.5", "port": 6817, "backups": []}
    assert model["conf_server"] == "192.168.10.2:30017"
    assert [rule["comment"] for rule in model["dnat"]] == [
        "slime.hybrid/slurmctld 10.244.1.5:6817>192.168.10.2:30017",
        "slime.hybrid/controller-srun 10.244.1.5:60001:60100>192.168.10.2"]
    assert cm.normalize(model) == model
    # What was discovered wins over what the intent says (the Service's real nodePort).
    moved = dict(DISCOVERED, nodeport=dict(DISCOVERED["nodeport"], port=30020))
    assert cm.normalize(intent(), moved)["conf_server"] == "192.168.10.2:30020"


ROUTED_DISCOVERED = dict(DISCOVERED, nodeport=None,
                         pod_routes=[{"cidr": "10.244.0.0/24", "via": "192.168.10.1"},
                                     {"cidr": "10.244.1.0/24", "via": "192.168.10.2"}])
del ROUTED_DISCOVERED["nodeport"]


def routed_intent(**changes):
    return intent(**dict({"network_mode": "routed", "nodeport.port": DELETE}, **changes))


def test_routed_intent_may_leave_pod_routes_to_discovery():
    assert "pod_routes" in cm.DISCOVERED
    assert cm.intent_errors(routed_intent()) == []
    assert cm.normalize_intent(routed_intent())["routes"] == []
    # The model for bare metal needs them, stated or discovered.
    errors = cm.validate(routed_intent(), dict(ROUTED_DISCOVERED, pod_routes=[]))
    assert errors == ["pod_routes is required with network_mode=routed ([{cidr: POD_CIDR, via: NODE_IP}, ...] "
                      "from each Node's spec.podCIDRs)"]
    assert any("pod_routes is required" in error for error in cm.validate(routed_intent()))
    model = cm.normalize(routed_intent(), ROUTED_DISCOVERED)
    assert model["routes"] == model["pod_routes"] == ROUTED_DISCOVERED["pod_routes"]
    assert model["pod_cidrs"] == ["10.244.0.0/24", "10.244.1.0/24"]
    assert model["conf_server"] == "10.244.1.5:6817"
    assert cm.normalize(model) == model


def test_routes_the_site_states_win_over_discovered_ones():
    subset = [{"cidr": "10.244.1.0/24", "via": "192.168.10.2"}]
    model = cm.normalize(routed_intent(pod_routes=subset), ROUTED_DISCOVERED)
    assert model["routes"] == subset
    # Through a gateway rather than the node itself: still the site's.
    gateway = [{"cidr": "10.244.0.0/16", "via": "192.168.10.254"}]
    assert cm.normalize(routed_intent(pod_routes=gateway), ROUTED_DISCOVERED)["routes"] == gateway
    # An empty list states nothing: the discovered routes fill it (normalize_intent's output has []).
    found = ROUTED_DISCOVERED["pod_routes"]
    assert cm.normalize(routed_intent(pod_routes=[]), ROUTED_DISCOVERED)["routes"] == found
    assert cm.normalize(cm.normalize_intent(routed_intent()), ROUTED_DISCOVERED)["routes"] == found
    # Every other discovered key still wins over the intent.
    moved = cm.normalize(routed_intent(**{"controller.address": "10.244.9.9"}), ROUTED_DISCOVERED)
    assert moved["controller"]["address"] == "10.244.1.5"
    # The site's routes are checked as ever, the discovered ones too.
    assert cm.validate(routed_intent(pod_routes=[{"cidr": "10.244.1.0/24", "via": "fd00::2"}]), ROUTED_DISCOVERED) == [
        "pod_routes[0].via='fd00::2' %s" % cm._IPV4_ONLY]
    bad = dict(ROUTED_DISCOVERED, pod_routes=[{"cidr": "fd00:10:244::/64", "via": "192.168.10.1"}])
    assert cm.validate(routed_intent(), bad) == ["pod_routes[0].cidr='fd00:10:244::/64' %s" % cm._IPV4_ONLY]


def test_discovered_facts_must_be_a_mapping():
    assert cm.validate(intent(), ["10.244.1.5"]) == ["the discovered facts must be a dict (slinky_info's cluster), got list"]
    with pytest.raises(cm.ModelError):
        cm.normalize(intent(), "x")


def test_worker_settings_default_and_every_problem_named():
    assert cm.normalize(valid_model())["worker"] == cm.WORKER_DEFAULTS
    errors = cm.validate(valid_model(worker={
        "uid": "slurm", "gid": 0, "user": "Slurm", "key_path": "etc/slurm.key", "packages": [], "firewall_packages": ["ip tables"],
        "package_version": "v26", "apt_repository": "http://repo", "apt_key_url": "ftp://key", "manage_firewall": "maybe",
        "rules": "/x"}))
    assert errors == [
        "worker.rules is not a worker setting; allowed: apt_key_url, apt_repository, dnf_key_url, dnf_repository, "
        "firewall_packages, gid, key_path, manage_firewall, package_manager, package_version, packages, persist_firewall, "
        "rules_file, uid, user",
        "worker.user='Slurm' is not a user name (lowercase letters, digits, '_', '-')",
        "worker.uid='slurm' must be a number from 1 to 65534",
        "worker.gid=0 must be a number from 1 to 65534",
        "worker.key_path='etc/slurm.key' must be an absolute file path",
        "worker.packages=[] must be null (the package manager's own names) or a list of package names, not empty",
        "worker.package_version='v26' must be empty (what the source offers) or a package version such as 26.05.5-1 "
        "or 26.05.5-1.el9 (a trailing * allowed)",
        "worker.apt_repository='http://repo' must be empty or one sources.list line (deb [OPTIONS] URI SUITE COMPONENT...)",
        "worker.apt_key_url='ftp://key' must be empty or an http(s) URL",
        "worker.manage_firewall='maybe' must be true or false",
        "worker.firewall_packages=['ip tables'] must be null (the package manager's own) or a list of package names",
    ]
    assert cm.validate(valid_model(worker="slurm")) == [
        "worker='slurm' must be a mapping (see docs/cluster-model.md)"]


def test_package_manager_and_its_sources():
    assert cm.validate(valid_model(worker={"package_manager": "yum"})) == [
        "worker.package_manager='yum' is not a package manager this role drives; allowed: apt, dnf"]
    assert cm.validate(valid_model(worker={"package_manager": "dnf", "apt_repository": "deb http://r trixie main",
                                           "dnf_repository": "https://r/el9", "dnf_key_url": "https://r/key"})) == [
        "worker.apt_repository='deb http://r trixie main' is a source for package_manager apt, and this worker's is dnf"]
    assert cm.validate(valid_model(worker={"dnf_repository": "ftp://r", "dnf_key_url": "https://r/key"})) == [
        "worker.dnf_repository='ftp://r' must be empty or the repository's http(s) URL (its baseurl)",
        "worker.dnf_key_url='https://r/key' is a source for package_manager dnf, and this worker's is apt"]
    # null means the package manager's own; the model keeps it so a host may state another manager
    settings = cm.worker_settings({"packages": None, "rules_file": None})[0]
    assert settings["packages"] is None
    assert cm.effective_worker(settings)["packages"] == ["slurmd", "slurm-client"]
    assert cm.effective_worker(dict(settings, package_manager="dnf"))["rules_file"] == "/etc/sysconfig/iptables"
    assert cm.effective_worker(dict(settings, firewall_packages=[]))["firewall_packages"] == []
    assert cm.validate(valid_model(worker={"rules_file": "rules.v4"})) == [
        "worker.rules_file='rules.v4' must be null (the package manager's own) or an absolute file path"]


def test_worker_settings_as_ansible_passes_them():
    # numbers and booleans templated into strings are read as such; the model reads its own output
    model = cm.normalize(valid_model(worker={"uid": "500", "persist_firewall": "false", "package_version": "26.05.5-*"}))
    assert model["worker"]["uid"] == 500 and model["worker"]["persist_firewall"] is False
    assert cm.normalize(model) == model
    intent = {"srun_port_range": "60001-60100", "nodeport": {"port": 30017}, "worker": {"uid": -1}}
    assert cm.intent_errors(intent) == ["worker.uid=-1 must be a number from 1 to 65534"]


class _NoDeepcopy(dict):
    """A container that, like ansible-core 2.19's lazy template dicts, must be read, not deep-copied."""

    def __deepcopy__(self, memo):
        raise RuntimeError("deepcopy of a lazy container")


def test_intent_completed_by_discovery_is_read_not_deep_copied():
    site = intent()
    lazy = _NoDeepcopy((key, _NoDeepcopy(value) if isinstance(value, dict) else value) for key, value in site.items())
    assert cm.normalize(lazy, DISCOVERED) == cm.normalize(site, DISCOVERED)


BACKUPS = [{"host": "slurm-controller-1.internal", "aliases": ["slurm-controller-1"], "address": "10.126.1.7",
            "node_address": "10.127.0.51", "pod": "slurm-controller-1"},
           {"host": "slurm-controller-2.internal", "aliases": ["slurm-controller-2"]}]


def test_backups_each_reached_through_its_own_node():
    model = cm.normalize(valid_model(**{"controller.backups": BACKUPS}))
    assert model["controller"]["backups"] == [
        {"host": "slurm-controller-1.internal", "aliases": ["slurm-controller-1"], "address": "10.126.1.7",
         "node_address": "10.127.0.51"},
        {"host": "slurm-controller-2.internal", "aliases": ["slurm-controller-2"], "address": None, "node_address": None}]
    # with externalTrafficPolicy Local, the NodePort of the backup's node reaches the backup's pod
    assert [rule["comment"] for rule in model["dnat"]] == [
        "slime.hybrid/slurmctld 10.126.0.11:6817>10.127.0.50:30017",
        "slime.hybrid/controller-srun 10.126.0.11:60001:60100>10.127.0.50",
        "slime.hybrid/slurmctld 10.126.1.7:6817>10.127.0.51:30017",
        "slime.hybrid/controller-srun 10.126.1.7:60001:60100>10.127.0.51",
    ]
    assert cm.normalize(model) == model
    routed = cm.normalize(valid_model(network_mode="routed", pod_routes=ROUTES, **{"controller.backups": BACKUPS}))
    assert routed["dnat"] == [] and routed["controller"]["backups"][0]["address"] == "10.126.1.7"


def test_a_backup_on_the_controllers_pod_adds_no_rule():
    same = dict(BACKUPS[0], address="10.126.0.11", node_address="10.127.0.50")
    model = cm.normalize(valid_model(**{"controller.backups": [same]}))
    assert len(model["dnat"]) == 2


@pytest.mark.parametrize("backups, error", [
    ("ctl-1", "controller.backups='ctl-1' must be a list of mappings"),
    ([{"host": "bad name"}], "controller.backups[0].host='bad name' is not a host name"),
    ([{"host": "ctl-1", "aliases": "ctl"}], "controller.backups[0].aliases='ctl' must be a list of host names"),
    ([{"host": "ctl-1", "address": "10.0.0.300"}], "controller.backups[0].address='10.0.0.300' is not an IP address"),
    ([{"host": "ctl-1", "node_address": "fd00::1"}], "controller.backups[0].node_address='fd00::1' "),
    ([{"host": "ctl-1"}, {"host": "ctl-2", "aliases": ["ctl-1"]}], "controller: ctl-1 named by more than one SlurmctldHost"),
    ([{"host": "slurm-controller"}], "controller: slurm-controller named by more than one SlurmctldHost"),
])
def test_bad_backups_are_named(backups, error):
    (found,) = cm.validate(valid_model(**{"controller.backups": backups}))
    assert found.startswith(error)


# --------------------------------------------------------------------------- what a site states

def test_unknown_keys_are_refused_with_the_settings_allowed_there():
    errors = cm.validate(valid_model(**{"netwrok_mode": "routed", "controller.hots": "x", "nodeport.adress": "10.0.0.1"}))
    assert errors == [
        "netwrok_mode is not a setting of slime_cluster; allowed: accounting, baremetal_addresses, controller, gpus, health, image_registry, "
        "inbound_sources, max_node_count, metrics, name, network_mode, node_addresses, nodeport, pod_routes, slurm_version, slurmd_port, "
        "srun_concurrency, srun_port_range, worker",
        "controller.hots is not a setting of slime_cluster (controller); allowed: address, aliases, backups, host, port",
        "nodeport.adress is not a setting of slime_cluster (nodeport); allowed: address, port, range",
    ]
    # before anything is discovered too (the slinky role's check), and with every other problem
    errors = cm.intent_errors(intent(**{"netwrok_mode": "routed", "nodeport.port": 80}))
    assert errors[0].startswith("netwrok_mode is not a setting of slime_cluster")
    assert errors[1:] == ["nodeport.port=80 is outside 30000-32767"]


@pytest.mark.parametrize("registry", ["mirror.example.org", "mirror.example.org:5000/hpc/slinky", "localhost/slime-kube",
                                      "10.0.0.5:5000", "registry"])
def test_an_image_registry_is_kept(registry):
    assert cm.normalize(intent(image_registry=registry), DISCOVERED)["image_registry"] == registry


@pytest.mark.parametrize("registry", ["https://mirror.example.org", "Mirror.example.org", "mirror.example.org/slurmd:26.05",
                                      "mirror.example.org/", "mirror example", 5000])
def test_a_bad_image_registry_is_named_with_what_is_allowed(registry):
    assert cm.validate(intent(image_registry=registry), DISCOVERED) == [
        "image_registry=%r is not a registry (HOST[:PORT][/PATH], lower case, no scheme, tag or digest; "
        "e.g. mirror.example.org:5000/hpc)" % (registry,)]


def test_what_discovery_adds_is_no_stated_setting():
    # slinky_info's nodeport carries the Service's name and policy: the site never states them.
    assert cm.validate(intent(), DISCOVERED) == []
    assert cm.validate(intent(**{"nodeport.service": "x"}), DISCOVERED) == [
        "nodeport.service is not a setting of slime_cluster (nodeport); allowed: address, port, range"]


@pytest.mark.parametrize("first, last, band", [
    (30000, 32767, (30000, 30085)),   # Kubernetes' default range: 2768 / 32 = 86 ports
    (30000, 30099, (30000, 30015)),   # at least 16
    (20000, 65535, (20000, 20127)),   # at most 128
    (30000, 30016, (30000, 30015)),   # 17 ports: a band of 16
    (30000, 30015, None),             # 16 ports or fewer: no band
])
def test_static_band(first, last, band):
    assert cm.static_band(first, last) == band


def test_a_cluster_with_another_nodeport_range():
    model = cm.normalize(valid_model(**{"nodeport.range": "20000-22767", "nodeport.port": 20017,
                                        "srun_port_range": "30000-30100"}))
    assert model["nodeport"] == {"address": "10.127.0.50", "port": 20017, "range": "20000-22767", "static_band": True}
    assert model["conf_server"] == "10.127.0.50:20017"
    assert cm.normalize(model) == model
    assert cm.validate(valid_model(**{"nodeport.range": "20000-22767"})) == [
        "nodeport.port=30017 is outside 20000-22767"]
    assert cm.validate(valid_model(**{"nodeport.range": "20000-22767", "nodeport.port": 20017,
                                      "srun_port_range": "22700-22800"})) == [
        "srun_port_range=22700-22800 overlaps the Kubernetes NodePort range 20000-22767; hostPorts there collide "
        "with Services"]
    (error,) = cm.validate(valid_model(**{"nodeport.range": "30000"}))
    assert error.startswith("nodeport.range: '30000' is not a port range") and "--service-node-port-range" in error


def test_a_stated_nodeport_address_wins_over_the_discovered_node():
    # a second network, or a VIP that follows the controller's node: what bare metal reaches it at
    model = cm.normalize(intent(**{"nodeport.address": "10.9.0.5"}), DISCOVERED)
    assert model["nodeport"]["address"] == "10.9.0.5" and model["conf_server"] == "10.9.0.5:30017"
    assert [rule["to"] for rule in model["dnat"]] == ["10.9.0.5:30017", "10.9.0.5"]
    assert DISCOVERED["nodeport"]["address"] == "192.168.10.2"  # the discovered facts are left as they are
    assert cm.normalize(intent(), DISCOVERED)["nodeport"]["address"] == "192.168.10.2"
    assert cm.normalize(intent(**{"nodeport.address": ""}), DISCOVERED)["nodeport"]["address"] == "192.168.10.2"
    lazy = _NoDeepcopy((key, _NoDeepcopy(value) if isinstance(value, dict) else value) for key, value in DISCOVERED.items())
    assert cm.normalize(intent(**{"nodeport.address": "10.9.0.5"}), lazy) == model


def test_the_sources_bare_metal_accepts_are_the_cluster_s_own_and_the_site_s():
    model = cm.normalize(intent(**{"network_mode": "routed", "nodeport.port": DELETE}), dict(
        DISCOVERED, node_addresses=["192.168.10.2", "192.168.10.3"], baremetal_addresses=["192.168.20.5", "198.51.100.7"],
        pod_routes=[{"cidr": "10.244.1.0/24", "via": "192.168.10.2"}, {"cidr": "10.244.2.0/24", "via": "192.168.10.3"}],
        controller=dict(DISCOVERED["controller"], backups=[
            {"host": "slurm-controller-1.slurm", "address": "10.250.0.9", "node_address": "192.168.10.4"}])))
    assert model["sources"] == [
        {"cidr": "10.244.1.0/24", "kind": "pods"},  # the controller pod 10.244.1.5 is one of them
        {"cidr": "10.244.2.0/24", "kind": "pods"},
        {"cidr": "10.250.0.9/32", "kind": "controller"},  # a backup's pod outside the pod routes the site states
        {"cidr": "192.168.10.2/32", "kind": "node"},  # nodeport.address, a Node's address and a route's via: once
        {"cidr": "192.168.10.3/32", "kind": "node"},
        {"cidr": "192.168.10.4/32", "kind": "node"},
        {"cidr": "192.168.20.5/32", "kind": "baremetal"},
        {"cidr": "198.51.100.7/32", "kind": "baremetal"},
    ]
    # the site's networks: a source inside one is accepted by its rule, and named for the site
    site = cm.normalize(dict(model, inbound_sources=["192.168.20.0/24", "203.0.113.9", "0.0.0.0/0"]))
    assert site["inbound_sources"] == ["192.168.20.0/24", "203.0.113.9/32", "0.0.0.0/0"]
    assert site["sources"] == [{"cidr": "0.0.0.0/0", "kind": "site"}]  # anyone: the rules accept every source
    site = cm.normalize(dict(model, inbound_sources=["192.168.20.0/24", "203.0.113.9"]))
    assert [(s["cidr"], s["kind"]) for s in site["sources"]][-3:] == [
        ("192.168.20.0/24", "site"), ("198.51.100.7/32", "baremetal"), ("203.0.113.9/32", "site")]
    assert cm.normalize(site) == site  # the model reads its own output


def test_inbound_sources_refuse_what_is_no_ipv4_address_or_network():
    errors = cm.validate(valid_model(inbound_sources=["10.0.0.300", "10.0.0.5/24", "fd00::1", "login-1"]))
    assert errors == [
        "inbound_sources[0]='10.0.0.300' is not an IPv4 address or network (e.g. 192.0.2.10, 192.0.2.0/24)",
        "inbound_sources[1]='10.0.0.5/24' is not an IPv4 address or network (e.g. 192.0.2.10, 192.0.2.0/24); the network is "
        "10.0.0.0/24",
        "inbound_sources[2]='fd00::1' " + cm._IPV4_ONLY,
        "inbound_sources[3]='login-1' is not an IPv4 address or network (e.g. 192.0.2.10, 192.0.2.0/24)",
    ]
    assert cm.validate(valid_model(inbound_sources="10.0.0.0/8")) == [
        "inbound_sources='10.0.0.0/8' must be a list of IPv4 addresses or networks (e.g. 192.0.2.10, 192.0.2.0/24), the site's own "
        "sources of slurmd's, srun's and the node exporter's connections (login hosts, monitoring; 0.0.0.0/0 lets anyone in)"]
    assert cm.validate(valid_model(baremetal_addresses=["10.0.0.0/24"])) == [
        "baremetal_addresses[0]='10.0.0.0/24' is not an IPv4 address"]
    # stated before the cluster exists too (the slinky role's check of the intent)
    assert cm.intent_errors(intent(inbound_sources=["x"])) == [
        "inbound_sources[0]='x' is not an IPv4 address or network (e.g. 192.0.2.10, 192.0.2.0/24)"]
