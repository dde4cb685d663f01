# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Conditions that YAML read as something else. A plain scalar holding ': ' is a mapping to YAML:
`- out is search('error: x')` under an assert's `that` becomes {"out is search('error": "x')"},
which Ansible takes as true, so the check can never fail. This lists every condition (that, when,
until, failed_when, changed_when) that is not a string or a boolean, and every YAML file outside
templates/ that does not parse (its conditions could not be read).

  python scripts/check_conditions.py [DIR]   exit 1, naming file and condition, when one is found
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import yaml

KEYS = ("that", "when", "until", "failed_when", "changed_when")
SKIP = {".git", ".ansible", "node_modules", "tests/output"}


def bad_conditions(document):
    """Every condition in a parsed YAML document that is not a string, a boolean or a number."""
    found = []
    if isinstance(document, dict):
        for key, value in document.items():
            if key in KEYS:
                found += [item for item in (value if isinstance(value, list) else [value])
                          if not isinstance(item, (str, bool, int, float)) and item is not None]
            found += bad_conditions(value)
    elif isinstance(document, list):
        for item in document:
            found += bad_conditions(item)
    return found


def yaml_files(top):
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if os.path.relpath(os.path.join(root, d), top) not in SKIP and d not in SKIP)
        for name in sorted(files):
            if name.endswith((".yml", ".yaml")):
                yield os.path.join(root, name)


def main(top="."):
    problems = []
    for path in yaml_files(top):
        try:
            with open(path) as handle:
                documents = list(yaml.safe_load_all(handle))
        except yaml.YAMLError as exc:
            # a file this check cannot read is a file whose conditions it cannot vouch for; only a Jinja
            # template (under templates/) is not plain YAML by design
            if "templates" not in path.split(os.sep):
                problems.append("%s does not parse as YAML, so its conditions are unchecked: %s"
                                % (os.path.relpath(path, top), str(exc).splitlines()[0]))
            continue
        for document in documents:
            problems += ["%s: %r is a %s, not a condition (quote it: a ': ' inside makes YAML a mapping)"
                         % (os.path.relpath(path, top), item, type(item).__name__) for item in bad_conditions(document)]
    for problem in problems:
        print("check_conditions: " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
