"""Checks of the evals.json, sy and package.json formats: substrings, patterns, budgets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.graders import grade
from pytest_plugin_evals.model import Case, GraderSpec, Transcript, Verdict

ANSWER = "Bump to 1.4.1 and update the CHANGELOG. Temperature in London: 12°"


def _grade(
    kind: str, transcript: Transcript | None = None, case: Case | None = None, **config: Any
) -> Verdict:
    t = transcript if transcript is not None else Transcript(final_message=ANSWER)
    return grade(GraderSpec(kind, kind, config), t, case=case)


@pytest.mark.parametrize(
    ("kind", "value", "passed", "explanation"),
    [
        ("contains", "1.4.1", True, 'contains "1.4.1"'),
        ("contains", "changelog", False, 'missing "changelog"'),  # case-sensitive
        ("not_contains", "2.0.0", True, 'does not contain "2.0.0"'),
        ("not_contains", "CHANGELOG", False, 'contains "CHANGELOG" (expected absent)'),
        ("expected_contains", "london", True, 'contains "london"'),
        ("expected_contains", "paris", False, 'missing "paris"'),
        ("expected_not_contains", "as an ai", True, 'does not contain "as an ai"'),
        ("expected_not_contains", "BUMP", False, 'contains "BUMP" (expected absent)'),
        ("includes", "changelog", True, 'includes "changelog"'),
        ("includes", "added", False, 'missing "added"'),
    ],
)
def test_substrings(kind: str, value: str, passed: bool, explanation: str) -> None:
    v = _grade(kind, value=value)
    assert (v.passed, v.explanation) == (passed, explanation)


def test_substring_numbers_are_taken_as_text() -> None:
    assert _grade("expected_contains", value=12).passed is True


def test_min_chars() -> None:
    t = Transcript(final_message="x" * 120)
    v = _grade("min_chars", t, min=80)
    assert (v.passed, v.explanation) == (True, "at least 80 characters (got 120)")
    v = _grade("min_chars", Transcript(final_message="short"), min=80)
    assert (v.passed, v.explanation) == (False, "fewer than 80 characters (got 5)")
    assert _grade("min_chars", Transcript(final_message="")).explanation == (
        'grader threw: a min_chars grader needs a number "min"'
    )


def _case(tmp_path: Path, dialect: str) -> Case:
    return Case(
        name="c",
        prompt="p",
        source="sy",
        path=tmp_path,
        dir=tmp_path,
        suite_root=tmp_path,
        regex_dialect=dialect,  # type: ignore[arg-type]
    )


def test_expected_regex_is_python_dialect(tmp_path: Path) -> None:
    v = _grade("expected_regex", pattern="(?i)(temperature|°)")
    assert (v.passed, v.explanation) == (True, "matched (?i)(temperature|°)")
    v = _grade("expected_regex", case=_case(tmp_path, "python"), pattern="(?i)tokyo")
    assert (v.passed, v.explanation) == (False, "no match for (?i)tokyo")


def test_expected_not_regex() -> None:
    v = _grade("expected_not_regex", pattern="(?i)error")
    assert (v.passed, v.explanation) == (True, "no match for (?i)error, as expected")
    v = _grade("expected_not_regex", pattern=r"\d\.\d\.\d")
    assert (v.passed, v.explanation) == (False, r"matched \d\.\d\.\d (expected no match)")


def test_matches_is_javascript_dialect() -> None:
    link = r"\[([^\]]+)\]\(([^\s\)]+)(?:\s+\"([^\"]+)\")?\)"
    t = Transcript(final_message="See [docs](https://example.org).")
    v = _grade("matches", t, pattern=link)
    assert v.passed is True
    assert _grade("matches", pattern="(?i)bump").explanation.startswith(
        "grader threw: Invalid regular expression"
    )
    assert _grade("matches", pattern=r"(?<=to )1\.4").passed is True


# -- budgets ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("usage", "passed", "explanation"),
    [
        ({"output_tokens": 420, "input_tokens": 9000}, True, "used 420 tokens (budget 800)"),
        ({"output_tokens": 900}, False, "used 900 tokens, over the budget of 800"),
        ({"input_tokens": 700}, True, "used 700 tokens (budget 800)"),
        ({"output_tokens": 800}, True, "used 800 tokens (budget 800)"),
    ],
)
def test_max_tokens(usage: dict[str, Any], passed: bool, explanation: str) -> None:
    v = _grade("max_tokens", Transcript(**usage), max=800)
    assert (v.passed, v.explanation) == (passed, explanation)


def test_max_tokens_without_usage_is_skipped() -> None:
    v = _grade("max_tokens", Transcript(), max=800)
    assert v.passed is None
    assert v.skipped == "agent reported no token usage"
    assert v.explanation == "skipped: agent reported no token usage"
    assert not v


def test_max_latency_ms() -> None:
    v = _grade("max_latency_ms", Transcript(latency_ms=1234.4, duration_seconds=99), max=45000)
    assert (v.passed, v.explanation) == (True, "answered in 1234 ms (budget 45000 ms)")
    v = _grade("max_latency_ms", Transcript(duration_seconds=50), max=45000)
    assert (v.passed, v.explanation) == (False, "answered in 50000 ms, over the budget of 45000 ms")
    assert _grade("max_latency_ms", Transcript()).explanation == (
        'grader threw: a max_latency_ms grader needs a number "max"'
    )


@pytest.mark.parametrize(
    ("delivered", "value", "passed", "explanation"),
    [
        (True, True, True, "delivered, as expected"),
        (False, False, True, "not delivered, as expected"),
        (False, True, False, "not delivered (expected delivered)"),
        (True, False, False, "delivered (expected not delivered)"),
        (None, True, False, "the agent reported no delivery flag (expected delivered)"),
    ],
)
def test_expect_delivered(
    delivered: bool | None, value: bool, passed: bool, explanation: str
) -> None:
    v = _grade("expect_delivered", Transcript(delivered=delivered), value=value)
    assert (v.passed, v.explanation) == (passed, explanation)
