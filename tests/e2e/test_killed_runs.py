"""A run of an agent CLI killed by a signal says which, in the words every agent uses
(``killed by SIGKILL``; ``exit 137 (killed by SIGKILL)`` when its sandbox passes it on), never
a bare ``exit -9`` or ``exit 137``: the real Codex, Gemini and Copilot CLIs against a scripted
model that never answers in time, killed while they wait."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, delay, text
from tests.helpers import write_tree

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="Linux: real signals, /proc")


def processes_of(binary: str, model: ScriptedModel) -> list[int]:
    """The live processes of the CLI ``binary`` itself that talk to this test's ``model``:
    started as it, or by the interpreter its first line names (not the sandbox's launcher,
    which names it further on). Another test's CLI on the other worker talks to another model
    (another port) and is left alone."""
    names = {binary.encode(), os.path.realpath(binary).encode()}
    endpoint = f"127.0.0.1:{model.port}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError, IndexError):
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            if names & set((entry / "cmdline").read_bytes().split(b"\0")[:2]) and (
                endpoint in (entry / "environ").read_bytes()
            ):
                found.append(int(entry.name))
    return found


def kill_when_waiting(binary: str, model: ScriptedModel, stop: threading.Event) -> None:
    """Once the CLI has asked the model (it waits for an answer), SIGKILL every process of it."""
    while not stop.wait(0.1):
        waiting = any(r["status"] is None and r["prompt"] for r in model.requests)
        if waiting and processes_of(binary, model):
            for pid in processes_of(binary, model):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            return


@pytest.mark.parametrize("agent", ["codex", "gemini", "copilot"])
def test_a_cli_killed_by_a_signal_says_which(
    pytester: pytest.Pytester,
    scripted_model: ScriptedModel,
    request: pytest.FixtureRequest,
    agent: str,
) -> None:
    write_tree(
        pytester.path,
        {
            "evals/hangs/prompt.md": "---\nruns: 1\n---\nSay hi after a long while\n",
            "evals/hangs/graders/hi.md": "---\ntype: regex\npattern: hi\n---\n",
        },
    )
    scripted_model.add(Rule(when_prompt="", reply=delay(120) + text("hi")))
    binary = request.getfixturevalue(f"{agent}_bin")
    run = request.getfixturevalue(f"run_{agent}")
    stop = threading.Event()
    killer = threading.Thread(target=kill_when_waiting, args=(binary, scripted_model, stop))
    killer.start()
    started = time.monotonic()
    try:
        result, doc = run("-n0")
    finally:
        stop.set()
        killer.join()
    assert time.monotonic() - started < 100, "the run was not killed"
    # Killed before it answered: an infrastructure error of the run, kept out of the scores.
    result.assert_outcomes(errors=1)
    (run_doc,) = doc["cases"][0]["arms"]["with"]
    error = run_doc["error"]
    assert "killed by SIGKILL" in error, error
    assert not re.search(r"exit(?:ed)? -9|exit(?:ed)? 137(?! \(killed by SIGKILL\))", error), error
    result.stdout.fnmatch_lines(["*killed by SIGKILL*"])
