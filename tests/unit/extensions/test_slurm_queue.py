# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""extensions/eda/plugins/event_source/slurm_queue.py: polls through the configured command,
puts a scale_out event on the queue for pending bare-metal jobs, nothing while nothing is to
change, and goes on after a failing poll. The Slurm commands are a script printing real
26.05 output (the 'command' option is the way a site reaches its controller)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import asyncio
import os
import runpy
import stat

import pytest

PLUGIN = os.path.join(os.path.dirname(__file__), "..", "..", "..", "extensions", "eda", "plugins", "event_source", "slurm_queue.py")
NODES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "scontrol_show_node_26.05.txt")


def fake_slurm(tmp_path, squeue):
    """A 'command' prefix: runs squeue/scontrol/date as this script answers them, and notes each
    command it is asked to run in the file calls (one line each, see _calls)."""
    (tmp_path / "squeue.txt").write_text(squeue)
    script = tmp_path / "slurm"
    script.write_text(
        "#!/bin/sh\n"
        'echo "$1" >>%s\n'
        'case "$1" in\n'
        "  squeue) cat %s ;;\n"
        "  scontrol) cat %s ;;\n"
        "  date) echo poll >>%s; echo 2026-11-22T09:00:00 ;;\n"
        "  *) echo unknown >&2; exit 2 ;;\n"
        "esac\n" % (tmp_path / "calls", tmp_path / "squeue.txt", os.path.abspath(NODES), tmp_path / "polls"))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return [str(script)]


def _polls(args):
    """How many polls the fake_slurm command has answered (each poll asks `date` once, last)."""
    counter = os.path.join(os.path.dirname(args["command"][0]), "polls") if args.get("command") else ""
    if not os.path.exists(counter):
        return 0
    with open(counter) as stream:
        return len(stream.readlines())


def _calls(args):
    """{command: how many times the plugin ran it} through the fake_slurm command."""
    path = os.path.join(os.path.dirname(args["command"][0]), "calls")
    if not os.path.exists(path):
        return {}
    with open(path) as stream:
        lines = stream.read().split()
    return dict((name, lines.count(name)) for name in set(lines))


def assert_polled(args, polls):
    """The plugin really polled before a test concludes "no event": `polls` whole polls (each asks
    squeue, scontrol and date, in this order) and the next one begun, as first_events waits for."""
    assert _polls(args) > polls, "the plugin answered %d poll(s); the test needs %d" % (_polls(args), polls + 1)
    calls = _calls(args)
    assert min(calls.get("squeue", 0), calls.get("scontrol", 0)) > polls, calls


async def first_events(args, polls):
    """Run the plugin's main() until it has finished `polls` polls (it has started the next one),
    at most 30 s, and return the events it put. Without a command, for 0.3 s."""
    plugin = runpy.run_path(PLUGIN)  # as ansible-rulebook loads it
    queue = asyncio.Queue()
    task = asyncio.ensure_future(plugin["main"](queue, args))
    deadline = asyncio.get_event_loop().time() + (30 if args.get("command") else 0.3)
    while not task.done() and _polls(args) <= polls and asyncio.get_event_loop().time() < deadline:
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    events = []
    while not queue.empty():
        events.append(queue.get_nowait())
    return events


def test_pending_bare_metal_job_makes_one_scale_out_event(tmp_path):
    command = fake_slurm(tmp_path, "41|PENDING|1|baremetal|Resources||all\n")
    events = asyncio.run(first_events({"command": command, "hosts": ["bm-9"], "interval": 0, "idle_time": 60}, 3))
    # One event: the next polls count bm-9 as coming.
    assert events == [{"slurm_autoscale": {"action": "scale_out", "hosts": ["bm-9"], "reason": events[0]["slurm_autoscale"]["reason"]}}]
    assert "need 1 nodes" in events[0]["slurm_autoscale"]["reason"]


def test_no_event_while_nothing_is_to_change(tmp_path):
    command = fake_slurm(tmp_path, "41|PENDING|1|pod|Resources||all\n")
    args = {"command": command, "hosts": ["bm-9"], "interval": 0}
    assert asyncio.run(first_events(args, 2)) == []
    assert_polled(args, 2)  # two polls saw the queue and decided nothing


def test_a_failing_poll_is_logged_and_polling_goes_on(tmp_path, caplog):
    command = fake_slurm(tmp_path, "not|squeue|output\n")
    args = {"command": command, "hosts": ["bm-9"], "interval": 0}
    assert asyncio.run(first_events(args, 2)) == []
    assert "does not have the fields" in caplog.text
    assert_polled(args, 2)  # polling went on after the first failing poll
    assert caplog.text.count("does not have the fields") >= 2


def test_bad_policy_options_are_refused_at_start(tmp_path):
    with pytest.raises(ValueError, match="min_nodes=5 is more than max_nodes=1"):
        asyncio.run(first_events({"command": [], "hosts": ["bm-9"], "min_nodes": 5}, 1))


def test_numbers_given_as_text_by_a_rulebook_are_read(tmp_path):
    command = fake_slurm(tmp_path, "41|PENDING|2|baremetal|Resources||all\n")
    events = asyncio.run(first_events({"command": command, "hosts": ["bm-8", "bm-9"], "interval": "0",
                                       "max_nodes": "1", "idle_time": "600"}, 2))
    assert [e["slurm_autoscale"]["hosts"] for e in events] == [["bm-8"]]
