# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import slurmd as sd


# --------------------------------------------------------------------------- versions


@pytest.mark.parametrize(
    "value, expected",
    [
        ("26.05.5", (26, 5, 5)),
        ("slurm 26.05.5", (26, 5, 5)),  # slurmd -V
        ("slurm-wlm 24.11.5", (24, 11, 5)),  # slurmd -V of Debian's packages
        ("26.05.5-1", (26, 5, 5)),  # Debian package version
        ("1:26.05.5-1", (26, 5, 5)),  # with an epoch
        ("26.05", (26, 5, None)),
        (" 26.05.5\n", (26, 5, 5)),
        (26.05, (26, 5, None)),  # an unquoted YAML float
    ],
)
def test_parse_slurm_version(value, expected):
    assert sd.parse_slurm_version(value) == expected


@pytest.mark.parametrize("value", ["latest", "", "26", "v26.05", "slurm", "26.5", "twenty-six", None])
def test_parse_slurm_version_rejects_garbage(value):
    with pytest.raises(ValueError, match="is not a Slurm version"):
        sd.parse_slurm_version(value)


def test_release_index_of_known_releases_follows_their_order():
    indexes = [sd.release_index(release) for release in sd.KNOWN_RELEASES]
    assert indexes == list(range(len(sd.KNOWN_RELEASES)))


def test_release_index_ignores_patch_and_package_suffix():
    assert sd.release_index("26.05.5-1") == sd.release_index("26.05") == sd.release_index("slurm 26.05.1")


def test_release_index_of_future_releases_continues_every_six_months():
    last = sd.release_index("26.05")
    assert sd.release_index("26.11") == last + 1
    assert sd.release_index("27.05") == last + 2
    assert sd.release_index("27.11.1") == last + 3


@pytest.mark.parametrize(
    "slurmd, slurmctld",
    [
        ("26.05.5", "26.05.5"),
        ("26.05.5", "26.05"),
        ("26.05.6", "26.05.5"),  # patch releases of one major release mix freely
        ("slurm 26.05.5", "26.05"),
        ("26.05.5-1", "26.05"),
        ("1:26.05.5-1", "26.05"),
        ("25.11.3", "26.05"),  # one release older
        ("25.05.1", "26.05"),  # two releases older
        ("24.11.5", "26.05"),  # three: Debian trixie's slurmd under Slinky's 26.05 controller
        ("24.05", "25.05"),  # three, with a 25.05 controller
        ("23.11", "24.11"),  # three, with the first controller of the wider window
        ("22.05", "23.11"),  # two, before 24.11
        ("24.05", "24.11"),
        ("26.05", "26.11"),  # future controller
        ("26.05", "27.05"),  # two future releases ahead
    ],
)
def test_version_compat_accepts(slurmd, slurmctld):
    assert sd.version_compat_error(slurmd, slurmctld) is None


@pytest.mark.parametrize(
    "slurmd, slurmctld",
    [
        ("26.11.0", "26.05.5"),
        ("27.05", "26.11"),
        ("26.05.5", "25.11"),
    ],
)
def test_version_compat_refuses_slurmd_newer_than_slurmctld(slurmd, slurmctld):
    error = sd.version_compat_error(slurmd, slurmctld)
    assert "newer than" in error
    assert slurmd in error and slurmctld in error


@pytest.mark.parametrize(
    "slurmd, slurmctld, behind, window",
    [
        ("24.05", "26.05", 4, 3),
        ("25.05", "27.05", 4, 3),
        ("23.11", "25.11", 4, 3),
        ("23.02", "25.05", 4, 3),
        ("22.05", "24.05", 3, 2),  # 24.05 still has the two-release window
        ("21.08", "23.11", 3, 2),
    ],
)
def test_version_compat_refuses_slurmd_outside_the_window(slurmd, slurmctld, behind, window):
    error = sd.version_compat_error(slurmd, slurmctld)
    assert error.startswith("slurmd %s is %d major releases older than slurmctld %s; slurmctld %s accepts slurmd up to %d "
                            % (slurmd, behind, slurmctld, slurmctld, window)), error
    assert "https://slurm.schedmd.com/upgrades.html" in error


@pytest.mark.parametrize("slurmctld, window", [("20.11", 2), ("23.11", 2), ("24.05", 2), ("24.11", 3), ("26.05", 3), ("27.11", 3)])
def test_releases_behind_widens_with_24_11(slurmctld, window):
    assert sd.releases_behind(slurmctld) == window


def test_version_compat_reports_unparsable_version():
    assert "'garbage' is not a Slurm version" in sd.version_compat_error("garbage", "26.05")


@pytest.mark.parametrize(
    "older, newer",
    [
        ("19.05", "20.02"),  # consecutive real releases: indexes must differ by exactly one
        ("25.08", "26.05"),  # must at least sort before
    ],
)
def test_release_index_outside_known_releases_keeps_order(older, newer):
    assert sd.release_index(older) < sd.release_index(newer)
    if older == "19.05":
        assert sd.release_index(newer) - sd.release_index(older) == 1
        assert sd.version_compat_error("19.05", "20.11") is None


# --------------------------------------------------------------------------- apt-cache policy

APT_INSTALLED = """\
slurmd:
  Installed: 26.05.5-1
  Candidate: 26.05.5-1
  Version table:
 *** 26.05.5-1 500
        500 http://repo.example.internal/slurm trixie/main amd64 Packages
        100 /var/lib/dpkg/status
"""

APT_INSTALLED_OLDER_THAN_CANDIDATE = """\
slurmd:
  Installed: 25.11.2-1
  Candidate: 26.05.5-1
  Version table:
     26.05.5-1 500
        500 http://repo.example.internal/slurm trixie/main amd64 Packages
 *** 25.11.2-1 100
        100 /var/lib/dpkg/status
"""

APT_NOT_INSTALLED = """\
slurmd:
  Installed: (none)
  Candidate: 26.05.5-1
  Version table:
     26.05.5-1 500
        500 http://repo.example.internal/slurm trixie/main amd64 Packages
"""

APT_NO_CANDIDATE = """\
slurmd:
  Installed: (none)
  Candidate: (none)
  Version table:
"""

APT_EPOCH = """\
slurmd:
  Installed: (none)
  Candidate: 1:26.05.5-1
  Version table:
     1:26.05.5-1 500
        500 http://repo.example.internal/slurm trixie/main amd64 Packages
"""


@pytest.mark.parametrize(
    "output, expected",
    [
        (APT_INSTALLED, "26.05.5-1"),
        (APT_INSTALLED_OLDER_THAN_CANDIDATE, "25.11.2-1"),
        (APT_NOT_INSTALLED, "26.05.5-1"),
        (APT_NO_CANDIDATE, ""),
        (APT_EPOCH, "1:26.05.5-1"),
        ("", ""),  # `apt-cache policy unknown-package` prints nothing on stdout
        (None, ""),
    ],
    ids=["installed", "installed-older", "not-installed", "no-candidate", "epoch", "unknown", "none"],
)
def test_apt_policy_version(output, expected):
    assert sd.apt_policy_version(output) == expected


@pytest.mark.parametrize("output", [APT_INSTALLED, APT_NOT_INSTALLED, ""])
def test_apt_policy_version_pinned_overrides(output):
    assert sd.apt_policy_version(output, "26.05.4-1") == "26.05.4-1"


def test_apt_policy_version_feeds_version_compat():
    assert sd.version_compat_error(sd.apt_policy_version(APT_EPOCH), "26.05") is None
    assert sd.version_compat_error(sd.apt_policy_version(APT_INSTALLED_OLDER_THAN_CANDIDATE), "26.05") is None


# --------------------------------------------------------------------------- rolling upgrade

@pytest.mark.parametrize("output, ctld, pinned, running, expected", [
    # trixie's 24.11 installed, forky's 26.05 offered, slurmctld 26.05: upgrade
    (APT_INSTALLED_OLDER_THAN_CANDIDATE, "26.05", "", "25.11.2",
     {"installed": "25.11.2-1", "target": "26.05.5-1", "release": "26.05.5", "upgrade": True, "error": ""}),
    # already at the candidate and running it: nothing to do
    (APT_INSTALLED, "26.05", "", "26.05.5",
     {"installed": "26.05.5-1", "target": "26.05.5-1", "release": "26.05.5", "upgrade": False, "error": ""}),
    # already at the candidate but slurmctld still lists the old slurmd: a restart is owed
    (APT_INSTALLED, "26.05", "", "25.11.2",
     {"installed": "26.05.5-1", "target": "26.05.5-1", "release": "26.05.5", "upgrade": True, "error": ""}),
    # no record in slurmctld: the packages decide
    (APT_INSTALLED, "26.05", "", "",
     {"installed": "26.05.5-1", "target": "26.05.5-1", "release": "26.05.5", "upgrade": False, "error": ""}),
    # a pinned target within the window, below the candidate
    (APT_INSTALLED_OLDER_THAN_CANDIDATE, "26.05", "25.11.3-1", "25.11.2",
     {"installed": "25.11.2-1", "target": "25.11.3-1", "release": "25.11.3", "upgrade": True, "error": ""}),
], ids=["upgrade", "at-target", "restart-owed", "no-record", "pinned"])
def test_upgrade_plan(output, ctld, pinned, running, expected):
    assert sd.upgrade_plan(output, ctld, pinned, running) == expected


@pytest.mark.parametrize("output, ctld, pinned, message", [
    (APT_INSTALLED_OLDER_THAN_CANDIDATE, "25.11", "",
     "slurmd 26.05.5-1 is newer than slurmctld 25.11; slurmd must not be newer than the controller"),
    (APT_INSTALLED, "26.05", "25.11.2-1",
     "the target slurmd 25.11.2-1 is older than the installed 26.05.5-1; a rolling upgrade does not downgrade"),
    (APT_INSTALLED, "26.05", "26.05.4-1",
     "the target slurmd 26.05.4-1 is older than the installed 26.05.5-1; a rolling upgrade does not downgrade"),
    (APT_NOT_INSTALLED, "26.05", "", "slurmd is not installed: converge the host with site.yml before upgrading it"),
    (APT_NO_CANDIDATE, "26.05", "", "slurmd is not installed"),
    (APT_INSTALLED.replace("Candidate: 26.05.5-1", "Candidate: (none)"), "26.05", "",
     "no installable version of slurmd in the configured repositories"),
    (APT_INSTALLED, "26.05", "latest", "'latest' is not a Slurm version"),
    (APT_INSTALLED_OLDER_THAN_CANDIDATE, "30.05", "",
     "slurmd 26.05.5-1 is 8 major releases older than slurmctld 30.05"),
], ids=["newer-than-slurmctld", "downgrade", "patch-downgrade", "not-installed", "nothing", "no-candidate",
        "garbage", "outside-window"])
def test_upgrade_plan_refuses(output, ctld, pinned, message):
    plan = sd.upgrade_plan(output, ctld, pinned, "")
    assert message in plan["error"]
    assert plan["upgrade"] is False


def test_upgrade_plan_release_of_an_epoch_version():
    plan = sd.upgrade_plan(APT_EPOCH.replace("Installed: (none)", "Installed: 1:26.05.4-1"), "26.05")
    assert (plan["target"], plan["release"], plan["upgrade"], plan["error"]) == ("1:26.05.5-1", "26.05.5", True, "")


# --------------------------------------------------------------------------- slurmd --conf


@pytest.mark.parametrize(
    "features, extra, expected",
    [
        (["baremetal"], None, "Feature=baremetal"),
        (["baremetal", "gpu"], {"Weight": 10, "Gres": "gpu:1"}, "Feature=baremetal,gpu Gres=gpu:1 Weight=10"),
        ([], {"Weight": 5}, "Weight=5"),
        (None, None, ""),
        ([], {}, ""),
    ],
)
def test_slurmd_conf_args(features, extra, expected):
    assert sd.slurmd_conf_args(features, extra) == expected


def test_dnfs_index_query_output_reads_as_apt_cache_policy(fixture_text):
    # captured with real dnf 4.14 (tests/unit/fixtures/dnf/capture.sh)
    none = fixture_text("dnf/index_query_none_installed.txt")
    older = fixture_text("dnf/index_query_older_installed.txt")
    assert sd.apt_policy_version(none) == "26.05.5-1.el9"
    assert sd.apt_policy_version(older) == "26.05.3-1.el9"
    assert sd.upgrade_plan(older, "26.05") == {
        "installed": "26.05.3-1.el9", "target": "26.05.5-1.el9", "release": "26.05.5", "upgrade": True, "error": ""}
    assert sd.upgrade_plan(none, "26.05")["error"] == "slurmd is not installed: converge the host with site.yml before upgrading it"
