# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The slurmd of a bare-metal worker: which Slurm release it may run beside slurmctld, the
version apt would leave installed, and the node attributes it registers with (--conf)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# Slurm major releases in order.
KNOWN_RELEASES = (
    "20.02", "20.11", "21.08", "22.05", "23.02", "23.11",
    "24.05", "24.11", "25.05", "25.11", "26.05",
)
# Slurm's compatibility window (Upgrade Guide, https://slurm.schedmd.com/upgrades.html,
# "Compatibility Window"): "Slurm has long supported in-place upgrades from the previous two
# major releases. With the change to a 6-month cycle in 2024, Slurm 24.11 introduced
# compatibility with the previous three major releases." So a slurmctld accepts slurmd up to
# RELEASES_BEHIND[0] releases older before WINDOW_WIDENED_IN, and RELEASES_BEHIND[1] from it on.
WINDOW_WIDENED_IN = "24.11"
RELEASES_BEHIND = (2, 3)

_VERSION_RE = re.compile(r"^(?:\d+:)?(\d{2})\.(\d{2})(?:\.(\d+))?")


def parse_slurm_version(value):
    """'26.05.5', 'slurm 26.05.5', '26.05.5-1' or '26.05' -> (26, 5, 5 or None)."""
    text = str(value).strip()
    if text.lower().startswith("slurm"):
        text = text.split(None, 1)[-1] if " " in text else text[5:]
    match = _VERSION_RE.match(text.strip())
    if not match:
        raise ValueError("%r is not a Slurm version (expected YY.MM[.patch])" % (value,))
    year, month, patch = match.groups()
    return int(year), int(month), (int(patch) if patch is not None else None)


def _months(year, month):
    return year * 12 + month


_KNOWN_MONTHS = [_months(*(int(x) for x in release.split("."))) for release in KNOWN_RELEASES]


def release_index(version):
    """Position of a version's major release in Slurm's release sequence."""
    year, month, _patch = parse_slurm_version(version)
    when = _months(year, month)
    if when > _KNOWN_MONTHS[-1]:
        # Releases after the last known one come every six months.
        return len(KNOWN_RELEASES) - 1 + (when - _KNOWN_MONTHS[-1] + 5) // 6
    if when < _KNOWN_MONTHS[0]:
        # Before 20.02 Slurm released every nine months (19.05, 18.08, 17.11, ...).
        return -((_KNOWN_MONTHS[0] - when + 8) // 9)
    # Within the known span: the newest known release not after this one.
    return max(index for index, known in enumerate(_KNOWN_MONTHS) if known <= when)


def release_name(index):
    """The YY.MM of the major release at release_index() position index (None before 20.02)."""
    if index < 0:
        return None
    if index < len(KNOWN_RELEASES):
        return KNOWN_RELEASES[index]
    months = _KNOWN_MONTHS[-1] + 6 * (index - len(KNOWN_RELEASES) + 1)
    year, month = divmod(months - 1, 12)
    return "%02d.%02d" % (year, month + 1)


def version_compat_error(slurmd_version, slurmctld_version, oldest=None):
    """None when slurmd may join slurmctld, else a message naming both versions. oldest ({release, why}, the
    model's slurmd_oldest): a release the cluster's slurm.conf needs at least, inside Slurm's window."""
    error = daemon_order_error("slurmd", slurmd_version, "slurmctld", slurmctld_version, "the controller")
    if error or not oldest:
        return error
    if release_index(slurmd_version) < release_index(oldest["release"]):
        return "slurmd %s is older than %s: %s (slurmd would refuse the slurm.conf it fetches)" % (
            slurmd_version, oldest["release"], oldest["why"])
    return None


def daemon_order_error(daemon, version, upper, upper_version, upper_role=None):
    """None when `daemon` at `version` may talk to `upper` at `upper_version` (slurmd to slurmctld,
    slurmctld to slurmdbd): not a newer major release, and within the compatibility window of `upper`;
    else a message naming both versions."""
    try:
        node = release_index(version)
        ctld = release_index(upper_version)
    except ValueError as exc:
        return str(exc)
    if node > ctld:
        return ("%s %s is newer than %s %s; %s must not be newer than %s"
                % (daemon, version, upper, upper_version, daemon, upper_role or upper))
    window = releases_behind(upper_version)
    if ctld - node > window:
        return ("%s %s is %d major releases older than %s %s; %s %s accepts %s up to %d "
                "releases older (Slurm's compatibility window: %d from %s on, %d before; "
                "https://slurm.schedmd.com/upgrades.html)"
                % (daemon, version, ctld - node, upper, upper_version, upper, upper_version, daemon, window,
                   RELEASES_BEHIND[1], WINDOW_WIDENED_IN, RELEASES_BEHIND[0]))
    return None


def releases_behind(slurmctld_version):
    """How many major releases older than slurmctld a slurmd may be (2 before 24.11, 3 from it on)."""
    return RELEASES_BEHIND[1] if release_index(slurmctld_version) >= release_index(WINDOW_WIDENED_IN) else RELEASES_BEHIND[0]


def _apt_policy(policy_output, field):
    """The first `field:` (Installed, Candidate) of `apt-cache policy PKG` output: a version, or ''
    for none."""
    for line in (policy_output or "").splitlines():
        key, _sep, value = line.strip().partition(":")
        if key == field:
            return "" if value.strip() == "(none)" else value.strip()
    return ""


def apt_policy_version(policy_output, pinned=""):
    """The version apt would leave installed: the pinned one, else the installed one, else
    the candidate; '' when the package is unknown. Input: `apt-cache policy PKG` output."""
    if pinned:
        return str(pinned)
    return _apt_policy(policy_output, "Installed") or _apt_policy(policy_output, "Candidate")


def _slurm_release(version):
    """'26.05.5-1' -> '26.05.5' (what slurmd reports as its Version), '26.05' -> '26.05'."""
    year, month, patch = parse_slurm_version(version)
    return "%02d.%02d" % (year, month) + ("" if patch is None else ".%d" % patch)


def upgrade_plan(policy_output, slurmctld_version, pinned="", running="", oldest=None):
    """What a rolling upgrade does to one host's slurmd. Input: `apt-cache policy slurmd` output
    (after the index was refreshed), the slurmctld version, the version asked for (else the
    candidate) and the Version slurmctld's record of the node shows ('' when it has none).
    Returns {"installed", "target", "release", "upgrade", "error"}: "release" is the target as
    slurmd reports it (26.05.5); "upgrade" is true when the packages are not at the target, or
    the slurmd that registered runs another release than the one installed (a run stopped
    between the package upgrade and the restart); "error" refuses the target: not installable,
    newer than slurmctld or outside its window (or older than oldest, version_compat_error), or
    older than what is installed."""
    installed = _apt_policy(policy_output, "Installed")
    target = str(pinned) if pinned else _apt_policy(policy_output, "Candidate")
    out = {"installed": installed, "target": target, "release": "", "upgrade": False, "error": ""}
    if not installed:
        out["error"] = "slurmd is not installed: converge the host with site.yml before upgrading it"
    elif not target:
        out["error"] = "no installable version of slurmd in the configured repositories"
    else:
        try:
            out["release"] = _slurm_release(target)
            older = _ordered(target) < _ordered(installed)
        except ValueError as exc:
            out["error"] = str(exc)
            return out
        out["error"] = version_compat_error(target, slurmctld_version, oldest) or (
            "the target slurmd %s is older than the installed %s; a rolling upgrade does not downgrade"
            % (target, installed) if older else "")
        restart_owed = bool(running) and running != _slurm_release(installed)
        out["upgrade"] = not out["error"] and (target != installed or restart_owed)
    return out


def _ordered(version):
    year, month, patch = parse_slurm_version(version)
    return year, month, patch or 0


def slurmd_conf_args(features=None, extra=None):
    """The --conf string for a dynamic slurmd: 'Feature=a,b Weight=10'."""
    parts = []
    if features:
        parts.append("Feature=%s" % ",".join(features))
    for key in sorted(extra or {}):
        parts.append("%s=%s" % (key, extra[key]))
    return " ".join(parts)
