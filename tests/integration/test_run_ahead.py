"""Runs made ahead of their items: the next item's run goes on while the current one's does, and
a run that no item takes is stopped at the end of the session. How many runs a process keeps in
flight (``--eval-max-concurrency``, ``--eval-run-ahead off``, a cost ceiling) is decided by the
run maker: tests/unit/test_run_making.py."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import live_processes, write_tree

#: Logs when it started and ended (and its pid) under $EVAL_LOG_DIR (as ``<arm>-<run>``, the
#: case's name first for a case other than ``ask``), sleeping $EVAL_NAP first;
#: the with arm's second run sleeps $EVAL_LONG_NAP instead when that is set, each arm's first
#: run $EVAL_FIRST_NAP.
TIMED_AGENT = """\
import json, os, sys, time
sys.stdin.read()
name = f"{os.environ['EVAL_ARM']}-{os.environ['EVAL_RUN']}"
if os.environ["EVAL_CASE"] != "ask":
    name = f"{os.environ['EVAL_CASE']}-{name}"
log = os.path.join(os.environ["EVAL_LOG_DIR"], name + ".json")
start = time.time()
with open(log, "w") as fh:
    json.dump({"start": start, "pid": os.getpid()}, fh)
nap = float(os.environ.get("EVAL_NAP", "0.5"))
if name == "with-2" and os.environ.get("EVAL_LONG_NAP"):
    nap = float(os.environ["EVAL_LONG_NAP"])
if os.environ.get("EVAL_FIRST_NAP") and name.endswith("-1"):
    nap = float(os.environ["EVAL_FIRST_NAP"])
time.sleep(nap)
with open(log, "w") as fh:
    json.dump({"start": start, "end": time.time(), "pid": os.getpid()}, fh)
print("the answer is 42" if name != "with-1" or not os.environ.get("EVAL_FAIL_FIRST") else "no")
"""


@pytest.fixture
def timed(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": '{"name": "kit"}',
            "evals/ask/prompt.md": "---\nruns: 3\n---\nWhat is the answer?\n",
            "evals/ask/graders/answer.md": "---\ntype: regex\npattern: '42'\n---\n",
            "timed_agent.py": TIMED_AGENT,
        },
    )
    logs = pytester.path / "logs"
    logs.mkdir()
    monkeypatch.setenv("EVAL_LOG_DIR", str(logs))
    # The agent logs its runs' times in a folder outside them: its runs are unconfined, on
    # purpose (what is tested is when the session starts them).
    monkeypatch.setenv("PYTEST_ADDOPTS", "--eval-unconfined")
    agent = "cmd:" + shlex.join([sys.executable, str(pytester.path / "timed_agent.py")])
    return agent, logs


def spans(logs: Path) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in logs.glob("*.json")}


def most_at_once(runs: dict[str, dict[str, Any]]) -> int:
    edges = sorted(
        [(r["start"], 1) for r in runs.values()] + [(r["end"], -1) for r in runs.values()]
    )
    now = peak = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


def test_the_next_runs_go_on_while_this_one_does(
    pytester: pytest.Pytester, timed: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``--eval-run-ahead always`` one process starts the next items' runs while its
    item's goes on, and ``--durations`` still gives each item its own run's time."""
    agent, logs = timed
    # Long enough that six agents started one after another on a loaded machine overlap.
    monkeypatch.setenv("EVAL_NAP", "2")
    result = pytester.runpytest(
        "evals", "-p", "no:cacheprovider", "-n0", "--eval-agent", agent,
        "--eval-run-ahead", "always", "--eval-json", "out.json", "--durations=0",
    )  # fmt: skip
    result.assert_outcomes(passed=6)
    runs = spans(logs)
    assert sorted(runs) == [f"{arm}-{n}" for arm in ("with", "without") for n in (1, 2, 3)]
    # One process keeps up to 4 runs per CPU in flight by default: here all six at once.
    assert most_at_once(runs) == min(6, 4 * (os.cpu_count() or 1))
    doc = json.loads((pytester.path / "out.json").read_text())
    assert doc["aggregates"]["runsTotal"] == 6
    assert doc["cases"][0]["aggregates"]["score"] == 1.0
    # --durations accounts each run to its item: every item's setup shows its run's 2 s nap,
    # also those whose run was made ahead, during another item's setup.
    setups = [line for line in result.outlines if " setup " in line and "evals/ask" in line]
    assert len(setups) == 6, result.outlines
    assert all(float(line.split("s", 1)[0]) >= 2 for line in setups), setups


def test_a_worker_keeps_runs_in_flight_and_the_progress_line_counts_them(
    pytester: pytest.Pytester, timed: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--eval-max-concurrency`` reaches the workers, each of which looks ahead at the items
    of its queue: 12 over two workers, six runs in flight in the worker that has the case.
    Each arm's first run is quick, the others take seconds and are started ahead: while they
    go on, the controller's progress line counts them in flight, not only the item pytest has
    begun (the workers' reports carry them across; how the progress counts them:
    tests/unit/test_engine_progress.py)."""
    agent, logs = timed
    monkeypatch.setenv("EVAL_FIRST_NAP", "0.3")
    monkeypatch.setenv("EVAL_NAP", "2")  # a loaded machine starts six agents well within it
    (pytester.path / "evals/ask/prompt.md").write_text("---\nruns: 8\n---\nWhat is the answer?\n")
    result = pytester.runpytest(
        "evals", "-p", "no:cacheprovider", "-n2", "-v", "--dist", "loadscope",
        "--eval-agent", agent, "--eval-run-ahead", "always", "--eval-max-concurrency", "12",
        "--eval-progress", "0.2",
    )  # fmt: skip
    result.assert_outcomes(passed=16)
    # A worker looks ahead at the items in its queue (with --dist loadscope, the whole case
    # goes to one worker): up to 12 / 2 = 6 runs in flight in it. Before, a worker had its
    # item's run and the next one's.
    assert most_at_once(spans(logs)) == 6
    counts = [
        int(found.group(1))
        for line in result.outlines
        if (found := re.match(r"evals: \d+/16 runs done · (\d+) in flight", line))
    ]
    assert counts and max(counts) >= 3, result.stdout.str()


def test_under_x_a_run_no_item_takes_is_stopped_and_no_other_case_starts_ahead(
    pytester: pytest.Pytester, timed: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under ``-x`` the first run fails: the case's runs made ahead are stopped at the end (the
    second one's 60 s nap is cut short, none of its processes is left), and no run of the
    next case was started ahead (under ``-x`` only runs of the same case are)."""
    agent, logs = timed
    write_tree(
        pytester.path,
        {
            "evals/next/prompt.md": "---\nruns: 2\n---\nWhat is the answer?\n",
            "evals/next/graders/answer.md": "---\ntype: regex\npattern: '42'\n---\n",
        },
    )
    monkeypatch.setenv("EVAL_FAIL_FIRST", "1")
    monkeypatch.setenv("EVAL_FIRST_NAP", "2")  # time for a wrongly started run to log itself
    monkeypatch.setenv("EVAL_LONG_NAP", "60")
    start = time.monotonic()
    result = pytester.runpytest(
        "evals", "-p", "no:cacheprovider", "-n0", "-x", "--eval-agent", agent,
        "--eval-run-ahead", "always",
        # Room for every run of both cases in flight, whatever the CPUs: next's runs are
        # within reach, so only -x's rule keeps them from starting.
        "--eval-max-concurrency", "8",
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    assert time.monotonic() - start < 30  # the second run's 60 s nap was cut short
    runs = spans(logs)
    assert "end" not in runs["with-2"]  # it never finished its nap
    assert not [name for name in runs if name.startswith("next-")]  # next never started
    # ... and nothing of it is left running (its PIDs are its own: found by its command line).
    assert not live_processes(str(pytester.path / "timed_agent.py"))


def test_the_cost_ceiling_counts_the_runs_in_flight(
    pytester: pytest.Pytester, scripted_agent: Any
) -> None:
    """Two workers, runs of $1 each, a $2.50 ceiling: once the first runs have said what a run
    costs, a run starts only while the spend plus the runs in flight stays under the ceiling,
    so the ceiling is passed by at most one run per worker."""
    files = {}
    for name in "abcdefgh":
        files[f"evals/{name}/prompt.md"] = f"---\nruns: 1\n---\nCase {name}.\n"
        files[f"evals/{name}/graders/ok.md"] = "---\ntype: regex\npattern: ok\n---\n"
    write_tree(pytester.path, files)
    usage = {"input_tokens": 10, "output_tokens": 1, "cost_usd": 1.0}
    agent = scripted_agent([{"match": "Case", "reply": "ok", "sleep": 1.5, "usage": usage}])
    result = pytester.runpytest(
        "evals", "-n2", "-p", "no:cacheprovider", "--eval-agent", agent,
        "--eval-max-cost-usd", "2.5", "--eval-json", "out.json",
    )  # fmt: skip
    assert result.ret == 2
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    assert doc["partialReason"] == "cost_ceiling"
    made = [r for c in doc["cases"] for r in c["arms"]["with"]]
    # Without the runs in flight counted, two runs start at $2 spent: $4 in all.
    assert 2 <= len(made) <= 3 and doc["costUsd"] <= 3.0, doc["costUsd"]
