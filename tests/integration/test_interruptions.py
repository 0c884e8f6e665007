"""Interruptions: Ctrl-C, SIGTERM, ``-x`` and ``--maxfail`` leave a partial document that fails
every gate, and no process a run started outlives it (``setsid`` grandchildren included)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from tests.helpers import live_processes, reap, write_tree

pytestmark = [
    pytest.mark.workers,
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="Linux: real signals, /proc"),
]

#: An agent that answers "done", except for a prompt with "slow": that one starts a grandchild
#: in a session of its own (it outlives a process-group kill) and waits. Both carry the
#: test's marker (the agent's argument) on their command lines: a run's PIDs are its
#: sandbox's own, so the test finds them by it.
AGENT = """\
import subprocess, sys, time
prompt = sys.stdin.read()
marker = sys.argv[1]
name = prompt.split()[-1].strip(".")
if "slow" in prompt:
    code = "import time; time.sleep(300)"
    subprocess.Popen([sys.executable, "-c", code, f"{marker}-{name}-grandchild"],
                     start_new_session=True)
    print("grandchild started", flush=True)
    time.sleep(300)
print("done")
"""


def none_left(marker: str, seconds: float = 10) -> bool:
    """Whether no process holds ``marker``, or none does within ``seconds``."""
    deadline = time.monotonic() + seconds
    while live_processes(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def appears(marker: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not live_processes(marker):
        assert time.monotonic() < deadline, f"{marker} never started"
        time.sleep(0.05)


def recorded(root: Path, case: str, seconds: float = 60) -> None:
    """Wait until the run of ``case`` was recorded in the session's results folder."""
    deadline = time.monotonic() + seconds
    while not list(root.glob(f"evals/results/*/runs/{case}-*/*/meta.json")):
        assert time.monotonic() < deadline, f"{case} was never recorded"
        time.sleep(0.05)


def suite(root: Path, names: list[str]) -> tuple[str, str]:
    """The cases ``names`` and the agent; returns the agent's spec and its marker."""
    files = {}
    for name in names:
        files[f"evals/{name}/prompt.md"] = f"---\nruns: 1\n---\nRun {name}.\n"
        files[f"evals/{name}/graders/done.md"] = "---\ntype: regex\npattern: done\n---\n"
    write_tree(root, {**files, "agent.py": AGENT})
    marker = f"evals-probe-{uuid.uuid4().hex}"
    return f"cmd:{sys.executable} {root / 'agent.py'} {marker}", marker


@pytest.mark.parametrize(
    ("workers", "how"), [("-n0", "ctrl-c"), ("-n2", "ctrl-c"), ("-n2", "sigterm")]
)
def test_an_interrupted_session_writes_a_partial_document_and_leaves_nothing_running(
    pytester: pytest.Pytester, workers: str, how: str
) -> None:
    """Ctrl-C (SIGINT to the terminal's whole foreground group), or SIGTERM (to the controller
    alone, with its workers still making runs), once a run was made: the runs made so far are
    kept, the stopped one too, in the document and the JUnit file alike. (SIGTERM before any
    run ended, in either process: the test below.)"""
    agent, marker = suite(pytester.path, ["a-fast", "b-fast", "c-slow", "d-last"])
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "evals", workers, "-p", "no:cacheprovider",
         f"--eval-agent={agent}", "--eval-json=out.json", "--eval-run-ahead=off",
         "--junitxml=out.xml"],
        cwd=pytester.path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    try:
        appears(f"{marker}-c-slow-grandchild")
        # Under -n 2 the fast runs go on beside the slow one: the signal comes once a-fast's run
        # was recorded (not after a guess at how long it takes).
        recorded(pytester.path, "a-fast")
        time.sleep(0.3)
        if how == "ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)  # the terminal's whole foreground group
        else:
            proc.send_signal(signal.SIGTERM)  # what timeout, docker stop and CI send
        output, _ = proc.communicate(timeout=60)
    finally:
        reap(proc, group=True)
    text = output.decode(errors="replace")
    assert proc.returncode == 2, text
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    assert doc["partial"] is True and doc["partialReason"] == "interrupted", text
    assert doc["aggregates"]["thresholdMet"] is False
    assert doc["aggregates"]["casesPassed"] < doc["aggregates"]["casesTotal"]
    # The slow run was not made: it is not started, or (xdist) kept as stopped.
    stopped = {c["name"] for c in doc["cases"] for r in c["arms"]["with"]
               if r["infraError"] == "interrupted"}  # fmt: skip
    assert "c-slow" in {n["case"] for n in doc["notStarted"]} | stopped
    assert "a-fast" in {c["name"] for c in doc["cases"]}  # the runs made so far are kept
    assert "the session was interrupted:" in text and "the result is partial" in text
    assert none_left(marker), "the slow run's agent or grandchild outlived the session"
    # Every run that started, the one stopped included, is in the JUnit file as in the
    # document: its report came the ordinary way, which every writer reads.
    runs = {r["nodeid"] for c in doc["cases"] for r in c["arms"]["with"]}
    assert "evals/c-slow::c-slow[1]" in runs, text
    assert junit_runs(pytester.path / "out.xml") == runs, text


def junit_runs(path: Path) -> set[str]:
    """The node ids of the items the JUnit file has a result of (not skipped)."""
    tree = ET.parse(path)
    return {
        f"{case.get('classname', '').replace('.', '/')}::{case.get('name')}"
        for case in tree.iter("testcase")
        if case.find("skipped") is None
    }


@pytest.mark.parametrize("mode", [[], ["--eval-unconfined"]], ids=["confined", "unconfined"])
def test_a_grandchild_does_not_outlive_its_run(pytester: pytest.Pytester, mode: list[str]) -> None:
    """A run past its timeout is killed with everything it started, setsid or not: in its
    sandbox (its PID namespace ends with it), and unconfined (by the run's token)."""
    agent, marker = suite(pytester.path, ["a-slow", "b-fast"])
    prompt = pytester.path / "evals" / "a-slow" / "prompt.md"
    prompt.write_text("---\nruns: 1\ntimeout_seconds: 2\n---\nRun a-slow.\n", encoding="utf-8")
    result = pytester.runpytest(
        "evals", "-n0", "-p", "no:cacheprovider", f"--eval-agent={agent}",
        "--eval-run-ahead=off", *mode,
    )  # fmt: skip
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*timed out after 2s*", "*grandchild started*"])
    assert none_left(marker), "the run's grandchild outlived it"


@pytest.mark.parametrize(
    ("workers", "stop"), [("-n0", "-x"), ("-n2", "--maxfail=2")], ids=["n0-x", "n2-maxfail"]
)
def test_stopping_after_failures_is_partial(
    pytester: pytest.Pytester, scripted_agent: Any, workers: str, stop: str
) -> None:
    """-x is --maxfail=1 to pytest: one of the two in each process layout."""
    files = {}
    for name in ("a", "b", "c", "d", "e", "f"):
        files[f"evals/{name}/prompt.md"] = f"---\nruns: 1\n---\nCase {name}.\n"
        files[f"evals/{name}/graders/ok.md"] = "---\ntype: regex\npattern: never\n---\n"
    write_tree(pytester.path, files)
    agent = scripted_agent([{"match": "Case", "reply": "no"}])
    result = pytester.runpytest(
        "evals", workers, "-p", "no:cacheprovider", stop, "--eval-agent", agent,
        "--eval-json", "out.json", "--eval-run-ahead", "off",
    )  # fmt: skip
    assert result.ret != 0
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    assert doc["partial"] is True and doc["partialReason"] == "maxfail"
    assert doc["aggregates"]["thresholdMet"] is False
    assert doc["aggregates"]["runsNotStarted"] == sum(n["runs"] for n in doc["notStarted"]) > 0
    assert doc["aggregates"]["casesTotal"] == 6
    result.stdout.fnmatch_lines(["-x/--maxfail: * selected run(s) of * case(s) were not started*"])


def names_running(marker: str) -> set[str]:
    """The cases whose agent (or grandchild) is running now, by their command lines."""
    names = set()
    for pid in live_processes(marker):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        for part in cmdline.split("\0"):
            if part.startswith(f"{marker}-"):
                names.add(part.removeprefix(f"{marker}-").removesuffix("-grandchild"))
    return names


@pytest.mark.parametrize("workers", ["-n0", "-n2"])
def test_a_session_terminated_before_its_first_run_ends_still_writes_the_partial_document(
    pytester: pytest.Pytester, workers: str
) -> None:
    """SIGTERM (what timeout, docker stop and CI send; the controller alone gets it) while the
    first runs are still going: the document says no run was made and why, the stopped runs
    are in the JUnit file as in the document, and no run starts after the signal (an xdist
    worker was sent more items)."""
    agent, marker = suite(pytester.path, ["a-slow", "b-slow", "c-slow", "d-slow", "e-slow"])
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "evals", workers, "-p", "no:cacheprovider",
         f"--eval-agent={agent}", "--eval-json=out.json", "--eval-run-ahead=off",
         "--junitxml=out.xml"],
        cwd=pytester.path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    try:
        wanted = 2 if workers == "-n2" else 1
        deadline = time.monotonic() + 60
        while len(names_running(f"{marker}")) < wanted:
            assert time.monotonic() < deadline, "the first runs never started"
            time.sleep(0.05)
        before = names_running(marker)
        proc.send_signal(signal.SIGTERM)
        seen: set[str] = set()
        while proc.poll() is None and time.monotonic() < deadline + 60:
            seen |= names_running(marker)
            time.sleep(0.02)
        output, _ = proc.communicate(timeout=60)
    finally:
        reap(proc, group=True)
    text = output.decode(errors="replace")
    assert seen <= before, f"runs started after SIGTERM: {sorted(seen - before)}\n{text}"
    assert proc.returncode == 2, text
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    assert doc["partial"] is True and doc["partialReason"] == "interrupted", text
    assert doc["aggregates"]["thresholdMet"] is False
    # A run being made when the signal came is kept, stopped (when its report could be sent).
    made = {c["name"] for c in doc["cases"]}
    assert made <= before
    assert all(r["infraError"] == "interrupted" for c in doc["cases"] for r in c["arms"]["with"])
    assert {n["case"] for n in doc["notStarted"]} | made == {f"{x}-slow" for x in "abcde"}
    assert doc["aggregates"]["runsNotStarted"] == 5 - len(made)
    assert f"the session was interrupted: {5 - len(made)} selected run(s) of" in text
    runs = {r["nodeid"] for c in doc["cases"] for r in c["arms"]["with"]}
    assert junit_runs(pytester.path / "out.xml") == runs, text
    assert none_left(marker)


def test_a_session_past_its_timeout_ends_with_the_partial_document(
    pytester: pytest.Pytester,
) -> None:
    """Under two workers, the runs made before the timeout kept (in one process: the test
    below, where the timer's SIGINT must not be lost)."""
    agent, marker = suite(pytester.path, ["a-fast", "b-slow", "c-slow", "d-fast"])
    started = time.monotonic()
    # 30 s: on a loaded machine two xdist workers can take 15 s to start and collect, and the
    # timeout must end the session after the fast case's run, not before any run
    result = pytester.runpytest_subprocess(
        "evals", "-n2", "-p", "no:cacheprovider", f"--eval-agent={agent}",
        "--eval-json=out.json", "--eval-run-ahead=off", "--eval-session-timeout=30",
    )  # fmt: skip
    took = time.monotonic() - started
    assert took < 200, took  # the slow runs would take 300 s each
    assert result.ret == pytest.ExitCode.INTERRUPTED
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    assert doc["partial"] is True and doc["partialReason"] == "interrupted"
    assert doc["aggregates"]["thresholdMet"] is False
    assert "a-fast" in {c["name"] for c in doc["cases"]}
    result.stdout.fnmatch_lines(["--eval-session-timeout 30s reached: * selected run(s) of *"])
    assert none_left(marker)


def test_the_session_timeout_holds_where_sigint_is_ignored(pytester: pytest.Pytester) -> None:
    """A session started with SIGINT ignored (``pytest &`` in a CI script) still ends at its
    ``--eval-session-timeout`` with the partial document: the timer's SIGINT is not lost."""
    agent, marker = suite(pytester.path, ["a-fast", "b-slow"])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    started = time.monotonic()
    # SIGINT is ignored by a first interpreter that then execs pytest (an ignored signal stays
    # ignored across exec, as a shell's ``&`` leaves it): no Python code runs between fork and
    # exec, which can deadlock in a child of a process with threads (``preexec_fn``).
    ignore_then_exec = (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
        "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", ignore_then_exec,
         "-m", "pytest", "evals", "-n0", "-p", "no:cacheprovider",
         f"--eval-agent={agent}", "--eval-json=out.json", "--eval-run-ahead=off",
         "--eval-session-timeout=15"],
        cwd=pytester.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=200)  # the slow run would take 300 s
    finally:
        reap(proc, group=True)
    text = out.decode("utf-8", "replace")
    assert time.monotonic() - started < 200
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, text
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    assert doc["partial"] is True and doc["partialReason"] == "interrupted"
    assert re.search(r"--eval-session-timeout 15s reached: \d+ selected run\(s\) of", text), text
    assert "a-fast" in {c["name"] for c in doc["cases"]}  # the run made before it is kept
    assert none_left(marker)


@pytest.mark.parametrize("pids", ["own", "shared"])
def test_a_controller_killed_with_sigkill_leaves_nothing_after_the_next_session(
    pytester: pytest.Pytester, pids: str
) -> None:
    """An unconfined agent dies with its controller. In a PID namespace of its own (``own``:
    where bubblewrap can make one) what it started in a session of its own ends at once too;
    without one (``shared``: no bubblewrap on ``PATH``) the next session finds it by its tag.
    The killed session's temporary folder is gone once the next session has started."""
    agent, marker = suite(pytester.path, ["a-slow"])
    try:
        _killed_controller(pytester, agent, marker, pids)
    finally:
        for pid in live_processes(marker):  # whatever a failed check left
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _killed_controller(pytester: pytest.Pytester, agent: str, marker: str, pids: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    if pids == "shared":
        env["PATH"] = str(pytester.path / "no-tools")  # no bwrap: the run is started as it is
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "evals", "-n0", "-p", "no:cacheprovider",
         f"--eval-agent={agent}", "--eval-unconfined"],
        cwd=pytester.path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        appears(f"{marker}-a-slow-grandchild")
        (grandchild,) = live_processes(f"{marker}-a-slow-grandchild")
        environ = Path(f"/proc/{grandchild}/environ").read_bytes().split(b"\0")
        tag = next(v for v in environ if v.startswith(b"PYTEST_PLUGIN_EVALS_SESSION="))
        shared = Path(tempfile.gettempdir()) / tag.partition(b"=")[2].decode()
        assert shared.is_dir()
        agents = [p for p in live_processes(marker) if p != grandchild]
        assert agents
        # Its PIDs are its own, or the host's (any session of this user sweeps what a killed
        # one left: only where the grandchild lives tells the two apart).
        host = os.readlink("/proc/self/ns/pid")
        assert (os.readlink(f"/proc/{grandchild}/ns/pid") != host) is (pids == "own")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while any(p in live_processes(marker) for p in agents):
            assert time.monotonic() < deadline, "the agent outlived its controller"
            time.sleep(0.05)
        if pids == "own":  # the kernel ends its namespace with it
            assert none_left(marker, 5), "what the agent started (setsid) outlived its controller"
        # Without one, the grandchild lives on until a session starts (any session of this
        # user: one in another test may sweep it first).
    finally:
        reap(proc, group=True)
    later = pytester.path / "later"
    write_tree(
        later,
        {
            "evals/quick/prompt.md": "---\nruns: 1\n---\nRun quick.\n",
            "evals/quick/graders/done.md": "---\ntype: regex\npattern: done\n---\n",
        },
    )
    result = pytester.runpytest(
        str(later / "evals"), "-n0", "-p", "no:cacheprovider", f"--eval-agent={agent}",
        "--eval-unconfined",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    assert none_left(marker), "what the killed session's run started is still running"
    assert not shared.exists(), "the killed session's temporary folder was left behind"
