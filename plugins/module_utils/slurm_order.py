# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm's upgrade order on the Kubernetes side: what the slurm chart's values would run against what runs.

Slurm's upgrade guide (26.05, doc/html/upgrades.shtml): "upgrade slurmdbd, then slurmctld, then
slurmd"; slurmdbd "must be at the same or higher major release number as the slurmctld daemon(s)"
and "should be upgraded first"; its first start after a major upgrade converts the database, "may be
unresponsive for tens of minutes"; a daemon accepts peers up to two major releases older (three from
24.11 on); and "reverting an upgrade (or downgrading) is not supported once any of the Slurm daemons
have been started". One Helm upgrade of the slurm chart changes every image at once and the operator
rolls the pods together, so the order is kept by refusing, before anything changes:
- a slurmctld newer than the slurmdbd the values ask for, or than the slurmdbd that runs now (slurmdbd
  first, in a run of its own: its pod is ready once its conversion is done);
- a slurmd of a NodeSet newer than the slurmctld the values ask for;
- a slurmdbd or slurmctld older than the one that runs now, or more releases newer than the window.
Versions come from the image tags, as Slinky tags them (26.05-ubuntu26.04); an image whose tag names
no version (a digest only) is not checked. Bare-metal slurmd has its own check (upgrade_check).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.slime.hybrid.plugins.module_utils import slurmd

# The slurm chart 1.2.1's tag of every Slurm image (helm/slurm/values.yaml; tests/unit compare).
CHART_TAG = "26.05-ubuntu26.04"
_TAG_VERSION_RE = re.compile(r"^(\d{2}\.\d{2})(?:\.\d+)?(?:$|[^0-9.])")
UPGRADE_GUIDE = "Slurm's upgrade order: slurmdbd, slurmctld, slurmd; https://slurm.schedmd.com/upgrades.html"


def image_version(image, default_tag=CHART_TAG):
    """The Slurm release (YY.MM) an image's tag names: the image a reference or the chart's
    {repository, tag, digest}, completed by the chart's tag; None when the tag names none."""
    if isinstance(image, str):
        name = image.split("@", 1)[0]
        tag = name.rsplit(":", 1)[-1] if ":" in name.rsplit("/", 1)[-1] else ""
    else:
        tag = (image or {}).get("tag") or default_tag
    match = _TAG_VERSION_RE.match(str(tag))
    return match.group(1) if match else None


def _get(values, *path):
    for key in path:
        values = (values or {}).get(key) if isinstance(values, dict) else None
    return values


def _merged_image(*images):
    """Images as the chart merges them (later wins key by key; a reference string replaces all)."""
    out = {}
    for image in images:
        if isinstance(image, str):
            out = image
        elif isinstance(image, dict):
            out = dict(out, **image) if isinstance(out, dict) else dict(image)
    return out


def targets(values):
    """What the values would run: {slurmctld, slurmdbd (None without accounting), slurmd: {nodeset: release}}."""
    accounting_on = bool(_get(values, "accounting", "enabled")) and not _get(values, "accounting", "external")
    defaults = _get(values, "nodesetDefaults", "slurmd", "image")
    return {
        "slurmctld": image_version(_merged_image(_get(values, "controller", "slurmctld", "image"))),
        "slurmdbd": image_version(_merged_image(_get(values, "accounting", "slurmdbd", "image"))) if accounting_on else None,
        "slurmd": dict((name, image_version(_merged_image(defaults, _get(nodeset, "slurmd", "image"))))
                       for name, nodeset in sorted((values.get("nodesets") or {}).items())
                       if (nodeset or {}).get("enabled", True)),
    }


def running(pods):
    """What runs now, from the pods (k8s_info resources): {slurmctld, slurmdbd}, None where none runs or the
    tag names no release; the newest where pods differ (a rollout)."""
    out = {"slurmctld": None, "slurmdbd": None}
    for pod in pods or []:
        app = ((pod.get("metadata") or {}).get("labels") or {}).get("app.kubernetes.io/name")
        if app not in out:
            continue
        containers = (pod.get("spec") or {}).get("containers") or []
        images = [c.get("image", "") for c in containers if c.get("name") == app] or [c.get("image", "") for c in containers[:1]]
        for release in [image_version(image, "") for image in images]:
            if release and (out[app] is None or slurmd.release_index(release) > slurmd.release_index(out[app])):
                out[app] = release
    return out


def _newer(a, b):
    return slurmd.release_index(a) > slurmd.release_index(b)


def _replacing(daemon, target, now):
    """A daemon's target against the one that runs: no downgrade, no jump past the window."""
    if not target or not now:
        return None
    if _newer(now, target):
        return ("%s %s would replace %s %s: a downgrade, which Slurm does not support once the daemon has started "
                "(it converted its state%s)" % (daemon, target, daemon, now, " and the database" if daemon == "slurmdbd" else ""))
    jump = slurmd.release_index(target) - slurmd.release_index(now)
    window = slurmd.releases_behind(target)
    if jump > window:
        return ("%s %s would replace %s %s, %d major releases older: %s %s upgrades from at most %d releases older; "
                "upgrade in steps (%s)" % (daemon, target, daemon, now, jump, daemon, target, window, UPGRADE_GUIDE))
    return None


def errors(values, pods):
    """Every way the values would break Slurm's upgrade order against what runs (pods), naming both versions."""
    want, now = targets(values), running(pods)
    out = []
    ctl, dbd = want["slurmctld"], want["slurmdbd"]
    if ctl and dbd:
        error = slurmd.daemon_order_error("slurmctld", ctl, "slurmdbd", dbd)
        if error:
            out.append("in the values, %s (%s)" % (error, UPGRADE_GUIDE))
    if ctl and dbd and now["slurmdbd"] and _newer(ctl, now["slurmdbd"]) and not _newer(now["slurmdbd"], dbd):
        out.append("slurmctld %s would start while slurmdbd %s runs, before slurmdbd %s has converted the database: "
                   "upgrade slurmdbd first, in a run that changes only accounting.slurmdbd.image, then slurmctld "
                   "(%s)" % (ctl, now["slurmdbd"], dbd, UPGRADE_GUIDE))
    for daemon, target in (("slurmdbd", dbd), ("slurmctld", ctl)):
        error = _replacing(daemon, target, now[daemon])
        if error:
            out.append(error)
    for name, release in sorted(want["slurmd"].items()):
        error = release and ctl and slurmd.version_compat_error(release, ctl)
        if error:
            out.append("NodeSet %s: %s (%s)" % (name, error, UPGRADE_GUIDE))
    return out


def slurmdbd_upgrade(values, pods):
    """[running, target] when the values upgrade slurmdbd to a newer major release (its first start converts the
    database), else []."""
    dbd, now = targets(values)["slurmdbd"], running(pods)["slurmdbd"]
    return [now, dbd] if dbd and now and _newer(dbd, now) else []
