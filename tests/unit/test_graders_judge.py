"""Judge graders: skipped without a judge; votes, prompts and evidence with one."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_plugin_evals.graders import Judge, grade
from pytest_plugin_evals.graders.judge import elide_events, elide_text, parse_vote
from pytest_plugin_evals.model import Case, GraderSpec, Transcript


class ScriptedJudge:
    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.prompts: list[str] = []

    def vote(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.replies.pop(0)


class BrokenJudge:
    def vote(self, prompt: str) -> str:
        raise ConnectionError("API Error: 500 fake 500 api_error")


def _case(tmp_path: Path) -> Case:
    return Case(
        name="baseline-compare",
        prompt="p",
        source="prose",
        path=tmp_path,
        dir=tmp_path,
        suite_root=tmp_path,
    )


@pytest.mark.parametrize(
    "spec",
    [
        GraderSpec("criteria", "llm", {"focus": "last_message"}, criteria="Says hi"),
        GraderSpec("vs", "baseline", {"baseline_file": "b.jsonl"}, criteria="As good"),
        GraderSpec("ok", "meetsCriteria", {"value": "Tells it worked"}),
        GraderSpec("no-rubric", "llm", {}),  # even a broken judge grader is never scored
    ],
)
def test_without_a_judge_judge_graders_are_skipped(spec: GraderSpec) -> None:
    v = grade(spec, Transcript(final_message="hi"))
    assert v.passed is None
    assert v.skipped == "no judge configured"
    assert v.explanation == "skipped: no judge configured"
    assert not v
    assert v.to_dict()["passed"] is False


@pytest.mark.parametrize(
    ("reply", "vote"),
    [
        ("PASS", True),
        ("pass", True),
        ("I would say this is a pass.", True),
        ("PASS or FAIL", False),
        ("PASSED", False),
        ("FAIL", False),
        ("", False),
    ],
)
def test_vote_parsing(reply: str, vote: bool) -> None:
    assert parse_vote(reply) is vote


def test_llm_votes_and_prompt_layout() -> None:
    judge = ScriptedJudge("PASS", "FAIL", "pass")
    assert isinstance(judge, Judge)
    spec = GraderSpec("criteria", "llm", {"focus": "last_message"}, criteria="Says hi")
    v = grade(spec, Transcript(final_message="hello"), judge=judge)
    assert (v.passed, v.explanation) == (True, "judge votes: PASS FAIL PASS")
    assert v.details == {"judgeVotes": ["PASS", "FAIL", "PASS"], "evidence": "hello"}
    assert judge.prompts[0] == (
        "You are grading the output of a coding agent against a criterion.\n\n"
        "Criterion:\nSays hi\n\n\nAgent output (last_message):\nhello\n\n\n"
        "Respond with exactly one word: PASS or FAIL."
    )
    assert len(judge.prompts) == 3


def test_llm_majority_fail() -> None:
    spec = GraderSpec("c", "llm", {}, criteria="x")
    v = grade(spec, Transcript(), judge=ScriptedJudge("FAIL", "PASS", "nope"))
    assert (v.passed, v.explanation) == (False, "judge votes: FAIL PASS FAIL")


def test_llm_focus_files_and_file(tmp_path: Path) -> None:
    judge = ScriptedJudge(*["PASS"] * 6)
    grade(GraderSpec("c", "llm", {"focus": "files"}, criteria="x"), Transcript(), judge=judge)
    assert "Agent output (files):\n(no file changes)\n" in judge.prompts[0]
    (tmp_path / "notes.md").write_text("my notes", encoding="utf-8")
    spec = GraderSpec("c", "llm", {"focus": {"source": "file", "path": "notes.md"}}, criteria="x")
    grade(spec, Transcript(cwd=tmp_path), judge=judge)
    assert "Agent output (file notes.md):\nmy notes\n" in judge.prompts[3]


def test_judge_failure_is_grader_threw() -> None:
    v = grade(GraderSpec("c", "llm", {}, criteria="x"), Transcript(), judge=BrokenJudge())
    assert v.passed is False
    assert v.explanation == "grader threw: judge call failed: API Error: 500 fake 500 api_error"


def test_baseline_missing_file(tmp_path: Path) -> None:
    spec = GraderSpec("vs", "baseline", {"baseline_file": "nothere.jsonl"}, criteria="x")
    v = grade(spec, Transcript(), case=_case(tmp_path), judge=ScriptedJudge())
    assert v.passed is False
    assert v.explanation == (
        'failed to read baseline: case "baseline-compare": path "nothere.jsonl" does not exist'
    )


def test_baseline_prompt(tmp_path: Path) -> None:
    (tmp_path / "b.jsonl").write_text('{"type": "a", "n": 1.0}\n\n{"type":"b"}\n', encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"type":"new"}\n', encoding="utf-8")
    judge = ScriptedJudge("PASS", "PASS", "PASS")
    spec = GraderSpec("vs", "baseline", {"baseline_file": "b.jsonl"}, criteria="As good")
    v = grade(spec, Transcript(trace_path=trace), case=_case(tmp_path), judge=judge)
    assert v.passed is True
    assert judge.prompts[0] == (
        "You are comparing a NEW coding-agent trajectory against a BASELINE.\n\n"
        'Criterion:\nAs good\n\n\nBASELINE trajectory:\n{"type":"a","n":1}\n{"type":"b"}\n\n\n'
        'NEW trajectory:\n{"type":"new"}\n\n\n'
        "Does the NEW trajectory satisfy the criterion at least as well as the BASELINE?\n\n"
        "Respond with exactly one word: PASS or FAIL."
    )


def test_meets_criteria_reads_the_final_message() -> None:
    judge = ScriptedJudge("PASS", "PASS", "FAIL")
    spec = GraderSpec("ok", "meetsCriteria", {"value": "Tells it worked"})
    v = grade(spec, Transcript(final_message="Done."), judge=judge)
    assert v.passed is True
    assert "Criterion:\nTells it worked\n" in judge.prompts[0]
    assert "Agent output (last_message):\nDone.\n" in judge.prompts[0]


def test_elision() -> None:
    assert elide_text("x" * 100_000) == "x" * 100_000
    long = "a" * 80_000 + "b" * 30_000 + "c" * 20_000
    shown = elide_text(long)
    assert shown == "a" * 80_000 + "\n[…30000 chars elided…]\n" + "c" * 20_000
    events = [f"e{i}" for i in range(30)]
    lines = elide_events(events).split("\n")
    assert lines[:12] == events[:12]
    assert lines[12] == "[…6 messages elided…]"
    assert lines[13:] == events[-12:]
    assert elide_events(events[:24]).split("\n") == events[:24]
