# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading the rules of a chain (`iptables -S CHAIN`)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import shlex


def rule_comments(listing):
    """The --comment of every -A rule in `iptables -S` output, unquoted, in order (None if a rule has none)."""
    comments = []
    for line in (listing or "").splitlines():
        if not line.startswith("-A "):
            continue
        words = shlex.split(line)
        values = [words[index + 1] for index, word in enumerate(words[:-1]) if word == "--comment"]
        comments.append(values[-1] if values else None)
    return comments


def stale_rules(listing, wanted_comments):
    """True when the chain holds a rule whose comment is not among the wanted ones."""
    wanted = set(wanted_comments)
    return any(comment not in wanted for comment in rule_comments(listing))
