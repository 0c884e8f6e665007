"""``grade()``: every type known, verdicts named after the spec, never an exception."""

from __future__ import annotations

from pathlib import Path

import pytest

import pytest_plugin_evals.graders.dispatch as dispatch
from pytest_plugin_evals.graders import GRADER_TYPES, grade, grade_all
from pytest_plugin_evals.graders.base import GradeContext, Outcome
from pytest_plugin_evals.model import PAID_GRADER_TYPES, GraderSpec, ToolCall, Transcript

ALL_TYPES = {
    "regex",
    "skill_fired",
    "tool_used",
    "tool_order",
    "file_exists",
    "llm",
    "baseline",
    "contains",
    "not_contains",
    "min_chars",
    "expected_contains",
    "expected_not_contains",
    "expected_regex",
    "expected_not_regex",
    "max_tokens",
    "max_latency_ms",
    "expect_tool_success",
    "expect_delivered",
    "includes",
    "matches",
    "callsTool",
    "meetsCriteria",
}


def test_grader_types() -> None:
    assert isinstance(GRADER_TYPES, frozenset)
    assert ALL_TYPES == GRADER_TYPES
    assert PAID_GRADER_TYPES <= GRADER_TYPES


def test_verdict_carries_the_spec() -> None:
    spec = GraderSpec("answer", "regex", {"pattern": "paris"}, weight=2.5, arm="with-only")
    v = grade(spec, Transcript(final_message="paris"))
    assert (v.name, v.type, v.weight, v.passed) == ("answer", "regex", 2.5, True)
    assert (v.scored, v.with_only, v.skipped) == (True, False, None)


@pytest.mark.parametrize("kind", sorted(ALL_TYPES))
def test_no_type_raises_on_empty_config(kind: str) -> None:
    v = grade(GraderSpec("g", kind, {}), Transcript())
    assert v.passed in (False, None)
    assert v.explanation


@pytest.mark.parametrize("kind", sorted(ALL_TYPES))
def test_no_type_raises_on_garbage_config(kind: str) -> None:
    config = {
        k: {"x": [1]}
        for k in ("pattern", "tool", "value", "name", "path", "min", "max", "before", "after")
    }
    config["target"] = 3  # type: ignore[assignment]
    v = grade(GraderSpec("g", kind, config), Transcript(tool_calls=[ToolCall("x")]))
    # A grader given garbage never passes: a judged kind (no judge here) is skipped, every
    # other kind fails, saying which field is wrong.
    if kind in PAID_GRADER_TYPES:
        assert v.passed is None and "no judge" in v.explanation
    else:
        assert v.passed is False and v.explanation.startswith("grader threw: ")
        assert "must be" in v.explanation or "needs a non-empty" in v.explanation


def test_a_grader_that_throws(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(spec: GraderSpec, ctx: GradeContext) -> Outcome:
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(dispatch.GRADERS, "contains", boom)
    v = grade(GraderSpec("g", "contains", {"value": "x"}), Transcript())
    assert (v.passed, v.explanation) == (False, "grader threw: disk on fire")


def test_an_exception_without_a_message_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(spec: GraderSpec, ctx: GradeContext) -> Outcome:
        raise KeyError

    monkeypatch.setitem(dispatch.GRADERS, "contains", boom)
    assert grade(GraderSpec("g", "contains"), Transcript()).explanation == "grader threw: KeyError"


def test_unknown_type() -> None:
    v = grade(GraderSpec("g", "telepathy"), Transcript())
    assert v.passed is False
    assert v.explanation.startswith('grader threw: unknown grader type "telepathy" (known: ')


def test_grade_all_reads_the_trace_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_plugin_evals.graders.targets as targets

    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"name":"Skill"}\n', encoding="utf-8")
    targets.clear_trace_cache()
    reads: list[Path] = []
    real = targets._read_trace

    def counting(p: Path) -> str:
        reads.append(p)
        return real(p)

    monkeypatch.setattr(targets, "_read_trace", counting)
    specs = [
        GraderSpec("a", "regex", {"pattern": "Skill", "target": "trace"}),
        GraderSpec("b", "regex", {"pattern": "Nope", "target": "trace", "match": "not_contains"}),
        GraderSpec("c", "contains", {"value": "x"}),
    ]
    verdicts = grade_all(specs, Transcript(final_message="x", trace_path=trace))
    assert [v.passed for v in verdicts] == [True, True, True]
    assert [v.name for v in verdicts] == ["a", "b", "c"]
    assert len(reads) == 1
