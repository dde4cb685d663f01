# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The name rules the whole collection shares, each written once and small enough for the modules
that run on hosts to carry without the cluster model: host names, Slurm hostlists, Slurm node
features, Kubernetes names (RFC 1123 labels) and MAC addresses."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

HOSTNAME_RE = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")
FEATURE_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
DNS_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_HEX12_RE = re.compile(r"^[0-9a-f]{12}$")
_RANGE_RE = re.compile(r"^([^\[\]]*)\[([0-9,-]+)\]([^\[\]]*)$")


def feature_errors(features, label="features"):
    """Slurm node features: names of letters, digits, '_', '.', '-' (no ',', '&', '|', spaces)."""
    if not isinstance(features, (list, tuple)):
        return ["%s=%r must be a list of feature names" % (label, features)]
    return ["%s: %r is not a valid Slurm feature name (allowed: letters, digits, '_', '.', '-')" % (label, feat)
            for feat in features if not isinstance(feat, str) or not FEATURE_RE.match(feat)]


def dns_label_errors(names, label=None):
    """Kubernetes names (namespaces, NodeSets, BareMetalHosts) must be RFC 1123 labels.

    names: {variable: name} or, with label, a list of names found under that variable."""
    items = names.items() if isinstance(names, dict) else (("%s[%r]" % (label, name), name) for name in names)
    return ["%s=%r is not a valid Kubernetes name (lowercase letters, digits and '-', starting and ending with a letter "
            "or digit, at most 63)" % (variable, name)
            for variable, name in items if not isinstance(name, str) or not DNS_LABEL_RE.match(name)]


def canonical_mac(value):
    """A MAC as a BMC or a user may write it -> 'aa:bb:cc:dd:ee:ff'; None when it is none.

    Accepts ':', '-', '.' or no separators and either case ('52-54-00-AA-BB-CC',
    '5254.00aa.bbcc', '525400aabbcc'); anything else is returned lower-cased and stripped so
    it can still be shown and compared verbatim.
    """
    text = str("" if value is None else value).strip().lower()
    if not text:
        return None
    digits = re.sub(r"[:\-. ]", "", text)
    if _HEX12_RE.match(digits):
        return ":".join(digits[i:i + 2] for i in range(0, 12, 2))
    return text


def normalize_mac(value):
    """A MAC in any form canonical_mac reads -> '52:54:00:aa:bb:cc'; ValueError when it is not one."""
    mac = canonical_mac(value)
    if mac is None or not _HEX12_RE.match(mac.replace(":", "")) or len(mac) != 17:
        raise ValueError("%r is not a MAC address (six hex octets, e.g. 52:54:00:12:34:56)" % (value,))
    return mac


def expand(text):
    """A name with at most one bracket range, as Slurm's hostlists write them: 'gpu-[01-03,7]' ->
    ['gpu-01', 'gpu-02', 'gpu-03', 'gpu-7']; a plain name is itself. Raises ValueError."""
    if not isinstance(text, str) or not text:
        raise ValueError("is not a name")
    if "[" not in text and "]" not in text:
        return [text]
    match = _RANGE_RE.match(text)
    if not match:
        raise ValueError("has a bracket Slurm's hostlist syntax does not take (one PREFIX[RANGES]SUFFIX)")
    prefix, ranges, suffix = match.groups()
    out = []
    for part in ranges.split(","):
        first, dash, last = part.partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise ValueError("has a range %r that is not N or N-M" % part)
        last = last or first
        if int(first) > int(last):
            raise ValueError("has an inverted range %r" % part)
        width = len(first) if first.startswith("0") else 0
        out += ["%s%0*d%s" % (prefix, width, number, suffix) for number in range(int(first), int(last) + 1)]
    return out


def hostlist(text):
    """Node names of a Slurm hostlist as squeue's %N and gres.conf's NodeName= write it, such as
    bm-[1-2],pod-1 (ranges and lists in brackets, each name as expand() reads it). Raises ValueError."""
    names, depth, item = [], 0, ""
    for char in text + ",":
        if char == "," and depth == 0:
            if item:
                names.extend(expand(item))
            item = ""
            continue
        depth += {"[": 1, "]": -1}.get(char, 0)
        item += char
    return names
