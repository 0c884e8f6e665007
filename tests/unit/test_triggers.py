"""Trigger evals: trigger_eval.json cases, when a skill fired, the matrix and its intervals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_plugin_evals.graders import grade
from pytest_plugin_evals.model import Case, LoadError, RunResult, ToolCall, Transcript
from pytest_plugin_evals.records import CaseInfo, RunRecord
from pytest_plugin_evals.reporting.result import SessionFacts, summarize
from pytest_plugin_evals.reporting.triggers import trigger_results
from pytest_plugin_evals.scoring import ScoringRules
from pytest_plugin_evals.suites.suite_file import load_suite_file
from tests.helpers import write_tree

SKILL = "---\nname: olympiad\ndescription: d\n---\nbody\n"


def load(tmp_path: Path, entries: object) -> list[Case | LoadError]:
    root = write_tree(tmp_path / "skills" / "math", {"SKILL.md": SKILL})
    path = root / "evals" / "trigger_eval.json"
    path.parent.mkdir()
    path.write_text(json.dumps(entries, indent=1), "utf-8")
    return load_suite_file(path, path.parent)


def test_each_query_is_a_case_run_three_times(tmp_path: Path) -> None:
    found = load(
        tmp_path,
        [
            {"query": "Prove it", "should_trigger": True},
            {"query": "Sort a list", "should_trigger": False},
            {"query": "", "should_trigger": True},
            {"query": "x", "should_trigger": "yes"},
            {"query": "x", "should": True},
        ],
    )
    cases = [c for c in found if isinstance(c, Case)]
    assert [(c.name, c.prompt, c.runs, c.source) for c in cases] == [
        ("trigger-math-01", "Prove it", 3, "trigger_eval"),
        ("trigger-math-02", "Sort a list", 3, "trigger_eval"),
    ]
    assert cases[0].graders[0].config == {
        "skill": "olympiad", "folder": "math", "should_trigger": True,
    }  # fmt: skip
    errors = [e.message for e in found if isinstance(e, LoadError)]
    assert errors == [
        "[2].query must be a non-empty string (got a string)",
        "[3].should_trigger must be true or false (got a string)",
        '[4]: unknown key "should" (expected one of: query, should_trigger)',
    ]


def test_a_file_away_from_its_skill_is_one_error(tmp_path: Path) -> None:
    path = write_tree(tmp_path / "a" / "evals", {"trigger_eval.json": "[]"}) / "trigger_eval.json"
    with pytest.raises(LoadError, match=r"no SKILL\.md in .*: put trigger_eval\.json in its skill"):
        load_suite_file(path, path.parent)


SPEC_CONFIG = {"skill": "olympiad", "folder": "math", "should_trigger": True}


@pytest.mark.parametrize(
    ("calls", "fired"),
    [
        ([ToolCall("Skill", {"skill": "kit:olympiad"})], True),
        ([ToolCall("Skill", {"skill": "olympiad"})], True),
        ([ToolCall("Read", {"file_path": "/p/skills/math/SKILL.md"})], True),
        ([ToolCall("Skill", {"skill": "kit:olympiad"}, "Unknown skill", True)], False),
        ([ToolCall("Skill", {"skill": "kit:notes"})], False),
        ([ToolCall("Read", {"file_path": "/p/skills/math/forms.md"})], False),
    ],
)
def test_when_a_skill_fired(calls: list[ToolCall], fired: bool) -> None:
    from pytest_plugin_evals.model import GraderSpec

    verdict = grade(
        GraderSpec("skill-fired", "skill_fired", SPEC_CONFIG), Transcript(tool_calls=calls)
    )
    assert verdict.passed is fired


def _record(case: Case, run: int, fired: bool, infra: str | None = None) -> RunRecord:
    from pytest_plugin_evals.model import brief_tool_calls

    calls = [ToolCall("Skill", {"skill": "kit:olympiad"})] if fired else []
    right = fired == case.graders[0].config["should_trigger"]  # what the grader scores
    result = RunResult(
        arm="single", run=run, score=float(right), passed=right, infra_error=infra,
        tool_call_list=brief_tool_calls(calls), tool_calls=len(calls),
    )  # fmt: skip
    return RunRecord(f"t::{case.name}[{run}]", CaseInfo.of(case), None, False, result)


def test_the_matrix_keeps_errors_out(tmp_path: Path) -> None:
    cases = [c for c in load(tmp_path, [
        {"query": "a", "should_trigger": True},
        {"query": "b", "should_trigger": True},
        {"query": "c", "should_trigger": False},
    ]) if isinstance(c, Case)]  # fmt: skip
    records = [
        # a: fired 2 of 3, the third run could not be made: rate 2/2
        _record(cases[0], 1, True), _record(cases[0], 2, True),
        _record(cases[0], 3, False, infra="auth"),
        # b: fired 1 of 3: not triggered
        _record(cases[1], 1, True), _record(cases[1], 2, False), _record(cases[1], 3, False),
        # c: fired 2 of 3: a false positive
        _record(cases[2], 1, True), _record(cases[2], 2, True), _record(cases[2], 3, False),
    ]  # fmt: skip
    facts = SessionFacts(
        started_at="t", duration_seconds=1, ablation="none", concurrency=1, agent="claude"
    )
    result = summarize(records, facts, ScoringRules(threshold=1.0))
    (skill,) = trigger_results(result.cases)
    assert skill.counts() == {"tp": 1, "fp": 1, "fn": 1, "tn": 0}
    assert skill.errors == 1
    first = skill.queries[0]
    assert (first.runs, first.fired, first.rate) == (2, 2, 1.0)
    # skill-creator's verdict: the should-trigger query at 2/2 passes, the one at 1/3 fails,
    # the should-not query at 2/3 fails.
    assert [c.aggregates.passed for c in result.cases] == [True, False, False]
