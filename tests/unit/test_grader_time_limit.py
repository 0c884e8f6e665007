"""Grading is bounded: patterns that backtrack for ever are stopped at the time limit, in both
dialects and wherever a pattern is matched, and the grader's verdict says so."""

from __future__ import annotations

import time

import pytest

from pytest_plugin_evals.graders import grade_all
from pytest_plugin_evals.model import GraderSpec, ToolCall, Transcript
from pytest_plugin_evals.util import regexbox

#: ``(a+)+$`` against this backtracks for far longer than any test waits.
HOSTILE = "a" * 30_000 + "!"


@pytest.mark.parametrize(
    "spec",
    [
        GraderSpec("js", "regex", {"pattern": "(a+)+$"}),
        GraderSpec("js-count", "regex", {"pattern": "(a+)+$", "match": "count:1"}),
        GraderSpec("py", "expected_regex", {"pattern": "(a+)+$"}),
        GraderSpec("matches", "matches", {"pattern": "(a+)+$"}),
    ],
    ids=lambda s: s.name,
)
def test_a_pattern_past_the_time_limit_is_a_grader_error(spec: GraderSpec) -> None:
    start = time.monotonic()
    bad, fine = grade_all(
        [spec, GraderSpec("fine", "contains", {"value": "aaa"})],
        Transcript(final_message=HOSTILE),
        time_limit=0.2,
    )
    assert time.monotonic() - start < 10
    assert (bad.passed, bad.error, bad.explanation) == (
        None,
        "grader_timeout",
        "grader timed out after 0.2s",
    )
    assert fine.passed is True  # the other graders still judge


def test_input_match_is_bounded_too() -> None:
    transcript = Transcript(tool_calls=[ToolCall("Write", {"content": HOSTILE})])
    (v,) = grade_all(
        [GraderSpec("t", "tool_used", {"tool": "Write", "input_match": "(a+)+\\$"})],
        transcript,
        time_limit=0.2,
    )
    assert v.error == "grader_timeout"


def test_matching_goes_on_after_a_timeout() -> None:
    grade_all(
        [GraderSpec("js", "regex", {"pattern": "(a+)+$"})],
        Transcript(final_message=HOSTILE),
        time_limit=0.2,
    )
    (v,) = grade_all(
        [GraderSpec("js", "regex", {"pattern": "(?<x>b)\\k<x>"})],
        Transcript(final_message="abba"),
        time_limit=5,
    )
    assert (v.passed, v.explanation) == (True, "matched (?<x>b)\\k<x>")


def test_the_stopped_helper_is_gone() -> None:
    grade_all(
        [GraderSpec("js", "regex", {"pattern": "(a+)+$"})],
        Transcript(final_message=HOSTILE),
        time_limit=0.2,
    )
    assert regexbox._box.proc is None  # killed and reaped; the next call starts a new one


def test_a_pattern_error_under_a_time_limit_reads_as_the_engine_words_it() -> None:
    (v,) = grade_all(
        [GraderSpec("bad", "matches", {"pattern": "a["})],
        Transcript(final_message="a["),
        time_limit=5,
    )
    assert v.passed is False
    assert v.explanation.startswith("grader threw: Invalid regular expression")
