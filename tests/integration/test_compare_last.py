"""``--eval-compare last`` and ``replay:last`` take the newest *comparable* earlier session:
complete, not a replay, the same agents, covering the selected cases, written by this plugin;
the newer ones are passed over, each said with why. Cases this session did not select are
``not run``, not ``gone``. (Each reason a session is passed over, and the arms each kind of
session wants: tests/unit/test_earlier_session.py, called on the core.)"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_compare import RUNS, add_case, document, results, verdicts

Agent = Callable[[list[dict[str, Any]]], str]
DOC = "aggregate-result.json"


def age(folder: Path, seconds_ago: int) -> None:
    """Make ``folder``'s document look written ``seconds_ago`` seconds ago (newest first)."""
    when = 1_700_000_000 - seconds_ago
    os.utime(folder / DOC, (when, when), follow_symlinks=False)


def rewritten(source: Path, target: Path, change: Callable[[dict[str, Any]], object]) -> Path:
    """A results folder holding ``source``'s document with ``change`` made to it."""
    target.mkdir(parents=True)
    doc = document(source)
    change(doc)
    (target / DOC).write_text(json.dumps(doc), encoding="utf-8")
    return target


def test_last_passes_over_what_is_not_comparable(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Agent
) -> None:
    """The newest comparable session is taken, the newer ones passed over with why; a case
    this session did not select is "not run", one no longer in the suite "gone"."""
    for name in ("steady", "breaks", "other"):
        add_case(pytester, name, RUNS)
    ok = scripted_agent([{"reply": "ok"}])
    full = pytester.runpytest("evals", *plugin_args, "--eval-agent", ok)
    full.assert_outcomes(passed=3 * RUNS)
    (earliest,) = results(pytester)
    # A -k subset: it lists what it did not select.
    subset = pytester.runpytest("evals", *plugin_args, "--eval-agent", ok, "-k", "steady")
    subset.assert_outcomes(passed=RUNS)
    (subset_folder,) = set(results(pytester)) - {earliest}
    assert document(subset_folder)["suite"]["notSelected"] == [
        {"name": "breaks", "dir": "breaks"},
        {"name": "other", "dir": "other"},
    ]
    root = pytester.path / "evals" / "results"
    replay_folder = rewritten(
        earliest, root / "replayed", lambda d: d["suite"].update(agent=f"replay:{earliest}")
    )
    stopped = rewritten(
        earliest,
        root / "stopped",
        lambda d: d.update(partial=True, partialReason="auth_failed"),
    )
    reference = rewritten(
        earliest,
        root / "reference",
        lambda d: (d.pop("loadErrors"), d.update(claudeVersion="2.1.328")),
    )
    other_agent = rewritten(earliest, root / "codex", lambda d: d["suite"].update(agent="codex"))
    outside = rewritten(earliest, pytester.path / "elsewhere", lambda d: None)
    (root / "linked").symlink_to(outside, target_is_directory=True)
    order = [earliest, subset_folder, replay_folder, stopped, reference, other_agent]
    for n, folder in enumerate(order):
        age(folder, 100 - n)
    os.utime(outside / DOC, (1_700_000_000, 1_700_000_000))  # the newest, through the link

    # The suite's breaks case now fails: the comparison is with the first session.
    broken = scripted_agent([{"match": "Task breaks", "reply": "nope"}, {"reply": "ok"}])
    second = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", broken, "--eval-threshold", "0",
        "--eval-compare", "last",
    )  # fmt: skip
    assert second.ret == pytest.ExitCode.OK
    seen = {*order, root / "linked"}
    (newest,) = set(results(pytester)) - seen
    doc = document(newest)
    assert doc["comparison"]["against"] == str(earliest / DOC)
    assert verdicts(doc) == {"breaks": "worse", "other": "inconclusive", "steady": "inconclusive"}
    second.stdout.fnmatch_lines(
        [
            f"--eval-compare last: took results/{earliest.name}, the newest comparable "
            "session; passed over results/linked (the folder is a symbolic link: refused), "
            "results/codex (another agent (codex)), results/reference (written by claude "
            "plugin eval), results/stopped (it stopped at a rejected credential), "
            f"results/replayed (it is a replay), results/{subset_folder.name} (a "
            "subset that did not run breaks, other)",
        ]
    )

    # Now a -k subset of its own, with the case other removed from the suite: the case it
    # did not select is not run, the one no longer in the suite is gone.
    shutil.rmtree(pytester.path / "evals" / "other")
    third = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", broken, "--eval-threshold", "0",
        "--eval-compare", "last", "-k", "breaks",
    )  # fmt: skip
    third.assert_outcomes(passed=RUNS)
    (own,) = set(results(pytester)) - seen - {newest}
    doc = document(own)
    assert doc["comparison"]["against"] == str(newest / DOC)
    assert verdicts(doc) == {"breaks": "inconclusive", "steady": "not run", "other": "gone"}
    assert doc["comparison"]["counts"]["not run"] == 1
    assert doc["comparison"]["counts"]["gone"] == 1
    third.stdout.fnmatch_lines(["compared with *: 1 inconclusive, 1 gone, 1 not run"])


@pytest.mark.workers
def test_replay_last_replays_the_newest_comparable_session(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Agent
) -> None:
    """``replay:last`` replays the newest comparable session (with two workers too: the
    recorded runs reach each worker), passing over a newer subset and, the second time, the
    first replay. The recording session and the second replay run in one process (recording
    under two workers: test_reuse.py)."""
    one_process = ["-n0", *plugin_args[1:]]
    for name in ("steady", "breaks"):
        add_case(pytester, name, RUNS)
    nope = scripted_agent([{"match": "Task breaks", "reply": "nope"}, {"reply": "ok"}])
    first = pytester.runpytest("evals", *one_process, "--eval-agent", nope, "--eval-threshold", "0")
    first.assert_outcomes(passed=2 * RUNS)
    (recorded,) = results(pytester)
    # A newer subset that did not run breaks (its recorded runs would not do).
    subset_folder = rewritten(
        recorded,
        pytester.path / "evals" / "results" / "subset",
        lambda d: (
            d.update(cases=[c for c in d["cases"] if c["name"] == "steady"]),
            d["suite"].update(notSelected=[{"name": "breaks", "dir": "breaks"}]),
        ),
    )
    age(recorded, 20)
    age(subset_folder, 10)
    for seen, options in (({recorded, subset_folder}, plugin_args), (set(), one_process)):
        replayed = pytester.runpytest(
            "evals", *options, "--eval-agent", "replay:last", "--eval-threshold", "0"
        )
        assert replayed.ret == pytest.ExitCode.OK
        replayed.assert_outcomes(passed=2 * RUNS)
        replayed.stdout.fnmatch_lines(
            [
                f"replay:last: replayed {recorded}, the newest comparable session; passed over "
                "*subset (a subset that did not run breaks)"
            ]
        )
        if seen:  # the first replay: breaks failed then, and fails in the replay too
            (own,) = set(results(pytester)) - seen
            doc = document(own)
            assert doc["suite"]["agent"] == f"replay:{recorded}"
            scores = {c["name"]: c["aggregates"]["score"] for c in doc["cases"]}
            assert scores == {"breaks": 0.0, "steady": 1.0}
            age(own, 0)
    # The second replay passed over the first (a replay) as well as the subset.
    assert "(it is a replay)" in replayed.stdout.str()


def test_replay_last_without_a_recorded_session_is_one_usage_line(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    add_case(pytester, "steady", RUNS)
    result = pytester.runpytest("evals", *plugin_args, "--eval-agent", "replay:last")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.assert_outcomes()
    root = pytester.path / "evals" / "results"
    result.stderr.fnmatch_lines(
        [
            f"ERROR: --eval-agent replay:last: no earlier session under {root} holds recorded "
            "runs of the selected cases"
        ]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_an_aa_session_takes_the_last_aa_session(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Agent
) -> None:
    """An A/A session's ``last`` is the newest A/A one, past a newer with/without session,
    and it gates on its wiring only: no regression gate. (Which arms each kind of session
    takes: tests/unit/test_earlier_session.py.)"""
    for name in ("steady", "breaks"):
        add_case(pytester, name, RUNS)
    (pytester.path / ".claude-plugin").mkdir()
    (pytester.path / ".claude-plugin" / "plugin.json").write_text(
        '{"name": "demo", "version": "1.0.0"}', encoding="utf-8"
    )
    root = pytester.path / "evals" / "results"
    ok = scripted_agent([{"reply": "ok"}])
    made: list[Path] = []

    def session(*args: str) -> pytest.RunResult:
        ran = pytester.runpytest("evals", *plugin_args, "--eval-threshold", "0", *args)
        assert ran.ret == pytest.ExitCode.OK, ran.stdout.str()
        (folder,) = set(root.iterdir()) - set(made)
        age(folder, 100 - len(made))
        made.append(folder)
        return ran

    session("--eval-agent", ok, "--eval-aa")
    assert document(made[0])["suite"]["aa"] is True
    session("--eval-agent", ok)
    assert document(made[1])["suite"]["ablation"] == "with-without"
    broken = scripted_agent([{"match": "Task breaks", "reply": "nope"}, {"reply": "ok"}])
    aa_again = session(
        "--eval-agent", broken, "--eval-aa", "--eval-compare", "last", "--eval-fail-on-regression",
    )  # fmt: skip
    assert document(made[2])["comparison"]["against"] == str(made[0] / DOC)
    aa_again.stdout.fnmatch_lines(
        [
            f"--eval-compare last: took results/{made[0].name}, the newest comparable session; "
            f"passed over results/{made[1].name} (a with/without session)"
        ]
    )
