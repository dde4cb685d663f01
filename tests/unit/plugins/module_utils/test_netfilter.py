# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import cluster_model, netfilter

SLURMCTLD = "slime.hybrid/slurmctld 10.126.0.11:6817>10.127.0.50:30017"
CONTROLLER_SRUN = "slime.hybrid/controller-srun 10.126.0.11:60001:60100>10.127.0.50"
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")


def _fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


IN_SLURMD = "slime.hybrid/in-slurmd tcp:6818"
IN_SRUN = "slime.hybrid/in-srun tcp:60001:60100"

# `iptables -w -t nat -S SLIME-HYBRID-OUT`
NAT_CHAIN = _fixture("iptables_S_nat_chain.txt")

# `iptables -w -t filter -S SLIME-HYBRID-IN`
FILTER_CHAIN = _fixture("iptables_S_filter_chain.txt")

# A rule left over from when the controller Service had NodePort 30018.
OLD_NODEPORT_RULE = (
    '-A SLIME-HYBRID-OUT -d 10.126.0.11/32 -p tcp -m tcp --dport 6817 -m comment --comment '
    '"slime.hybrid/slurmctld 10.126.0.11:6817>10.127.0.50:30018" -j DNAT --to-destination 10.127.0.50:30018\n'
)

NO_COMMENT_RULE = "-A SLIME-HYBRID-OUT -d 10.126.0.11/32 -p tcp -m tcp --dport 6817 -j DNAT --to-destination 10.127.0.50:30017\n"

WANTED = [SLURMCTLD, CONTROLLER_SRUN, IN_SLURMD, IN_SRUN]


def test_rule_comments_unquotes_each_rules_comment():
    assert netfilter.rule_comments(NAT_CHAIN) == [SLURMCTLD, CONTROLLER_SRUN]
    assert netfilter.rule_comments(FILTER_CHAIN) == [IN_SLURMD, IN_SRUN]


def test_rule_comments_none_for_a_rule_without_comment():
    assert netfilter.rule_comments("-N SLIME-HYBRID-OUT\n" + NO_COMMENT_RULE) == [None]


def test_rule_comments_unquoted_single_word_comment():
    # iptables quotes a comment only when it holds characters outside [A-Za-z0-9_-]
    listing = "-P OUTPUT ACCEPT\n-A OUTPUT -p tcp -m comment --comment legacy -j SLIME-HYBRID-OUT\n"
    assert netfilter.rule_comments(listing) == ["legacy"]


@pytest.mark.parametrize("listing", ["", None, "-N SLIME-HYBRID-OUT\n", "-P OUTPUT ACCEPT\n"])
def test_rule_comments_of_a_chain_without_rules(listing):
    assert netfilter.rule_comments(listing) == []


@pytest.mark.parametrize(
    "listing, stale",
    [
        (NAT_CHAIN, False),
        (FILTER_CHAIN, False),
        ("-N SLIME-HYBRID-OUT\n", False),  # empty chain
        ("", False),
        # a chain that lacks a wanted rule is not stale: the role only adds what is missing
        ("-N SLIME-HYBRID-OUT\n" + NAT_CHAIN.splitlines(True)[1], False),
        (NAT_CHAIN + OLD_NODEPORT_RULE, True),
        (NAT_CHAIN + NO_COMMENT_RULE, True),
        ("-N SLIME-HYBRID-OUT\n" + NO_COMMENT_RULE, True),
    ],
    ids=["nat", "filter", "empty-chain", "no-output", "missing-rule", "old-nodeport", "no-comment",
         "only-no-comment"],
)
def test_stale_rules(listing, stale):
    assert netfilter.stale_rules(listing, WANTED) is stale


def _model(**nodeport):
    return cluster_model.normalize({
        "controller": {"host": "slurm-controller", "address": "10.126.0.11"},
        "nodeport": dict({"address": "10.127.0.50", "port": 30017}, **nodeport),
        "srun_port_range": "60001-60100",
        "slurm_version": "26.05",
    })


def _wanted(model):
    # as roles/slurm_node/tasks/network.yml computes __slurm_node_wanted_comments
    return [rule["comment"] for rule in model["dnat"] + model["inbound"]]


def test_model_comments_match_the_rules_iptables_lists():
    wanted = _wanted(_model())
    assert wanted == WANTED
    assert not netfilter.stale_rules(NAT_CHAIN, wanted)
    assert not netfilter.stale_rules(FILTER_CHAIN, wanted)


def test_a_nodeport_change_makes_the_nat_chain_stale_but_not_the_filter_chain():
    wanted = _wanted(_model(port=30018))
    assert netfilter.stale_rules(NAT_CHAIN, wanted)
    assert not netfilter.stale_rules(FILTER_CHAIN, wanted)
