# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When to grow the bare-metal side of the cluster from the queue, and when to give hosts back.

Pure functions over what Slurm says (squeue and `scontrol show node` output, parsed), so the
event source plugin only polls and the rules are tested here. One call of decide() looks at one
snapshot and says scale_out (which spare hosts), scale_in (which idle nodes) or nothing.

The rules, and why (the thesis's scaling webhook "bounced": its query of pending-or-running
jobs scaled up and down in turns while jobs started):
- Demand is what PENDING jobs that only bare metal can serve still need: jobs whose features
  name the bare-metal feature, or, for a pool with a partition of its own (a GPU pool: the
  model's GPU partition, docs/howto-gpu.md), jobs pending in that partition, pending for a reason
  that more nodes would remove (Resources, Priority, ...; not a dependency, a hold or a begin
  time; in the pool's partition also PartitionConfig, the reason of a job in a partition with no
  node yet). Running jobs are never demand. (A GPU job that names no such partition is refused
  at submission while no GPU node is registered: Slurm 26.05 accepts `sbatch -p gpu
  --gres=gpu:1` into the empty partition, PENDING for PartitionConfig, and refuses `-p all
  --gres=gpu:1` and `-C gpu`, "Requested node configuration is not available" and "Invalid
  feature specification"; seen on Slurm 26.05.5.)
- Supply is the bare-metal nodes of the pool that are IDLE now plus the hosts already asked
  for and not yet in Slurm (in flight): a job about to start on a node that just joined is
  not counted twice, so no second host is asked for it.
- Scale-in only while there is no demand at all, only nodes of the pool, only nodes in state
  IDLE with nothing else in the state (not ALLOCATED, MIXED, COMPLETING, DRAIN, DOWN,
  RESERVED, ...), with no job of squeue on them, idle for at least idle_time by Slurm's own
  clock (the node's LastBusyTime, so a restart of the watcher forgets nothing), and never
  within cooldown of the last scale-out. A job that starts makes its node busy, which can
  only stop a scale-in; a job that ends leaves demand unchanged: neither makes the other
  direction happen.
- Bounds: never more than max_nodes nodes of the pool (up plus in flight), never fewer than
  min_nodes; scale_in.yml drains each node and waits for its jobs anyway.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

from ansible_collections.slime.hybrid.plugins.module_utils import names, scontrol

# Pending reasons that more nodes would remove (squeue %r). Everything else (Dependency,
# JobHeldUser, JobHeldAdmin, BeginTime, QOS limits, ...) is not demand for hosts.
NODE_REASONS = ("Resources", "Priority", "ReqNodeNotAvail", "BadConstraints", "Nodes_required_for_job_are_DOWN")

DEFAULTS = {
    "feature": "baremetal",   # the feature of bare-metal nodes, and of jobs only they can serve
    "partition": None,        # a partition only the pool's nodes are in (a GPU pool: the GPU partition)
    "hosts": [],              # the pool: hosts scale_out.yml may add and scale_in.yml may release
    "min_nodes": 0,
    "max_nodes": None,        # None: the size of the pool
    "cooldown": 300,          # seconds after a scale-out during which nothing is scaled in
    "idle_time": 600,         # seconds a node must have been idle before it is released
    "in_flight_timeout": 1800,  # seconds after which a host asked for and never seen is asked for again
}

# Why a job waits in a partition that has no node yet (the pool's partition, scaled in to nothing).
EMPTY_PARTITION_REASON = "PartitionConfig"

# Squeue output the event source asks for: one job per line, fields in this order.
SQUEUE_FORMAT = "%i|%T|%D|%f|%r|%N|%P"
SLURM_TIME = "%Y-%m-%dT%H:%M:%S"


def policy(options):
    """DEFAULTS completed by options; raises ValueError naming every bad value at once."""
    out = dict(DEFAULTS)
    unknown = sorted(set(options or {}) - set(DEFAULTS))
    out.update(options or {})
    errors = ["unknown option %s (allowed: %s)" % (key, ", ".join(sorted(DEFAULTS))) for key in unknown]
    if not isinstance(out["hosts"], (list, tuple)) or not all(isinstance(h, str) and h for h in out["hosts"]):
        errors.append("hosts=%r must be a list of host names" % (out["hosts"],))
    for key in ("min_nodes", "cooldown", "idle_time", "in_flight_timeout"):
        if not isinstance(out[key], int) or isinstance(out[key], bool) or out[key] < 0:
            errors.append("%s=%r must be a whole number >= 0" % (key, out[key]))
    if out["partition"] == "":
        out["partition"] = None  # a rulebook's unset variable
    if out["partition"] is not None and not isinstance(out["partition"], str):
        errors.append("partition=%r must be a partition name or unset" % (out["partition"],))
    if out["max_nodes"] is not None and (not isinstance(out["max_nodes"], int) or out["max_nodes"] < 0):
        errors.append("max_nodes=%r must be a whole number >= 0 or unset" % (out["max_nodes"],))
    if not errors:
        if out["max_nodes"] is None:
            out["max_nodes"] = len(out["hosts"])
        if out["min_nodes"] > out["max_nodes"]:
            errors.append("min_nodes=%s is more than max_nodes=%s" % (out["min_nodes"], out["max_nodes"]))
        if out["max_nodes"] > len(out["hosts"]):
            errors.append("max_nodes=%s is more than the %s hosts of the pool" % (out["max_nodes"], len(out["hosts"])))
    if errors:
        raise ValueError("; ".join(errors))
    return out


def parse_squeue(text):
    """`squeue -h -t PENDING,RUNNING,COMPLETING -o SQUEUE_FORMAT` -> list of job dicts."""
    jobs = []
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = line.split("|")
        if len(fields) != SQUEUE_FORMAT.count("|") + 1:
            raise ValueError("squeue line %r does not have the fields of %s" % (line, SQUEUE_FORMAT))
        job_id, state, nodes, features, reason, nodelist, partitions = fields
        jobs.append({"id": job_id, "state": state, "nodes": int(nodes) if nodes.isdigit() else 1,
                     "features": features if features != "(null)" else "", "reason": reason,
                     "nodelist": nodelist, "partitions": partitions.split(",")})
    return jobs


def _at_least_ago(stamp, now, seconds):
    """Whether a Slurm time stamp (local time, as scontrol prints it) is at least seconds before now (a
    datetime); never for a stamp that is no time (None, "None", "Unknown")."""
    try:
        then = datetime.datetime.strptime(stamp, SLURM_TIME)
    except (TypeError, ValueError):
        return False
    return (now - then).total_seconds() >= seconds


def _wants_feature(job_features, feature):
    """Whether a job's feature expression names the bare-metal feature (baremetal, [baremetal*2&pod*1], a|b...)."""
    for sep in "[]()&|,!":
        job_features = job_features.replace(sep, " ")
    return any(word.split("*")[0] == feature for word in job_features.split())


def _for_pool(job, feature, partition):
    """Whether a pending job waits for nodes only the pool has: it names the pool's feature, or waits in
    the pool's partition (there also because the partition has no node yet)."""
    if partition and partition in job["partitions"]:
        return job["reason"] in NODE_REASONS + (EMPTY_PARTITION_REASON,)
    return job["reason"] in NODE_REASONS and _wants_feature(job["features"], feature)


def demand(jobs, feature, partition=None):
    """Nodes that pending jobs only bare metal (this pool) can serve still need."""
    return sum(job["nodes"] for job in jobs if job["state"] == "PENDING" and _for_pool(job, feature, partition))


def _idle(node):
    """State exactly IDLE (flags such as +DYNAMIC_NORM or +CLOUD allowed; DRAIN, COMPLETING, a
    node not responding... not)."""
    base, flags = scontrol.state_flags(node.get("State", ""))
    return base == "IDLE" and not set(flags) - {"DYNAMIC_NORM", "DYNAMIC_FUTURE", "CLOUD", "POWERED_UP"}


def _still_asked(asked, keep, epoch, timeout):
    """The hosts of an earlier decision's {host: epoch asked} that keep(host) holds, asked less than timeout ago."""
    return {host: when for host, when in (asked or {}).items() if keep(host) and epoch - when < timeout}


def decide(options, jobs, nodes, state, now):
    """One decision from one snapshot.

    options: policy() output; jobs: parse_squeue(); nodes: scontrol.parse_nodes() of every node;
    state: {"last_scale_out": epoch seconds or None, "in_flight": {host: epoch seconds asked to
    join}, "releasing": {host: epoch seconds asked to leave}} (what earlier decisions asked for);
    now: a naive local datetime (Slurm's clock). Returns (decision, new state); decision is
    {"action": "scale_out"|"scale_in"|"none", "hosts": [...], "reason": "..."}.
    """
    pool = list(options["hosts"])
    epoch = (now - datetime.datetime(1970, 1, 1)).total_seconds()
    # Asked to join and not in Slurm yet; asked to leave and still in Slurm.
    in_flight = _still_asked(state.get("in_flight"), lambda host: host in pool and host not in nodes,
                             epoch, options["in_flight_timeout"])
    releasing = _still_asked(state.get("releasing"), lambda host: host in pool and host in nodes,
                             epoch, options["in_flight_timeout"])
    new_state = {"last_scale_out": state.get("last_scale_out"), "in_flight": dict(in_flight), "releasing": dict(releasing)}
    up = [host for host in pool if host in nodes]
    spare = [host for host in pool if host not in nodes and host not in in_flight]
    busy = {name for job in jobs if job["state"] in ("RUNNING", "COMPLETING") for name in names.hostlist(job["nodelist"])}
    idle = [host for host in up if _idle(nodes[host]) and host not in busy and host not in releasing]
    wanted = demand(jobs, options["feature"], options["partition"])
    room = options["max_nodes"] - len(up) - len(in_flight)

    short = max(wanted - len(idle) - len(in_flight), options["min_nodes"] - len(up) - len(in_flight), 0)
    if short and room > 0 and spare:
        hosts = spare[:min(short, room)]
        new_state["in_flight"].update(dict.fromkeys(hosts, epoch))
        new_state["last_scale_out"] = epoch
        return ({"action": "scale_out", "hosts": hosts,
                 "reason": "pending bare-metal jobs need %d nodes; %d idle, %d coming" % (wanted, len(idle), len(in_flight))
                 if wanted else "fewer than min_nodes=%d" % options["min_nodes"]}, new_state)
    if wanted:
        if not short:
            why = "enough"
        elif room <= 0:
            why = "max_nodes=%d reached" % options["max_nodes"]
        else:
            why = "no spare host"
        return ({"action": "none", "hosts": [],
                 "reason": "pending bare-metal jobs need %d nodes; %d idle, %d coming: %s" % (wanted, len(idle), len(in_flight), why)},
                new_state)
    last = new_state["last_scale_out"]
    if last is not None and epoch - last < options["cooldown"]:
        return ({"action": "none", "hosts": [], "reason": "cooling down after a scale-out"}, new_state)
    releasable = [host for host in idle if _at_least_ago(nodes[host].get("LastBusyTime"), now, options["idle_time"])]
    releasable = releasable[:max(len(up) - options["min_nodes"], 0)]  # keep min_nodes up
    if releasable:
        new_state["releasing"].update(dict.fromkeys(releasable, epoch))
        return ({"action": "scale_in", "hosts": releasable,
                 "reason": "idle for %ds or more, no pending bare-metal job" % options["idle_time"]}, new_state)
    return ({"action": "none", "hosts": [], "reason": "nothing pending, nothing idle long enough"}, new_state)
