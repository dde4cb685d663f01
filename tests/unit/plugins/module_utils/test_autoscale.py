# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/autoscale: demand from the queue, scale-out of spare hosts, scale-in of nodes
idle long enough, bounds, and the thesis's bounce (a job that starts must not make the policy
scale in and out in turns)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import os

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import autoscale, names, scontrol

T0 = datetime.datetime(2026, 11, 24, 12, 0, 0)
POOL = ["bm-3", "bm-4", "bm-5"]
FIXTURE = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "scontrol_show_node_26.05.txt")


def at(seconds):
    return T0 + datetime.timedelta(seconds=seconds)


def stamp(moment):
    return moment.strftime(autoscale.SLURM_TIME)


def node(state="IDLE+DYNAMIC_NORM", busy=T0, features="baremetal"):
    return {"State": state, "LastBusyTime": stamp(busy), "AvailableFeatures": features}


def job(job_id, state="PENDING", nodes=1, features="baremetal", reason="Resources", nodelist="", partitions=("all",)):
    return {"id": str(job_id), "state": state, "nodes": nodes, "features": features, "reason": reason, "nodelist": nodelist,
            "partitions": list(partitions)}


def opts(**kwargs):
    base = {"hosts": POOL, "cooldown": 300, "idle_time": 600}
    base.update(kwargs)
    return autoscale.policy(base)


def decide(jobs, nodes, state=None, seconds=0, **kwargs):
    return autoscale.decide(opts(**kwargs), jobs, nodes, state or {}, at(seconds))


def test_policy_defaults_and_every_bad_value_named_at_once():
    assert opts()["max_nodes"] == 3
    with pytest.raises(ValueError) as exc:
        autoscale.policy({"hosts": "bm-3", "min_nodes": -1, "idle_time": "10m", "colldown": 5})
    message = str(exc.value)
    for part in ("unknown option colldown", "hosts='bm-3' must be a list", "min_nodes=-1", "idle_time='10m'"):
        assert part in message
    with pytest.raises(ValueError, match="min_nodes=2 is more than max_nodes=1"):
        autoscale.policy({"hosts": POOL, "min_nodes": 2, "max_nodes": 1})
    with pytest.raises(ValueError, match="max_nodes=4 is more than the 3 hosts of the pool"):
        autoscale.policy({"hosts": POOL, "max_nodes": 4})


def test_parse_squeue_lines():
    text = ("12|PENDING|2|baremetal|Resources||all\n13|RUNNING|3|[baremetal*1&pod*2]|None|bm-[1-2],pod-1|all\n"
            "14|PENDING|1|(null)|Dependency||gpu,all\n")
    jobs = autoscale.parse_squeue(text)
    assert [j["id"] for j in jobs] == ["12", "13", "14"]
    assert jobs[0]["nodes"] == 2 and jobs[2]["features"] == "" and jobs[2]["partitions"] == ["gpu", "all"]
    assert names.hostlist(jobs[1]["nodelist"]) == ["bm-1", "bm-2", "pod-1"]
    assert names.hostlist("bench[001-003,007]") == ["bench001", "bench002", "bench003", "bench007"]
    with pytest.raises(ValueError, match="does not have the fields"):
        autoscale.parse_squeue("12|PENDING|2\n")


def test_demand_counts_only_pending_bare_metal_jobs_that_more_nodes_would_start():
    jobs = [
        job(1, nodes=2),                                   # counted
        job(2, features="[baremetal*1&pod*1]"),            # counted: names the feature
        job(3, features="pod"),                            # pods can serve it
        job(4, features=""),                               # anything can serve it
        job(5, reason="Dependency"),                       # waits for another job, not for nodes
        job(6, reason="JobHeldUser"),
        job(7, state="RUNNING", nodelist="bm-1"),           # running is never demand
        job(8, features="baremetalx"),                     # another feature
    ]
    assert autoscale.demand(jobs, "baremetal") == 3


def test_scale_out_spare_hosts_for_pending_jobs_minus_idle_nodes():
    nodes = {"bm-3": node()}
    decision, state = decide([job(1, nodes=3)], nodes)
    assert decision["action"] == "scale_out"
    assert decision["hosts"] == ["bm-4", "bm-5"]          # one idle node counts as supply
    assert set(state["in_flight"]) == {"bm-4", "bm-5"}


def test_hosts_in_flight_are_supply_not_asked_for_twice():
    first, state = decide([job(1, nodes=1)], {})
    assert first["hosts"] == ["bm-3"]
    again, state = decide([job(1, nodes=1)], {}, state, seconds=30)
    assert again["action"] == "none" and "1 coming" in again["reason"]
    # Never seen after in_flight_timeout: asked for again (the provisioning failed or was lost).
    late, ignored = decide([job(1, nodes=1)], {}, state, seconds=3600)
    assert late["action"] == "scale_out"


def test_max_nodes_and_pool_bound_the_scale_out():
    decision, ignored = decide([job(1, nodes=5)], {"bm-3": node(state="ALLOCATED+DYNAMIC_NORM")}, max_nodes=2)
    assert decision == {"action": "scale_out", "hosts": ["bm-4"], "reason": decision["reason"]}
    full, ignored = decide([job(1, nodes=5)], {h: node(state="ALLOCATED") for h in ["bm-3", "bm-4"]}, max_nodes=2)
    assert full["action"] == "none" and "max_nodes=2 reached" in full["reason"]


def test_min_nodes_kept_up_without_jobs():
    decision, ignored = decide([], {}, min_nodes=1)
    assert decision["action"] == "scale_out" and decision["hosts"] == ["bm-3"]
    stay, ignored = decide([], {"bm-3": node(busy=at(-7200))}, seconds=0, min_nodes=1)
    assert stay["action"] == "none"


def test_scale_in_only_idle_nodes_idle_long_enough_and_never_one_with_a_job():
    nodes = {
        "bm-3": node(busy=at(-700)),                           # idle 700 s: released
        "bm-4": node(busy=at(-100)),                           # idle 100 s: kept
        "bm-5": node(state="IDLE+DRAIN+DYNAMIC_NORM", busy=at(-7200)),  # drained by someone: not ours to release
        "bm-1": node(busy=at(-7200)),                          # not in the pool
    }
    decision, state = decide([], nodes)
    assert decision["action"] == "scale_in" and decision["hosts"] == ["bm-3"]
    assert list(state["releasing"]) == ["bm-3"]
    # The next poll, before scale_in.yml drained it: not asked again.
    again, ignored = decide([], nodes, state, seconds=5)
    assert again["action"] == "none"
    # A job on the node (squeue says so even if the state lags): never released.
    with_job, ignored = decide([job(9, state="RUNNING", nodelist="bm-3")], {"bm-3": node(busy=at(-700))})
    assert with_job["action"] == "none"
    allocated, ignored = decide([], {"bm-3": node(state="MIXED+DYNAMIC_NORM", busy=at(-700))})
    assert allocated["action"] == "none"


def test_no_scale_in_while_bare_metal_jobs_wait_or_in_the_cooldown():
    nodes = {"bm-3": node(busy=at(-7200)), "bm-4": node(state="ALLOCATED", busy=at(-10))}
    waiting, ignored = decide([job(1, nodes=2)], nodes)
    assert waiting["action"] != "scale_in"
    cooling, ignored = decide([], {"bm-3": node(busy=at(-7200))}, {"last_scale_out": (at(-60) - datetime.datetime(1970, 1, 1)).total_seconds()})
    assert cooling["action"] == "none" and "cooling down" in cooling["reason"]


def test_the_bounce_a_job_that_starts_causes_neither_scale_in_nor_a_second_scale_out():
    """The thesis's webhook, counting pending-or-running jobs, scaled up and down in turns while
    jobs started. Walk one job through its life, one poll every 15 s, and record the actions."""
    actions = []
    state = {}
    timeline = [
        (0, [job(1, nodes=1)], {}),                                                   # pending, no node
        (15, [job(1, nodes=1)], {}),                                                  # host provisioning
        (120, [job(1, nodes=1)], {"bm-3": node(busy=at(120))}),                        # joined, idle, job not yet started
        (135, [job(1, state="RUNNING", nodelist="bm-3")], {"bm-3": node(busy=at(120))}),  # started; state lags: IDLE
        (150, [job(1, state="RUNNING", nodelist="bm-3")], {"bm-3": node(state="ALLOCATED+DYNAMIC_NORM", busy=at(150))}),
        (900, [job(1, state="COMPLETING", nodelist="bm-3")], {"bm-3": node(state="IDLE+COMPLETING+DYNAMIC_NORM", busy=at(900))}),
        (915, [], {"bm-3": node(busy=at(905))}),                                      # done, idle 10 s
        (1200, [], {"bm-3": node(busy=at(905))}),                                     # idle 295 s
        (1515, [], {"bm-3": node(busy=at(905))}),                                     # idle 610 s: released
        (1530, [], {"bm-3": node(state="IDLE+DRAIN+DYNAMIC_NORM", busy=at(905))}),    # being released
        (1600, [], {}),                                                               # gone
    ]
    for seconds, jobs, nodes in timeline:
        decision, state = decide(jobs, nodes, state, seconds=seconds)
        actions.append((seconds, decision["action"], decision["hosts"]))
    taken = [a for a in actions if a[1] != "none"]
    assert taken == [(0, "scale_out", ["bm-3"]), (1515, "scale_in", ["bm-3"])], actions


def test_real_scontrol_output_is_read(monkeypatch):
    with open(FIXTURE) as f:
        nodes = scontrol.parse_nodes(f.read())
    names = list(nodes)
    options = autoscale.policy({"hosts": names, "idle_time": 60, "cooldown": 0})
    later = max(datetime.datetime.strptime(n["LastBusyTime"], autoscale.SLURM_TIME) for n in nodes.values())
    decision, ignored = autoscale.decide(options, [], nodes, {}, later + datetime.timedelta(hours=1))
    # Only the nodes whose state is exactly IDLE (+DYNAMIC_NORM) are released; DOWN/DRAIN and MIXED are not.
    idle = [name for name, n in nodes.items() if n["State"] == "IDLE+DYNAMIC_NORM"]
    assert decision["action"] == "scale_in" and decision["hosts"] == idle


# squeue -h -t PENDING,RUNNING,COMPLETING -o SQUEUE_FORMAT of Slurm 26.05.5 with a GPU partition on a NodeSet of
# feature gpu and no GPU node registered: `sbatch -p gpu --gres=gpu:1` and `-p gpu -N1` wait there
# (PartitionConfig), `-C baremetal --hold` is held (`-p all --gres=gpu:1`, `-C gpu` were refused at submission).
EMPTY_GPU_PARTITION = "6|PENDING|1|baremetal|JobHeldUser||all\n3|PENDING|1|(null)|PartitionConfig||gpu\n2|PENDING|1|(null)|PartitionConfig||gpu\n"


def test_a_gpu_pool_counts_the_jobs_waiting_in_its_partition_with_no_node_yet():
    jobs = autoscale.parse_squeue(EMPTY_GPU_PARTITION)
    assert autoscale.demand(jobs, "gpu", "gpu") == 2
    assert autoscale.demand(jobs, "gpu") == 0  # without the partition: no job names the feature
    assert autoscale.demand(jobs, "baremetal") == 0  # held: not demand
    decision = autoscale.decide(autoscale.policy(opts(feature="gpu", partition="gpu")), jobs, {}, {}, at(0))[0]
    assert decision == {"action": "scale_out", "hosts": POOL[:2],
                        "reason": "pending bare-metal jobs need 2 nodes; 0 idle, 0 coming"}
    # PartitionConfig elsewhere is not the pool's business; a dependency in the pool's partition neither
    others = [job(7, features="", reason="PartitionConfig"), job(8, features="", reason="Dependency", partitions=["gpu"])]
    assert autoscale.demand(others, "gpu", "gpu") == 0
    with pytest.raises(ValueError, match="partition=5 must be a partition name or unset"):
        autoscale.policy(opts(partition=5))
