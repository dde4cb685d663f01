# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsing of `scontrol show node --oneliner` (and job) output, Slurm 26.05."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# The option of every module that runs scontrol (doc fragment slime.hybrid.slurm_cli; action group
# slime.hybrid.slurm in meta/runtime.yml): a module's argument spec is dict(ARGUMENT_SPEC, ...).
ARGUMENT_SPEC = dict(scontrol=dict(type="str", default="scontrol"))

# Keys whose values may contain spaces in one-liner output (OS="Linux 6.1 #1 SMP ...",
# Reason=... [user@time]). A token starts a new key only if it looks like Key=.
_KEY_RE = re.compile(r"(?:^|\s)([A-Z][A-Za-z_]*)=")


def parse_node_line(line):
    """One `scontrol show node -o` line -> dict of its Key=Value pairs (values as strings)."""
    line = line.strip()
    matches = list(_KEY_RE.finditer(line))
    out = {}
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(line)
        out[match.group(1)] = line[match.end():end].strip()
    return out


def parse_nodes(text):
    """All node records in the output, keyed by NodeName, in output order."""
    nodes = {}
    for line in (text or "").splitlines():
        if line.startswith("NodeName="):
            record = parse_node_line(line)
            nodes[record["NodeName"]] = record
    return nodes


def state_flags(state):
    """'IDLE+DYNAMIC_NORM' -> ('IDLE', ['DYNAMIC_NORM']); 'DOWN*+DRAIN' -> ('DOWN', ['NOT_RESPONDING', 'DRAIN'])."""
    parts = (state or "").split("+")
    base, flags = parts[0], parts[1:]
    if base.endswith("*"):
        base = base[:-1]
        flags.insert(0, "NOT_RESPONDING")
    return base, flags


def is_available(state):
    """True for a responding node that can run or is running jobs."""
    base, flags = state_flags(state)
    blocked = {"NOT_RESPONDING", "DRAIN", "DRAINING", "DRAINED", "FAIL", "INVALID_REG", "POWERED_DOWN", "POWERING_UP"}
    return base in ("IDLE", "MIXED", "ALLOCATED", "COMPLETING") and not blocked.intersection(flags)


def run(module, binary, args):
    """Run a Slurm command whose path is the module option `binary` (scontrol, squeue);
    fail the module with the command and its error when it fails. Returns stdout."""
    rc, out, err = module.run_command([module.params[binary]] + list(args))
    if rc != 0:
        module.fail_json(msg="%s %s failed (rc=%d): %s" % (binary, " ".join(args), rc, (err or out).strip()),
                         rc=rc, stderr=err, stdout=out)
    return out


def read_nodes(module, names):
    """(records, None) of the named nodes (`scontrol show node --oneliner NAMES`), or ({}, scontrol's
    error text) when it fails: a node slurmctld does not know, or no slurmctld to ask yet. Never
    fails the module."""
    rc, out, err = module.run_command([module.params["scontrol"], "show", "node", "--oneliner", ",".join(names)])
    return (parse_nodes(out), None) if rc == 0 else ({}, (err or out).strip())


def show_nodes(module, names=None):
    """Every node record slurmctld has, parsed (`scontrol show node --oneliner`). With names, the
    records of those nodes only: a host asking about itself reads one record, not the whole
    cluster's (every host doing that would cost hosts x nodes). When slurmctld does not know one
    of them it answers with an error: then every record is read, so the caller can name the
    unknown ones."""
    if names:
        nodes, error = read_nodes(module, names)
        if error is None:
            return nodes
    return parse_nodes(run(module, "scontrol", ["show", "node", "--oneliner"]))


def converge(module, changes, unknown, plan, remaining, what, **extra):
    """The common end of the modules that update node records: fail naming the nodes slurmctld does
    not know; report the changes, their scontrol commands (plan.update_commands) and their diff
    (plan.diff_text); outside check mode run the commands, read the nodes again and fail, naming
    them, when remaining(nodes) still lists some: a concurrent re-registration can overwrite an
    update at once, and the module reports that rather than claim success. Exits the module."""
    if unknown:
        module.fail_json(msg="slurmctld does not know node(s): %s" % ", ".join(unknown), unknown=unknown)
    commands = plan.update_commands(changes)
    result = dict(changed=bool(changes), changed_nodes=sorted(changes), nodes=changes,
                  commands=[[module.params["scontrol"]] + command for command in commands], **extra)
    if module._diff:
        result["diff"] = dict(before=plan.diff_text(changes, "before"), after=plan.diff_text(changes, "after"))
    if changes and not module.check_mode:
        for command in commands:
            run(module, "scontrol", command)
        still = remaining(show_nodes(module))
        if still:
            module.fail_json(msg="slurmctld still reports other %s for: %s" % (what, ", ".join(sorted(still))), **result)
    module.exit_json(**result)
