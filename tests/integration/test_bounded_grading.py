"""A grader that runs past its time limit is an error for its run, and the session goes on;
Ctrl-C stops grading, the JavaScript engine included."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import reap, write_tree

HOSTILE = "a" * 30_000 + "!"


def suite(root: Path) -> None:
    write_tree(
        root,
        {
            "evals/hang/prompt.md": "---\nruns: 1\n---\nAnswer with a's.\n",
            "evals/hang/graders/backtrack.md": "---\ntype: regex\npattern: '(a+)+$'\n---\n",
            "evals/hang/graders/plain.md": "---\ntype: regex\npattern: 'aaa'\n---\n",
            "evals/fine/prompt.md": "---\nruns: 1\n---\nSay ok.\n",
            "evals/fine/graders/ok.md": "---\ntype: regex\npattern: 'ok'\n---\n",
        },
    )


def test_a_grader_past_its_time_limit_makes_its_run_an_error(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any, read_doc: Any
) -> None:
    suite(pytester.path)
    agent = scripted_agent([{"match": "a's", "reply": HOSTILE}, {"match": "ok", "reply": "ok"}])
    start = time.monotonic()
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-grader-timeout", "1",
        "--eval-json", "out.json",
    )  # fmt: skip
    assert time.monotonic() - start < 60
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*grader: backtrack: grader timed out after 1s*"])
    doc = read_doc("out.json")
    assert doc["errors"] == {"grader": 1}
    hang = next(c for c in doc["cases"] if c["name"] == "hang")
    (run,) = hang["arms"]["with"]
    assert run["infraError"] == "grader"
    verdicts = {g["name"]: g for g in run["graders"]}
    assert verdicts["backtrack"]["passed"] is None
    assert verdicts["backtrack"]["error"] == "grader_timeout"
    assert verdicts["plain"]["passed"] is True  # the other verdict is kept
    assert hang["aggregates"]["score"] is None  # kept out of the scores


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals, /proc")
def test_ctrl_c_stops_grading(pytester: pytest.Pytester, scripted_agent: Any) -> None:
    """Ctrl-C pressed twice while a pattern backtracks in the regex helper: the session ends
    interrupted, not when the pattern would (the first press stops the runs and lets the item
    end; the second raises at once, as the grace period would without it:
    tests/unit/test_stops.py)."""
    suite(pytester.path)
    agent = scripted_agent([{"match": "a's", "reply": HOSTILE}, {"match": "ok", "reply": "ok"}])
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "evals/hang", "-p", "no:cacheprovider", "-n0",
         "--eval-agent", agent, "--eval-grader-timeout", "120"],
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    helpers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not helpers and time.monotonic() < deadline and proc.poll() is None:
            helpers = _helpers_of(proc.pid)  # grading has begun: the helper starts on first use
            time.sleep(0.05)
        assert helpers, "the grader's pattern never reached the helper"
        proc.send_signal(signal.SIGINT)
        time.sleep(1.0)  # the first press is taken (a second one sent with it could merge)
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=30)
    finally:
        reap(proc)
        for pid in helpers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output
    assert b"KeyboardInterrupt" in output


def _helpers_of(parent: int) -> list[int]:
    """The regex helpers whose parent is ``parent`` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if b"pytest_plugin_evals.util.regexbox" not in (entry / "cmdline").read_bytes():
                continue
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[1]) == parent:
            found.append(int(entry.name))
    return found


def _cpu_seconds(pid: int) -> float:
    """The CPU time ``pid`` has used so far (0 once it has ended)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (an unreaped zombie has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal")
def test_the_regex_helper_ends_with_a_killed_controller(
    pytester: pytest.Pytester, scripted_agent: Any
) -> None:
    suite(pytester.path)
    done = pytester.path / "answered"
    agent = scripted_agent([{"match": "a's", "reply": HOSTILE}, {"match": "ok", "reply": "ok"}])
    agent = agent.replace("cmd:", f"cmd:sh -c 'touch {done}; exec \"$@\"' agent ", 1)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "evals/hang", "-p", "no:cacheprovider", "-n0",
         "--eval-agent", agent, "--eval-grader-timeout", "600",
         "--eval-unconfined"],  # the agent says so outside its run
        cwd=pytester.path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    helpers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not helpers and time.monotonic() < deadline and proc.poll() is None:
            helpers = _helpers_of(proc.pid) if done.exists() else []
            time.sleep(0.05)
        assert helpers, "the grader's pattern never reached the helper"
        # Well into the backtracking, in C code that holds the GIL: half a second of CPU, five
        # times what the helper's start takes (whatever the machine's load).
        while max(map(_cpu_seconds, helpers)) < 0.5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(_running(pid) for pid in helpers)
        proc.send_signal(signal.SIGKILL)  # no atexit, no finally: only the kernel can tell
        proc.wait(timeout=20)
        deadline = time.monotonic() + 5
        while any(_running(pid) for pid in helpers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_running(pid) for pid in helpers), "the helper outlived its controller"
    finally:
        reap(proc)
        for pid in helpers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
