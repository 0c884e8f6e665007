"""The graders as assertion helpers: verdicts, ``expect`` and ``SoftChecks``."""

from __future__ import annotations

import pytest

import pytest_plugin_evals.graders as graders
from pytest_plugin_evals.graders import (
    GradeFailure,
    SoftChecks,
    calls_tool,
    contains,
    expect,
    file_exists,
    includes,
    matches,
    max_latency_ms,
    max_tokens,
    min_chars,
    not_contains,
    regex,
    tool_order,
    tool_succeeded,
    tool_used,
)
from pytest_plugin_evals.model import ToolCall, Transcript, Verdict

RUN = Transcript(
    final_message="Next version: 1.4.1. See CHANGELOG.",
    tool_calls=[
        ToolCall("Skill", {"skill": "rel:next-version"}),
        ToolCall("Read", {"file_path": "CHANGELOG.md"}),
    ],
    files_created=["out/notes.md"],
    output_tokens=120,
    latency_ms=900,
)


def test_every_public_name_is_exported() -> None:
    for name in graders.__all__:
        assert hasattr(graders, name), name
    assert {"regex", "tool_used", "expect", "SoftChecks", "GradeFailure", "grade"} <= set(
        graders.__all__
    )


def test_helpers_on_a_transcript() -> None:
    assert regex(RUN, r"1\.4\.1").explanation == r"matched 1\.4\.1"
    assert regex(RUN, "changelog", flags="i")
    assert regex(RUN, "CHANGELOG", match=1)
    assert not regex(RUN, "CHANGELOG", match="not_contains")
    assert regex(RUN, '"skill":"rel:', target="trace").explanation == "pattern not found in trace"
    assert tool_used(RUN, "Skill", input_match="next-version").explanation == (
        "Skill called 1x (expected 1..∞)"
    )
    assert not tool_used(RUN, "Skill", min=0, max=0)
    assert tool_order(RUN, "Skill", "Read").explanation == "Skill@0 precedes Read@1"
    assert file_exists(RUN, "out/*.md")
    assert file_exists(RUN, "*.md", exists=False)
    assert contains(RUN, "1.4.1") and not_contains(RUN, "2.0.0")
    assert includes(RUN, "next VERSION")
    assert matches(RUN, r"(?<=version: )\d")
    assert min_chars(RUN, 10) and not min_chars(RUN, 1000)
    assert max_tokens(RUN, 200) and not max_tokens(RUN, 100)
    assert max_latency_ms(RUN, 1000)
    assert calls_tool(RUN, "Read", {"file_path": {"matches": "CHANGELOG"}})
    assert not tool_succeeded(RUN, "Bash")


def test_a_plain_string_is_the_final_message() -> None:
    v = contains("the changelog is ready", "changelog")
    assert isinstance(v, Verdict)
    assert (v.passed, v.explanation) == (True, 'contains "changelog"')
    assert regex("abc", "^abc$")
    assert not tool_used("abc", "Read")


def test_helper_names_and_types() -> None:
    v = regex("x", "y", flags="i")
    assert (v.name, v.type) == ("regex /y/i", "regex")
    assert tool_used("x", "Read").name == "tool_used"
    assert contains("x", "y", name="mentions y").name == "mentions y"
    assert calls_tool("x", "t").type == "callsTool"


def test_python_dialect_on_request() -> None:
    assert regex("Paris", "(?i)paris", dialect="python")
    assert regex("Paris", "(?i)paris").explanation.startswith("grader threw: Invalid regular")


def test_expect_returns_a_passing_verdict() -> None:
    v = contains("abc", "b")
    assert expect(v) is v


def test_expect_raises_with_the_explanation() -> None:
    with pytest.raises(GradeFailure) as info:
        expect(contains("abc", "z"))
    assert str(info.value) == 'contains: missing "z"'
    assert isinstance(info.value, AssertionError)
    assert [v.explanation for v in info.value.verdicts] == ['missing "z"']


def test_expect_hides_its_frame() -> None:
    with pytest.raises(GradeFailure) as info:
        expect(contains("abc", "z"))
    entries = [e for e in info.traceback if e.frame.code.name == "expect"]
    assert entries and entries[0].ishidden(info)


def test_a_skipped_verdict_is_not_a_pass() -> None:
    with pytest.raises(GradeFailure, match="agent reported no token usage"):
        expect(max_tokens("x", 10))


def test_soft_checks_collect_and_fail_once() -> None:
    checks = SoftChecks()
    ok = checks.check(contains("abc", "a"))
    assert ok.passed is True
    checks.check(contains("abc", "z", name="mentions z"))
    checks.check(tool_used("abc", "Skill"))
    assert [v.name for v in checks.failures] == ["mentions z", "tool_used"]
    assert len(checks.verdicts) == 3
    with pytest.raises(GradeFailure) as info:
        checks.assert_all()
    assert str(info.value) == (
        'mentions z: missing "z"\ntool_used: Skill called 0x (expected 1..∞)'
    )
    hidden = [e for e in info.traceback if e.frame.code.name == "assert_all"]
    assert hidden and hidden[0].ishidden(info)


def test_soft_checks_all_passing() -> None:
    checks = SoftChecks()
    checks.check(contains("abc", "a"))
    checks.assert_all()
    assert checks.failures == []


def test_soft_checks_say_what_failed_before_a_test_failed_on_its_own() -> None:
    checks = SoftChecks()
    checks.check(contains("abc", "a"))
    assert checks.failed_too() is None
    checks.check(contains("abc", "z", name="mentions z"))
    assert checks.failed_too() == 'and 1 soft check(s) failed:\nmentions z: missing "z"'
