"""An ``evals.json`` suite of ``syntic plugin eval`` (seed 000) gets the ``report.json`` its
system writes, beside our document, and its summary line in the terminal."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.helpers import SYNTIC_SEED_SUITE, write_tree

Agent = Callable[[list[dict[str, Any]]], str]

SUITE = SYNTIC_SEED_SUITE
LONG = "ship writes the changelog for the release, bumps the version and pushes it. " * 80


@pytest.mark.workers
def test_report_json_and_summary_line_as_the_seed_says(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Agent
) -> None:
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": '{"name": "release-helper", "version": "1.4.0"}',
            "evals/evals.json": json.dumps(SUITE),
        },
    )
    agent = scripted_agent(
        [
            {"match": "next version", "reply": "The next version is 1.4.1."},
            {"match": "ship --help", "reply": LONG},
            {"reply": "It writes changelogs."},
        ]
    )
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-runs", "1",
        "--eval-ablation", "none", "--eval-threshold", "0",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["2 of 3 cases passed, score 89%"])
    (folder,) = (pytester.path / "evals" / "results").iterdir()
    assert (folder / "aggregate-result.json").is_file()
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert list(report) == ["plugin", "passed", "total", "score", "cases"]
    assert report["plugin"] == "."
    assert (report["passed"], report["total"], report["score"]) == (2, 3, 0.889)
    by_name = {c["name"]: c for c in report["cases"]}
    assert sorted(by_name) == sorted(c["name"] for c in SUITE["cases"])
    ship = by_name["slash command explains itself"]
    assert list(ship) == ["name", "passed", "score", "checks", "output", "error"]
    assert ship["passed"] is False and ship["score"] == 0.667
    assert ship["checks"] == [
        {"check": 'contains "changelog"', "passed": True},
        {"check": 'contains "tag"', "passed": False},
        {"check": "at least 80 characters", "passed": True},
    ]
    assert ship["output"] == LONG.strip()[:4000] and len(ship["output"]) == 4000
    assert ship["error"] is None
    assert by_name["suggests the next version"]["checks"] == [
        {"check": 'contains "1.4.1"', "passed": True},
        {"check": 'does not contain "2.0.0"', "passed": True},
    ]
    answers = by_name["answers something"]
    assert answers == {
        "name": "answers something", "passed": True, "score": 1.0, "checks": [],
        "output": "It writes changelogs.", "error": None,
    }  # fmt: skip


def test_a_failed_session_scores_0_with_its_error(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Agent
) -> None:
    write_tree(pytester.path, {"evals/evals.json": json.dumps({"cases": SUITE["cases"][:1]})})
    agent = scripted_agent([{"exit": 3, "stderr": "could not send the prompt"}])
    result = pytester.runpytest("evals", *plugin_args, "--eval-agent", agent, "--eval-runs", "1")
    result.stdout.fnmatch_lines(["0 of 1 cases passed, score 0%"])
    (folder,) = (pytester.path / "evals" / "results").iterdir()
    (case,) = json.loads((folder / "report.json").read_text(encoding="utf-8"))["cases"]
    assert case["passed"] is False and case["score"] == 0.0 and case["output"] == ""
    assert case["error"] and "could not send the prompt" in case["error"]
    # The checks as they were graded on the empty answer; the failed session scores 0.
    assert case["checks"] == [
        {"check": 'contains "1.4.1"', "passed": False},
        {"check": 'does not contain "2.0.0"', "passed": True},
    ]


def test_other_formats_get_no_report_json(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Agent
) -> None:
    write_tree(
        pytester.path,
        {
            "evals/alpha/prompt.md": "---\nruns: 1\n---\nSay ok.\n",
            "evals/alpha/graders/ok.md": "---\ntype: regex\npattern: ok\n---\n",
        },
    )
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", scripted_agent([{"reply": "ok"}])
    )
    assert result.ret == pytest.ExitCode.OK
    (folder,) = (pytester.path / "evals" / "results").iterdir()
    assert not (folder / "report.json").exists()
    assert "cases passed, score" not in result.stdout.str()
