# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUs of bare-metal workers: the model's ``gpus`` section, and what Slurm makes of it.

Facts from Slurm 26.05's source (src/slurmd/slurmd/slurmd.c, src/interfaces/gres.c,
src/common/fetch_config.c) that decide the shape of all this:
- a configless slurmd uses the gres.conf it fetches from slurmctld, never a local one: the GPUs'
  device files (File=) or their detection (AutoDetect=) are stated in the controller's gres.conf,
  in lines for the node (NodeName=);
- a dynamic node that states ``Gres=gpu:TYPE:N`` in --conf gets no detection: without File= lines
  for it, its GPUs are dropped ("Ignoring file-less GPU"), it reports 0 and slurmctld drains it
  ("gpu count reported lower than configured"); one that states no gpu in --conf has its GPUs
  detected (AutoDetect) and registered as found;
- a dynamic node keeps the GRES of its first registration: a changed GRES reaches slurmctld only
  through a new node record (the old one deleted);
- File= must name character (or block) devices; their numbers are not checked, so the lab's
  ``mknod /dev/nvidiaN c 195 N`` are GPUs to Slurm, as /dev/ttyN are in Slurm's own test suite.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import re

from ansible_collections.slime.hybrid.plugins.module_utils import names

NAME = "gpu"
# gres.conf AutoDetect values for GPUs (gres.c, _handle_autodetect_flags): nvidia reads the
# driver's /proc/driver/nvidia (no NVML library needed), nvml the NVML library, full tries each.
AUTODETECT = ("nvidia", "nvml", "full", "rsmi", "oneapi", "nrt")
DEFAULTS = {"partition": "gpu", "feature": "gpu", "nodes": []}
GROUP_KEYS = ("names", "type", "count", "files", "autodetect")
# The slurm.conf NodeSet that holds the nodes with the GPU feature (a dynamic node joins it by
# its feature; the GPU partition names it).
NODESET_PREFIX = "slime-"

_TYPE_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_PARTITION_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_HOST_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")
_DEVICE_RE = re.compile(r"^/dev/[A-Za-z0-9_./-]+$")
# One GRES of a node record (scontrol show node): NAME[:TYPE]:COUNT, optionally (S:sockets) or (IDX:...)
_RECORD_RE = re.compile(r"([A-Za-z0-9_]+)(?::([^:,()]+))?:(\d+)(?:\([^)]*\))?")


def _names(errors, label, value):
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        errors.append("%s=%r must be a list of Slurm node names (hostlist ranges allowed, e.g. gpu-[01-16])" % (label, value))
        return []
    found = []
    for item in value:
        try:
            expanded = names.expand(item)
        except ValueError as exc:
            errors.append("%s: %r %s" % (label, item, exc))
            continue
        bad = [name for name in expanded if not _HOST_RE.match(name)]
        if bad:
            errors.append("%s: %r is not a Slurm node name of a host (letters, digits, '-')" % (label, bad[0]))
        found += [name for name in expanded if name not in found]
    return found


def _files(errors, label, value):
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        errors.append("%s=%r must be device files: a path or a list of paths under /dev (e.g. /dev/nvidia[0-3])"
                      % (label, value))
        return []
    files = []
    for item in items:
        try:
            expanded = names.expand(item) if isinstance(item, str) else [None]
        except ValueError as exc:
            errors.append("%s: %r %s" % (label, item, exc))
            continue
        for path in expanded:
            if not isinstance(path, str) or not _DEVICE_RE.match(path):
                errors.append("%s: %r is not a device file under /dev" % (label, path))
            elif path in files:
                errors.append("%s: %s named twice (Slurm stops on a device named twice)" % (label, path))
            else:
                files.append(path)
    return files


def _group(errors, label, raw):
    if not isinstance(raw, dict):
        errors.append("%s=%r must be a mapping of %s" % (label, raw, ", ".join(GROUP_KEYS)))
        return None
    errors += ["%s.%s is not a setting of a GPU group; allowed: %s" % (label, key, ", ".join(GROUP_KEYS))
               for key in sorted(set(raw) - set(GROUP_KEYS), key=str)]
    group = {"names": _names(errors, label + ".names", raw.get("names")), "type": None, "count": None,
             "files": [], "autodetect": None}
    gres_type = raw.get("type")
    if gres_type not in (None, ""):
        if not isinstance(gres_type, str) or not _TYPE_RE.match(gres_type) or gres_type.lower() == "no_consume":
            errors.append("%s.type=%r is not a GRES type Slurm takes (letters, digits, '_', '.', '-'; no ':' or ',')"
                          % (label, gres_type))
        else:
            group["type"] = gres_type
    count = raw.get("count")
    if count not in (None, ""):
        if isinstance(count, bool) or not str(count).isdigit() or int(count) < 1:
            errors.append("%s.count=%r must be a positive integer (the GPUs of each node)" % (label, count))
        else:
            group["count"] = int(count)
    autodetect = raw.get("autodetect")
    has_files = raw.get("files") not in (None, "", [])
    if autodetect not in (None, ""):
        if autodetect not in AUTODETECT:
            errors.append("%s.autodetect=%r is not a GPU detection of Slurm 26.05; allowed: %s"
                          % (label, autodetect, ", ".join(AUTODETECT)))
        else:
            group["autodetect"] = autodetect
        if has_files:
            errors.append("%s: files and autodetect both given; state the device files, or let slurmd detect "
                          "them, not both" % label)
    elif has_files:
        group["files"] = _files(errors, label + ".files", raw.get("files"))
        if gres_type in (None, ""):
            errors.append("%s.type is required with files (the GRES type jobs ask for, e.g. a100)" % label)
        if group["count"] is not None and group["files"] and group["count"] != len(group["files"]):
            errors.append("%s.count=%s but files name %d devices (Slurm stops on a count that does not match File)"
                          % (label, group["count"], len(group["files"])))
        group["count"] = len(group["files"]) or group["count"]
    else:
        errors.append("%s: no devices: give files (the GPUs' device files) or autodetect (%s)"
                      % (label, ", ".join(AUTODETECT)))
    return group


def settings(raw, label="gpus"):
    """(gpus, errors): the model's gpus section checked and normalized, None when not stated.
    gpus: {partition, feature, nodes: [{names (expanded), type, count, files (expanded), autodetect}]}."""
    if raw is None:
        return None, []
    if not isinstance(raw, dict):
        return None, ["%s=%r must be a mapping of partition, feature, nodes (see docs/howto-gpu.md)" % (label, raw)]
    errors = ["%s.%s is not a setting of slime_cluster (gpus); allowed: %s" % (label, key, ", ".join(sorted(DEFAULTS)))
              for key in sorted(set(raw) - set(DEFAULTS), key=str)]
    partition = raw.get("partition", DEFAULTS["partition"])
    partition = "" if partition is None else partition
    if partition != "" and (not isinstance(partition, str) or not _PARTITION_RE.match(partition) or partition == "all"):
        errors.append("%s.partition=%r must be empty (no GPU partition) or a partition name (letters, digits, '_', "
                      "'-'), not all (the partition of every node)" % (label, partition))
    feature = raw.get("feature", DEFAULTS["feature"])
    if not isinstance(feature, str) or not names.FEATURE_RE.match(feature):
        errors.append("%s.feature=%r is not a Slurm feature name (letters, digits, '_', '.', '-')" % (label, feature))
    nodes = raw.get("nodes", [])
    nodes = [] if nodes is None else nodes
    groups = []
    if not isinstance(nodes, list):
        errors.append("%s.nodes=%r must be a list of GPU groups {names, type, count, files, autodetect}" % (label, nodes))
    else:
        groups = [_group(errors, "%s.nodes[%d]" % (label, index), group) for index, group in enumerate(nodes)]
    groups = [group for group in groups if group]
    errors += _mixed_errors(label, groups)
    if errors:
        return None, errors
    return {"partition": partition, "feature": feature, "nodes": groups}, []


def _mixed_errors(label, groups):
    """A node in several groups (a host with GPUs of more than one type): every group typed, the
    types distinct, no device twice, and no detection beside declared devices."""
    errors = []
    seen = {}
    for group in groups:
        for name in group["names"]:
            seen.setdefault(name, []).append(group)
    for name, mine in sorted(seen.items()):
        if len(mine) < 2:
            continue
        if any(group["autodetect"] for group in mine):
            errors.append("%s: %s is in %d groups and one detects its GPUs; a node whose GPUs slurmd detects is in "
                          "one group" % (label, name, len(mine)))
            continue
        types = [group["type"] for group in mine]
        if None in types or len(set(types)) != len(types):
            errors.append("%s: %s has GPUs of %d groups: each needs a type of its own (a count without a type on a "
                          "host with more than one kind of GPU)" % (label, name, len(mine)))
        files = [path for group in mine for path in group["files"]]
        twice = sorted(set(path for path in files if files.count(path) > 1))
        if twice:
            errors.append("%s: %s has %s in more than one group" % (label, name, ", ".join(twice)))
    return errors


def node_groups(gpus, name):
    """The GPU groups that name this node ([] for a node without GPUs or a model without gpus)."""
    return [group for group in (gpus or {}).get("nodes", []) if name in group["names"]]


def conf_gres(groups):
    """The Gres= of slurmd's --conf: the declared GPUs ('gpu:a100:4,gpu:t4:1'); '' where slurmd detects them
    (a gpu in --conf turns its detection off) or the node has none."""
    return ",".join("%s:%s:%d" % (NAME, group["type"], group["count"]) for group in groups if not group["autodetect"])


def gres_conf(gpus):
    """The controller's gres.conf: one line per group, for its nodes only. Every configless slurmd
    (pod workers too) reads it; a line names its nodes, so others are not concerned."""
    lines = ["# Managed by slime.hybrid (slime_cluster.gpus); Slurm's configless slurmd reads this copy."]
    for group in (gpus or {}).get("nodes", []):
        words = ["NodeName=%s" % ",".join(group["names"])]
        if group["autodetect"]:
            words.append("AutoDetect=%s" % group["autodetect"])
        else:
            words += ["Name=%s" % NAME, "Type=%s" % group["type"], "File=%s" % ",".join(group["files"])]
        lines.append(" ".join(words))
    return "\n".join(lines) + "\n"


def _conf_lines_by_node(text):
    """{node: [the rest of each gres.conf line that names it]} of a gres.conf as gres_conf() writes it."""
    out = {}
    for line in (text or "").splitlines():
        words = line.split()
        if not words or not words[0].startswith("NodeName="):  # comments too
            continue
        rest = " ".join(sorted(words[1:]))
        for node in names.hostlist(words[0][len("NodeName="):]):
            out.setdefault(node, []).append(rest)
    return out


def conf_changes(before, after):
    """The nodes of the controller's gres.conf `before` whose lines `after` changes or drops, sorted. slurmctld
    kills a running job whose GRES on a node no longer match the node's configured GRES when it starts
    with that gres.conf (Slurm 26.05 src/interfaces/gres.c, gres_job_revalidate2: "count mismatch", "type
    not found"): such nodes are drained and their jobs waited for before. A node new in `after` held no
    GPU job."""
    old, new = _conf_lines_by_node(before), _conf_lines_by_node(after)
    return sorted(node for node, lines in old.items() if sorted(lines) != sorted(new.get(node, [])))


def gres_conf_digest(gpus):
    return hashlib.sha256(gres_conf(gpus).encode("utf-8")).hexdigest()[:16]


def nodeset(gpus):
    """The slurm.conf NodeSet that holds the GPU nodes (by their feature)."""
    return NODESET_PREFIX + gpus["feature"]


def parse_record(text):
    """{type or '': count} of the gpu GRES of a node record's Gres= ('gpu:a100:4(S:0),gpu:t4:1' ->
    {'a100': 4, 't4': 1}); {} for (null) or none."""
    out = {}
    for name, gres_type, count in _RECORD_RE.findall(text or ""):
        if name == NAME:
            out[gres_type or ""] = out.get(gres_type or "", 0) + int(count)
    return out


def stated(groups):
    return ",".join("%s:%s:%s" % (NAME, group["type"] or "(detected)", group["count"] or "(detected)") for group in groups)


def record_drift(node_name, groups, record):
    """Why the GPUs of slurmctld's record of the node are not the model's ([] when they are, or when there is no
    record): only a new record takes other GPUs (drain, wait for the jobs, delete, register). Declared GPUs
    must be there as declared; detected ones of the type and count the model states, if it states them, and
    at least one."""
    if record is None:
        return []
    found = parse_record(record.get("Gres"))
    if not groups:
        problem = bool(found)
    elif groups[0]["autodetect"]:
        gres_type, count = groups[0]["type"], groups[0]["count"]
        total = found.get(gres_type, 0) if gres_type else sum(found.values())
        problem = total == 0 or (count is not None and total != count) or (gres_type is not None and set(found) != {gres_type})
    else:
        problem = found != dict((group["type"], group["count"]) for group in groups)
    if problem:
        return ["%s has Gres=%s in slurmctld, the model says %s" % (node_name, record.get("Gres") or "(null)",
                                                                    stated(groups) or "no GPUs")]
    # slurmctld drains a node whose registration found fewer GPUs than its record states (gres.c,
    # "count reported lower than configured") and keeps it drained: a new record clears it
    if groups and "INVALID_REG" in (record.get("State") or "").split("+"):
        return ["%s is %s in slurmctld (%s): it registered with fewer GPUs than it states"
                % (node_name, record.get("State"), record.get("Reason") or "no reason")]
    return []


def device_problems(groups, files):
    """The declared device files that are not character or block devices on the host (files: {path:
    host_state.file_state(path)}): a host with fewer GPUs than the model says, refused before slurmd
    registers it with fewer (slurmctld would drain it)."""
    out = []
    for group in groups:
        missing = [path for path in group["files"] if files.get(path, {}).get("kind") not in ("char", "block")]
        if missing:
            out.append("the model gives this host %d GPUs of type %s at %s, and %s %s not a device here (GPU driver "
                       "not loaded, or its device files not made yet: nvidia-persistenced or nvidia-modprobe make them)"
                       % (group["count"], group["type"], ",".join(group["files"]), ", ".join(missing),
                          "is" if len(missing) == 1 else "are"))
    return out
