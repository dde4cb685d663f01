# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Planning feature updates of registered Slurm nodes.

A dynamic node (slurmd -Z --conf "Feature=...") that registers again keeps, in slurmctld, the
features of its first registration: a changed feature list reaches slurmd's command line but not
the node record. Everything here is pure: it compares what `scontrol show node --oneliner` says
with the wanted features and produces the batched `scontrol update` commands.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.slime.hybrid.plugins.module_utils.names import feature_errors


def features_of(record, key):
    """The feature list of a node record's AvailableFeatures/ActiveFeatures, sorted ([] for (null))."""
    value = record.get(key, "")
    if value in ("", "(null)"):
        return []
    return sorted(set(value.split(",")))


def plan(current, wanted):
    """(changes, unknown, errors): changes {name: {"before": {...}, "after": {...}}} for nodes whose
    AvailableFeatures or ActiveFeatures differ from the wanted list; unknown: names slurmctld does not
    know; errors: invalid feature names."""
    changes, unknown, errors = {}, [], []
    for name in sorted(wanted or {}):
        features = wanted[name]
        problems = feature_errors(features, "features of %s" % name)
        if problems:
            errors.extend(problems)
            continue
        if name not in current:
            unknown.append(name)
            continue
        want = sorted(set(features))
        before = {key: features_of(current[name], key) for key in ("AvailableFeatures", "ActiveFeatures")}
        if before["AvailableFeatures"] != want or before["ActiveFeatures"] != want:
            changes[name] = {"before": before, "after": {"AvailableFeatures": want, "ActiveFeatures": want}}
    return changes, unknown, errors


def update_commands(changes):
    """One `scontrol update` per distinct feature list, for all the nodes that get it."""
    by_features = {}
    for name in sorted(changes):
        by_features.setdefault(",".join(changes[name]["after"]["AvailableFeatures"]), []).append(name)
    return [["update", "NodeName=%s" % ",".join(names), "AvailableFeatures=%s" % features, "ActiveFeatures=%s" % features]
            for features, names in sorted(by_features.items())]


def diff_text(changes, side):
    return "".join("%s: AvailableFeatures=%s ActiveFeatures=%s\n"
                   % (name, ",".join(changes[name][side]["AvailableFeatures"]), ",".join(changes[name][side]["ActiveFeatures"]))
                   for name in sorted(changes))
